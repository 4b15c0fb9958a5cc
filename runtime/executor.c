/*
 * executor.c - one stage's loop over its action list (executor.h).
 *
 * The stage keeps one input and one output buffer, as large as its largest chunk's boundary:
 * a send copies (transport.h), so a buffer is free again as soon as the call returns. What an
 * iteration measured (loss, peak activations, peak pending W's) waits in a record until the
 * optimizer decides the iteration, which under post-validation happens one pass later. With a W
 * budget the stage runs its list as pps_schedule_apply_w_budget() reorders it, the same order the
 * analysis simulates.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "executor.h"
#include "host.h"

/* An iteration's figures until its metrics row is written. */
struct iter_rec {
    int iter;
    double loss;
    int64_t act_peak;
    int64_t pw_peak;
};

struct exec {
    const struct pps_exec_config *cfg;
    const struct pps_schedule *sched;
    struct pps_transport *t;
    struct pps_tracer *tr;
    int stage, p, v, m, nvs;
    float *in, *out;
    size_t floats; /* of in and out */
    int pass;      /* passes begun: the tag's iteration */
    int last_pass_iter;
    int zeroed;                   /* this pass's gradients are zeroed (settle_grads) */
    struct pps_schedule budgeted; /* the list reordered for the W budget, when there is one */
    struct pps_optim opt;
    struct iter_rec rec[2]; /* rec[iter & 1] */
    struct pps_exec_result *res;
    struct pps_host_probe host; /* this stage thread's CPU time and run delay */
    struct pps_host_sample host0;
    int64_t host_t0;
};

void pps_exec_config_init(struct pps_exec_config *c)
{
    memset(c, 0, sizeof(*c));
    c->optim_mode = PPS_OPTIM_SYNC;
    c->clip = 1.0;
    c->inject_nonfinite_iter = -1;
    c->fail_iter = -1;
}

/* ---- messages ------------------------------------------------------------------------------ */

/* The stage that holds virtual stage vs (the schedule's placement). */
static int stage_of(const struct exec *x, int vs)
{
    return pps_place_stage(x->sched->placement, x->p, vs);
}

static struct pps_msg_tag tag_of(const struct exec *x, int kind, int mb, int vstage)
{
    struct pps_msg_tag tag = {kind, x->pass, mb, vstage};
    return tag;
}

/*
 * The id both ends of a message give its spans (pps_trace_p2p_msg): the tag, which the two
 * stages compute alike and which no other message between them shares, packed into 63 bits.
 * 0 (no id) for a tag beyond the packing: 2^23 passes, 2^16 virtual stages, 2^22 microbatches.
 */
static int64_t msg_id(const struct pps_msg_tag *tag)
{
    if (tag->iter < 0 || tag->iter >= (1 << 22) || tag->vstage < 0 || tag->vstage >= (1 << 16) ||
        tag->mb < 0 || tag->mb >= (1 << 22) || tag->kind < 0 || tag->kind > 3)
        return 0;
    return 1 + (((int64_t)tag->iter << 40) | ((int64_t)tag->kind << 38) |
                ((int64_t)tag->vstage << 22) | tag->mb);
}

/* Receives into x->in what virtual stage `for_vs` waits for from stage src: a RECV span when it
 * was there, else a WAIT span for the time the receive blocked and a RECV at its end. From this
 * stage itself (one chunk to the next in the V placement) it is a copy, no link's traffic: no
 * span, and the stage sent it before, so it is there. */
static int recv_msg(struct exec *x, int src, int kind, int mb, int for_vs, size_t floats,
                    struct pps_err *err)
{
    struct pps_msg_tag tag = tag_of(x, kind, mb, for_vs);
    size_t bytes = floats * sizeof(float);
    int64_t t0 = pps_trace_now(), t1;
    int ready, rc;

    ready = x->t->ops->poll(x->t, src, &tag);
    rc = x->t->ops->recv(x->t, src, &tag, x->in, bytes, err);
    t1 = pps_trace_now();
    if (rc || src == x->stage)
        return rc;
    if (ready) {
        pps_trace_p2p_msg(x->tr, PPS_TRACE_RECV, x->stage, src, mb, (int64_t)bytes, t0, t1,
                          msg_id(&tag));
    } else {
        pps_trace_p2p_msg(x->tr, PPS_TRACE_WAIT, x->stage, src, mb, 0, t0, t1, msg_id(&tag));
        pps_trace_p2p_msg(x->tr, PPS_TRACE_RECV, x->stage, src, mb, (int64_t)bytes, t1, t1,
                          msg_id(&tag));
    }
    return 0;
}

static int send_msg(struct exec *x, int dst, int kind, int mb, int for_vs, size_t floats,
                    struct pps_err *err)
{
    struct pps_msg_tag tag = tag_of(x, kind, mb, for_vs);
    size_t bytes = floats * sizeof(float);
    int64_t t0 = pps_trace_now();
    int rc = x->t->ops->send(x->t, dst, &tag, x->out, bytes, err);

