/*
 * test_analysis_evidence.c - what the analysis takes as evidence, on hand-made runs with known
 * answers: message ids pair sends with receives into per-link times (and ids that repeat, or
 * receives that end before their sends, are not believed); the host's figures (and ones that
 * cannot be); iterations a run stopped in, left out of every figure; and the verdict's rule for
 * when the links explain a bubble.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "analysis_fixture.h"
#include "test.h"

/* A message from stage a to stage b: SEND on a from t_send, RECV on b ending at t_recv, with a
 * WAIT before it when the receiver waited; id corr. */
static void message(struct pps_run *r, int a, int b, int64_t corr, int64_t t_send, int64_t t_recv,
                    int waited)
{
    struct pps_span *sp;

    run_add(r, a, PPS_SPAN_SEND, 0, 0, t_send, t_send + 1);
    sp = &r->stages[a].spans[r->stages[a].n - 1];
    sp->peer = b;
    sp->corr = corr;
    if (waited) {
        run_add(r, b, PPS_SPAN_WAIT, 0, 0, t_send - 5, t_recv);
        sp = &r->stages[b].spans[r->stages[b].n - 1];
        sp->peer = a;
        sp->corr = corr;
    }
    run_add(r, b, PPS_SPAN_RECV, 0, 0, t_recv, t_recv);
    sp = &r->stages[b].spans[r->stages[b].n - 1];
    sp->peer = a;
    sp->corr = corr;
}

/* gpipe at p=2, m=1, iters iterations 10u apart: in each, F on stage 0 then 1 (u each), then BW
 * on 1 then 0 (2u each). */
static struct pps_run *gpipe_2x1(int iters, int64_t u)
{
    struct pps_run *r = run_new(2, "gpipe", 2, 1, 1);

    for (int it = 0; it < iters; it++) {
        int64_t t = it * 10 * u;
        run_add(r, 0, PPS_SPAN_F, it, 0, t, t + u);
        run_add(r, 1, PPS_SPAN_F, it, 0, t + u, t + 2 * u);
        run_add(r, 1, PPS_SPAN_BW, it, 0, t + 2 * u, t + 4 * u);
        run_add(r, 0, PPS_SPAN_BW, it, 0, t + 4 * u, t + 6 * u);
    }
    return r;
}

static const struct pps_link_stats *link_of(const struct pps_report *rep, int a, int b)
{
    for (int i = 0; i < rep->n_links; i++)
        if (rep->links[i].from == a && rep->links[i].to == b)
            return &rep->links[i];
    return NULL;
}

/* Two stages, one F each so that there is a window; messages 0 -> 1 whose receiver waited take
 * 10, 30 and 20: the median 20; one it did not wait for took 500 (it sat there), which only
 * the minimum sees. 1 -> 0: none waited, so its figure is the smallest, an upper bound. */
static void test_links_from_message_ids(void)
{
    struct pps_run *r = run_new(2, NULL, 0, 0, 0);
    struct pps_report *rep;
    const struct pps_link_stats *l;

    run_add(r, 0, PPS_SPAN_F, 0, 0, 0, 1000);
    run_add(r, 1, PPS_SPAN_F, 0, 0, 0, 1000);
    message(r, 0, 1, 1, 100, 110, 1);
    message(r, 0, 1, 2, 200, 230, 1);
    message(r, 0, 1, 3, 300, 320, 1);
    message(r, 0, 1, 4, 400, 900, 0);
    message(r, 1, 0, 5, 100, 150, 0);
    message(r, 1, 0, 6, 200, 240, 0);
    /* A SEND without an id, and one whose receive never came: neither is a transfer. */
    run_add(r, 0, PPS_SPAN_SEND, 0, 0, 500, 501);
    r->stages[0].spans[r->stages[0].n - 1].peer = 1;
    message(r, 0, 1, 9, 600, 610, 0);
    r->stages[1].n--; /* drop that RECV */
    span_sort(r);
    rep = report_of(r);
    CHECK_EQ_INT(rep->n_links, 2);
    l = link_of(rep, 0, 1);
    CHECK(l != NULL);
    CHECK_EQ_INT(l->n_msgs, 4);
    CHECK_EQ_INT(l->n_blocked, 3);
    CHECK_NEAR(l->latency_ns, 20, 0);
    CHECK_NEAR(l->min_ns, 10, 0);
    CHECK_EQ_INT(l->bounded, 0);
    l = link_of(rep, 1, 0);
    CHECK(l != NULL);
    CHECK_EQ_INT(l->bounded, 1);
    CHECK_NEAR(l->latency_ns, 40, 0);
    pps_report_free(rep);
    run_free(r);
}

