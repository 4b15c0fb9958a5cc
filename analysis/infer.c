/*
 * infer.c - what a run does not say, read from what it did: its iterations (where no span is
 * labelled with one), p, m and v, and its schedule: the family whose generated order matches
 * the observed order of every stage's ops, or else the observed order itself, which the
 * prediction then simulates (a schedule is data). Runs that name their schedule, p, m and v
 * (ppscope's own) keep them; imported and NVTX-traced runs get them here.
 *
 * Iterations. Every schedule's per-stage list begins with the forward of microbatch 0 through
 * chunk 0, and a stage runs its whole list for one iteration before the next: on each stage,
 * each such forward starts an iteration. A span belongs to the last one that started at or
 * before it (the receive before it, to the previous iteration, as the NVTX injection counts).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis_int.h"

static int is_op(int kind)
{
    return kind == PPS_SPAN_F || kind == PPS_SPAN_B || kind == PPS_SPAN_W || kind == PPS_SPAN_BW;
}

int pps__analysis_needs_iters(const struct pps_run *run)
{
    for (int s = 0; s < run->n_stages; s++)
        for (size_t i = 0; i < run->stages[s].n; i++)
            if (pps_span_kind_is_compute(run->stages[s].spans[i].kind) &&
                run->stages[s].spans[i].iter >= 0)
                return 0;
    return 1;
}

/* Whether sp starts an iteration on its stage: the forward of microbatch 0 through chunk 0. */
static int starts_iter(const struct pps_span *sp)
{
    return sp->kind == PPS_SPAN_F && sp->mb <= 0 && sp->chunk <= 0;
}

/* Labels stage s's spans (sorted by start) from the starts in marks[0..n-1]. */
static void label_stage(struct pps_stage_spans *ss, const int64_t *marks, size_t n)
{
    size_t k = 0;

    for (size_t i = 0; i < ss->n; i++) {
        struct pps_span *sp = &ss->spans[i];

        while (k < n && marks[k] <= sp->start_ns)
            k++;
        sp->iter = k > 0 ? (int32_t)(k - 1) : 0;
    }
}

int pps__analysis_infer_iters(const struct pps_run *run, struct pps_run **out, struct pps_err *err)
{
    struct pps_run *copy = NULL;
    int64_t *marks = NULL, *ref = NULL;
    size_t n_ref = 0;
    int ret = 0;

    *out = NULL;
    if (!pps__analysis_needs_iters(run))
        return 0;
    copy = calloc(1, sizeof(*copy));
    if (!copy)
        goto oom;
    *copy = *run;
    copy->stages = calloc(run->n_stages ? (size_t)run->n_stages : 1, sizeof(*copy->stages));
    if (!copy->stages)
        goto oom;
    for (int s = 0; s < run->n_stages; s++) {
        size_t n = run->stages[s].n;

        copy->stages[s].n = n;
        copy->stages[s].spans = malloc((n ? n : 1) * sizeof(struct pps_span));
        if (!copy->stages[s].spans)
            goto oom;
        if (n) /* a stage without spans may have no array at all: memcpy from NULL is UB */
            memcpy(copy->stages[s].spans, run->stages[s].spans, n * sizeof(struct pps_span));
    }
    /* Each stage by its own starts; a stage with none (it runs no forward) by the lowest stage
     * that has some. */
    for (int s = 0; s < run->n_stages; s++) {
        const struct pps_stage_spans *ss = &run->stages[s];
        size_t n = 0;

        free(marks);
        marks = malloc((ss->n ? ss->n : 1) * sizeof(*marks));
        if (!marks)
            goto oom;
        for (size_t i = 0; i < ss->n; i++)
            if (starts_iter(&ss->spans[i]))
                marks[n++] = ss->spans[i].start_ns;
        if (n > 0 && !ref) {
            ref = marks;
            n_ref = n;
            marks = NULL;
            label_stage(&copy->stages[s], ref, n_ref);
        } else if (n > 0) {
            label_stage(&copy->stages[s], marks, n);
        }
    }
    for (int s = 0; s < run->n_stages && ref; s++) {
        int any = 0;

        for (size_t i = 0; i < run->stages[s].n && !any; i++)
            any = starts_iter(&run->stages[s].spans[i]);
        if (!any)
            label_stage(&copy->stages[s], ref, n_ref);
    }
    if (!ref) { /* no forward anywhere: nothing to count iterations by */
        pps__analysis_free_copy(copy);
        copy = NULL;
    }
    *out = copy;
    copy = NULL;
    goto out;
oom:
    ret = pps_err_set(err, PPS_ENOMEM, "out of memory labelling the run's iterations");
out:
    pps__analysis_free_copy(copy);
    free(marks);
    free(ref);
    return ret;
}

