/*
 * cpu_norm.c - the cpu backend's layer normalization: forward, B (input gradient), W (gamma and
 * beta gradients) and BW.
 *
 * Row statistics are computed in double and saved as float; the forward and both backward calls
 * form xhat = (x - mean) * rstd from the saved floats with the same float operations, so the
 * backward sees exactly the xhat the forward used.
 */
#include <math.h>

#include "cpu.h"

int pps__cpu_layernorm_forward(struct pps_kernels *k, int rows, int cols, float eps, const float *x,
                               const float *gamma, const float *beta, float *y, float *mean,
                               float *rstd)
{
    for (int r = 0; r < rows; r++) {
        const float *xr = x + (size_t)r * cols;
        float *yr = y + (size_t)r * cols;
        double sum = 0.0, var = 0.0, mu;
        float m, s;

        for (int c = 0; c < cols; c++)
            sum += xr[c];
        mu = sum / cols;
        /* Two passes: the variance from deviations, not from E[x^2] - E[x]^2, which cancels. */
        for (int c = 0; c < cols; c++) {
            double d = xr[c] - mu;
            var += d * d;
        }
        var /= cols;
        m = (float)mu;
        s = (float)(1.0 / sqrt(var + eps));
        /* y may be x: each element is read before it is written. */
        for (int c = 0; c < cols; c++)
            yr[c] = (xr[c] - m) * s * gamma[c] + beta[c];
        mean[r] = m;
        rstd[r] = s;
    }
    return 0;
}

int pps__cpu_layernorm_backward_input(struct pps_kernels *k, int rows, int cols, const float *x,
                                      const float *mean, const float *rstd, const float *gamma,
                                      const float *dy, float *dx)
{
    for (int r = 0; r < rows; r++) {
        const float *xr = x + (size_t)r * cols, *dyr = dy + (size_t)r * cols;
        float *dxr = dx + (size_t)r * cols;
        float m = mean[r], s = rstd[r], mg, mgx;
        double sg = 0.0, sgx = 0.0;

        for (int c = 0; c < cols; c++) {
            float g = dyr[c] * gamma[c];
            float xhat = (xr[c] - m) * s;
            sg += g;
            sgx += (double)g * xhat;
        }
        mg = (float)(sg / cols);
        mgx = (float)(sgx / cols);
        /* dx may be dy: the sums above have read all of dy's row. */
        for (int c = 0; c < cols; c++) {
            float g = dyr[c] * gamma[c];
            float xhat = (xr[c] - m) * s;
            dxr[c] = s * (g - mg - xhat * mgx);
        }
    }
    return 0;
}

int pps__cpu_layernorm_backward_params(struct pps_kernels *k, int rows, int cols, const float *x,
                                       const float *mean, const float *rstd, const float *dy,
                                       float *dgamma, float *dbeta)
{
    double acc_g[PPS__CPU_COL_BLOCK], acc_b[PPS__CPU_COL_BLOCK];

    /* Column sums as in pps__cpu_bias_grad: a block of columns, rows in order, in double. */
    for (int c0 = 0; c0 < cols; c0 += PPS__CPU_COL_BLOCK) {
        int nc = cols - c0 < PPS__CPU_COL_BLOCK ? cols - c0 : PPS__CPU_COL_BLOCK;
        for (int c = 0; c < nc; c++)
            acc_g[c] = acc_b[c] = 0.0;
        for (int r = 0; r < rows; r++) {
            const float *xr = x + (size_t)r * cols + c0, *dyr = dy + (size_t)r * cols + c0;
            float m = mean[r], s = rstd[r];
            for (int c = 0; c < nc; c++) {
                float xhat = (xr[c] - m) * s;
                acc_g[c] += (double)dyr[c] * xhat;
                acc_b[c] += dyr[c];
            }
        }
        for (int c = 0; c < nc; c++) {
            dgamma[c0 + c] = (float)(dgamma[c0 + c] + acc_g[c]);
            dbeta[c0 + c] = (float)(dbeta[c0 + c] + acc_b[c]);
        }
    }
    return 0;
}

int pps__cpu_layernorm_backward(struct pps_kernels *k, int rows, int cols, const float *x,
                                const float *mean, const float *rstd, const float *gamma,
                                const float *dy, float *dx, float *dgamma, float *dbeta)
{
    /* BW is B then W: the same operations in the same order, hence the same bits. */
    int rc = pps__cpu_layernorm_backward_input(k, rows, cols, x, mean, rstd, gamma, dy, dx);
    if (rc < 0)
        return rc;
    return pps__cpu_layernorm_backward_params(k, rows, cols, x, mean, rstd, dy, dgamma, dbeta);
}
