/*
 * cuda_reduce.cu - the cuda backend's reductions: a bias's gradient (column sums), the sum of
 * squares for the gradient norm, and the count of non-finite values.
 *
 * The sum of squares and the count run over a grid of a size set by n alone (one thread per
 * element up to PPS__CUDA_MAX_BLOCKS blocks, then grid-stride), each block's sum in a fixed tree,
 * then one block adds the blocks' sums in a fixed tree: the same bits every run. They differ from
 * cpu_reduce.c's 8-way partial sums in rounding only.
 */
#include <math.h>

#include "cuda_dev.cuh"

/* The column sums of dy, added into dbias. */
struct bias_cols {
    static constexpr int n = 1;
    const float *dy;
    float *dbias;
    int cols;
    __device__ double value(int r, int c, int) const { return dy[(size_t)r * cols + c]; }
    __device__ float *out(int) const { return dbias; }
};

/* What one element adds: its square, or 1 when it is not finite. */
struct square {
    __device__ double operator()(float v) const { return (double)v * v; }
};
struct not_finite {
    __device__ double operator()(float v) const { return isfinite(v) ? 0.0 : 1.0; }
};

template <class G>
__global__ static void block_sums(size_t n, const float *x, G g, double *part)
{
    __shared__ double sh[PPS__CUDA_BLOCK];
    double acc = 0.0;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        acc += g(x[i]);
    acc = pps__cuda_block_sum(acc, sh);
    if (threadIdx.x == 0)
        part[blockIdx.x] = acc;
}

__global__ static void total_of(int parts, const double *part, double *out)
{
    __shared__ double sh[PPS__CUDA_BLOCK];
    double acc = pps__cuda_block_total(part, parts, sh);
    if (threadIdx.x == 0)
        *out = acc;
}

/* The sum of g over x, into *out on the host (waits for the stream). */
template <class G>
static int sum_to_host(struct pps_kernels *k, const char *what, size_t n, const float *x, G g,
                       double *out)
{
    struct pps__cuda *c = pps__cuda_of(k);
    unsigned blocks = pps__cuda_blocks(n);
    double *part = pps__cuda_scratch(k, (size_t)blocks + 1);
    cudaStream_t s = pps__cuda_stream(k);
    int rc;

    if (!part)
        return k->err.code;
    block_sums<G><<<blocks, PPS__CUDA_BLOCK, 0, s>>>(n, x, g, part);
    total_of<<<1, PPS__CUDA_BLOCK, 0, s>>>((int)blocks, part, part + blocks);
    if ((rc = pps__cuda_launched(k, what)) < 0 ||
        (rc = pps__cuda_check(k,
                              (int)cudaMemcpyAsync(c->host_out, part + blocks, sizeof(double),
                                                   cudaMemcpyDeviceToHost, s),
                              what)) < 0 ||
        (rc = pps__cuda_check(k, (int)cudaStreamSynchronize(s), what)) < 0)
        return rc;
    *out = *(const double *)c->host_out;
    return 0;
}

extern "C" {

int pps__cuda_bias_grad(struct pps_kernels *k, int rows, int cols, const float *dy, float *dbias)
{
    struct bias_cols f = {dy, dbias, cols};
    return pps__cuda_colsum(k, "bias_grad", rows, cols, f);
}

int pps__cuda_sumsq(struct pps_kernels *k, size_t n, const float *x, double *out)
{
    return sum_to_host(k, "sumsq", n, x, square(), out);
}

int pps__cuda_nonfinite(struct pps_kernels *k, size_t n, const float *x, size_t *out)
{
    double count = 0.0; /* exact: a count below 2^53 */
    int rc = sum_to_host(k, "nonfinite", n, x, not_finite(), &count);
    if (rc == 0)
        *out = (size_t)count;
    return rc;
}

} /* extern "C" */