void pps__analysis_free_copy(struct pps_run *copy)
{
    if (!copy)
        return;
    for (int s = 0; copy->stages && s < copy->n_stages; s++)
        free(copy->stages[s].spans);
    free(copy->stages);
    free(copy);
}

void pps__analysis_infer_shape(const struct pps_run *run, struct pps_report *rep)
{
    int dense = 1, max_chunk = -1, max_mb = -1;

    /* p: the stages the run has, where they are 0..n-1 (a run of stage 1 alone has no p). */
    for (int s = 0; s < rep->n_stages; s++)
        dense &= rep->total[s].present == (s < rep->n_present);
    for (int s = 0; s < run->n_stages; s++)
        for (size_t i = 0; i < run->stages[s].n; i++) {
            const struct pps_span *sp = &run->stages[s].spans[i];

            if (!is_op(sp->kind))
                continue;
            max_chunk = sp->chunk > max_chunk ? sp->chunk : max_chunk;
            max_mb = sp->mb > max_mb ? sp->mb : max_mb;
        }
    if (rep->p < 1 && dense && rep->n_present >= 1) {
        rep->p = rep->n_present;
        rep->inferred |= PPS_INFERRED_P;
    }
    if (rep->m < 1 && max_mb >= 0) {
        rep->m = max_mb + 1;
        rep->inferred |= PPS_INFERRED_M;
    }
    if (run->v < 1 && max_chunk >= 1) {
        rep->v = max_chunk + 1;
        rep->inferred |= PPS_INFERRED_V;
    }
}

static int op_of(int kind)
{
    switch (kind) {
    case PPS_SPAN_F:
        return PPS_OP_F;
    case PPS_SPAN_B:
        return PPS_OP_B;
    case PPS_SPAN_W:
        return PPS_OP_W;
    default:
        return PPS_OP_BW;
    }
}

/* The label whose iteration holds the most common number of ops (the first such): a whole
 * iteration, not a partial one nor one that post-validation ran twice. -1 without ops. */
static int typical_iter(const struct pps_run *run, int32_t *label)
{
    int32_t lo = INT32_MAX, hi = -1;
    long *count = NULL;
    long best_n = 0, best_freq = 0;
    int ret = 0;

    *label = -1;
    for (int s = 0; s < run->n_stages; s++)
        for (size_t i = 0; i < run->stages[s].n; i++) {
            const struct pps_span *sp = &run->stages[s].spans[i];
            if (is_op(sp->kind) && sp->iter >= 0) {
                lo = sp->iter < lo ? sp->iter : lo;
                hi = sp->iter > hi ? sp->iter : hi;
            }
        }
    if (hi < 0 || (int64_t)hi - lo > 10000000)
        return 0; /* no ops labelled, or labels too sparse to count: no order */
    count = calloc((size_t)(hi - lo + 1), sizeof(*count));
    if (!count)
        return PPS_ENOMEM;
    for (int s = 0; s < run->n_stages; s++)
        for (size_t i = 0; i < run->stages[s].n; i++) {
            const struct pps_span *sp = &run->stages[s].spans[i];
            if (is_op(sp->kind) && sp->iter >= 0)
                count[sp->iter - lo]++;
        }
    for (int32_t a = 0; a <= hi - lo; a++) {
        long freq = 0;

        if (!count[a])
            continue;
        for (int32_t b = 0; b <= hi - lo; b++)
            freq += count[b] == count[a];
        if (freq > best_freq || (freq == best_freq && count[a] > best_n)) {
            best_freq = freq;
            best_n = count[a];
            *label = lo + a;
        }
        if (hi - lo > 4096 && best_freq > 1)
            break; /* enough to find a whole one; the quadratic count need not run on */
    }
    free(count);
    return ret;
}

