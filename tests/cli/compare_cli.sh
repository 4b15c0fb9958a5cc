#!/bin/sh
# compare_cli.sh - `ppscope compare A B`: against the simulator (sim --trace, whose bubble and
# idle are known exactly: with tf = tb = tw, 1F1B idles (p-1)(tf+tb+tw) per stage and iteration,
# ZB-H1 (p-1)(tf+tb-tw)), each side's figures are its own report's; on emu runs of 1f1b and
# zb-h1, the bubble orders as the theory says and pending W's are 0 for 1F1B (B and W fused) and
# not for ZB-H1; --fail-if exits 1 on a made regression and 0 otherwise, at thresholds taken from
# the runs' own difference; runs with different p compare run-level figures only; bad input
# exits 2 with one line.
# Usage: compare_cli.sh PATH/TO/ppscope
set -u
. "$(dirname "$0")/lib.sh"
cli_init compare_cli "$1"
command -v python3 >/dev/null 2>&1 || { echo "python3 not found: skipped"; exit 77; }

# Reads one figure out of compare --json (FIGURE, STAGE or -, a or b or diff) from $T/out.
fig() {
    python3 - "$T/out" "$1" "$2" "$3" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
stage = None if sys.argv[3] == "-" else int(sys.argv[3])
rows = [r for r in doc["figures"] if r["figure"] == sys.argv[2] and r["stage"] == stage]
print(rows[0][sys.argv[4]] if rows else "none")
PY
}

expect_exit 0 compare --help
grep -q "fail-if" "$T/out" || fail "--help does not explain --fail-if"

# ---- the simulator: known truth --------------------------------------------------------------
for s in 1f1b zb-h1; do
    expect_exit 0 sim --schedule $s -p 4 -m 8 --trace "$T/sim-$s" --iters 3
    run_pps report --json "$T/sim-$s"
    cp "$T/out" "$T/report-$s.json"
done
expect_exit 0 compare --json "$T/sim-1f1b" "$T/sim-zb-h1"
python3 -m json.tool "$T/out" >/dev/null || fail "compare --json is not valid JSON"
cp "$T/out" "$T/cmp-sim.json"
why="sim: compare's figures are not the reports' or the theory's"
python3 - "$T/cmp-sim.json" "$T/report-1f1b.json" "$T/report-zb-h1.json" <<'PY' || fail "$why"
import json, sys
c, ra, rb = (json.load(open(p)) for p in sys.argv[1:4])
rows = {(r["figure"], r["stage"]): r for r in c["figures"]}
def check(what, got, want):
    if got != want:
        sys.exit("%s: compare %r, report %r" % (what, got, want))
for key, rkey in (("bubble", "bubble"), ("steady_bubble", "steady_bubble"),
                  ("iter", "iteration_ns")):
    check(key + " A", rows[(key, None)]["a"], ra[rkey])
    check(key + " B", rows[(key, None)]["b"], rb[rkey])
# The simulator's order: ZB-H1's bubble well below 1F1B's, beyond the (zero) spread.
if not rows[("bubble", None)]["b"] < rows[("bubble", None)]["a"]:
    sys.exit("zb-h1's bubble is not below 1f1b's")
if rows[("bubble", None)]["beyond_spread"] is not True:
    sys.exit("a deterministic difference is not beyond the spread")
# Per stage: the theory's idle per iteration, tf = tb = tw = 1 ms, p = 4.
for s in range(4):
    for side, want in (("a", 3 * 3e6), ("b", 3 * 1e6)):
        got = rows[("idle", s)][side]
        if abs(got - want) > 1:
            sys.exit("stage %d idle %s: %r ns, theory %r" % (s, side, got, want))
    check("busy %d" % s, rows[("busy", s)]["diff"], 0)
    check("busy %d beyond" % s, rows[("busy", s)]["beyond_spread"], False)
if c["per_stage"] is not True or c["a"]["schedule"] != "1f1b" or c["b"]["schedule"] != "zb-h1":
    sys.exit("sides or per_stage wrong")
PY

# --fail-if: thresholds either side of the runs' own difference (B the worse run: 1f1b).
cp "$T/cmp-sim.json" "$T/out"
d=$(fig bubble - a)
d=$(awk -v a="$d" -v b="$(fig bubble - b)" 'BEGIN { printf "%.6f", 100 * (a - b) }')
lo=$(awk -v d="$d" 'BEGIN { printf "%.3f", d - 1 }')
hi=$(awk -v d="$d" 'BEGIN { printf "%.3f", d + 1 }')
expect_exit 1 compare --fail-if "bubble>+${lo}pp" "$T/sim-zb-h1" "$T/sim-1f1b"
stderr_has "regression: bubble>+${lo}pp"
grep -q "REGRESSION" "$T/out" || fail "the text does not say REGRESSION"
expect_exit 0 compare --fail-if "bubble>+${hi}pp" "$T/sim-zb-h1" "$T/sim-1f1b"
expect_exit 0 compare --fail-if 'bubble>+2pp' "$T/sim-1f1b" "$T/sim-zb-h1"
# Iteration time: 1F1B's (m+p-1)(tf+tb+tw) = 33 against ZB-H1's 27: +22%.
expect_exit 1 compare --fail-if 'iter>+5%' "$T/sim-zb-h1" "$T/sim-1f1b"
expect_exit 0 compare --fail-if 'iter>+25%' "$T/sim-zb-h1" "$T/sim-1f1b"
expect_exit 1 compare --fail-if 'idle[2]>+100%' "$T/sim-zb-h1" "$T/sim-1f1b"
expect_exit 0 compare --fail-if 'idle[2]>+250%' "$T/sim-zb-h1" "$T/sim-1f1b"
expect_exit 1 compare --fail-if 'steady_bubble>+1pp' --fail-if 'busy>0ns' --json \
    "$T/sim-zb-h1" "$T/sim-1f1b"
