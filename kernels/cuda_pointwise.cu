/*
 * cuda_pointwise.cu - the cuda backend's calls where each output element depends on its own
 * inputs only: bias add, GELU forward and backward, add, scale and the AdamW step. The formulas
 * and their float operations are cpu_elementwise.c's and cpu_optim.c's, compiled without FMA
 * contraction, so they round alike (tanhf differs from the C library's by an ulp or two).
 * Aliasing an output with an input of the same index is safe.
 */
#include <math.h>

#include "cuda_dev.cuh"

#define GELU_S 0.7978845608028654f
#define GELU_C 0.044715f

/* for (i = first; i < n; i += stride), over the whole grid */
#define GRID_LOOP(i, n)                                                                            \
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < (n);                        \
         i += (size_t)gridDim.x * blockDim.x)

__global__ static void bias_add_kernel(size_t n, int cols, const float *bias, float *y)
{
    GRID_LOOP(i, n) y[i] += bias[i % cols];
}

__global__ static void gelu_forward_kernel(size_t n, const float *x, float *y)
{
    GRID_LOOP(i, n)
    {
        float v = x[i];
        float t = tanhf(GELU_S * (v + GELU_C * v * v * v));
        y[i] = 0.5f * v * (1.0f + t);
    }
}

__global__ static void gelu_backward_kernel(size_t n, const float *x, const float *dy, float *dx)
{
    GRID_LOOP(i, n)
    {
        float v = x[i];
        float t = tanhf(GELU_S * (v + GELU_C * v * v * v));
        float dt = (1.0f - t * t) * GELU_S * (1.0f + 3.0f * GELU_C * v * v);
        dx[i] = dy[i] * (0.5f * (1.0f + t) + 0.5f * v * dt);
    }
}

__global__ static void add_kernel(size_t n, const float *a, const float *b, float *y)
{
    GRID_LOOP(i, n) y[i] = a[i] + b[i];
}

__global__ static void scale_kernel(size_t n, float alpha, float *x)
{
    GRID_LOOP(i, n) x[i] *= alpha;
}

/* AdamW's per-call constants, computed on the host in double as cpu_optim.c does. */
struct adamw_consts {
    float step_size, sqrt_bc2, decay, b1, b2, eps;
};

__global__ static void adamw_kernel(size_t n, struct adamw_consts a, const float *grad,
                                    float *param, float *m, float *v)
{
    GRID_LOOP(i, n)
    {
        float g = grad[i];
        float p = param[i] * a.decay;
        float mi = a.b1 * m[i] + (1.0f - a.b1) * g;
        float vi = a.b2 * v[i] + (1.0f - a.b2) * g * g;
        float denom = sqrtf(vi) / a.sqrt_bc2 + a.eps;
        m[i] = mi;
        v[i] = vi;
        param[i] = p - a.step_size * mi / denom;
    }
}

extern "C" {

int pps__cuda_bias_add(struct pps_kernels *k, int rows, int cols, const float *bias, float *y)
{
    size_t n = (size_t)rows * cols;
    bias_add_kernel<<<pps__cuda_blocks(n), PPS__CUDA_BLOCK, 0, pps__cuda_stream(k)>>>(n, cols,
                                                                                     bias, y);
    return pps__cuda_launched(k, "bias_add");
}

int pps__cuda_gelu_forward(struct pps_kernels *k, size_t n, const float *x, float *y)
{
    gelu_forward_kernel<<<pps__cuda_blocks(n), PPS__CUDA_BLOCK, 0, pps__cuda_stream(k)>>>(n, x, y);
    return pps__cuda_launched(k, "gelu_forward");
}

int pps__cuda_gelu_backward(struct pps_kernels *k, size_t n, const float *x, const float *dy,
                            float *dx)
{
    gelu_backward_kernel<<<pps__cuda_blocks(n), PPS__CUDA_BLOCK, 0, pps__cuda_stream(k)>>>(n, x,
                                                                                          dy, dx);
    return pps__cuda_launched(k, "gelu_backward");
}

int pps__cuda_add(struct pps_kernels *k, size_t n, const float *a, const float *b, float *y)
{
    add_kernel<<<pps__cuda_blocks(n), PPS__CUDA_BLOCK, 0, pps__cuda_stream(k)>>>(n, a, b, y);
    return pps__cuda_launched(k, "add");
}

int pps__cuda_scale(struct pps_kernels *k, size_t n, float alpha, float *x)
{
    scale_kernel<<<pps__cuda_blocks(n), PPS__CUDA_BLOCK, 0, pps__cuda_stream(k)>>>(n, alpha, x);
    return pps__cuda_launched(k, "scale");
}

int pps__cuda_adamw(struct pps_kernels *k, size_t n, const struct pps_adamw *hp, long step,
                    const float *grad, float *param, float *m, float *v)
{
    double bc1 = 1.0 - pow(hp->beta1, (double)step), bc2 = 1.0 - pow(hp->beta2, (double)step);
    struct adamw_consts a;

    a.step_size = (float)(hp->lr / bc1);
    a.sqrt_bc2 = (float)sqrt(bc2);
    a.decay = 1.0f - hp->lr * hp->weight_decay;
    a.b1 = hp->beta1;
    a.b2 = hp->beta2;
    a.eps = hp->eps;
    adamw_kernel<<<pps__cuda_blocks(n), PPS__CUDA_BLOCK, 0, pps__cuda_stream(k)>>>(n, a, grad,
                                                                                  param, m, v);
    return pps__cuda_launched(k, "adamw");
}

} /* extern "C" */