    if (dst != x->stage) /* to itself: a copy between its chunks, as recv_msg() says */
        pps_trace_p2p_msg(x->tr, PPS_TRACE_SEND, x->stage, dst, mb, (int64_t)bytes, t0,
                          pps_trace_now(), msg_id(&tag));
    return rc;
}

/* ---- actions ------------------------------------------------------------------------------- */

static int do_forward(struct exec *x, struct pps_compute *c, int iter, int mb, struct pps_err *err)
{
    int k = c->vstage, rc = 0;
    size_t n = c->ops->act_floats(c);

    if (k > 0)
        rc = recv_msg(x, stage_of(x, k - 1), PPS_MSG_ACT, mb, k, n, err);
    if (rc)
        return rc;
    pps_trace_begin(x->tr, PPS_TRACE_F, x->stage, c->chunk, mb);
    rc = c->ops->forward(c, iter, mb, k > 0 ? x->in : NULL, k < x->nvs - 1 ? x->out : NULL, err);
    pps_trace_end(x->tr);
    if (!rc && k < x->nvs - 1)
        rc = send_msg(x, stage_of(x, k + 1), PPS_MSG_ACT, mb, k + 1, n, err);
    return rc;
}

/* B, or BW when fused. */
static int do_backward(struct exec *x, struct pps_compute *c, int fused, int iter, int mb,
                       struct pps_err *err)
{
    int k = c->vstage, rc = 0;
    size_t n = c->ops->act_floats(c);
    const float *dy = NULL;
    float *dx = k > 0 ? x->out : NULL;

    if (k < x->nvs - 1) {
        rc = recv_msg(x, stage_of(x, k + 1), PPS_MSG_GRAD, mb, k, n, err);
        if (rc)
            return rc;
        dy = x->in;
        /* The injected overflow: an inf in one output gradient, as a mixed-precision run
         * would meet; B spreads it into this chunk's weight gradients and upstream. */
        if (iter == x->cfg->inject_nonfinite_iter && k == x->nvs - 2 && mb == 0 && n > 0)
            x->in[0] = INFINITY;
    }
    pps_trace_begin(x->tr, fused ? PPS_TRACE_BW : PPS_TRACE_B, x->stage, c->chunk, mb);
    if (fused)
        rc = c->ops->backward_bw(c, iter, mb, dy, dx, err);
    else
        rc = c->ops->backward_b(c, iter, mb, dy, dx, err);
    pps_trace_end(x->tr);
    if (!rc && k > 0)
        rc = send_msg(x, stage_of(x, k - 1), PPS_MSG_GRAD, mb, k - 1, n, err);
    return rc;
}

static int do_weights(struct exec *x, struct pps_compute *c, int iter, int mb, struct pps_err *err)
{
    int rc;

    pps_trace_begin(x->tr, PPS_TRACE_W, x->stage, c->chunk, mb);
    rc = c->ops->backward_w(c, iter, mb, err);
    pps_trace_end(x->tr);
    return rc;
}

static int do_action(struct exec *x, const struct pps_action *a, int iter, struct pps_err *err)
{
    struct pps_compute *c = x->cfg->chunks[a->chunk];

    switch (a->op) {
    case PPS_OP_F:
        return do_forward(x, c, iter, (int)a->mb, err);
    case PPS_OP_B:
        return do_backward(x, c, 0, iter, (int)a->mb, err);
    case PPS_OP_BW:
        return do_backward(x, c, 1, iter, (int)a->mb, err);
    case PPS_OP_W:
        return do_weights(x, c, iter, (int)a->mb, err);
    }
    return pps_err_set(err, PPS_ESCHEDULE, "stage %d: action with unknown op %d", x->stage, a->op);
}

/* ---- passes and iterations ----------------------------------------------------------------- */

static void track_memory(struct exec *x, struct iter_rec *r)
{
    int64_t act = 0, pw = 0;

    for (int c = 0; c < x->v; c++) {
        act += (int64_t)x->cfg->chunks[c]->ops->act_bytes(x->cfg->chunks[c]);
        pw += x->cfg->chunks[c]->ops->pending_w(x->cfg->chunks[c]);
    }
    if (act > r->act_peak)
        r->act_peak = act;
    if (pw > r->pw_peak)
        r->pw_peak = pw;
}

/* Before the pass's first W or BW: the optimizer settles
 * the previous iteration, then the gradients are zeroed. Not before: until then they hold the
 * previous iteration's, which a post-validation that fails steps with again. */
