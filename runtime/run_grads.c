/*
 * run_grads.c - --check-grads: the pipeline's gradients and loss against the single-process
 * reference (model_reference.c), and where a gradient sits in the model, for the message.
 *
 * Bitwise where the schedule adds the microbatches up as the reference does: each chunk's
 * weight gradients (W or BW) in microbatch order, and the last virtual stage's forwards (the
 * loss) too. Every built-in schedule does; a schedule from a file need not (PyTorch's LoopedBFS
 * runs its backwards last microbatch first), and floating-point addition in another order rounds
 * otherwise. There the check says so, names where the order departs, and compares within a
 * tolerance far below what a wrong or missing microbatch moves a gradient by.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run_int.h"

/* Each gradient within this share of its tensor's largest |gradient| (and the loss of itself)
 * where the order differs: float32 sums of m terms in another order differ by about m * 2^-24
 * of their terms' size, and one microbatch of m moves a gradient by about 1/m of it. */
#define ORDER_TOLERANCE 1e-4

/* The tensor that holds gradient index (the model's export order: embedding, each block's six,
 * the final norm's two, the head): its number, its name and the index past its end. */
static void tensor_at(const struct pps_model_spec *s, size_t index, int *tensor, size_t *end,
                      char *name, size_t len)
{
    size_t h = (size_t)s->hidden, inner = (size_t)s->mlp_ratio * h;
    const size_t block[6] = {h, h, h * inner, inner, inner * h, h};
    static const char *const block_names[6] = {"ln gamma", "ln beta", "w1", "b1", "w2", "b2"};
    size_t at = (size_t)PPS_MODEL_VOCAB * h;
    int t = 0;

    if (index < at) {
        *tensor = 0;
        *end = at;
        snprintf(name, len, "embedding");
        return;
    }
    for (int b = 0; b < s->layers; b++) {
        for (int k = 0; k < 6; k++) {
            t++;
            if (index < at + block[k]) {
                *tensor = t;
                *end = at + block[k];
                snprintf(name, len, "block %d %s", b, block_names[k]);
                return;
            }
            at += block[k];
        }
    }
    *tensor = t + 1 + (index >= at + h) + (index >= at + 2 * h);
    *end = index < at + h       ? at + h
           : index < at + 2 * h ? at + 2 * h
                                : SIZE_MAX; /* the head: the rest */
    snprintf(name, len, "%s",
             index < at + h       ? "final ln gamma"
             : index < at + 2 * h ? "final ln beta"
                                  : "head");
}

void pps_run_grad_tensor(const struct pps_model_spec *s, size_t index, int *tensor, char *name,
                         size_t len)
{
    size_t end;

    tensor_at(s, index, tensor, &end, name, len);
}

/*
 * Where sched adds microbatches out of order, into note (len bytes; "" where it does not): the
 * first stage and chunk whose weight gradients (W, BW) run a microbatch before a lower one, or
 * whose loss (the last virtual stage's forwards) does.
 */
static void order_note(const struct pps_schedule *sc, char *note, size_t len)
{
    int last = sc->p * sc->v - 1;

    note[0] = '\0';
    for (int s = 0; s < sc->p; s++)
        for (int c = 0; c < sc->v; c++) {
            long prev_w = -1, prev_f = -1;
            int loss = pps_schedule_vstage(sc, s, c) == last;

            for (size_t k = 0; k < pps_schedule_len(sc, s); k++) {
                const struct pps_action *a = pps_schedule_at(sc, s, k);
                int grads = a->op == PPS_OP_W || a->op == PPS_OP_BW;
                long *prev = grads ? &prev_w : &prev_f;

                if (a->chunk != c || (!grads && !(a->op == PPS_OP_F && loss)))
                    continue;
                if ((long)a->mb < *prev) {
                    snprintf(note, len,
                             "stage %d, chunk %d: its %s of microbatch %u comes after "
                             "microbatch %ld's",
                             s, c, grads ? "weight gradient" : "loss", (unsigned)a->mb, *prev);
                    return;
                }
                *prev = a->mb;
            }
        }
}

/* The largest |got - want| over its tensor's largest |want| (tensor_at's tensors), over every
 * gradient: one pass a tensor. */
static double max_rel_diff(const struct pps_model_spec *s, const float *got, const float *want,
                           size_t n)
{
    double worst = 0;

    for (size_t i = 0, end; i < n; i = end) {
        char name[64];
        int t;
        double top = 0;

        tensor_at(s, i, &t, &end, name, sizeof(name));
        if (end > n)
            end = n;
        for (size_t k = i; k < end; k++)
            top = fmax(top, fabs((double)want[k]));
        for (size_t k = i; k < end; k++) {
            double d = fabs((double)got[k] - (double)want[k]);
            double r = top > 0 ? d / top : d > 0 ? INFINITY : 0;

            if (!(r <= worst)) /* NaN counts as the worst */
                worst = isnan(r) ? INFINITY : r;
        }
    }
    return worst;
}

int pps__run_compare_grads(const struct pps__run_sched *rs, const float *grads, size_t n,
                           double loss_sum, struct pps_run_outcome *o, struct pps_err *err)
{
    float *ref = NULL;
    size_t n_ref = 0;
    double ref_loss = 0, loss = loss_sum / rs->m;
    int rc;

    /* The reference runs on the run's own backend (on cuda: one stream on the same GPU), so the
     * comparison is bitwise: backends differ from each other in rounding (kernels.h). */
    rc = pps_model_reference(&rs->cfg->model, pps_run_kernels_backend(rs->cfg->backend), rs->m, 0,
                             &ref, &n_ref, &ref_loss, err);
    if (rc)
        return rc;
    o->grads_checked = 1;
    o->n_grads = n_ref;
    o->first_diff = -1;
    for (size_t i = 0; i < n_ref && o->first_diff < 0; i++) {
        if (i >= n || memcmp(&grads[i], &ref[i], sizeof(float)) != 0) {
            o->first_diff = (long)i;
            o->diff_got = i < n ? grads[i] : NAN;
            o->diff_want = ref[i];
        }
    }
    if (o->first_diff < 0 && n != n_ref) {
        o->first_diff = (long)n_ref; /* the pipeline exported more than the model has */
        o->diff_got = grads[n_ref];
        o->diff_want = NAN;
    }
    o->grads_equal = o->first_diff < 0;
    o->ref_loss = ref_loss;
    o->loss_equal = memcmp(&loss, &ref_loss, sizeof(double)) == 0;
    /* Out of the reference's order, equal within the tolerance where not bitwise. */
    order_note(&rs->sched, o->order_note, sizeof(o->order_note));
    o->max_rel_diff = n == n_ref ? max_rel_diff(&rs->cfg->model, grads, ref, n) : INFINITY;
    if (o->order_note[0] && !(o->grads_equal && o->loss_equal)) {
        o->grads_equal |= n == n_ref && o->max_rel_diff <= ORDER_TOLERANCE;
        o->loss_equal |= fabs(loss - ref_loss) <= ORDER_TOLERANCE * fabs(ref_loss);
        o->tolerance = ORDER_TOLERANCE;
    }
    free(ref);
    return 0;
}
