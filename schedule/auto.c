/*
 * auto.c - zb-auto: the zero-bubble paper's automatic scheduler (Qi et al., "Zero Bubble
 * Pipeline Parallelism", section 3), built from per-stage costs and a memory limit.
 *
 * The paper's heuristic, as list scheduling with the real op costs: each stage, when free, runs
 * a ready B (it is on the critical path), else a ready F that the limits allow, else a pending W
 * (a W fills a gap the next F or B would leave idle); with nothing ready it waits for the first
 * of its next F and B to arrive. Two limits hold the F's back: the memory limit (at most K
 * microbatches live, from F to W, so a full stage runs a W to make room) and a per-stage cap on
 * microbatches F'd and not yet B'd, which sets how many warm-up F's the stage runs before its
 * first B (1F1B and ZB-H1 use p - s; ZB-H2 lets memory alone decide). With "banked" W's a stage
 * runs W's only when the limit stops an F or its F's are done, ZB-H2's way of keeping them for
 * the drain.
 *
 * The local search is over those knobs: a few starting shapes of the caps (ZB-H1's p - s, twice
 * it, all at the limit) with W's filling gaps or banked, then one stage's cap at a time up or
 * down (and all of them together) while the simulated makespan improves. The handcrafted orders
 * that fit the limit (1F1B and GPipe with their backwards split, ZB-H1, ZB-H2) are candidates
 * too, so zb-auto is never worse than they are under the same costs and limit. Every pass is a
 * greedy run whose start times are the simulator's (each op starts when its stage is free and its
 * inputs are in), so the makespans compared are pps_simulate's. Deterministic: no randomness, and
 * ties keep the earlier candidate.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* One greedy pass's state, allocated once and reset for each pass. */
struct pass {
    const struct pps_sim_costs *c;
    int p, m, limit;
    int *nf, *nb, *nw;   /* per stage: F, B and W issued, each in microbatch order */
    int *op;             /* per stage: the op it would run next, -1 none known yet */
    double *at;          /* per stage: when that op would start */
    double *tfree;       /* per stage: when it is free */
    double *fend, *bend; /* [s*m + mb]: when F and B end, -1 not yet issued */
    int *tree, leaves;   /* a tournament tree over the stages: tree[1] starts first */
    struct pps_action *act;
};

/* The knobs a pass runs with. */
struct knobs {
    int *cap; /* per stage: most microbatches F'd and not yet B'd, 1 .. limit */
    int bank; /* 1: W's only when the limit stops an F or the F's are done (ZB-H2) */
};

static double link_time(const struct pps_sim_costs *c, int from, int to)
{
    return c->tlink ? c->tlink[from * c->p + to] : c->tcomm;
}

/* When stage s's next F can start, -1 while its input is not issued. */
static double f_ready(const struct pass *g, int s)
{
    double t = g->tfree[s], e;

    if (s == 0)
        return t;
    e = g->fend[(size_t)(s - 1) * g->m + g->nf[s]];
    if (e < 0)
        return -1;
    e += link_time(g->c, s - 1, s);
    return e > t ? e : t;
}

/* When stage s's next B can start (its own F has ended: it ran on this stage), -1 while the
 * gradient from the next stage is not issued. */
static double b_ready(const struct pass *g, int s)
{
    double t = g->tfree[s], e;

    if (s == g->p - 1)
        return t;
    e = g->bend[(size_t)(s + 1) * g->m + g->nb[s]];
    if (e < 0)
        return -1;
    e += link_time(g->c, s + 1, s);
    return e > t ? e : t;
}

/*
 * Stage s's next op and its start. Ops are issued in the order of their start times over all
 * stages (the tree), so an input not issued yet cannot arrive before any op still to issue: what
 * is not known to be ready at the stage's free time is not ready then.
 */
