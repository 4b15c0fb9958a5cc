/*
 * cpu.h - the cpu backend's functions, shared between its files (cpu_*.c) and gathered into the
 * table pps__kernels_cpu by cpu_backend.c. Each one is the entry of struct pps__kernels_ops of
 * the same name (kernels_int.h): arguments are already checked, sizes are > 0.
 *
 * Reductions accumulate in double, in a fixed order (index order, or a fixed pattern of partial
 * sums), so that results do not depend on the thread or on anything but the inputs.
 */
#ifndef PPS_KERNELS_CPU_H
#define PPS_KERNELS_CPU_H

#include "kernels_int.h"

/* Column sums run over blocks of this many columns, with one double accumulator each. */
#define PPS__CPU_COL_BLOCK 64

/* cpu_gemm.c */
int pps__cpu_gemm(struct pps_kernels *k, int trans_a, int trans_b, int m, int n, int kdim,
                  float alpha, const float *a, const float *b, float beta, float *c);
/* Sets up the BLAS library for the backend, once per process. */
void pps__cpu_gemm_init(void);

/* cpu_elementwise.c */
int pps__cpu_bias_add(struct pps_kernels *k, int rows, int cols, const float *bias, float *y);
int pps__cpu_gelu_forward(struct pps_kernels *k, size_t n, const float *x, float *y);
int pps__cpu_gelu_backward(struct pps_kernels *k, size_t n, const float *x, const float *dy,
                           float *dx);
int pps__cpu_add(struct pps_kernels *k, size_t n, const float *a, const float *b, float *y);
int pps__cpu_scale(struct pps_kernels *k, size_t n, float alpha, float *x);

/* cpu_reduce.c */
int pps__cpu_bias_grad(struct pps_kernels *k, int rows, int cols, const float *dy, float *dbias);
int pps__cpu_sumsq(struct pps_kernels *k, size_t n, const float *x, double *out);
int pps__cpu_nonfinite(struct pps_kernels *k, size_t n, const float *x, size_t *out);

/* cpu_norm.c */
int pps__cpu_layernorm_forward(struct pps_kernels *k, int rows, int cols, float eps, const float *x,
                               const float *gamma, const float *beta, float *y, float *mean,
                               float *rstd);
int pps__cpu_layernorm_backward_input(struct pps_kernels *k, int rows, int cols, const float *x,
                                      const float *mean, const float *rstd, const float *gamma,
                                      const float *dy, float *dx);
int pps__cpu_layernorm_backward_params(struct pps_kernels *k, int rows, int cols, const float *x,
                                       const float *mean, const float *rstd, const float *dy,
                                       float *dgamma, float *dbeta);
int pps__cpu_layernorm_backward(struct pps_kernels *k, int rows, int cols, const float *x,
                                const float *mean, const float *rstd, const float *gamma,
                                const float *dy, float *dx, float *dgamma, float *dbeta);

/* cpu_embed.c */
int pps__cpu_embedding_forward(struct pps_kernels *k, int n, int dim, int vocab, const int32_t *ids,
                               const float *table, float *y);
int pps__cpu_embedding_backward(struct pps_kernels *k, int n, int dim, int vocab,
                                const int32_t *ids, const float *dy, float *dtable);

/* cpu_loss.c */
int pps__cpu_cross_entropy_forward(struct pps_kernels *k, int rows, int vocab, const float *logits,
                                   const int32_t *targets, float *lse, float *loss);
int pps__cpu_cross_entropy_backward(struct pps_kernels *k, int rows, int vocab, float dloss,
                                    const float *logits, const int32_t *targets, const float *lse,
                                    float *dlogits);

/* cpu_optim.c */
int pps__cpu_adamw(struct pps_kernels *k, size_t n, const struct pps_adamw *hp, long step,
                   const float *grad, float *param, float *m, float *v);

#endif
