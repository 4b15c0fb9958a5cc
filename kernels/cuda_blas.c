/*
 * cuda_blas.c - cuBLAS looked up with dlopen and dlsym, once per process; cuda_blas.h says why
 * it is not linked.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "cuda_blas.h"
#include "pps_dl.h"

#ifndef PPS_CUBLAS_SONAME
#define PPS_CUBLAS_SONAME "libcublas.so"
#endif

static pthread_once_t once = PTHREAD_ONCE_INIT;
static struct pps__cublas blas;
static char why[256];

static void load(void)
{
    static const char *const sonames[] = {PPS_CUBLAS_SONAME, "libcublas.so"};
    const char *missing = NULL;

    for (size_t i = 0; i < sizeof(sonames) / sizeof(sonames[0]) && !blas.lib; i++)
        blas.lib = dlopen(sonames[i], RTLD_NOW | RTLD_LOCAL);
    if (!blas.lib) {
        const char *e = dlerror();
        snprintf(why, sizeof(why), "cuda: cannot load cuBLAS (%s): %s", PPS_CUBLAS_SONAME,
                 e ? e : "not found");
        return;
    }
    PPS_DL_FIND(blas.lib, blas.Create, cublasCreate_v2, &missing);
    PPS_DL_FIND(blas.lib, blas.Destroy, cublasDestroy_v2, &missing);
    PPS_DL_FIND(blas.lib, blas.SetStream, cublasSetStream_v2, &missing);
    PPS_DL_FIND(blas.lib, blas.SetWorkspace, cublasSetWorkspace_v2, &missing);
    PPS_DL_FIND(blas.lib, blas.SetAtomicsMode, cublasSetAtomicsMode, &missing);
    PPS_DL_FIND(blas.lib, blas.SetPointerMode, cublasSetPointerMode_v2, &missing);
    PPS_DL_FIND(blas.lib, blas.SetMathMode, cublasSetMathMode, &missing);
    PPS_DL_FIND(blas.lib, blas.Sgemm, cublasSgemm_v2, &missing);
    PPS_DL_FIND(blas.lib, blas.GetStatusName, cublasGetStatusName, &missing);
    if (missing) {
        snprintf(why, sizeof(why), "cuda: the cuBLAS loaded (%s) has no %s", PPS_CUBLAS_SONAME,
                 missing);
        dlclose(blas.lib);
        blas.lib = NULL;
    }
}

const struct pps__cublas *pps__cublas_get(struct pps_err *err)
{
    pthread_once(&once, load);
    if (!blas.lib) {
        pps_err_set(err, PPS_EIO, "%s", why);
        return NULL;
    }
    return &blas;
}
