# rebalance_gain.sh - the measured gain of `ppscope rebalance`'s suggestion against the predicted
# one, for tests/cli/rebalance.sh and bench/rebalance.sh; sourced after lib.sh's cli_init, not run.
#
# The machine is two shared cores of a virtual machine: its speed drifts by 10-20% (and in CI
# by up to 50%) for seconds at a time (a hypervisor's other guests), so one run's ops may all run
# slower or faster than another's. What is measured, like for like with the prediction (median
# op costs):
# - the runs alternate, bad, good, good, bad, so a drift that is steady over the four weighs on
#   both partitions alike; each partition's iteration time is the median of its two runs' whole
#   iterations (`report --iterations`): a stall of one iteration does not move it;
# - what drift is left is the same layers' costs measured in each partition's runs (the sum of
#   every layer's median F and B from each run's rebalance --json): the same ops on the same
#   shapes, so only the host's speed moves it, not where the layers sit; the measured gain is
#   divided by it before it is judged, and both figures are printed.

# field FILE EXPR: a figure from a JSON file, by a Python expression over d
field() {
    python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"
}

# gain NAME PERCENT PARTITION ARGS...: runs the bad partition, asks rebalance for a suggestion,
# then runs the suggestion twice and the bad partition again (bad, good, good, bad: a drift of
# the host's speed that is steady over the four runs weighs on both partitions alike); 0 when the
# measured gain (with the host's drift taken out) is the predicted one within PERCENT, 3 when a
# run was contended, 1 otherwise; the figures in $T/NAME.gain and how far off the prediction the
# gain was (0.03: 3% slower than predicted) in $T/NAME.off, either way
gain() {
    name=$1 tol=$2 bad=$3
    shift 3
    rm -rf "$T/$name-"*
    "$PPS" run "$@" --partition "$bad" --out "$T/$name-bad1" >/dev/null 2>"$T/run.err" ||
        fail "ppscope run $* --partition $bad: $(cat "$T/run.err")"
    expect_exit 0 rebalance --json "$T/$name-bad1"
    cp "$T/out" "$T/$name.json"
    [ "$(field "$T/$name.json" "d['current']")" = "$bad" ] || fail "$name: current is not $bad"
    [ "$(field "$T/$name.json" "d['per_layer']")" = "True" ] || fail "$name: no per-layer costs"
    sugg=$(field "$T/$name.json" "d['suggested']")
    for r in good1:$sugg good2:$sugg bad2:$bad; do
        "$PPS" run "$@" --partition "${r#*:}" --out "$T/$name-${r%%:*}" >/dev/null \
            2>"$T/run.err" || fail "ppscope run --partition ${r#*:}: $(cat "$T/run.err")"
    done
    for r in bad1 good1 good2 bad2; do
        expect_exit 0 rebalance --json "$T/$name-$r"
        cp "$T/out" "$T/$name-$r.rebalance"
        "$PPS" report --json "$T/$name-$r" >"$T/$name-$r.report" || fail "report of $name-$r"
        "$PPS" report --iterations --json "$T/$name-$r" >"$T/$name-$r.iters" ||
            fail "report --iterations of $name-$r"
    done
    python3 - "$T/$name" "$tol" >"$T/$name.gain" <<'PY'
import json, statistics, sys
base, tol = sys.argv[1], float(sys.argv[2]) / 100
runs = ("bad1", "good1", "good2", "bad2")
rebal = {r: json.load(open("%s-%s.rebalance" % (base, r))) for r in runs}
report = {r: json.load(open("%s-%s.report" % (base, r))) for r in runs}
rb = rebal["bad1"]
layers = lambda r: [("embedding", r["embedding"]), ("head", r["head"])] + \
    [("block %d" % i, b) for i, b in enumerate(r["blocks"])]
# The embedding, every block and the head have their own measured F and B (or BW), in every run.
for name, r in rebal.items():
    for what, c in layers(r):
        if c["f_ns"] is None or c["b_ns"] is None:
            print("%s, %s: no measured cost of its own" % (name, what))
            sys.exit(1)
# On emu the layers' costs are known: what --emu-block-ms and --emu-head-ms gave them (medians:
# robust against a late wake-up), within 5%.
if rb["backend"] == "emu":
    for what, c in layers(rb)[1:]:
        if abs(c["f_ns"] / 2e6 - 1) > 0.05 or abs(c["b_ns"] / 4e6 - 1) > 0.05:
            print("%s: measured F %.0f ns, BW %.0f ns; modeled 2 ms and 4 ms" %
                  (what, c["f_ns"], c["b_ns"]))
            sys.exit(1)
# Each partition's iteration time: the median of the whole iterations of its two runs.
def iterations(r):
    rows = [json.loads(l) for l in open("%s-%s.iters" % (base, r)) if l.strip()]
    times = [w["iteration_ns"] for w in rows if w["iteration_ns"] is not None and not w["partial"]]
    if len(times) < 3:
        print("%s: %d whole iterations with a time" % (r, len(times)))
        sys.exit(1)
    return times
mbad = statistics.median(iterations("bad1") + iterations("bad2"))
mgood = statistics.median(iterations("good1") + iterations("good2"))
cost = lambda r: sum(c["f_ns"] + c["b_ns"] + (c["w_ns"] or 0) for _, c in layers(r))
drift = (cost(rebal["good1"]) + cost(rebal["good2"])) / (cost(rebal["bad1"]) + cost(rebal["bad2"]))
pred = rb["after_iter_ns"] / rb["before_iter_ns"]
meas = mgood / mbad
cont = max(r.get("host", {}).get("contention") or 0 for r in report.values())
print("%s -> %s: predicted %.2f -> %.2f ms (x%.3f), measured %.2f -> %.2f ms (x%.3f), "
      "the same layers x%.3f in the suggestion's runs, so x%.3f for the partition (%+.1f%%)%s" % (
    rb["current"], rb["suggested"], rb["before_iter_ns"] / 1e6, rb["after_iter_ns"] / 1e6, pred,
    mbad / 1e6, mgood / 1e6, meas, drift, meas / drift, 100 * (meas / drift / pred - 1),
    ", host contention %.0f%%" % (100 * cont) if cont > 0 else ""))
open(base + ".off", "w").write("%.4f\n" % (meas / drift / pred - 1))
if abs(meas / drift / pred - 1) <= tol:
    sys.exit(0)
sys.exit(3 if cont > 0.10 else 1)
PY
}

