/*
 * summary.c - a report's measurement as bytes, and the report again from them.
 *
 * What the report measures from the spans (per iteration, per stage and per kind: the windows,
 * busy time, op counts, idle by phase; per stage: op costs, overhead, peers; the links; the
 * observed schedule; the critical path) is written field by field (summary_codec.h). Read back,
 * it is completed as the report from spans is: the host, the prediction and the verdict come from
 * the run's metadata and those figures (pps__analysis_derive), so the two agree figure for
 * figure. A double is written as its 8 bytes: NaN and every last bit survive.
 *
 * Of the critical path, every iteration's figures are kept, and the steps of the typical one
 * only: the report shows that one's chain.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis_int.h"
#include "summary_codec.h"

enum { K = PPS_SPAN_KIND_COUNT, PH = PPS_PHASE_COUNT };

/* Scratch arrays for one field of n records. */
struct cols {
    int64_t *i;
    double *d;
};

static int cols_alloc(struct cols *c, size_t n)
{
    c->i = malloc((n ? n : 1) * sizeof(*c->i));
    c->d = malloc((n ? n : 1) * sizeof(*c->d));
    return c->i && c->d ? 0 : -1;
}

static void cols_free(struct cols *c)
{
    free(c->i);
    free(c->d);
    c->i = NULL;
    c->d = NULL;
}

/* The stage stats of n records, record r's at st(r, ctx): fields "<pre>.<name>". */
typedef struct pps_stage_stats *(*stats_at)(void *ctx, size_t r);

static void name_of(char *buf, size_t len, const char *pre, const char *name)
{
    snprintf(buf, len, "%s.%s", pre, name);
}

/* The fields of a stage stats record, each as its offset: doubles and their counts. */
#define STAGE_DOUBLES(X)                                                                           \
    X(compute_ns)                                                                                  \
    X(idle_ns)                                                                                     \
    X(wait_ns)                                                                                     \
    X(idle_frac)

