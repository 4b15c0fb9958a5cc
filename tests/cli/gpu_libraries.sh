#!/bin/sh
# gpu_libraries.sh - how a CUDA build links (issue 10): the cuda backend's library links the CUDA
# runtime and cuBLAS, the NCCL transport's links NCCL, each exports its one entry point and
# nothing else, and ppscope itself links none of them (common/pps_plugin.h: loading them costs
# every process start about 125 ms). CUPTI is loaded by name when a run traces a GPU
# (tracer/cupti.h), so nothing links it. Needs no GPU; skipped (77) in a build without CUDA.
#
# usage: gpu_libraries.sh PPSCOPE
set -u

. "$(dirname "$0")/lib.sh"
cli_init gpu_libraries "$1"
dir=$(dirname "$PPS")
cuda=$dir/libppscope_cuda.so
nccl=$dir/libppscope_nccl.so
if [ ! -f "$cuda" ] && [ ! -f "$nccl" ]; then
    echo "a build without CUDA: no GPU libraries to check"
    exit 77
fi

# needs LIB SONAME...: ldd resolves every one of them.
needs() {
    lib=$1
    shift
    ldd "$lib" >"$T/ldd" 2>&1 || fail "ldd $lib: $(cat "$T/ldd")"
    for so in "$@"; do
        grep -Eq "^[[:space:]]*$so(\.[0-9]+)* => /" "$T/ldd" ||
            fail "$(basename "$lib") does not link $so: $(cat "$T/ldd")"
    done
    grep -q "not found" "$T/ldd" && fail "$(basename "$lib"): a library not found: $(cat "$T/ldd")"
}
# exports LIB SYMBOL [UNDEFINED...]: SYMBOL is its only function, and it calls each UNDEFINED.
exports() {
    lib=$1 sym=$2
    shift 2
    nm -D --defined-only "$lib" | awk '$2 == "T" { print $3 }' >"$T/defined"
    [ "$(cat "$T/defined")" = "$sym" ] ||
        fail "$(basename "$lib") exports other functions than $sym: $(tr '\n' ' ' <"$T/defined")"
    nm -D --undefined-only "$lib" | awk '{ print $2 }' >"$T/undefined"
    for u in "$@"; do
        grep -Eq "^$u(@.*)?$" "$T/undefined" || fail "$(basename "$lib") does not call $u"
    done
}

if [ -f "$cuda" ]; then
    needs "$cuda" libcudart.so libcublas.so
    exports "$cuda" pps_cuda_plugin_kernels cublasSgemm_v2 cublasCreate_v2 cudaMallocAsync
    ok "libppscope_cuda.so links the CUDA runtime and cuBLAS"
fi
if [ -f "$nccl" ]; then
    needs "$nccl" libcudart.so libnccl.so
    exports "$nccl" pps_nccl_plugin ncclSend ncclRecv ncclCommInitRank ncclGetUniqueId
    ok "libppscope_nccl.so links NCCL and the CUDA runtime"
fi
ldd "$PPS" >"$T/ldd"
for so in libcudart libcublas libnccl libcupti; do
    grep -q "^[[:space:]]*$so" "$T/ldd" && fail "ppscope itself links $so: $(cat "$T/ldd")"
done
ok "ppscope links none of them"

# ppscope finds the cuda library, loads it and goes as far as the driver: what it says without a
# GPU is the driver's or the device's absence, never a library it could not load.
run_pps run --backend cuda -p 1 -m 1 --layers 1 --hidden 8 --iters 1 --no-trace
if [ "$rc" -ne 0 ]; then
    grep -Eq "^ppscope run: cuda: no (CUDA device|usable NVIDIA driver)" "$T/err" ||
        fail "--backend cuda did not reach the device: $(cat "$T/err")"
fi
ok "ppscope loads libppscope_cuda.so"
cli_finish
