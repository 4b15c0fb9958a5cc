/*
 * test_analysis.c - the measured bubble and the prediction, against hand-made runs with known
 * answers and against runs whose spans are exactly a simulated timeline (what `ppscope sim
 * --trace` writes): there the measurement and the prediction must both give the simulator's
 * bubble.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "analysis_fixture.h"
#include "test.h"

/* Measured and predicted bubble and per-stage idle must be the simulator's. */
static void check_matches_sim(int kind, int p, int m, int v, const struct pps_sim_costs *c,
                              int n_iters, int64_t gap_ns)
{
    struct pps_sim_result res;
    struct pps_run *r = run_from_sim(kind, p, m, v, c, n_iters, gap_ns, &res);
    struct pps_report *rep = r ? report_of(r) : NULL;

    if (!rep)
        goto out;
    CHECK_EQ_INT(rep->n_iters, n_iters);
    CHECK_EQ_INT(rep->n_stages, p);
    CHECK_NEAR(rep->bubble, res.bubble, 1e-9);
    for (int it = 0; it < rep->n_iters; it++) {
        CHECK_NEAR(rep->iters[it].bubble, res.bubble, 1e-9);
        CHECK_NEAR(rep->iters[it].window_ns, res.makespan * NS_PER_UNIT, 1e-6);
        for (int s = 0; s < p; s++)
            CHECK_NEAR(rep->iters[it].stages[s].idle_ns, res.idle[s] * NS_PER_UNIT, 1e-6);
    }
    for (int s = 0; s < p; s++) {
        CHECK_NEAR(rep->total[s].idle_ns, n_iters * res.idle[s] * NS_PER_UNIT, 1e-6);
        CHECK_NEAR(rep->total[s].idle_frac, res.idle[s] / res.makespan, 1e-9);
    }
    CHECK_EQ_INT(rep->sched_kind, kind);
    CHECK_EQ_INT(rep->have_prediction, 1);
    if (rep->have_prediction) {
        CHECK_NEAR(rep->pred.bubble, res.bubble, 1e-9);
        CHECK_NEAR(rep->pred.makespan, res.makespan * NS_PER_UNIT, 1e-6);
        for (int s = 0; s < p; s++)
            CHECK_NEAR(rep->pred.idle[s], res.idle[s] * NS_PER_UNIT, 1e-6);
        CHECK_EQ_INT(pps_report_verdict(rep, NULL, 0), PPS_VERDICT_AS_PREDICTED);
    }
out:
    pps_report_free(rep);
    run_free(r);
    pps_sim_result_release(&res);
}

static void test_sim_gpipe_matches(void)
{
    struct pps_sim_costs c;

    CHECK_EQ_INT(pps_sim_costs_init(&c, 4, 1.0, 2.0, 0.0), 0);
    check_matches_sim(PPS_SCHED_GPIPE, 4, 8, 1, &c, 1, 0);
    pps_sim_costs_release(&c);
}

static void test_sim_1f1b_matches(void)
{
    struct pps_sim_costs c;

    CHECK_EQ_INT(pps_sim_costs_init(&c, 4, 1.0, 1.0, 1.0), 0);
    check_matches_sim(PPS_SCHED_1F1B, 4, 8, 1, &c, 1, 0);
    pps_sim_costs_release(&c);
}

static void test_sim_zb_h1_matches(void)
{
    struct pps_sim_costs c;

    CHECK_EQ_INT(pps_sim_costs_init(&c, 4, 1.0, 1.0, 1.0), 0);
    check_matches_sim(PPS_SCHED_ZB_H1, 4, 8, 1, &c, 1, 0);
    pps_sim_costs_release(&c);
}

static void test_sim_zb_h2_matches(void)
{
    struct pps_sim_costs c;

    CHECK_EQ_INT(pps_sim_costs_init(&c, 4, 1.0, 1.0, 1.0), 0);
    check_matches_sim(PPS_SCHED_ZB_H2, 4, 8, 1, &c, 1, 0);
    pps_sim_costs_release(&c);
}

/* Chunk ops cost 1/v of the stage: the prediction must scale the means back up. */
static void test_sim_interleaved_matches(void)
{
    struct pps_sim_costs c;

    CHECK_EQ_INT(pps_sim_costs_init(&c, 4, 1.0, 2.0, 0.0), 0);
    check_matches_sim(PPS_SCHED_INTERLEAVED, 4, 8, 2, &c, 1, 0);
    pps_sim_costs_release(&c);
}

static void test_sim_two_iterations_match(void)
{
    struct pps_sim_costs c;

    CHECK_EQ_INT(pps_sim_costs_init(&c, 4, 1.0, 1.0, 1.0), 0);
    check_matches_sim(PPS_SCHED_ZB_H1, 4, 8, 1, &c, 2, 0);
    check_matches_sim(PPS_SCHED_1F1B, 4, 8, 1, &c, 2, 0);
    /* Time between iterations belongs to no window. */
    check_matches_sim(PPS_SCHED_GPIPE, 4, 8, 1, &c, 3, 123457);
    pps_sim_costs_release(&c);
}

