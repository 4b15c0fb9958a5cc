#!/bin/sh
# ppscope sim end to end: the classic figures in --json, the comparison text, and bad input.
# $1 is the ppscope binary.
set -u
pps=$1
fail=0
pass=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

ok() { pass=$((pass + 1)); }
bad() { echo "FAIL: $*" >&2; fail=$((fail + 1)); }

# expect JSON_FILE JQ_EXPR EXPECTED
expect() {
    got=$(jq -c "$2" "$1" 2>&1)
    if [ "$got" = "$3" ]; then ok; else bad "$2 in $1: got $got, expected $3"; fi
}

# expect_exit CODE STDERR_PATTERN -- ARGS...
expect_exit() {
    code=$1 pat=$2
    shift 3
    "$pps" "$@" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    lines=$(wc -l <"$tmp/err")
    if [ "$rc" -ne "$code" ]; then bad "ppscope $*: exit $rc, expected $code"; return; fi
    if [ "$code" -ne 0 ] && [ "$lines" -ne 1 ]; then bad "ppscope $*: $lines lines on stderr"; return; fi
    if ! grep -q -- "$pat" "$tmp/err"; then bad "ppscope $*: stderr lacks '$pat': $(cat "$tmp/err")"; return; fi
    ok
}

# The classic figures: p=4, m=8, tF=1, tB=2, unsplit backward.
for s in gpipe 1f1b; do
    "$pps" sim --schedule $s -p 4 -m 8 --tf 1 --tb 2 --tw 0 --json >"$tmp/$s.json" || bad "sim $s"
    expect "$tmp/$s.json" .makespan 33
    expect "$tmp/$s.json" '.bubble * 1000 | round' 273
    expect "$tmp/$s.json" '[.stages[].busy]' '[24,24,24,24]'
    expect "$tmp/$s.json" '[.stages[].idle]' '[9,9,9,9]'
done
expect "$tmp/gpipe.json" .peak_activations '[8,8,8,8]'
expect "$tmp/1f1b.json" .peak_activations '[4,3,2,1]'
i=0
for m in 4 8 16 32; do
    "$pps" sim --schedule 1f1b -p 4 -m $m --tf 1 --tb 2 --tw 0 --json >"$tmp/m$m.json"
    i=$((i + 1))
    expected=$(echo "42.9 27.3 15.8 8.6" | cut -d' ' -f$i)
    expect "$tmp/m$m.json" '.bubble * 1000 | round / 10' "$expected"
done

# Zero bubble with tF = tB = tW = 1: ZB-H1 idles (p-1)(tF+tB-tW) = 3 per stage at 1F1B's peak
# activations; ZB-H2's steady state has no bubble at no more than 2p-1 activations.
"$pps" sim --schedule 1f1b,zb-h1,zb-h2 -p 4 -m 8 --w-mem 1 --json >"$tmp/zb.json"
expect "$tmp/zb.json" '[.schedules[1].stages[].idle]' '[3,3,3,3]'
expect "$tmp/zb.json" '[.schedules[0].stages[].idle]' '[9,9,9,9]'
expect "$tmp/zb.json" '(.schedules[1].peak_activations | max) == (.schedules[0].peak_activations | max)' true
expect "$tmp/zb.json" .schedules[2].steady_bubble 0
expect "$tmp/zb.json" '.schedules[2].peak_activations | max <= 7' true

# The text output: a timeline row per stage and the comparison table.
"$pps" sim --schedule 1f1b,zb-h1 -p 4 -m 8 >"$tmp/text" || bad "sim text"
grep -q '^stage 3 ' "$tmp/text" && ok || bad "no timeline row for stage 3"
grep -q '^zb-h1 .* 0.33x' "$tmp/text" && ok || bad "comparison lacks ZB-H1 at 0.33x of 1F1B: $(cat "$tmp/text")"

# --help and bad input: exit 2 with one line.
"$pps" sim --help | grep -q 'usage: ppscope sim' && ok || bad "sim --help"
expect_exit 2 "unknown schedule 'zb-h3'" -- sim --schedule zb-h3
expect_exit 2 "needs a positive integer" -- sim -p 0
expect_exit 2 "multiple of p" -- sim --schedule interleaved -p 4 -m 6 -v 2
expect_exit 2 "applies to interleaved only" -- sim --schedule zb-h1 -v 2
expect_exit 2 "needs a number" -- sim --tf abc
expect_exit 2 "unknown option" -- sim --frobnicate
expect_exit 2 "4 positive numbers" -- sim --stage-mult 1,2
expect_exit 2 "not a ppscope command" -- simulate

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
