#!/bin/sh
# ppscope sim end to end: the classic figures in --json, the comparison text, and bad input.
# $1 is the ppscope binary.
set -u
. "$(dirname "$0")/lib.sh"
cli_init sim_cli "$1"

# expect JSON_FILE JQ_EXPR EXPECTED
expect() {
    got=$(jq -c "$2" "$1" 2>&1)
    if [ "$got" = "$3" ]; then ok; else fail "$2 in $1: got $got, expected $3"; fi
}

# The classic figures: p=4, m=8, tF=1, tB=2, unsplit backward.
for s in gpipe 1f1b; do
    "$PPS" sim --schedule $s -p 4 -m 8 --tf 1 --tb 2 --tw 0 --json >"$T/$s.json" || fail "sim $s"
    expect "$T/$s.json" .makespan 33
    expect "$T/$s.json" '.bubble * 1000 | round' 273
    expect "$T/$s.json" '[.stages[].busy]' '[24,24,24,24]'
    expect "$T/$s.json" '[.stages[].idle]' '[9,9,9,9]'
done
expect "$T/gpipe.json" .peak_activations '[8,8,8,8]'
expect "$T/1f1b.json" .peak_activations '[4,3,2,1]'
i=0
for m in 4 8 16 32; do
    "$PPS" sim --schedule 1f1b -p 4 -m $m --tf 1 --tb 2 --tw 0 --json >"$T/m$m.json"
    i=$((i + 1))
    expected=$(echo "42.9 27.3 15.8 8.6" | cut -d' ' -f$i)
    expect "$T/m$m.json" '.bubble * 1000 | round / 10' "$expected"
done

# Zero bubble with tF = tB = tW = 1: ZB-H1 idles (p-1)(tF+tB-tW) = 3 per stage at 1F1B's peak
# activations; ZB-H2's steady state has no bubble at no more than 2p-1 activations.
"$PPS" sim --schedule 1f1b,zb-h1,zb-h2 -p 4 -m 8 --w-mem 1 --json >"$T/zb.json"
expect "$T/zb.json" '[.schedules[1].stages[].idle]' '[3,3,3,3]'
expect "$T/zb.json" '[.schedules[0].stages[].idle]' '[9,9,9,9]'
expect "$T/zb.json" '(.schedules[1].peak_activations | max) == (.schedules[0].peak_activations | max)' true
expect "$T/zb.json" .schedules[2].steady_bubble 0
expect "$T/zb.json" '.schedules[2].peak_activations | max <= 7' true

# The text output: a timeline row per stage and the comparison table.
"$PPS" sim --schedule 1f1b,zb-h1 -p 4 -m 8 >"$T/text" || fail "sim text"
grep -q '^stage 3 ' "$T/text" && ok || fail "no timeline row for stage 3"
grep -q '^zb-h1 .* 0.33x' "$T/text" && ok || fail "comparison lacks ZB-H1 at 0.33x of 1F1B: $(cat "$T/text")"

# --help and bad input: exit 2 with one line.
"$PPS" sim --help | grep -q 'usage: ppscope sim' && ok || fail "sim --help"
expect_exit 2 sim --schedule zb-h3 && stderr_has "unknown schedule 'zb-h3'"
expect_exit 2 sim -p 0 && stderr_has "needs a positive integer"
expect_exit 2 sim --schedule interleaved -p 4 -m 6 -v 2 && stderr_has "multiple of p"
expect_exit 2 sim --schedule zb-h1 -v 2 && stderr_has "applies to interleaved and interleaved-zb only"
expect_exit 2 sim --tf abc && stderr_has "--tf needs a number"
expect_exit 2 sim --tf -1 && stderr_has "--tf needs a number from 0 to 1e12, got '-1'"
expect_exit 2 sim -p 4096 -m 1048576 && stderr_has "microbatch-stage pairs, more than"
expect_exit 2 sim --tf 1e12 --trace "$T/huge" && stderr_has "do not fit in the trace"
[ -e "$T/huge" ] && fail "a refused trace left $T/huge behind"
if [ -w /dev/full ]; then
    "$PPS" sim >/dev/full 2>"$T/err"
    [ $? -eq 1 ] && grep -q "could not write" "$T/err" && ok || fail "sim >/dev/full: $(cat "$T/err")"
