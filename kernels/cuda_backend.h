/*
 * cuda_backend.h - the cuda backend's state and functions, shared between its files and gathered
 * into the table pps__kernels_cuda by cuda_backend.c. Each pps__cuda_... math function is the entry
 * of struct pps__kernels_ops of the same name (kernels_int.h): arguments are already checked,
 * sizes are > 0. Built only when the build has CUDA and cuBLAS (PPS_HAVE_CUDA, PPS_HAVE_CUBLAS).
 *
 * A context owns one CUDA stream (its stage's), a cuBLAS handle bound to it with a workspace of
 * its own, and a scratch buffer for the reductions' partial sums. Every call is queued on the
 * stream and returns; what only the device can find (a token id out of range) is recorded on the
 * device and reported by the next sync. Calls that hand a value to the host (copy_out, sumsq,
 * nonfinite) wait for the stream.
 *
 * Determinism (kernels.h): every reduction runs in double over a grid whose shape is fixed by the
 * problem's shape alone (never by the device's SM count), partial sums added in a fixed tree; no
 * float atomics. The embedding's gradient adds rows in the order of the ids, as on cpu. GEMM is
 * cuBLAS with its atomics off and a workspace per stream, which cuBLAS documents as bitwise
 * reproducible run to run on GPUs of one architecture with the same number of SMs; no TF32
 * unless PPS_CUDA_TF32=1. Kernels are compiled without fused multiply-add contraction
 * (-fmad=false), so elementwise calls round as the cpu backend's C does.
 *
 * The .cu files (cuda_*.cu) hold the device code and a C launcher per call; the .c files the
 * context, memory and cuBLAS. Not installed; only kernels/ includes it.
 */
#ifndef PPS_KERNELS_CUDA_BACKEND_H
#define PPS_KERNELS_CUDA_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#include "kernels_int.h"

/* What a kernel found wrong in the data, one slot per call that checks token ids. */
enum pps__cuda_check {
    PPS__CUDA_CHECK_EMBED_F,
    PPS__CUDA_CHECK_EMBED_B,
    PPS__CUDA_CHECK_CE_F,
    PPS__CUDA_CHECK_CE_B,
    PPS__CUDA_N_CHECKS
};

struct pps__cuda {
    int device;
    int device_set;   /* cudaSetDevice(device) succeeded: the context may touch the device */
    void *stream;     /* cudaStream_t: the context's stream; every call is queued on it */
    int own_stream;   /* the context created it (and destroys it) */
    void *blas;       /* cublasHandle_t, bound to stream */
    void *blas_ws;    /* cuBLAS's workspace for this stream (device) */
    double *scratch;  /* device: partial sums of the reductions, grown as needed */
    size_t scratch_n; /* doubles in scratch */
    void *host_out;   /* pinned host memory: what sumsq and nonfinite hand back */
    /*
     * Device: per check, the smallest (position << 32 | id as uint32) of a bad token id seen
     * since the last sync, ~0 when none; vocab[] the range of the call that last used the slot
     * (host). Several calls of one kind between two syncs share the slot: the message then
     * names the bad id at the smallest position among them, with the last call's range (the
     * runtime syncs after every op, so there it is the op's).
     */
    unsigned long long *bad;
    int vocab[PPS__CUDA_N_CHECKS];
    int bad_pending; /* a checked call was queued since the last look at bad */
    /* The SM partition the stream runs on (cuda_green.c): its SMs and the device's, 0 when the
     * stream has the whole device; part of parts, and why a partition asked for was not made. */
    unsigned sms, total_sms;
    int part, parts;
    char part_why[200];
};

/* The state of k (its impl). */
static inline struct pps__cuda *pps__cuda_of(struct pps_kernels *k)
{
    return (struct pps__cuda *)k->impl;
}

/*
 * Records a CUDA runtime error (cudaError_t as int) from what as k's error: PPS_ENOMEM for an
 * allocation, PPS_EIO otherwise. Returns 0 when code is 0 (cudaSuccess).
 */
