#!/bin/sh
# device-check.sh - the GPU checks of issue 10, as one prepared command for a machine with a GPU
# (DEVELOPERS.md, `device`; docs/gpu.md says how to call it there): builds with CUDA (Release),
# runs the tests labelled gpu, then the real model on the GPU with every schedule, traced, and
# puts the figures the issue asks for in summary.txt and summary.json.
#
# What it covers today: the cuda kernels backend (against cpu, and bitwise run to run);
# `ppscope run --backend cuda` with --check-grads (each stage a thread with its own stream on the
# whole GPU, as the single-stream reference); traced runs with each stage on its own SM
# partition (green contexts) and CUPTI's device spans, the same 1f1b run without CUPTI (its
# overhead) and sharing the SMs (what the partitions change); the NCCL transport under mpirun
# with --check-grads where the machine has two GPUs or more (on one, the refusal NCCL gives two
# ranks on one GPU); none of it without mpirun, and the summary says so.
#
# What comes back. Everything is written to a work directory (WORK, else a new one under /tmp),
# and OUT ($OUT, else ./device-check-out) gets three files, what the device tool brings back
# (at most 8 files, none below two folders): summary.txt (each step's status and time, the
# figures), summary.json (the figures) and device-check.tar.gz (every step's log, the machine's
# description, each report as text and JSON, and each run merged into one file, left out with a
# note when they would make it over 15 MiB). Exit 0 when every step passed, 1 otherwise.
#
# --dry-run, or no GPU: prints each step it would run, runs none, writes nothing, and exits 77.
# --rehearse: no GPU needed; the same script on the cpu backend with a small model, skipping the
#   GPU's own steps (the gpu tests, NCCL): checks the script itself (its steps, figures and what
#   it packs) before a lent GPU's minutes are spent on it (tests/cli/device_check_rehearse.sh).
# --no-build: use BUILD_DIR as it is built (no configure, no build).
#
# A machine without SQLite's headers (the device's image may lack them: its list of packages
# names no -dev package):
# scripts/device-kit.sh, run beforehand on a machine that has them, puts them in .device-kit/,
# and the configure uses them (with the machine's own libsqlite3, or the kit's).
#
# usage: tests/gpu/device-check.sh [--dry-run | --rehearse] [--no-build] [BUILD_DIR]
set -u

dry=0 rehearse=0 build_it=1
while [ $# -gt 0 ]; do
    case $1 in
    --dry-run) dry=1 ;;
    --rehearse) rehearse=1 ;;
    --no-build) build_it=0 ;;
    -h | --help)
        sed -n '2,/^# usage/{s/^# \{0,1\}//;p}' "$0"
        exit 0
        ;;
    -*)
        echo "device-check: unknown option '$1' (usage: device-check.sh [--dry-run | --rehearse]" \
            "[--no-build] [BUILD_DIR])" >&2
        exit 2
        ;;
    *) break ;;
    esac
    shift
done
here=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$here/build-gpu}
out=${OUT:-$PWD/device-check-out}
failed=0

if [ "$dry" -eq 0 ] && [ "$rehearse" -eq 0 ] &&
    { ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; }; then
    echo "device-check: no GPU here (nvidia-smi finds none); what it would run on one:"
    dry=1
fi
if [ "$dry" -eq 0 ]; then
    mkdir -p "$out" || {
        echo "device-check: cannot create OUT=$out" >&2
        exit 2
    }
    work=${WORK:-$(mktemp -d /tmp/device-check.XXXXXX)}
    mkdir -p "$work" || exit 2
    log=$work/summary.txt
    : >"$log"
else
    work=${WORK:-/tmp/device-check.XXXXXX}
fi

say() { if [ "$dry" -eq 0 ]; then echo "$*" | tee -a "$log"; fi; }
# step NAME COMMAND...: runs it, its output in $work/NAME.log; ok or FAIL (with the log's tail)
# in the summary
step() {
    name=$1
    shift
    if [ "$dry" -eq 1 ]; then
        echo "  $name: $*"
        return 0
    fi
    start=$(date +%s)
    if "$@" >"$work/$name.log" 2>&1; then
        say "ok    $name ($(($(date +%s) - start)) s)"
    else
        say "FAIL  $name ($(($(date +%s) - start)) s): see $name.log"
        tail -20 "$work/$name.log" | tee -a "$log"
        failed=1
    fi
}
skip() { if [ "$dry" -eq 1 ]; then echo "  $1: skipped: $2"; else say "skip  $1: $2"; fi; }

