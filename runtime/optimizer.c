/*
 * optimizer.c - one stage's optimizer step, synchronous or post-validated (optimizer.h).
 *
 * Both modes make the same decision from the same global sum (decide()), so they step with the
 * same scales; post-validation only changes when the decision is known, and undoes an optimistic
 * step that the decision does not allow.
 */
#include <math.h>
#include <string.h>

#include "optimizer.h"

const char *pps_optim_mode_name(int mode)
{
    return mode == PPS_OPTIM_POSTVAL ? "postval" : mode == PPS_OPTIM_SYNC ? "sync" : "?";
}

int pps_optim_mode_parse(const char *name)
{
    if (name && !strcmp(name, "sync"))
        return PPS_OPTIM_SYNC;
    if (name && !strcmp(name, "postval"))
        return PPS_OPTIM_POSTVAL;
    return -1;
}

void pps_optim_init(struct pps_optim *o, int mode, double clip, int stage, struct pps_transport *t,
                    struct pps_tracer *tracer, struct pps_compute **chunks, int v)
{
    memset(o, 0, sizeof(*o));
    o->mode = mode;
    o->clip = clip;
    o->stage = stage;
    o->t = t;
    o->tracer = tracer;
    o->chunks = chunks;
    o->v = v;
    o->pending_iter = -1;
}

/* The stage's sum of squares and non-finite count, its chunks in chunk order. */
static int local_stats(struct pps_optim *o, double x[2], struct pps_err *err)
{
    x[0] = 0;
    x[1] = 0;
    for (int c = 0; c < o->v; c++) {
        double sumsq = 0;
        size_t nonfinite = 0;
        int rc = o->chunks[c]->ops->grad_stats(o->chunks[c], &sumsq, &nonfinite, err);
        if (rc)
            return rc;
        x[0] += sumsq;
        x[1] += (double)nonfinite;
    }
    return 0;
}

/* What the global sum x allows: skip, or step with *scale. */
static void decide(const struct pps_optim *o, const double x[2], int iter,
                   struct pps_optim_verdict *vd, double *scale)
{
    memset(vd, 0, sizeof(*vd));
    vd->iter = iter;
    vd->grad_norm = sqrt(x[0]);
    *scale = 1;
    if (x[1] > 0 || !isfinite(x[0])) {
        vd->skipped = 1;
        if (isfinite(vd->grad_norm))
            vd->grad_norm = INFINITY;
    } else if (o->clip > 0 && vd->grad_norm > o->clip) {
        vd->clipped = 1;
        *scale = o->clip / vd->grad_norm;
    }
}

/* Steps every chunk as step number o->step + 1 with scale, saving state first when asked; one
 * OPT span. */
static int step_all(struct pps_optim *o, double scale, int save, struct pps_err *err)
{
    int rc = 0;

    pps_trace_begin(o->tracer, PPS_TRACE_OPT, o->stage, -1, -1);
    for (int c = 0; c < o->v && !rc; c++) {
        struct pps_compute *ch = o->chunks[c];
        if (save)
            rc = ch->ops->save_state(ch, err);
        if (!rc)
            rc = ch->ops->step(ch, scale, o->step + 1, err);
    }
    pps_trace_end(o->tracer);
    if (!rc)
        o->step++;
    return rc;
}

/* Undoes the optimistic step: every chunk restored, the step count back; one ROLLBACK span. */
static int roll_back(struct pps_optim *o, struct pps_err *err)
{
    int rc = 0;

    pps_trace_begin(o->tracer, PPS_TRACE_ROLLBACK, o->stage, -1, -1);
    for (int c = 0; c < o->v && !rc; c++)
        rc = o->chunks[c]->ops->restore_state(o->chunks[c], err);
    pps_trace_end(o->tracer);
    if (!rc) {
        o->step--;
        o->rollbacks++;
    }
    return rc;
}

/* Post-validation: collects the sum in flight, waiting if it has not completed (a WAIT span
 * for the time that took). */