static void decide(struct pass *g, const struct knobs *k, int s)
{
    int nf = g->nf[s], nb = g->nb[s], nw = g->nw[s], m = g->m;
    int can_b = nb < nf;
    int can_f = nf < m && nf - nw < g->limit && nf - nb < k->cap[s];
    int can_w = nw < nb;
    double t = g->tfree[s], rb, rf;

    if (k->bank)
        can_w = can_w && (nf == m || nf - nw >= g->limit);
    rb = can_b ? b_ready(g, s) : -1;
    rf = can_f ? f_ready(g, s) : -1;
    g->at[s] = t;
    if (rb >= 0 && rb <= t)
        g->op[s] = PPS_OP_B;
    else if (rf >= 0 && rf <= t)
        g->op[s] = PPS_OP_F;
    else if (can_w)
        g->op[s] = PPS_OP_W;
    else if (rb >= 0 && (rf < 0 || rb <= rf))
        g->op[s] = PPS_OP_B, g->at[s] = rb;
    else if (rf >= 0)
        g->op[s] = PPS_OP_F, g->at[s] = rf;
    else
        g->op[s] = -1;
}

/* The stage of a and b (-1: none) whose op starts first; the lower stage on a tie. */
static int first_of(const struct pass *g, int a, int b)
{
    if (a < 0 || g->op[a] < 0)
        return b >= 0 && g->op[b] >= 0 ? b : -1;
    if (b < 0 || g->op[b] < 0)
        return a;
    if (g->at[b] < g->at[a] || (g->at[b] == g->at[a] && b < a))
        return b;
    return a;
}

static void tree_update(struct pass *g, int s)
{
    for (int i = (g->leaves + s) / 2; i >= 1; i /= 2)
        g->tree[i] = first_of(g, g->tree[2 * i], g->tree[2 * i + 1]);
}

/* Issues stage s's decided op. */
static void issue(struct pass *g, int s)
{
    const struct pps_sim_costs *c = g->c;
    int op = g->op[s], mb;
    double end;
    struct pps_action *a;

    if (op == PPS_OP_F) {
        mb = g->nf[s]++;
        end = g->at[s] + c->tf[s];
        g->fend[(size_t)s * g->m + mb] = end;
    } else if (op == PPS_OP_B) {
        mb = g->nb[s]++;
        end = g->at[s] + c->tb[s];
        g->bend[(size_t)s * g->m + mb] = end;
    } else {
        mb = g->nw[s]++;
        end = g->at[s] + c->tw[s];
    }
    g->tfree[s] = end;
    a = &g->act[(size_t)s * 3 * g->m + (size_t)(g->nf[s] + g->nb[s] + g->nw[s] - 1)];
    a->op = (uint8_t)op;
    a->chunk = 0;
    a->mb = (uint32_t)mb;
}

/* One greedy pass with knobs k into g->act; *makespan as pps_simulate gives it. */
static int run_pass(struct pass *g, const struct knobs *k, double *makespan, struct pps_err *err)
{
    int p = g->p;
    size_t left = (size_t)p * 3 * (size_t)g->m;

    for (int s = 0; s < p; s++) {
        g->nf[s] = g->nb[s] = g->nw[s] = 0;
        g->tfree[s] = 0;
    }
    for (size_t i = 0; i < (size_t)p * (size_t)g->m; i++)
        g->fend[i] = g->bend[i] = -1;
    for (int i = 0; i < 2 * g->leaves; i++)
        g->tree[i] = i >= g->leaves && i - g->leaves < p ? i - g->leaves : -1;
    for (int s = 0; s < p; s++)
        decide(g, k, s);
    for (int i = g->leaves - 1; i >= 1; i--)
        g->tree[i] = first_of(g, g->tree[2 * i], g->tree[2 * i + 1]);
    for (; left > 0; left--) {
        int s = g->tree[1];

        /* Never: the oldest microbatch in flight can always go on down and back up. */
        if (s < 0)
            return pps_err_set(err, PPS_ESCHEDULE, "internal error: zb-auto's pass is stuck");
        issue(g, s);
        for (int r = s - 1; r <= s + 1; r++) {
            if (r < 0 || r >= p)
                continue;
            if (g->nw[r] == g->m)
                g->op[r] = -1;
            else
                decide(g, k, r);
            tree_update(g, r);
        }
    }
    *makespan = 0;
    for (int s = 0; s < p; s++)
        if (g->tfree[s] > *makespan)
            *makespan = g->tfree[s];
    *makespan += g->c->topt;
    return 0;
}

static void pass_release(struct pass *g)
{
    free(g->nf);
    free(g->nb);
    free(g->nw);
    free(g->op);
    free(g->at);
    free(g->tfree);
    free(g->fend);
    free(g->bend);
    free(g->tree);
    free(g->act);
}