fi
expect_exit 2 sim --frobnicate && stderr_has "unknown option"
expect_exit 2 sim --stage-mult 1,2 && stderr_has "4 positive numbers"
expect_exit 2 simulate && stderr_has "not a ppscope command"

# The zero-bubble theory line is the simulated idle, and is printed only where it holds.
expect_exit 0 sim -s interleaved-zb -p 4 -m 16
grep -q "^zero-bubble theory: (p-1)max(tF, tF+tB-tW)/v = 1.5 idle per stage$" "$T/out" &&
    grep -q "^makespan 49.5 " "$T/out" && ok || fail "interleaved-zb theory: $(cat "$T/out")"
expect_exit 0 sim -s zb-h1 -p 4 -m 16 --tw 2
grep -q "^zero-bubble theory: (p-1)max(tF, tF+tB-tW) = 3 idle per stage$" "$T/out" && ok ||
    fail "zb-h1 theory with tW > tB: $(grep theory "$T/out")"
for args in "-s zb-h1 -p 4 -m 3" "-s interleaved-zb -p 4 -m 8 --stage-mult 2,1,1,1" \
    "-s zb-h2 -p 4 -m 8 --tcomm 0.5"; do
    # shellcheck disable=SC2086
    expect_exit 0 sim $args
    if grep -q "zero-bubble theory" "$T/out"; then fail "sim $args: a theory that does not hold"; else ok; fi
done
expect_exit 2 sim -s interleaved-zb -p 4 -m 9 && stderr_has "not a multiple of 2"
# The report of a simulated run (its op times exact) gives the same theory, and measures it.
expect_exit 0 sim -s interleaved-zb -p 4 -m 8 --tb 2 --tw 0.5 --trace "$T/izb"
expect_exit 0 report --json "$T/izb"
cp "$T/out" "$T/izb.json"
expect "$T/izb.json" '.bubble_zero_bubble_theory * 10000 | round' \
    "$(awk 'BEGIN { i = 3 * 2.5 / 2; printf "%.0f", i / (8 * 3.5 + i) * 10000 }')"
expect "$T/izb.json" '(.bubble - .bubble_zero_bubble_theory) | fabs < 1e-6' true
expect "$T/izb.json" '[.placement, .zero_bubble_theory_steady]' '["loop",false]'
expect_exit 0 report "$T/izb"
grep -q "zero-bubble 11.8%: (p-1)max(tF, tF+tB-tW)/v idle a stage" "$T/out" && ok ||
    fail "report's zero-bubble line: $(grep -A1 '^theory' "$T/out")"

# DualPipeV beside DeepSeek-V3's Table 2 (test_dualpipev.c derives both figures), printed only
# where tF = tB >= tW; m below 2p is refused with the reason.
expect_exit 0 sim -s dualpipev -p 4 -m 16
grep -q "^DeepSeek-V3 Table 2: (PP/2-1)(F&B+B-3W) = 3 idle per stage for PP = 8 chunks" "$T/out" &&
    grep -q "(p-1)(tF+tB-tW)/2 = 1.5 idle per stage$" "$T/out" &&
    grep -q "^makespan 49.5 " "$T/out" && ok || fail "dualpipev theory: $(cat "$T/out")"
expect_exit 0 sim -s dualpipev -p 4 -m 16 --tf 2
if grep -q "Table 2" "$T/out"; then fail "dualpipev at tF != tB: a theory that does not hold"; else ok; fi
expect_exit 2 sim -s dualpipev -p 4 -m 7 && stderr_has "needs m >= 2p = 8"
expect_exit 0 sim -s dualpipev -p 4 -m 8 --tw 0.5 --trace "$T/dpv"
expect_exit 0 report --json "$T/dpv"
cp "$T/out" "$T/dpv.json"
expect "$T/dpv.json" '.bubble_zero_bubble_theory * 10000 | round' \
    "$(awk 'BEGIN { i = 3 * 1.5 / 2; printf "%.0f", i / (8 * 2.5 + i) * 10000 }')"
expect "$T/dpv.json" '(.bubble - .bubble_zero_bubble_theory) | fabs < 1e-6' true
expect "$T/dpv.json" '.placement' '"v"'

cli_finish
