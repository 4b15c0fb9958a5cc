#!/bin/sh
# run_budget.sh - `ppscope run --w-budget N` and `--act-budget-mib X`: with a budget the gradients
# stay bitwise those of the single-process reference, every stage's recorded peak of pending W's
# (the metrics table of its shard) stays within the budget in every iteration while the schedule
# alone goes above it, the W's run early are ordinary W spans (one per B, none run twice), and
# bad budgets exit 2 with one line. Needs sqlite3 to read the metrics (exits 77 without).
# Usage: run_budget.sh PATH/TO/ppscope
set -u
. "$(dirname "$0")/lib.sh"
cli_init run_budget "$1"
SMALL="--hidden 32 --seq-len 16 --microbatch-size 2"

expect_exit 0 run --help
grep -q -- "--w-budget N" "$T/out" || fail "run --help does not explain --w-budget"
grep -q -- "--act-budget-mib X" "$T/out" || fail "run --help does not explain --act-budget-mib"

# Bad budgets: exit 2, one line naming the problem, nothing written.
expect_exit 2 run --schedule zb-h2 --out "$T/never" --w-budget -1 && stderr_has "--w-budget needs"
expect_exit 2 run --schedule zb-h2 --out "$T/never" --w-budget two && stderr_has "--w-budget needs"
expect_exit 2 run --schedule zb-h2 --out "$T/never" --act-budget-mib -1 &&
    stderr_has "--act-budget-mib needs"
expect_exit 2 run --schedule zb-h2 --out "$T/never" --act-budget-mib 0.001 &&
    stderr_has "holds no pending W on stage"
[ -e "$T/never" ] && fail "a refused run left $T/never behind"

# check ARGS...: every schedule listed is bitwise equal to the reference, exit 0.
check() {
    # shellcheck disable=SC2086
    run_pps run --check-grads $SMALL "$@"
    n=$(grep -c "^check-grads .*: ok" "$T/out")
    want=$(echo "$*" | sed 's/.*--schedule \([^ ]*\).*/\1/' | tr ',' '\n' | wc -l)
    if [ "$rc" -ne 0 ] || [ "$n" -ne "$want" ]; then
        fail "ppscope run --check-grads $*: exit $rc, $n of $want ok: $(cat "$T/out" "$T/err")"
    else
        ok
    fi
}
check --schedule zb-h2 -p 4 -m 8 --w-budget 2
check --schedule zb-h2,zb-h1,1f1b -p 4 -m 8 --w-budget 1
check --schedule zb-h1,zb-h2 -p 3 -m 5 --layers 8 --partition 3,5,0 --w-budget 1
check --schedule zb-h2 -p 4 -m 8 --act-budget-mib 0.2
check --schedule zb-h2 -p 4 -m 8 --act-budget-mib 1 --w-budget 3

if ! command -v sqlite3 >/dev/null 2>&1; then
    echo "skipped the metrics: no sqlite3"
    exit 77
fi

# peak RUN P ITERS: the largest recorded peak of pending W's over stages and iterations, after
# checking that every stage wrote one row per iteration.
peak() {
    max=0
    rows=0
    s=0
    while [ $s -lt "$2" ]; do
        db="$1/rank-0000$s.db"
        r=$(sqlite3 "$db" "select count(*) from metrics where stage = $s and iter >= 0")
        m=$(sqlite3 "$db" "select max(pending_w) from metrics where stage = $s and iter >= 0")
        rows=$((rows + r))
        [ "${m:-0}" -gt "$max" ] && max=$m
        s=$((s + 1))
    done
    [ "$rows" -eq $(($2 * $3)) ] || fail "$1: $rows metrics rows, expected $(($2 * $3))"
    echo "$max"
}

# bounded NAME BUDGET ARGS...: a run of zb-h2 p=4 m=8 over 3 iterations in which every stage's
# bound (meta stage_w_budget) is within BUDGET and its peak pending W within its bound.
bounded() {
    name=$1
    budget=$2
    shift 2
    expect_exit 0 run --schedule zb-h2 -p 4 -m 8 --iters 3 --out "$T/$name" "$@" || return
    peak "$T/$name" 4 3 >/dev/null
    for s in 0 1 2 3; do
        db="$T/$name/rank-0000$s.db"
        b=$(sqlite3 "$db" "select value from meta where key = 'stage_w_budget'")
        m=$(sqlite3 "$db" "select max(pending_w) from metrics where stage = $s and iter >= 0")
        if [ "${b:-0}" -lt 1 ] || [ "$b" -gt "$budget" ] || [ "${m:-0}" -lt 1 ] ||
            [ "$m" -gt "$b" ]; then
            fail "$name: stage $s: peak pending W '$m', its bound '$b', the budget $budget"
        else
            ok
        fi
    done
    # As many W spans as B spans per stage and iteration (and over the run): an early W is not
    # run a second time when the list reaches it.
    run_pps report --json "$T/$name"
    n=$(grep -o '"n_ops":{"F":[0-9]*,"B":[0-9]*,"W":[0-9]*' "$T/out" |
        awk -F'[:,]' '$5 > 0 && $5 == $7 { n++ } END { print n + 0 }')
    if [ "$rc" -ne 0 ] || [ "$n" -ne 16 ]; then
        fail "$name: $n of 16 stage rows with as many W's as B's: $(cat "$T/out" "$T/err")"
    else
        ok
    fi
}

# Without a budget ZB-H2 holds more than 2 pending W's: the bound below is the budget's doing.
expect_exit 0 run --schedule zb-h2 -p 4 -m 8 --iters 3 --out "$T/free"
peak "$T/free" 4 3 >"$T/peak" # not in $(...): a failure there would not be counted
free=$(cat "$T/peak")
[ "$free" -gt 2 ] || fail "zb-h2 without a budget peaks at $free pending W's, expected > 2"
bounded cpu 2 --w-budget 2
bounded postval 1 --w-budget 1 --optimizer postval
bounded emu 2 --w-budget 2 --backend emu --emu-tf 0.2 --emu-tb 0.2 --emu-tw 0.2
# In bytes: 1 MiB holds one of the last stage's pending W's (0.6 MiB with the default model).
bounded act 5 --act-budget-mib 1
# The prediction simulates the order the budget made: on emu (2 ms ops, where the budget costs
# several points of bubble) it stays within 4 points of what was measured (without the budget in
# the prediction it is 6 or more points off).
expect_exit 0 run --schedule zb-h2 -p 4 -m 8 --iters 3 --backend emu --emu-tf 2 --emu-tb 2 \
    --emu-tw 2 --w-budget 1 --out "$T/emu-pred"
run_pps report --json "$T/emu-pred"
jq -e '((.bubble - .predicted_bubble) | fabs) < 0.04' "$T/out" >/dev/null && ok ||
    fail "emu-pred: measured and predicted bubble apart: $(jq -c '[.bubble, .predicted_bubble]' "$T/out")"
v=$(sqlite3 "$T/act/rank-00003.db" "select value from meta where key = 'stage_w_budget'")
[ "$v" = 1 ] || fail "act: stage 3's stage_w_budget is '$v', expected 1"
cli_finish
