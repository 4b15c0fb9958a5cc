#!/bin/sh
# view_max_spans.sh - `ppscope view --max-spans N`: past N spans the view keeps the newest whole
# iterations and says which ("iters A-B of N"; "k of n kept"); its figures are of those (a run
# whose early iterations differ: the bubble shown is the mean of the kept iterations' bubbles,
# not the run's); nothing dropped is called missing; 0 keeps all; bad values are refused.
# Usage: view_max_spans.sh PATH/TO/ppscope
set -u
. "$(dirname "$0")/lib.sh"
cli_init view_max_spans "$1"
command -v sqlite3 >/dev/null 2>&1 || { echo "view_max_spans: no sqlite3, skipped"; exit 77; }

# 200 iterations of 64 spans; the first 150 with every forward 3 ms longer (and the longest span
# said so in meta), so that their bubble is lower than the last 50's.
expect_exit 0 sim --schedule 1f1b -p 4 -m 8 --iters 200 --trace "$T/run"
sqlite3 "$T/run/rank-00000.db" "UPDATE spans SET end_ns = end_ns + 3000000 WHERE iter < 150 AND
    kind = 1; UPDATE meta SET value = CAST(value AS INTEGER) + 3000000 WHERE key = 'span_max_ns';"

expect_exit 0 view --once --size 120x30 --max-spans 2000 "$T/run"
head=$(head -n 1 "$T/out")
first=$(echo "$head" | sed -n 's/.* iters \([0-9]*\)-199 of 200 .*/\1/p')
[ -n "$first" ] || fail "the header does not say which iterations it holds: $head"
first=${first:-0}
[ "$first" -gt 0 ] && [ $(((200 - first) * 64)) -le 2000 ] ||
    fail "iterations $first-199 (64 spans each) are not within 2000 spans: $head"
grep -q "^view .* ([0-9]* of $((200 - first)) kept)" "$T/out" ||
    fail "the status line does not say the iteration is of those kept: $(grep '^view' "$T/out")"
grep -q "MISSING" "$T/out" && fail "dropped iterations called missing: $head"
shown=$(echo "$head" | sed -n 's/.* bubble \([0-9.]*\)%.*/\1/p')
run_pps report --iterations --csv "$T/run"
kept=$(awk -F, -v a="$first" 'NR > 1 && $1 >= a && $2 == 0 { s += $6; n++ }
    END { printf "%.1f", 100 * s / n }' "$T/out")
all=$(awk -F, 'NR > 1 && $2 == 0 { s += $6; n++ } END { printf "%.1f", 100 * s / n }' "$T/out")
[ "$shown" = "$kept" ] && ok ||
    fail "the bubble shown ($shown%) is not the kept iterations' ($kept%; the run's: $all%)"
[ "$kept" != "$all" ] && ok || fail "the test's run does not tell the two apart ($kept% both)"

# 0, or a budget above the run: all of it.
for n in 0 100000; do
    expect_exit 0 view --once --size 120x30 --max-spans $n "$T/run"
    head -n 1 "$T/out" | grep -q " 200 iters " || fail "--max-spans $n: $(head -n 1 "$T/out")"
done

for bad in 5 abc -3 ""; do
    expect_exit 2 view --once --max-spans "$bad" "$T/run"
    stderr_has "--max-spans takes a count of spans"
done
cli_finish
