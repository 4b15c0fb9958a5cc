/*
 * cuda_blas.c - cuBLAS looked up with dlopen and dlsym, once per process; cuda_blas.h says why
 * it is not linked.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "cuda_blas.h"

#ifndef PPS_CUBLAS_SONAME
#define PPS_CUBLAS_SONAME "libcublas.so"
#endif

/* dlsym's void * stored into a function pointer with memcpy (POSIX: one representation). */
_Static_assert(sizeof(void *) == sizeof(void (*)(void)),
               "dlsym needs function pointers of the size of void *");

/*
 * Looks up sym into b->field, or names the first missing symbol in *missing. The comparison under
 * sizeof is never evaluated: the compiler checks that b->field has the type cublas_v2.h declares
 * for sym (a warning, an error with PPS_WERROR), with no reference left for the linker.
 */
#define FIND_FN(b, field, sym, missing)                                                            \
    do {                                                                                           \
        void *sym_ = dlsym((b)->lib, #sym);                                                        \
        (void)sizeof((b)->field == sym);                                                           \
        if (sym_)                                                                                  \
            memcpy(&(b)->field, &sym_, sizeof(sym_));                                              \
        else if (!*(missing))                                                                      \
            *(missing) = #sym;                                                                     \
    } while (0)

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
    FIND_FN(&blas, Create, cublasCreate_v2, &missing);
    FIND_FN(&blas, Destroy, cublasDestroy_v2, &missing);
    FIND_FN(&blas, SetStream, cublasSetStream_v2, &missing);
    FIND_FN(&blas, SetWorkspace, cublasSetWorkspace_v2, &missing);
    FIND_FN(&blas, SetAtomicsMode, cublasSetAtomicsMode, &missing);
    FIND_FN(&blas, SetPointerMode, cublasSetPointerMode_v2, &missing);
    FIND_FN(&blas, SetMathMode, cublasSetMathMode, &missing);
    FIND_FN(&blas, Sgemm, cublasSgemm_v2, &missing);
    FIND_FN(&blas, GetStatusName, cublasGetStatusName, &missing);
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