/* The observed order of iteration label on stages 0..p-1 into sched (fresh). 0, 1 when the
 * run's spans do not make one (a stage with no op, or an op without a microbatch), or
 * PPS_ENOMEM. */
static int observed_order(const struct pps_run *run, const struct pps_report *rep, int32_t label,
                          struct pps_schedule *sched)
{
    size_t n = 0, k = 0;

    for (int s = 0; s < rep->p; s++)
        for (size_t i = 0; i < run->stages[s].n; i++)
            n += is_op(run->stages[s].spans[i].kind) && run->stages[s].spans[i].iter == label;
    if (n == 0 || pps_schedule_alloc(sched, rep->p, rep->m, rep->v, n) < 0)
        return n == 0 ? 1 : PPS_ENOMEM;
    sched->kind = -1;
    sched->placement = pps__analysis_placement(run, rep);
    for (int s = 0; s < rep->p; s++) {
        sched->start[s] = k;
        for (size_t i = 0; i < run->stages[s].n; i++) {
            const struct pps_span *sp = &run->stages[s].spans[i];
            struct pps_action *a;

            if (!is_op(sp->kind) || sp->iter != label)
                continue;
            if (sp->mb < 0 || sp->mb >= rep->m || sp->chunk >= rep->v)
                return 1;
            a = &sched->actions[k++];
            a->op = (uint8_t)op_of(sp->kind);
            a->chunk = (uint16_t)(sp->chunk > 0 ? sp->chunk : 0);
            a->mb = (uint32_t)sp->mb;
        }
        if (k == sched->start[s])
            return 1;
    }
    sched->start[rep->p] = k;
    return 0;
}

int pps__analysis_infer_schedule(const struct pps_run *run, struct pps_report *rep,
                                 struct pps_err *err)
{
    struct pps_schedule seen = PPS_SCHEDULE_INIT;
    struct pps_err perr = {0, ""};
    int32_t label;
    int rc, bad;

    if (rep->sched_kind >= 0 || rep->p < 1 || rep->m < 1)
        return 0;
    /* A custom schedule's run says its order: that, not what its spans show. */
    if ((rc = pps__analysis_stated_order(run, rep, err)) != 0)
        return rc < 0 ? rc : 0;
    if (rep->n_stages != rep->p)
        return 0;
    if ((rc = typical_iter(run, &label)) < 0)
        return pps_err_set(err, rc, "out of memory reading the run's order");
    if (label < 0)
        return 0;
    rc = observed_order(run, rep, label, &seen);
    if (rc < 0) {
        pps_schedule_release(&seen);
        return pps_err_set(err, rc, "out of memory for the run's observed order");
    }
    if (rc > 0) {
        pps_schedule_release(&seen);
        snprintf(rep->infer_note, sizeof(rep->infer_note),
                 "its ops do not make one order per stage (a stage without ops, or ops without "
                 "a microbatch)");
        return 0;
    }
    bad = pps_schedule_validate(&seen, NULL, &perr) < 0;
    if (bad && seen.v == 2 && seen.placement == PPS_PLACE_LOOP) {
        /* Two chunks a stage that cannot run placed in a loop may be placed in V (ZB-V,
         * DualPipeV: PyTorch's), which a run that does not name its schedule does not say. */
        seen.placement = PPS_PLACE_V;
        bad = pps_schedule_validate(&seen, NULL, NULL) < 0;
        if (bad)
            seen.placement = PPS_PLACE_LOOP; /* the loop's fault is the one said */
    }
    if (bad) {
        pps_schedule_release(&seen);
        snprintf(rep->infer_note, sizeof(rep->infer_note),
                 "its observed order is no schedule: %.200s", perr.msg);
        return 0;
    }
    /* The family whose generated order is the observed one, op for op. Not zb-auto: its order
     * is the costs' it was built for, which a run that does not name it does not say (and
     * building it is a search, not a lookup); such an order stays the observed one. */
    for (int k = 0; k < PPS_SCHED_KIND_COUNT; k++) {
        struct pps_schedule gen = PPS_SCHEDULE_INIT;
        int same = 0;

        if (k != PPS_SCHED_ZB_AUTO &&
            pps_schedule_check_params(k, rep->p, rep->m, rep->v, NULL) == 0 &&
            pps_schedule_generate(&gen, k, rep->p, rep->m, rep->v, NULL) == 0)
            same = pps_schedule_equal(&gen, &seen);
        pps_schedule_release(&gen);
        if (same) {
            rep->sched_kind = k;
            rep->inferred |= PPS_INFERRED_SCHEDULE;
            pps_schedule_release(&seen);
            return 0;
        }
    }
    rep->observed = seen;
    rep->inferred |= PPS_INFERRED_SCHEDULE;
    return 0;
}