/* Unequal stages and an optimizer step: still the simulator's numbers, stage by stage. */
static void test_sim_imbalanced_with_optimizer_matches(void)
{
    static const double tf[4] = {1.0, 1.5, 1.0, 1.25};
    struct pps_sim_costs c;

    CHECK_EQ_INT(pps_sim_costs_init(&c, 4, 1.0, 1.0, 1.0), 0);
    for (int s = 0; s < 4; s++) {
        c.tf[s] = tf[s];
        c.tb[s] = 2 * tf[s];
        c.tw[s] = 0.5 * tf[s];
    }
    c.topt = 0.75;
    check_matches_sim(PPS_SCHED_ZB_H1, 4, 8, 1, &c, 2, 0);
    check_matches_sim(PPS_SCHED_1F1B, 4, 8, 1, &c, 2, 0);
    pps_sim_costs_release(&c);
}

/* Communication the run states in meta tcomm_ns goes into the prediction. */
static void test_sim_tcomm_from_meta(void)
{
    struct pps_sim_costs c;
    struct pps_sim_result res;
    struct pps_run *r;
    struct pps_report *rep = NULL;

    CHECK_EQ_INT(pps_sim_costs_init(&c, 4, 1.0, 1.0, 1.0), 0);
    c.tcomm = 0.25;
    r = run_from_sim(PPS_SCHED_1F1B, 4, 8, 1, &c, 1, 0, &res);
    if (!r)
        goto out;
    /* Without it the prediction has no communication and the measured bubble is above it. */
    rep = report_of(r);
    if (!rep)
        goto out;
    CHECK_NEAR(rep->bubble, res.bubble, 1e-9);
    CHECK_NEAR(rep->tcomm_ns, 0, 0);
    CHECK(rep->have_prediction && rep->pred.bubble < res.bubble - 1e-3);
    pps_report_free(rep);

    run_meta(r, "tcomm_ns", "250");
    rep = report_of(r);
    if (!rep)
        goto out;
    CHECK_NEAR(rep->tcomm_ns, 250, 0);
    CHECK_EQ_INT(rep->have_prediction, 1);
    CHECK_NEAR(rep->pred.bubble, res.bubble, 1e-9);
out:
    pps_report_free(rep);
    run_free(r);
    pps_sim_result_release(&res);
    pps_sim_costs_release(&c);
}

/* A stall on every stage mid-iteration: measured well above predicted, and the verdict says so. */
static void test_stall_is_not_the_schedule(void)
{
    const int64_t stall = 20 * (int64_t)NS_PER_UNIT;
    struct pps_sim_costs c;
    struct pps_sim_result res;
    struct pps_run *r;
    struct pps_report *rep = NULL;
    char why[256];

    CHECK_EQ_INT(pps_sim_costs_init(&c, 4, 1.0, 1.0, 1.0), 0);
    r = run_from_sim(PPS_SCHED_ZB_H1, 4, 8, 1, &c, 1, 0, &res);
    if (!r)
        goto out;
    for (int s = 0; s < 4; s++) {
        for (size_t i = 0; i < r->stages[s].n; i++) {
            struct pps_span *sp = &r->stages[s].spans[i];
            if (sp->start_ns >= ns_of(6)) {
                sp->start_ns += stall;
                sp->end_ns += stall;
            }
        }
    }
    rep = report_of(r);
    if (!rep)
        goto out;
    CHECK(rep->bubble > res.bubble + 0.2);
    CHECK_NEAR(rep->pred.bubble, res.bubble, 1e-9);
    CHECK_EQ_INT(pps_report_verdict(rep, why, sizeof(why)), PPS_VERDICT_ABOVE);
    CHECK_STR_CONTAINS(why, "pp above the prediction");
    CHECK_STR_CONTAINS(why, "not the schedule, nor the links or the host as measured");
out:
    pps_report_free(rep);
    run_free(r);
    pps_sim_result_release(&res);
    pps_sim_costs_release(&c);
}

/* ---- hand-made runs with known answers ----------------------------------------------------- */

