/*
 * simulate.c - the predicted timeline of a schedule under given op costs.
 *
 * One iteration: every stage runs its list in order (execute.c), then all meet at the optimizer
 * barrier and step (topt): makespan, busy, idle, bubble, per-action start and end. Peak
 * activations follow the memory model in schedule.h. The steady state runs iterations back to
 * back with each stage stepping right after its own last action (what post-validation allows),
 * until the iteration period settles.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

int pps_sim_costs_init(struct pps_sim_costs *c, int p, double tf, double tb, double tw)
{
    memset(c, 0, sizeof(*c));
    if (p < 1)
        return PPS_EINVAL;
    c->p = p;
    c->w_mem = 0.5;
    c->tf = malloc(sizeof(double) * (size_t)p);
    c->tb = malloc(sizeof(double) * (size_t)p);
    c->tw = malloc(sizeof(double) * (size_t)p);
    if (!c->tf || !c->tb || !c->tw) {
        pps_sim_costs_release(c);
        return PPS_ENOMEM;
    }
    for (int s = 0; s < p; s++) {
        c->tf[s] = tf;
        c->tb[s] = tb;
        c->tw[s] = tw;
    }
    return 0;
}

int pps_sim_costs_links(struct pps_sim_costs *c)
{
    size_t n = (size_t)c->p * (size_t)c->p;

    if (c->p < 1)
        return PPS_EINVAL;
    if (!c->tlink && !(c->tlink = malloc(sizeof(double) * n)))
        return PPS_ENOMEM;
    for (size_t i = 0; i < n; i++)
        c->tlink[i] = c->tcomm;
    return 0;
}

void pps_sim_costs_release(struct pps_sim_costs *c)
{
    free(c->tf);
    free(c->tb);
    free(c->tw);
    free(c->tlink);
    c->tf = c->tb = c->tw = c->tlink = NULL;
}

void pps_sim_result_release(struct pps_sim_result *r)
{
    free(r->busy);
    free(r->idle);
    free(r->peak_act);
    free(r->spans);
    free(r->phase_idle);
    memset(r, 0, sizeof(*r));
}

static int finite_nonneg(double x)
{
    return isfinite(x) && x >= 0;
}

int pps__sim_check_costs(int p, const struct pps_sim_costs *c, struct pps_err *err)
{
    if (c->p != p || !c->tf || !c->tb || !c->tw)
        return pps_err_set(err, PPS_EINVAL, "costs are for %d stages, the schedule has %d", c->p,
                           p);
    for (int k = 0; k < p; k++)
        if (!finite_nonneg(c->tf[k]) || !finite_nonneg(c->tb[k]) || !finite_nonneg(c->tw[k]))
            return pps_err_set(err, PPS_EINVAL,
                               "stage %d: op costs must be finite and >= 0 (tf=%g tb=%g tw=%g)", k,
                               c->tf[k], c->tb[k], c->tw[k]);
    if (!finite_nonneg(c->tcomm) || !finite_nonneg(c->topt))
        return pps_err_set(err, PPS_EINVAL, "tcomm and topt must be finite and >= 0");
    for (int k = 0; c->tlink && k < p * p; k++)
        if (!finite_nonneg(c->tlink[k]))
            return pps_err_set(err, PPS_EINVAL, "the link from stage %d to %d: %g is not a time",
                               k / p, k % p, c->tlink[k]);
    if (!(c->w_mem >= 0 && c->w_mem <= 1))
        return pps_err_set(err, PPS_EINVAL, "w_mem must be in [0, 1], got %g", c->w_mem);
    return 0;
}

static double max_of(const double *x, int n)
{
    double m = x[0];
    for (int k = 1; k < n; k++)
        if (x[k] > m)
            m = x[k];
    return m;
}

/*
 * Runs iterations back to back from the end of the first, each stage starting the next as soon
 * as its own optimizer step ends, and returns the period once three successive periods agree
 * (the timeline of a max-plus system becomes periodic); if they never do within the budget, the
 * mean period over the second half of the run.
 */