gpus=2 # what the dry run shows: the steps of a machine with two
backend=cuda
if [ "$rehearse" -eq 1 ]; then
    gpus=0
    backend=cpu
    say "device-check: a rehearsal on the cpu backend (no GPU steps, a small model)"
elif [ "$dry" -eq 0 ]; then
    gpus=$(nvidia-smi -L | grep -c '^GPU')
fi

# What the machine has, for the note and for what fails below.
step machine sh -c 'uname -a; grep PRETTY_NAME /etc/os-release; ldd --version | head -1
    for t in cc cmake nvcc mpirun nsys python3; do
        printf "%s: " "$t"; command -v "$t" || echo "not found"; done
    nvcc --version | tail -2; nvidia-smi -L
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
    echo "#include <sqlite3.h>" | cc -E - >/dev/null 2>&1 && echo "sqlite3.h: found" ||
        echo "sqlite3.h: not found"
    ldconfig -p | grep -E "libsqlite3|libcupti|libnccl|libmpi\.so" || true'
[ "$dry" -eq 0 ] && grep -E "^(GPU |NVIDIA|PRETTY|ldd)" "$work/machine.log" | tee -a "$log"

jobs=$(nproc 2>/dev/null || echo 4)
# SQLite's headers from the kit where the machine has none (scripts/device-kit.sh).
sqlite_flags=""
kit=$here/.device-kit
if [ "$dry" -eq 0 ] && ! echo "#include <sqlite3.h>" | cc -E - >/dev/null 2>&1 &&
    [ -f "$kit/include/sqlite3.h" ]; then
    lib=$(ldconfig -p | sed -n 's/.*libsqlite3\.so\.0 (libc6,x86-64) => //p' | head -1)
    [ -n "$lib" ] || lib=$kit/lib/libsqlite3.so.0
    sqlite_flags="-DSQLite3_INCLUDE_DIR=$kit/include -DSQLite3_LIBRARY=$lib"
    say "sqlite: the kit's headers (.device-kit), $lib"
fi
if [ "$build_it" -eq 1 ]; then
    # Warnings are not errors here: another machine's compiler may warn where this one does
    # not, and the device's minutes are for the GPU.
    step configure cmake -S "$here" -B "$build" -DCMAKE_BUILD_TYPE=Release -DPPS_WITH_CUDA=ON \
        -DPPS_WITH_CUBLAS=ON $sqlite_flags
    step build cmake --build "$build" -j "$jobs"
fi
PPS=$build/ppscope

if [ "$rehearse" -eq 1 ]; then
    skip gpu-tests "a rehearsal"
    # Small enough to take seconds on two cores.
    model="--layers 8 --hidden 64"
    small="--layers 8 --hidden 64"
else
    step gpu-tests ctest --test-dir "$build" -L gpu --output-on-failure --no-tests=error
    step kernels-cuda-verbose "$build/tests/test_kernels_cuda"
    # The real model, big enough that an op takes milliseconds on an H200.
    model="--layers 16 --hidden 1024 --seq-len 256 --microbatch-size 8"
    small="--layers 8 --hidden 256"
fi

# runs: the run directories made, for the figures and the merge
runs=""
# traced NAME ARGS...: a traced run of the model into $work/run-NAME, and its reports
traced() {
    run=$1
    shift
    step "run-$run" "$PPS" run --backend "$backend" -p 4 -m 8 $model --iters 6 --quiet "$@" \
        --out "$work/run-$run"
    step "report-$run" sh -c "'$PPS' report '$work/run-$run' >'$work/report-$run.txt' &&
        '$PPS' report --json '$work/run-$run' >'$work/report-$run.json'"
    runs="$runs $run"
}
for s in 1f1b zb-h1 zb-h2 interleaved; do
    v=""
    [ "$s" = interleaved ] && v="-v 2"
    step "check-grads-$s" "$PPS" run --backend "$backend" -s "$s" -p 4 -m 8 $v $small --iters 1 \
        --check-grads
    traced "$s" -s "$s" $v
