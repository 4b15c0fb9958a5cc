/*
 * phase.c - the bubble by phase: where in an iteration a stage's idle time lies. The phases'
 * edges are defined here once (pps_phase_edges), for the simulator's timeline (pps_sim_phases,
 * below) and for a measured run's spans (analysis/phase.c) alike, so the two cannot disagree on
 * what warm-up or cool-down means.
 */
#include <math.h>

#include "schedule.h"

static const char *const phase_names[PPS_PHASE_COUNT] = {"warmup", "steady", "cooldown", "barrier"};

const char *pps_phase_name(int phase)
{
    return phase >= 0 && phase < PPS_PHASE_COUNT ? phase_names[phase] : "?";
}

static double clamp(double x, double lo, double hi)
{
    return x < lo ? lo : x > hi ? hi : x;
}

void pps_phase_edges(double t0, double t1, double first_b, double last_f, double last_op,
                     double edge[PPS_PHASE_COUNT + 1])
{
    double a, b, c;

    if (!(t1 >= t0))
        t1 = t0;
    /* A stage with no backward has no steady state: its warm-up runs to its last forward, and a
     * stage with no op at all spends the whole window waiting for its first (warm-up). */
    a = !isnan(first_b) ? first_b : !isnan(last_f) ? last_f : t1;
    a = clamp(a, t0, t1);
    b = clamp(!isnan(last_f) && last_f > a ? last_f : a, a, t1);
    c = clamp(!isnan(last_op) && last_op > b ? last_op : b, b, t1);
    edge[0] = t0;
    edge[1] = a;
    edge[2] = b;
    edge[3] = c;
    edge[4] = t1;
}

static double overlap(double a0, double a1, double b0, double b1)
{
    double lo = a0 > b0 ? a0 : b0, hi = a1 < b1 ? a1 : b1;

    return hi > lo ? hi - lo : 0;
}

int pps_sim_phases(const struct pps_schedule *sched, const struct pps_sim_result *res, double topt,
                   double *idle)
{
    if (!sched || !res || !res->spans || !idle || res->p != sched->p || !(topt >= 0))
        return PPS_EINVAL;
    for (int s = 0; s < sched->p; s++) {
        double first_b = NAN, last_f = NAN, last_op = NAN, edge[PPS_PHASE_COUNT + 1];
        /* The optimizer step every stage takes at the barrier, after the last action of all. */
        double opt0 = res->makespan - topt;

        for (size_t k = sched->start[s]; k < sched->start[s + 1]; k++) {
            const struct pps_sim_span *sp = &res->spans[k];
            int op = sched->actions[k].op;

            if ((op == PPS_OP_B || op == PPS_OP_BW) && !(sp->start >= first_b))
                first_b = sp->start;
            if (op == PPS_OP_F && !(sp->end <= last_f))
                last_f = sp->end;
            if (!(sp->end <= last_op))
                last_op = sp->end;
        }
        pps_phase_edges(0, res->makespan, first_b, last_f, last_op, edge);
        for (int ph = 0; ph < PPS_PHASE_COUNT; ph++) {
            /* A stage's actions run one at a time, so their overlaps with a phase add up to
             * its busy time there without counting any moment twice. */
            double busy = topt > 0 ? overlap(opt0, res->makespan, edge[ph], edge[ph + 1]) : 0;

            for (size_t k = sched->start[s]; k < sched->start[s + 1]; k++)
                busy += overlap(res->spans[k].start, res->spans[k].end, edge[ph], edge[ph + 1]);
            idle[(size_t)s * PPS_PHASE_COUNT + (size_t)ph] = edge[ph + 1] - edge[ph] - busy;
        }
    }
    return 0;
}
