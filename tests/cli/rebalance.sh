#!/bin/sh
# rebalance.sh - `ppscope rebalance RUN` (issue 12) end to end: a run with a deliberately bad
# partition, the partition rebalance suggests from the run's per-layer spans, and a run of that
# suggestion; the measured gain in iteration time (suggested / bad) must be the predicted one
# (after / before) within 5%. On emu every block costs the same known time, so the suggestion is
# also known: the even split. On cpu the real model's blocks are timed.
#
# The machine is two shared cores of a virtual machine: its speed drifts by 10-20% for seconds at
# a time (a hypervisor's other guests), so the second run's ops may all run slower or faster
# than the first's. What is measured, like for like with the prediction (median op costs):
# - each run's iteration time is the median of its iterations' (`report --iterations`): a stall
#   of one iteration does not move it;
# - the host's drift between the two runs is the same layers' costs measured in each (the sum of
#   every layer's median F and B over the two runs' rebalance --json): the same ops on the same
#   shapes, so only the host's speed moves it, not where the layers sit; the measured gain is
#   divided by it before it is judged, and both figures are printed.
# A pair that misses is measured again (three pairs in all). A pair measured while the stage
# threads waited for a core more than 10% of their time (the report's host contention: another
# process wanted the same cores) times the other processes, not the partition: it is not judged,
# only held to the prediction's own direction (the suggestion predicted faster), and the test
# says so.
# Bad input: exit 2.
#
# usage: rebalance.sh PPSCOPE
set -u

. "$(dirname "$0")/lib.sh"
cli_init rebalance "$1"

# field FILE EXPR: a figure from a JSON file, by a Python expression over d
field() {
    python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"
}

# gain NAME PARTITION ARGS...: runs the bad partition and the suggestion; 0 when the measured
# gain (with the host's drift taken out) is the predicted one within 5%, 3 when either run was
# contended, 1 otherwise; the figures in $T/NAME.gain either way
gain() {
    name=$1 bad=$2
    shift 2
    rm -rf "$T/$name-bad" "$T/$name-good"
    "$PPS" run "$@" --partition "$bad" --out "$T/$name-bad" >/dev/null 2>"$T/run.err" ||
        fail "ppscope run $* --partition $bad: $(cat "$T/run.err")"
    expect_exit 0 rebalance --json "$T/$name-bad"
    cp "$T/out" "$T/$name.json"
    [ "$(field "$T/$name.json" "d['current']")" = "$bad" ] || fail "$name: current is not $bad"
    [ "$(field "$T/$name.json" "d['per_layer']")" = "True" ] || fail "$name: no per-layer costs"
    sugg=$(field "$T/$name.json" "d['suggested']")
    "$PPS" run "$@" --partition "$sugg" --out "$T/$name-good" >/dev/null 2>"$T/run.err" ||
        fail "ppscope run --partition $sugg: $(cat "$T/run.err")"
    expect_exit 0 rebalance --json "$T/$name-good"
    cp "$T/out" "$T/$name-good.json"
    for r in bad good; do
        "$PPS" report --json "$T/$name-$r" >"$T/$r.json" || fail "report of $name-$r"
        "$PPS" report --iterations --json "$T/$name-$r" >"$T/$r.iters" ||
            fail "report --iterations of $name-$r"
    done
    python3 - "$T/$name.json" "$T/$name-good.json" "$T/bad.json" "$T/good.json" \
        "$T/bad.iters" "$T/good.iters" >"$T/$name.gain" <<'PY'
import json, statistics, sys
rb, rg, bad, good = (json.load(open(p)) for p in sys.argv[1:5])
layers = lambda r: [("embedding", r["embedding"]), ("head", r["head"])] + \
    [("block %d" % i, b) for i, b in enumerate(r["blocks"])]
# The embedding, every block and the head each have their own measured F and B (or BW), in both runs.
for r in (rb, rg):
    for what, c in layers(r):
        if c["f_ns"] is None or c["b_ns"] is None:
            print("%s: no measured cost of its own" % what)
            sys.exit(1)
# On emu the layers' costs are known: what --emu-block-ms and --emu-head-ms gave them (medians:
# robust against a late wake-up), within 5%.
if rb["backend"] == "emu":
    for what, c in layers(rb)[1:]:
        if abs(c["f_ns"] / 2e6 - 1) > 0.05 or abs(c["b_ns"] / 4e6 - 1) > 0.05:
            print("%s: measured F %.0f ns, BW %.0f ns; modeled 2 ms and 4 ms" %
                  (what, c["f_ns"], c["b_ns"]))
            sys.exit(1)
def median_iteration(path):
    rows = [json.loads(l) for l in open(path) if l.strip()]
    times = [r["iteration_ns"] for r in rows if r["iteration_ns"] is not None and not r["partial"]]
    if len(times) < 3:
        print("%s: %d whole iterations with a time" % (path, len(times)))
        sys.exit(1)
    return statistics.median(times)
mbad, mgood = median_iteration(sys.argv[5]), median_iteration(sys.argv[6])
cost = lambda r: sum(c["f_ns"] + c["b_ns"] + (c["w_ns"] or 0) for _, c in layers(r))
drift = cost(rg) / cost(rb)
pred = rb["after_iter_ns"] / rb["before_iter_ns"]
meas = mgood / mbad
cont = max(r.get("host", {}).get("contention") or 0 for r in (bad, good))
print("%s -> %s: predicted %.2f -> %.2f ms (x%.3f), measured %.2f -> %.2f ms (x%.3f), "
      "the same layers x%.3f in the second run, so x%.3f for the partition (%+.1f%%)%s" % (
    rb["current"], rb["suggested"], rb["before_iter_ns"] / 1e6, rb["after_iter_ns"] / 1e6, pred,
    mbad / 1e6, mgood / 1e6, meas, drift, meas / drift, 100 * (meas / drift / pred - 1),
    ", host contention %.0f%%" % (100 * cont) if cont > 0 else ""))
if abs(meas / drift / pred - 1) <= 0.05:
    sys.exit(0)
sys.exit(3 if cont > 0.10 else 1)
PY
}

