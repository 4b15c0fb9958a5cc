/*
 * predict.c - what the run should have done: its mean measured op costs per stage, and the
 * simulator's timeline for its schedule with those costs.
 *
 * A span of a chunk's op covers 1/v of the stage's layers, and the simulator takes costs per
 * microbatch through the whole stage, so a mean op duration is multiplied by v. The prediction
 * assumes every microbatch costs the mean: what the run loses to variation, communication that
 * the costs do not include, or stalls shows up as measured bubble above the predicted one.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis_int.h"

/* Sums, sums of squares and counts of one stage's compute spans by kind. */
struct op_sums {
    double sum[PPS_SPAN_KIND_COUNT];
    double sumsq[PPS_SPAN_KIND_COUNT];
    long n[PPS_SPAN_KIND_COUNT];
};

/* The largest coefficient of variation of one stage's ops of one kind (4 ops or more). */
static void note_cv(struct pps_report *rep, const struct op_sums *o, int s)
{
    static const int kinds[] = {PPS_SPAN_F, PPS_SPAN_B, PPS_SPAN_W, PPS_SPAN_BW};

    for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
        int kind = kinds[k];
        double n = (double)o->n[kind], mean, var, cv;

        if (o->n[kind] < 4 || !(o->sum[kind] > 0))
            continue;
        mean = o->sum[kind] / n;
        var = (o->sumsq[kind] - n * mean * mean) / (n - 1);
        cv = var > 0 ? sqrt(var) / mean : 0;
        if (isnan(rep->op_cv) || cv > rep->op_cv) {
            rep->op_cv = cv;
            rep->op_cv_stage = s;
            rep->op_cv_kind = kind;
        }
    }
}

static double mean(const struct op_sums *o, int kind)
{
    return o->n[kind] ? o->sum[kind] / (double)o->n[kind] : 0.0;
}

int pps__analysis_costs(const struct pps_run *run, struct pps_report *rep, struct pps_err *err)
{
    size_t n = rep->n_stages ? (size_t)rep->n_stages : 1;
    double opt_sum = 0;
    long opt_n = 0;
    const char *tcomm;

    rep->tf_ns = calloc(n, sizeof(double));
    rep->tb_ns = calloc(n, sizeof(double));
    rep->tw_ns = calloc(n, sizeof(double));
    if (!rep->tf_ns || !rep->tb_ns || !rep->tw_ns)
        return pps_err_set(err, PPS_ENOMEM, "out of memory for the op costs");
    for (int s = 0; s < rep->n_stages; s++) {
        struct op_sums o;

        memset(&o, 0, sizeof(o));
        for (size_t i = 0; i < run->stages[s].n; i++) {
            const struct pps_span *sp = &run->stages[s].spans[i];

            double d;

            if (sp->kind >= PPS_SPAN_KIND_COUNT || !pps_span_kind_is_compute(sp->kind))
                continue;
            d = sp->end_ns > sp->start_ns ? (double)(sp->end_ns - sp->start_ns) : 0;
            o.sum[sp->kind] += d;
            o.sumsq[sp->kind] += d * d;
            o.n[sp->kind]++;
        }
        note_cv(rep, &o, s);
        rep->tf_ns[s] = mean(&o, PPS_SPAN_F) * rep->v;
        if (o.n[PPS_SPAN_B] == 0 && o.n[PPS_SPAN_BW] > 0) {
            rep->tb_ns[s] = mean(&o, PPS_SPAN_BW) * rep->v;
            rep->tw_ns[s] = 0;
            rep->fused_bw = 1;
        } else {
            rep->tb_ns[s] = mean(&o, PPS_SPAN_B) * rep->v;
            rep->tw_ns[s] = mean(&o, PPS_SPAN_W) * rep->v;
        }
        opt_sum += o.sum[PPS_SPAN_OPT];
        opt_n += o.n[PPS_SPAN_OPT];
    }
    rep->topt_ns = opt_n ? opt_sum / (double)opt_n : 0.0;

    /* Until the tracer measures the links, a run may state its communication cost in meta. */
    rep->tcomm_ns = 0;
    tcomm = pps_run_meta(run, "tcomm_ns");
    if (tcomm) {
        char *end;
        double t = strtod(tcomm, &end);

        if (end != tcomm && *end == '\0' && isfinite(t) && t >= 0 && t <= 3.6e12)
            rep->tcomm_ns = t; /* an hour a message at most: beyond it, it is not a duration */
        else
            rep->tcomm_ns = NAN; /* predict() says why there is no prediction */
    }
    return 0;
}

