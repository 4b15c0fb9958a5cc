/*
 * test_phase.c - the bubble by phase (schedule/phase.c, analysis/phase.c): the report's split of
 * a run that is exactly a simulated timeline (what `ppscope sim --trace` writes) is the
 * simulator's own, for every schedule; 1F1B's split is the one worked out by hand; the four
 * parts add up to the stage's idle exactly; the edges where a stage lacks some op.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "analysis_fixture.h"
#include "schedule.h"
#include "test.h"

static double sim_phase(const struct pps_sim_result *r, int s, int ph)
{
    return r->phase_idle[(size_t)s * PPS_PHASE_COUNT + (size_t)ph];
}

/* The report's split of the simulated run is the simulator's, iteration by iteration and over
 * the run; each adds up to its idle, and the phases' bubbles to the bubble. */
static void check_phases_match_sim(int kind, int v, const struct pps_sim_costs *c, int64_t gap_ns)
{
    enum { P = 4, M = 8, ITERS = 3 };
    struct pps_sim_result res;
    struct pps_run *r = run_from_sim(kind, P, M, v, c, ITERS, gap_ns, &res);
    struct pps_report *rep = r ? report_of(r) : NULL;
    double bubble = 0;

    if (!rep)
        goto out;
    CHECK_EQ_INT(rep->n_full, ITERS);
    for (int s = 0; s < P; s++) {
        double sum = 0;

        for (int ph = 0; ph < PPS_PHASE_COUNT; ph++)
            sum += sim_phase(&res, s, ph);
        CHECK_NEAR(sum, res.idle[s], 1e-9);
    }
    for (int it = 0; it < rep->n_iters; it++) {
        const struct pps_iter_stats *is = &rep->iters[it];
        double pb = 0;

        for (int s = 0; s < P; s++) {
            double sum = 0;

            for (int ph = 0; ph < PPS_PHASE_COUNT; ph++) {
                CHECK_NEAR(is->stages[s].phase_idle_ns[ph], sim_phase(&res, s, ph) * NS_PER_UNIT,
                           1e-6);
                sum += is->stages[s].phase_idle_ns[ph];
            }
            /* To the nanosecond: the phases cut the window, they do not estimate it. */
            CHECK_NEAR(sum, is->stages[s].idle_ns, 0);
        }
        for (int ph = 0; ph < PPS_PHASE_COUNT; ph++)
            pb += is->phase_bubble[ph];
        CHECK_NEAR(pb, is->bubble, 1e-12);
    }
    for (int s = 0; s < P; s++) {
        double sum = 0;

        for (int ph = 0; ph < PPS_PHASE_COUNT; ph++) {
            CHECK_NEAR(rep->total[s].phase_idle_ns[ph],
                       ITERS * sim_phase(&res, s, ph) * NS_PER_UNIT, 1e-6);
            sum += rep->total[s].phase_idle_ns[ph];
        }
        CHECK_NEAR(sum, rep->total[s].idle_ns, 0);
    }
    for (int ph = 0; ph < PPS_PHASE_COUNT; ph++)
        bubble += rep->phase_bubble[ph];
    CHECK_NEAR(bubble, rep->bubble, 1e-12);
out:
    pps_report_free(rep);
    run_free(r);
    pps_sim_result_release(&res);
}

/* Imbalanced stages, messages that take time and an optimizer step: every phase has some idle
 * somewhere, and every time is a multiple of 1/8 unit, exact in the run's nanoseconds. */
static void costs_uneven(struct pps_sim_costs *c)
{
    static const double mult[4] = {1, 1.25, 1, 1.5};

    CHECK_EQ_INT(pps_sim_costs_init(c, 4, 1.0, 1.5, 0.5), 0);
    for (int s = 0; s < 4; s++) {
        c->tf[s] *= mult[s];
        c->tb[s] *= mult[s];
        c->tw[s] *= mult[s];
    }
    c->tcomm = 0.25;
    c->topt = 0.5;
}

static void test_gpipe_phases_match_sim(void)
{
    struct pps_sim_costs c;

    costs_uneven(&c);
    check_phases_match_sim(PPS_SCHED_GPIPE, 1, &c, 0);
    pps_sim_costs_release(&c);
}

static void test_1f1b_phases_match_sim(void)
{
    struct pps_sim_costs c;

    costs_uneven(&c);
    check_phases_match_sim(PPS_SCHED_1F1B, 1, &c, 5000);
    pps_sim_costs_release(&c);
}

