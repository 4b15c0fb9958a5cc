/*
 * phase.c - the bubble by phase of a measured run: each stage's idle time in each iteration
 * split into warm-up, steady state, cool-down and the optimizer barrier, at the edges
 * schedule/phase.c defines (pps_phase_edges) from the stage's own ops, so that a run the
 * simulator predicted (`ppscope sim --trace`) splits as the simulator's own timeline does.
 */
#include <math.h>

#include "analysis_int.h"

static int is_op(int kind)
{
    return kind == PPS_SPAN_F || kind == PPS_SPAN_B || kind == PPS_SPAN_W || kind == PPS_SPAN_BW;
}

static int64_t overlap(int64_t a0, int64_t a1, int64_t b0, int64_t b1)
{
    int64_t lo = a0 > b0 ? a0 : b0, hi = a1 < b1 ? a1 : b1;

    return hi > lo ? hi - lo : 0;
}

void pps_analysis_phase_split(const struct pps_span *spans, size_t n, int32_t iter, int64_t t0,
                              int64_t t1, double idle_ns[PPS_PHASE_COUNT])
{
    /* The edges as offsets from t0: clock readings (ns since the epoch) do not fit a double's
     * 53 bits exactly, a window's offsets do. */
    double first_b = NAN, last_f = NAN, last_op = NAN, rel[PPS_PHASE_COUNT + 1];
    int64_t edge[PPS_PHASE_COUNT + 1], busy[PPS_PHASE_COUNT] = {0}, covered = t0;

    for (size_t i = 0; i < n && spans[i].start_ns < t1; i++) {
        const struct pps_span *s = &spans[i];
        double a = (double)(s->start_ns - t0), b = (double)(s->end_ns - t0);

        if (s->iter != iter || !is_op(s->kind))
            continue;
        if ((s->kind == PPS_SPAN_B || s->kind == PPS_SPAN_BW) && !(a >= first_b))
            first_b = a;
        if (s->kind == PPS_SPAN_F && !(b <= last_f))
            last_f = b;
        if (!(b <= last_op))
            last_op = b;
    }
    pps_phase_edges(0, (double)(t1 - t0), first_b, last_f, last_op, rel);
    /* Each edge inside the window: a window of 2^63 ns does not round back from a double. */
    for (int k = 0; k <= PPS_PHASE_COUNT; k++) {
        int64_t len = t1 - t0;

        edge[k] = !(rel[k] > 0) ? t0 : rel[k] >= (double)len ? t1 : t0 + llround(rel[k]);
    }
    edge[PPS_PHASE_COUNT] = t1;
    /* The union of the compute spans (any label: the measurement's busy time), each moment
     * once: a running "covered up to" mark over spans sorted by start. */
    for (size_t i = 0; i < n && spans[i].start_ns < t1; i++) {
        const struct pps_span *s = &spans[i];
        int64_t a = s->start_ns > covered ? s->start_ns : covered,
                b = s->end_ns < t1 ? s->end_ns : t1;

        if (!pps_span_kind_is_compute(s->kind) || b <= a)
            continue;
        for (int k = 0; k < PPS_PHASE_COUNT; k++)
            busy[k] += overlap(a, b, edge[k], edge[k + 1]);
        covered = b;
    }
    for (int k = 0; k < PPS_PHASE_COUNT; k++)
        idle_ns[k] = (double)(edge[k + 1] - edge[k] - busy[k]);
}

void pps__analysis_phase_totals(struct pps_report *rep)
{
    int n_windows = 0;

    for (int k = 0; k < PPS_PHASE_COUNT; k++)
        rep->phase_bubble[k] = 0;
    for (int it = 0; it < rep->n_iters; it++) {
        struct pps_iter_stats *is = &rep->iters[it];

        for (int k = 0; k < PPS_PHASE_COUNT; k++) {
            double idle = 0;

            for (int s = 0; s < rep->n_stages; s++)
                if (rep->total[s].present)
                    idle += is->stages[s].phase_idle_ns[k];
            is->phase_bubble[k] =
                is->window_ns > 0 && rep->n_present ? idle / (rep->n_present * is->window_ns) : 0.0;
        }
        if (is->partial)
            continue;
        for (int s = 0; s < rep->n_stages; s++)
            for (int k = 0; k < PPS_PHASE_COUNT; k++)
                rep->total[s].phase_idle_ns[k] += is->stages[s].phase_idle_ns[k];
        /* As the run's bubble: the mean over the whole iterations with a window. */
        if (!(is->window_ns > 0))
            continue;
        n_windows++;
        for (int k = 0; k < PPS_PHASE_COUNT; k++)
            rep->phase_bubble[k] += is->phase_bubble[k];
    }
    for (int k = 0; k < PPS_PHASE_COUNT; k++)
        rep->phase_bubble[k] = n_windows ? rep->phase_bubble[k] / n_windows : NAN;
}
