/*
 * cuda_backend.c - the cuda backend: its table, its contexts (a device, a stream, a cuBLAS
 * handle, scratch), its memory, its sync and the errors found on the device.
 *
 * The device is PPS_CUDA_DEVICE where it is set, else the calling thread's current CUDA device
 * (device 0 on a thread that never chose one; cudaSetDevice or CUDA_VISIBLE_DEVICES choose it);
 * the context keeps it and makes it current on every call that queues work, so a context may
 * move between threads.
 *
 * Memory is stream-ordered (cudaMallocAsync / cudaFreeAsync on the context's stream, from the
 * device's default pool, which keeps what it has rather than handing it back at every sync): a
 * buffer freed while queued calls still read it is released after them, and freeing never
 * waits for the device or for other stages' streams. Copies in wait for the copy to finish, so
 * the source may be reused at once, as with memcpy (pinned or pageable alike).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "cuda_backend.h"
#include "pps_cuda_device.h"

/* cudaMalloc aligns to 256 bytes, more than kernels.h's 64; a 0-byte request gets this much so
 * that it is a valid, unique pointer. */
#define CUDA_MIN_ALLOC 256

int pps__cuda_check(struct pps_kernels *k, int code, const char *what)
{
    cudaError_t e = (cudaError_t)code;
    if (e == cudaSuccess)
        return 0;
    /* Recorded here: cleared from the thread's last error, so a later launch is not blamed. */
    (void)cudaGetLastError();
    return pps__kernels_fail(k, e == cudaErrorMemoryAllocation ? PPS_ENOMEM : PPS_EIO,
                             "cuda: %s: %s (%s)", what, cudaGetErrorString(e), cudaGetErrorName(e));
}

int pps__cuda_launched(struct pps_kernels *k, const char *what)
{
    return pps__cuda_check(k, (int)cudaGetLastError(), what);
}

double *pps__cuda_scratch(struct pps_kernels *k, size_t n)
{
    struct pps__cuda *c = pps__cuda_of(k);
    void *p = NULL;

    if (n <= c->scratch_n)
        return c->scratch;
    /* Grown by doubling; the old buffer is freed in stream order (calls queued before may still
     * read it), so no wait. */
    if (n < 2 * c->scratch_n)
        n = 2 * c->scratch_n;
    if (pps__cuda_check(k, (int)cudaMallocAsync(&p, n * sizeof(double), c->stream),
                        "scratch for the reductions"))
        return NULL;
    if (c->scratch)
        pps__cuda_check(k, (int)cudaFreeAsync(c->scratch, c->stream), "freeing old scratch");
    c->scratch = p;
    c->scratch_n = n;
    return c->scratch;
}

/* Why no device can be used, into err: no driver, no GPU, or CUDA's own reason. */
static int no_device(struct pps_err *err, cudaError_t e)
{
    if (e == cudaErrorNoDevice)
        return pps_err_set(err, PPS_ENOENT, "cuda: no CUDA device on this machine");
    if (e == cudaErrorInsufficientDriver)
        return pps_err_set(err, PPS_ENOENT, "cuda: no usable NVIDIA driver on this machine (%s)",
                           cudaGetErrorString(e));
    return pps_err_set(err, PPS_ENOENT, "cuda: no CUDA device: %s (%s)", cudaGetErrorString(e),
                       cudaGetErrorName(e));
}

/* The device a new context uses: the thread's current one, or PPS_CUDA_DEVICE. */
static int pick_device(int *out, struct pps_err *err)
{
    const char *env = NULL;
    int count = 0, dev = 0, set;
    cudaError_t e = cudaGetDeviceCount(&count);

    /* A failure here leaves CUDA's last error set; forget it (it is reported through err). */
    (void)cudaGetLastError();
    if (e != cudaSuccess || count <= 0)
        return no_device(err, e == cudaSuccess ? cudaErrorNoDevice : e);
    set = pps_cuda_device_env(count, &dev, &env);
    if (set < 0)
        return pps_err_set(err, PPS_EINVAL,
                           "cuda: PPS_CUDA_DEVICE=%s is not a device of this machine (0..%d)", env,
                           count - 1);
    if (set == 0 && cudaGetDevice(&dev) != cudaSuccess)
        dev = 0;
    *out = dev;
    return 0;
}