static int pass_init(struct pass *g, const struct pps_sim_costs *c, int m, int limit)
{
    size_t p = (size_t)c->p, cells = p * (size_t)m;

    memset(g, 0, sizeof(*g));
    g->c = c;
    g->p = c->p;
    g->m = m;
    g->limit = limit;
    for (g->leaves = 1; g->leaves < c->p; g->leaves *= 2)
        ;
    g->nf = malloc(p * sizeof(int));
    g->nb = malloc(p * sizeof(int));
    g->nw = malloc(p * sizeof(int));
    g->op = malloc(p * sizeof(int));
    g->at = malloc(p * sizeof(double));
    g->tfree = malloc(p * sizeof(double));
    g->fend = malloc(cells * sizeof(double));
    g->bend = malloc(cells * sizeof(double));
    g->tree = malloc(2 * (size_t)g->leaves * sizeof(int));
    g->act = calloc(3 * cells, sizeof(*g->act));
    if (!g->nf || !g->nb || !g->nw || !g->op || !g->at || !g->tfree || !g->fend || !g->bend ||
        !g->tree || !g->act) {
        pass_release(g);
        memset(g, 0, sizeof(*g));
        return PPS_ENOMEM;
    }
    return 0;
}

int pps_schedule_live_peak(const struct pps_schedule *sched)
{
    int peak = 0;

    for (int s = 0; s < sched->p; s++) {
        int live = 0;

        for (size_t i = 0; i < pps_schedule_len(sched, s); i++) {
            int op = pps_schedule_at(sched, s, i)->op;

            live += op == PPS_OP_F ? 1 : op == PPS_OP_B ? 0 : -1;
            if (live > peak)
                peak = live;
        }
    }
    return peak;
}

/* A handcrafted kind's order with every BW split into B then W (the same timeline: the W is
 * ready when its B ends), into out's actions (p * 3m of them, stage s from s * 3m). */
static int handcrafted(int kind, const struct pps_sim_costs *c, int m, struct pps_action *out,
                       struct pps_err *err)
{
    struct pps_schedule s = PPS_SCHEDULE_INIT;
    int rc = pps_schedule_generate(&s, kind, c->p, m, 1, err);

    if (rc)
        return rc;
    for (int st = 0; st < c->p; st++) {
        size_t n = (size_t)st * 3 * (size_t)m;

        for (size_t i = 0; i < pps_schedule_len(&s, st); i++) {
            struct pps_action a = *pps_schedule_at(&s, st, i);

            if (a.op == PPS_OP_BW) {
                a.op = PPS_OP_B;
                out[n++] = a;
                a.op = PPS_OP_W;
            }
            out[n++] = a;
        }
    }
    pps_schedule_release(&s);
    return 0;
}

/*
 * The search: keeps the best order found in best->actions, its makespan in best_ms. Orders that
 * tie (many reach the same bound) are told apart by their makespan with slower messages
 * (stress: twice tcomm, plus a twentieth of the mean F), the cost a plan most often gets wrong
 * (a measured hop carries the runtime's own overhead): the order with more slack on its
 * messages wins, and on a tie again the earlier.
 */
struct search {
    struct pass g;
    struct pps_schedule *best;
    double best_ms, best_stress; /* best_stress NaN: not computed yet */
    struct pps_sim_costs stress;
    double *end; /* p stage ends, scratch */
    int evals, max_evals;
};

/* Whether x is less than `than` by more than rounding. */
static int less(double x, double than)
{
    return isinf(than) ? x < than : x < than - 1e-9 * (fabs(than) > 1 ? fabs(than) : 1);
}

/* The makespan of actions (laid out as sr->best's) under costs c. */
static int makespan_of(struct search *sr, struct pps_action *actions, const struct pps_sim_costs *c,
                       double *ms, struct pps_err *err)
{
    struct pps_schedule view = *sr->best;
    int rc;

    view.actions = actions;
    if ((rc = pps__schedule_execute(&view, c, NULL, NULL, sr->end, NULL, err)))
        return rc;
    *ms = 0;
    for (int s = 0; s < sr->g.p; s++)
        *ms = sr->end[s] > *ms ? sr->end[s] : *ms;
    *ms += c->topt;
    return 0;
}

/* Offers actions, of makespan ms, as the best order: kept if it is faster, or as fast and
 * better under stress. */
