#!/bin/sh
# run_ab.sh - `ppscope run --schedule 1f1b,zb-h1,zb-h2` on the emu backend: one run per schedule
# in OUT/<schedule>, each complete and marked emulated, and a comparison with a row per schedule;
# the measured bubbles order as the theory says (ZB-H1 and ZB-H2 well under 1F1B: the theory's
# third of its idle for equal op costs, here under 0.7 of it, for a loaded machine's wake-ups).
# Usage: run_ab.sh PATH/TO/ppscope
set -u
. "$(dirname "$0")/lib.sh"
cli_init run_ab "$1"

expect_exit 0 run --schedule 1f1b,zb-h1,zb-h2 --backend emu -p 4 -m 8 --iters 3 --out "$T/ab"
cp "$T/out" "$T/summary"
grep -q "EMULATED" "$T/summary" || fail "the summary does not say that emu is emulated"
for s in 1f1b zb-h1 zb-h2; do
    grep -q "^$s .* $T/ab/$s\$" "$T/summary" || fail "no row for $s: $(cat "$T/summary")"
    run_pps report --json "$T/ab/$s"
    if [ "$rc" -ne 0 ]; then
        fail "report $s: exit $rc: $(cat "$T/err")"
        continue
    fi
    grep -q '"complete":true' "$T/out" || fail "$s: the run is not complete"
    grep -q '"schedule":"'"$s"'"' "$T/out" || fail "$s: the run does not name its schedule"
    grep -q '"n_iterations":3' "$T/out" || fail "$s: not 3 iterations"
    eval "b_$(echo $s | tr -d -)=$(grep -o '"bubble":[0-9.e-]*' "$T/out" | head -n 1 | cut -d: -f2)"
done
# shellcheck disable=SC2154
awk -v a="$b_1f1b" -v h1="$b_zbh1" -v h2="$b_zbh2" \
    'BEGIN { exit !(a > 0.15 && h1 < 0.7 * a && h2 < 0.7 * a) }' ||
    fail "bubbles do not order as expected: 1f1b $b_1f1b, zb-h1 $b_zbh1, zb-h2 $b_zbh2"
ok
# One definition per word: the summary's iteration time, prediction and steady figures are the
# report's, for a run with an optimizer barrier and for a post-validated one.
same_row() {
    sum=$1
    dir=$2
    s=$3
    run_pps report "$dir"
    row=$(grep "^$s " "$sum")
    it=$(sed -n 's/^iteration measured \([0-9.]*\) ms, predicted \([0-9.]*\) ms.*/\1 \2/p' "$T/out")
    st=$(sed -n 's/^steady    measured \([0-9.]*%\)   predicted \([0-9.]*%\).*/\1 \2/p' "$T/out")
    bu=$(sed -n 's/^bubble    measured \([0-9.]*%\)   predicted \([0-9.]*%\).*/\1 \2/p' "$T/out")
    # Post-validated: the windows' bubble has no prediction beside it, here or in the summary.
    [ -n "$bu" ] || bu="$(sed -n 's/^bubble    measured \([0-9.]*%\) .*/\1/p' "$T/out") -"
    want="$it $bu $st"
    got=$(echo "$row" | awk '{ print $2, $4, $6, $7, $8, $9 }')
    # The times: the summary's 2 decimals of the report's 3; the percentages: the same figure.
    echo "$got $want" | awk '{ exit !(($1 - $7)^2 < 0.0051^2 && ($2 - $8)^2 < 0.0051^2 &&
                                      $3 == $9 && $4 == $10 && $5 == $11 && $6 == $12) }' ||
        fail "$s: the summary says '$got', the report '$want'"
}
for s in 1f1b zb-h1 zb-h2; do
    same_row "$T/summary" "$T/ab/$s" "$s"
done
expect_exit 0 run --schedule zb-h2 --backend emu -p 4 -m 8 --iters 4 --optimizer postval \
    --out "$T/postval"
cp "$T/out" "$T/summary.postval"
same_row "$T/summary.postval" "$T/postval" zb-h2
# The run's metadata says it was emulated, with its modeled costs.
if command -v sqlite3 >/dev/null 2>&1; then
    v=$(sqlite3 "$T/ab/zb-h1/rank-00000.db" "select value from meta where key='backend'")
    [ "$v" = emu ] || fail "meta backend is '$v', expected emu"
    sqlite3 "$T/ab/zb-h1/rank-00000.db" "select value from meta where key='tcomm_ns'" |
        grep -q '^[0-9]' || fail "no tcomm_ns in the emu run's metadata"
fi
cli_finish
