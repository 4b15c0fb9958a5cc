/*
 * kernels.h - the math the runtime computes with, on one device, behind one interface.
 *
 * A context (struct pps_kernels) is opened on a backend by name: "cpu" (CBLAS GEMM when the
 * build has BLAS, a plain C GEMM otherwise, everything else in C) and, later, "cuda" (cuBLAS and
 * CUDA kernels). Every call below dispatches through the backend's table of functions
 * (kernels_int.h), so the runtime is written once for every backend. Arguments are checked here,
 * before dispatch, the same way for every backend.
 *
 * Memory. Operands are device pointers from pps_kernels_mem_alloc(): float32 tensors and int32
 * token ids. The runtime never dereferences them (on "cpu" that would work, on "cuda" it would
 * crash); it moves data with pps_kernels_copy_in() and pps_kernels_copy_out(). Pointer arithmetic
 * inside one allocation is fine (a flat parameter buffer sliced per layer). Matrices are dense and
 * row-major: an r x c matrix is r rows of c contiguous floats.
 *
 * Arguments. Memory calls take (dst, src, bytes) like memcpy. Math calls take the shape, then
 * host scalars, then device inputs, then device outputs last (as BLAS puts C last). Outputs must
 * not overlap inputs unless the call says it may.
 *
 * Errors. Every call returns 0 or a negative PPS_E... code (PPS_EINVAL for a bad shape, a NULL
 * operand, an out-of-range token id). The first error also stays in the context, with its
 * one-line reason, until pps_kernels_sync() reports and clears it; so a runtime may queue many
 * calls and check once. A backend that runs asynchronously (cuda) may report an error found on
 * the device (a bad token id) only at the next pps_kernels_sync().
 *
 * Gradients. Calls that produce a weight gradient ACCUMULATE into it (dW += ...): gradients of the
 * microbatches of one iteration add up in the buffer, which the runtime zeroes with
 * pps_kernels_zero() before the first. Every layer with parameters has a B call (the input
 * gradient, dL/dx: what the previous stage waits for), a W call (the weight gradients, from the
 * activations kept by F and the output gradient used by B), and a fused BW call. BW gives bitwise
 * the same results as B followed by W on the same backend, so split (zero-bubble) and fused
 * schedules compute the same gradients.
 *
 * Determinism. On one backend, on one machine, every call gives bitwise the same outputs for the
 * same inputs, whichever thread calls it and however many contexts run concurrently: reductions
 * run in a fixed order, never in an order set by threads or atomics. The cpu backend calls
 * OpenBLAS with one thread (set once, when the first cpu context opens): a pipeline runs one stage
 * per thread already, several stages each asking OpenBLAS for all the cores would fight over them,
 * and one thread per call leaves nothing in the result to depend on the machine's load. Splitting
 * a reduction changes its rounding: the sum of pps_kernels_sumsq() over two halves of a buffer is
 * not bitwise the sum over the whole, so runs that must agree bitwise must make the same calls in
 * the same order. Backends differ from each other in rounding; "cpu" is the reference. On
 * "cuda", where an operand sits may change a GEMM's bits (cuBLAS picks its kernel by the
 * operands' alignment): the promise holds for operands at the same address modulo 16 bytes,
 * which the runtime's 64-byte aligned tensors always are; on "cpu" it holds wherever they sit.
 *
 * Threads: a context belongs to one thread at a time. Contexts are independent; open one per
 * stage thread.
 */
#ifndef PPS_KERNELS_H
#define PPS_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#include "pps_error.h"

struct pps_kernels;

/* ------------------------------------------------------------------------------------------- */
/* Contexts                                                                                    */
/* ------------------------------------------------------------------------------------------- */

/*
 * Opens a context on backend ("cpu", "cuda"). An unknown name is PPS_EINVAL, a backend this build
 * lacks (cuda without CUDA) PPS_ENOENT, each with a reason naming what the build has. On failure
 * *out is NULL.
 */
