/*
 * verdict.c - the sentence a user needs: does the schedule explain the measured bubble, and if
 * not, what does?
 *
 * The prediction runs the schedule with each stage's own mean op costs, so it already holds
 * whatever imbalance the stages have: a measured bubble within the tolerance of it is the
 * schedule's and the costs', and the verdict then says which of the two (the same schedule with
 * balanced stages gives the schedule's share). A bubble above it is time the schedule does not
 * account for, and the verdict names what the evidence shows: links slower than the prediction
 * assumes (the same schedule with the measured links), a host that left the stage threads
 * waiting for a core, or neither. The tolerance comes from the run's own iteration-to-iteration
 * spread, with a floor for the timer and wake-up noise of a real machine. A post-validated run
 * is judged by its steady state (iterations back to back), as it ran.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "analysis_int.h"

static const int op_kinds[] = {PPS_SPAN_F, PPS_SPAN_B, PPS_SPAN_W, PPS_SPAN_BW};

void pps_format_ns(double ns, char *buf, size_t len)
{
    static const struct {
        double ns;
        const char *unit;
    } units[] = {{1e9, "s"}, {1e6, "ms"}, {1e3, "us"}, {1, "ns"}};
    double a = fabs(ns);
    size_t u = 0;

    if (ns == 0) {
        snprintf(buf, len, "0 ns");
        return;
    }
    while (u + 1 < sizeof(units) / sizeof(units[0]) && a < units[u].ns)
        u++;
    a = ns / units[u].ns;
    snprintf(buf, len, "%.*f %s", fabs(a) >= 100 ? 0 : fabs(a) >= 10 ? 1 : 2, a, units[u].unit);
}

void pps__analysis_judge(struct pps_report *rep)
{
    double spread;

    rep->judged_measured = rep->judged_predicted = rep->judged_spread = rep->tolerance = NAN;
    if (rep->n_iters == 0 || isnan(rep->bubble))
        return;
    if (rep->basis == PPS_BASIS_STEADY) {
        rep->judged_measured = rep->steady_bubble;
        rep->judged_spread = rep->steady_spread;
        if (rep->have_prediction)
            rep->judged_predicted = rep->pred_steady_bubble;
    } else {
        rep->judged_measured = rep->bubble;
        rep->judged_spread = rep->bubble_spread;
        if (rep->have_prediction)
            rep->judged_predicted = rep->pred.bubble;
    }
    spread = isnan(rep->judged_spread) ? 0 : PPS_VERDICT_SIGMAS * rep->judged_spread;
    rep->tolerance = spread > PPS_VERDICT_FLOOR ? spread : PPS_VERDICT_FLOOR;
}

const char *pps_verdict_name(int verdict)
{
    switch (verdict) {
    case PPS_VERDICT_AS_PREDICTED:
        return "as_predicted";
    case PPS_VERDICT_ABOVE:
        return "above";
    case PPS_VERDICT_BELOW:
        return "below";
    default:
        return "none";
    }
}

static double op_time(const struct pps_stage_stats *st)
{
    double t = 0;

    for (size_t k = 0; k < sizeof(op_kinds) / sizeof(op_kinds[0]); k++)
        t += st->busy_ns[op_kinds[k]];
    return t;
}

int pps_report_heaviest(const struct pps_report *rep, double *factor)
{
    double total = 0, best_f = NAN;
    int best = -1;

    *factor = NAN;
    if (!rep || rep->n_present < 2 || rep->n_full < 1)
        return -1;
    for (int s = 0; s < rep->n_stages; s++)
        if (rep->total[s].present)
            total += op_time(&rep->total[s]);
    for (int s = 0; s < rep->n_stages; s++) {
        double t = pps__analysis_stage_compute(rep, s, NULL), others;

        if (!rep->total[s].present)
            continue;
        others = (total - op_time(&rep->total[s])) / (rep->n_present - 1);
        if (!(others > 0))
            continue;
        if (best < 0 || t / others > best_f) {
            best = s;
            best_f = t / others;
        }
    }
    *factor = best_f;
    return best;
}

void pps__analysis_add(char *buf, size_t len, size_t *used, const char *fmt, ...)
{
    va_list ap;
    int n;

    if (!len || *used >= len - 1)
        return;
    va_start(ap, fmt);
    n = vsnprintf(buf + *used, len - *used, fmt, ap);
    va_end(ap);
    if (n > 0)
        *used = *used + (size_t)n < len ? *used + (size_t)n : len - 1;
}

/* The figures the verdict compares, named as the user sees them. */
static const char *basis_word(const struct pps_report *rep)
{
    return rep->basis == PPS_BASIS_STEADY ? "steady bubble" : "bubble";
}

