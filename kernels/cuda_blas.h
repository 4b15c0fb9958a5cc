/*
 * cuda_blas.h - cuBLAS, loaded when the first cuda context opens rather than linked: loading
 * libcublas and libcublasLt costs about 100 ms of every process start on a 2-core machine (ten
 * times all the rest of `ppscope --help`), and only `ppscope run --backend cuda` uses them.
 * Types and names are cublas_v2.h's; the compiler checks each pointer against the header.
 */
#ifndef PPS_KERNELS_CUDA_BLAS_H
#define PPS_KERNELS_CUDA_BLAS_H

#include <cublas_v2.h>

#include "pps_error.h"

/* The cuBLAS calls the backend makes (the _v2 entry points cublas_v2.h names). */
struct pps__cublas {
    void *lib;
    cublasStatus_t (*Create)(cublasHandle_t *);
    cublasStatus_t (*Destroy)(cublasHandle_t);
    cublasStatus_t (*SetStream)(cublasHandle_t, cudaStream_t);
    cublasStatus_t (*SetWorkspace)(cublasHandle_t, void *, size_t);
    cublasStatus_t (*SetAtomicsMode)(cublasHandle_t, cublasAtomicsMode_t);
    cublasStatus_t (*SetPointerMode)(cublasHandle_t, cublasPointerMode_t);
    cublasStatus_t (*SetMathMode)(cublasHandle_t, cublasMath_t);
    cublasStatus_t (*Sgemm)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,
                            const float *, const float *, int, const float *, int, const float *,
                            float *, int);
    const char *(*GetStatusName)(cublasStatus_t);
};

/*
 * cuBLAS, loaded once per process (PPS_CUBLAS_SONAME, the build's toolkit's, then libcublas.so);
 * NULL with the reason in err (PPS_EIO: a cuda build on a machine with a driver but without its
 * cuBLAS is broken, not merely without a GPU) when it cannot be loaded or lacks a call.
 */
const struct pps__cublas *pps__cublas_get(struct pps_err *err);

#endif