static void test_interleaved_phases_match_sim(void)
{
    struct pps_sim_costs c;

    costs_uneven(&c);
    check_phases_match_sim(PPS_SCHED_INTERLEAVED, 2, &c, 0);
    pps_sim_costs_release(&c);
}

static void test_zb_h1_phases_match_sim(void)
{
    struct pps_sim_costs c;

    costs_uneven(&c);
    check_phases_match_sim(PPS_SCHED_ZB_H1, 1, &c, 0);
    pps_sim_costs_release(&c);
}

static void test_zb_h2_phases_match_sim(void)
{
    struct pps_sim_costs c;

    costs_uneven(&c);
    check_phases_match_sim(PPS_SCHED_ZB_H2, 1, &c, 0);
    pps_sim_costs_release(&c);
}

/*
 * 1F1B, p stages, m >= p microbatches, equal stages, free messages, BW = tb + tw. Warm-up: stage
 * s gets microbatch 0 at s*tf and runs its p - s forwards back to back, to p*tf; the first
 * backward starts on the last stage at p*tf and reaches stage s after p - 1 - s more BWs, so it
 * idles s*tf + (p-1-s)*(tb+tw). Barrier: the last BW passes down the stages one BW apart and
 * stage 0's ends the iteration, so stage s waits s*(tb+tw). Steady: none (each op's input is
 * there when the stage is free). Cool-down: the rest of 1F1B's (p-1)(tf+tb+tw) per stage,
 * (p-1-s)*tf. With tf = tb and tw = 0 every stage's warm-up idles (p-1)*tf, s*tf of it before
 * its first forward.
 */
static void check_1f1b_exact(double tf, double tb, double tw)
{
    enum { P = 4, M = 8 };
    struct pps_sim_costs c;
    struct pps_sim_result res;
    struct pps_run *r;
    struct pps_report *rep = NULL;
    double bw = tb + tw;

    CHECK_EQ_INT(pps_sim_costs_init(&c, P, tf, tb, tw), 0);
    r = run_from_sim(PPS_SCHED_1F1B, P, M, 1, &c, 2, 0, &res);
    if (!r)
        goto out;
    rep = report_of(r);
    for (int s = 0; s < P && rep; s++) {
        const double want[PPS_PHASE_COUNT] = {s * tf + (P - 1 - s) * bw, 0, (P - 1 - s) * tf,
                                              s * bw};

        for (int ph = 0; ph < PPS_PHASE_COUNT; ph++) {
            CHECK_NEAR(sim_phase(&res, s, ph), want[ph], 1e-12);
            CHECK_NEAR(rep->iters[0].stages[s].phase_idle_ns[ph], want[ph] * NS_PER_UNIT, 1e-6);
        }
    }
out:
    pps_report_free(rep);
    run_free(r);
    pps_sim_result_release(&res);
    pps_sim_costs_release(&c);
}

static void test_1f1b_exact_split(void)
{
    check_1f1b_exact(1, 1, 0); /* tf = tb: warm-up (p-1)*tf on every stage */
    check_1f1b_exact(1, 1.5, 0.5);
    check_1f1b_exact(2, 1, 0.25);
}

/* GPipe runs every forward before its first backward: no steady state on any stage. */
static void test_gpipe_has_no_steady_state(void)
{
    struct pps_sim_costs c;
    struct pps_sim_result res;
    struct pps_schedule sched = PPS_SCHEDULE_INIT;
    struct pps_err err = {0, ""};

    memset(&res, 0, sizeof(res));
    CHECK_EQ_INT(pps_sim_costs_init(&c, 4, 1, 2, 0), 0);
    CHECK_EQ_INT(pps_schedule_generate(&sched, PPS_SCHED_GPIPE, 4, 8, 1, &err), 0);
    CHECK_EQ_INT(pps_simulate(&sched, &c, &res, &err), 0);
    for (int s = 0; s < 4; s++) {
        CHECK_NEAR(sim_phase(&res, s, PPS_PHASE_STEADY), 0, 0);
        CHECK(sim_phase(&res, s, PPS_PHASE_WARMUP) > 0);
    }
    pps_sim_result_release(&res);
    pps_schedule_release(&sched);
    pps_sim_costs_release(&c);
}

