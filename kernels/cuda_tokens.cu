/*
 * cuda_tokens.cu - the cuda backend's calls that take token ids: the embedding (a gather of
 * table rows; W, the scatter-add of their gradients in the order of the ids) and the softmax
 * cross-entropy (forward, saving each row's logsumexp; B, the logits' gradient).
 *
 * Ids are checked on the device: a bad one is skipped, and the smallest position holding one is
 * kept (an integer atomicMin, so the same one every run) with its id, for the next sync to name
 * (cuda_backend.c). The outputs are then unspecified, as kernels.h allows.
 */
#include <math.h>

#include "cuda_dev.cuh"

/* Whether id is in 0..vocab-1; records it at position pos in *bad when not. */
__device__ static inline bool id_ok(int32_t id, int vocab, unsigned pos, unsigned long long *bad)
{
    if (id >= 0 && id < vocab)
        return true;
    atomicMin(bad, ((unsigned long long)pos << 32) | (uint32_t)id);
    return false;
}

__global__ static void embed_forward_kernel(int n, int dim, int vocab, const int32_t *ids,
                                            const float *table, float *y, unsigned long long *bad)
{
    size_t total = (size_t)n * dim;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < total;
         i += (size_t)gridDim.x * blockDim.x) {
        int row = (int)(i / dim), c = (int)(i % dim);
        int32_t id = ids[row];
        /* Each row's id is checked (and recorded) once, by its first column's thread. */
        if (c == 0 ? id_ok(id, vocab, row, bad) : id >= 0 && id < vocab)
            y[i] = table[(size_t)id * dim + c];
    }
}

/* One thread per column of the table adds the rows of dy in the order of the ids, as on cpu:
 * repeated ids add up in the same order every run, and the bits are cpu's. */
__global__ static void embed_backward_kernel(int n, int dim, int vocab, const int32_t *ids,
                                             const float *dy, float *dtable,
                                             unsigned long long *bad)
{
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= dim)
        return;
    for (int i = 0; i < n; i++) {
        int32_t id = ids[i];
        if (c == 0 ? id_ok(id, vocab, i, bad) : id >= 0 && id < vocab)
            dtable[(size_t)id * dim + c] += dy[(size_t)i * dim + c];
    }
}

/* A row's logsumexp into lse and its loss (lse - logit of the target) into row_loss; one block a
 * row. The maximum is exact in any order; the sum of exponentials adds in a fixed tree. */
__global__ static void ce_forward_rows(int vocab, const float *logits, const int32_t *targets,
                                       float *lse, double *row_loss, unsigned long long *bad)
{
    __shared__ double sh[PPS__CUDA_BLOCK];
    __shared__ float shm[PPS__CUDA_BLOCK];
    const float *lr = logits + (size_t)blockIdx.x * vocab;
    float mx = lr[0];
    double sum = 0.0, l;
    int32_t t = targets[blockIdx.x];

    for (int c = threadIdx.x; c < vocab; c += blockDim.x)
        mx = fmaxf(mx, lr[c]);
    shm[threadIdx.x] = mx;
    __syncthreads();
    for (int half = PPS__CUDA_BLOCK / 2; half > 0; half /= 2) {
        if ((int)threadIdx.x < half)
            shm[threadIdx.x] = fmaxf(shm[threadIdx.x], shm[threadIdx.x + half]);
        __syncthreads();
    }
    mx = shm[0];
    for (int c = threadIdx.x; c < vocab; c += blockDim.x)
        sum += exp((double)lr[c] - mx);
    sum = pps__cuda_block_sum(sum, sh);
    l = mx + log(sum);
    if (threadIdx.x == 0) {
        lse[blockIdx.x] = (float)l;
        row_loss[blockIdx.x] = id_ok(t, vocab, blockIdx.x, bad) ? l - lr[t] : 0.0;
    }
}