python3 -m json.tool "$T/out" >/dev/null || fail "compare --json with gates is not valid JSON"
grep -q '"regressed":true' "$T/out" || fail "the JSON does not say regressed"
# A run against itself: nothing moves, no gate at 0 fires.
expect_exit 0 compare --fail-if 'bubble>+0pp' --fail-if 'iter>0%' --fail-if 'idle>0%' \
    "$T/sim-1f1b" "$T/sim-1f1b"
# The sim writes no metrics: a gate on them cannot be judged.
expect_exit 2 compare --fail-if 'act>+1%' "$T/sim-1f1b" "$T/sim-zb-h1"
stderr_has "cannot be judged"

# ---- different p: run-level figures only -----------------------------------------------------
expect_exit 0 sim --schedule 1f1b -p 2 -m 8 --trace "$T/sim-p2" --iters 3
expect_exit 0 compare --json "$T/sim-p2" "$T/sim-1f1b"
python3 - "$T/out" <<'PY' || fail "different p: per-stage figures not skipped"
import json, sys
c = json.load(open(sys.argv[1]))
assert c["per_stage"] is False and "skipped" in c["note"]
assert all(r["stage"] is None for r in c["figures"])
assert any(r["figure"] == "bubble" for r in c["figures"])
PY
expect_exit 0 compare "$T/sim-p2" "$T/sim-1f1b"
grep -q "per-stage figures skipped" "$T/out" || fail "the text does not say per-stage is skipped"
expect_exit 2 compare --fail-if 'idle>+1%' "$T/sim-p2" "$T/sim-1f1b"
expect_exit 0 compare --markdown "$T/sim-1f1b" "$T/sim-zb-h1"
grep -q '^| figure | stage | A | B | B-A | B/A |' "$T/out" || fail "no Markdown table"
grep -q '^| bubble | - |' "$T/out" || fail "no bubble row in the Markdown table"

# ---- emu runs of 1f1b and zb-h1 ---------------------------------------------------------------
expect_exit 0 run --schedule 1f1b,zb-h1 --backend emu -p 4 -m 8 --iters 3 --out "$T/ab"
expect_exit 0 compare --json "$T/ab/1f1b" "$T/ab/zb-h1"
python3 -m json.tool "$T/out" >/dev/null || fail "compare --json (emu) is not valid JSON"
python3 - "$T/out" <<'PY' || fail "emu: figures do not order as the schedules say"
import json, sys
c = json.load(open(sys.argv[1]))
rows = {(r["figure"], r["stage"]): r for r in c["figures"]}
assert rows[("bubble", None)]["b"] < rows[("bubble", None)]["a"], "zb-h1 bubble not below 1f1b"
for s in range(4):
    assert rows[("pending_w", s)]["a"] == 0, "1f1b holds pending W's"
assert rows[("pending_w", None)]["b"] > 0, "zb-h1 holds no pending W"
PY
# Peak activations per stage: the metrics' own maximum.
if command -v sqlite3 >/dev/null 2>&1; then
    for s in 0 1 2 3; do
        want=$(sqlite3 "$T/ab/zb-h1/rank-0000$s.db" \
            "select max(act_bytes) from metrics where stage = $s and act_bytes >= 0")
        got=$(fig act $s b | awk '{ printf "%.0f", $1 }')
        [ "$got" = "$want" ] || fail "stage $s peak activations: compare $got, metrics $want"
    done
fi
expect_exit 1 compare --fail-if 'pending_w>0' "$T/ab/1f1b" "$T/ab/zb-h1"
expect_exit 0 compare --fail-if 'pending_w>0' "$T/ab/zb-h1" "$T/ab/1f1b"
expect_exit 1 compare --fail-if 'bubble>+2pp' "$T/ab/zb-h1" "$T/ab/1f1b"
expect_exit 0 compare --fail-if 'bubble>+2pp' "$T/ab/1f1b" "$T/ab/zb-h1"

# ---- bad input ---------------------------------------------------------------------------------
expect_exit 2 compare "$T/sim-1f1b"
expect_exit 2 compare
expect_exit 2 compare "$T/sim-1f1b" "$T/nope"
expect_exit 2 compare "$T/nope" "$T/sim-1f1b"
expect_exit 2 compare "$T/sim-1f1b" "$T/sim-zb-h1" "$T/sim-p2"
expect_exit 2 compare --json --markdown "$T/sim-1f1b" "$T/sim-zb-h1"
expect_exit 2 compare --bogus "$T/sim-1f1b" "$T/sim-zb-h1"
expect_exit 2 compare "$T/sim-1f1b" "$T/sim-zb-h1" --fail-if
for e in 'bubble>>2pp' 'iter>2pp' 'speed>1%' 'bubble[1]>1pp' 'idle[x]>1%' 'bubble>pp' \
    'act>1ms' 'bubble' 'bubble>2' 'bubble<2pp' 'iter>inf%' ''; do
    expect_exit 2 compare --fail-if "$e" "$T/sim-1f1b" "$T/sim-zb-h1"
done
cli_finish
