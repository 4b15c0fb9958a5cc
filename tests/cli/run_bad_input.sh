#!/bin/sh
# run_bad_input.sh - `ppscope run` refuses every impossible combination of flags with exit 2 and
# one line that names the problem, before anything runs; --help explains each flag and says that
# emu is emulated. Usage: run_bad_input.sh PATH/TO/ppscope
set -u
. "$(dirname "$0")/lib.sh"
cli_init run_bad_input "$1"

expect_exit 0 run --help
grep -q "usage: ppscope run" "$T/out" || fail "run --help does not print usage on stdout"
grep -q "EMULATED" "$T/out" || fail "run --help does not say that emu is emulated"
grep -q -- "--check-grads" "$T/out" || fail "run --help does not explain --check-grads"

# bad ARGS... -- TEXT: exit 2, one line on stderr containing TEXT, and no run written.
bad() {
    text=$(for a in "$@"; do :; done; echo "$a")
    n=$#
    args=""
    i=1
    for a in "$@"; do
        [ $i -lt $((n - 1)) ] && args="$args '$a'"
        i=$((i + 1))
    done
    eval "expect_exit 2 run $args" && stderr_has "$text"
}

O="--out $T/never"
bad $O --schedule bogus -- "unknown schedule"
bad $O -p 0 -- "-p needs an integer"
bad $O -m x -- "-m needs an integer"
bad $O --schedule interleaved -p 4 -m 6 -- "m"
bad $O --schedule 1f1b -v 2 -- "only interleaved and interleaved-zb run several chunks"
bad $O --schedule zb-v -v 3 -- "zb-v runs two chunks per stage"
bad $O --schedule dualpipev -v 3 -- "dualpipev runs two chunks per stage"
bad $O --schedule dualpipev -p 4 -m 7 -- "dualpipev needs m >= 2p = 8 microbatches for p=4"
bad $O -p 4 --partition 1,1,1 -- "partition"
bad $O -p 4 --layers 4 --partition 1,1,1,2 -- "partition"
bad $O -p 4 --partition 1,x,1,1 -- "partition"
bad --check-grads --backend emu -- "needs real math"
bad $O --emu-tf 3 -- "--emu-tf applies to --backend emu only"
bad $O --backend gpu -- "--backend is cpu, cuda or emu"
bad $O --no-device-spans -- "--no-device-spans applies to --backend cuda only"
bad $O --no-gpu-partition -- "--no-gpu-partition applies to --backend cuda only"
bad $O --transport pigeon -- "--transport is threads, mpi or nccl"
bad $O --optimizer adam -- "--optimizer is sync or postval"
bad $O --clip -1 -- "--clip needs a number"
bad $O --iters 10 --inject-nonfinite 10 -- "cannot inject"
bad $O -p 1 --inject-nonfinite 1 -- "two virtual stages"
bad $O -p 4 --inject-fail 4:1 -- "injected failure needs a stage"
bad $O --iters 2 --inject-fail 1:99 -- "an iteration in 0..1 (--inject-fail STAGE:ITER)"
bad $O --iters 2 --inject-fail 1:2 -- "an iteration in 0..1"
bad $O --backend emu -p 4 --emu-slow-stage 7:2 -- "slow stage 7"
bad $O --backend emu -p 4 --emu-slow-stage 2 -- "STAGE:FACTOR"
bad $O --backend emu -p 4 --emu-slow-link 1-1:100 -- "itself"
bad $O --backend emu -p 4 --emu-stage-mult 1,2 -- "2 stage multipliers for p=4"
bad $O --data "$T/no-such-text" -- "no-such-text"
# Read whole, a text must end and be small: /dev/zero grew until out of memory, a directory
# said "read failed" with no reason.
bad $O --data /dev/zero -- "/dev/zero: not a regular file"
mkdir "$T/a-dir"
bad $O --data "$T/a-dir" -- "a-dir: not a regular file"
truncate -s 300M "$T/huge.txt" 2>/dev/null || dd if=/dev/zero of="$T/huge.txt" bs=1 count=0 \
    seek=300M 2>/dev/null
bad $O --data "$T/huge.txt" -- "huge.txt: 300 MiB is more than the 256 MiB a training text may have"
bad $O --hidden 0 -- "--hidden needs an integer"
bad -- "--out RUN is required"
bad $O --no-trace -- "contradict"
bad $O --check-grads --inject-nonfinite 0 -- "nothing to check"
bad $O stray -- "unexpected argument 'stray'"
bad $O --bogus -- "unknown option '--bogus'"
bad $O --iters -- "needs a value"
[ -e "$T/never" ] && fail "a refused run left $T/never behind"

# A run is never overwritten.
mkdir "$T/full" && touch "$T/full/something"
bad --out "$T/full" --backend emu --iters 1 -- "already exists"
[ "$(ls "$T/full")" = something ] || fail "a refused run touched the existing directory"

# One process, but asked for MPI with more stages than ranks: the world size must equal p.
# (Under PPS_SANITIZE, Open MPI's own allocations read as leaks; the other checks stay on.)
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
export ASAN_OPTIONS
if run_pps run --transport mpi -p 1 -m 1 --check-grads --hidden 8 --seq-len 4 \
    --microbatch-size 1 --layers 1 && [ "$rc" -eq 0 ]; then
    bad --transport mpi -p 2 -m 2 --check-grads -- "but p=2"
else
    echo "note: no singleton MPI here ($(cat "$T/err")); the world-size check runs in run_mpi"
fi
cli_finish
