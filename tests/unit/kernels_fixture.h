/*
 * kernels_fixture.h - what the kernels tests share: opening a context, moving arrays to and from
 * the device, a seeded random source, and comparisons. Include after test.h.
 *
 * The tests go through the public interface only (device memory is reached by copies), so they
 * run unchanged on any backend: PPS_KERNELS_BACKEND names it ("cpu" when unset); a backend this
 * build or machine lacks makes the binary exit 77 before any case (kx_backend_or_skip_all), and
 * a case that opens one anyway skips (TEST_SKIP).
 */
#ifndef PPS_KERNELS_FIXTURE_H
#define PPS_KERNELS_FIXTURE_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels.h"
#include "test.h"

static inline void kx_die(const char *what, const char *why)
{
    fprintf(stderr, "%s: %s\n", what, why);
    exit(1);
}

static inline struct pps_kernels *kx_open(void)
{
    const char *name = getenv("PPS_KERNELS_BACKEND");
    struct pps_kernels *k = NULL;
    struct pps_err err = {0};
    int rc = pps_kernels_new(name && *name ? name : "cpu", &k, &err);
    if (rc == PPS_ENOENT)
        TEST_SKIP(err.msg); /* stops this case only: the cases that need no backend still run */
    if (rc < 0)
        kx_die("pps_kernels_new", err.msg);
    return k;
}

/*
 * Before any case: where the backend under test (name, else PPS_KERNELS_BACKEND) is one this
 * machine or build cannot open, says why and exits 77, so that no case starts (and skips midway,
 * past what it allocated). Returns otherwise.
 */
static inline void kx_backend_or_skip_all(const char *name)
{
    struct pps_kernels *k = NULL;
    struct pps_err err = {0};

    if (!name) {
        name = getenv("PPS_KERNELS_BACKEND");
        name = name && *name ? name : "cpu";
    }
    if (pps_kernels_new(name, &k, &err) == PPS_ENOENT) {
        printf("skipped: %s\n", err.msg);
        exit(77);
    }
    pps_kernels_free(k);
}

/* Fails the process if k holds an error: the tests below expect every call to succeed unless
 * they check for the error themselves. */
static inline void kx_close(struct pps_kernels *k)
{
    struct pps_err err = {0};
    if (pps_kernels_sync(k, &err) < 0)
        kx_die("pps_kernels_sync", err.msg);
    pps_kernels_free(k);
}

static inline void *kx_alloc_bytes(struct pps_kernels *k, size_t bytes)
{
    void *p = NULL;
    if (pps_kernels_mem_alloc(k, bytes, &p) < 0)
        kx_die("pps_kernels_mem_alloc", "failed");
    return p;
}

/* n zeroed device floats. */
static inline float *kx_alloc(struct pps_kernels *k, size_t n)
{
    return kx_alloc_bytes(k, n * sizeof(float));
}

/* A device copy of n host floats (or int32 ids). */
static inline float *kx_put(struct pps_kernels *k, const float *host, size_t n)
{
    float *d = kx_alloc(k, n);
    if (pps_kernels_copy_in(k, d, host, n * sizeof(float)) < 0)
        kx_die("pps_kernels_copy_in", "failed");
    return d;
}
static inline int32_t *kx_put_ids(struct pps_kernels *k, const int32_t *host, size_t n)
{
    int32_t *d = kx_alloc_bytes(k, n * sizeof(int32_t));
    if (pps_kernels_copy_in(k, d, host, n * sizeof(int32_t)) < 0)
        kx_die("pps_kernels_copy_in", "failed");
    return d;
}

/*
 * What a call returns when only its data is wrong (a token id out of range): PPS_EINVAL at once
 * on cpu; 0 on cuda, which finds it on the device and reports it at the next sync (kernels.h).
 */
static inline int kx_data_error(struct pps_kernels *k)
{
    return strcmp(pps_kernels_backend(k), "cuda") == 0 ? 0 : PPS_EINVAL;
}

/* The alignment, in floats, of operands whose results must be the same bits wherever they sit:
 * 1 on cpu, 4 (16 bytes) on cuda (kernels.h, Determinism). */
static inline int kx_align_floats(struct pps_kernels *k)
{
    return strcmp(pps_kernels_backend(k), "cuda") == 0 ? 4 : 1;
}

/* Device floats into host (overwriting), and back the other way. */
static inline void kx_get(struct pps_kernels *k, float *host, const float *dev, size_t n)
{
    if (pps_kernels_copy_out(k, host, dev, n * sizeof(float)) < 0)
        kx_die("pps_kernels_copy_out", "failed");
}
static inline void kx_set(struct pps_kernels *k, float *dev, const float *host, size_t n)
{
    if (pps_kernels_copy_in(k, dev, host, n * sizeof(float)) < 0)
        kx_die("pps_kernels_copy_in", "failed");
}

static inline void kx_set_ids(struct pps_kernels *k, int32_t *dev, const int32_t *host, size_t n)
{
    if (pps_kernels_copy_in(k, dev, host, n * sizeof(int32_t)) < 0)
        kx_die("pps_kernels_copy_in", "failed");
}

/* A malloc'd host copy of n device floats. */
static inline float *kx_fetch(struct pps_kernels *k, const float *dev, size_t n)
{
    float *h = malloc((n ? n : 1) * sizeof(float));
    if (!h)
        kx_die("malloc", "out of memory");
    kx_get(k, h, dev, n);
    return h;
}

static inline float *kx_host(size_t n)
{
    float *h = calloc(n ? n : 1, sizeof(float));
    if (!h)
        kx_die("calloc", "out of memory");
    return h;
}

/* A fixed-seed generator (xorshift64*), so every run sees the same inputs. */
static uint64_t kx_seed_ = 0x9e3779b97f4a7c15ull;

static inline void kx_reseed(uint64_t seed)
{
    kx_seed_ = seed ? seed : 1;
}

/* Uniform in [lo, hi). */
static inline float kx_uniform(float lo, float hi)
{
    kx_seed_ ^= kx_seed_ >> 12;
    kx_seed_ ^= kx_seed_ << 25;
    kx_seed_ ^= kx_seed_ >> 27;
    uint64_t r = kx_seed_ * 0x2545f4914f6cdd1dull;
    return lo + (hi - lo) * (float)((r >> 40) / 16777216.0);
}

static inline float *kx_random(size_t n, float lo, float hi)
{
    float *h = kx_host(n);
    for (size_t i = 0; i < n; i++)
        h[i] = kx_uniform(lo, hi);
    return h;
}

/* How many of got[i] differ from want[i] by more than abs_tol + rel_tol * |want[i]|; prints the
 * first few, naming what. */
static inline int kx_compare(const char *what, const float *got, const double *want, size_t n,
                             double abs_tol, double rel_tol)
{
    int bad = 0;
    for (size_t i = 0; i < n; i++) {
        double tol = abs_tol + rel_tol * fabs(want[i]);
        if (!(fabs((double)got[i] - want[i]) <= tol)) {
            if (bad < 5)
                fprintf(stderr, "  %s[%zu] = %.9g, expected %.9g (tolerance %.3g)\n", what, i,
                        (double)got[i], want[i], tol);
            bad++;
        }
    }
    return bad;
}

/* Whether two float arrays are the same bits. */
static inline int kx_same_bits(const float *a, const float *b, size_t n)
{
    return memcmp(a, b, n * sizeof(float)) == 0;
}

#endif