done
# CUPTI's cost: the same 1f1b run traced without the device's spans (in a rehearsal, cpu has
# none: the same run again, so the ratio is the run-to-run noise).
nocupti=--no-device-spans
[ "$rehearse" -eq 1 ] && nocupti=""
traced 1f1b-nocupti -s 1f1b $nocupti
# The same 1f1b run with the stages sharing the GPU's SMs: the bubble partitions hide or show.
if [ "$rehearse" -eq 1 ]; then
    skip run-1f1b-shared "a rehearsal (cpu has no SMs to share)"
else
    traced 1f1b-shared -s 1f1b --no-gpu-partition
    step compare-partition sh -c "'$PPS' compare '$work/run-1f1b' '$work/run-1f1b-shared' \
        >'$work/compare-partition.txt'"
fi

# The NCCL transport: one rank per GPU under mpirun. With two GPUs or more, the gradient check
# through it (bitwise, as under MPI) and a traced run; with one, NCCL refuses two ranks on it, and
# the run must say so and end (within the timeout), not hang.
mpi="mpirun -np 2"
[ "$(id -u)" -eq 0 ] && mpi="$mpi --allow-run-as-root"
if [ "$rehearse" -eq 1 ]; then
    skip nccl "a rehearsal"
elif [ "$dry" -eq 0 ] && ! command -v mpirun >/dev/null 2>&1; then
    skip nccl "no mpirun on this machine (Open MPI): the NCCL transport is not checked"
elif [ "$gpus" -ge 2 ]; then
    step nccl-check-grads timeout 300 $mpi "$PPS" run --backend cuda --transport nccl \
        -s 1f1b,zb-h1 -p 2 -m 8 $small --iters 1 --check-grads
    step run-nccl-1f1b timeout 300 $mpi "$PPS" run --backend cuda --transport nccl -s 1f1b \
        -p 2 -m 8 $model --iters 6 --quiet --out "$work/run-nccl-1f1b"
    step report-nccl-1f1b sh -c "'$PPS' report '$work/run-nccl-1f1b' >'$work/report-nccl-1f1b.txt'"
else
    step nccl-one-gpu-refused sh -c "! timeout 120 $mpi '$PPS' run --backend cuda \
        --transport nccl -s 1f1b -p 2 -m 4 --layers 2 --hidden 64 --iters 1 --no-trace \
        >'$work/nccl-one-gpu.out' 2>&1 && cat '$work/nccl-one-gpu.out' &&
        grep -qi nccl '$work/nccl-one-gpu.out' && echo 'refused by NCCL, as expected'"
fi
step merge sh -c "for s in $runs; do '$PPS' merge '$work/run-'\$s -o '$work/run-'\$s'.db' ||
    exit 1; done"

if [ "$dry" -eq 1 ]; then
    echo "  figures: summary.txt and summary.json from the reports; device-check.tar.gz"
    exit 77
fi

# The figures the issue asks for, from the reports.
python3 - "$work" "$backend" >"$work/summary.json" 2>"$work/figures.log" <<'PY'
import json, os, re, sys
work, backend = sys.argv[1], sys.argv[2]
def report(name):
    try:
        return json.load(open(os.path.join(work, "report-%s.json" % name)))
    except (OSError, ValueError):
        return None
out = {"backend": backend, "runs": {}}
for name in ("1f1b", "zb-h1", "zb-h2", "interleaved", "1f1b-nocupti", "1f1b-shared"):
    r = report(name)
    if r is None:
        continue
    dev, pred = r["device_bubble"], r["predicted_bubble"]
    # The issue's goal: the measured device bubble within 2 pp of the simulator with measured costs.
    basis = dev if dev is not None else r["bubble"]
    out["runs"][name] = {
        "bubble": r["bubble"], "device_bubble": dev, "device_stages": r["device_stages"],
        "predicted_bubble": pred, "iteration_ns": r["iteration_ns"], "dropped": r["dropped"],
        "off_prediction_pp": None if pred is None or basis is None else 100 * (basis - pred),
        "verdict": (r.get("verdict") or {}).get("text"),
    }
