#!/bin/sh
# report_device.sh - the bubble on the device (issue 10): on a run with device kernels, `report`
# gives, beside the host's bubble, each window less the union of its kernels over the stages
# that have kernels. Checked against a known answer (a two-rank Kineto trace written here, whose
# kernels cover a known part of each window while the host ops cover all of it) and against an
# independent computation over the spans of the real traces in ../shared/traces (each window's
# kernels unioned with SQLite and Python, not ppscope). A run without kernels says nothing of the
# device (no line, null in --json).
#
# usage: report_device.sh PPSCOPE
set -u

. "$(dirname "$0")/lib.sh"
cli_init report_device "$1"
traces=$(cd "$(dirname "$0")/../../.." && pwd)/shared/traces
command -v python3 >/dev/null 2>&1 || { echo "skipped: no python3" >&2; exit 77; }

# Two ranks, one iteration (ProfilerStep#0). Host ops back to back over 0..800 us on each rank;
# every op launches one kernel 10 us after it starts: 50 us long on rank 0, 80 us on rank 1. Five
# ops a rank: busy 250 us and 400 us of the 800 us window, so the device bubble is
# (550 + 400) / 1600 = 0.59375, while the host bubble is 0 (the ops cover the window).
python3 - "$T" <<'PY'
import json, sys
for rank, kdur in ((0, 50), (1, 80)):
    ev, corr = [], 1000 * (rank + 1)
    ev.append({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#0", "pid": 1, "tid": 1,
               "ts": 0, "dur": 800})
    ops = ["PP:%dF0" % rank, "PP:%dF1" % rank, "PP:%dB0" % rank, "PP:%dB1" % rank,
           "Optimizer.step#SGD.step"]
    for i, name in enumerate(ops):
        t = 160 * i
        corr += 1
        ev.append({"ph": "X", "cat": "user_annotation", "name": name, "pid": 1, "tid": 1,
                   "ts": t, "dur": 160})
        ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1,
                   "tid": 1, "ts": t + 1, "dur": 2, "args": {"correlation": corr}})
        ev.append({"ph": "X", "cat": "kernel", "name": "gemm_%d" % i, "pid": 0, "tid": 7,
                   "ts": t + 10, "dur": kdur, "args": {"correlation": corr}})
    doc = {"distributedInfo": {"rank": rank, "world_size": 2}, "traceEvents": ev}
    json.dump(doc, open("%s/rank%d.json" % (sys.argv[1], rank), "w"))
PY
if ! "$PPS" import -q "$T/rank0.json" "$T/rank1.json" -o "$T/known" 2>"$T/err" &&
    grep -q "built without simdjson" "$T/err"; then
    echo "skipped: $(cat "$T/err")" >&2
    exit 77
fi
[ -d "$T/known" ] || fail "import of the known-answer trace: $(cat "$T/err")"
expect_exit 0 report --json "$T/known"
python3 - "$T/out" <<'PY' || fail "known answer: $(cat "$T/out" | head -c 600)"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["device_stages"] == 2, d["device_stages"]
assert abs(d["device_bubble"] - 0.59375) < 1e-9, d["device_bubble"]
assert d["bubble"] < 1e-9, d["bubble"]
PY
expect_exit 0 report "$T/known"
grep -q "^device    bubble 59.4%   on the device: each window less its kernels, on the 2 stages" \
    "$T/out" || fail "text: $(grep device "$T/out")"

# The view: each stage's device row under its host row (its kernels; the host row has none of
# them), and the device bubble in the stats, at 80x24 and 200x60.
for size in 80x24 200x60; do
    expect_exit 0 view --once --size "$size" --ascii "$T/known"
    for s in 0 1; do
        grep -q "^s$s " "$T/out" || fail "view $size: no host row for stage $s"
        grep -q "^s$s dev " "$T/out" || fail "view $size: no device row for stage $s"
        grep "^s$s dev " "$T/out" | grep -q "[Kk]" || fail "view $size: stage $s's device row shows no kernel"
        ! grep "^s$s  " "$T/out" | grep -q "[Kk]" || fail "view $size: stage $s's host row shows kernels"
    done
done
grep -q "device   bubble 59.4%" "$T/out" || fail "view: no device bubble in the stats: $(cat "$T/out")"

# The real traces: ppscope's figure against the spans' own union, window by window.
check_real() {
    expect_exit 0 report --json "$1"
    python3 - "$T/out" "$1" <<'PY' || fail "$1: device bubble differs from the spans' own"
import glob, json, os, sqlite3, sys
d = json.load(open(sys.argv[1]))
path = sys.argv[2]
shards = sorted(glob.glob(path + "/rank-*.db")) if os.path.isdir(path) else [path]
assert d["device_stages"] >= 1, d["device_stages"]
spans = {}
for f in shards:
    db = sqlite3.connect(f)
    kid = db.execute("select id from kinds where name = 'KERNEL'").fetchone()[0]
    for stage, a, b in db.execute("select stage, start_ns, end_ns from spans where kind = ?",
                                  (kid,)):
        spans.setdefault(stage, []).append((a, b))
assert len(spans) == d["device_stages"], (len(spans), d["device_stages"])
whole = [it for it in d["iterations"] if not it["partial"] and it["window_ns"] > 0]
total = 0
for it in whole:
    t0, t1 = it["t0_ns"], it["t1_ns"]
    idle = 0
    for stage, ss in spans.items():
        busy, cov = 0, t0
        for a, b in sorted(ss):
            a, b = max(a, t0), min(b, t1)
            if b > a and b > cov:
                busy += b - max(a, cov)
                cov = b
        idle += (t1 - t0) - busy
    want = idle / (len(spans) * (t1 - t0))
    assert abs(it["device_bubble"] - want) < 1e-6, (it["iter"], it["device_bubble"], want)
    total += want
assert abs(d["device_bubble"] - total / len(whole)) < 1e-6, (d["device_bubble"], total / len(whole))
print("%s: device bubble %.4f over %d iterations, host bubble %.4f" % (
    os.path.basename(path), d["device_bubble"], len(whole), d["bubble"]))
PY
}
if [ -d "$traces" ]; then
    expect_exit 0 import "$traces/kineto_hta/sampled_rank-0.json.gz" -o "$T/kineto"
    check_real "$T/kineto"
    # An export with kernels but no iterations (nsys, saxpy over MPI): kernels on its stage, and no
    # window to measure them in: n/a, not a number.
    expect_exit 0 import "$traces/nsys_sqlite_hpcgroup_pipit/saxpy-mpi-cuda_nsys_perlmutter0.sqlite" \
        -o "$T/saxpy"
    expect_exit 0 report --json "$T/saxpy"
    python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert d['device_stages'] == 1 and d['device_bubble'] is None and d['n_iterations'] == 0, d" \
        "$T/out" || fail "saxpy: device figures without a window"
else
    echo "no $traces beside the checkout: the real traces' part not run"
fi

# No kernels: nothing said of the device.
expect_exit 0 run --backend emu -p 2 -m 2 --iters 2 --quiet --out "$T/emu"
expect_exit 0 report --json "$T/emu"
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert d['device_stages'] == 0 and d['device_bubble'] is None, d['device_bubble']" \
    "$T/out" || fail "a run without kernels: device figures"
expect_exit 0 report "$T/emu"
! grep -q "^device " "$T/out" || fail "a run without kernels prints a device line"
cli_finish