/* The mean of the rows' losses into *loss, in a fixed tree. */
__global__ static void ce_mean(int rows, const double *row_loss, float *loss)
{
    __shared__ double sh[PPS__CUDA_BLOCK];
    double acc = pps__cuda_block_total(row_loss, rows, sh);
    if (threadIdx.x == 0)
        *loss = (float)(acc / rows);
}

__global__ static void ce_backward_kernel(int rows, int vocab, float s, const float *logits,
                                          const int32_t *targets, const float *lse,
                                          float *dlogits, unsigned long long *bad)
{
    size_t total = (size_t)rows * vocab;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < total;
         i += (size_t)gridDim.x * blockDim.x) {
        int r = (int)(i / vocab), c = (int)(i % vocab);
        int32_t t = targets[r];
        float p;
        if (c == 0 && !id_ok(t, vocab, r, bad))
            continue;
        /* dlogits may be logits: each element is read before it is written. */
        p = (float)exp((double)logits[i] - (double)lse[r]);
        dlogits[i] = (p - (c == t ? 1.0f : 0.0f)) * s;
    }
}

/* The device slot for check, noting the call's vocab for the message. */
static unsigned long long *check_slot(struct pps_kernels *k, int check, int vocab)
{
    struct pps__cuda *c = pps__cuda_of(k);
    c->vocab[check] = vocab;
    c->bad_pending = 1;
    return c->bad + check;
}

extern "C" {

int pps__cuda_embedding_forward(struct pps_kernels *k, int n, int dim, int vocab,
                                const int32_t *ids, const float *table, float *y)
{
    unsigned long long *bad = check_slot(k, PPS__CUDA_CHECK_EMBED_F, vocab);
    embed_forward_kernel<<<pps__cuda_blocks((size_t)n * dim), PPS__CUDA_BLOCK, 0,
                           pps__cuda_stream(k)>>>(n, dim, vocab, ids, table, y, bad);
    return pps__cuda_launched(k, "embedding_forward");
}

int pps__cuda_embedding_backward(struct pps_kernels *k, int n, int dim, int vocab,
                                 const int32_t *ids, const float *dy, float *dtable)
{
    unsigned long long *bad = check_slot(k, PPS__CUDA_CHECK_EMBED_B, vocab);
    embed_backward_kernel<<<(dim + PPS__CUDA_BLOCK - 1) / PPS__CUDA_BLOCK, PPS__CUDA_BLOCK, 0,
                            pps__cuda_stream(k)>>>(n, dim, vocab, ids, dy, dtable, bad);
    return pps__cuda_launched(k, "embedding_backward");
}

int pps__cuda_cross_entropy_forward(struct pps_kernels *k, int rows, int vocab,
                                    const float *logits, const int32_t *targets, float *lse,
                                    float *loss)
{
    unsigned long long *bad = check_slot(k, PPS__CUDA_CHECK_CE_F, vocab);
    double *row_loss = pps__cuda_scratch(k, (size_t)rows);
    cudaStream_t s = pps__cuda_stream(k);

    if (!row_loss)
        return k->err.code;
    ce_forward_rows<<<rows, PPS__CUDA_BLOCK, 0, s>>>(vocab, logits, targets, lse, row_loss, bad);
    ce_mean<<<1, PPS__CUDA_BLOCK, 0, s>>>(rows, row_loss, loss);
    return pps__cuda_launched(k, "cross_entropy_forward");
}

int pps__cuda_cross_entropy_backward(struct pps_kernels *k, int rows, int vocab, float dloss,
                                     const float *logits, const int32_t *targets,
                                     const float *lse, float *dlogits)
{
    unsigned long long *bad = check_slot(k, PPS__CUDA_CHECK_CE_B, vocab);
    float s = (float)((double)dloss / rows);
    ce_backward_kernel<<<pps__cuda_blocks((size_t)rows * vocab), PPS__CUDA_BLOCK, 0,
                         pps__cuda_stream(k)>>>(rows, vocab, s, logits, targets, lse, dlogits,
                                                bad);
    return pps__cuda_launched(k, "cross_entropy_backward");
}

} /* extern "C" */