static int offer(struct search *sr, struct pps_action *actions, double ms, struct pps_err *err)
{
    double st;
    int rc;

    if (!less(ms, sr->best_ms)) {
        if (less(sr->best_ms, ms))
            return 0;
        if (isnan(sr->best_stress) &&
            (rc = makespan_of(sr, sr->best->actions, &sr->stress, &sr->best_stress, err)))
            return rc;
        if ((rc = makespan_of(sr, actions, &sr->stress, &st, err)))
            return rc;
        if (!less(st, sr->best_stress))
            return 0;
        sr->best_stress = st;
    } else {
        sr->best_stress = NAN;
    }
    memcpy(sr->best->actions, actions, sr->best->start[sr->g.p] * sizeof(*actions));
    sr->best_ms = ms;
    return 0;
}

/* Runs a pass with k; *ms its makespan. Offers its order as the best. */
static int try_knobs(struct search *sr, const struct knobs *k, double *ms, struct pps_err *err)
{
    int rc = run_pass(&sr->g, k, ms, err);

    sr->evals++;
    return rc ? rc : offer(sr, sr->g.act, *ms, err);
}

/* sr->stress from c: the same costs with slower messages (struct search). */
static int stress_init(struct search *sr, const struct pps_sim_costs *c)
{
    double mean_f = 0, extra;
    int p = c->p;

    for (int s = 0; s < p; s++)
        mean_f += c->tf[s] / p;
    extra = mean_f / 20;
    if (pps_sim_costs_init(&sr->stress, p, 0, 0, 0))
        return PPS_ENOMEM;
    memcpy(sr->stress.tf, c->tf, (size_t)p * sizeof(double));
    memcpy(sr->stress.tb, c->tb, (size_t)p * sizeof(double));
    memcpy(sr->stress.tw, c->tw, (size_t)p * sizeof(double));
    sr->stress.topt = c->topt;
    sr->stress.tcomm = 2 * c->tcomm + extra;
    if (c->tlink) {
        if (pps_sim_costs_links(&sr->stress))
            return PPS_ENOMEM;
        for (int k = 0; k < p * p; k++)
            sr->stress.tlink[k] = 2 * c->tlink[k] + extra;
    }
    return 0;
}

static int clamp(int x, int lo, int hi)
{
    return x < lo ? lo : x > hi ? hi : x;
}

/* Coordinate descent on the caps from k (in place): one stage's cap, then all of them, a step
 * up or down, kept while the makespan improves. */
static int descend(struct search *sr, struct knobs *k, double ms, int top, struct pps_err *err)
{
    int p = sr->g.p, rc, *save = malloc((size_t)p * sizeof(int));
    double x;

    if (!save)
        return PPS_ENOMEM;
    for (int improved = 1; improved && sr->evals < sr->max_evals;) {
        improved = 0;
        for (int s = -1; s < p && sr->evals < sr->max_evals; s++) {
            for (int d = -1; d <= 1 && sr->evals < sr->max_evals; d += 2) {
                int moved = 0;

                memcpy(save, k->cap, (size_t)p * sizeof(int));
                for (int r = s < 0 ? 0 : s; r < (s < 0 ? p : s + 1); r++) {
                    int c = clamp(k->cap[r] + d, 1, top);

                    moved |= c != k->cap[r];
                    k->cap[r] = c;
                }
                if (!moved)
                    continue;
                if ((rc = try_knobs(sr, k, &x, err)))
                    goto out;
                if (less(x, ms)) {
                    ms = x;
                    improved = 1;
                } else {
                    memcpy(k->cap, save, (size_t)p * sizeof(int));
                }
            }
        }
    }
    rc = 0;
out:
    free(save);
    return rc;
}

/* The work one search may do: about 4 10^6 issued ops, so p = 64, m = 1024 still takes a fraction
 * of a second; never fewer passes than the starting shapes. */
#define SEARCH_OPS 4000000.0
#define N_SHAPES   3

