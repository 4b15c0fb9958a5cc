/*
 * analysis_fixture.h - runs built in memory for the analysis tests: stages of spans added by
 * hand, metadata by rank, sorted as the reader sorts them, and the report of one.
 */
#ifndef PPS_ANALYSIS_FIXTURE_H
#define PPS_ANALYSIS_FIXTURE_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
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

#endif