int pps_kernels_new(const char *backend, struct pps_kernels **out, struct pps_err *err);
/*
 * Opens context part (0 .. parts-1) of parts contexts that share one device: the stages of a
 * pipeline on one GPU. On cuda each gets its own equal partition of the GPU's SMs (a green
 * context), so parts stages behave as parts smaller devices and one stage's kernels cannot run
 * in another's bubble; where the GPU or its driver cannot split (a driver before CUDA 12.4), a
 * plain stream on the whole GPU, and pps_kernels_partition() says why. On cpu, and for parts
 * below 2, the same as pps_kernels_new(). The partitions are made once per process.
 */
int pps_kernels_new_part(const char *backend, int part, int parts, struct pps_kernels **out,
                         struct pps_err *err);
/*
 * What of its device k may use, into buf ("32 of 132 SMs (green context 1 of 4)", "the whole
 * device", or why a partition asked for was not made); returns the SMs of its partition, 0 when
 * it shares the whole device.
 */
int pps_kernels_partition(const struct pps_kernels *k, char *buf, size_t len);
/* Closes the context. Buffers allocated through it must be freed before. NULL is a no-op. */
void pps_kernels_free(struct pps_kernels *k);
/* The backend's name, as given to pps_kernels_new(). */
const char *pps_kernels_backend(const struct pps_kernels *k);
/*
 * What backend computes on, for a run's metadata, into buf: "cpu (<model name>)", "cuda (NVIDIA
 * H200, device 0 of 1, 132 SMs, 140 GiB, compute 9.0)"; for a backend this build or machine
 * lacks, its name and why. Opens no context.
 */
void pps_kernels_describe(const char *backend, char *buf, size_t len);
/*
 * Waits until every call made through k has finished (a no-op on cpu), then returns the first
 * error since the last sync (0 if none) with its reason in err, and forgets it.
 */
int pps_kernels_sync(struct pps_kernels *k, struct pps_err *err);
/*
 * Waits until every call made through k has finished (a no-op on cpu), and keeps any error for
 * the next pps_kernels_sync(): for a clock read that must come after the device's work (a
 * per-layer span on cuda).
 */
void pps_kernels_wait(struct pps_kernels *k);

/* ------------------------------------------------------------------------------------------- */
/* Memory                                                                                      */
/* ------------------------------------------------------------------------------------------- */

/*
 * Allocates bytes of device memory, zero-filled and aligned to 64 bytes, into *out (NULL on
 * failure: PPS_ENOMEM). bytes == 0 gives a valid, unique pointer.
 */
int pps_kernels_mem_alloc(struct pps_kernels *k, size_t bytes, void **out);
/* Frees what pps_kernels_mem_alloc() gave. NULL is a no-op. */
void pps_kernels_mem_free(struct pps_kernels *k, void *p);
/* Host to device, device to host, device to device; like memcpy (no overlap). Copying out
 * waits for the calls before it, so the host sees their results. */
int pps_kernels_copy_in(struct pps_kernels *k, void *dst, const void *src, size_t bytes);
int pps_kernels_copy_out(struct pps_kernels *k, void *dst, const void *src, size_t bytes);
int pps_kernels_copy(struct pps_kernels *k, void *dst, const void *src, size_t bytes);
/* Sets bytes of device memory to zero (a float or int32 zero). */
int pps_kernels_zero(struct pps_kernels *k, void *dst, size_t bytes);

/* ------------------------------------------------------------------------------------------- */
/* Dense layers                                                                                */
/* ------------------------------------------------------------------------------------------- */

/*
 * C = alpha * op(A) * op(B) + beta * C, with op(A) m x kdim and op(B) kdim x n, C m x n, all
 * row-major and dense: A is stored m x kdim (trans_a == 0) or kdim x m (trans_a != 0), B kdim x n
 * or n x kdim. beta == 1 accumulates into C, which is how weight gradients add up over
 * microbatches; beta == 0 does not read C (NaN there does not leak through). kdim == 0 scales C by
 * beta. C must not overlap A or B (PPS_EINVAL).
 */
