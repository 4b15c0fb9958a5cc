#!/bin/sh
# critical_path.sh - `ppscope report`'s critical path against runs whose path is known exactly:
# simulated timelines (`ppscope sim --trace`), where the theory gives the path's length, its
# shares by stage and by kind, and the identities every path obeys (its ops and its gaps add up
# to its length; on a simulated run every gap is one --tcomm between stages); and an emu run with
# a stage made slow by a known factor, and one with a link made slow by a known time. Needs python3 (its json module) to read --json; skipped,
# exit 77, without it. Usage: critical_path.sh PATH/TO/ppscope
set -u
. "$(dirname "$0")/lib.sh"
cli_init critical_path "$1"
if ! command -v python3 >/dev/null 2>&1; then
    echo "skipped: no python3 to read the JSON with" >&2
    exit 77
fi

# check NAME PYTHON-EXPRESSIONS -- SIM-ARGS: simulates 2 iterations of p=4, m=8 (one time unit =
# 1 ms), reports the run as JSON and evaluates each line of the checks with c = critical_path,
# w = the iteration window in units, share(kind), stage(s) (a stage's share) and n_input (the
# typical path's steps reached from the neighbouring stage).
check() {
    name=$1
    checks=$2
    shift 2
    dir="$T/$name"
    if ! "$PPS" sim "$@" -p 4 -m 8 --iters 2 --trace "$dir" >/dev/null 2>"$T/err"; then
        fail "$name: sim --trace failed: $(cat "$T/err")"
        return
    fi
    expect_exit 0 report --json "$dir"
    python3 - "$T/out" "$name" "$checks" <<'PY' || fail "$name: the critical path is not as expected"
import json, sys
doc = json.load(open(sys.argv[1]))
name, checks = sys.argv[2], sys.argv[3]
c = doc["critical_path"]
unit = 1e6
# Shares are printed to 6 significant figures.
def near(a, b): return abs(a - b) <= 1e-5 * max(1.0, abs(b))
def share(k): return c["by_kind"][k]["share"]
def stage(s): return [x["share"] for x in c["by_stage"] if x["stage"] == s][0]
steps = c["typical"]["steps"]
n_input = sum(1 for s in steps if s["via"] == "input")
w = c["window_ns"] / unit
length = c["length_ns"] / unit
ok = True
for line in checks.strip().splitlines():
    if not eval(line.strip()):
        print("%s: fails %s (length %g, window %g, chain %s, kinds %s, stages %s)" % (
            name, line.strip(), length, w, c["typical"]["chain"], c["by_kind"], c["by_stage"]),
            file=sys.stderr)
        ok = False
# Every path: its compute, transfers and waits add up to its length, within the window.
total = sum(v["ns"] for v in c["by_kind"].values())
if abs(total - c["length_ns"]) > len(c["by_kind"]) or c["length_ns"] > c["window_ns"] + 1:
    print("%s: kinds add to %g of a path of %g in a window of %g" % (name, total, c["length_ns"],
          c["window_ns"]), file=sys.stderr)
    ok = False
sys.exit(0 if ok else 1)
PY
}

# 1F1B, tf = tb = 1 (unsplit: BW takes tb + tw): the path is the first microbatch's forward up
# the pipeline, the last stage's m F and m B back to back, the last backward down it: (m+p-1)
# forwards and as many backwards, (m+p-1)(tf+tb) = 22 = the window; the last stage has m(tf+tb)
# = 16 of it, each other stage tf+tb = 2.
check 1f1b '
near(length, 22) and near(w, 22)
near(share("F"), 0.5) and near(share("BW"), 0.5)
near(stage(3), 16 / 22) and near(stage(0), 2 / 22) and near(stage(1), 2 / 22)
near(share("wait"), 0) and near(share("comm"), 0)
c["typical"]["chain"].startswith("F0@s0 -> F0@s1 -> F0@s2 -> F0..BW7@s3 (16 ops)")
' --schedule 1f1b --tb 1 --tw 0

# Stage 2 twice as slow: it sets the pace. Its m F and m B (2 and 2 each, 32 units) lie on the
# path, between stage 0's and 1's first F and last B (4 units): 36; stage 3 waits on stage 2
# and has none of it.
check slow_stage '
near(length, 36) and near(w, 36)
near(stage(2), 32 / 36) and near(stage(0), 2 / 36) and near(stage(1), 2 / 36) and near(stage(3), 0)
' --schedule 1f1b --tb 1 --tw 0 --stage-mult 1,1,2,1