static int settle_grads(struct exec *x, struct pps_err *err)
{
    int rc = 0;

    if (x->zeroed)
        return 0;
    x->zeroed = 1;
    if (!x->cfg->no_step)
        rc = pps_optim_before_grads(&x->opt, err);
    for (int c = 0; c < x->v && !rc; c++)
        rc = x->cfg->chunks[c]->ops->zero_grads(x->cfg->chunks[c], err);
    return rc;
}

/* One pass over the stage's list for iteration iter. */
static int run_pass(struct exec *x, int iter, struct pps_err *err)
{
    struct iter_rec *r = &x->rec[iter & 1];
    struct pps_compute *lastc = x->cfg->chunks[x->v - 1];
    size_t len = pps_schedule_len(x->sched, x->stage);
    double loss_before = 0;
    int rc = 0;

    /* A chunk's loss sum restarts at a new iteration's first forward, not at a pass that repeats
     * an iteration: what this pass adds is the difference. */
    if (lastc->last && x->last_pass_iter == iter)
        loss_before = lastc->ops->loss_sum(lastc);
    x->zeroed = 0;
    for (size_t pos = 0; pos < len && !rc; pos++) {
        const struct pps_action *a = pps_schedule_at(x->sched, x->stage, pos);
        if (a->op == PPS_OP_W || a->op == PPS_OP_BW)
            rc = settle_grads(x, err);
        if (rc)
            break;
        rc = do_action(x, a, iter, err);
        if (!rc && !x->cfg->no_step)
            rc = pps_optim_poll(&x->opt, err);
        track_memory(x, r);
    }
    x->pass++;
    x->last_pass_iter = iter;
    if (rc)
        return rc;
    r->loss = lastc->last ? (lastc->ops->loss_sum(lastc) - loss_before) / x->m : NAN;
    return 0;
}

static void write_metric(struct exec *x, const struct pps_optim_verdict *vd)
{
    const struct iter_rec *r;

    if (vd->iter < 0)
        return;
    r = &x->rec[vd->iter & 1];
    pps_trace_metric(x->tr, vd->iter, x->stage, r->loss, vd->grad_norm, r->act_peak, r->pw_peak);
}

/*
 * What the stage thread got from the host since it began, as meta of its shard (host.h): the
 * CPU time it ran and the time it waited, runnable, for a core, over the wall time and the
 * iterations they cover. Cumulative, so that a reader at any moment divides one by the other.
 */
static void record_host(struct exec *x, int iters_done)
{
    struct pps_host_sample now;

    if (!x->tr)
        return;
    pps_host_probe_read(&x->host, &now);
    (void)pps_trace_meta_int(x->tr, "host_wall_ns", pps_trace_now() - x->host_t0);
    (void)pps_trace_meta_int(x->tr, "host_iters", iters_done);
    if (now.cpu_ns >= 0 && x->host0.cpu_ns >= 0)
        (void)pps_trace_meta_int(x->tr, "host_cpu_ns", now.cpu_ns - x->host0.cpu_ns);
    if (now.run_delay_ns >= 0 && x->host0.run_delay_ns >= 0)
        (void)pps_trace_meta_int(x->tr, "host_run_delay_ns",
                                 now.run_delay_ns - x->host0.run_delay_ns);
}

static int run_iteration(struct exec *x, int iter, struct pps_err *err)
{
    struct iter_rec *r = &x->rec[iter & 1];
    struct pps_optim_verdict vd;
    int rerun = 1, rc = 0;

    memset(r, 0, sizeof(*r));
    r->iter = iter;
    pps_trace_iteration(x->tr, iter);
    if (iter == x->cfg->fail_iter)
        return pps_err_set(err, PPS_EIO, "injected failure at iteration %d", iter);
    while (rerun && !rc) {
        rc = run_pass(x, iter, err);
        if (rc)
            break;
        if (x->cfg->no_step) {
            memset(&vd, 0, sizeof(vd));
            vd.iter = iter;
            vd.grad_norm = NAN;
            write_metric(x, &vd);
            break;
        }
        rc = pps_optim_end_pass(&x->opt, iter, &rerun, &vd, err);
        if (!rc)
            write_metric(x, &vd);
        if (!rc && rerun)
            x->res->reruns++;
    }
    if (!rc && x->cfg->on_iter && x->cfg->chunks[x->v - 1]->last)
        x->cfg->on_iter(x->cfg->arg, iter, r->loss);
    return rc;
}

/* ---- the stage ----------------------------------------------------------------------------- */

