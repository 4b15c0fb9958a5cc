/*
 * model_optim.c - a chunk's optimizer side: zeroing and measuring the gradients, the AdamW step,
 * saving and restoring what the step changes (post-validation), and exporting parameters and
 * gradients in the fixed order the gradient check compares.
 */
#include <string.h>

#include "model_int.h"

static struct pps__model_chunk *chunk_of(struct pps_compute *c)
{
    return (struct pps__model_chunk *)(void *)c;
}

int pps__model_zero_grads(struct pps_compute *base, struct pps_err *err)
{
    struct pps__model_chunk *c = chunk_of(base);
    return pps__model_finish(c, pps_kernels_zero(c->k, c->grads, c->n_flat * sizeof(float)), err);
}

int pps__model_grad_stats(struct pps_compute *base, double *sumsq, size_t *nonfinite,
                          struct pps_err *err)
{
    struct pps__model_chunk *c = chunk_of(base);
    double total = 0;
    size_t bad = 0;
    int rc = 0;

    /* Per tensor, in export order: the same sums in the same order every time. */
    for (int i = 0; i < c->n_tensors && rc == 0; i++) {
        double s = 0;
        size_t nf = 0;
        rc = pps_kernels_sumsq(c->k, c->tensors[i].n, pps__model_grad(c, i), &s);
        if (rc == 0)
            rc = pps_kernels_nonfinite(c->k, c->tensors[i].n, pps__model_grad(c, i), &nf);
        total += s;
        bad += nf;
    }
    rc = pps__model_finish(c, rc, err);
    if (rc == 0) {
        if (sumsq)
            *sumsq = total;
        if (nonfinite)
            *nonfinite = bad;
    }
    return rc;
}

int pps__model_step(struct pps_compute *base, double grad_scale, long step, struct pps_err *err)
{
    struct pps__model_chunk *c = chunk_of(base);
    const float *g = c->grads;
    size_t bytes = c->n_flat * sizeof(float);
    int rc = 0;

    if (step < 1)
        return pps_err_set(err, PPS_EINVAL, "model vstage %d: optimizer step must be >= 1, got %ld",
                           base->vstage, step);
    if (c->n_flat == 0)
        return 0;
    /* Scaled into a copy: the gradients stay as they were, so a restored step can be redone. */
    if (grad_scale != 1.0) {
        if (!c->scaled)
            rc = pps_kernels_mem_alloc(c->k, bytes, (void **)&c->scaled);
        if (rc == 0)
            rc = pps_kernels_copy(c->k, c->scaled, c->grads, bytes);
        if (rc == 0)
            rc = pps_kernels_scale(c->k, c->n_flat, (float)grad_scale, c->scaled);
        g = c->scaled;
    }
    /* One call over the flat buffers: AdamW is elementwise, and the padding between tensors
     * (zero parameters, zero gradients) stays zero. */
    if (rc == 0)
        rc = pps_kernels_adamw(c->k, c->n_flat, &c->spec.adamw, step, g, c->params, c->mom1,
                               c->mom2);
    return pps__model_finish(c, rc, err);
}

int pps__model_save_state(struct pps_compute *base, struct pps_err *err)
{
    struct pps__model_chunk *c = chunk_of(base);
    size_t bytes = c->n_flat * sizeof(float);
    int rc = 0;

    if (!c->saved_params) {
        rc = pps_kernels_mem_alloc(c->k, bytes, (void **)&c->saved_params);
        if (rc == 0)
            rc = pps_kernels_mem_alloc(c->k, bytes, (void **)&c->saved_mom1);
        if (rc == 0)
            rc = pps_kernels_mem_alloc(c->k, bytes, (void **)&c->saved_mom2);
        if (rc < 0) {
            pps_kernels_mem_free(c->k, c->saved_params);
            pps_kernels_mem_free(c->k, c->saved_mom1);
            c->saved_params = c->saved_mom1 = c->saved_mom2 = NULL;
        }
    }
    if (rc == 0)
        rc = pps_kernels_copy(c->k, c->saved_params, c->params, bytes);
    if (rc == 0)
        rc = pps_kernels_copy(c->k, c->saved_mom1, c->mom1, bytes);
    if (rc == 0)
        rc = pps_kernels_copy(c->k, c->saved_mom2, c->mom2, bytes);
    return pps__model_finish(c, rc, err);
}

int pps__model_restore_state(struct pps_compute *base, struct pps_err *err)
{
    struct pps__model_chunk *c = chunk_of(base);
    size_t bytes = c->n_flat * sizeof(float);
    int rc;

    if (!c->saved_params)
        return pps_err_set(err, PPS_EINVAL, "model vstage %d: restore_state without save_state",
                           base->vstage);
    rc = pps_kernels_copy(c->k, c->params, c->saved_params, bytes);
    if (rc == 0)
        rc = pps_kernels_copy(c->k, c->mom1, c->saved_mom1, bytes);
    if (rc == 0)
        rc = pps_kernels_copy(c->k, c->mom2, c->saved_mom2, bytes);
    return pps__model_finish(c, rc, err);
}

/* Copies the tensors of flat (params or grads) out, packed, in export order. */
static int export_flat(struct pps__model_chunk *c, const float *flat, float *buf, size_t *n_out,
                       struct pps_err *err)
{
    size_t pos = 0;
    int rc = 0;

    if (buf)
        for (int i = 0; i < c->n_tensors && rc == 0; i++) {
            rc = pps_kernels_copy_out(c->k, buf + pos, flat + c->tensors[i].off,
                                      c->tensors[i].n * sizeof(float));
            pos += c->tensors[i].n;
        }
    rc = pps__model_finish(c, rc, err);
    if (rc == 0 && n_out)
        *n_out = c->n_params;
    return rc;
}

int pps__model_export_params(struct pps_compute *base, float *buf, size_t *n_out,
                             struct pps_err *err)
{
    struct pps__model_chunk *c = chunk_of(base);
    return export_flat(c, c->params, buf, n_out, err);
}

int pps__model_export_grads(struct pps_compute *base, float *buf, size_t *n_out,
                            struct pps_err *err)
{
    struct pps__model_chunk *c = chunk_of(base);
    return export_flat(c, c->grads, buf, n_out, err);
}
