#!/bin/sh
# report_cli.sh - `ppscope report` end to end: help and bad input, and the check that matters:
# a run that is exactly a simulated timeline (`ppscope sim --trace`) reports the simulator's
# bubble, measured and predicted. Usage: report_cli.sh PATH/TO/ppscope
set -u
. "$(dirname "$0")/lib.sh"
cli_init report "$1"
TMP=$T

# The first "KEY": value of a one-line JSON document (top-level keys come first in both).
json_num() {
    grep -o "\"$1\":[^,}]*" "$2" | head -n 1 | cut -d: -f2
}

same_number() {
    awk -v a="$1" -v b="$2" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(a != "" && d <= 1e-6) }'
}

# --- help and bad input ---
expect_exit 0 report --help
grep -q "usage: ppscope report" "$TMP/out" || fail "report --help does not print usage on stdout"
expect_exit 2 report
grep -q "missing RUN" "$TMP/err" || fail "report without RUN does not say so"
expect_exit 2 report --bogus "$TMP"
expect_exit 2 report "$TMP/no-such-run"
[ "$(wc -l <"$TMP/err")" -eq 1 ] || fail "a missing run takes more than one line to explain"
[ -s "$TMP/out" ] && fail "a missing run printed a report"
mkdir "$TMP/empty"
expect_exit 2 report "$TMP/empty"
echo "not a trace" >"$TMP/garbage.db"
expect_exit 2 report "$TMP/garbage.db"
[ "$(wc -l <"$TMP/err")" -eq 1 ] || fail "a file that is not a trace takes more than one line"

# --- report of a simulated timeline = the simulation ---
# check_sim NAME WHY FLAGS ARGS...: the report of `ppscope sim ARGS --trace` is the simulation,
# its verdict names WHY, and its flags are FLAGS ("none", or the one kind it must have).
check_sim() {
    name=$1
    why=$2
    flags=$3
    shift 3
    dir="$TMP/run-$name"
    if ! "$PPS" sim "$@" --json --trace "$dir" >"$TMP/sim.json" 2>"$TMP/err"; then
        fail "sim $* --trace: $(cat "$TMP/err")"
        return
    fi
    expect_exit 0 report --json "$dir"
    cp "$TMP/out" "$TMP/report.json"
    sim=$(json_num bubble "$TMP/sim.json")
    measured=$(json_num bubble "$TMP/report.json")
    predicted=$(json_num predicted_bubble "$TMP/report.json")
    same_number "$measured" "$sim" || fail "$name: report bubble $measured, sim bubble $sim"
    same_number "$predicted" "$sim" || fail "$name: predicted bubble $predicted, sim bubble $sim"
    expect_exit 0 report "$dir"
    grep -q "^verdict   bubble .* is within 2.0 pp of the prediction (.*): $why" \
        "$TMP/out" || fail "$name: text report has no matching verdict: $(cat "$TMP/out")"
    # A simulated run has nothing wrong with it: no flag, and no note about spans no figure
    # counts (its sends, receives and waits carry their iterations and lie in the windows).
    if [ "$flags" = none ]; then
        grep -q "^flags     none$" "$TMP/out" || fail "$name: flags where there are none: $(cat "$TMP/out")"
        grep -q '"flags":\[\]' "$TMP/report.json" || fail "$name: --json has flags: $(cat "$TMP/report.json")"
    else
        grep -q "^flags     1$" "$TMP/out" && grep -q "^  ! $flags " "$TMP/out" ||
            fail "$name: not the one flag $flags: $(cat "$TMP/out")"
        grep -q "\"flags\":\[{\"kind\":\"$flags\"" "$TMP/report.json" ||
            fail "$name: --json lacks the $flags flag"
    fi
    grep -q "^note" "$TMP/out" && fail "$name: a note that is not true: $(grep '^note' "$TMP/out")"
    grep -q '"spans_outside_windows":0' "$TMP/report.json" ||
        fail "$name: --json counts spans outside the windows"
}

check_sim zb-h1 "the schedule explains it" none --schedule zb-h1 -p 4 -m 8
check_sim 1f1b "the schedule explains it" none --schedule 1f1b -p 4 -m 8
check_sim gpipe "the schedule explains it" none --schedule gpipe -p 4 -m 8
check_sim interleaved "the schedule explains it" none --schedule interleaved -p 4 -m 8 -v 2
# A quarter of an op per message: the messages make the bubble, and the verdict says so.
check_sim zb-h1-iters "communication explains it: a message takes 250 us" none \
    --schedule zb-h1 -p 4 -m 8 --iters 3 --topt 0.5 --tcomm 0.25 --tw 0.5
# A slow last stage: imbalance, with what balance would give.
check_sim imbalanced "imbalance explains it: stage 3 computes 2.00x the other stages' mean" imbalance \
    --schedule 1f1b -p 4 -m 8 --stage-mult 1,1,1,2

# --- a run whose rank did not close its shard (written by storage's pps_mkrun) ---
if [ -n "${PPS_MKRUN:-}" ]; then
    if "$PPS_MKRUN" "$TMP/incomplete" --ranks 2 --incomplete 2>"$TMP/err"; then
        expect_exit 0 report "$TMP/incomplete"
        grep -q "^status    INCOMPLETE: a rank did not close its shard" "$TMP/out" ||
            fail "an incomplete run is not flagged: $(cat "$TMP/out")"
        expect_exit 0 report --json "$TMP/incomplete"
        grep -q '"complete":false' "$TMP/out" || fail "--json does not say complete:false"
    else
        fail "pps_mkrun: $(cat "$TMP/err")"
    fi
else
    echo "report_cli: PPS_MKRUN not set, the incomplete-run check did not run"
fi

cli_finish
