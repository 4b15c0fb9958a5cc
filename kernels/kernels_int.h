/*
 * kernels_int.h - what a kernels backend implements, and what the kernels/ files share.
 *
 * A backend is one struct pps__kernels_ops: a name and a function per call of kernels.h. The
 * public functions (dispatch.c) check every argument before they call the table, so a backend
 * may assume valid shapes, non-NULL operands and n > 0 (size 0 never reaches it); what only the
 * data can tell (a token id out of range) is the backend's to check. Each function returns 0 or a
 * negative PPS_E... code, having recorded the reason with pps__kernels_fail(). Contracts, aliasing
 * rules and determinism are those documented in kernels.h.
 *
 * Not installed; only the .c files of kernels/ include it. Names here are pps__ (module-internal).
 */
#ifndef PPS_KERNELS_INT_H
#define PPS_KERNELS_INT_H

#include "kernels.h"

struct pps__kernels_ops {
    const char *name;

    /* Context: open sets k->impl (may stay NULL); close releases it. sync waits for the device. */
    int (*open)(struct pps_kernels *k, struct pps_err *err);
    /* Optional: open as part of parts sharing the device (kernels.h); NULL: open. */
    int (*open_part)(struct pps_kernels *k, int part, int parts, struct pps_err *err);
    /* Optional: pps_kernels_partition(); NULL: the whole device. */
    int (*partition)(const struct pps_kernels *k, char *buf, size_t len);
    void (*close)(struct pps_kernels *k);
    int (*sync)(struct pps_kernels *k);
    /* What it computes on, for pps_kernels_describe(); no context needed. */
    void (*describe)(char *buf, size_t len);

    /* Memory. */
    int (*mem_alloc)(struct pps_kernels *k, size_t bytes, void **out);
    void (*mem_free)(struct pps_kernels *k, void *p);
    int (*copy_in)(struct pps_kernels *k, void *dst, const void *src, size_t bytes);
    int (*copy_out)(struct pps_kernels *k, void *dst, const void *src, size_t bytes);
    int (*copy)(struct pps_kernels *k, void *dst, const void *src, size_t bytes);
    int (*zero)(struct pps_kernels *k, void *dst, size_t bytes);

    /* Math. */
    int (*gemm)(struct pps_kernels *k, int trans_a, int trans_b, int m, int n, int kdim,
                float alpha, const float *a, const float *b, float beta, float *c);
    int (*bias_add)(struct pps_kernels *k, int rows, int cols, const float *bias, float *y);
    int (*bias_grad)(struct pps_kernels *k, int rows, int cols, const float *dy, float *dbias);
    int (*layernorm_forward)(struct pps_kernels *k, int rows, int cols, float eps, const float *x,
                             const float *gamma, const float *beta, float *y, float *mean,
                             float *rstd);
    int (*layernorm_backward_input)(struct pps_kernels *k, int rows, int cols, const float *x,
                                    const float *mean, const float *rstd, const float *gamma,
                                    const float *dy, float *dx);
    int (*layernorm_backward_params)(struct pps_kernels *k, int rows, int cols, const float *x,
                                     const float *mean, const float *rstd, const float *dy,
                                     float *dgamma, float *dbeta);
    int (*layernorm_backward)(struct pps_kernels *k, int rows, int cols, const float *x,
                              const float *mean, const float *rstd, const float *gamma,
                              const float *dy, float *dx, float *dgamma, float *dbeta);
    int (*gelu_forward)(struct pps_kernels *k, size_t n, const float *x, float *y);
    int (*gelu_backward)(struct pps_kernels *k, size_t n, const float *x, const float *dy,
                         float *dx);
    int (*add)(struct pps_kernels *k, size_t n, const float *a, const float *b, float *y);
    int (*scale)(struct pps_kernels *k, size_t n, float alpha, float *x);
    int (*embedding_forward)(struct pps_kernels *k, int n, int dim, int vocab, const int32_t *ids,
                             const float *table, float *y);
    int (*embedding_backward)(struct pps_kernels *k, int n, int dim, int vocab, const int32_t *ids,
                              const float *dy, float *dtable);
    int (*cross_entropy_forward)(struct pps_kernels *k, int rows, int vocab, const float *logits,
                                 const int32_t *targets, float *lse, float *loss);
    int (*cross_entropy_backward)(struct pps_kernels *k, int rows, int vocab, float dloss,
                                  const float *logits, const int32_t *targets, const float *lse,
                                  float *dlogits);
    int (*adamw)(struct pps_kernels *k, size_t n, const struct pps_adamw *hp, long step,
                 const float *grad, float *param, float *m, float *v);
    int (*sumsq)(struct pps_kernels *k, size_t n, const float *x, double *out);
    int (*nonfinite)(struct pps_kernels *k, size_t n, const float *x, size_t *out);
};

struct pps_kernels {
    const struct pps__kernels_ops *ops;
    void *impl;         /* the backend's state */
    struct pps_err err; /* the first error since the last sync; code 0 when none */
};

/* The backends: cpu, built in; cuda (with CUDA and cuBLAS), built into libppscope_cuda.so and
 * loaded from it by pps__kernels_cuda_load(). */
extern const struct pps__kernels_ops pps__kernels_cpu;
extern const struct pps__kernels_ops pps__kernels_cuda;

/* What the program and the library it loads must agree on: the layout of the table and of a
 * context (a library from another build is refused rather than called). */
#define PPS__KERNELS_ABI                                                                           \
    ((unsigned)(1u << 24 | sizeof(struct pps__kernels_ops) << 12 | sizeof(struct pps_kernels)))

/* The cuda table, from libppscope_cuda.so (common/pps_plugin.h), loaded once per process; NULL
 * with why when it cannot be (its cuBLAS missing, another build's copy). */
const struct pps__kernels_ops *pps__kernels_cuda_load(char *why, size_t len);

/*
 * Records code and a printf-style reason as k's error unless one is already recorded (the first
 * error is the one worth reading); returns code.
 */
int pps__kernels_fail(struct pps_kernels *k, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
