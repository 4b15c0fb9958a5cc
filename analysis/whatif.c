/*
 * whatif.c - another schedule or shape on this run's measured costs (whatif.h): the costs the
 * report's prediction used (predict.c), carried to the asked schedule, p, m and v, and simulated.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "analysis_int.h"
#include "whatif.h"

/* Whether w's schedule runs B and W as separate ops (a custom one: any of them). */
static int splits_bw(const struct pps_whatif *w)
{
    if (w->kind < 0 && w->custom) {
        for (size_t i = 0; i < w->custom->start[w->custom->p]; i++)
            if (w->custom->actions[i].op == PPS_OP_B)
                return 1;
        return 0;
    }
    return pps_sched_kind_split(w->kind);
}

/* The stage of r that holds most activations, and how many. */
static int peak_of(const struct pps_sim_result *r, double *peak)
{
    int best = 0;

    for (int s = 1; s < r->p; s++)
        if (r->peak_act[s] > r->peak_act[best])
            best = s;
    *peak = r->p > 0 ? r->peak_act[best] : 0;
    return best;
}

void pps_whatif_baseline(const struct pps_report *rep, struct pps_whatif *w)
{
    memset(w, 0, sizeof(*w));
    w->kind = rep->sched_kind;
    w->p = rep->p;
    w->m = rep->m;
    w->v = rep->v;
    if (!rep->have_prediction) {
        snprintf(w->note, sizeof(w->note), "%s", rep->prediction_note);
        return;
    }
    w->ok = 1;
    w->iter_ns = rep->pred_iter_ns;
    w->bubble = rep->pred_steady_bubble;
    w->peak_stage = peak_of(&rep->pred, &w->peak_act);
}

/*
 * One microbatch through one stage of the asked shape: the run's F, B and W of stage s (or,
 * for another p, the mean over the run's stages, which spreads their sum over the new ones),
 * scaled to the asked m, and the per-op overhead once per op the asked schedule runs.
 */
static void stage_cost(const struct pps_report *rep, const struct pps_whatif_opts *opts,
                       const struct pps_whatif *w, int s, double *tf, double *tb, double *tw)
{
    double f = 0, b = 0, wt = 0, o = 0, scale = (double)rep->m / w->m;
    double per_op = 0;
    int from = s, to = s + 1;

    if (w->p != rep->p)
        from = 0, to = rep->p;
    for (int k = from; k < to; k++) {
        f += rep->tf_ns[k];
        b += rep->tb_ns[k];
        wt += rep->tw_ns[k];
        o += rep->have_ovh ? rep->ovh_ns[k] : 0;
    }
    /* A sum over rep->p stages spread over w->p of them. */
    if (w->p != rep->p) {
        f /= w->p, b /= w->p, wt /= w->p;
        o /= rep->p;
    }
    if (rep->fused_bw && splits_bw(w)) {
        wt = b * opts->w_share;
        b -= wt;
    }
    f *= scale, b *= scale, wt *= scale;
    /* The report's overhead is per microbatch through the stage, its v chunk ops together
     * (report.c): per op, o / v. The asked v chunk ops each pay it; the simulator gives each
     * chunk 1/v of the stage's cost. */
    per_op = o / rep->v * w->v;
    *tf = f + per_op;
    if (splits_bw(w)) {
        *tb = b + per_op;
        *tw = wt + per_op;
    } else {
        /* The simulator runs B + W as one fused op: one overhead. */
        *tb = b + per_op;
        *tw = wt;
    }
}

/* Why the question cannot be answered on this run, or "" when it can. */
static void check_question(const struct pps_report *rep, const struct pps_whatif *w, char *note,
                           size_t len)
{
    struct pps_err perr = {0, ""};

    note[0] = '\0';
    if (!rep->have_prediction)
        snprintf(note, len, "%.200s", rep->prediction_note);
    else if (w->kind < 0 && w->custom &&
             (w->p != w->custom->p || w->m != w->custom->m || w->v != w->custom->v))
        snprintf(note, len, "the schedule is of p=%d, m=%d, v=%d, not the p, m, v asked",
                 w->custom->p, w->custom->m, w->custom->v);
    else if (w->kind < 0 && w->custom)
        ; /* a schedule of its own, validated by whoever read it */
    else if (w->kind < 0 || w->kind >= PPS_SCHED_KIND_COUNT)
        snprintf(note, len, "not a schedule this ppscope can simulate");
    else if (pps_schedule_check_params(w->kind, w->p, w->m, w->v, &perr) < 0)
        snprintf(note, len, "%s", perr.msg);
}

