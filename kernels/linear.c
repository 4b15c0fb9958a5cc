/*
 * linear.c - the linear layer y = x w + b, as F, B, W and BW, built on gemm and the bias calls so
 * that every backend computes it the same way (and BW is B then W by construction).
 */
#include "kernels_int.h"

int pps_kernels_linear_forward(struct pps_kernels *k, int rows, int n_in, int n_out, const float *x,
                               const float *w, const float *b, float *y)
{
    int rc = pps_kernels_gemm(k, 0, 0, rows, n_out, n_in, 1.0f, x, w, 0.0f, y);
    if (rc < 0 || !b)
        return rc;
    return pps_kernels_bias_add(k, rows, n_out, b, y);
}

int pps_kernels_linear_backward_input(struct pps_kernels *k, int rows, int n_in, int n_out,
                                      const float *w, const float *dy, float *dx)
{
    /* dx (rows x n_in) = dy (rows x n_out) * w^T (w is n_in x n_out). */
    return pps_kernels_gemm(k, 0, 1, rows, n_in, n_out, 1.0f, dy, w, 0.0f, dx);
}

int pps_kernels_linear_backward_params(struct pps_kernels *k, int rows, int n_in, int n_out,
                                       const float *x, const float *dy, float *dw, float *db)
{
    /* dw (n_in x n_out) += x^T (x is rows x n_in) * dy (rows x n_out); beta 1 accumulates. */
    int rc = pps_kernels_gemm(k, 1, 0, n_in, n_out, rows, 1.0f, x, dy, 1.0f, dw);
    if (rc < 0 || !db)
        return rc;
    return pps_kernels_bias_grad(k, rows, n_out, dy, db);
}

int pps_kernels_linear_backward(struct pps_kernels *k, int rows, int n_in, int n_out,
                                const float *x, const float *w, const float *dy, float *dx,
                                float *dw, float *db)
{
    int rc = pps_kernels_linear_backward_input(k, rows, n_in, n_out, w, dy, dx);
    if (rc < 0)
        return rc;
    return pps_kernels_linear_backward_params(k, rows, n_in, n_out, x, dy, dw, db);
}
