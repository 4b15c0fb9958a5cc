/*
 * cuda_norm.cu - the cuda backend's layer normalization: forward, B (input gradient), W (gamma
 * and beta gradients) and BW. The arithmetic is cpu_norm.c's: row statistics in double, saved as
 * float, and xhat formed from the saved floats with the same float operations in every call, so
 * the backward sees exactly the xhat the forward used. A row is one block: its sums add each
 * thread's elements in order, then the threads' sums in a fixed tree (cuda_dev.cuh).
 */
#include <math.h>

#include "cuda_dev.cuh"

__global__ static void forward_kernel(int cols, float eps, const float *x, const float *gamma,
                                      const float *beta, float *y, float *mean, float *rstd)
{
    __shared__ double sh[PPS__CUDA_BLOCK];
    const float *xr = x + (size_t)blockIdx.x * cols;
    float *yr = y + (size_t)blockIdx.x * cols;
    double sum = 0.0, var = 0.0, mu;
    float m, s;

    for (int c = threadIdx.x; c < cols; c += blockDim.x)
        sum += xr[c];
    mu = pps__cuda_block_sum(sum, sh) / cols;
    /* Two passes, as on cpu: the variance from deviations. */
    for (int c = threadIdx.x; c < cols; c += blockDim.x) {
        double d = xr[c] - mu;
        var += d * d;
    }
    var = pps__cuda_block_sum(var, sh) / cols;
    m = (float)mu;
    s = (float)(1.0 / sqrt(var + eps));
    /* y may be x: every thread has read its elements into both sums above. */
    for (int c = threadIdx.x; c < cols; c += blockDim.x)
        yr[c] = (xr[c] - m) * s * gamma[c] + beta[c];
    if (threadIdx.x == 0) {
        mean[blockIdx.x] = m;
        rstd[blockIdx.x] = s;
    }
}

__global__ static void backward_input_kernel(int cols, const float *x, const float *mean,
                                             const float *rstd, const float *gamma,
                                             const float *dy, float *dx)
{
    __shared__ double sh[PPS__CUDA_BLOCK];
    size_t row = (size_t)blockIdx.x * cols;
    const float *xr = x + row, *dyr = dy + row;
    float *dxr = dx + row;
    float m = mean[blockIdx.x], s = rstd[blockIdx.x], mg, mgx;
    double sg = 0.0, sgx = 0.0;

    for (int c = threadIdx.x; c < cols; c += blockDim.x) {
        float g = dyr[c] * gamma[c];
        float xhat = (xr[c] - m) * s;
        sg += g;
        sgx += (double)g * xhat;
    }
    mg = (float)(pps__cuda_block_sum(sg, sh) / cols);
    mgx = (float)(pps__cuda_block_sum(sgx, sh) / cols);
    /* dx may be dy: the sums above have read all of dy's row (block_sum synchronizes). */
    for (int c = threadIdx.x; c < cols; c += blockDim.x) {
        float g = dyr[c] * gamma[c];
        float xhat = (xr[c] - m) * s;
        dxr[c] = s * (g - mg - xhat * mgx);
    }
}

/* The column sums of dy * xhat (into dgamma) and of dy (into dbeta). */
struct norm_cols {
    static constexpr int n = 2;
    const float *x, *mean, *rstd, *dy;
    float *dgamma, *dbeta;
    int cols;
    __device__ double value(int r, int c, int j) const
    {
        size_t i = (size_t)r * cols + c;
        if (j == 1)
            return dy[i];
        float xhat = (x[i] - mean[r]) * rstd[r];
        return (double)dy[i] * xhat;
    }
    __device__ float *out(int j) const { return j == 0 ? dgamma : dbeta; }
};

extern "C" {

int pps__cuda_layernorm_forward(struct pps_kernels *k, int rows, int cols, float eps,
                                const float *x, const float *gamma, const float *beta, float *y,
                                float *mean, float *rstd)
{
    forward_kernel<<<rows, PPS__CUDA_BLOCK, 0, pps__cuda_stream(k)>>>(cols, eps, x, gamma, beta,
                                                                      y, mean, rstd);
    return pps__cuda_launched(k, "layernorm_forward");
}

int pps__cuda_layernorm_backward_input(struct pps_kernels *k, int rows, int cols, const float *x,
                                       const float *mean, const float *rstd, const float *gamma,
                                       const float *dy, float *dx)
{
    backward_input_kernel<<<rows, PPS__CUDA_BLOCK, 0, pps__cuda_stream(k)>>>(cols, x, mean, rstd,
                                                                             gamma, dy, dx);
    return pps__cuda_launched(k, "layernorm_backward_input");
}

int pps__cuda_layernorm_backward_params(struct pps_kernels *k, int rows, int cols, const float *x,
                                        const float *mean, const float *rstd, const float *dy,
                                        float *dgamma, float *dbeta)
{
    struct norm_cols f = {x, mean, rstd, dy, dgamma, dbeta, cols};
    return pps__cuda_colsum(k, "layernorm_backward_params", rows, cols, f);
}

int pps__cuda_layernorm_backward(struct pps_kernels *k, int rows, int cols, const float *x,
                                 const float *mean, const float *rstd, const float *gamma,
                                 const float *dy, float *dx, float *dgamma, float *dbeta)
{
    /* BW is B then W, the same kernels in stream order: bitwise the split calls' results. */
    int rc = pps__cuda_layernorm_backward_input(k, rows, cols, x, mean, rstd, gamma, dy, dx);
    if (rc < 0)
        return rc;
    return pps__cuda_layernorm_backward_params(k, rows, cols, x, mean, rstd, dy, dgamma, dbeta);
}

} /* extern "C" */