static int put_stats(struct pps__sum_out *o, const char *pre, stats_at at, void *ctx, size_t n)
{
    struct cols c;
    char name[96];

    if (cols_alloc(&c, n * K))
        return -1;
    for (size_t r = 0; r < n; r++)
        c.i[r] = at(ctx, r)->stage;
    name_of(name, sizeof(name), pre, "stage");
    pps__sum_i64s(o, name, c.i, n);
    for (size_t r = 0; r < n; r++)
        c.i[r] = at(ctx, r)->present;
    name_of(name, sizeof(name), pre, "present");
    pps__sum_i64s(o, name, c.i, n);
#define PUT_D(f)                                                                                   \
    for (size_t r = 0; r < n; r++)                                                                 \
        c.d[r] = at(ctx, r)->f;                                                                    \
    name_of(name, sizeof(name), pre, #f);                                                          \
    pps__sum_f64s(o, name, c.d, n);
    STAGE_DOUBLES(PUT_D)
#undef PUT_D
    for (size_t r = 0; r < n; r++)
        for (int k = 0; k < K; k++) {
            c.d[r * K + k] = at(ctx, r)->busy_ns[k];
            c.i[r * K + k] = at(ctx, r)->n_ops[k];
        }
    name_of(name, sizeof(name), pre, "busy_ns");
    pps__sum_f64s(o, name, c.d, n * K);
    name_of(name, sizeof(name), pre, "n_ops");
    pps__sum_i64s(o, name, c.i, n * K);
    for (size_t r = 0; r < n; r++)
        for (int k = 0; k < PH; k++)
            c.d[r * PH + k] = at(ctx, r)->phase_idle_ns[k];
    name_of(name, sizeof(name), pre, "phase_idle_ns");
    pps__sum_f64s(o, name, c.d, n * PH);
    cols_free(&c);
    return 0;
}

static int get_stats(const struct pps__sum_in *in, const char *pre, stats_at at, void *ctx,
                     size_t n, struct pps_err *err)
{
    struct cols c;
    char name[96];
    int rc = 0;

    if (cols_alloc(&c, n * K))
        return pps_err_set(err, PPS_ENOMEM, "out of memory reading a summary");
    name_of(name, sizeof(name), pre, "stage");
    if ((rc = pps__sum_get_i64s(in, name, c.i, n, err)))
        goto out;
    for (size_t r = 0; r < n; r++)
        at(ctx, r)->stage = (int)c.i[r];
    name_of(name, sizeof(name), pre, "present");
    if ((rc = pps__sum_get_i64s(in, name, c.i, n, err)))
        goto out;
    for (size_t r = 0; r < n; r++)
        at(ctx, r)->present = (int)c.i[r];
#define GET_D(f)                                                                                   \
    name_of(name, sizeof(name), pre, #f);                                                          \
    if ((rc = pps__sum_get_f64s(in, name, c.d, n, err)))                                           \
        goto out;                                                                                  \
    for (size_t r = 0; r < n; r++)                                                                 \
        at(ctx, r)->f = c.d[r];
    STAGE_DOUBLES(GET_D)
#undef GET_D
    name_of(name, sizeof(name), pre, "busy_ns");
    if ((rc = pps__sum_get_f64s(in, name, c.d, n * K, err)))
        goto out;
    name_of(name, sizeof(name), pre, "n_ops");
    if ((rc = pps__sum_get_i64s(in, name, c.i, n * K, err)))
        goto out;
    for (size_t r = 0; r < n; r++)
        for (int k = 0; k < K; k++) {
            at(ctx, r)->busy_ns[k] = c.d[r * K + k];
            at(ctx, r)->n_ops[k] = (long)c.i[r * K + k];
        }
    name_of(name, sizeof(name), pre, "phase_idle_ns");
    if ((rc = pps__sum_get_f64s(in, name, c.d, n * PH, err)))
        goto out;
    for (size_t r = 0; r < n; r++)
        for (int k = 0; k < PH; k++)
            at(ctx, r)->phase_idle_ns[k] = c.d[r * PH + k];
out:
    cols_free(&c);
    return rc;
}

static struct pps_stage_stats *total_at(void *ctx, size_t r)
{
    return &((struct pps_report *)ctx)->total[r];
}

/* The iterations' stages, iteration by iteration. */
static struct pps_stage_stats *iter_stage_at(void *ctx, size_t r)
{
    struct pps_report *rep = ctx;

    return &rep->iters[r / (size_t)rep->n_stages].stages[r % (size_t)rep->n_stages];
}

/* ---- the report's scalars: one table for both directions -------------------------------- */

#define REPORT_INTS(X)                                                                             \
    X(p)                                                                                           \
    X(m)                                                                                           \
    X(v)                                                                                           \
    X(sched_kind)                                                                                  \
    X(inferred)                                                                                    \
    X(complete) X(dropped) X(n_outside) X(n_no_iter) X(n_full) X(planned_iters) X(n_missing)       \
        X(missing_first) X(missing_last) X(n_present) X(n_device_stages) X(postval) X(fused_bw)    \
            X(have_ovh) X(tcomm_measured) X(op_cv_stage) X(op_cv_kind) X(basis)

#define REPORT_DOUBLES(X)                                                                          \
    X(total_window_ns)                                                                             \
    X(bubble)                                                                                      \
    X(device_bubble)                                                                               \
    X(bubble_spread)                                                                               \
    X(steady_period_ns)                                                                            \
    X(steady_bubble) X(steady_spread) X(iter_ns) X(bubble_quoted) X(bubble_exact) X(tcomm_ns)      \
        X(topt_ns) X(op_cv)

/* The links' fields, and the critical path's (the path's own, and each iteration's). */
#define LINK_INTS(X)       X(from) X(to) X(dup_ids) X(n_msgs) X(n_blocked) X(bounded)
#define LINK_DOUBLES(X)    X(skew_ns) X(latency_ns) X(min_ns)
#define CP_INTS(X)         X(p) X(v) X(messages) X(typical)
#define CP_ITER_INTS(X)    X(iter) X(partial) X(t0) X(t1) X(n_steps)
#define CP_ITER_DOUBLES(X) X(window_ns) X(length_ns) X(comm_ns) X(wait_ns)

/* Per stage arrays of the report. */
#define STAGE_ARRAYS_D(X) X(tf_ns) X(tb_ns) X(tw_ns) X(ovh_ns)

static void put_report(struct pps__sum_out *o, const struct pps_report *rep, struct cols *c)
{
    size_t ns = (size_t)rep->n_stages, ni = (size_t)rep->n_iters;

#define PUT_I(f) pps__sum_i64(o, "report." #f, (int64_t)rep->f);
#define PUT_D(f) pps__sum_f64(o, "report." #f, rep->f);
    REPORT_INTS(PUT_I)
    REPORT_DOUBLES(PUT_D)
#undef PUT_I
#undef PUT_D
    pps__sum_i64(o, "report.n_stages", rep->n_stages);
    pps__sum_i64(o, "report.n_iters", rep->n_iters);
    pps__sum_f64s(o, "report.phase_bubble", rep->phase_bubble, PH);
    pps__sum_text(o, "report.infer_note", rep->infer_note);
#define PUT_A(f) pps__sum_f64s(o, "stage." #f, rep->f, ns);
    STAGE_ARRAYS_D(PUT_A)
#undef PUT_A
    pps__sum_i64s(o, "stage.spans", rep->stage_spans, ns);
    for (size_t s = 0; s < ns; s++)
        c->i[s] = rep->wait_peer[s];
    pps__sum_i64s(o, "stage.wait_peer", c->i, ns);
    for (size_t s = 0; s < ns; s++)
        c->i[s] = rep->recv_peer[s];
    pps__sum_i64s(o, "stage.recv_peer", c->i, ns);

    /* The iterations, one value per iteration in each field. */
#define ITER_I(f, expr)                                                                            \
    for (size_t it = 0; it < ni; it++)                                                             \
        c->i[it] = (int64_t)(expr);                                                                \
    pps__sum_i64s(o, "iter." f, c->i, ni);
#define ITER_D(f, expr)                                                                            \
    for (size_t it = 0; it < ni; it++)                                                             \
        c->d[it] = (expr);                                                                         \
    pps__sum_f64s(o, "iter." f, c->d, ni);
    ITER_I("iter", rep->iters[it].iter)
    ITER_I("t0", rep->iters[it].t0)
    ITER_I("t1", rep->iters[it].t1)
    ITER_I("partial", rep->iters[it].partial)
    ITER_D("window_ns", rep->iters[it].window_ns)
    ITER_D("bubble", rep->iters[it].bubble)
    ITER_D("device_bubble", rep->iters[it].device_bubble)
#undef ITER_I
#undef ITER_D
    for (size_t it = 0; it < ni; it++)
        memcpy(c->d + it * PH, rep->iters[it].phase_bubble, sizeof(double) * PH);
    pps__sum_f64s(o, "iter.phase_bubble", c->d, ni * PH);
}

static void put_links(struct pps__sum_out *o, const struct pps_report *rep, struct cols *c)
{
    size_t n = (size_t)rep->n_links;

#define LINK_I(f)                                                                                  \
    for (size_t l = 0; l < n; l++)                                                                 \
        c->i[l] = rep->links[l].f;                                                                 \
    pps__sum_i64s(o, "link." #f, c->i, n);
#define LINK_D(f)                                                                                  \
    for (size_t l = 0; l < n; l++)                                                                 \
        c->d[l] = rep->links[l].f;                                                                 \
    pps__sum_f64s(o, "link." #f, c->d, n);
    LINK_INTS(LINK_I)
    LINK_DOUBLES(LINK_D)
#undef LINK_I
#undef LINK_D
}

static void put_observed(struct pps__sum_out *o, const struct pps_schedule *sc, struct cols *c)
{
    size_t n;

    pps__sum_i64(o, "observed.have", sc->actions != NULL);
    if (!sc->actions)
        return;
    n = sc->start[sc->p];
    pps__sum_i64(o, "observed.kind", sc->kind);
    pps__sum_i64(o, "observed.p", sc->p);
    pps__sum_i64(o, "observed.m", sc->m);
    pps__sum_i64(o, "observed.v", sc->v);
    pps__sum_i64(o, "observed.placement", sc->placement);
    for (int s = 0; s <= sc->p; s++)
        c->i[s] = (int64_t)sc->start[s];
    pps__sum_i64s(o, "observed.start", c->i, (size_t)sc->p + 1);
    for (size_t a = 0; a < n; a++)
        c->i[a] = ((int64_t)sc->actions[a].op << 48) | ((int64_t)sc->actions[a].chunk << 32) |
                  sc->actions[a].mb;
    pps__sum_i64s(o, "observed.actions", c->i, n);
}

#define STEP_I(X)                                                                                  \
    X(stage)                                                                                       \
    X(chunk)                                                                                       \
    X(mb)                                                                                          \
    X(kind)                                                                                        \
    X(start_ns)                                                                                    \
    X(end_ns) X(via) X(has_send) X(has_recv) X(send_start_ns) X(send_end_ns) X(recv_start_ns)      \
        X(recv_end_ns) X(waited)
#define STEP_D(X) X(on_path_ns) X(comm_ns) X(wait_ns)

static void put_critpath(struct pps__sum_out *o, const struct pps_critpath *cp, struct cols *c)
{
    size_t ni, ns;

    pps__sum_i64(o, "critpath.have", cp != NULL);
    if (!cp)
        return;
    ni = (size_t)cp->n_iters;
    ns = (size_t)cp->n_stages;
    pps__sum_i64(o, "critpath.n_stages", cp->n_stages);
    pps__sum_i64(o, "critpath.p", cp->p);
    pps__sum_i64(o, "critpath.v", cp->v);
    pps__sum_i64(o, "critpath.messages", cp->messages);
    pps__sum_i64(o, "critpath.n_iters", cp->n_iters);
    pps__sum_i64(o, "critpath.n_full", cp->n_full);
    pps__sum_i64(o, "critpath.typical", cp->typical);
    pps__sum_f64(o, "critpath.length_ns", cp->length_ns);
    pps__sum_f64(o, "critpath.window_ns", cp->window_ns);
    pps__sum_f64(o, "critpath.comm_ns", cp->comm_ns);
    pps__sum_f64(o, "critpath.wait_ns", cp->wait_ns);
    pps__sum_f64s(o, "critpath.kind_ns", cp->kind_ns, K);
    pps__sum_f64s(o, "critpath.stage_ns", cp->stage_ns, ns);
#define CI_I(f)                                                                                    \
    for (size_t it = 0; it < ni; it++)                                                             \
        c->i[it] = (int64_t)cp->iters[it].f;                                                       \
    pps__sum_i64s(o, "critpath.iter." #f, c->i, ni);
#define CI_D(f)                                                                                    \
    for (size_t it = 0; it < ni; it++)                                                             \
        c->d[it] = cp->iters[it].f;                                                                \
    pps__sum_f64s(o, "critpath.iter." #f, c->d, ni);
    CP_ITER_INTS(CI_I)
    CP_ITER_DOUBLES(CI_D)
#undef CI_I
#undef CI_D
    for (size_t it = 0; it < ni; it++)
        memcpy(c->d + it * K, cp->iters[it].kind_ns, sizeof(double) * K);
    pps__sum_f64s(o, "critpath.iter.kind_ns", c->d, ni * K);
    for (size_t it = 0; it < ni; it++)
        for (size_t s = 0; s < ns; s++)
            c->d[it * ns + s] = cp->iters[it].stage_ns ? cp->iters[it].stage_ns[s] : 0;
    pps__sum_f64s(o, "critpath.iter.stage_ns", c->d, ni * ns);
    if (cp->typical >= 0 && cp->typical < cp->n_iters) {
        const struct pps_critpath_iter *ty = &cp->iters[cp->typical];
        size_t n = ty->n_steps;
#define ST_I(f)                                                                                    \
    for (size_t k = 0; k < n; k++)                                                                 \
        c->i[k] = (int64_t)ty->steps[k].f;                                                         \
    pps__sum_i64s(o, "critpath.step." #f, c->i, n);
#define ST_D(f)                                                                                    \
    for (size_t k = 0; k < n; k++)                                                                 \
        c->d[k] = ty->steps[k].f;                                                                  \
    pps__sum_f64s(o, "critpath.step." #f, c->d, n);
        STEP_I(ST_I)
        STEP_D(ST_D)
#undef ST_I
#undef ST_D
    }
}

/*
 * The run's labels: each iteration label that spans carry, how many carry it and the earliest
 * start among them, and the run's spans in all: what a view needs to read the newest iterations
 * alone (pps_summary_newest). Labels are counted in arrays as long as the highest label, so only
 * where that is not far beyond the spans (an import may carry any number); none otherwise.
 */
static int put_labels(struct pps__sum_out *o, const struct pps_run *run)
{
    int64_t *count, *first, *last, *iter;
    size_t n = run->n_iters > 0 ? (size_t)run->n_iters : 0, k = 0;

    pps__sum_i64(o, "run.spans", (int64_t)run->n_spans);
    if (n == 0 || n > ((size_t)1 << 24) || n > 2 * run->n_spans + 1)
        return 0;
    count = calloc(n, sizeof(*count));
    first = malloc(n * sizeof(*first));
    last = malloc(n * sizeof(*last));
    iter = malloc(n * sizeof(*iter));
    if (!count || !first || !last || !iter) {
        free(count);
        free(first);
        free(last);
        free(iter);
        return -1;
    }
    for (int s = 0; s < run->n_stages; s++)
        for (size_t i = 0; i < run->stages[s].n; i++) {
            const struct pps_span *sp = &run->stages[s].spans[i];
            size_t it = (size_t)sp->iter;
            if (sp->iter < 0 || it >= n)
                continue;
            if (!count[it]++) {
                first[it] = sp->start_ns;
                last[it] = sp->end_ns;
            }
            if (sp->start_ns < first[it])
                first[it] = sp->start_ns;
            if (sp->end_ns > last[it])
                last[it] = sp->end_ns;
        }
    for (size_t it = 0; it < n; it++)
        if (count[it]) {
            iter[k] = (int64_t)it;
            count[k] = count[it];
            first[k] = first[it];
            last[k] = last[it];
            k++;
        }
    pps__sum_i64s(o, "labels.iter", iter, k);
    pps__sum_i64s(o, "labels.spans", count, k);
    pps__sum_i64s(o, "labels.first_ns", first, k);
    pps__sum_i64s(o, "labels.last_ns", last, k);
    free(count);
    free(first);
    free(last);
    free(iter);
    return 0;
}

int pps_summary_encode(const struct pps_run *run, const struct pps_report *rep,
                       const struct pps_critpath *cp, void **out, size_t *len, struct pps_err *err)
{
    struct pps__sum_out o;
    struct cols c;
    size_t need = 64, ns, ni;

    *out = NULL;
    *len = 0;
    if (!rep)
        return pps_err_set(err, PPS_EINVAL, "no report to summarise");
    ns = (size_t)rep->n_stages;
    ni = (size_t)rep->n_iters;
    /* The largest field: one value per (iteration, stage, kind), per step, per action. */
    need += (ni + 1) * (ns + 1) * K + ni * PH;
    if (cp && cp->typical >= 0 && cp->typical < cp->n_iters)
        need += cp->iters[cp->typical].n_steps;
    if (rep->observed.actions)
        need += rep->observed.start[rep->observed.p] + (size_t)rep->observed.p;
    if (cp)
        need += (ni + 1) * (K + (size_t)cp->n_stages);
    need += (size_t)rep->n_links;
    if (cols_alloc(&c, need))
        return pps_err_set(err, PPS_ENOMEM, "out of memory summarising the report");
    pps__sum_begin(&o);
    pps__sum_i64(&o, "revision", PPS_SUMMARY_REVISION);
    put_report(&o, rep, &c);
    if (put_stats(&o, "total", total_at, (void *)rep, ns) ||
        put_stats(&o, "iter.stage", iter_stage_at, (void *)rep, ni * ns))
        o.failed = 1;
    put_links(&o, rep, &c);
    put_observed(&o, &rep->observed, &c);
    put_critpath(&o, cp, &c);
    if (run && put_labels(&o, run) < 0)
        o.failed = 1;
    pps__sum_finish(&o);
    cols_free(&c);
    if (o.failed) {
        free(o.buf);
        return pps_err_set(err, PPS_ENOMEM, "out of memory summarising the report");
    }
    *out = o.buf;
    *len = o.n;
    return 0;
}

/* ---- reading ---------------------------------------------------------------------------- */

/* One scalar; a missing one is the summary's error. */
static int get_i(const struct pps__sum_in *in, const char *name, int64_t *v, struct pps_err *err)
{
    return pps__sum_get_i64s(in, name, v, 1, err);
}

static int get_d(const struct pps__sum_in *in, const char *name, double *v, struct pps_err *err)
{
    return pps__sum_get_f64s(in, name, v, 1, err);
}

/* A count of records that the reader may allocate: 0 .. max. */
static int get_count(const struct pps__sum_in *in, const char *name, int64_t max, int *out,
                     struct pps_err *err)
{
    int64_t v;
    int rc = get_i(in, name, &v, err);

    if (rc == 0 && (v < 0 || v > max))
        rc = pps_err_set(err, PPS_EFORMAT, "the summary's %s is %lld", name, (long long)v);
    if (rc == 0)
        *out = (int)v;
    return rc;
}

static int get_report(const struct pps__sum_in *in, struct pps_report *rep, struct cols *c,
                      struct pps_err *err)
{
    size_t ns = (size_t)rep->n_stages, ni = (size_t)rep->n_iters;
    int64_t v;
    double d;
    int rc = 0;

#define GET_I(f)                                                                                   \
    if ((rc = get_i(in, "report." #f, &v, err)))                                                   \
        return rc;                                                                                 \
    rep->f = (__typeof__(rep->f))v;
#define GET_D(f)                                                                                   \
    if ((rc = get_d(in, "report." #f, &d, err)))                                                   \
        return rc;                                                                                 \
    rep->f = d;
    REPORT_INTS(GET_I)
    REPORT_DOUBLES(GET_D)
#undef GET_I
#undef GET_D
    if ((rc = pps__sum_get_f64s(in, "report.phase_bubble", rep->phase_bubble, PH, err)) ||
        (rc = pps__sum_get_text(in, "report.infer_note", rep->infer_note, sizeof(rep->infer_note),
                                err)))
        return rc;
#define GET_A(f)                                                                                   \
    if (!(rep->f = calloc(ns ? ns : 1, sizeof(double))))                                           \
        return pps_err_set(err, PPS_ENOMEM, "out of memory reading a summary");                    \
    if ((rc = pps__sum_get_f64s(in, "stage." #f, rep->f, ns, err)))                                \
        return rc;
    STAGE_ARRAYS_D(GET_A)
#undef GET_A
    rep->stage_spans = calloc(ns ? ns : 1, sizeof(*rep->stage_spans));
    rep->wait_peer = calloc(ns ? ns : 1, sizeof(*rep->wait_peer));
    rep->recv_peer = calloc(ns ? ns : 1, sizeof(*rep->recv_peer));
    if (!rep->stage_spans || !rep->wait_peer || !rep->recv_peer)
        return pps_err_set(err, PPS_ENOMEM, "out of memory reading a summary");
    if ((rc = pps__sum_get_i64s(in, "stage.spans", rep->stage_spans, ns, err)) ||
        (rc = pps__sum_get_i64s(in, "stage.wait_peer", c->i, ns, err)))
        return rc;
    for (size_t s = 0; s < ns; s++)
        rep->wait_peer[s] = (int)c->i[s];
    if ((rc = pps__sum_get_i64s(in, "stage.recv_peer", c->i, ns, err)))
        return rc;
    for (size_t s = 0; s < ns; s++)
        rep->recv_peer[s] = (int)c->i[s];

#define ITER_I(f, field)                                                                           \
    if ((rc = pps__sum_get_i64s(in, "iter." f, c->i, ni, err)))                                    \
        return rc;                                                                                 \
    for (size_t it = 0; it < ni; it++)                                                             \
        rep->iters[it].field = (__typeof__(rep->iters[it].field))c->i[it];
#define ITER_D(f, field)                                                                           \
    if ((rc = pps__sum_get_f64s(in, "iter." f, c->d, ni, err)))                                    \
        return rc;                                                                                 \
    for (size_t it = 0; it < ni; it++)                                                             \
        rep->iters[it].field = c->d[it];
    ITER_I("iter", iter)
    ITER_I("t0", t0)
    ITER_I("t1", t1)
    ITER_I("partial", partial)
    ITER_D("window_ns", window_ns)
    ITER_D("bubble", bubble)
    ITER_D("device_bubble", device_bubble)
#undef ITER_I
#undef ITER_D
    if ((rc = pps__sum_get_f64s(in, "iter.phase_bubble", c->d, ni * PH, err)))
        return rc;
    for (size_t it = 0; it < ni; it++)
        memcpy(rep->iters[it].phase_bubble, c->d + it * PH, sizeof(double) * PH);
    return 0;
}

static int get_links(const struct pps__sum_in *in, struct pps_report *rep, struct cols *c,
                     struct pps_err *err)
{
    int64_t n = pps__sum_count(in, "link.from", 'i');
    int rc = 0;

    if (n < 0 || n > INT32_MAX)
        return pps_err_set(err, PPS_EFORMAT, "the summary's links are missing");
    rep->n_links = (int)n;
    if (!(rep->links = calloc(n ? (size_t)n : 1, sizeof(*rep->links))) || cols_alloc(c, (size_t)n))
        return pps_err_set(err, PPS_ENOMEM, "out of memory reading a summary");
#define LINK_I(f)                                                                                  \
    if ((rc = pps__sum_get_i64s(in, "link." #f, c->i, (size_t)n, err)))                            \
        return rc;                                                                                 \
    for (int64_t l = 0; l < n; l++)                                                                \
        rep->links[l].f = (__typeof__(rep->links[l].f))c->i[l];
#define LINK_D(f)                                                                                  \
    if ((rc = pps__sum_get_f64s(in, "link." #f, c->d, (size_t)n, err)))                            \
        return rc;                                                                                 \
    for (int64_t l = 0; l < n; l++)                                                                \
        rep->links[l].f = c->d[l];
    LINK_INTS(LINK_I)
    LINK_DOUBLES(LINK_D)
#undef LINK_I
#undef LINK_D
    return 0;
}

static int get_observed(const struct pps__sum_in *in, struct pps_schedule *sc, struct cols *c,
                        struct pps_err *err)
{
    int64_t have, kind, n;
    int p, m, v, rc;

    if ((rc = get_i(in, "observed.have", &have, err)) || !have)
        return rc;
    if ((rc = get_i(in, "observed.kind", &kind, err)) ||
        (rc = get_count(in, "observed.p", INT16_MAX, &p, err)) ||
        (rc = get_count(in, "observed.m", INT32_MAX, &m, err)) ||
        (rc = get_count(in, "observed.v", INT16_MAX, &v, err)))
        return rc;
    n = pps__sum_count(in, "observed.actions", 'i');
    if (n < 0 || p < 1)
        return pps_err_set(err, PPS_EFORMAT, "the summary's observed schedule is damaged");
    if (pps_schedule_alloc(sc, p, m, v, (size_t)n) < 0 ||
        cols_alloc(c, (size_t)(n > p ? n : p) + 1))
        return pps_err_set(err, PPS_ENOMEM, "out of memory reading a summary");
    sc->kind = (int)kind;
    /* Written since the V placement; a summary without it is of a run placed in a loop. */
    if (pps__sum_count(in, "observed.placement", 'i') == 1) {
        if ((rc = get_i(in, "observed.placement", &have, err)))
            return rc;
        if (have != PPS_PLACE_LOOP && (have != PPS_PLACE_V || v != 2))
            return pps_err_set(err, PPS_EFORMAT, "the summary's observed schedule is damaged");
        sc->placement = (int)have;
    }
    if ((rc = pps__sum_get_i64s(in, "observed.start", c->i, (size_t)p + 1, err)))
        return rc;
    for (int s = 0; s <= p; s++) {
        if (c->i[s] < 0 || c->i[s] > n || (s && c->i[s] < c->i[s - 1]))
            return pps_err_set(err, PPS_EFORMAT, "the summary's observed schedule is damaged");
        sc->start[s] = (size_t)c->i[s];
    }
    if ((rc = pps__sum_get_i64s(in, "observed.actions", c->i, (size_t)n, err)))
        return rc;
    for (int64_t a = 0; a < n; a++) {
        sc->actions[a].op = (uint8_t)(c->i[a] >> 48);
        sc->actions[a].chunk = (uint16_t)(c->i[a] >> 32);
        sc->actions[a].mb = (uint32_t)c->i[a];
    }
    return 0;
}

static int get_critpath(const struct pps__sum_in *in, struct pps_critpath **out, struct cols *c,
                        struct pps_err *err)
{
    struct pps_critpath *cp;
    int64_t have, v;
    size_t ni, ns, n_steps;
    int rc;

    *out = NULL;
    if ((rc = get_i(in, "critpath.have", &have, err)) || !have)
        return rc;
    if (!(cp = calloc(1, sizeof(*cp))))
        return pps_err_set(err, PPS_ENOMEM, "out of memory reading a summary");
    *out = cp;
    if ((rc = get_count(in, "critpath.n_stages", INT16_MAX + 1, &cp->n_stages, err)) ||
        (rc = get_count(in, "critpath.n_iters", INT32_MAX, &cp->n_iters, err)) ||
        (rc = get_count(in, "critpath.n_full", INT32_MAX, &cp->n_full, err)))
        return rc;
#define CP_I(f)                                                                                    \
    if ((rc = get_i(in, "critpath." #f, &v, err)))                                                 \
        return rc;                                                                                 \
    cp->f = (int)v;
    CP_INTS(CP_I)
#undef CP_I
    if ((rc = get_d(in, "critpath.length_ns", &cp->length_ns, err)) ||
        (rc = get_d(in, "critpath.window_ns", &cp->window_ns, err)) ||
        (rc = get_d(in, "critpath.comm_ns", &cp->comm_ns, err)) ||
        (rc = get_d(in, "critpath.wait_ns", &cp->wait_ns, err)) ||
        (rc = pps__sum_get_f64s(in, "critpath.kind_ns", cp->kind_ns, K, err)))
        return rc;
    ni = (size_t)cp->n_iters;
    ns = (size_t)cp->n_stages;
    if (pps__sum_count(in, "critpath.iter.iter", 'i') != (int64_t)ni ||
        pps__sum_count(in, "critpath.stage_ns", 'd') != (int64_t)ns ||
        (cp->typical >= 0 && pps__sum_count(in, "critpath.step.stage", 'i') < 0))
        return pps_err_set(err, PPS_EFORMAT, "the summary's critical path is damaged");
    if (cp->typical >= cp->n_iters || cp->typical < -1)
        return pps_err_set(err, PPS_EFORMAT, "the summary's critical path is damaged");
    n_steps = cp->typical >= 0 ? (size_t)pps__sum_count(in, "critpath.step.stage", 'i') : 0;
    cols_free(c);
    if (!(cp->stage_ns = calloc(ns ? ns : 1, sizeof(double))) ||
        !(cp->iters = calloc(ni ? ni : 1, sizeof(*cp->iters))) ||
        cols_alloc(c, ni * (K + ns) + n_steps + 1))
        return pps_err_set(err, PPS_ENOMEM, "out of memory reading a summary");
    if ((rc = pps__sum_get_f64s(in, "critpath.stage_ns", cp->stage_ns, ns, err)))
        return rc;
#define CI_I(f)                                                                                    \
    if ((rc = pps__sum_get_i64s(in, "critpath.iter." #f, c->i, ni, err)))                          \
        return rc;                                                                                 \
    for (size_t it = 0; it < ni; it++)                                                             \
        cp->iters[it].f = (__typeof__(cp->iters[it].f))c->i[it];
#define CI_D(f)                                                                                    \
    if ((rc = pps__sum_get_f64s(in, "critpath.iter." #f, c->d, ni, err)))                          \
        return rc;                                                                                 \
    for (size_t it = 0; it < ni; it++)                                                             \
        cp->iters[it].f = c->d[it];
    CP_ITER_INTS(CI_I)
    CP_ITER_DOUBLES(CI_D)
#undef CI_I
#undef CI_D
    if ((rc = pps__sum_get_f64s(in, "critpath.iter.kind_ns", c->d, ni * K, err)))
        return rc;
    for (size_t it = 0; it < ni; it++)
        memcpy(cp->iters[it].kind_ns, c->d + it * K, sizeof(double) * K);
    if ((rc = pps__sum_get_f64s(in, "critpath.iter.stage_ns", c->d, ni * ns, err)))
        return rc;
    for (size_t it = 0; it < ni; it++) {
        if (!(cp->iters[it].stage_ns = calloc(ns ? ns : 1, sizeof(double))))
            return pps_err_set(err, PPS_ENOMEM, "out of memory reading a summary");
        memcpy(cp->iters[it].stage_ns, c->d + it * ns, sizeof(double) * ns);
    }
    if (cp->typical >= 0) {
        struct pps_critpath_iter *ty = &cp->iters[cp->typical];

        if (ty->n_steps != n_steps)
            return pps_err_set(err, PPS_EFORMAT, "the summary's critical path is damaged");
        if (!(ty->steps = calloc(n_steps ? n_steps : 1, sizeof(*ty->steps))))
            return pps_err_set(err, PPS_ENOMEM, "out of memory reading a summary");
#define ST_I(f)                                                                                    \
    if ((rc = pps__sum_get_i64s(in, "critpath.step." #f, c->i, n_steps, err)))                     \
        return rc;                                                                                 \
    for (size_t k = 0; k < n_steps; k++)                                                           \
        ty->steps[k].f = (__typeof__(ty->steps[k].f))c->i[k];
#define ST_D(f)                                                                                    \
    if ((rc = pps__sum_get_f64s(in, "critpath.step." #f, c->d, n_steps, err)))                     \
        return rc;                                                                                 \
    for (size_t k = 0; k < n_steps; k++)                                                           \
        ty->steps[k].f = c->d[k];
        STEP_I(ST_I)
        STEP_D(ST_D)
#undef ST_I
#undef ST_D
    }
    return 0;
}

/* Whether every figure that something indexes with, allocates by or simulates is in range: a
 * damaged summary is refused (and the report made from the spans), never followed. */
static int check_ranges(const struct pps_report *rep, const struct pps_critpath *cp,
                        struct pps_err *err)
{
    int ns = rep->n_stages, ok = 1;
    struct pps_err why = {0, ""};

    ok &= rep->p >= 0 && rep->p <= INT16_MAX + 1 && rep->v >= 1 && rep->v <= INT16_MAX;
    ok &= rep->m >= 0 && rep->m <= (1 << 20); /* the loader's bound on m (storage) */
    ok &= rep->sched_kind >= -1 && rep->sched_kind < PPS_SCHED_KIND_COUNT;
    ok &= rep->n_present >= 0 && rep->n_present <= ns && rep->n_device_stages >= 0 &&
          rep->n_device_stages <= ns && rep->n_full >= 0 && rep->n_full <= rep->n_iters;
    ok &= rep->op_cv_stage >= -1 && rep->op_cv_stage < ns && rep->op_cv_kind >= -1 &&
          rep->op_cv_kind < K &&
          (rep->basis == PPS_BASIS_ITERATION || rep->basis == PPS_BASIS_STEADY);
    for (int s = 0; s < ns && ok; s++)
        ok &= rep->total[s].stage == s && rep->wait_peer[s] >= -1 && rep->wait_peer[s] < ns &&
              rep->recv_peer[s] >= -1 && rep->recv_peer[s] < ns;
    for (int it = 0; it < rep->n_iters && ok; it++)
        for (int s = 0; s < ns && ok; s++)
            ok &= rep->iters[it].stages[s].stage == s;
    for (int l = 0; l < rep->n_links && ok; l++)
        ok &= rep->links[l].from >= 0 && rep->links[l].from < ns && rep->links[l].to >= 0 &&
              rep->links[l].to < ns;
    if (ok && rep->observed.actions)
        ok &= rep->observed.p == rep->p && rep->observed.m == rep->m && rep->observed.v == rep->v &&
              pps_schedule_validate(&rep->observed, NULL, &why) == 0;
    if (ok && cp)
        ok &= cp->n_stages == ns && cp->n_iters == rep->n_iters && cp->v >= 1 && cp->p >= 0;
    return ok ? 0 : pps_err_set(err, PPS_EFORMAT, "a damaged summary (a figure out of range)");
}

/* Whether field name (of type 'i' or 'd') holds want values. */
static int check_count(const struct pps__sum_in *in, const char *name, char type, int64_t want,
                       struct pps_err *err)
{
    int64_t have = pps__sum_count(in, name, type);

    if (have == want)
        return 0;
    return pps_err_set(err, PPS_EFORMAT, "a damaged summary (%s holds %lld values, not %lld)",
                       name, (long long)have, (long long)want);
}

/* Whether every per-iteration and per-stage field holds as many values as n_iters and n_stages
 * say, before anything is allocated by them: a damaged summary must not make the reader ask for
 * memory that its bytes do not hold. */
static int check_sizes(const struct pps__sum_in *in, int64_t ni, int64_t ns, struct pps_err *err)
{
    static const struct {
        const char *name;
        char type;
        int per; /* 0: per iteration, 1: per stage, 2: per (iteration, stage) */
        int times;
    } f[] = {
        {"iter.iter", 'i', 0, 1},
        {"iter.t0", 'i', 0, 1},
        {"iter.t1", 'i', 0, 1},
        {"iter.partial", 'i', 0, 1},
        {"iter.window_ns", 'd', 0, 1},
        {"iter.bubble", 'd', 0, 1},
        {"iter.device_bubble", 'd', 0, 1},
        {"iter.phase_bubble", 'd', 0, PH},
        {"stage.tf_ns", 'd', 1, 1},
        {"stage.tb_ns", 'd', 1, 1},
        {"stage.tw_ns", 'd', 1, 1},
        {"stage.ovh_ns", 'd', 1, 1},
        {"stage.spans", 'i', 1, 1},
        {"stage.wait_peer", 'i', 1, 1},
        {"stage.recv_peer", 'i', 1, 1},
    };

    /* A stage stats record's fields (put_stats()), under each of its two prefixes. */
    static const struct {
        const char *name;
        char type;
        int times;
    } stats[] = {
        {"stage", 'i', 1},
        {"present", 'i', 1},
#define STATS_D(f) {#f, 'd', 1},
        STAGE_DOUBLES(STATS_D)
#undef STATS_D
        {"busy_ns", 'd', K},
        {"n_ops", 'i', K},
        {"phase_idle_ns", 'd', PH},
    };
    char name[96];
    int rc = 0;

    for (size_t i = 0; i < sizeof(f) / sizeof(f[0]) && !rc; i++)
        rc = check_count(in, f[i].name, f[i].type,
                         (f[i].per == 0 ? ni : f[i].per == 1 ? ns : ni * ns) * f[i].times, err);
    for (size_t i = 0; i < sizeof(stats) / sizeof(stats[0]) && !rc; i++) {
        name_of(name, sizeof(name), "total", stats[i].name);
        rc = check_count(in, name, stats[i].type, ns * stats[i].times, err);
        name_of(name, sizeof(name), "iter.stage", stats[i].name);
        if (!rc)
            rc = check_count(in, name, stats[i].type, ni * ns * stats[i].times, err);
    }
    return rc;
}

/* The report's arrays for n_iters iterations of its n_stages stages: rep->n_iters counts those
 * allocated, so that pps_report_free() frees what there is at any failure. */
static int alloc_report(struct pps_report *rep, int n_iters, struct pps_err *err)
{
    size_t ns = rep->n_stages ? (size_t)rep->n_stages : 1;

    rep->total = calloc(ns, sizeof(*rep->total));
    rep->iters = calloc(n_iters ? (size_t)n_iters : 1, sizeof(*rep->iters));
    if (!rep->total || !rep->iters)
        return pps_err_set(err, PPS_ENOMEM, "out of memory reading a summary");
    for (int it = 0; it < n_iters; it++) {
        rep->iters[it].n_stages = rep->n_stages;
        if (!(rep->iters[it].stages = calloc(ns, sizeof(*rep->iters[it].stages))))
            return pps_err_set(err, PPS_ENOMEM, "out of memory reading a summary");
        rep->n_iters = it + 1;
    }
    return 0;
}

int pps_summary_decode(const struct pps_run *run, const void *buf, size_t len,
                       struct pps_report **rep_out, struct pps_critpath **cp_out,
                       struct pps_err *err)
{
    struct pps__sum_in in = {NULL, 0};
    struct pps_report *rep = NULL;
    struct pps_critpath *cp = NULL;
    struct cols c = {NULL, NULL};
    int64_t revision;
    int n_iters = 0, rc;

    *rep_out = NULL;
    *cp_out = NULL;
    if ((rc = pps__sum_parse(buf, len, &in, err)))
        return rc;
    if ((rc = get_i(&in, "revision", &revision, err)))
        goto out;
    if (revision != PPS_SUMMARY_REVISION) {
        rc = pps_err_set(err, PPS_EFORMAT, "a summary of analysis revision %lld, not %d",
                         (long long)revision, PPS_SUMMARY_REVISION);
        goto out;
    }
    if (!(rep = calloc(1, sizeof(*rep)))) {
        rc = pps_err_set(err, PPS_ENOMEM, "out of memory reading a summary");
        goto out;
    }
    pps__analysis_unknown(rep);
    if ((rc = get_count(&in, "report.n_stages", INT16_MAX + 1, &rep->n_stages, err)) ||
        (rc = get_count(&in, "report.n_iters", INT32_MAX, &n_iters, err)))
        goto out;
    /* Sizes to allocate by, against the fields that hold them. */
    if ((rc = check_sizes(&in, n_iters, rep->n_stages, err)))
        goto out;
    if ((rc = alloc_report(rep, n_iters, err)))
        goto out;
    if (cols_alloc(&c, (size_t)rep->n_iters * PH + (size_t)rep->n_stages + 1)) {
        rc = pps_err_set(err, PPS_ENOMEM, "out of memory reading a summary");
        goto out;
    }
    if ((rc = get_report(&in, rep, &c, err)) ||
        (rc = get_stats(&in, "total", total_at, rep, (size_t)rep->n_stages, err)) ||
        (rc = get_stats(&in, "iter.stage", iter_stage_at, rep,
                        (size_t)rep->n_iters * (size_t)rep->n_stages, err)))
        goto out;
    for (int it = 0; it < rep->n_iters; it++)
        rep->iters[it].n_stages = rep->n_stages;
    cols_free(&c);
    if ((rc = get_links(&in, rep, &c, err)))
        goto out;
    cols_free(&c);
    if ((rc = get_observed(&in, &rep->observed, &c, err)))
        goto out;
    cols_free(&c);
    if ((rc = get_critpath(&in, &cp, &c, err)) || (rc = check_ranges(rep, cp, err)))
        goto out;
    /* The rest, as the report from spans makes it. */
    if ((rc = pps__analysis_derive(run, rep, err)))
        goto out;
    *rep_out = rep;
    *cp_out = cp;
    rep = NULL;
    cp = NULL;
out:
    cols_free(&c);
    pps__sum_in_release(&in);
    pps_report_free(rep);
    pps_critpath_free(cp);
    return rc;
}

static int series_of(const struct pps__sum_in *in, struct pps_summary_series *out,
                     struct pps_err *err);

int pps_summary_pick(const void *buf, size_t len, size_t keep, int anchor, int dir,
                     struct pps_summary_pick *out, struct pps_summary_series *series,
                     struct pps_err *err)
{
    struct pps__sum_in in = {NULL, 0};
    int64_t revision, total, n, *v[4] = {NULL, NULL, NULL, NULL};
    static const char *const names[4] = {"labels.iter", "labels.spans", "labels.first_ns",
                                         "labels.last_ns"};
    size_t kept = 0, lo, hi;
    int rc;

    memset(out, 0, sizeof(*out));
    if (series)
        memset(series, 0, sizeof(*series));
    if ((rc = pps__sum_parse(buf, len, &in, err)))
        return rc;
    if ((rc = get_i(&in, "revision", &revision, err)) ||
        (rc = get_i(&in, "run.spans", &total, err)))
        goto out;
    n = pps__sum_count(&in, "labels.iter", 'i');
    if (revision != PPS_SUMMARY_REVISION || n < 1 || total < 0 ||
        pps__sum_count(&in, "labels.last_ns", 'i') != n) {
        rc = 1; /* no map of the labels: the run is read whole */
        goto out;
    }
    for (int f = 0; f < 4; f++) {
        if (!(v[f] = malloc((size_t)n * sizeof(*v[f])))) {
            rc = pps_err_set(err, PPS_ENOMEM, "out of memory reading a summary");
            goto out;
        }
        if ((rc = pps__sum_get_i64s(&in, names[f], v[f], (size_t)n, err)))
            goto out;
    }
    for (int64_t k = 0; k < n; k++)
        if (v[1][k] < 0 || v[0][k] < 0 || v[0][k] > INT32_MAX || (k && v[0][k] <= v[0][k - 1])) {
            rc = pps_err_set(err, PPS_EFORMAT, "a damaged summary (its labels)");
            goto out;
        }
    /* The anchor's slot: the newest label, or the first at or after anchor. */
    lo = (size_t)n - 1;
    if (dir != 0) {
        lo = 0;
        while (lo + 1 < (size_t)n && v[0][lo] < anchor)
            lo++;
        if (dir < 0 && v[0][lo] > anchor && lo > 0)
            lo--;
    }
    hi = lo;
    /* From the anchor away in dir (down for dir 0), whole iterations while their spans fit in
     * keep, the anchor's at least: pps_run_keep_iter()'s choice, from where the view is. */
    kept = (size_t)v[1][lo];
    /* Away from the anchor, one iteration at least, whatever keep says: a page moves. */
    if (dir > 0 && hi + 1 < (size_t)n)
        kept += (size_t)v[1][++hi];
    if (dir < 0 && lo > 0)
        kept += (size_t)v[1][--lo];
    if (dir > 0)
        while (hi + 1 < (size_t)n && kept + (size_t)v[1][hi + 1] <= keep)
            kept += (size_t)v[1][++hi];
    else
        while (lo > 0 && kept + (size_t)v[1][lo - 1] <= keep)
            kept += (size_t)v[1][--lo];
    out->spans = total;
    out->first_iter = (int)v[0][lo];
    out->end_iter = hi + 1 < (size_t)n ? (int)v[0][hi] + 1 : 0;
    out->t0 = v[2][lo];
    out->t1 = v[3][lo];
    for (size_t k = lo; k <= hi; k++) {
        out->t0 = v[2][k] < out->t0 ? v[2][k] : out->t0;
        out->t1 = v[3][k] > out->t1 ? v[3][k] : out->t1;
    }
    out->older = lo > 0;
    out->newer = hi + 1 < (size_t)n;
    out->n_iters = (int)v[0][n - 1] + 1;
    /* The whole run's iterations from the same parse, where asked for (left empty on failure:
     * they only chart). */
    rc = 0;
    if (series) {
        struct pps_err ignored = {0, ""};
        if (series_of(&in, series, &ignored) == 0 && series->n) {
            series->run_t0 = series->t0[0];
            series->run_t1 = series->t1[0];
            for (size_t k = 0; k < series->n; k++) {
                series->run_t0 = series->t0[k] < series->run_t0 ? series->t0[k] : series->run_t0;
                series->run_t1 = series->t1[k] > series->run_t1 ? series->t1[k] : series->run_t1;
            }
            for (int64_t k = 0; k < n; k++) {
                series->run_t0 = v[2][k] < series->run_t0 ? v[2][k] : series->run_t0;
                series->run_t1 = v[3][k] > series->run_t1 ? v[3][k] : series->run_t1;
            }
        }
    }
out:
    for (int f = 0; f < 4; f++)
        free(v[f]);
    pps__sum_in_release(&in);
    return rc;
}

/* The run's iterations from the parsed summary in into *out (n 0 where it has none): the
 * report's iters[].iter, .window_ns and .bubble of the whole run, figure for figure. */
static int series_of(const struct pps__sum_in *in, struct pps_summary_series *out,
                     struct pps_err *err)
{
    int64_t n = pps__sum_count(in, "iter.iter", 'i'), *labels = NULL, ns = 0;
    size_t cells;
    double *busy = NULL;
    int rc = 0;

    memset(out, 0, sizeof(*out));
    if (n < 1)
        return 0; /* none to chart */
    if ((rc = get_i(in, "report.n_stages", &ns, err)))
        goto out;
    if (ns < 0 || ns > INT16_MAX + 1) {
        rc = pps_err_set(err, PPS_EFORMAT, "a damaged summary (its stages)");
        goto out;
    }
    cells = (size_t)n * (size_t)ns;
    /* What the bytes hold, before asking for memory by it (check_sizes' rule). */
    if (pps__sum_count(in, "iter.t0", 'i') != n || pps__sum_count(in, "iter.t1", 'i') != n ||
        pps__sum_count(in, "iter.stage.compute_ns", 'd') != (int64_t)cells ||
        pps__sum_count(in, "iter.stage.busy_ns", 'd') != (int64_t)(cells * K)) {
        rc = pps_err_set(err, PPS_EFORMAT, "a damaged summary (its iterations)");
        goto out;
    }
    labels = malloc((size_t)n * sizeof(*labels));
    out->iter = malloc((size_t)n * sizeof(*out->iter));
    out->window_ns = malloc((size_t)n * sizeof(*out->window_ns));
    out->bubble = malloc((size_t)n * sizeof(*out->bubble));
    out->t0 = malloc((size_t)n * sizeof(*out->t0));
    out->t1 = malloc((size_t)n * sizeof(*out->t1));
    out->compute_ns = malloc((cells ? cells : 1) * sizeof(*out->compute_ns));
    out->device_ns = malloc((cells ? cells : 1) * sizeof(*out->device_ns));
    out->kind = malloc(cells ? cells : 1);
    busy = malloc((cells ? cells : 1) * K * sizeof(*busy));
    if (!labels || !out->iter || !out->window_ns || !out->bubble || !out->t0 || !out->t1 ||
        !out->compute_ns || !out->device_ns || !out->kind || !busy) {
        rc = pps_err_set(err, PPS_ENOMEM, "out of memory reading a summary");
        goto out;
    }
    if ((rc = pps__sum_get_i64s(in, "iter.iter", labels, (size_t)n, err)) ||
        (rc = pps__sum_get_f64s(in, "iter.window_ns", out->window_ns, (size_t)n, err)) ||
        (rc = pps__sum_get_f64s(in, "iter.bubble", out->bubble, (size_t)n, err)) ||
        (rc = pps__sum_get_i64s(in, "iter.t0", out->t0, (size_t)n, err)) ||
        (rc = pps__sum_get_i64s(in, "iter.t1", out->t1, (size_t)n, err)) ||
        (rc = pps__sum_get_f64s(in, "iter.stage.compute_ns", out->compute_ns, cells, err)) ||
        (rc = pps__sum_get_f64s(in, "iter.stage.busy_ns", busy, cells * K, err)))
        goto out;
    for (int64_t k = 0; k < n; k++) {
        /* Times are within 2^62 ns of 0 (docs/schema.md): their differences fit. */
        if (labels[k] < INT32_MIN || labels[k] > INT32_MAX || out->t1[k] < out->t0[k] ||
            out->t0[k] <= -((int64_t)1 << 62) || out->t1[k] >= (int64_t)1 << 62) {
            rc = pps_err_set(err, PPS_EFORMAT, "a damaged summary (its iterations)");
            goto out;
        }
        out->iter[k] = (int)labels[k];
    }
    for (size_t c = 0; c < cells; c++) {
        const double *b = busy + c * K;
        double best = 0;
        out->device_ns[c] = b[PPS_SPAN_KERNEL] + b[PPS_SPAN_MEMCPY];
        out->kind[c] = 0;
        for (int k = 1; k < K; k++)
            if (pps_span_kind_is_compute(k) && b[k] > best) {
                best = b[k];
                out->kind[c] = (unsigned char)k;
            }
    }
    out->n_stages = (int)ns;
    out->n = (size_t)n;
out:
    free(labels);
    free(busy);
    if (rc || !out->n)
        pps_summary_series_release(out);
    return rc;
}

void pps_summary_series_release(struct pps_summary_series *s)
{
    free(s->iter);
    free(s->window_ns);
    free(s->bubble);
    free(s->t0);
    free(s->t1);
    free(s->compute_ns);
    free(s->device_ns);
    free(s->kind);
    memset(s, 0, sizeof(*s));
}