static void add(struct pps_span *sp, size_t *n, int kind, int iter, int64_t a, int64_t b)
{
    memset(&sp[*n], 0, sizeof(sp[*n]));
    sp[*n].kind = (uint8_t)kind;
    sp[*n].iter = iter;
    sp[*n].start_ns = a;
    sp[*n].end_ns = b;
    (*n)++;
}

/*
 * A stage by hand, window [1000, 1100): overlapping forwards, a wait (idle), an op of the next
 * iteration (busy, but no edge) and the optimizer. Edges: first B at 1040, last F ends 1060,
 * last op (W) ends 1085. Warm-up 40 - (10 + 15) = 15; steady 0; cool-down 25 - 15 = 10;
 * barrier 15 - (2 + 5) = 8: 33 in all, the window less its 67 busy.
 */
static void test_split_by_hand(void)
{
    struct pps_span sp[16];
    size_t n = 0;
    double idle[PPS_PHASE_COUNT];
    const double want[PPS_PHASE_COUNT] = {15, 0, 10, 8};

    add(sp, &n, PPS_SPAN_F, 0, 1000, 1010);
    add(sp, &n, PPS_SPAN_F, 0, 1020, 1030);
    add(sp, &n, PPS_SPAN_F, 0, 1025, 1035);
    add(sp, &n, PPS_SPAN_B, 0, 1040, 1050);
    add(sp, &n, PPS_SPAN_F, 0, 1050, 1060);
    add(sp, &n, PPS_SPAN_B, 0, 1070, 1080);
    add(sp, &n, PPS_SPAN_W, 0, 1080, 1085);
    add(sp, &n, PPS_SPAN_WAIT, 0, 1085, 1095);
    add(sp, &n, PPS_SPAN_F, 1, 1090, 1092);
    add(sp, &n, PPS_SPAN_OPT, 0, 1095, 1100);
    add(sp, &n, PPS_SPAN_F, 1, 1100, 1110); /* after the window: not counted */
    pps_analysis_phase_split(sp, n, 0, 1000, 1100, idle);
    for (int ph = 0; ph < PPS_PHASE_COUNT; ph++)
        CHECK_NEAR(idle[ph], want[ph], 0);
    /* A stage that ran nothing in the window waited all of it for its first op. */
    pps_analysis_phase_split(NULL, 0, 0, 1000, 1100, idle);
    CHECK_NEAR(idle[PPS_PHASE_WARMUP], 100, 0);
    CHECK_NEAR(idle[PPS_PHASE_STEADY] + idle[PPS_PHASE_COOLDOWN] + idle[PPS_PHASE_BARRIER], 0, 0);
}

/* The edges stay in order and in the window whatever the stage lacks. */
static void test_edges_when_ops_are_missing(void)
{
    double e[PPS_PHASE_COUNT + 1];

    pps_phase_edges(0, 100, NAN, 30, 30, e); /* forwards only */
    CHECK_NEAR(e[1], 30, 0);
    CHECK_NEAR(e[2], 30, 0);
    CHECK_NEAR(e[3], 30, 0);
    CHECK_NEAR(e[4], 100, 0);
    pps_phase_edges(0, 100, 50, 20, 90, e); /* backwards after every forward (GPipe) */
    CHECK_NEAR(e[1], 50, 0);
    CHECK_NEAR(e[2], 50, 0);
    CHECK_NEAR(e[3], 90, 0);
    pps_phase_edges(10, 100, 5, 200, 300, e); /* out of the window: clamped */
    CHECK_NEAR(e[1], 10, 0);
    CHECK_NEAR(e[2], 100, 0);
    CHECK_NEAR(e[3], 100, 0);
    CHECK(!strcmp(pps_phase_name(PPS_PHASE_BARRIER), "barrier"));
    CHECK(!strcmp(pps_phase_name(PPS_PHASE_COUNT), "?"));
}

static const struct test_case cases[] = {
    TEST(test_gpipe_phases_match_sim),       TEST(test_1f1b_phases_match_sim),
    TEST(test_interleaved_phases_match_sim), TEST(test_zb_h1_phases_match_sim),
    TEST(test_zb_h2_phases_match_sim),       TEST(test_1f1b_exact_split),
    TEST(test_gpipe_has_no_steady_state),    TEST(test_split_by_hand),
    TEST(test_edges_when_ops_are_missing),   {NULL, NULL},
};

int main(int argc, char **argv)
{
    return test_main(cases, argc, argv);
}