static void test_two_stages_quarter_bubble(void)
{
    struct pps_run *r = run_new(2, NULL, 0, 0, 0);
    struct pps_report *rep;

    run_add(r, 0, PPS_SPAN_F, 0, 0, 0, 10);
    run_add(r, 1, PPS_SPAN_F, 0, 0, 5, 10);
    rep = report_of(r);
    if (rep) {
        CHECK_EQ_INT(rep->n_iters, 1);
        CHECK_EQ_INT(rep->iters[0].t0, 0);
        CHECK_EQ_INT(rep->iters[0].t1, 10);
        CHECK_NEAR(rep->iters[0].window_ns, 10, 0);
        CHECK_NEAR(rep->bubble, 0.25, 1e-12);
        CHECK_NEAR(rep->iters[0].stages[0].idle_ns, 0, 0);
        CHECK_NEAR(rep->iters[0].stages[1].idle_ns, 5, 0);
        CHECK_NEAR(rep->iters[0].stages[1].idle_frac, 0.5, 1e-12);
        CHECK_NEAR(rep->iters[0].stages[1].busy_ns[PPS_SPAN_F], 5, 0);
        CHECK_EQ_INT(rep->iters[0].stages[1].n_ops[PPS_SPAN_F], 1);
        CHECK_NEAR(rep->total[1].idle_frac, 0.5, 1e-12);
    }
    pps_report_free(rep);
    run_free(r);
}

static void test_overlapping_spans_not_double_counted(void)
{
    struct pps_run *r = run_new(2, NULL, 0, 0, 0);
    struct pps_report *rep;

    run_add(r, 0, PPS_SPAN_F, 0, 0, 0, 10);
    run_add(r, 0, PPS_SPAN_B, 0, 0, 5, 15);
    run_add(r, 0, PPS_SPAN_F, 0, 1, 2, 4); /* inside the first F: same kind, counted once */
    run_add(r, 1, PPS_SPAN_F, 0, 0, 0, 15);
    span_sort(r);
    rep = report_of(r);
    if (rep) {
        const struct pps_stage_stats *st = &rep->iters[0].stages[0];
        CHECK_NEAR(rep->iters[0].window_ns, 15, 0);
        CHECK_NEAR(st->compute_ns, 15, 0);
        CHECK_NEAR(st->idle_ns, 0, 0);
        CHECK_NEAR(st->busy_ns[PPS_SPAN_F], 10, 0);
        CHECK_NEAR(st->busy_ns[PPS_SPAN_B], 10, 0);
        CHECK_EQ_INT(st->n_ops[PPS_SPAN_F], 2);
        CHECK_NEAR(rep->bubble, 0, 0);
    }
    pps_report_free(rep);
    run_free(r);
}

/* Spans with no iteration open no window, but compute inside a window still makes it busy. */
/* A named range (an NVTX range around the whole program) or a device span labelled with the
 * iteration is measured inside the window but does not stretch it. */
static void test_ranges_and_device_spans_do_not_stretch_windows(void)
{
    struct pps_run *r = run_new(2, NULL, 0, 0, 0);
    struct pps_report *rep;

    run_add(r, 0, PPS_SPAN_F, 0, 0, 0, 10);
    run_add(r, 1, PPS_SPAN_F, 0, 0, 5, 10);
    run_add(r, 0, PPS_SPAN_RANGE, 0, -1, -100, 1000);
    run_add(r, 1, PPS_SPAN_KERNEL, 0, -1, 2, 400);
    run_add(r, 1, PPS_SPAN_RANGE, 3, -1, 0, 1000); /* an iteration with only a range: none */
    span_sort(r);
    rep = report_of(r);
    if (rep) {
        CHECK_EQ_INT(rep->n_iters, 1);
        CHECK_EQ_INT(rep->iters[0].t0, 0);
        CHECK_EQ_INT(rep->iters[0].t1, 10);
        CHECK_NEAR(rep->bubble, 5.0 / 20.0, 1e-12);
    }
    pps_report_free(rep);
    run_free(r);
}

/* Regression: post-validated iterations overlap; the run's totals count the common time once,
 * and a wait for the next iteration's input does not open its window early. */
static void test_overlapping_iterations_count_once(void)
{
    struct pps_run *r = run_new(2, NULL, 0, 0, 0);
    struct pps_report *rep;

    run_add(r, 0, PPS_SPAN_F, 0, 0, 0, 10);
    run_add(r, 1, PPS_SPAN_W, 0, 0, 15, 25);
    run_add(r, 0, PPS_SPAN_F, 1, 0, 12, 20);
    run_add(r, 1, PPS_SPAN_WAIT, 1, 0, 3, 14); /* waits for iteration 1 from early on */
    run_add(r, 1, PPS_SPAN_F, 1, 0, 26, 30);
    span_sort(r);
    rep = report_of(r);
    if (rep) {
        CHECK_EQ_INT(rep->iters[1].t0, 12); /* not 3: the wait opens no window */
        CHECK_NEAR(rep->total_window_ns, 30, 0);
        CHECK_NEAR(rep->total[0].busy_ns[PPS_SPAN_F], 18, 0); /* not 26 */
        CHECK_NEAR(rep->total[1].busy_ns[PPS_SPAN_W], 10, 0);
        CHECK_NEAR(rep->total[1].idle_ns, 30 - 14, 0);
        /* Steady state: iteration 1 ends at 30, iteration 0 at 25; busy in iteration 1 is 12. */
        CHECK_NEAR(rep->steady_period_ns, 5, 0);
        CHECK_NEAR(rep->steady_bubble, 1 - 12.0 / (2 * 5), 1e-12);
    }
    pps_report_free(rep);
    run_free(r);
}