/* Ids that stand on two messages, and receives that end a millisecond before their sends start,
 * are not believed: the links are shown as such and take no part in the prediction's tcomm. */
static void test_links_not_believed(void)
{
    struct pps_run *r = gpipe_2x1(1, 1000);
    struct pps_report *rep;
    const struct pps_link_stats *l;

    message(r, 0, 1, 7, 1000, 1010, 1);
    message(r, 0, 1, 7, 1100, 1120, 1); /* the same id again */
    message(r, 1, 0, 8, 4000, 4000 - 2000000, 0); /* 2 ms before its send */
    span_sort(r);
    rep = report_of(r);
    l = link_of(rep, 0, 1);
    CHECK(l != NULL && l->dup_ids);
    l = link_of(rep, 1, 0);
    CHECK(l != NULL && l->skew_ns > 1e6);
    CHECK(rep->have_prediction);
    CHECK_EQ_INT(rep->tcomm_measured, 0); /* no link believed: none measured the network */
    pps_report_free(rep);
    run_free(r);
}

/* Host figures: a stage that waited 100 of its 1000 ns for a core, another 300; and figures that
 * cannot be (a wait longer than the time it lies in, or not a number) are not believed. */
static void test_host_contention_and_what_is_not_believed(void)
{
    struct pps_run *r = run_new(3, NULL, 0, 0, 0);
    struct pps_report *rep;

    for (int s = 0; s < 3; s++)
        run_add(r, s, PPS_SPAN_F, 0, 0, 0, 1000);
    run_meta_rank(r, 0, "host_run_delay_ns", "100");
    run_meta_rank(r, 0, "host_wall_ns", "1000");
    run_meta_rank(r, 1, "host_run_delay_ns", "300");
    run_meta_rank(r, 1, "host_wall_ns", "1000");
    run_meta_rank(r, 2, "host_run_delay_ns", "9223372036854775807");
    run_meta_rank(r, 2, "host_wall_ns", "1000");
    for (int s = 0; s < 3; s++) {
        run_meta_rank(r, s, "host", "h");
        run_meta_rank(r, s, "host_cpu_list", s == 2 ? "0-1,x" : "0-1");
        run_meta_rank(r, s, "host_cpus", "2");
    }
    span_sort(r);
    rep = report_of(r);
    CHECK(rep->host.known);
    CHECK_NEAR(rep->host.contention, 400.0 / 2000.0, 1e-12);
    CHECK_EQ_INT(rep->host.worst_stage, 1);
    CHECK_NEAR(rep->host.worst, 0.3, 1e-12);
    CHECK_EQ_INT(rep->host.stage_threads, 3); /* the third still runs there */
    CHECK_EQ_INT(rep->host.cpus, 2);
    CHECK(isnan(rep->host.share[2]));
    pps_report_free(rep);
    run_free(r);
}

/* A meta tcomm_ns of 10^30 ns is no duration: no prediction, and the note says why. */
static void test_absurd_tcomm_is_refused(void)
{
    struct pps_run *r = gpipe_2x1(1, 10);
    struct pps_report *rep;

    run_meta(r, "tcomm_ns", "1e30");
    rep = report_of(r);
    CHECK_EQ_INT(rep->have_prediction, 0);
    CHECK_STR_CONTAINS(rep->prediction_note, "is not a duration");
    pps_report_free(rep);
    run_free(r);
}

/* A run of gpipe p=2 m=1 that stopped in its third iteration (it holds only stage 0's F): that
 * iteration is partial, and every figure is the two whole ones'. */
static void test_partial_iteration_is_left_out(void)
{
    struct pps_run *r = gpipe_2x1(2, 10);
    struct pps_report *rep;

    run_add(r, 0, PPS_SPAN_F, 2, 0, 200, 201);
    r->complete = 0;
    span_sort(r);
    rep = report_of(r);
    CHECK_EQ_INT(rep->n_iters, 3);
    CHECK_EQ_INT(rep->n_full, 2);
    CHECK(rep->iters[2].partial && !rep->iters[0].partial);
    CHECK_NEAR(rep->bubble, 60.0 / 120.0, 1e-12); /* each stage idles 30 of 60 */
    CHECK_NEAR(rep->iter_ns, 100, 0);             /* the whole ones' period, not the stub's */
    CHECK_NEAR(rep->total[0].n_ops[PPS_SPAN_F], 2, 0);
    CHECK_EQ_INT(pps_report_verdict(rep, NULL, 0), PPS_VERDICT_AS_PREDICTED);
    pps_report_free(rep);
    run_free(r);
}