int pps__cuda_check(struct pps_kernels *k, int code, const char *what);
/* Checks that the last launch on this thread was accepted (cudaGetLastError). */
int pps__cuda_launched(struct pps_kernels *k, const char *what);
/* At least n doubles of device scratch, or NULL with k's error set. */
double *pps__cuda_scratch(struct pps_kernels *k, size_t n);

/* cuda_green.c: a stream on SM partition part of parts of device (green contexts); 0, or -1
 * with the reason in why. */
int pps__cuda_green_stream(int device, int part, int parts, void **stream, unsigned *sms,
                           unsigned *total, char *why, size_t why_len);

/* cuda_gemm.c */
int pps__cuda_gemm(struct pps_kernels *k, int trans_a, int trans_b, int m, int n, int kdim,
                   float alpha, const float *a, const float *b, float beta, float *c);
int pps__cuda_blas_open(struct pps_kernels *k, struct pps_err *err);
void pps__cuda_blas_close(struct pps_kernels *k);

/* cuda_pointwise.cu: each output element from its own inputs. */
int pps__cuda_bias_add(struct pps_kernels *k, int rows, int cols, const float *bias, float *y);
int pps__cuda_gelu_forward(struct pps_kernels *k, size_t n, const float *x, float *y);
int pps__cuda_gelu_backward(struct pps_kernels *k, size_t n, const float *x, const float *dy,
                            float *dx);
int pps__cuda_add(struct pps_kernels *k, size_t n, const float *a, const float *b, float *y);
int pps__cuda_scale(struct pps_kernels *k, size_t n, float alpha, float *x);
int pps__cuda_adamw(struct pps_kernels *k, size_t n, const struct pps_adamw *hp, long step,
                    const float *grad, float *param, float *m, float *v);

/* cuda_reduce.cu: column sums, the sum of squares, the count of non-finite values. */
int pps__cuda_bias_grad(struct pps_kernels *k, int rows, int cols, const float *dy, float *dbias);
int pps__cuda_sumsq(struct pps_kernels *k, size_t n, const float *x, double *out);
int pps__cuda_nonfinite(struct pps_kernels *k, size_t n, const float *x, size_t *out);

/* cuda_norm.cu */
int pps__cuda_layernorm_forward(struct pps_kernels *k, int rows, int cols, float eps,
                                const float *x, const float *gamma, const float *beta, float *y,
                                float *mean, float *rstd);
int pps__cuda_layernorm_backward_input(struct pps_kernels *k, int rows, int cols, const float *x,
                                       const float *mean, const float *rstd, const float *gamma,
                                       const float *dy, float *dx);
int pps__cuda_layernorm_backward_params(struct pps_kernels *k, int rows, int cols, const float *x,
                                        const float *mean, const float *rstd, const float *dy,
                                        float *dgamma, float *dbeta);
int pps__cuda_layernorm_backward(struct pps_kernels *k, int rows, int cols, const float *x,
                                 const float *mean, const float *rstd, const float *gamma,
                                 const float *dy, float *dx, float *dgamma, float *dbeta);

/* cuda_tokens.cu: the embedding and the loss, the calls that take token ids. */
int pps__cuda_embedding_forward(struct pps_kernels *k, int n, int dim, int vocab,
                                const int32_t *ids, const float *table, float *y);
int pps__cuda_embedding_backward(struct pps_kernels *k, int n, int dim, int vocab,
                                 const int32_t *ids, const float *dy, float *dtable);
int pps__cuda_cross_entropy_forward(struct pps_kernels *k, int rows, int vocab, const float *logits,
                                    const int32_t *targets, float *lse, float *loss);
int pps__cuda_cross_entropy_backward(struct pps_kernels *k, int rows, int vocab, float dloss,
                                     const float *logits, const int32_t *targets, const float *lse,
                                     float *dlogits);

#ifdef __cplusplus
}
#endif

#endif