/* The planned iterations no op holds: gaps between those there, and the plan's tail, counted
 * in the time of the iterations there (a plan of 2^31 - 1 is no reason to wait); an iteration
 * with only a wait is not there. */
static void test_missing_iterations_gaps_and_tail(void)
{
    struct pps_run *r = run_new(1, NULL, 0, 0, 0);
    struct pps_report *rep;

    run_add(r, 0, PPS_SPAN_F, 0, 0, 0, 10);
    run_add(r, 0, PPS_SPAN_F, 1, 0, 10, 20);
    run_add(r, 0, PPS_SPAN_WAIT, 2, 0, 20, 25); /* a wait alone: iteration 2 is missing */
    run_add(r, 0, PPS_SPAN_F, 3, 0, 30, 40);
    span_sort(r);
    run_meta(r, "iters", "6");
    rep = report_of(r);
    if (rep) {
        CHECK_EQ_INT(rep->planned_iters, 6);
        CHECK_EQ_INT(rep->n_missing, 3); /* 2, 4 and 5 */
        CHECK_EQ_INT(rep->missing_first, 2);
        CHECK_EQ_INT(rep->missing_last, 5);
    }
    pps_report_free(rep);
    run_free(r);
    r = run_new(1, NULL, 0, 0, 0);
    run_add(r, 0, PPS_SPAN_F, 0, 0, 0, 10);
    run_add(r, 0, PPS_SPAN_F, 9, 0, 10, 20);
    span_sort(r);
    run_meta(r, "iters", "2147483647");
    rep = report_of(r);
    if (rep) {
        CHECK_EQ_INT(rep->n_missing, 2147483645); /* 1..8 and 10..2^31-2 */
        CHECK_EQ_INT(rep->missing_first, 1);
        CHECK_EQ_INT(rep->missing_last, 2147483646);
    }
    pps_report_free(rep);
    run_free(r);
}

static void test_unlabelled_spans_open_no_window(void)
{
    struct pps_run *r = run_new(2, NULL, 0, 0, 0);
    struct pps_report *rep;

    run_add(r, 0, PPS_SPAN_F, 0, 0, 0, 10);
    run_add(r, 1, PPS_SPAN_F, 0, 0, 0, 4);
    run_add(r, 1, PPS_SPAN_F, -1, -1, 4, 6);         /* inside the window: busy */
    run_add(r, 1, PPS_SPAN_F, -1, -1, 8, 30);        /* straddles the end: clipped to [8, 10) */
    run_add(r, 0, PPS_SPAN_RANGE, -1, -1, -50, 100); /* not compute, not a window */
    run_add(r, 1, PPS_SPAN_SEND, 0, 0, 10, 12);      /* after the window: nothing counts it */
    span_sort(r);
    rep = report_of(r);
    if (rep) {
        CHECK_EQ_INT(rep->n_iters, 1);
        /* Spans without an iteration are counted, wherever they lie; only the SEND after the
         * window lies outside every window (it carries its iteration all the same). */
        CHECK_EQ_INT(rep->n_no_iter, 3);
        CHECK_EQ_INT(rep->n_outside, 1);
        CHECK_EQ_INT(rep->iters[0].t0, 0);
        CHECK_EQ_INT(rep->iters[0].t1, 10);
        CHECK_NEAR(rep->iters[0].stages[1].compute_ns, 8, 0);
        CHECK_NEAR(rep->iters[0].stages[1].idle_ns, 2, 0);
        CHECK_NEAR(rep->iters[0].stages[0].busy_ns[PPS_SPAN_RANGE], 10, 0);
        CHECK_NEAR(rep->iters[0].stages[0].idle_ns, 0, 0);
        CHECK_NEAR(rep->bubble, 2.0 / 20.0, 1e-12);
    }
    pps_report_free(rep);
    run_free(r);
}

/* An instant at a window's end lies in it: a zero-length optimizer step (emu's, timed by a TSC
 * that ticks in quanta) is its iteration's last op and defines the end itself. */
static void test_instant_at_window_end_lies_inside(void)
{
    struct pps_run *r = run_new(2, NULL, 0, 0, 0);
    struct pps_report *rep;

    run_add(r, 0, PPS_SPAN_F, 0, 0, 0, 10);
    run_add(r, 1, PPS_SPAN_OPT, 0, -1, 10, 10);  /* the window's end, and an instant */
    run_add(r, 1, PPS_SPAN_SEND, 0, 0, 10, 10);  /* an instant there too */
    run_add(r, 0, PPS_SPAN_SEND, 0, 0, 11, 11);  /* an instant after it: outside */
    run_add(r, 0, PPS_SPAN_WAIT, 0, -1, 10, 12); /* starts where the window ends: outside */
    span_sort(r);
    rep = report_of(r);
    if (rep) {
        CHECK_EQ_INT(rep->n_iters, 1);
        CHECK_EQ_INT(rep->iters[0].t1, 10);
        CHECK_EQ_INT(rep->n_outside, 2);
    }
    pps_report_free(rep);
    run_free(r);
}

