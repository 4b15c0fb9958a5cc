/*
 * pps_cuda_device.h - PPS_CUDA_DEVICE, the GPU a process computes on, read one way by the cuda
 * backend (libppscope_cuda.so) and the NCCL transport (libppscope_nccl.so), so that both open
 * the same GPU. Header only: the two libraries share no code at link time.
 */
#ifndef PPS_CUDA_DEVICE_H
#define PPS_CUDA_DEVICE_H

#include <stdlib.h>

/*
 * PPS_CUDA_DEVICE against a machine of count GPUs: 0 when it is unset or empty, 1 when it names
 * one of them (a decimal 0 .. count-1, into *dev), -1 when it is anything else. *value receives
 * the variable's text (NULL when unset), for the caller's message.
 */
static inline int pps_cuda_device_env(int count, int *dev, const char **value)
{
    const char *env = getenv("PPS_CUDA_DEVICE");
    char *end = NULL;
    long v;

    *value = env;
    if (!env || !*env)
        return 0;
    v = strtol(env, &end, 10);
    if (*end || v < 0 || v >= count)
        return -1;
    *dev = (int)v;
    return 1;
}

#endif
