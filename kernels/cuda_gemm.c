/*
 * cuda_gemm.c - the cuda backend's GEMM through cuBLAS, and the context's cuBLAS handle.
 *
 * cuBLAS is column-major; kernels.h's matrices are row-major. A row-major r x c matrix is the
 * column-major c x r matrix of its transpose, so C = op(A) op(B) (row-major, m x n) is computed
 * as C^T = op(B)^T op(A)^T (column-major, n x m): cuBLAS gets B first, then A, with the same
 * transpose flags and leading dimensions as the row-major call (the usual identity; cpu_gemm.c's
 * CBLAS call uses the same ones).
 *
 * The handle is the context's, bound to its stream, with a workspace of its own (cuBLAS asks for
 * one per stream where results must not depend on which streams ran before), atomics off, and
 * the default math mode: IEEE FP32, no TF32 tensor cores unless PPS_CUDA_TF32=1 asks for them.
 * cuBLAS is linked into libppscope_cuda.so, the cuda backend's library (cuda_plugin.c).
 */
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include <cublas_v2.h>

#include "cuda_backend.h"

/* cuBLAS's recommended workspace on Hopper (32 MiB); it is enough for every earlier GPU too. */
#define BLAS_WORKSPACE (32u << 20)

static const char *blas_name(cublasStatus_t s)
{
    const char *n = cublasGetStatusName(s);
    return n ? n : "unknown cuBLAS status";
}

int pps__cuda_blas_open(struct pps_kernels *k, struct pps_err *err)
{
    struct pps__cuda *c = pps__cuda_of(k);
    const char *tf32 = getenv("PPS_CUDA_TF32");
    cublasHandle_t h = NULL;
    cublasStatus_t s;
    cudaError_t e;

    if ((s = cublasCreate(&h)) != CUBLAS_STATUS_SUCCESS)
        return pps_err_set(err, PPS_EIO, "cuda: cublasCreate on device %d: %s", c->device,
                           blas_name(s));
    c->blas = h;
    if ((e = cudaMalloc(&c->blas_ws, BLAS_WORKSPACE)) != cudaSuccess)
        return pps_err_set(err, PPS_ENOMEM, "cuda: cuBLAS workspace (%u MiB) on device %d: %s",
                           BLAS_WORKSPACE >> 20, c->device, cudaGetErrorString(e));
    if ((s = cublasSetStream(h, (cudaStream_t)c->stream)) != CUBLAS_STATUS_SUCCESS ||
        (s = cublasSetWorkspace(h, c->blas_ws, BLAS_WORKSPACE)) != CUBLAS_STATUS_SUCCESS ||
        (s = cublasSetAtomicsMode(h, CUBLAS_ATOMICS_NOT_ALLOWED)) != CUBLAS_STATUS_SUCCESS ||
        (s = cublasSetPointerMode(h, CUBLAS_POINTER_MODE_HOST)) != CUBLAS_STATUS_SUCCESS ||
        (s = cublasSetMathMode(h, tf32 && strcmp(tf32, "1") == 0 ? CUBLAS_TF32_TENSOR_OP_MATH
                                                                 : CUBLAS_DEFAULT_MATH)) !=
            CUBLAS_STATUS_SUCCESS)
        return pps_err_set(err, PPS_EIO, "cuda: setting up cuBLAS on device %d: %s", c->device,
                           blas_name(s));
    return 0;
}

void pps__cuda_blas_close(struct pps_kernels *k)
{
    struct pps__cuda *c = pps__cuda_of(k);
    if (c->blas)
        cublasDestroy((cublasHandle_t)c->blas);
    c->blas = NULL;
    cudaFree(c->blas_ws);
    c->blas_ws = NULL;
}

int pps__cuda_gemm(struct pps_kernels *k, int trans_a, int trans_b, int m, int n, int kdim,
                   float alpha, const float *a, const float *b, float beta, float *c)
{
    struct pps__cuda *cu = pps__cuda_of(k);
    int lda = trans_a ? m : kdim, ldb = trans_b ? kdim : n;
    cublasStatus_t s;

    cudaSetDevice(cu->device);
    if (kdim == 0) {
        /* Nothing to multiply: C = beta C, and beta 0 does not read C. */
        if (beta == 0.0f)
            return pps__cuda_check(
                k,
                (int)cudaMemsetAsync(c, 0, (size_t)m * n * sizeof(float), (cudaStream_t)cu->stream),
                "gemm");
        return beta == 1.0f ? 0 : pps__cuda_scale(k, (size_t)m * n, beta, c);
    }
    s = cublasSgemm((cublasHandle_t)cu->blas, trans_b ? CUBLAS_OP_T : CUBLAS_OP_N,
                    trans_a ? CUBLAS_OP_T : CUBLAS_OP_N, n, m, kdim, &alpha, b, ldb > 0 ? ldb : 1,
                    a, lda > 0 ? lda : 1, &beta, c, n);
    if (s != CUBLAS_STATUS_SUCCESS)
        return pps__kernels_fail(k, PPS_EIO, "gemm: cublasSgemm (%d x %d x %d): %s", m, n, kdim,
                                 blas_name(s));
    return 0;
}