/* A long span that began before the window, followed by short ones that end before it. */
static void test_long_early_span_reaches_later_window(void)
{
    struct pps_run *r = run_new(1, NULL, 0, 0, 0);
    struct pps_report *rep;

    run_add(r, 0, PPS_SPAN_F, 0, 0, 0, 10);
    run_add(r, 0, PPS_SPAN_OPT, -1, -1, 5, 40);
    run_add(r, 0, PPS_SPAN_F, -1, -1, 6, 7);
    run_add(r, 0, PPS_SPAN_B, 1, 0, 20, 30);
    run_add(r, 0, PPS_SPAN_B, 1, 0, 50, 60);
    span_sort(r);
    rep = report_of(r);
    if (rep) {
        CHECK_EQ_INT(rep->n_iters, 2);
        CHECK_EQ_INT(rep->iters[1].t0, 20);
        CHECK_EQ_INT(rep->iters[1].t1, 60);
        /* [20, 40) from the OPT, [50, 60) from the B. */
        CHECK_NEAR(rep->iters[1].stages[0].compute_ns, 30, 0);
        CHECK_NEAR(rep->iters[1].stages[0].busy_ns[PPS_SPAN_OPT], 20, 0);
        CHECK_NEAR(rep->iters[1].bubble, 0.25, 1e-12);
        CHECK_NEAR(rep->bubble, (0.0 + 0.25) / 2, 1e-12);
        CHECK_NEAR(rep->total_window_ns, 50, 0);
        CHECK_NEAR(rep->total[0].idle_frac, 10.0 / 50.0, 1e-12);
    }
    pps_report_free(rep);
    run_free(r);
}

static void test_wait_and_communication_are_idle(void)
{
    struct pps_run *r = run_new(2, NULL, 0, 0, 0);
    struct pps_report *rep;

    run_add(r, 0, PPS_SPAN_F, 0, 0, 0, 10);
    run_add(r, 0, PPS_SPAN_SEND, 0, 0, 10, 12);
    run_add(r, 1, PPS_SPAN_WAIT, 0, 0, 0, 12);
    run_add(r, 1, PPS_SPAN_RECV, 0, 0, 10, 12);
    run_add(r, 1, PPS_SPAN_F, 0, 0, 12, 20);
    span_sort(r);
    rep = report_of(r);
    if (rep) {
        const struct pps_stage_stats *s1 = &rep->iters[0].stages[1];
        CHECK_NEAR(s1->wait_ns, 12, 0);
        CHECK_NEAR(s1->busy_ns[PPS_SPAN_RECV], 2, 0);
        CHECK_NEAR(s1->idle_ns, 12, 0);
        CHECK_NEAR(rep->iters[0].stages[0].idle_ns, 10, 0);
        CHECK_NEAR(rep->bubble, 22.0 / 40.0, 1e-12);
        CHECK_NEAR(rep->total[1].wait_ns, 12, 0);
    }
    pps_report_free(rep);
    run_free(r);
}

/* A run built by hand may come unsorted; the numbers must not depend on it. */
static void test_unsorted_spans(void)
{
    struct pps_run *r = run_new(1, NULL, 0, 0, 0);
    struct pps_report *rep;

    run_add(r, 0, PPS_SPAN_B, 0, 0, 30, 40);
    run_add(r, 0, PPS_SPAN_F, 0, 0, 0, 10);
    run_add(r, 0, PPS_SPAN_F, 0, 1, 5, 20);
    rep = report_of(r);
    if (rep) {
        CHECK_NEAR(rep->iters[0].stages[0].compute_ns, 30, 0);
        CHECK_NEAR(rep->bubble, 10.0 / 40.0, 1e-12);
        CHECK_EQ_INT(r->stages[0].spans[0].kind, PPS_SPAN_B); /* the run is left as it was */
    }
    pps_report_free(rep);
    run_free(r);
}

/* Iterations are reported by label, in order, skipping numbers that have no spans. */
static void test_iteration_labels_with_gaps(void)
{
    struct pps_run *r = run_new(1, NULL, 0, 0, 0);
    struct pps_report *rep;

    run_add(r, 0, PPS_SPAN_F, 5, 0, 100, 110);
    run_add(r, 0, PPS_SPAN_F, 0, 0, 0, 10);
    run_add(r, 0, PPS_SPAN_F, 0, 1, 20, 30);
    span_sort(r);
    rep = report_of(r);
    if (rep) {
        CHECK_EQ_INT(rep->n_iters, 2);
        CHECK_EQ_INT(rep->iters[0].iter, 0);
        CHECK_EQ_INT(rep->iters[1].iter, 5);
        CHECK_NEAR(rep->iters[0].bubble, 1.0 / 3.0, 1e-12);
        CHECK_NEAR(rep->iters[1].bubble, 0, 0);
        CHECK_NEAR(rep->bubble, 1.0 / 6.0, 1e-12);
    }
    pps_report_free(rep);
    run_free(r);
}