int pps__analysis_placement(const struct pps_run *run, const struct pps_report *rep)
{
    int kind = rep && rep->sched_kind >= 0 ? rep->sched_kind
               : run && run->schedule      ? pps_sched_kind_parse(run->schedule)
                                           : -1;

    if (kind >= 0)
        return pps_sched_kind_placement(kind);
    /* An order no family's: the placement it was found to run in (pps__analysis_infer_schedule). */
    return rep && rep->observed.actions ? rep->observed.placement : PPS_PLACE_LOOP;
}

int pps_report_placement(const struct pps_report *rep)
{
    if (rep->sched_kind >= 0)
        return pps_sched_kind_placement(rep->sched_kind);
    return rep->observed.actions ? rep->observed.placement : PPS_PLACE_LOOP;
}

int pps_report_theory_v(const struct pps_report *rep)
{
    return pps_report_placement(rep) == PPS_PLACE_V ? 1 : rep->v;
}

double pps_report_zb_theory(const struct pps_report *rep, int *steady)
{
    double tf = 0, tb = 0, tw = 0, idle;

    if (steady)
        *steady = 0;
    if (rep->sched_kind < 0 || !pps_zb_theory_formula(rep->sched_kind) || rep->n_stages < 1 ||
        !rep->tf_ns || !rep->tb_ns || !rep->tw_ns || rep->fused_bw)
        return NAN;
    for (int s = 0; s < rep->n_stages; s++) {
        tf += rep->tf_ns[s] / rep->n_stages;
        tb += rep->tb_ns[s] / rep->n_stages;
        tw += rep->tw_ns[s] / rep->n_stages;
    }
    if (!(tf > 0 && tb > 0 && tw > 0))
        return NAN;
    /* zb-v's theory asks for equal costs, which a measured run never has exactly: within 5 %. */
    if (rep->sched_kind == PPS_SCHED_ZB_V && fabs(tf - tb) <= 0.05 * tf &&
        fabs(tw - tb) <= 0.05 * tf)
        tb = tw = tf;
    /* dualpipev's asks for tF = tB >= tW: the same 5 %. */
    if (rep->sched_kind == PPS_SCHED_DUALPIPEV && fabs(tf - tb) <= 0.05 * tf) {
        tb = tf;
        if (tw > tb && tw - tb <= 0.05 * tf)
            tw = tb;
    }
    idle = pps_zb_theory_idle(rep->sched_kind, rep->p, rep->m, rep->v, tf, tb, tw, steady);
    return isnan(idle) ? NAN : idle / (rep->m * (tf + tb + tw) + idle);
}

const char *pps_report_schedule_name(const struct pps_run *run, const struct pps_report *rep)
{
    if (rep->sched_kind >= 0)
        return pps_sched_kind_name(rep->sched_kind);
    if (run && run->schedule && run->schedule[0])
        return run->schedule;
    if (rep->observed.actions)
        return "custom";
    return NULL;
}
