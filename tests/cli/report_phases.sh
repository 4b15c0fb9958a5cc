#!/bin/sh
# report_phases.sh - the bubble by phase and the per-iteration rows, end to end. The report's
# split of a predicted run (`ppscope sim --trace`) is the simulator's own, to the simulator's
# printed precision, for every schedule; `report --iterations` has one row per iteration, whose
# bubbles average to the report's bubble, and the loss the run itself printed.
# Usage: report_phases.sh PATH/TO/ppscope (needs python3 for the JSON; skipped, exit 77, without)
set -u
. "$(dirname "$0")/lib.sh"
cli_init report_phases "$1"
command -v python3 >/dev/null 2>&1 || { echo "skipped: no python3"; exit 77; }

# --- bad input ---
expect_exit 0 report --help
grep -q -- "--iterations" "$T/out" || fail "report --help does not list --iterations"
grep -q "idle by phase" "$T/out" || fail "report --help does not say what it splits by phase"
expect_exit 2 report --csv "$T"
stderr_has "--csv goes with --iterations"
expect_exit 2 report --iterations --csv --json "$T"

# --- the report's phase split of a predicted run = the simulator's ---
# Uneven stages, messages and an optimizer step, so that every phase holds idle somewhere.
sim_args="-p 4 -m 8 --tf 1 --tb 1.5 --tw 0.5 --tcomm 0.25 --topt 0.5 --stage-mult 1,1.25,1,1.5"
for s in gpipe 1f1b interleaved zb-h1 zb-h2; do
    # shellcheck disable=SC2086
    expect_exit 0 sim --schedule "$s" $sim_args --json || continue
    cp "$T/out" "$T/sim-$s.json"
    # shellcheck disable=SC2086
    expect_exit 0 sim --schedule "$s" $sim_args --iters 3 --trace "$T/$s" || continue
    expect_exit 0 report --json "$T/$s" || continue
    cp "$T/out" "$T/rep-$s.json"
    expect_exit 0 report "$T/$s" || continue
    grep -q "^idle by phase" "$T/out" || fail "$s: the report's text has no idle by phase"
    if python3 - "$T/sim-$s.json" "$T/rep-$s.json" 2>"$T/py.err" <<'PY'; then ok; else fail "$s: $(cat "$T/py.err")"; fi
import json, sys
sim = json.load(open(sys.argv[1]))
rep = json.load(open(sys.argv[2]))
unit = 1e6  # sim --trace's default nanoseconds per unit
n = rep["n_iterations"]
assert n == 3, n
def same(a, b):  # the simulator prints 6 significant digits
    return abs(a - b) <= 5e-6 * max(abs(a), abs(b), 1.0)
nonzero = set()
for ss, rs in zip(sim["stages"], rep["stages"]):
    assert ss["stage"] == rs["stage"]
    total = 0
    for ph, want in ss["phase_idle"].items():
        got = rs["phase_idle_ns"][ph] / n / unit
        assert same(got, want), (ss["stage"], ph, got, want)
        total += rs["phase_idle_ns"][ph]
        if want > 0:
            nonzero.add(ph)
    assert total == rs["idle_ns"], (ss["stage"], total, rs["idle_ns"])
for ph, want in sim["phase_bubble"].items():
    assert same(rep["phase_bubble"][ph], want), (ph, rep["phase_bubble"][ph], want)
assert abs(sum(rep["phase_bubble"].values()) - rep["bubble"]) < 1e-5
# Not a split that puts everything in one phase: the test would not see a wrong edge.
assert len(nonzero) >= 2, nonzero
PY
done

# --- one row per iteration ---
# check_rows RUN: CSV and JSON lines, one row per iteration, their bubbles' mean the report's.
check_rows() {
    expect_exit 0 report --json "$1" || return
    cp "$T/out" "$T/rows-rep.json"
    expect_exit 0 report --iterations "$1" || return
    cp "$T/out" "$T/rows.csv"
    expect_exit 0 report --iterations --csv "$1" || return
    cmp -s "$T/out" "$T/rows.csv" || fail "$1: --iterations --csv is not --iterations"
    expect_exit 0 report --iterations --json "$1" || return
    cp "$T/out" "$T/rows.jsonl"
    if python3 - "$T/rows-rep.json" "$T/rows.csv" "$T/rows.jsonl" 2>"$T/py.err" <<'PY'; then ok; else fail "$1: $(cat "$T/py.err")"; fi
import csv, json, sys
rep = json.load(open(sys.argv[1]))
rows = list(csv.DictReader(open(sys.argv[2])))
lines = [json.loads(l) for l in open(sys.argv[3])]
assert len(rows) == rep["n_iterations"] == len(lines), (len(rows), len(lines))
whole = [r for r in rows if r["partial"] == "0"]
mean = sum(float(r["bubble"]) for r in whole) / len(whole)
assert abs(mean - rep["bubble"]) < 1e-5, (mean, rep["bubble"])
mean = sum(l["bubble"] for l in lines if not l["partial"]) / len(whole)
assert abs(mean - rep["bubble"]) < 1e-5, (mean, rep["bubble"])
for r, l, it in zip(rows, lines, rep["iterations"]):
    assert int(r["iter"]) == l["iter"] == it["iter"]
    assert int(r["window_ns"]) == l["window_ns"] == it["window_ns"]
    for st in it["stages"]:
        assert int(r["idle_ns_%d" % st["stage"]]) == st["idle_ns"] == l["idle_ns"][st["stage"]]
    assert abs(sum(float(r["bubble_" + k]) for k in ("warmup", "steady", "cooldown", "barrier"))
               - float(r["bubble"])) < 1e-6
# The iterations back to back: their times add up to the steady period's.
t = [int(r["iteration_ns"]) for r in rows[1:]]
assert abs(sum(t) / len(t) - rep["steady_period_ns"]) <= 1e-5 * rep["steady_period_ns"]
PY
}
check_rows "$T/1f1b"
# A predicted run has no loss: the column is there, empty.
if [ "$(cut -d, -f11 "$T/rows.csv" | sort -u | tr -d '\n')" = "loss" ]; then ok; else
    fail "a simulated run has a loss: $(cut -d, -f11 "$T/rows.csv" | sort -u)"
fi

# A measured run (real math, so a loss): the last row's loss is the one the run printed.
if expect_exit 0 run --backend cpu -p 2 -m 2 --iters 3 --out "$T/cpu"; then
    printed=$(awk '$1 == "1f1b" { print $(NF - 1) }' "$T/out")
    check_rows "$T/cpu"
    last=$(tail -n 1 "$T/rows.csv" | cut -d, -f11)
    if awk -v a="$last" -v b="$printed" 'BEGIN { exit !(a != "" && sprintf("%.4f", a) == b) }'; then
        ok
    else
        fail "the last iteration's loss '$last' is not the run's '$printed'"
    fi
fi
cli_finish