static void test_run_without_spans(void)
{
    struct pps_run *r = run_new(2, "1f1b", 2, 4, 1);
    struct pps_run *none = run_new(0, NULL, 0, 0, 0);
    struct pps_report *rep;
    char why[256];

    rep = report_of(r);
    if (rep) {
        CHECK_EQ_INT(rep->n_iters, 0);
        CHECK(isnan(rep->bubble));
        CHECK_EQ_INT(rep->have_prediction, 0);
        CHECK(rep->prediction_note[0] != '\0');
        CHECK_EQ_INT(pps_report_verdict(rep, why, sizeof(why)), PPS_VERDICT_NONE);
        CHECK_STR_CONTAINS(why, "no window to measure");
    }
    pps_report_free(rep);
    rep = report_of(none);
    if (rep) {
        CHECK_EQ_INT(rep->n_iters, 0);
        CHECK_EQ_INT(rep->n_stages, 0);
        CHECK(isnan(rep->bubble));
        CHECK(isnan(rep->bubble_quoted));
    }
    pps_report_free(rep);
    run_free(r);
    run_free(none);
}

/* Only labelled spans on hand, all of zero length: an empty window, no division by zero. */
static void test_empty_window(void)
{
    struct pps_run *r = run_new(1, NULL, 0, 0, 0);
    struct pps_report *rep;

    run_add(r, 0, PPS_SPAN_F, 0, 0, 7, 7);
    rep = report_of(r);
    if (rep) {
        CHECK_EQ_INT(rep->n_iters, 1);
        CHECK_NEAR(rep->iters[0].window_ns, 0, 0);
        CHECK_NEAR(rep->iters[0].bubble, 0, 0);
        CHECK(isnan(rep->bubble));
    }
    pps_report_free(rep);
    run_free(r);
}

static void test_null_run_is_an_error(void)
{
    struct pps_report *rep = (struct pps_report *)&rep;
    struct pps_err err = {0, ""};

    CHECK_EQ_INT(pps_analysis_report(NULL, &rep, &err), PPS_EINVAL);
    CHECK(rep == NULL);
    CHECK(err.msg[0] != '\0');
    pps_report_free(NULL);
}

static void test_theory(void)
{
    struct pps_run *r = run_new(4, "interleaved", 4, 8, 2);
    struct pps_run *plain = run_new(4, "1f1b", 4, 8, 0);
    struct pps_report *rep;

    rep = report_of(r);
    if (rep) {
        CHECK_NEAR(rep->bubble_quoted, 3.0 / 8.0, 1e-12);
        CHECK_NEAR(rep->bubble_exact, 3.0 / 19.0, 1e-12);
        CHECK_EQ_INT(rep->v, 2);
    }
    pps_report_free(rep);
    rep = report_of(plain);
    if (rep) {
        CHECK_EQ_INT(rep->v, 1);
        CHECK_NEAR(rep->bubble_exact, 3.0 / 11.0, 1e-12);
    }
    pps_report_free(rep);
    run_free(r);
    run_free(plain);
}

/* Means per stage, times v; fused BW becomes tb with tw = 0; OPT's mean over all stages. */
static void test_costs_from_means(void)
{
    struct pps_run *r = run_new(2, "interleaved", 2, 2, 2);
    struct pps_report *rep;

    run_add(r, 0, PPS_SPAN_F, 0, 0, 0, 10);
    run_add(r, 0, PPS_SPAN_F, 0, 1, 10, 30);
    run_add(r, 0, PPS_SPAN_BW, 0, 0, 30, 60);
    run_add(r, 0, PPS_SPAN_OPT, 0, -1, 60, 64);
    run_add(r, 1, PPS_SPAN_F, 0, 0, 0, 5);
    run_add(r, 1, PPS_SPAN_B, 0, 0, 5, 12);
    run_add(r, 1, PPS_SPAN_W, 0, 0, 12, 15);
    run_add(r, 1, PPS_SPAN_OPT, 0, -1, 60, 62);
    rep = report_of(r);
    if (rep) {
        CHECK_NEAR(rep->tf_ns[0], 15 * 2, 1e-12);
        CHECK_NEAR(rep->tb_ns[0], 30 * 2, 1e-12);
        CHECK_NEAR(rep->tw_ns[0], 0, 0);
        CHECK_NEAR(rep->tf_ns[1], 5 * 2, 1e-12);
        CHECK_NEAR(rep->tb_ns[1], 7 * 2, 1e-12);
        CHECK_NEAR(rep->tw_ns[1], 3 * 2, 1e-12);
        CHECK_EQ_INT(rep->fused_bw, 1);
        CHECK_NEAR(rep->topt_ns, 3, 1e-12);
        CHECK_NEAR(rep->tcomm_ns, 0, 0);
    }
    pps_report_free(rep);
    run_free(r);
}