static int collect(struct pps_optim *o, struct pps_err *err)
{
    int64_t t0;
    int rc;

    if (o->pending == 2)
        return 0;
    rc = o->t->ops->allreduce_test(o->t, err);
    if (rc == 0) {
        t0 = pps_trace_now();
        rc = o->t->ops->allreduce_wait(o->t, err);
        pps_trace_p2p(o->tracer, PPS_TRACE_WAIT, o->stage, -1, -1, 0, t0, pps_trace_now());
    }
    if (rc < 0) {
        o->pending = 0;
        return rc;
    }
    o->pending = 2;
    return 0;
}

/* Post-validation: decides the iteration in flight, with its gradients still in the chunks;
 * undoes and redoes (or skips) its step when the decision does not allow the optimistic one, and
 * then marks the pass running now invalid (it computed with parameters that did not stand). The
 * verdict waits in o until end_pass hands it out. */
static int validate(struct pps_optim *o, struct pps_err *err)
{
    struct pps_optim_verdict *vd = &o->verdict;
    double scale;
    int rc;

    rc = collect(o, err);
    if (rc)
        return rc;
    o->pending = 0;
    decide(o, o->x, o->pending_iter, vd, &scale);
    o->have_verdict = 1;
    if (!vd->skipped && !vd->clipped)
        return 0;
    o->invalid = 1;
    vd->rolled_back = 1;
    rc = roll_back(o, err);
    if (!rc && vd->clipped)
        rc = step_all(o, scale, 0, err);
    if (vd->skipped)
        o->skips++;
    if (vd->clipped)
        o->clips++;
    return rc;
}

/* Hands out the verdict waiting in o, if any. */
static void take_verdict(struct pps_optim *o, struct pps_optim_verdict *verdict)
{
    if (o->have_verdict)
        *verdict = o->verdict;
    o->have_verdict = 0;
}

int pps_optim_before_grads(struct pps_optim *o, struct pps_err *err)
{
    if (o->mode != PPS_OPTIM_POSTVAL || !o->pending)
        return 0;
    return validate(o, err);
}

int pps_optim_end_pass(struct pps_optim *o, int iter, int *rerun, struct pps_optim_verdict *verdict,
                       struct pps_err *err)
{
    double x[2], scale;
    int rc;
    int64_t t0;

    *rerun = 0;
    memset(verdict, 0, sizeof(*verdict));
    verdict->iter = -1;

    if (o->mode == PPS_OPTIM_SYNC) {
        rc = local_stats(o, x, err);
        if (rc)
            return rc;
        t0 = pps_trace_now();
        rc = o->t->ops->allreduce_sum(o->t, x, 2, err);
        pps_trace_p2p(o->tracer, PPS_TRACE_WAIT, o->stage, -1, -1, 0, t0, pps_trace_now());
        if (rc)
            return rc;
        decide(o, x, iter, verdict, &scale);
        if (verdict->skipped) {
            o->skips++;
            return 0;
        }
        o->clips += verdict->clipped;
        return step_all(o, scale, 0, err);
    }

    /* A pass without a W or BW never called before_grads: its gradients are still the previous
     * iteration's, so the decision can be made now. */
    if (o->pending && (rc = validate(o, err)))
        return rc;
    take_verdict(o, verdict);
    if (o->invalid) {
        o->invalid = 0;
        *rerun = 1;
        return 0;
    }
    rc = local_stats(o, x, err);
    if (!rc)
        rc = step_all(o, 1, 1, err);
    if (rc)
        return rc;
    o->x[0] = x[0];
    o->x[1] = x[1];
    rc = o->t->ops->allreduce_start(o->t, o->x, 2, err);
    if (rc)
        return rc;
    o->pending = 1;
    o->pending_iter = iter;
    return 0;
}

int pps_optim_poll(struct pps_optim *o, struct pps_err *err)
{
    int rc;

    if (o->pending != 1)
        return 0;
    rc = o->t->ops->allreduce_test(o->t, err);
    if (rc < 0) {
        o->pending = 0;
        return rc;
    }
    if (rc == 1)
        o->pending = 2;
    return 0;
}

int pps_optim_finish(struct pps_optim *o, struct pps_optim_verdict *verdict, struct pps_err *err)
{
    int rc = 0;

    memset(verdict, 0, sizeof(*verdict));
    verdict->iter = -1;
    if (o->pending)
        rc = validate(o, err);
    o->invalid = 0; /* no pass follows to rerun */
    take_verdict(o, verdict);
    return rc;
}