static int steady_period(const struct pps_schedule *sc, const struct pps_sim_costs *c, double *end,
                         double *period, struct pps_err *err)
{
    enum { MAX_ITERS = 48 };
    int p = sc->p, rc = 0, stable = 0;
    double *ready = malloc(sizeof(double) * (size_t)p);
    double hist[MAX_ITERS + 1];
    if (!ready)
        return pps_err_set(err, PPS_ENOMEM, "out of memory");
    hist[0] = max_of(end, p);
    int k;
    for (k = 1; k <= MAX_ITERS; k++) {
        for (int s = 0; s < p; s++)
            ready[s] = end[s] + c->topt;
        rc = pps__schedule_execute(sc, c, ready, NULL, end, NULL, err);
        if (rc)
            goto out;
        hist[k] = max_of(end, p);
        double d = hist[k] - hist[k - 1];
        double tol = 1e-9 * (fabs(d) > 1 ? fabs(d) : 1);
        if (k >= 2 && fabs(d - (hist[k - 1] - hist[k - 2])) <= tol) {
            if (++stable >= 2) {
                *period = d;
                goto out;
            }
        } else {
            stable = 0;
        }
    }
    k = MAX_ITERS;
    *period = (hist[k] - hist[k / 2]) / (k - k / 2);
out:
    free(ready);
    return rc;
}

int pps_simulate(const struct pps_schedule *sched, const struct pps_sim_costs *costs,
                 struct pps_sim_result *res, struct pps_err *err)
{
    int p = sched->p, rc;
    double *end = NULL, *unit = NULL;
    memset(res, 0, sizeof(*res));
    rc = pps__sim_check_costs(p, costs, err);
    if (!rc)
        rc = pps__schedule_check_counts(sched, NULL, err);
    if (rc)
        return rc;
    size_t n = sched->start[p];
    res->p = p;
    res->busy = calloc((size_t)p, sizeof(double));
    res->idle = calloc((size_t)p, sizeof(double));
    res->peak_act = calloc((size_t)p, sizeof(double));
    res->spans = calloc(n ? n : 1, sizeof(*res->spans));
    res->phase_idle = calloc((size_t)p * PPS_PHASE_COUNT, sizeof(double));
    end = calloc((size_t)p, sizeof(double));
    /* The memory model: a microbatch through a chunk is 1/v of a stage's, w_mem of it kept for
     * its pending W (after_f, then after_b, for pps_schedule_stage_memory). */
    unit = calloc(2 * (size_t)sched->v, sizeof(double));
    if (!res->busy || !res->idle || !res->peak_act || !res->spans || !res->phase_idle || !end ||
        !unit) {
        rc = pps_err_set(err, PPS_ENOMEM, "out of memory simulating %zu actions", n);
        goto out;
    }
    rc = pps__schedule_execute(sched, costs, NULL, res->spans, end, NULL, err);
    if (rc)
        goto out;

    res->makespan = max_of(end, p) + costs->topt;
    double busy_sum = 0;
    for (int c = 0; c < sched->v; c++) {
        unit[c] = 1.0 / sched->v;
        unit[sched->v + c] = costs->w_mem / sched->v;
    }
    for (int s = 0; s < p; s++) {
        double b = costs->topt;
        int pw;

        for (size_t k = sched->start[s]; k < sched->start[s + 1]; k++)
            b += res->spans[k].end - res->spans[k].start;
        res->busy[s] = b;
        res->idle[s] = res->makespan - b;
        pps_schedule_stage_memory(sched, s, unit, unit + sched->v, &res->peak_act[s], &pw);
        busy_sum += b;
    }
    res->bubble = res->makespan > 0 ? 1.0 - busy_sum / (p * res->makespan) : 0.0;
    if (pps_sim_phases(sched, res, costs->topt, res->phase_idle) < 0) {
        rc = pps_err_set(err, PPS_EINVAL, "could not split the idle time by phase");
        goto out;
    }

    rc = steady_period(sched, costs, end, &res->steady_period, err);
    if (rc)
        goto out;
    res->steady_bubble = res->steady_period > 0 ? 1.0 - busy_sum / (p * res->steady_period) : 0.0;
    if (res->steady_bubble < 0 && res->steady_bubble > -1e-12)
        res->steady_bubble = 0;
out:
    free(end);
    free(unit);
    if (rc)
        pps_sim_result_release(res);
    return rc;
}
