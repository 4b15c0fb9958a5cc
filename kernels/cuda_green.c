/*
 * cuda_green.c - one GPU cut into equal SM partitions (CUDA green contexts), one per pipeline
 * stage, so that p stages on one GPU behave as p smaller devices: a stage's kernels run on its
 * SMs only and cannot fill another stage's bubble.
 *
 * The driver API is reached through the CUDA runtime (cudaGetDriverEntryPointByVersion), so
 * nothing links libcuda. Once per process and device: the device's SM resource is split into
 * groups of equal size (cuDevSmResourceSplitByCount, the largest count that still gives `parts`
 * groups), one green context made from each (cuDevResourceGenerateDesc, cuGreenCtxCreate); each
 * context then gets a stream of its partition (cuGreenCtxStreamCreate). Green contexts share the
 * primary context's memory, so buffers, cuBLAS and the kernels work on those streams as on any.
 * Where any step fails (a driver before 12.4, a GPU that cannot split so finely) the caller is
 * told why and falls back to a plain stream.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include <cuda.h>
#include <cuda_runtime_api.h>

#include "cuda_backend.h"

/* The driver calls, by the CUDA version that introduced their current form (12.4). */
#define GREEN_CUDA_VERSION 12040
#define MAX_PARTS          64

typedef CUresult (*device_get_fn)(CUdevice *, int);
typedef CUresult (*get_resource_fn)(CUdevice, CUdevResource *, CUdevResourceType);
typedef CUresult (*split_fn)(CUdevResource *, unsigned int *, const CUdevResource *,
                             CUdevResource *, unsigned int, unsigned int);
typedef CUresult (*gen_desc_fn)(CUdevResourceDesc *, CUdevResource *, unsigned int);
typedef CUresult (*green_create_fn)(CUgreenCtx *, CUdevResourceDesc, CUdevice, unsigned int);
typedef CUresult (*green_stream_fn)(CUstream *, CUgreenCtx, unsigned int, int);

static struct {
    pthread_mutex_t lock;
    int device, parts; /* what the set below was made for; parts 0: none yet */
    int failed;        /* making it failed: why says why, every later ask gets the same */
    char why[200];
    CUgreenCtx ctx[MAX_PARTS];
    unsigned sms[MAX_PARTS];
    unsigned total_sms;
    green_stream_fn stream_create;
} green = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* One driver entry point into *fn; 0, or -1 with why set. */
static int entry(const char *name, void **fn)
{
    enum cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;
    cudaError_t e =
        cudaGetDriverEntryPointByVersion(name, fn, GREEN_CUDA_VERSION, cudaEnableDefault, &q);
    if (e == cudaSuccess && q == cudaDriverEntryPointSuccess && *fn)
        return 0;
    (void)cudaGetLastError();
    snprintf(green.why, sizeof(green.why), "the driver has no %s (green contexts need 12.4)", name);
    return -1;
}

/* Makes the partitions of device into parts. Under green.lock. */
static int make(int device, int parts)
{
    device_get_fn device_get;
    get_resource_fn get_resource;
    split_fn split;
    gen_desc_fn gen_desc;
    green_create_fn green_create;
    CUdevice dev;
    CUdevResource sm, groups[MAX_PARTS];
    unsigned n = 0, count = 0;
    CUresult r;

    if (entry("cuDeviceGet", (void **)&device_get) ||
        entry("cuDeviceGetDevResource", (void **)&get_resource) ||
        entry("cuDevSmResourceSplitByCount", (void **)&split) ||
        entry("cuDevResourceGenerateDesc", (void **)&gen_desc) ||
        entry("cuGreenCtxCreate", (void **)&green_create) ||
        entry("cuGreenCtxStreamCreate", (void **)&green.stream_create))
        return -1;
    /* The primary context first, as the driver advises (green contexts retain it). */
    if (cudaSetDevice(device) != cudaSuccess || cudaFree(0) != cudaSuccess) {
        (void)cudaGetLastError();
        snprintf(green.why, sizeof(green.why), "device %d cannot start", device);
        return -1;
    }
    if ((r = device_get(&dev, device)) != CUDA_SUCCESS ||
        (r = get_resource(dev, &sm, CU_DEV_RESOURCE_TYPE_SM)) != CUDA_SUCCESS) {
        snprintf(green.why, sizeof(green.why), "device %d's SMs cannot be read (CUresult %d)",
                 device, (int)r);
        return -1;
    }
    green.total_sms = sm.sm.smCount;
    /* The largest SM count per group that still gives parts groups (the driver rounds to the
     * device's granularity and may give fewer groups than the count divides into). */
    for (count = sm.sm.smCount / (unsigned)parts; count > 0; count--) {
        unsigned want = (unsigned)parts;
        if (split(NULL, &want, &sm, NULL, 0, count) == CUDA_SUCCESS && want >= (unsigned)parts)
            break;
    }
    n = (unsigned)parts;
    if (count == 0 || split(groups, &n, &sm, NULL, 0, count) != CUDA_SUCCESS ||
        n < (unsigned)parts) {
        snprintf(green.why, sizeof(green.why), "%u SMs do not split into %d equal partitions",
                 sm.sm.smCount, parts);
        return -1;
    }
    for (int i = 0; i < parts; i++) {
        CUdevResourceDesc desc;
        if ((r = gen_desc(&desc, &groups[i], 1)) != CUDA_SUCCESS ||
            (r = green_create(&green.ctx[i], desc, dev, CU_GREEN_CTX_DEFAULT_STREAM)) !=
                CUDA_SUCCESS) {
            snprintf(green.why, sizeof(green.why), "green context %d of %d: CUresult %d", i, parts,
                     (int)r);
            return -1; /* the ones made stay until the process ends: harmless, and rare */
        }
        green.sms[i] = groups[i].sm.smCount;
    }
    return 0;
}

int pps__cuda_green_stream(int device, int part, int parts, void **stream, unsigned *sms,
                           unsigned *total, char *why, size_t why_len)
{
    CUstream s = NULL;
    int rc = -1;

    *stream = NULL;
    *sms = *total = 0;
    if (parts < 2 || part < 0 || part >= parts)
        return -1;
    pthread_mutex_lock(&green.lock);
    if (parts > MAX_PARTS) {
        snprintf(why, why_len, "%d stages are more partitions than %d", parts, MAX_PARTS);
    } else if (green.parts && (green.device != device || green.parts != parts)) {
        snprintf(why, why_len, "the GPU is already split for %d stages of device %d", green.parts,
                 green.device);
    } else {
        if (!green.parts && !green.failed) {
            green.failed = make(device, parts) != 0;
            green.device = device;
            green.parts = green.failed ? 0 : parts;
        }
        if (green.failed) {
            snprintf(why, why_len, "%s", green.why);
        } else if (green.stream_create(&s, green.ctx[part], CU_STREAM_NON_BLOCKING, 0) !=
                   CUDA_SUCCESS) {
            snprintf(why, why_len, "no stream in green context %d", part);
        } else {
            *stream = s;
            *sms = green.sms[part];
            *total = green.total_sms;
            rc = 0;
        }
    }
    pthread_mutex_unlock(&green.lock);
    return rc;
}
