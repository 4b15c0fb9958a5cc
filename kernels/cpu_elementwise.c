/*
 * cpu_elementwise.c - the cpu backend's elementwise calls: bias add, GELU forward and backward,
 * add, scale. Each output element depends on its own inputs only, so aliasing an output with an
 * input of the same index is safe.
 */
#include <math.h>

#include "cpu.h"

/* sqrt(2 / pi) and the cubic coefficient of the tanh approximation of GELU. */
#define GELU_S 0.7978845608028654f
#define GELU_C 0.044715f

int pps__cpu_bias_add(struct pps_kernels *k, int rows, int cols, const float *bias, float *y)
{
    for (int r = 0; r < rows; r++) {
        float *yr = y + (size_t)r * cols;
        for (int c = 0; c < cols; c++)
            yr[c] += bias[c];
    }
    return 0;
}

int pps__cpu_gelu_forward(struct pps_kernels *k, size_t n, const float *x, float *y)
{
    for (size_t i = 0; i < n; i++) {
        float v = x[i];
        float t = tanhf(GELU_S * (v + GELU_C * v * v * v));
        y[i] = 0.5f * v * (1.0f + t);
    }
    return 0;
}

int pps__cpu_gelu_backward(struct pps_kernels *k, size_t n, const float *x, const float *dy,
                           float *dx)
{
    for (size_t i = 0; i < n; i++) {
        float v = x[i];
        float t = tanhf(GELU_S * (v + GELU_C * v * v * v));
        /* d/dv of v/2 (1 + t(v)), with t' = (1 - t^2) * s * (1 + 3c v^2). */
        float dt = (1.0f - t * t) * GELU_S * (1.0f + 3.0f * GELU_C * v * v);
        dx[i] = dy[i] * (0.5f * (1.0f + t) + 0.5f * v * dt);
    }
    return 0;
}

int pps__cpu_add(struct pps_kernels *k, size_t n, const float *a, const float *b, float *y)
{
    for (size_t i = 0; i < n; i++)
        y[i] = a[i] + b[i];
    return 0;
}

int pps__cpu_scale(struct pps_kernels *k, size_t n, float alpha, float *x)
{
    for (size_t i = 0; i < n; i++)
        x[i] *= alpha;
    return 0;
}
