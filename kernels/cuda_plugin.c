/*
 * cuda_plugin.c - the entry point of libppscope_cuda.so (cuda_plugin.h): everything else in the
 * library is hidden.
 */
#include "cuda_plugin.h"

const struct pps__kernels_ops *pps_cuda_plugin_kernels(unsigned abi)
{
    return abi == PPS__KERNELS_ABI ? &pps__kernels_cuda : NULL;
}