int pps_kernels_gemm(struct pps_kernels *k, int trans_a, int trans_b, int m, int n, int kdim,
                     float alpha, const float *a, const float *b, float beta, float *c);

/* y[r][c] += bias[c] for a rows x cols y. */
int pps_kernels_bias_add(struct pps_kernels *k, int rows, int cols, const float *bias, float *y);
/* dbias[c] += sum over r of dy[r][c] (rows x cols dy): a bias's weight gradient. */
int pps_kernels_bias_grad(struct pps_kernels *k, int rows, int cols, const float *dy, float *dbias);

/*
 * The linear layer y = x w + b: x is rows x n_in, w is n_in x n_out (so a row of x times w),
 * b is n_out or NULL (no bias), y is rows x n_out. Built on gemm and the bias calls, the same on
 * every backend.
 *   F:  linear_forward                 y = x w + b
 *   B:  linear_backward_input          dx = dy w^T                       (x is not needed)
 *   W:  linear_backward_params         dw += x^T dy, db += column sums of dy  (db may be NULL)
 *   BW: linear_backward                both, B then W
 */
int pps_kernels_linear_forward(struct pps_kernels *k, int rows, int n_in, int n_out, const float *x,
                               const float *w, const float *b, float *y);
int pps_kernels_linear_backward_input(struct pps_kernels *k, int rows, int n_in, int n_out,
                                      const float *w, const float *dy, float *dx);
int pps_kernels_linear_backward_params(struct pps_kernels *k, int rows, int n_in, int n_out,
                                       const float *x, const float *dy, float *dw, float *db);
int pps_kernels_linear_backward(struct pps_kernels *k, int rows, int n_in, int n_out,
                                const float *x, const float *w, const float *dy, float *dx,
                                float *dw, float *db);

/* ------------------------------------------------------------------------------------------- */
/* Layer normalization                                                                         */
/* ------------------------------------------------------------------------------------------- */

/*
 * Per row of a rows x cols x: y = (x - mean) * rstd * gamma + beta, with mean and variance over
 * the row (biased variance) and rstd = 1 / sqrt(var + eps). Saves mean and rstd (rows floats
 * each) for the backward calls; gamma and beta are cols floats. y may be x.
 */
int pps_kernels_layernorm_forward(struct pps_kernels *k, int rows, int cols, float eps,
                                  const float *x, const float *gamma, const float *beta, float *y,
                                  float *mean, float *rstd);
/*
 * B: dx from dy, the forward's x, mean, rstd, and gamma. With xhat = (x - mean) * rstd and
 * g = dy * gamma: dx = rstd * (g - mean(g) - xhat * mean(g * xhat)), means over the row.
 * dx may be dy.
 */
int pps_kernels_layernorm_backward_input(struct pps_kernels *k, int rows, int cols, const float *x,
                                         const float *mean, const float *rstd, const float *gamma,
                                         const float *dy, float *dx);
/* W: dgamma[c] += sum over rows of dy * xhat, dbeta[c] += sum over rows of dy. */
int pps_kernels_layernorm_backward_params(struct pps_kernels *k, int rows, int cols, const float *x,
                                          const float *mean, const float *rstd, const float *dy,
                                          float *dgamma, float *dbeta);
/* BW: both; bitwise B followed by W. dx must not be dy (W still reads dy). */
int pps_kernels_layernorm_backward(struct pps_kernels *k, int rows, int cols, const float *x,
                                   const float *mean, const float *rstd, const float *gamma,
                                   const float *dy, float *dx, float *dgamma, float *dbeta);

/* ------------------------------------------------------------------------------------------- */
/* Activations and elementwise                                                                 */
/* ------------------------------------------------------------------------------------------- */

/*
 * GELU, tanh approximation (as GPT-2): y = x/2 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3))).
 * The backward uses the exact derivative of that formula: dx = dy * gelu'(x), x being the
 * forward's input. y may be x; dx may be dy.
 */