# check NAME PARTITION ARGS...: gain, measured again (three times in all) while it misses: the
# machine is shared, and a busy host slows one run more than the other
check() {
    gain "$@"
    r=$?
    first=$(cat "$T/$1.gain")
    for again in 2 3; do
        [ "$r" -eq 0 ] && break
        gain "$@"
        r=$?
    done
    judged=1
    if [ "$r" -eq 3 ]; then
        judged=0
        echo "$1: NOT JUDGED (the host is contended): $(cat "$T/$1.gain")"
        [ "$(field "$T/$1.json" "d['after_iter_ns'] < d['before_iter_ns']")" = "True" ] ||
            fail "$1: the suggestion is not predicted faster than the bad partition"
        return
    fi
    [ "$r" -eq 0 ] ||
        fail "$1: measured gain not the predicted one within 5%: $first; again: $(cat "$T/$1.gain")"
    echo "$1: $(cat "$T/$1.gain")"
}

# emu: 8 blocks of 2 ms each per F, B and W (a BW 4 ms), the head 2 ms: 1,7 puts 7 blocks and
# the head on stage 1; the even split is the known best (ms, not less: long against a loaded
# host's late wake-ups).
check emu 1,7 --backend emu -p 2 -m 4 --layers 8 --iters 6 --quiet --emu-block-ms 2,2,2 \
    --emu-head-ms 2,2,2
# Contention skews the measured layer costs too: the known best is judged on a quiet host only.
if [ "$judged" -eq 1 ]; then
    case "$(field "$T/emu.json" "d['suggested']")" in
    4,4 | 5,3) ;;
    *) fail "emu: suggested $(field "$T/emu.json" "d['suggested']"), not 4,4 or 5,3" ;;
    esac
fi
[ "$(field "$T/emu.json" "d['before_bubble'] > d['after_bubble']")" = "True" ] ||
    fail "emu: the suggestion's predicted bubble is not below the bad partition's"

# cpu: the real model, 8 blocks of hidden 128, all on stage 1 but one.
check cpu 1,7 -p 2 -m 4 --layers 8 --hidden 128 --iters 8 --quiet

# A run without per-layer spans (emu's per-stage costs): each stage's cost spread evenly over
# its blocks, and the answer says so.
"$PPS" run --backend emu -p 2 -m 4 --layers 4 --iters 2 --quiet --partition 1,3 \
    --out "$T/stage-only" >/dev/null 2>&1 || fail "ppscope run (per-stage emu)"
expect_exit 0 rebalance --json "$T/stage-only"
[ "$(field "$T/out" "d['per_layer']")" = "False" ] || fail "per-stage run: per_layer is not false"
field "$T/out" "d['assumed']" | grep -q "spread evenly" || fail "per-stage run: assumption unsaid"

# Interleaved (v > 1) is not searched: exit 1, the reason on stderr, and --json says it too.
"$PPS" run --backend emu -s interleaved -p 2 -m 4 -v 2 --layers 4 --iters 2 --quiet \
    --emu-block-ms 1,1,1 --out "$T/interleaved" >/dev/null 2>&1 || fail "ppscope run (interleaved)"
expect_exit 1 rebalance --json "$T/interleaved"
stderr_has "v = 2"
[ "$(field "$T/out" "d['ok']")" = "False" ] || fail "interleaved: --json does not say ok false"

# Text output names both partitions; --help; bad input.
expect_exit 0 rebalance "$T/emu-bad"
grep -q -- "--partition 1,7" "$T/out" || fail "text output lacks the current partition"
grep -q "suggested" "$T/out" || fail "text output lacks the suggestion"
expect_exit 0 rebalance --help
grep -q "usage: ppscope rebalance" "$T/out" || fail "--help"
expect_exit 2 rebalance
expect_exit 2 rebalance --bogus "$T/emu-bad"
expect_exit 2 rebalance "$T/no-such-run"
expect_exit 2 run --backend emu --emu-block-ms 1,2 --no-trace
expect_exit 2 run --emu-block-ms 1,1,1 --no-trace
cli_finish