int pps_whatif_predict(const struct pps_report *rep, const struct pps_whatif_opts *opts,
                       struct pps_whatif *w, struct pps_err *err)
{
    struct pps_schedule sched = PPS_SCHEDULE_INIT;
    struct pps_sim_costs costs;
    struct pps_sim_result res;
    struct pps_err perr = {0, ""};
    int rc = 0;

    if (!rep || !opts || !w || !(opts->w_share >= 0 && opts->w_share <= 1))
        return pps_err_set(err, PPS_EINVAL, "what-if: bad arguments");
    memset(&costs, 0, sizeof(costs));
    memset(&res, 0, sizeof(res));
    w->ok = 0;
    w->assumed = 0;
    w->iter_ns = w->bubble = w->peak_act = NAN;
    w->peak_stage = -1;
    check_question(rep, w, w->note, sizeof(w->note));
    if (w->note[0])
        return 0;
    if (rep->fused_bw && splits_bw(w))
        w->assumed |= PPS_WHATIF_ASSUMED_SPLIT;
    if (w->p != rep->p)
        w->assumed |= PPS_WHATIF_ASSUMED_P;
    if (w->m != rep->m)
        w->assumed |= PPS_WHATIF_ASSUMED_M;

    if ((rc = pps_sim_costs_init(&costs, w->p, 1, 1, 1)) < 0) {
        rc = pps_err_set(err, PPS_ENOMEM, "out of memory for the what-if's costs");
        goto out;
    }
    for (int s = 0; s < w->p; s++)
        stage_cost(rep, opts, w, s, &costs.tf[s], &costs.tb[s], &costs.tw[s]);
    costs.tcomm = rep->tcomm_ns;
    costs.topt = rep->topt_ns;
    costs.w_mem = 0.5;
    /* zb-auto is built for the very costs it is replayed on. */
    if (w->kind == PPS_SCHED_ZB_AUTO)
        rc = pps_schedule_auto(&sched, &costs, w->m, opts->mem_limit > 0 ? opts->mem_limit : w->p,
                               &perr);
    else if (w->kind < 0)
        rc = pps_schedule_copy(&sched, w->custom)
                 ? pps_err_set(&perr, PPS_ENOMEM, "out of memory for the schedule")
                 : 0;
    else
        rc = pps_schedule_generate(&sched, w->kind, w->p, w->m, w->v, &perr);
    if (rc < 0) {
        rc = pps__analysis_note_fail(rc, &perr, "what-if", "", w->note, sizeof(w->note), err);
        goto out;
    }
    if ((rc = pps_simulate(&sched, &costs, &res, &perr)) < 0) {
        rc = pps__analysis_note_fail(rc, &perr, "what-if", "the simulator: ", w->note,
                                     sizeof(w->note), err);
        goto out;
    }
    /* The run's own terms, as its prediction (predict.c): back to back with a barrier each, or
     * overlapping when post-validated. */
    w->iter_ns = rep->postval ? res.steady_period : res.makespan;
    w->bubble = rep->postval ? res.steady_bubble : res.bubble;
    w->peak_stage = peak_of(&res, &w->peak_act);
    w->peak_act *= (double)rep->m / w->m;
    w->ok = 1;
out:
    pps_sim_result_release(&res);
    pps_sim_costs_release(&costs);
    pps_schedule_release(&sched);
    return rc;
}

void pps_whatif_assumptions(const struct pps_report *rep, const struct pps_whatif_opts *opts,
                            const struct pps_whatif *w, char *buf, size_t len)
{
    size_t used = 0;

    if (len == 0)
        return;
    buf[0] = '\0';
    if (w->assumed & PPS_WHATIF_ASSUMED_SPLIT)
        pps__analysis_add(buf, len, &used,
                          "B and W split the measured BW %.0f%%/%.0f%% (--w-share)",
                          100 * (1 - opts->w_share), 100 * opts->w_share);
    if (w->assumed & PPS_WHATIF_ASSUMED_P)
        pps__analysis_add(buf, len, &used, "%sthe %d stages' work spread evenly over %d",
                          used ? "; " : "", rep->p, w->p);
    if (w->assumed & PPS_WHATIF_ASSUMED_M)
        pps__analysis_add(buf, len, &used,
                          "%sthe batch kept: a microbatch costs %d/%d of the run's",
                          used ? "; " : "", rep->m, w->m);
}