static int search_run(struct search *sr, int top, struct pps_err *err)
{
    int p = sr->g.p, rc = 0, *cap = malloc((size_t)p * sizeof(int)),
        *best_cap = malloc((size_t)p * sizeof(int));
    struct knobs k = {cap, 0}, kb = {best_cap, 0};
    double ms, start_ms = INFINITY;

    if (!cap || !best_cap) {
        rc = PPS_ENOMEM;
        goto out;
    }
    /* The starting shapes: ZB-H1's warm-up (p - s), twice it, and all at the limit (ZB-H2's),
     * each with W's filling gaps and banked. */
    for (int bank = 0; bank < 2; bank++) {
        for (int shape = 0; shape < N_SHAPES; shape++) {
            for (int s = 0; s < p; s++)
                cap[s] = clamp(shape == 0 ? p - s : shape == 1 ? 2 * (p - s) - 1 : top, 1, top);
            k.bank = bank;
            if ((rc = try_knobs(sr, &k, &ms, err)))
                goto out;
            if (less(ms, start_ms)) {
                start_ms = ms;
                memcpy(best_cap, cap, (size_t)p * sizeof(int));
                kb.bank = bank;
            }
        }
    }
    rc = descend(sr, &kb, start_ms, top, err);
out:
    free(cap);
    free(best_cap);
    return rc;
}

/* The handcrafted orders that fit the limit, as candidates. */
static int search_handcrafted(struct search *sr, int limit, struct pps_err *err)
{
    static const int kinds[] = {PPS_SCHED_ZB_H1, PPS_SCHED_ZB_H2, PPS_SCHED_1F1B, PPS_SCHED_GPIPE};
    struct pps_schedule cand = *sr->best;
    double ms;
    int rc = 0;

    cand.actions = sr->g.act;
    for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]) && !rc; i++) {
        if ((rc = handcrafted(kinds[i], sr->g.c, sr->g.m, cand.actions, err)))
            break;
        if (pps_schedule_live_peak(&cand) > limit)
            continue;
        if (!(rc = makespan_of(sr, cand.actions, sr->g.c, &ms, err)))
            rc = offer(sr, cand.actions, ms, err);
    }
    return rc;
}

int pps_schedule_auto(struct pps_schedule *out, const struct pps_sim_costs *costs, int m,
                      int mem_limit, struct pps_err *err)
{
    struct search sr;
    int rc, p = costs ? costs->p : 0, top;
    size_t n;

    memset(&sr, 0, sizeof(sr));
    if (!costs || !costs->tf || !costs->tb || !costs->tw)
        return pps_err_set(err, PPS_EINVAL, "zb-auto needs the costs of every stage");
    if ((rc = pps_schedule_check_params(PPS_SCHED_ZB_AUTO, p, m, 1, err)))
        return rc;
    if (mem_limit < PPS_ZB_AUTO_MIN_LIMIT)
        return pps_err_set(err, PPS_EINVAL,
                           "zb-auto needs a memory limit of at least %d live microbatch per stage "
                           "(one F to W at a time); got %d",
                           PPS_ZB_AUTO_MIN_LIMIT, mem_limit);
    if ((rc = pps__sim_check_costs(p, costs, err)))
        return rc;
    top = mem_limit < m ? mem_limit : m;
    n = (size_t)p * 3 * (size_t)m;
    if (pps_schedule_alloc(out, p, m, 1, n))
        return pps_err_set(err, PPS_ENOMEM, "out of memory for %zu actions", n);
    for (int s = 0; s <= p; s++)
        out->start[s] = (size_t)s * 3 * (size_t)m;
    if (pass_init(&sr.g, costs, m, top) || stress_init(&sr, costs) ||
        !(sr.end = malloc((size_t)p * sizeof(double)))) {
        rc = pps_err_set(err, PPS_ENOMEM, "out of memory for zb-auto's search");
        goto out;
    }
    sr.best = out;
    sr.best_ms = INFINITY;
    sr.best_stress = NAN;
    sr.max_evals = (int)(SEARCH_OPS / (double)n);
    if (sr.max_evals > 400)
        sr.max_evals = 400;
    if (sr.max_evals < 2 * N_SHAPES)
        sr.max_evals = 2 * N_SHAPES;
    if ((rc = search_run(&sr, top, err)) || (rc = search_handcrafted(&sr, top, err)))
        goto out;
    out->kind = PPS_SCHED_ZB_AUTO;
    out->placement = PPS_PLACE_LOOP;
out:
    pass_release(&sr.g);
    pps_sim_costs_release(&sr.stress);
    free(sr.end);
    if (rc) {
        pps_schedule_release(out);
        if (rc == PPS_ENOMEM)
            rc = pps_err_set(err, rc, "out of memory for zb-auto's search");
    }
    return rc;
}
