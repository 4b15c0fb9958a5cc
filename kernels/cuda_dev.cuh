/*
 * cuda_dev.cuh - what the cuda backend's .cu files share: the stream of a context, grid sizes,
 * and the one block-wide sum every row reduction uses.
 *
 * The block sum adds in a fixed tree over a fixed block size (PPS__CUDA_BLOCK threads): thread t
 * first adds its elements t, t + B, t + 2B, ... in order, then the B partial sums are halved
 * pairwise in shared memory. The order depends on the shape and B alone, so the result is the
 * same bits on every run and every GPU of one architecture.
 */
#ifndef PPS_KERNELS_CUDA_DEV_CUH
#define PPS_KERNELS_CUDA_DEV_CUH

#include <cuda_runtime.h>

#include "cuda_backend.h"

/* Threads per block of every kernel (a power of two). */
#define PPS__CUDA_BLOCK 256
/* Most blocks a grid-stride kernel starts: a fixed count, whatever the device's SMs. */
#define PPS__CUDA_MAX_BLOCKS 1024

/* The context's stream, with its device made current for the launch that follows, and the
 * thread's last CUDA error cleared, so that pps__cuda_launched() judges this launch alone
 * (every earlier failure was returned by its own call). */
static inline cudaStream_t pps__cuda_stream(struct pps_kernels *k)
{
    struct pps__cuda *c = pps__cuda_of(k);
    cudaSetDevice(c->device);
    (void)cudaGetLastError();
    return (cudaStream_t)c->stream;
}

/* Blocks for n elements at one per thread, capped for grid-stride loops. */
static inline unsigned pps__cuda_blocks(size_t n)
{
    size_t b = (n + PPS__CUDA_BLOCK - 1) / PPS__CUDA_BLOCK;
    return (unsigned)(b < 1 ? 1 : b > PPS__CUDA_MAX_BLOCKS ? PPS__CUDA_MAX_BLOCKS : b);
}

/* The sum of every thread's v over the block, in a fixed tree; every thread gets it. sh holds
 * PPS__CUDA_BLOCK doubles. Call from all threads of the block. */
__device__ static inline double pps__cuda_block_sum(double v, double *sh)
{
    sh[threadIdx.x] = v;
    __syncthreads();
    for (int half = PPS__CUDA_BLOCK / 2; half > 0; half /= 2) {
        if ((int)threadIdx.x < half)
            sh[threadIdx.x] += sh[threadIdx.x + half];
        __syncthreads();
    }
    v = sh[0];
    __syncthreads(); /* sh may be reused by the caller's next sum */
    return v;
}

/* The sum of x[0..n-1] by one block (each thread its elements in order, then the fixed tree);
 * every thread gets it. */
__device__ static inline double pps__cuda_block_total(const double *x, int n, double *sh)
{
    double acc = 0.0;
    for (int i = threadIdx.x; i < n; i += blockDim.x)
        acc += x[i];
    return pps__cuda_block_sum(acc, sh);
}

/* Rows a column sum's thread adds before its partial sum is stored: sums of up to this many rows
 * are added in row order alone, as on cpu. */
#define PPS__CUDA_COL_CHUNK 64

/*
 * Column sums of a rows x cols matrix given by F: out[j][c] += sum over rows of f.value(r, c, j)
 * for each of the f.n (1 or 2) outputs, in double, added to the float outputs once. Rows are
 * taken PPS__CUDA_COL_CHUNK at a time in order by one thread per column (partial sums in
 * scratch), then the chunks' sums in chunk order: an order fixed by the shape alone.
 */
template <class F>
__global__ static void pps__cuda_colsum_chunks(int rows, int cols, F f, double *part)
{
    /* Chunks on x (up to 2^31 - 1 blocks), columns on y (cols / 256 blocks, at most 65535). */
    int c = blockIdx.y * blockDim.x + threadIdx.x, chunk = blockIdx.x;
    int r0 = chunk * PPS__CUDA_COL_CHUNK, r1 = min(rows, r0 + PPS__CUDA_COL_CHUNK);
    double acc[2] = {0.0, 0.0};

    if (c >= cols)
        return;
    for (int r = r0; r < r1; r++)
        for (int j = 0; j < F::n; j++)
            acc[j] += f.value(r, c, j);
    for (int j = 0; j < F::n; j++)
        part[((size_t)j * gridDim.x + chunk) * cols + c] = acc[j];
}

template <class F>
__global__ static void pps__cuda_colsum_total(int chunks, int cols, const double *part, F f)
{
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= cols)
        return;
    for (int j = 0; j < F::n; j++) {
        double acc = 0.0;
        for (int chunk = 0; chunk < chunks; chunk++)
            acc += part[((size_t)j * chunks + chunk) * cols + c];
        float *o = f.out(j);
        o[c] = (float)(o[c] + acc);
    }
}

/* Queues both kernels of a column sum on k's stream; 0 or k's error. */
template <class F>
static int pps__cuda_colsum(struct pps_kernels *k, const char *what, int rows, int cols, F f)
{
    int chunks = (int)(((size_t)rows + PPS__CUDA_COL_CHUNK - 1) / PPS__CUDA_COL_CHUNK);
    unsigned col_blocks = (unsigned)(((size_t)cols + PPS__CUDA_BLOCK - 1) / PPS__CUDA_BLOCK);
    double *part;
    cudaStream_t s;

    if (col_blocks > 65535)
        return pps__kernels_fail(k, PPS_EINVAL,
                                 "%s: %d columns is more than the cuda backend's %d", what, cols,
                                 65535 * PPS__CUDA_BLOCK);
    if (!(part = pps__cuda_scratch(k, (size_t)F::n * chunks * cols)))
        return k->err.code;
    s = pps__cuda_stream(k);
    pps__cuda_colsum_chunks<F>
        <<<dim3((unsigned)chunks, col_blocks), PPS__CUDA_BLOCK, 0, s>>>(rows, cols, f, part);
    pps__cuda_colsum_total<F><<<col_blocks, PPS__CUDA_BLOCK, 0, s>>>(chunks, cols, part, f);
    return pps__cuda_launched(k, what);
}

#endif