static int check_config(const struct pps_exec_config *cfg, struct pps_err *err)
{
    const struct pps_schedule *s = cfg->sched;

    if (!s || !cfg->t || !cfg->chunks || cfg->iters < 0)
        return pps_err_set(err, PPS_EINVAL, "executor: missing schedule, transport or chunks");
    if (cfg->stage < 0 || cfg->stage >= s->p || cfg->t->stage != cfg->stage || cfg->t->p != s->p)
        return pps_err_set(err, PPS_EINVAL,
                           "executor: stage %d with a transport for stage %d of %d, schedule of %d",
                           cfg->stage, cfg->t->stage, cfg->t->p, s->p);
    for (int c = 0; c < s->v; c++)
        if (!cfg->chunks[c] || cfg->chunks[c]->vstage != pps_schedule_vstage(s, cfg->stage, c))
            return pps_err_set(err, PPS_EINVAL,
                               "executor: stage %d's chunk %d is missing or "
                               "holds another virtual stage",
                               cfg->stage, c);
    if (cfg->w_budget < 0)
        return pps_err_set(err, PPS_EINVAL, "executor: a W budget of %d (0: none)", cfg->w_budget);
    if (cfg->inject_nonfinite_iter >= 0 && s->p * s->v < 2)
        return pps_err_set(err, PPS_EINVAL,
                           "injecting a non-finite gradient needs two virtual stages or more");
    return 0;
}

/* This stage failed: what it recorded goes to disk, then the others are told. */
static void fail_stage(struct exec *x, const struct pps_err *err)
{
    (void)pps_trace_flush(x->tr, NULL); /* the failure matters more than the trace's own */
    if (x->t)
        (void)x->t->ops->abort(x->t, err && err->msg[0] ? err->msg : "failed");
}

int pps_executor_run(const struct pps_exec_config *cfg, struct pps_exec_result *res,
                     struct pps_err *err)
{
    struct exec x;
    struct pps_optim_verdict vd;
    struct pps_err local = {0, ""};
    int rc;

    if (!err)
        err = &local; /* the abort needs the reason even when the caller does not */
    memset(res, 0, sizeof(*res));
    res->loss = NAN;
    memset(&x, 0, sizeof(x));
    x.budgeted.kind = -1;
    x.host.fd = -1;
    x.t = cfg->t;
    x.tr = cfg->tracer;
    rc = check_config(cfg, err);
    if (rc)
        goto out;
    x.cfg = cfg;
    x.sched = cfg->sched;
    x.stage = cfg->stage;
    x.p = x.sched->p;
    x.v = x.sched->v;
    x.m = x.sched->m;
    x.nvs = x.p * x.v;
    x.last_pass_iter = -1;
    x.res = res;
    for (int c = 0; c < x.v; c++) {
        size_t n = cfg->chunks[c]->ops->act_floats(cfg->chunks[c]);
        x.floats = n > x.floats ? n : x.floats;
    }
    x.in = calloc(x.floats ? x.floats : 1, sizeof(float));
    x.out = calloc(x.floats ? x.floats : 1, sizeof(float));
    if (!x.in || !x.out) {
        rc =
            pps_err_set(err, PPS_ENOMEM, "stage %d: out of memory for activation buffers", x.stage);
        goto out;
    }
    if (cfg->w_budget > 0) {
        /* Only this stage's list matters here; the others' budgets are their own. */
        int *budget = calloc((size_t)x.p, sizeof(int));
        if (!budget) {
            rc = pps_err_set(err, PPS_ENOMEM, "stage %d: out of memory", x.stage);
            goto out;
        }
        budget[x.stage] = cfg->w_budget;
        rc = pps_schedule_apply_w_budget(cfg->sched, budget, &x.budgeted, NULL, err);
        free(budget);
        if (rc)
            goto out;
        x.sched = &x.budgeted;
    }
    pps_optim_init(&x.opt, cfg->optim_mode, cfg->clip, x.stage, x.t, x.tr, cfg->chunks, x.v);
    /* The thread's trace buffer now, not inside the first op it measures. A refusal only
     * drops this stage's spans, counted: tracing never stops a run. */
    if (x.tr)
        (void)pps_trace_thread_init(x.tr);

    pps_host_probe_open(&x.host);
    pps_host_probe_read(&x.host, &x.host0);
    x.host_t0 = res->t_start_ns = pps_trace_now();
    for (int it = 0; it < cfg->iters && !rc; it++) {
        rc = run_iteration(&x, it, err);
        if (!rc)
            record_host(&x, it + 1);
    }
    if (!rc && !cfg->no_step) {
        rc = pps_optim_finish(&x.opt, &vd, err);
        if (!rc)
            write_metric(&x, &vd);
    }
    res->t_end_ns = pps_trace_now();
    res->loss = cfg->iters > 0 ? x.rec[(cfg->iters - 1) & 1].loss : NAN;
    res->steps = x.opt.step;
    res->skips = x.opt.skips;
    res->clips = x.opt.clips;
    res->rollbacks = x.opt.rollbacks;
out:
    if (rc)
        fail_stage(&x, err);
    pps_host_probe_close(&x.host);
    free(x.in);
    free(x.out);
    pps_schedule_release(&x.budgeted);
    return rc;
}