/* Spans but no compute: no window, and a verdict that says so, not "no spans". */
static void test_only_sends_give_no_window(void)
{
    struct pps_run *r = run_new(2, NULL, 0, 0, 0);
    struct pps_report *rep;
    char why[256];

    message(r, 0, 1, 1, 0, 10, 0);
    span_sort(r);
    rep = report_of(r);
    CHECK_EQ_INT(rep->n_iters, 0);
    CHECK_EQ_INT(pps_report_verdict(rep, why, sizeof(why)), PPS_VERDICT_NONE);
    CHECK_STR_CONTAINS(why, "no compute spans (F, B, W, BW, OPT) with an iteration");
    pps_report_free(rep);
    run_free(r);
}

/* The links explain a bubble above the prediction when the prediction with them closes the gap,
 * even where it rises by less than the tolerance: 17.8% predicted, 19.5% with the links as
 * measured, 20.9% measured. */
static void test_links_that_close_the_gap_explain_it(void)
{
    struct pps_report rep;
    struct pps_link_stats links[2] = {
        {.from = 1, .to = 2, .n_msgs = 10, .n_blocked = 8, .latency_ns = 240e3, .min_ns = 200e3},
        {.from = 0, .to = 1, .n_msgs = 10, .n_blocked = 8, .latency_ns = 50e3, .min_ns = 40e3},
    };
    char why[512];

    verdict_report(&rep, 0.209, 0.178, 0.02);
    rep.pred_links = 0.195;
    rep.tcomm_ns = 50e3;
    rep.tcomm_measured = 1;
    rep.n_links = 2;
    rep.links = links;
    CHECK_EQ_INT(pps_report_verdict(&rep, why, sizeof(why)), PPS_VERDICT_ABOVE);
    CHECK_STR_CONTAINS(why, "communication: the link 1->2 takes 240 us per message");
    CHECK_STR_CONTAINS(why, "(the run's typical link)");
    /* Links that leave the gap open and rise by little explain nothing. */
    rep.pred_links = 0.185;
    CHECK_EQ_INT(pps_report_verdict(&rep, why, sizeof(why)), PPS_VERDICT_ABOVE);
    CHECK_STR_CONTAINS(why, "not the schedule, nor the links or the host as measured");
}

/* Within the tolerance, an overhead whose removal lowers the bubble by more than the tolerance
 * is named with that figure; one that lowers it by less is not. */
static void test_overhead_within_is_named(void)
{
    struct pps_report rep;
    char why[512];

    verdict_report(&rep, 0.31, 0.30, 0.02);
    rep.pred_noovh = 0.22;
    CHECK_EQ_INT(pps_report_verdict(&rep, why, sizeof(why)), PPS_VERDICT_AS_PREDICTED);
    CHECK_STR_CONTAINS(why, "the runtime's overhead between ops explains it");
    CHECK_STR_CONTAINS(why, "22.0%");
    rep.pred_noovh = 0.29;
    CHECK_EQ_INT(pps_report_verdict(&rep, why, sizeof(why)), PPS_VERDICT_AS_PREDICTED);
    CHECK(strstr(why, "overhead") == NULL);
    CHECK_STR_CONTAINS(why, "the schedule explains it");
}

/* Forgets what a run says of itself: its schedule, p, m, v, and (with iters) its iterations. */
static void forget(struct pps_run *r, int iters)
{
    free(r->schedule);
    r->schedule = NULL;
    r->p = r->m = r->v = 0;
    for (int s = 0; s < r->n_stages && iters; s++)
        for (size_t i = 0; i < r->stages[s].n; i++)
            r->stages[s].spans[i].iter = -1;
}

/* Runs that are exactly a schedule's simulated timeline, with nothing said: the family, p, m, v
 * and the iterations come back from the order, and the prediction is the simulator's. */
static void test_infer_every_family(void)
{
    static const struct {
        int kind, p, m, v;
    } cases[] = {
        {PPS_SCHED_GPIPE, 4, 8, 1},      {PPS_SCHED_1F1B, 4, 8, 1},  {PPS_SCHED_1F1B, 3, 5, 1},
        {PPS_SCHED_INTERLEAVED, 4, 8, 2}, {PPS_SCHED_ZB_H1, 4, 8, 1}, {PPS_SCHED_ZB_H2, 4, 8, 1},
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct pps_sim_costs c;
        struct pps_sim_result res;
        struct pps_run *r;
        struct pps_report *rep;

        CHECK_EQ_INT(pps_sim_costs_init(&c, cases[i].p, 1.0, 2.0, 1.0), 0);
        r = run_from_sim(cases[i].kind, cases[i].p, cases[i].m, cases[i].v, &c, 3, 0, &res);
        CHECK(r != NULL);
        forget(r, 1);
        rep = report_of(r);
        CHECK(rep != NULL);
        CHECK_EQ_INT(rep->sched_kind, cases[i].kind);
        CHECK_EQ_INT(rep->p, cases[i].p);
        CHECK_EQ_INT(rep->m, cases[i].m);
        CHECK_EQ_INT(rep->v, cases[i].v);
        CHECK_EQ_INT(rep->inferred & (PPS_INFERRED_ITERS | PPS_INFERRED_SCHEDULE),
                     PPS_INFERRED_ITERS | PPS_INFERRED_SCHEDULE);
        CHECK_EQ_INT(rep->n_iters, 3);
        CHECK(rep->have_prediction);
        CHECK_NEAR(rep->pred.bubble, res.bubble, 1e-9);
        CHECK_NEAR(rep->bubble, res.bubble, 1e-9);
        CHECK(!strcmp(pps_report_schedule_name(r, rep), pps_sched_kind_name(cases[i].kind)));
        pps_report_free(rep);
        run_free(r);
        pps_sim_result_release(&res);
        pps_sim_costs_release(&c);
    }
}

