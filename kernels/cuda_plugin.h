/*
 * cuda_plugin.h - the one function libppscope_cuda.so exports: the cuda backend's table for a
 * program whose kernels_int.h has the layout abi (PPS__KERNELS_ABI), or NULL when it differs.
 * cuda_load.c finds it by name; the declaration lets the compiler check the two agree.
 */
#ifndef PPS_KERNELS_CUDA_PLUGIN_H
#define PPS_KERNELS_CUDA_PLUGIN_H

#include "kernels_int.h"

__attribute__((visibility("default"))) const struct pps__kernels_ops *
pps_cuda_plugin_kernels(unsigned abi);

#endif