/* "cuda (NVIDIA H200, device 0 of 1, 132 SMs, 140 GiB, compute 9.0)", or why there is none. */
static void cuda_describe(char *buf, size_t len)
{
    struct cudaDeviceProp prop;
    struct pps_err err = {0};
    int dev = 0, count = 0;

    if (pick_device(&dev, &err) < 0 || cudaGetDeviceCount(&count) != cudaSuccess ||
        cudaGetDeviceProperties(&prop, dev) != cudaSuccess) {
        snprintf(buf, len, "cuda (%s)", err.code ? err.msg : "no device properties");
        return;
    }
    snprintf(buf, len, "cuda (%.200s, device %d of %d, %d SMs, %.0f GiB, compute %d.%d)", prop.name,
             dev, count, prop.multiProcessorCount, (double)prop.totalGlobalMem / (1u << 30),
             prop.major, prop.minor);
}

static void cuda_close(struct pps_kernels *k);

/* The device's default memory pool keeps the memory freed into it (up to all of it) instead of
 * returning it to the driver at every synchronisation. */
static cudaError_t keep_pool(int device)
{
    cudaMemPool_t pool;
    uint64_t keep = UINT64_MAX;
    cudaError_t e = cudaDeviceGetDefaultMemPool(&pool, device);
    if (e == cudaSuccess)
        e = cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep);
    return e;
}

static int cuda_open_part(struct pps_kernels *k, int part, int parts, struct pps_err *err)
{
    struct pps__cuda *c = calloc(1, sizeof(*c));
    cudaStream_t s = NULL;
    cudaError_t e;
    int rc;

    if (!c)
        return pps_err_set(err, PPS_ENOMEM, "cuda: out of memory opening a context");
    k->impl = c;
    if ((rc = pick_device(&c->device, err)) < 0)
        goto fail;
    if ((e = cudaSetDevice(c->device)) != cudaSuccess) {
        (void)cudaGetLastError();
        rc = e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver
                 ? no_device(err, e)
                 : pps_err_set(err, PPS_EIO, "cuda: device %d: %s (%s)", c->device,
                               cudaGetErrorString(e), cudaGetErrorName(e));
        goto fail;
    }
    c->device_set = 1;
    c->part = part;
    c->parts = parts;
    if (parts >= 2) {
        void *gs = NULL;
        if (pps__cuda_green_stream(c->device, part, parts, &gs, &c->sms, &c->total_sms, c->part_why,
                                   sizeof(c->part_why)) == 0)
            s = (cudaStream_t)gs;
    }
    if ((!s && (e = cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking)) != cudaSuccess) ||
        (e = keep_pool(c->device)) != cudaSuccess) {
        (void)cudaGetLastError();
        rc = pps_err_set(err, e == cudaErrorMemoryAllocation ? PPS_ENOMEM : PPS_EIO,
                         "cuda: a stream on device %d: %s (%s)", c->device, cudaGetErrorString(e),
                         cudaGetErrorName(e));
        goto fail;
    }
    c->stream = s;
    c->own_stream = 1;
    if ((e = cudaMallocHost(&c->host_out, 64)) != cudaSuccess ||
        (e = cudaMalloc((void **)&c->bad, PPS__CUDA_N_CHECKS * sizeof(*c->bad))) != cudaSuccess ||
        (e = cudaMemsetAsync(c->bad, 0xff, PPS__CUDA_N_CHECKS * sizeof(*c->bad), s)) !=
            cudaSuccess) {
        (void)cudaGetLastError();
        rc = pps_err_set(err, e == cudaErrorMemoryAllocation ? PPS_ENOMEM : PPS_EIO,
                         "cuda: opening a context on device %d: %s", c->device,
                         cudaGetErrorString(e));
        goto fail;
    }
    if ((rc = pps__cuda_blas_open(k, err)) < 0)
        goto fail;
    return 0;
