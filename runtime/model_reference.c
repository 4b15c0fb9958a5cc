/*
 * model_reference.c - the single-process baseline of the gradient check: the whole model as one
 * chunk, through the same code a pipeline's chunks run, so the only differences between the two
 * are the copies at chunk boundaries (which move bits unchanged) and B and W being split or
 * fused (bitwise the same by the kernels' contract).
 */
#include <stdlib.h>

#include "model.h"

int pps_model_reference(const struct pps_model_spec *s, const char *backend, int m, int iter,
                        float **grads, size_t *n, double *loss, struct pps_err *err)
{
    struct pps_model_data *data = NULL;
    struct pps_compute *c = NULL;
    float *buf = NULL;
    size_t count = 0;
    int first_block[2], rc;

    if (!grads || !n)
        return pps_err_set(err, PPS_EINVAL, "model reference: no output");
    *grads = NULL;
    *n = 0;
    rc = pps_model_spec_check(s, err);
    if (rc < 0)
        goto out;
    rc = pps_model_data_new(s, &data, err);
    if (rc < 0)
        goto out;
    rc = pps_model_partition(s, 1, NULL, first_block, err);
    if (rc < 0)
        goto out;
    rc = pps_model_compute_new(s, backend, 1, 1, PPS_PLACE_LOOP, m, 0, 0, first_block, data, &c, err);
    if (rc < 0)
        goto out;
    rc = c->ops->zero_grads(c, err);
    for (int mb = 0; mb < m && rc == 0; mb++) {
        rc = c->ops->forward(c, iter, mb, NULL, NULL, err);
        if (rc == 0)
            rc = c->ops->backward_bw(c, iter, mb, NULL, NULL, err);
    }
    if (rc == 0)
        rc = c->ops->export_grads(c, NULL, &count, err);
    if (rc < 0)
        goto out;
    buf = malloc((count ? count : 1) * sizeof(float));
    if (!buf) {
        rc = pps_err_set(err, PPS_ENOMEM, "model reference: out of memory");
        goto out;
    }
    rc = c->ops->export_grads(c, buf, &count, err);
    if (rc < 0)
        goto out;
    if (loss)
        *loss = c->ops->loss_sum(c) / m;
    *grads = buf;
    *n = count;
    buf = NULL;
out:
    free(buf);
    if (c)
        c->ops->free(c);
    pps_model_data_free(data);
    return rc;
}