/* Each reason the run cannot be simulated gives no prediction and says why. */
static void test_no_prediction_reasons(void)
{
    static const struct {
        const char *schedule;
        int p, m, v, n_stages;
        const char *tcomm;
        const char *says;
        int mb; /* the ops' microbatch; -1: they carry none, so m cannot be inferred */
    } cases[] = {
        {NULL, 2, 4, 1, 2, NULL, "does not name its schedule", 0},
        {"hanayo", 2, 4, 1, 2, NULL, "'hanayo' is not one", 0},
        {"1f1b", 2, 0, 1, 2, NULL, "p and m", -1},
        {"1f1b", 2, 4, 1, 3, NULL, "3 stages but p = 2", 0},
        {"1f1b", 2, 4, 2, 2, NULL, "v=2", 0},
        {"1f1b", 2, 4, 1, 2, "fast", "tcomm_ns = 'fast'", 0},
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct pps_run *r =
            run_new(cases[i].n_stages, cases[i].schedule, cases[i].p, cases[i].m, cases[i].v);
        struct pps_report *rep;

        for (int s = 0; s < cases[i].n_stages; s++) {
            run_add(r, s, PPS_SPAN_F, 0, cases[i].mb, 0, 10);
            run_add(r, s, PPS_SPAN_BW, 0, cases[i].mb, 10, 30);
        }
        if (cases[i].tcomm)
            run_meta(r, "tcomm_ns", cases[i].tcomm);
        rep = report_of(r);
        if (rep) {
            CHECK_EQ_INT(rep->have_prediction, 0);
            CHECK_STR_CONTAINS(rep->prediction_note, cases[i].says);
            CHECK(!isnan(rep->bubble)); /* the measurement stands without a prediction */
        }
        pps_report_free(rep);
        run_free(r);
    }
}

/* A stage with no F (or no backward) has no cost to simulate with. */
static void test_no_prediction_without_costs(void)
{
    struct pps_run *r = run_new(2, "1f1b", 2, 2, 1);
    struct pps_report *rep;

    run_add(r, 0, PPS_SPAN_F, 0, 0, 0, 10);
    run_add(r, 0, PPS_SPAN_BW, 0, 0, 10, 30);
    run_add(r, 1, PPS_SPAN_F, 0, 0, 10, 20);
    rep = report_of(r);
    if (rep) {
        CHECK_EQ_INT(rep->have_prediction, 0);
        CHECK_STR_CONTAINS(rep->prediction_note, "stage 1 has no measured B or BW");
    }
    pps_report_free(rep);
    run_free(r);
}

static void test_dropped_and_complete(void)
{
    struct pps_run *r = run_new(1, NULL, 0, 0, 0);
    struct pps_report *rep;

    r->complete = 0;
    r->metrics = calloc(3, sizeof(*r->metrics));
    if (!r->metrics)
        abort();
    r->n_metrics = 3;
    r->metrics[0].dropped = 5;
    r->metrics[1].dropped = -1; /* unknown */
    r->metrics[2].dropped = 7;
    rep = report_of(r);
    if (rep) {
        CHECK_EQ_INT(rep->dropped, 12);
        CHECK_EQ_INT(rep->complete, 0);
    }
    pps_report_free(rep);
    run_free(r);
}

/* The verdict says which figures it compares and what it rests on. */
static void test_verdict_sentences(void)
{
    struct pps_report rep;
    char why[512];

    verdict_report(&rep, 0.323, 0.20, 0.02);
    rep.bubble = 0.323;
    CHECK_EQ_INT(pps_report_verdict(&rep, why, sizeof(why)), PPS_VERDICT_ABOVE);
    CHECK_STR_CONTAINS(why,
                       "bubble 32.3% is 12.3 pp above the prediction (20.0%, tolerance 2.0 pp)");
    CHECK_STR_CONTAINS(why, "not the schedule, nor the links or the host as measured");
    /* Post-validated: the steady figures, said so. */
    rep.basis = PPS_BASIS_STEADY;
    CHECK_EQ_INT(pps_report_verdict(&rep, why, sizeof(why)), PPS_VERDICT_ABOVE);
    CHECK_STR_CONTAINS(why, "steady bubble 32.3%");
    rep.basis = PPS_BASIS_ITERATION;
    /* Within the tolerance, with and without imbalance behind the prediction. */
    rep.judged_measured = 0.21;
    rep.pred_balanced = 0.195;
    CHECK_EQ_INT(pps_report_verdict(&rep, why, sizeof(why)), PPS_VERDICT_AS_PREDICTED);
    CHECK_STR_CONTAINS(why, "within 2.0 pp of the prediction (20.0%): the schedule explains it");
    rep.judged_measured = 0.10;
    CHECK_EQ_INT(pps_report_verdict(&rep, why, sizeof(why)), PPS_VERDICT_BELOW);
    CHECK_STR_CONTAINS(why, "10.0 pp below");
    /* A wider tolerance (a noisy run) takes in what a narrow one calls above. */
    rep.judged_measured = 0.24;
    CHECK_EQ_INT(pps_report_verdict(&rep, why, sizeof(why)), PPS_VERDICT_ABOVE);
    rep.tolerance = 0.05;
    CHECK_EQ_INT(pps_report_verdict(&rep, why, sizeof(why)), PPS_VERDICT_AS_PREDICTED);
    rep.have_prediction = 0;
    snprintf(rep.prediction_note, sizeof(rep.prediction_note), "no schedule");
    CHECK_EQ_INT(pps_report_verdict(&rep, why, sizeof(why)), PPS_VERDICT_NONE);
    CHECK_STR_CONTAINS(why, "no schedule");
}

