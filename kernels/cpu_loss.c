/*
 * cpu_loss.c - the cpu backend's softmax cross-entropy: the mean loss over a microbatch's tokens
 * (forward, saving each row's logsumexp) and the gradient of the logits (B).
 */
#include <math.h>

#include "cpu.h"

/* Checks every target before anything is written. */
static int check_targets(struct pps_kernels *k, const char *op, int rows, int vocab,
                         const int32_t *targets)
{
    for (int r = 0; r < rows; r++)
        if (targets[r] < 0 || targets[r] >= vocab)
            return pps__kernels_fail(k, PPS_EINVAL, "%s: target %ld at row %d is outside 0..%d", op,
                                     (long)targets[r], r, vocab - 1);
    return 0;
}

int pps__cpu_cross_entropy_forward(struct pps_kernels *k, int rows, int vocab, const float *logits,
                                   const int32_t *targets, float *lse, float *loss)
{
    double total = 0.0;
    int rc = check_targets(k, "cross_entropy_forward", rows, vocab, targets);
    if (rc < 0)
        return rc;
    for (int r = 0; r < rows; r++) {
        const float *lr = logits + (size_t)r * vocab;
        float mx = lr[0];
        double sum = 0.0, l;
        /* Shifted by the row's maximum so exp never overflows. */
        for (int c = 1; c < vocab; c++)
            if (lr[c] > mx)
                mx = lr[c];
        for (int c = 0; c < vocab; c++)
            sum += exp((double)lr[c] - mx);
        l = mx + log(sum);
        lse[r] = (float)l;
        total += l - lr[targets[r]];
    }
    *loss = (float)(total / rows);
    return 0;
}

int pps__cpu_cross_entropy_backward(struct pps_kernels *k, int rows, int vocab, float dloss,
                                    const float *logits, const int32_t *targets, const float *lse,
                                    float *dlogits)
{
    float s = (float)((double)dloss / rows);
    int rc = check_targets(k, "cross_entropy_backward", rows, vocab, targets);
    if (rc < 0)
        return rc;
    /* dlogits may be logits: each element is read before it is written. */
    for (int r = 0; r < rows; r++) {
        const float *lr = logits + (size_t)r * vocab;
        float *dr = dlogits + (size_t)r * vocab;
        double l = lse[r];
        for (int c = 0; c < vocab; c++) {
            float p = (float)exp((double)lr[c] - l);
            dr[c] = (p - (c == targets[r] ? 1.0f : 0.0f)) * s;
        }
    }
    return 0;
}