# The kernels against cpu: each call's max relative error, and bitwise run to run (yes/no).
try:
    text = open(os.path.join(work, "kernels-cuda-verbose.log")).read()
    out["kernels_max_rel_err"] = {m.group(1): float(m.group(2)) for m in re.finditer(
        r"^  (.*?)\s+max rel err (\S+) ", text, re.M)}
    out["kernels_bitwise_run_to_run"] = "ok   test_cuda_same_bits_run_to_run" in text
except OSError:
    out["kernels_max_rel_err"], out["kernels_bitwise_run_to_run"] = None, None
runs = out["runs"]
def ratio(a, b):
    if a in runs and b in runs and runs[a]["iteration_ns"] and runs[b]["iteration_ns"]:
        return runs[a]["iteration_ns"] / runs[b]["iteration_ns"]
    return None
out["zb_h1_over_1f1b"] = ratio("zb-h1", "1f1b")       # goal: below 1
out["zb_h2_over_1f1b"] = ratio("zb-h2", "1f1b")       # goal: <= 0.85 where tF = tB = tW
out["cupti_overhead"] = ratio("1f1b", "1f1b-nocupti")  # goal: <= 1.02
out["shared_over_partitioned"] = ratio("1f1b-shared", "1f1b")
# goal: 0; none when no run has a report (nothing measured)
out["dropped"] = sum(r["dropped"] or 0 for r in runs.values()) if runs else None
json.dump(out, sys.stdout, indent=1)
pct = lambda x: "-" if x is None else "%.1f%%" % (100 * x)
num = lambda x, f="%.3f": "-" if x is None else f % x
lines = ["%-13s bubble %7s  device %7s  predicted %7s  off %8s  iteration %10s  dropped %s" % (
    n, pct(r["bubble"]), pct(r["device_bubble"]), pct(r["predicted_bubble"]),
    num(r["off_prediction_pp"], "%+.1f pp"), num(r["iteration_ns"] and r["iteration_ns"] / 1e6,
    "%.2f ms"), r["dropped"]) for n, r in runs.items()]
lines.append("zb-h1 / 1f1b %s (goal < 1), zb-h2 / 1f1b %s (goal <= 0.85), %s %s, dropped %s "
             "(goal 0), shared SMs / partitions %s" % (
    num(out["zb_h1_over_1f1b"]), num(out["zb_h2_over_1f1b"]),
    "CUPTI on / off" if backend == "cuda" else "the same 1f1b run twice (no CUPTI on cpu)",
    num(out["cupti_overhead"]) + (" (goal <= 1.02)" if backend == "cuda" else ""),
    num(out["dropped"], "%d"), num(out["shared_over_partitioned"])))
k = out["kernels_max_rel_err"]
if k:
    worst = max(k, key=k.get)
    lines.append("kernels vs cpu: %d outputs, max rel err %.3g (%s); bitwise run to run: %s" % (
        len(k), k[worst], worst, "yes" if out["kernels_bitwise_run_to_run"] else "no"))
sys.stderr.write("\n".join(lines) + "\n")
PY
if [ $? -eq 0 ]; then
    tee -a "$log" <"$work/figures.log"
else
    say "FAIL  figures: $(tail -3 "$work/figures.log")"
    failed=1
fi
[ "$failed" -eq 0 ] && say "device-check: all passed" || say "device-check: FAILED"

# What comes back: the summary, the figures, and one archive of the rest (runs merged, reports,
# logs), without the merged runs when they would make it over 15 MiB.
cp "$log" "$work/summary.json" "$out/" || exit 2
pack() {
    (cd "$work" && find . -maxdepth 1 -type f \( -name '*.log' -o -name '*.txt' -o -name '*.json' \
        -o -name "$1" \) | sort | tar czf "$out/device-check.tar.gz" -T -)
}
pack '*.db'
if [ "$(wc -c <"$out/device-check.tar.gz")" -gt $((15 << 20)) ]; then
    pack '*.none'
    echo "device-check.tar.gz: the merged runs left out (over 15 MiB); they are in $work" |
        tee -a "$out/summary.txt"
fi
echo "device-check: $out holds summary.txt, summary.json and device-check.tar.gz; all in $work"
exit "$failed"