/* The tolerance comes from the run's own spread: iterations that agree to a tenth of a point
 * leave 2 pp (the floor), and a 4 pp excess is above it; iterations that scatter widen it. */
static void test_tolerance_from_the_runs_spread(void)
{
    struct pps_sim_costs c;
    struct pps_sim_result res;
    struct pps_run *r;
    struct pps_report *rep = NULL;

    CHECK_EQ_INT(pps_sim_costs_init(&c, 4, 1.0, 1.0, 1.0), 0);
    r = run_from_sim(PPS_SCHED_1F1B, 4, 8, 1, &c, 6, 0, &res);
    CHECK(r != NULL);
    rep = report_of(r);
    CHECK(rep != NULL);
    CHECK_NEAR(rep->bubble_spread, 0, 1e-9);
    CHECK_NEAR(rep->tolerance, PPS_VERDICT_FLOOR, 1e-12);
    CHECK_EQ_INT(pps_report_verdict(rep, NULL, 0), PPS_VERDICT_AS_PREDICTED);
    pps_report_free(rep);
    /* The same stall of 2 units in every iteration: 4.2 pp above, the same in each, so not
     * within a tolerance that a fixed 5 pp would have been. */
    for (int s = 0; s < 4; s++)
        for (size_t i = 0; i < r->stages[s].n; i++) {
            struct pps_span *sp = &r->stages[s].spans[i];
            int64_t local = sp->start_ns - sp->iter * ns_of(res.makespan);
            int64_t shift = (sp->iter + (local >= ns_of(6))) * ns_of(2);
            sp->start_ns += shift;
            sp->end_ns += shift;
        }
    rep = report_of(r);
    CHECK(rep != NULL);
    CHECK_NEAR(rep->bubble - rep->pred.bubble, (9.0 + 2) / 35 - 9.0 / 33, 1e-9);
    CHECK(rep->bubble_spread < 1e-9);
    CHECK_EQ_INT(pps_report_verdict(rep, NULL, 0), PPS_VERDICT_ABOVE);
    pps_report_free(rep);
    run_free(r);
    pps_sim_result_release(&res);
    pps_sim_costs_release(&c);
}

static const struct test_case cases[] = {
    TEST(test_sim_gpipe_matches),
    TEST(test_sim_1f1b_matches),
    TEST(test_sim_zb_h1_matches),
    TEST(test_sim_zb_h2_matches),
    TEST(test_sim_interleaved_matches),
    TEST(test_sim_two_iterations_match),
    TEST(test_sim_imbalanced_with_optimizer_matches),
    TEST(test_sim_tcomm_from_meta),
    TEST(test_stall_is_not_the_schedule),
    TEST(test_two_stages_quarter_bubble),
    TEST(test_overlapping_spans_not_double_counted),
    TEST(test_unlabelled_spans_open_no_window),
    TEST(test_instant_at_window_end_lies_inside),
    TEST(test_missing_iterations_gaps_and_tail),
    TEST(test_overlapping_iterations_count_once),
    TEST(test_ranges_and_device_spans_do_not_stretch_windows),
    TEST(test_long_early_span_reaches_later_window),
    TEST(test_wait_and_communication_are_idle),
    TEST(test_unsorted_spans),
    TEST(test_iteration_labels_with_gaps),
    TEST(test_run_without_spans),
    TEST(test_empty_window),
    TEST(test_null_run_is_an_error),
    TEST(test_theory),
    TEST(test_costs_from_means),
    TEST(test_no_prediction_reasons),
    TEST(test_no_prediction_without_costs),
    TEST(test_dropped_and_complete),
    TEST(test_verdict_sentences),
    TEST(test_tolerance_from_the_runs_spread),
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    return test_main(cases, argc, argv);
}