fail:
    cuda_close(k);
    return rc;
}

static int cuda_open(struct pps_kernels *k, struct pps_err *err)
{
    return cuda_open_part(k, 0, 1, err);
}

static int cuda_partition(const struct pps_kernels *k, char *buf, size_t len)
{
    const struct pps__cuda *c = (const struct pps__cuda *)k->impl;

    if (c->sms)
        snprintf(buf, len, "%u of %u SMs (green context %d of %d)", c->sms, c->total_sms,
                 c->part + 1, c->parts);
    else if (c->parts >= 2)
        snprintf(buf, len, "the whole GPU, shared with the other %d stages: %s", c->parts - 1,
                 c->part_why);
    else
        snprintf(buf, len, "the whole GPU");
    return (int)c->sms;
}

static void cuda_close(struct pps_kernels *k)
{
    struct pps__cuda *c = pps__cuda_of(k);

    if (!c)
        return;
    if (c->device_set)
        cudaSetDevice(c->device);
    if (c->stream)
        cudaStreamSynchronize(c->stream);
    pps__cuda_blas_close(k);
    cudaFree(c->scratch);
    cudaFree(c->bad);
    cudaFreeHost(c->host_out);
    if (c->stream && c->own_stream)
        cudaStreamDestroy(c->stream);
    (void)cudaGetLastError();
    free(c);
    k->impl = NULL;
}

/* Names what the device found wrong with a token id since the last look, as k's error. */
static void report_bad_ids(struct pps_kernels *k)
{
    static const char *const op[PPS__CUDA_N_CHECKS] = {
        "embedding_forward: id", "embedding_backward: id", "cross_entropy_forward: target",
        "cross_entropy_backward: target"};
    struct pps__cuda *c = pps__cuda_of(k);
    unsigned long long bad[PPS__CUDA_N_CHECKS];

    if (!c->bad_pending)
        return;
    c->bad_pending = 0;
    /* Through the context's stream into its pinned buffer (the legacy default stream would
     * also wait for other libraries' blocking streams). */
    if (pps__cuda_check(k,
                        (int)cudaMemcpyAsync(c->host_out, c->bad, sizeof(bad),
                                             cudaMemcpyDeviceToHost, (cudaStream_t)c->stream),
                        "reading the token id checks") ||
        pps__cuda_check(k, (int)cudaStreamSynchronize((cudaStream_t)c->stream),
                        "reading the token id checks"))
        return;
    memcpy(bad, c->host_out, sizeof(bad));
    for (int i = 0; i < PPS__CUDA_N_CHECKS; i++)
        if (bad[i] != ~0ULL) {
            unsigned pos = (unsigned)(bad[i] >> 32);
            int32_t id = (int32_t)(uint32_t)(bad[i] & 0xffffffffu);
            pps__kernels_fail(k, PPS_EINVAL, "%s %ld at %s %u is outside 0..%d", op[i], (long)id,
                              i < PPS__CUDA_CHECK_CE_F ? "position" : "row", pos, c->vocab[i] - 1);
        }
    pps__cuda_check(k, (int)cudaMemsetAsync(c->bad, 0xff, sizeof(bad), c->stream),
                    "clearing the token id checks");
}

static int cuda_sync(struct pps_kernels *k)
{
    struct pps__cuda *c = pps__cuda_of(k);
    int rc;

    cudaSetDevice(c->device);
    rc = pps__cuda_check(k, (int)cudaStreamSynchronize(c->stream), "sync");
    report_bad_ids(k);
    return rc;
}

static int cuda_mem_alloc(struct pps_kernels *k, size_t bytes, void **out)
{
    struct pps__cuda *c = pps__cuda_of(k);
    size_t n = bytes < CUDA_MIN_ALLOC ? CUDA_MIN_ALLOC : bytes;
    void *p = NULL;
    int rc;

    cudaSetDevice(c->device);
    if ((rc = pps__cuda_check(k, (int)cudaMallocAsync(&p, n, (cudaStream_t)c->stream),
                              "mem_alloc")) < 0)
        return rc;
    /* Zeroed in stream order: every call through this context sees the zeros. */
    if ((rc = pps__cuda_check(k, (int)cudaMemsetAsync(p, 0, n, (cudaStream_t)c->stream),
                              "mem_alloc: zeroing")) < 0) {
        cudaFreeAsync(p, (cudaStream_t)c->stream);
        return rc;
    }
    *out = p;
    return 0;
}