/* Above the prediction: what the measurements name. */
static void add_causes_above(const struct pps_report *rep, char *buf, size_t len, size_t *used)
{
    int named = 0;

    if (pps__analysis_links_matter(rep)) {
        char links[160];

        pps__analysis_slow_links_text(rep, links, sizeof(links));
        pps__analysis_add(
            buf, len, used,
            "communication: %s; with the links as measured the simulator predicts %.1f%%", links,
            100 * rep->pred_links);
        named++;
    }
    if (pps__analysis_contended(rep)) {
        pps__analysis_add(buf, len, used,
                          "%shost contention: the stage threads waited for a CPU core %.1f%% of "
                          "their time",
                          named ? "; " : "", 100 * rep->host.contention);
        if (rep->host.cpus > 0)
            pps__analysis_add(buf, len, used, " (%d stage thread%s on %d core%s)",
                              rep->host.stage_threads, rep->host.stage_threads == 1 ? "" : "s",
                              rep->host.cpus, rep->host.cpus == 1 ? "" : "s");
        named++;
    }
    if (!named) {
        pps__analysis_add(buf, len, used,
                          "not the schedule, nor the links or the host as measured");
        if (!isnan(rep->op_cv) && rep->op_cv >= PPS_OP_CV_NOTE)
            pps__analysis_add(
                buf, len, used,
                "; its op times vary (up to %.0f%% coefficient of variation, stage %d's %s), "
                "and a prediction from mean costs does not see what that costs",
                100 * rep->op_cv, rep->op_cv_stage, pps_span_kind_name(rep->op_cv_kind));
    }
}

/* Within the tolerance: what makes the prediction, imbalance, communication or the schedule. */
static void add_causes_within(const struct pps_report *rep, char *buf, size_t len, size_t *used)
{
    double f;
    int s = pps_report_heaviest(rep, &f), named = 0;

    if (s >= 0 && f > 1 + PPS_FLAG_IMBALANCE_MARGIN && !isnan(rep->pred_balanced) &&
        rep->judged_predicted - rep->pred_balanced > rep->tolerance) {
        pps__analysis_add(
            buf, len, used,
            "imbalance explains it: stage %d computes %.2fx the other stages' mean, and balanced "
            "stages would give %.1f%%",
            s, f, 100 * rep->pred_balanced);
        named++;
    }
    if (!isnan(rep->pred_nocomm) && rep->judged_predicted - rep->pred_nocomm > rep->tolerance) {
        char t[32];

        pps_format_ns(rep->tcomm_ns, t, sizeof(t));
        pps__analysis_add(
            buf, len, used,
            "%scommunication explains %s: a message takes %s%s, and free messages would give "
            "%.1f%%",
            named ? "; " : "", named ? "part" : "it", t,
            rep->tcomm_measured ? " on the run's links" : "", 100 * rep->pred_nocomm);
        named++;
    }
    if (!isnan(rep->pred_noovh) && rep->judged_predicted - rep->pred_noovh > rep->tolerance) {
        pps__analysis_add(
            buf, len, used,
            "%sthe runtime's overhead between ops explains %s: without it the bubble would be "
            "%.1f%%",
            named ? "; " : "", named ? "part" : "it", 100 * rep->pred_noovh);
        named++;
    }
    if (!named) {
        pps__analysis_add(buf, len, used, "the schedule explains it, at the measured op costs");
        if (!isnan(rep->pred_balanced))
            pps__analysis_add(buf, len, used, " (balanced stages would give %.1f%%)",
                              100 * rep->pred_balanced);
    }
    /* A wide tolerance is a weak test; say so, and what makes it wide where that is known. */
    if (rep->tolerance > 2 * PPS_VERDICT_FLOOR) {
        pps__analysis_add(buf, len, used,
                          "; a loose test: its iterations vary (standard deviation %.1f pp)",
                          100 * rep->judged_spread);
        if (pps__analysis_contended(rep))
            pps__analysis_add(buf, len, used,
                              " and its stage threads waited for a CPU core %.1f%% of their time",
                              100 * rep->host.contention);
    }
}

int pps_report_verdict(const struct pps_report *rep, char *buf, size_t len)
{
    size_t used = 0;
    double diff;
    int verdict;

    if (len)
        buf[0] = '\0';
    if (!rep || rep->n_iters == 0 || isnan(rep->judged_measured)) {
        pps__analysis_add(
            buf, len, &used,
            "no compute spans (F, B, W, BW, OPT) with an iteration: no window to measure");
        return PPS_VERDICT_NONE;
    }
    if (!rep->have_prediction || isnan(rep->judged_predicted)) {
        pps__analysis_add(buf, len, &used, "no prediction to compare with: %s",
                          rep->prediction_note);
        return PPS_VERDICT_NONE;
    }
    diff = rep->judged_measured - rep->judged_predicted;
    if (diff > rep->tolerance) {
        verdict = PPS_VERDICT_ABOVE;
        pps__analysis_add(buf, len, &used,
                          "%s %.1f%% is %.1f pp above the prediction (%.1f%%, tolerance %.1f pp): ",
                          basis_word(rep), 100 * rep->judged_measured, 100 * diff,
                          100 * rep->judged_predicted, 100 * rep->tolerance);
        add_causes_above(rep, buf, len, &used);
    } else if (diff < -rep->tolerance) {
        verdict = PPS_VERDICT_BELOW;
        pps__analysis_add(
            buf, len, &used,
            "%s %.1f%% is %.1f pp below the prediction (%.1f%%, tolerance %.1f pp): the run "
            "overlapped work the simulator runs in sequence, or its op costs varied",
            basis_word(rep), 100 * rep->judged_measured, -100 * diff, 100 * rep->judged_predicted,
            100 * rep->tolerance);
    } else {
        verdict = PPS_VERDICT_AS_PREDICTED;
        pps__analysis_add(
            buf, len, &used,
            "%s %.1f%% is within %.1f pp of the prediction (%.1f%%): ", basis_word(rep),
            100 * rep->judged_measured, 100 * rep->tolerance, 100 * rep->judged_predicted);
        add_causes_within(rep, buf, len, &used);
    }
    return verdict;
}