/* An order no family has (all forwards, then each microbatch's B and W, as
 * examples/nvtx_pipeline.c runs): "custom", and the prediction simulates that very order. */
static void test_infer_custom_order(void)
{
    struct pps_schedule sched = PPS_SCHEDULE_INIT;
    struct pps_sim_costs c;
    struct pps_sim_result res;
    struct pps_run *r = run_new(3, NULL, 0, 0, 0);
    struct pps_report *rep;
    size_t k = 0;

    CHECK_EQ_INT(pps_schedule_alloc(&sched, 3, 4, 1, 3 * 12), 0);
    for (int s = 0; s < 3; s++) {
        sched.start[s] = k;
        for (int mb = 0; mb < 4; mb++)
            sched.actions[k++] = (struct pps_action){PPS_OP_F, 0, (uint32_t)mb};
        for (int mb = 0; mb < 4; mb++) {
            sched.actions[k++] = (struct pps_action){PPS_OP_B, 0, (uint32_t)mb};
            sched.actions[k++] = (struct pps_action){PPS_OP_W, 0, (uint32_t)mb};
        }
    }
    sched.start[3] = k;
    CHECK_EQ_INT(pps_sim_costs_init(&c, 3, 1.0, 1.0, 1.0), 0);
    memset(&res, 0, sizeof(res));
    CHECK_EQ_INT(pps_simulate(&sched, &c, &res, NULL), 0);
    for (int s = 0; s < 3; s++)
        for (size_t i = sched.start[s]; i < sched.start[s + 1]; i++)
            run_add(r, s, span_kind_of(sched.actions[i].op), 0, (int)sched.actions[i].mb,
                    ns_of(res.spans[i].start), ns_of(res.spans[i].end));
    span_sort(r);
    rep = report_of(r);
    CHECK_EQ_INT(rep->sched_kind, -1);
    CHECK(rep->observed.actions != NULL);
    CHECK(!strcmp(pps_report_schedule_name(r, rep), "custom"));
    CHECK(rep->have_prediction);
    CHECK_NEAR(rep->pred.bubble, res.bubble, 1e-9);
    CHECK_NEAR(rep->bubble, res.bubble, 1e-9);
    pps_report_free(rep);
    run_free(r);
    pps_sim_result_release(&res);
    pps_sim_costs_release(&c);
    pps_schedule_release(&sched);
}

/* A named schedule is believed: inference does not second-guess a run that says what it ran. */
static void test_named_schedule_is_kept(void)
{
    struct pps_sim_costs c;
    struct pps_sim_result res;
    struct pps_run *r;
    struct pps_report *rep;

    CHECK_EQ_INT(pps_sim_costs_init(&c, 4, 1.0, 1.0, 1.0), 0);
    r = run_from_sim(PPS_SCHED_ZB_H1, 4, 8, 1, &c, 2, 0, &res);
    rep = report_of(r);
    CHECK_EQ_INT(rep->sched_kind, PPS_SCHED_ZB_H1);
    CHECK_EQ_INT(rep->inferred, 0);
    pps_report_free(rep);
    run_free(r);
    pps_sim_result_release(&res);
    pps_sim_costs_release(&c);
}

static const struct test_case cases[] = {
    TEST(test_infer_every_family),
    TEST(test_infer_custom_order),
    TEST(test_named_schedule_is_kept),
    TEST(test_links_from_message_ids),
    TEST(test_links_not_believed),
    TEST(test_host_contention_and_what_is_not_believed),
    TEST(test_absurd_tcomm_is_refused),
    TEST(test_partial_iteration_is_left_out),
    TEST(test_only_sends_give_no_window),
    TEST(test_links_that_close_the_gap_explain_it),
    TEST(test_overhead_within_is_named),
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    return test_main(cases, argc, argv);
}