static void cuda_mem_free(struct pps_kernels *k, void *p)
{
    struct pps__cuda *c = pps__cuda_of(k);
    cudaSetDevice(c->device);
    /* Released after the calls queued before it, without waiting for them. */
    if (cudaFreeAsync(p, (cudaStream_t)c->stream) != cudaSuccess)
        (void)cudaGetLastError();
}

static int cuda_copy_in(struct pps_kernels *k, void *dst, const void *src, size_t bytes)
{
    struct pps__cuda *c = pps__cuda_of(k);
    int rc;

    cudaSetDevice(c->device);
    rc = pps__cuda_check(
        k, (int)cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, (cudaStream_t)c->stream),
        "copy_in");
    /* memcpy's contract: src may be reused when this returns. An asynchronous copy from pinned
     * memory has not read it yet, and CUDA promises nothing either way for pageable memory. */
    if (rc == 0)
        rc = pps__cuda_check(k, (int)cudaStreamSynchronize((cudaStream_t)c->stream), "copy_in");
    return rc;
}

static int cuda_copy_out(struct pps_kernels *k, void *dst, const void *src, size_t bytes)
{
    struct pps__cuda *c = pps__cuda_of(k);
    int rc;

    cudaSetDevice(c->device);
    rc = pps__cuda_check(
        k, (int)cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, (cudaStream_t)c->stream),
        "copy_out");
    if (rc < 0)
        return rc;
    return pps__cuda_check(k, (int)cudaStreamSynchronize((cudaStream_t)c->stream), "copy_out");
}

static int cuda_copy(struct pps_kernels *k, void *dst, const void *src, size_t bytes)
{
    struct pps__cuda *c = pps__cuda_of(k);
    cudaSetDevice(c->device);
    return pps__cuda_check(
        k, (int)cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, (cudaStream_t)c->stream),
        "copy");
}

static int cuda_zero(struct pps_kernels *k, void *dst, size_t bytes)
{
    struct pps__cuda *c = pps__cuda_of(k);
    cudaSetDevice(c->device);
    return pps__cuda_check(k, (int)cudaMemsetAsync(dst, 0, bytes, (cudaStream_t)c->stream), "zero");
}

const struct pps__kernels_ops pps__kernels_cuda = {
    .name = "cuda",
    .open = cuda_open,
    .open_part = cuda_open_part,
    .partition = cuda_partition,
    .close = cuda_close,
    .sync = cuda_sync,
    .describe = cuda_describe,
    .mem_alloc = cuda_mem_alloc,
    .mem_free = cuda_mem_free,
    .copy_in = cuda_copy_in,
    .copy_out = cuda_copy_out,
    .copy = cuda_copy,
    .zero = cuda_zero,
    .gemm = pps__cuda_gemm,
    .bias_add = pps__cuda_bias_add,
    .bias_grad = pps__cuda_bias_grad,
    .layernorm_forward = pps__cuda_layernorm_forward,
    .layernorm_backward_input = pps__cuda_layernorm_backward_input,
    .layernorm_backward_params = pps__cuda_layernorm_backward_params,
    .layernorm_backward = pps__cuda_layernorm_backward,
    .gelu_forward = pps__cuda_gelu_forward,
    .gelu_backward = pps__cuda_gelu_backward,
    .add = pps__cuda_add,
    .scale = pps__cuda_scale,
    .embedding_forward = pps__cuda_embedding_forward,
    .embedding_backward = pps__cuda_embedding_backward,
    .cross_entropy_forward = pps__cuda_cross_entropy_forward,
    .cross_entropy_backward = pps__cuda_cross_entropy_backward,
    .adamw = pps__cuda_adamw,
    .sumsq = pps__cuda_sumsq,
    .nonfinite = pps__cuda_nonfinite,
};
