# lib.sh - what the CLI tests share; sourced, not run.
#
#   . "$(dirname "$0")/lib.sh"
#   cli_init NAME "$1"      # sets PPS (the ppscope binary) and T (a temp dir, removed at exit)
#   cli_tmp NAME            # only T, for a test that runs no ppscope (the build's, the runner's)
#   run_pps ARGS...         # runs ppscope; exit code in $rc, output in $T/out and $T/err
#   expect_exit CODE ARGS.. # run_pps, then the exit code must be CODE; a failure (CODE != 0)
#                           # must explain itself in exactly one line on stderr
#   stderr_has TEXT         # the last run's stderr contains TEXT
#   fail MESSAGE / ok       # count a failed / passed check
#   start_live_run DIR      # an emu run into DIR for hours, in the background ($live_pid), once a
#                           # report can read it
#   cli_finish              # prints "N passed, N failed" and exits non-zero on any failure

cli_tmp() {
    T=$(mktemp -d "${TMPDIR:-/tmp}/pps-$1-XXXXXX") || exit 1
    trap 'rm -rf "$T"' EXIT INT TERM
    cli_passed=0
    cli_failed=0
}

cli_init() {
    cli_name=$1
    PPS=${2:?usage: $cli_name.sh PATH/TO/ppscope}
    cli_tmp "$cli_name"
}

fail() {
    echo "FAIL: $*" >&2
    cli_failed=$((cli_failed + 1))
}

ok() {
    cli_passed=$((cli_passed + 1))
}

run_pps() {
    "$PPS" "$@" >"$T/out" 2>"$T/err"
    rc=$?
}

expect_exit() {
    want=$1
    shift
    run_pps "$@"
    if [ "$rc" -ne "$want" ]; then
        fail "ppscope $*: exit $rc, expected $want; stderr: $(cat "$T/err")"
        return 1
    fi
    if [ "$want" -ne 0 ] && [ "$(wc -l <"$T/err")" -ne 1 ]; then
        fail "ppscope $*: $(wc -l <"$T/err") lines on stderr, expected 1: $(cat "$T/err")"
        return 1
    fi
    ok
}

stderr_has() {
    if grep -qF -- "$1" "$T/err"; then ok; else fail "stderr '$(cat "$T/err")' lacks '$1'"; fi
}

start_live_run() {
    "$PPS" run --backend emu --emu-tf 2 --emu-tb 2 --emu-tw 2 -p 2 -m 4 --iters 100000 --quiet \
        --out "$1" >/dev/null 2>&1 &
    live_pid=$!
    live_n=0
    while [ $live_n -lt 100 ] && ! "$PPS" report --no-summary "$1" >/dev/null 2>&1; do
        sleep 0.1
        live_n=$((live_n + 1))
    done
    sleep 0.5
}

cli_finish() {
    echo "$cli_passed passed, $cli_failed failed"
    [ "$cli_failed" -eq 0 ]
    exit $?
}
