/*
 * cuda_load.c - the cuda backend's table, from libppscope_cuda.so (cuda_plugin.c), which links
 * the CUDA runtime and cuBLAS; loaded the first time a cuda context opens or is described, once
 * per process (common/pps_plugin.h says why it is a library of its own).
 */
#include <pthread.h>
#include <stdio.h>

#include "kernels_int.h"
#include "cuda_plugin.h"
#include "pps_plugin.h"

static pthread_once_t once = PTHREAD_ONCE_INIT;
static const struct pps__kernels_ops *table;
static char why_not[512];

static void load(void)
{
    const struct pps__kernels_ops *(*get)(unsigned abi) = NULL;
    PPS_PLUGIN_LOAD("libppscope_cuda.so", get, pps_cuda_plugin_kernels, PPS__KERNELS_ABI, table,
                    why_not);
}

const struct pps__kernels_ops *pps__kernels_cuda_load(char *why, size_t len)
{
    pthread_once(&once, load);
    if (!table)
        snprintf(why, len, "%s", why_not);
    return table;
}
