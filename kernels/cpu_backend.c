/*
 * cpu_backend.c - the cpu backend: its table, its contexts and its memory (host memory standing
 * in for device memory, so the same runtime code runs on every backend).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu.h"

/* Allocations are aligned to a cache line, so vector code and BLAS see the same layout for
 * every buffer of the same shape. */
#define CPU_ALIGN 64

static pthread_once_t cpu_once = PTHREAD_ONCE_INIT;

static int cpu_open(struct pps_kernels *k, struct pps_err *err)
{
    (void)err;
    pthread_once(&cpu_once, pps__cpu_gemm_init);
    k->impl = NULL; /* stateless: everything is in the arguments */
    return 0;
}

static void cpu_close(struct pps_kernels *k)
{
}

static int cpu_sync(struct pps_kernels *k)
{
    return 0; /* every call has finished when it returns */
}

/* "cpu (Intel(R) Xeon(R) ...)" from /proc/cpuinfo where it says. */
static void cpu_describe(char *buf, size_t len)
{
    char line[512];
    FILE *f = fopen("/proc/cpuinfo", "r");

    snprintf(buf, len, "cpu");
    if (!f)
        return;
    while (fgets(line, sizeof(line), f)) {
        char *colon = strchr(line, ':');
        if (strncmp(line, "model name", 10) != 0 || !colon)
            continue;
        colon += 1 + strspn(colon + 1, " \t");
        colon[strcspn(colon, "\n")] = '\0';
        snprintf(buf, len, "cpu (%.400s)", colon);
        break;
    }
    fclose(f);
}

static int cpu_mem_alloc(struct pps_kernels *k, size_t bytes, void **out)
{
    void *p = NULL;
    size_t rounded;

    if (bytes > SIZE_MAX - CPU_ALIGN)
        return pps__kernels_fail(k, PPS_ENOMEM, "mem_alloc: %zu bytes is too many", bytes);
    /* Rounded up (and never 0) so every allocation is a distinct pointer with whole lines. */
    rounded = (bytes + CPU_ALIGN - 1) / CPU_ALIGN * CPU_ALIGN;
    if (rounded == 0)
        rounded = CPU_ALIGN;
    if (posix_memalign(&p, CPU_ALIGN, rounded) != 0)
        return pps__kernels_fail(k, PPS_ENOMEM, "mem_alloc: out of memory for %zu bytes", bytes);
    memset(p, 0, rounded);
    *out = p;
    return 0;
}

static void cpu_mem_free(struct pps_kernels *k, void *p)
{
    free(p);
}

static int cpu_copy(struct pps_kernels *k, void *dst, const void *src, size_t bytes)
{
    memcpy(dst, src, bytes);
    return 0;
}

static int cpu_zero(struct pps_kernels *k, void *dst, size_t bytes)
{
    memset(dst, 0, bytes);
    return 0;
}

const struct pps__kernels_ops pps__kernels_cpu = {
    .name = "cpu",
    .open = cpu_open,
    .close = cpu_close,
    .sync = cpu_sync,
    .describe = cpu_describe,
    .mem_alloc = cpu_mem_alloc,
    .mem_free = cpu_mem_free,
    .copy_in = cpu_copy,
    .copy_out = cpu_copy,
    .copy = cpu_copy,
    .zero = cpu_zero,
    .gemm = pps__cpu_gemm,
    .bias_add = pps__cpu_bias_add,
    .bias_grad = pps__cpu_bias_grad,
    .layernorm_forward = pps__cpu_layernorm_forward,
    .layernorm_backward_input = pps__cpu_layernorm_backward_input,
    .layernorm_backward_params = pps__cpu_layernorm_backward_params,
    .layernorm_backward = pps__cpu_layernorm_backward,
    .gelu_forward = pps__cpu_gelu_forward,
    .gelu_backward = pps__cpu_gelu_backward,
    .add = pps__cpu_add,
    .scale = pps__cpu_scale,
    .embedding_forward = pps__cpu_embedding_forward,
    .embedding_backward = pps__cpu_embedding_backward,
    .cross_entropy_forward = pps__cpu_cross_entropy_forward,
    .cross_entropy_backward = pps__cpu_cross_entropy_backward,
    .adamw = pps__cpu_adamw,
    .sumsq = pps__cpu_sumsq,
    .nonfinite = pps__cpu_nonfinite,
};