int pps_kernels_gelu_forward(struct pps_kernels *k, size_t n, const float *x, float *y);
int pps_kernels_gelu_backward(struct pps_kernels *k, size_t n, const float *x, const float *dy,
                              float *dx);

/* y = a + b, elementwise (the residual connection, forward and backward). y may be a or b. */
int pps_kernels_add(struct pps_kernels *k, size_t n, const float *a, const float *b, float *y);
/* x *= alpha (gradient clipping, averaging). */
int pps_kernels_scale(struct pps_kernels *k, size_t n, float alpha, float *x);

/* ------------------------------------------------------------------------------------------- */
/* Embedding and loss                                                                          */
/* ------------------------------------------------------------------------------------------- */

/*
 * Row ids[i] of a vocab x dim table into row i of y (n x dim). An id outside 0 .. vocab-1 is
 * PPS_EINVAL naming it, and y is then unspecified.
 */
int pps_kernels_embedding_forward(struct pps_kernels *k, int n, int dim, int vocab,
                                  const int32_t *ids, const float *table, float *y);
/*
 * W (the embedding has no input gradient): dtable[ids[i]] += dy[i] for i = 0, 1, ..., n-1 in that
 * order, so repeated ids add up the same way every time.
 */
int pps_kernels_embedding_backward(struct pps_kernels *k, int n, int dim, int vocab,
                                   const int32_t *ids, const float *dy, float *dtable);

/*
 * Softmax cross-entropy of rows x vocab logits against targets (rows ids in 0 .. vocab-1;
 * rows >= 1): *loss (one float, device) = the mean over rows of logsumexp(row) - row[target].
 * Saves each row's logsumexp in lse (rows floats) for the backward.
 */
int pps_kernels_cross_entropy_forward(struct pps_kernels *k, int rows, int vocab,
                                      const float *logits, const int32_t *targets, float *lse,
                                      float *loss);
/*
 * B: dlogits = dloss / rows * (softmax(logits) - onehot(target)), the gradient of dloss * loss.
 * dloss is the weight of this microbatch's mean loss in the objective (1/m to average m
 * microbatches). dlogits may be logits.
 */
int pps_kernels_cross_entropy_backward(struct pps_kernels *k, int rows, int vocab, float dloss,
                                       const float *logits, const int32_t *targets,
                                       const float *lse, float *dlogits);

/* ------------------------------------------------------------------------------------------- */
/* Optimizer and gradient checks                                                               */
/* ------------------------------------------------------------------------------------------- */

struct pps_adamw {
    float lr;           /* >= 0 */
    float beta1, beta2; /* each in [0, 1) */
    float eps;          /* > 0 */
    float weight_decay; /* >= 0; decoupled: param *= 1 - lr * weight_decay */
};

/*
 * One AdamW step (Loshchilov and Hutter; as torch.optim.AdamW) over n parameters with their
 * gradients and moments m and v (zeroed before step 1). step counts from 1 and sets the bias
 * corrections 1 - beta^step:
 *   param *= 1 - lr * weight_decay
 *   m = beta1 m + (1 - beta1) g,   v = beta2 v + (1 - beta2) g^2
 *   param -= lr / (1 - beta1^step) * m / (sqrt(v) / sqrt(1 - beta2^step) + eps)
 */
int pps_kernels_adamw(struct pps_kernels *k, size_t n, const struct pps_adamw *hp, long step,
                      const float *grad, float *param, float *m, float *v);

/*
 * The sum of x[i]^2 in double into *out (host), for the global gradient norm: sum it over the
 * stages' buffers in a fixed order, then sqrt. inf or NaN in x gives inf or NaN. Waits for the
 * calls before it.
 */
int pps_kernels_sumsq(struct pps_kernels *k, size_t n, const float *x, double *out);
/* How many of x[0..n-1] are inf, -inf or NaN, into *out (host). Waits for the calls before it. */
int pps_kernels_nonfinite(struct pps_kernels *k, size_t n, const float *x, size_t *out);

#endif
