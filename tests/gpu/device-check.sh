#!/bin/sh
# device-check.sh - the GPU checks of issue 10, as one prepared command for a machine with a GPU
# (DEVELOPERS.md, `device`): builds with CUDA (Release), runs the tests labelled gpu, then the
# real model on the GPU with every schedule, traced, and writes each run, its report (text and
# JSON) and a summary under OUT ($OUT, else ./device-check-out). Without a GPU it exits 77.
#
# What it covers today: the cuda kernels backend (against cpu, and bitwise run to run);
# `ppscope run --backend cuda` with --check-grads (each stage a thread with its own stream on the
# whole GPU, as the single-stream reference); traced runs with each stage on its own SM
# partition (green contexts) and CUPTI's device spans, and one 1f1b run sharing the SMs, compared;
# the NCCL transport under mpirun with --check-grads where the machine has two GPUs or more (on
# one, the refusal NCCL gives two ranks on one GPU). Exit 0 when every step passed, 1 otherwise.
# --dry-run, or no GPU: prints each step it would run, runs none, and exits 77.
#
# usage: tests/gpu/device-check.sh [--dry-run] [BUILD_DIR]
set -u

dry=0
if [ "${1:-}" = --dry-run ]; then
    dry=1
    shift
fi
here=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$here/build-gpu}
out=${OUT:-$PWD/device-check-out}
log=$out/summary.txt
failed=0

if [ "$dry" -eq 0 ] && { ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; }; then
    echo "device-check: no GPU here (nvidia-smi finds none); what it would run on one:"
    dry=1
fi
if [ "$dry" -eq 0 ]; then
    mkdir -p "$out"
    : >"$log"
fi

say() { if [ "$dry" -eq 0 ]; then echo "$*" | tee -a "$log"; fi; }
step() {
    name=$1
    shift
    if [ "$dry" -eq 1 ]; then
        echo "  $name: $*"
        return 0
    fi
    start=$(date +%s)
    if "$@" >"$out/$name.log" 2>&1; then
        say "ok    $name ($(($(date +%s) - start)) s)"
    else
        say "FAIL  $name ($(($(date +%s) - start)) s): see $name.log"
        tail -20 "$out/$name.log" | tee -a "$log"
        failed=1
    fi
}

gpus=2 # what the dry run shows: the steps of a machine with two
if [ "$dry" -eq 0 ]; then
    nvidia-smi -L | tee -a "$log"
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee -a "$log"
    gpus=$(nvidia-smi -L | grep -c '^GPU')
fi

jobs=$(nproc 2>/dev/null || echo 4)
# Warnings are not errors here: another machine's compiler may warn where this one does not, and
# the device's minutes are for the GPU.
step configure cmake -S "$here" -B "$build" -DCMAKE_BUILD_TYPE=Release -DPPS_WITH_CUDA=ON \
    -DPPS_WITH_CUBLAS=ON
step build cmake --build "$build" -j "$jobs"
PPS=$build/ppscope
step gpu-tests ctest --test-dir "$build" -L gpu --output-on-failure --no-tests=error
step kernels-cuda-verbose "$build/tests/test_kernels_cuda"

# The real model on the GPU, big enough that an op takes milliseconds on an H200.
model="--layers 16 --hidden 1024 --seq-len 256 --microbatch-size 8"
for s in 1f1b zb-h1 zb-h2 interleaved; do
    v=""
    [ "$s" = interleaved ] && v="-v 2"
    step "check-grads-$s" "$PPS" run --backend cuda -s "$s" -p 4 -m 8 $v --layers 8 --hidden 256 \
        --iters 1 --check-grads
    step "run-$s" "$PPS" run --backend cuda -s "$s" -p 4 -m 8 $v $model --iters 6 --quiet \
        --out "$out/run-$s"
    step "report-$s" sh -c "'$PPS' report '$out/run-$s' >'$out/report-$s.txt' &&
        '$PPS' report --json '$out/run-$s' >'$out/report-$s.json'"
done
# The same 1f1b run with the stages sharing the GPU's SMs: the bubble partitions hide or show.
step run-1f1b-shared "$PPS" run --backend cuda -s 1f1b -p 4 -m 8 $model --iters 6 --quiet \
    --no-gpu-partition --out "$out/run-1f1b-shared"
step report-1f1b-shared sh -c "'$PPS' report '$out/run-1f1b-shared' >'$out/report-1f1b-shared.txt'"
step compare-partition sh -c "'$PPS' compare '$out/run-1f1b' '$out/run-1f1b-shared' >'$out/compare-partition.txt'"
step merge sh -c "for s in 1f1b zb-h1 zb-h2 interleaved; do
    '$PPS' merge '$out/run-'\$s -o '$out/run-'\$s'.db' || exit 1; done"

# The NCCL transport: one rank per GPU under mpirun. With two GPUs or more, the gradient check
# through it (bitwise, as under MPI) and a traced run; with one, NCCL refuses two ranks on it, and
# the run must say so and end (within the timeout), not hang.
mpi="mpirun -np 2"
[ "$(id -u)" -eq 0 ] && mpi="$mpi --allow-run-as-root"
if [ "$gpus" -ge 2 ]; then
    step nccl-check-grads timeout 300 $mpi "$PPS" run --backend cuda --transport nccl -s 1f1b,zb-h1 \
        -p 2 -m 8 --layers 8 --hidden 256 --iters 1 --check-grads
    step nccl-run-1f1b timeout 300 $mpi "$PPS" run --backend cuda --transport nccl -s 1f1b -p 2 \
        -m 8 $model --iters 6 --quiet --out "$out/run-nccl-1f1b"
    step report-nccl-1f1b sh -c "'$PPS' report '$out/run-nccl-1f1b' >'$out/report-nccl-1f1b.txt'"
else
    step nccl-one-gpu-refused sh -c "! timeout 120 $mpi '$PPS' run --backend cuda --transport nccl \
        -s 1f1b -p 2 -m 4 --layers 2 --hidden 64 --iters 1 --no-trace && echo refused as expected"
fi

[ "$dry" -eq 1 ] && exit 77
for s in 1f1b zb-h1 zb-h2 interleaved 1f1b-shared nccl-1f1b; do
    [ -f "$out/report-$s.txt" ] && grep -E "^(bubble|iteration|steady|theory|verdict|device)" \
        "$out/report-$s.txt" | sed "s/^/$s: /" | tee -a "$log"
done
[ "$failed" -eq 0 ] && say "device-check: all passed" || say "device-check: FAILED"
exit "$failed"
