#!/bin/sh
# run_fail.sh - a stage that fails makes the others stop, within seconds, with one line that
# names it; what every stage recorded stays readable, and ppscope report says the run is
# incomplete. Usage: run_fail.sh PATH/TO/ppscope
set -u
. "$(dirname "$0")/lib.sh"
cli_init run_fail "$1"

if ! command -v timeout >/dev/null 2>&1; then
    echo "skipped: no timeout(1) to stop a hung run"
    exit 77
fi

# fails NAME RUN ARGS...: the run must end (not hang) with exit 1 and one line naming stage 2;
# RUN (under $T) is the run directory of the schedule that failed.
fails() {
    name=$1
    run=$2
    shift 2
    timeout -k 5 30 "$PPS" run --out "$T/$name" --inject-fail 2:3 --iters 50 "$@" \
        >"$T/out" 2>"$T/err"
    rc=$?
    if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
        fail "$name: the other stages did not stop within 30 s"
        return
    fi
    [ $rc -eq 1 ] || fail "$name: exit $rc, expected 1; stderr: $(cat "$T/err")"
    # One line says what failed; a warning before the run (more stage threads than cores) may
    # precede it.
    [ "$(grep -vc '^ppscope run: warning:' "$T/err")" -eq 1 ] ||
        fail "$name: $(wc -l <"$T/err") lines on stderr: $(cat "$T/err")"
    stderr_has "stage 2 failed: injected failure at iteration 3"
    run_pps report "$T/$run"
    if [ "$rc" -ne 0 ]; then
        fail "$name: report of the failed run: exit $rc: $(cat "$T/err")"
        return
    fi
    grep -q "INCOMPLETE" "$T/out" || fail "$name: report does not say the run is incomplete"
    grep -qE " [34] iterations" "$T/out" || fail "$name: report lacks the iterations run before"
    ok
}

fails emu-sync emu-sync --backend emu -p 4 -m 8 --schedule 1f1b
fails emu-postval emu-postval --backend emu -p 4 -m 8 --schedule zb-h2 --optimizer postval
fails cpu cpu --backend cpu -p 3 -m 3 --schedule zb-h1 --hidden 16 --seq-len 8
# With several schedules the launch stops at the first failure: later schedules do not run.
fails ab ab/zb-h1 --backend emu -p 4 -m 4 --schedule zb-h1,zb-h2 --emu-tf 1 --emu-tb 1 --emu-tw 1
[ -e "$T/ab/zb-h2" ] && fail "ab: the schedule after the failed one ran anyway"
cli_finish
