/*
 * cpu_embed.c - the cpu backend's embedding: a gather of table rows (forward), and the
 * scatter-add of their gradients in the order of the ids (W), so repeated ids add up the same
 * way every time.
 */
#include <string.h>

#include "cpu.h"

/* Checks every id before anything is written, so a bad batch changes nothing. */
static int check_ids(struct pps_kernels *k, const char *op, int n, int vocab, const int32_t *ids)
{
    for (int i = 0; i < n; i++)
        if (ids[i] < 0 || ids[i] >= vocab)
            return pps__kernels_fail(k, PPS_EINVAL, "%s: id %ld at position %d is outside 0..%d",
                                     op, (long)ids[i], i, vocab - 1);
    return 0;
}

int pps__cpu_embedding_forward(struct pps_kernels *k, int n, int dim, int vocab, const int32_t *ids,
                               const float *table, float *y)
{
    int rc = check_ids(k, "embedding_forward", n, vocab, ids);
    if (rc < 0)
        return rc;
    for (int i = 0; i < n; i++)
        memcpy(y + (size_t)i * dim, table + (size_t)ids[i] * dim, (size_t)dim * sizeof(float));
    return 0;
}

int pps__cpu_embedding_backward(struct pps_kernels *k, int n, int dim, int vocab,
                                const int32_t *ids, const float *dy, float *dtable)
{
    int rc = check_ids(k, "embedding_backward", n, vocab, ids);
    if (rc < 0)
        return rc;
    for (int i = 0; i < n; i++) {
        float *row = dtable + (size_t)ids[i] * dim;
        const float *dyi = dy + (size_t)i * dim;
        for (int c = 0; c < dim; c++)
            row[c] += dyi[c];
    }
    return 0;
}