# GPipe with an optimizer step of 1: all forwards (m+p-1) tf, all backwards (m+p-1)(tb+tw), then
# the optimizer barrier: 11 + 22 + 1 = 34, OPT 1/34 of it.
check gpipe_opt '
near(length, 34) and near(w, 34)
near(share("OPT"), 1 / 34) and near(share("F"), 11 / 34) and near(share("BW"), 22 / 34)
' --schedule gpipe --topt 1

# A transfer of 0.5 between stages: each step the path takes from a neighbouring stage carries
# exactly one (the simulated run records no messages, so that gap is the transfer), and
# nothing waits.
check tcomm '
near(length, w)
near(c["typical"]["by_kind"]["comm"]["ns"] / unit, 0.5 * n_input) and n_input > 0
near(share("wait"), 0)
' --schedule 1f1b --tb 1 --tw 0 --tcomm 0.5

# Interleaved (v = 2): the path crosses from chunk 0 on the last stage to chunk 1 on stage 0,
# and (backwards) from chunk 1 on stage 0 to chunk 0 on the last stage; it spans the window.
check interleaved '
near(length, w)
"F0c0@s3 -> F0c1@s0" in c["typical"]["chain"]
near(c["typical"]["by_kind"]["comm"]["ns"] / unit, 0.25 * n_input)
near(share("wait"), 0)
' --schedule interleaved -v 2 --tcomm 0.25

# ZB-H1: W lies on its stage's own chain only, never reached from another stage.
check zb_h1 '
near(length, w) and share("W") > 0
all(s["via"] != "input" for s in steps if s["kind"] == "W")
' --schedule zb-h1

# --- an emu run: stage 2's ops take twice as long ---
expect_exit 0 run --backend emu --schedule 1f1b -p 4 -m 8 --iters 3 --emu-tf 1 --emu-tb 1 \
    --emu-tw 1 --emu-slow-stage 2:2 --out "$T/emu"
expect_exit 0 report --json "$T/emu"
python3 - "$T/out" <<'PY' || fail "emu: the critical path is not as expected"
import json, sys
doc = json.load(open(sys.argv[1]))
c = doc["critical_path"]
ok = True
for it in doc["iterations"]:
    if it["partial"]:
        continue
    path = [x for x in c["per_iteration"] if x["iter"] == it["iter"]][0]
    busy = max(s["compute_ns"] for s in it["stages"])
    # Within the window, and no shorter than the busiest stage's compute: that stage's ops run
    # one after another inside the path's span of time.
    if not (busy <= path["length_ns"] + 1 and path["length_ns"] <= it["window_ns"] + 1):
        print("emu iteration %d: path %g, busiest stage %g, window %g" % (it["iter"],
              path["length_ns"], busy, it["window_ns"]), file=sys.stderr)
        ok = False
shares = {x["stage"]: x["share"] for x in c["by_stage"]}
if max(shares, key=shares.get) != 2:
    print("emu: the slow stage 2 does not have the largest share: %s" % shares, file=sys.stderr)
    ok = False
if not c["messages"]:
    print("emu: the run's messages were not seen", file=sys.stderr)
    ok = False
sys.exit(0 if ok else 1)
PY

# --- an emu run whose link between stages 2 and 3 takes 2 ms more per message ---
# The path goes back and forth over that link (each stage waits for the other's output), and
# every crossing where the receiver waited for the message carries its 2 ms as transfer.
expect_exit 0 run --backend emu --schedule 1f1b -p 4 -m 8 --iters 3 --emu-tf 1 --emu-tb 1 \
    --emu-tw 1 --emu-slow-link 2-3:2000 --out "$T/link"
expect_exit 0 report --json "$T/link"
python3 - "$T/out" <<'PY' || fail "slow link: the critical path is not as expected"
import json, sys
steps = json.load(open(sys.argv[1]))["critical_path"]["typical"]["steps"]
crossings = [s for p, s in zip(steps, steps[1:])
             if s["via"] == "input" and {p["stage"], s["stage"]} == {2, 3} and s["waited"]]
short = [s for s in crossings if s["comm_ns"] < 2e6]
if len(crossings) < 4 or short:
    print("slow link: %d waited crossings of 2-3, these under 2 ms: %s" % (len(crossings), short),
          file=sys.stderr)
    sys.exit(1)
PY

# The text report has the section, with the chain.
expect_exit 0 report "$T/slow_stage"
grep -q "^critical path  36.0 ms of the 36.0 ms window (100.0%)" "$T/out" ||
    fail "report's text lacks the critical path's length: $(cat "$T/out")"
grep -q "s2 88.9%" "$T/out" || fail "report's text lacks stage 2's share"
grep -q "F0@s0 -> F0@s1 -> F0..BW7@s2 (16 ops) -> BW7@s1 -> BW7@s0" "$T/out" ||
    fail "report's text lacks the chain"

cli_finish
