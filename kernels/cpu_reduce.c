/*
 * cpu_reduce.c - the cpu backend's reductions: a bias's gradient (column sums), the sum of
 * squares for the gradient norm, and the count of non-finite values.
 *
 * Sums run in double, in an order fixed by the shape alone: column sums add rows in order 0, 1,
 * ..., rows-1; the sum of squares keeps 8 partial sums (element i into partial i % 8) and adds
 * them pairwise at the end.
 */
#include <math.h>

#include "cpu.h"

int pps__cpu_bias_grad(struct pps_kernels *k, int rows, int cols, const float *dy, float *dbias)
{
    double acc[PPS__CPU_COL_BLOCK];

    /* A block of columns at a time, so rows are read contiguously and the sums stay double. */
    for (int c0 = 0; c0 < cols; c0 += PPS__CPU_COL_BLOCK) {
        int nc = cols - c0 < PPS__CPU_COL_BLOCK ? cols - c0 : PPS__CPU_COL_BLOCK;
        for (int c = 0; c < nc; c++)
            acc[c] = 0.0;
        for (int r = 0; r < rows; r++) {
            const float *dyr = dy + (size_t)r * cols + c0;
            for (int c = 0; c < nc; c++)
                acc[c] += dyr[c];
        }
        for (int c = 0; c < nc; c++)
            dbias[c0 + c] = (float)(dbias[c0 + c] + acc[c]);
    }
    return 0;
}

int pps__cpu_sumsq(struct pps_kernels *k, size_t n, const float *x, double *out)
{
    double part[8] = {0};
    size_t i = 0;

    for (; i + 8 <= n; i += 8)
        for (int j = 0; j < 8; j++)
            part[j] += (double)x[i + j] * x[i + j];
    for (int j = 0; i < n; i++, j++)
        part[j] += (double)x[i] * x[i];
    *out =
        ((part[0] + part[1]) + (part[2] + part[3])) + ((part[4] + part[5]) + (part[6] + part[7]));
    return 0;
}

int pps__cpu_nonfinite(struct pps_kernels *k, size_t n, const float *x, size_t *out)
{
    size_t bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += !isfinite(x[i]);
    *out = bad;
    return 0;
}
