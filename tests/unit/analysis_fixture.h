/*
 * analysis_fixture.h - runs built in memory for the analysis tests: stages of spans added by
 * hand, metadata by rank, sorted as the reader sorts them, and the report of one; and a report
 * made by hand, for the verdict alone.
 */
#ifndef PPS_ANALYSIS_FIXTURE_H
#define PPS_ANALYSIS_FIXTURE_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <math.h>

#include "analysis.h"
#include "schedule.h"
#include "test.h"

static inline struct pps_run *run_new(int n_stages, const char *schedule, int p, int m, int v)
{
    struct pps_run *r = calloc(1, sizeof(*r));

    if (!r)
        abort();
    r->path = strdup("(test)");
    r->schedule = schedule ? strdup(schedule) : NULL;
    r->p = p;
    r->m = m;
    r->v = v;
    r->complete = 1;
    r->n_shards = n_stages;
    r->n_stages = n_stages;
    r->stages = calloc(n_stages ? (size_t)n_stages : 1, sizeof(*r->stages));
    if (!r->path || !r->stages || (schedule && !r->schedule))
        abort();
    return r;
}

static inline void run_add(struct pps_run *r, int stage, int kind, int iter, int mb, int64_t start,
                           int64_t end)
{
    struct pps_stage_spans *ss = &r->stages[stage];
    struct pps_span *sp = realloc(ss->spans, (ss->n + 1) * sizeof(*sp));

    if (!sp)
        abort();
    ss->spans = sp;
    sp = &ss->spans[ss->n++];
    memset(sp, 0, sizeof(*sp));
    sp->start_ns = start;
    sp->end_ns = end;
    sp->iter = iter;
    sp->mb = mb;
    sp->peer = -1;
    sp->name_id = -1;
    sp->stage = (int16_t)stage;
    sp->kind = (uint8_t)kind;
    r->n_spans++;
    if (iter + 1 > r->n_iters)
        r->n_iters = iter + 1;
}

/* Rank rank's meta key; run_meta() for rank 0. */
static inline void run_meta_rank(struct pps_run *r, int rank, const char *key, const char *value)
{
    struct pps_meta_entry *e = realloc(r->meta, (r->n_meta + 1) * sizeof(*e));

    if (!e)
        abort();
    r->meta = e;
    e = &r->meta[r->n_meta++];
    e->rank = rank;
    e->key = strdup(key);
    e->value = strdup(value);
    if (!e->key || !e->value)
        abort();
}

static inline void run_meta(struct pps_run *r, const char *key, const char *value)
{
    run_meta_rank(r, 0, key, value);
}

static inline void run_free(struct pps_run *r)
{
    if (!r)
        return;
    for (int s = 0; s < r->n_stages; s++)
        free(r->stages[s].spans);
    for (size_t i = 0; i < r->n_meta; i++) {
        free(r->meta[i].key);
        free(r->meta[i].value);
    }
    free(r->meta);
    free(r->stages);
    free(r->metrics);
    free(r->schedule);
    free(r->path);
    free(r);
}

static inline int span_cmp(const void *a, const void *b)
{
    const struct pps_span *x = a, *y = b;

    if (x->start_ns != y->start_ns)
        return x->start_ns < y->start_ns ? -1 : 1;
    return (x->end_ns > y->end_ns) - (x->end_ns < y->end_ns);
}

/* The reader's promise: each stage's spans sorted by start, then end. */
static inline void span_sort(struct pps_run *r)
{
    for (int s = 0; s < r->n_stages; s++)
        qsort(r->stages[s].spans, r->stages[s].n, sizeof(struct pps_span), span_cmp);
}

static inline struct pps_report *report_of(const struct pps_run *r)
{
    struct pps_report *rep = NULL;
    struct pps_err err = {0, ""};
    int rc = pps_analysis_report(r, &rep, &err);

    if (rc < 0)
        fprintf(stderr, "  pps_analysis_report: %s\n", err.msg);
    CHECK_EQ_INT(rc, 0);
    return rep;
}

/* A report for the verdict alone, made by hand: one whole iteration whose bubble is measured
 * against predicted within tolerance, and no what-if prediction (balanced, no comm, no overhead,
 * with the links) nor op spread (NaN). A test sets the figures it means the verdict to weigh. */
static inline void verdict_report(struct pps_report *rep, double measured, double predicted,
                                  double tolerance)
{
    memset(rep, 0, sizeof(*rep));
    rep->n_iters = rep->n_full = 1;
    rep->have_prediction = 1;
    rep->judged_measured = measured;
    rep->judged_predicted = rep->pred.bubble = predicted;
    rep->tolerance = tolerance;
    rep->pred_balanced = rep->pred_nocomm = rep->pred_noovh = rep->pred_links = rep->op_cv = NAN;
}

/* Nanoseconds per simulator time unit in the runs made from simulations. */
#define NS_PER_UNIT 1000.0

/* ---- runs made from a simulation ----------------------------------------------------------- */

static inline int span_kind_of(int op)
{
    switch (op) {
    case PPS_OP_F:
        return PPS_SPAN_F;
    case PPS_OP_B:
        return PPS_SPAN_B;
    case PPS_OP_W:
        return PPS_SPAN_W;
    default:
        return PPS_SPAN_BW;
    }
}

static inline int64_t ns_of(double units)
{
    return llround(units * NS_PER_UNIT);
}

/*
 * Simulates kind at (p, m, v) with costs and writes n_iters iterations of its timeline into a
 * run, back to back with gap_ns between them, each ending with every stage's optimizer step at
 * the barrier, as the simulator lays it out. The simulation stays in *res.
 */
static inline struct pps_run *run_from_sim(int kind, int p, int m, int v,
                                           const struct pps_sim_costs *c, int n_iters,
                                           int64_t gap_ns, struct pps_sim_result *res)
{
    struct pps_schedule sched = PPS_SCHEDULE_INIT;
    struct pps_err err = {0, ""};
    struct pps_run *r = NULL;

    memset(res, 0, sizeof(*res));
    if (pps_schedule_generate(&sched, kind, p, m, v, &err) < 0 ||
        pps_simulate(&sched, c, res, &err) < 0) {
        fprintf(stderr, "  %s\n", err.msg);
        CHECK(0);
        goto out;
    }
    r = run_new(p, pps_sched_kind_name(kind), p, m, v);
    for (int it = 0; it < n_iters; it++) {
        int64_t off = it * (ns_of(res->makespan) + gap_ns);

        for (int s = 0; s < p; s++) {
            for (size_t k = 0; k < pps_schedule_len(&sched, s); k++) {
                const struct pps_action *a = pps_schedule_at(&sched, s, k);
                const struct pps_sim_span *sp = &res->spans[sched.start[s] + k];

                run_add(r, s, span_kind_of(a->op), it, (int)a->mb, off + ns_of(sp->start),
                        off + ns_of(sp->end));
                r->stages[s].spans[r->stages[s].n - 1].chunk = (int16_t)a->chunk;
            }
            if (c->topt > 0)
                run_add(r, s, PPS_SPAN_OPT, it, -1, off + ns_of(res->makespan - c->topt),
                        off + ns_of(res->makespan));
        }
    }
    span_sort(r);
out:
    pps_schedule_release(&sched);
    return r;
}

#endif