/* Notes may quote another module's error message; a long one is cut, not an error. */
static void set_note(char *note, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void set_note(char *note, size_t len, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(note, len, fmt, ap);
    va_end(ap);
}

/* The reason there is no prediction, or "" when the run can be simulated. */
static void check_predictable(const struct pps_run *run, const struct pps_report *rep, char *note,
                              size_t len)
{
    struct pps_err perr = {0, ""};

    note[0] = '\0';
    if (rep->sched_kind < 0 && !rep->observed.actions) {
        if (run->schedule && run->schedule[0])
            set_note(note, len, "schedule '%s' is not one this ppscope can simulate%s%s",
                     run->schedule, rep->infer_note[0] ? ", and " : "", rep->infer_note);
        else
            set_note(note, len, "the run does not name its schedule%s%s",
                     rep->infer_note[0] ? ", and " : "", rep->infer_note);
    } else if (rep->p < 1 || rep->m < 1) {
        snprintf(note, len, "the run does not record p and m");
    } else if (rep->n_stages != rep->p) {
        snprintf(note, len, "the run has spans on %d stages but p = %d", rep->n_stages, rep->p);
    } else if (isnan(rep->tcomm_ns)) {
        snprintf(note, len, "meta tcomm_ns = '%s' is not a duration in ns",
                 pps_run_meta(run, "tcomm_ns"));
    } else if (rep->sched_kind >= 0 &&
               pps_schedule_check_params(rep->sched_kind, rep->p, rep->m, rep->v, &perr) < 0) {
        set_note(note, len, "%s", perr.msg);
    } else {
        for (int s = 0; s < rep->n_stages; s++) {
            if (rep->tf_ns[s] <= 0 || rep->tb_ns[s] <= 0) {
                snprintf(note, len, "stage %d has no measured %s to take its costs from", s,
                         rep->tf_ns[s] <= 0 ? "F" : "B or BW");
                break;
            }
        }
    }
}

/*
 * A run made with a pending-W budget (meta stage_w_budget, one per rank: the runtime writes a
 * shard per stage) ran its schedule reordered; the prediction simulates that order too.
 * Returns 0 with *sched replaced when a budget applies, or a negative code.
 */
int pps__analysis_w_budget(const struct pps_run *run, struct pps_schedule *sched,
                           struct pps_err *perr)
{
    struct pps_schedule budgeted = PPS_SCHEDULE_INIT;
    int *budget = calloc((size_t)sched->p, sizeof(int)), any = 0, rc = 0;
    if (!budget)
        return pps_err_set(perr, PPS_ENOMEM, "out of memory");
    for (size_t k = 0; k < run->n_meta; k++) {
        const struct pps_meta_entry *e = &run->meta[k];
        long n = atol(e->value);
        if (strcmp(e->key, "stage_w_budget") || e->rank < 0 || e->rank >= sched->p || n <= 0)
            continue;
        budget[e->rank] = (int)(n > 1000000 ? 1000000 : n);
        any = 1;
    }
    if (any && !(rc = pps_schedule_apply_w_budget(sched, budget, &budgeted, NULL, perr))) {
        pps_schedule_release(sched);
        *sched = budgeted;
    }
    free(budget);
    return rc;
}

double pps__analysis_on_basis(const struct pps_report *rep, const struct pps_sim_result *r)
{
    return rep->basis == PPS_BASIS_STEADY ? r->steady_bubble : r->bubble;
}

/* Each stage's costs into costs: the measured op means, plus the per-op overhead with ovh. */
static void stage_costs(const struct pps_report *rep, struct pps_sim_costs *costs, int ovh)
{
    for (int s = 0; s < rep->p; s++) {
        double o = ovh ? rep->ovh_ns[s] : 0;

        costs->tf[s] = rep->tf_ns[s] + o;
        costs->tb[s] = rep->tb_ns[s] + o;
        /* A fused BW is one op: its overhead is in tb. */
        costs->tw[s] = rep->tw_ns[s] + (rep->fused_bw ? 0 : o);
    }
}

int pps__analysis_note_fail(int rc, const struct pps_err *perr, const char *what,
                            const char *prefix, char *note, size_t len, struct pps_err *err)
{
    if (rc == PPS_ENOMEM)
        return pps_err_set(err, rc, "%s: out of memory", what);
    set_note(note, len, "%s%s", prefix, perr->msg);
    return 0;
}

/* Simulates sched with costs into *out (fresh); the simulator's own failure becomes the note. */
static int simulate(struct pps_report *rep, const struct pps_schedule *sched,
                    const struct pps_sim_costs *costs, struct pps_sim_result *out,
                    struct pps_err *err)
{
    struct pps_err perr = {0, ""};
    int rc;

    memset(out, 0, sizeof(*out));
    rc = pps_simulate(sched, costs, out, &perr);
    if (rc == PPS_ENOMEM)
        return pps_err_set(err, rc, "%s", perr.msg);
    if (rc < 0) {
        set_note(rep->prediction_note, sizeof(rep->prediction_note), "the simulator: %s", perr.msg);
        return 1;
    }
    return 0;
}

static int double_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

/*
 * The time of one message for the prediction: what the run's links measured, typically (the
 * lower median over links, so that one slow link is not taken for the network; each link as
 * pps__analysis_link_ns() takes it); else the run's tcomm_ns meta (a simulated run's, or the
 * emu's modeled link), else 0.
 */
static int choose_tcomm(struct pps_report *rep, struct pps_err *err)
{
    double *lat;
    int n = 0;

    rep->tcomm_measured = 0;
    if (rep->n_links == 0 || isnan(rep->tcomm_ns))
        return 0;
    lat = malloc((size_t)rep->n_links * sizeof(*lat));
    if (!lat)
        return pps_err_set(err, PPS_ENOMEM, "out of memory for the links' times");
    for (int i = 0; i < rep->n_links; i++)
        if (!rep->links[i].dup_ids && !(rep->links[i].skew_ns > 0))
            lat[n++] = pps__analysis_link_ns(rep, &rep->links[i]);
    if (n > 0) {
        qsort(lat, (size_t)n, sizeof(*lat), double_cmp);
        rep->tcomm_ns = lat[(n - 1) / 2];
        rep->tcomm_measured = 1;
    }
    free(lat);
    return 0;
}

/* What one change would give: the same schedule with messages free, with the bare op costs,
 * or with every stage at the stages' mean costs. */
enum change { FREE_MESSAGES, NO_OVERHEAD, BALANCED };

/* The bubble, on the report's basis, that the change gives, into *out; costs are the
 * prediction's again on return. */
static int predict_change(struct pps_report *rep, const struct pps_schedule *sched,
                          struct pps_sim_costs *costs, enum change what, double *out,
                          struct pps_err *err)
{
    struct pps_sim_result r;
    double keep = costs->tcomm, tf = 0, tb = 0, tw = 0;
    int rc;

    stage_costs(rep, costs, what != NO_OVERHEAD);
    if (what == FREE_MESSAGES)
        costs->tcomm = 0;
    if (what == BALANCED) {
        for (int s = 0; s < rep->p; s++) {
            tf += costs->tf[s] / rep->p;
            tb += costs->tb[s] / rep->p;
            tw += costs->tw[s] / rep->p;
        }
        for (int s = 0; s < rep->p; s++) {
            costs->tf[s] = tf;
            costs->tb[s] = tb;
            costs->tw[s] = tw;
        }
    }
    rc = simulate(rep, sched, costs, &r, err);
    if (rc == 0)
        *out = pps__analysis_on_basis(rep, &r);
    pps_sim_result_release(&r);
    costs->tcomm = keep;
    stage_costs(rep, costs, 1);
    return rc < 0 ? rc : 0;
}

/* What the links cost: the same schedule with each link at its measured transfer time. */
static int predict_comm(struct pps_report *rep, const struct pps_schedule *sched,
                        struct pps_sim_costs *costs, struct pps_err *err)
{
    int rc;

    if (rep->n_links == 0)
        return 0;
    stage_costs(rep, costs, 1);
    if (pps_sim_costs_links(costs) < 0)
        return pps_err_set(err, PPS_ENOMEM, "out of memory for the links' costs");
    for (int i = 0; i < rep->n_links; i++) {
        const struct pps_link_stats *l = &rep->links[i];
        if (l->from < rep->p && l->to < rep->p && !l->dup_ids && !(l->skew_ns > 0))
            costs->tlink[l->from * rep->p + l->to] = pps__analysis_link_ns(rep, l);
    }
    rc = simulate(rep, sched, costs, &rep->pred_comm, err);
    if (rc == 0) {
        rep->have_pred_comm = 1;
        rep->pred_links = pps__analysis_on_basis(rep, &rep->pred_comm);
    } else {
        pps_sim_result_release(&rep->pred_comm);
    }
    return rc < 0 ? rc : 0;
}

int pps__analysis_predict(const struct pps_run *run, struct pps_report *rep, struct pps_err *err)
{
    struct pps_schedule sched = PPS_SCHEDULE_INIT;
    struct pps_sim_costs costs;
    struct pps_err perr = {0, ""};
    int have_costs = 0;

    rep->have_pred_comm = 0;
    int ret = 0, rc;

    memset(&costs, 0, sizeof(costs));
    rep->have_prediction = 0;
    check_predictable(run, rep, rep->prediction_note, sizeof(rep->prediction_note));
    if (rep->prediction_note[0])
        goto out;
    if ((ret = choose_tcomm(rep, err)) < 0)
        goto out;

    rc = pps__analysis_generate(run, rep, &sched, &perr);
    if (!rc)
        rc = pps__analysis_w_budget(run, &sched, &perr);
    if (rc == PPS_ENOMEM) {
        ret = pps_err_set(err, rc, "%s", perr.msg);
        goto out;
    }
    if (rc < 0) {
        set_note(rep->prediction_note, sizeof(rep->prediction_note), "%s", perr.msg);
        goto out;
    }
    rc = pps_sim_costs_init(&costs, rep->p, 1.0, 1.0, 1.0);
    if (rc < 0) {
        ret = pps_err_set(err, PPS_ENOMEM, "out of memory for the simulator's costs");
        goto out;
    }
    have_costs = 1;
    stage_costs(rep, &costs, 1);
    costs.tcomm = rep->tcomm_ns;
    costs.topt = rep->topt_ns;
    costs.w_mem = 0.5;

    rc = simulate(rep, &sched, &costs, &rep->pred, err);
    if (rc) {
        ret = rc < 0 ? rc : 0;
        goto out;
    }
    rep->have_prediction = 1;
    /* Back to back, iterations with an optimizer barrier each take the one iteration's time at
     * its bubble; post-validated ones overlap, as the simulator's steady state. */
    rep->pred_iter_ns = rep->postval ? rep->pred.steady_period : rep->pred.makespan;
    rep->pred_steady_bubble = rep->postval ? rep->pred.steady_bubble : rep->pred.bubble;
    /* Free communication and balance first: they keep the prediction's uniform tcomm, which
     * predict_comm replaces with the links. */
    ret = predict_change(rep, &sched, &costs, FREE_MESSAGES, &rep->pred_nocomm, err);
    if (!ret && rep->have_ovh)
        ret = predict_change(rep, &sched, &costs, NO_OVERHEAD, &rep->pred_noovh, err);
    if (!ret)
        ret = predict_change(rep, &sched, &costs, BALANCED, &rep->pred_balanced, err);
    if (!ret)
        ret = predict_comm(rep, &sched, &costs, err);
    rep->prediction_note[0] = '\0'; /* the prediction stands; a side simulation's note does not */
out:
    if (!rep->have_prediction) {
        pps_sim_result_release(&rep->pred);
        memset(&rep->pred, 0, sizeof(rep->pred));
    }
    if (have_costs)
        pps_sim_costs_release(&costs);
    pps_schedule_release(&sched);
    return ret;
}
