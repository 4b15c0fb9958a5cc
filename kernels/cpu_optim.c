/*
 * cpu_optim.c - the cpu backend's AdamW step, in the order of torch.optim.AdamW: decoupled
 * weight decay first, then the moments, then the bias-corrected update.
 */
#include <math.h>

#include "cpu.h"

int pps__cpu_adamw(struct pps_kernels *k, size_t n, const struct pps_adamw *hp, long step,
                   const float *grad, float *param, float *m, float *v)
{
    /* The bias corrections, once per call, in double: beta^step underflows gracefully. */
    double bc1 = 1.0 - pow(hp->beta1, (double)step), bc2 = 1.0 - pow(hp->beta2, (double)step);
    float step_size = (float)(hp->lr / bc1);
    float sqrt_bc2 = (float)sqrt(bc2);
    float decay = 1.0f - hp->lr * hp->weight_decay;
    float b1 = hp->beta1, b2 = hp->beta2, eps = hp->eps;

    for (size_t i = 0; i < n; i++) {
        float g = grad[i];
        float p = param[i] * decay;
        float mi = b1 * m[i] + (1.0f - b1) * g;
        float vi = b2 * v[i] + (1.0f - b2) * g * g;
        float denom = sqrtf(vi) / sqrt_bc2 + eps;
        m[i] = mi;
        v[i] = vi;
        param[i] = p - step_size * mi / denom;
    }
    return 0;
}
