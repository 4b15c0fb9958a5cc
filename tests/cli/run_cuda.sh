#!/bin/sh
# run_cuda.sh - `ppscope run --backend cuda` (issue 10). On a machine with a GPU: every schedule
# runs the real model with --check-grads, bitwise equal to the single-stream reference on the
# same GPU; a traced run names its device and backend in its metadata, and its report reads.
# Without a GPU (or without the cuda backend in the build) the run must say why in one line and
# exit 2, never crash; then the test has checked all it can here and exits 77 (skipped).
#
# usage: run_cuda.sh PPSCOPE
set -u

. "$(dirname "$0")/lib.sh"
cli_init run_cuda "$1"

small="-p 2 -m 4 --layers 4 --hidden 64 --iters 2"

# --transport nccl sends between GPUs: refused on cpu, with or without a GPU.
expect_exit 2 run --transport nccl --backend cpu $small --no-trace
stderr_has "--transport nccl sends between GPUs through NCCL: it runs with --backend cuda"
run_pps run --backend cuda $small --no-trace
if [ "$rc" -ne 0 ]; then
    expect_exit 2 run --backend cuda $small --no-trace
    grep -Eq "^ppscope run: (cuda: no CUDA device|cuda: no usable NVIDIA driver|kernels backend 'cuda' is not in this build)" \
        "$T/err" || fail "no GPU, but not said so: $(cat "$T/err")"
    expect_exit 2 run --backend cuda $small --check-grads
    # The NCCL transport on one stage (no launcher needed) loads its library and finds no GPU.
    expect_exit 2 run --backend cuda --transport nccl -p 1 -m 2 --layers 2 --hidden 64 --iters 1 \
        --no-trace
    grep -Eq "^ppscope run: (nccl transport: no CUDA device|--transport nccl: ppscope was built without NCCL)" \
        "$T/err" || fail "--transport nccl without a GPU, not said so: $(cat "$T/err")"
    echo "no GPU here ($(cat "$T/err")): checked the refusal only"
    echo "$cli_passed passed, $cli_failed failed"
    [ "$cli_failed" -eq 0 ] || exit 1
    exit 77
fi

# A GPU: the gradient check on every schedule, as threads (one stream per stage).
expect_exit 0 run --backend cuda -s 1f1b,gpipe,zb-h1,zb-h2 $small --check-grads
[ "$(grep -c "bitwise equal to the single-process reference" "$T/out")" -eq 4 ] ||
    fail "check-grads on cuda: $(cat "$T/out")"
expect_exit 0 run --backend cuda -s interleaved -p 2 -m 4 -v 2 --layers 4 --hidden 64 --iters 2 \
    --check-grads
grep -q "bitwise equal" "$T/out" || fail "check-grads interleaved on cuda: $(cat "$T/out")"

# A traced run: its metadata names the backend and the GPU; its report reads.
expect_exit 0 run --backend cuda -s 1f1b $small --out "$T/run" --quiet
expect_exit 0 report "$T/run"
python3 - "$T/run" <<'PY' || fail "a cuda run's metadata"
import glob, sqlite3, sys
for shard in sorted(glob.glob(sys.argv[1] + "/rank-*.db")):
    meta = dict(sqlite3.connect(shard).execute("select key, value from meta"))
    assert meta["backend"] == "cuda", (shard, meta["backend"])
    assert meta["device"].startswith("cuda (") and "SMs" in meta["device"], meta["device"]
    # Each stage on its own SM partition (green contexts on a GPU and driver that have them).
    assert "SMs (green context" in meta.get("device_partition", "") or \
        "shared with the other" in meta.get("device_partition", ""), meta.get("device_partition")
    # Device spans from CUPTI: kernels of every op, each carrying its op's id (corr) as the op does.
    assert meta.get("device_activity") == "cupti", meta.get("device_activity")
    db = sqlite3.connect(shard)
    kind = dict(db.execute("select name, id from kinds"))
    ops = {c for (c,) in db.execute(
        "select corr from spans where kind in (?, ?, ?, ?) and corr > 0",
        (kind["F"], kind["B"], kind["W"], kind["BW"]))}
    kernels = list(db.execute("select corr, iter, mb from spans where kind = ?", (kind["KERNEL"],)))
    assert ops and kernels, (len(ops), len(kernels))
    with_op = [k for k in kernels if k[0] in ops]
    assert len(with_op) >= 0.9 * len(kernels), (len(with_op), len(kernels))
    assert {c for c, _, _ in with_op} == ops, "an op without its kernels"
PY
grep -q "^device    bubble" "$T/out" || fail "a cuda run's report has no device bubble: $(cat "$T/out")"
expect_exit 0 run --backend cuda -s 1f1b $small --out "$T/plain" --quiet --no-device-spans
python3 - "$T/plain" <<'PY' || fail "--no-device-spans still recorded device spans"
import glob, sqlite3, sys
for shard in glob.glob(sys.argv[1] + "/rank-*.db"):
    db = sqlite3.connect(shard)
    kid = db.execute("select id from kinds where name = 'KERNEL'").fetchone()[0]
    assert db.execute("select count(*) from spans where kind = ?", (kid,)).fetchone()[0] == 0
PY
cli_finish
