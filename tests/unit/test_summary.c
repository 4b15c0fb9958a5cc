/*
 * test_summary.c - a report read from its summary (analysis/summary.c) is the report made from
 * the spans, figure for figure and bit for bit: the measurement through the bytes and back
 * encodes to the same bytes, and what is made again from the metadata (host, prediction,
 * verdict, flags, the critical path's chain) is equal to the last bit. Damaged bytes are refused,
 * never read past.
 */
#include "analysis_fixture.h"

/* Bitwise: NaN equals NaN, and 0.0 is not -0.0. */
static int same_double(double a, double b)
{
    return memcmp(&a, &b, sizeof(a)) == 0;
}

static void check_same_doubles(const double *a, const double *b, size_t n, const char *what)
{
    for (size_t i = 0; i < n; i++)
        if (!same_double(a[i], b[i])) {
            fprintf(stderr, "  %s[%zu]: %.17g vs %.17g\n", what, i, a[i], b[i]);
            CHECK(0);
        }
}

static void check_same_sim(const struct pps_sim_result *a, const struct pps_sim_result *b)
{
    CHECK_EQ_INT(a->p, b->p);
    check_same_doubles(&a->makespan, &b->makespan, 1, "makespan");
    check_same_doubles(&a->bubble, &b->bubble, 1, "bubble");
    check_same_doubles(&a->steady_period, &b->steady_period, 1, "steady_period");
    check_same_doubles(&a->steady_bubble, &b->steady_bubble, 1, "steady_bubble");
    if (a->idle) {
        CHECK(b->idle != NULL);
        check_same_doubles(a->idle, b->idle, (size_t)a->p, "idle");
        check_same_doubles(a->busy, b->busy, (size_t)a->p, "busy");
    }
}

static void check_same_flags(const struct pps_run *run, const struct pps_report *a,
                             const struct pps_report *b)
{
    struct pps_flag_list fa = PPS_FLAG_LIST_INIT, fb = PPS_FLAG_LIST_INIT;
    struct pps_err err = {0, ""};

    CHECK_EQ_INT(pps_analysis_flags(run, a, &fa, &err), 0);
    CHECK_EQ_INT(pps_analysis_flags(run, b, &fb, &err), 0);
    CHECK_EQ_INT((int)fa.n, (int)fb.n);
    for (size_t i = 0; i < fa.n; i++) {
        CHECK_EQ_INT(fa.items[i].kind, fb.items[i].kind);
        CHECK_EQ_INT(fa.items[i].peer, fb.items[i].peer);
        CHECK(same_double(fa.items[i].value, fb.items[i].value));
        CHECK(!strcmp(fa.items[i].text, fb.items[i].text));
    }
    pps_flag_list_release(&fa);
    pps_flag_list_release(&fb);
}

/* The round trip of run's report through its summary. */
static void check_round_trip(const struct pps_run *run)
{
    struct pps_report *rep = report_of(run), *back = NULL;
    struct pps_critpath *cp = NULL, *cp_back = NULL;
    struct pps_err err = {0, ""};
    void *bytes = NULL, *again = NULL;
    size_t len = 0, len_again = 0;
    char va[1024], vb[1024], ca[4096], cb[4096];

    CHECK_EQ_INT(pps_analysis_critpath(run, rep, &cp, &err), 0);
    CHECK_EQ_INT(pps_summary_encode(run, rep, cp, &bytes, &len, &err), 0);
    CHECK_EQ_INT(pps_summary_decode(run, bytes, len, &back, &cp_back, &err), 0);
    /* The measurement, bit for bit. */
    CHECK_EQ_INT(pps_summary_encode(run, back, cp_back, &again, &len_again, &err), 0);
    CHECK_EQ_INT((int)len_again, (int)len);
    CHECK(memcmp(bytes, again, len) == 0);
    /* What is made again from it. */
    CHECK_EQ_INT(back->have_prediction, rep->have_prediction);
    CHECK(!strcmp(back->prediction_note, rep->prediction_note));
    check_same_sim(&rep->pred, &back->pred);
    CHECK_EQ_INT(back->have_pred_comm, rep->have_pred_comm);
    check_same_sim(&rep->pred_comm, &back->pred_comm);
    check_same_doubles(&rep->pred_iter_ns, &back->pred_iter_ns, 1, "pred_iter_ns");
    check_same_doubles(&rep->pred_steady_bubble, &back->pred_steady_bubble, 1, "steady");
    check_same_doubles(&rep->pred_balanced, &back->pred_balanced, 1, "pred_balanced");
    check_same_doubles(&rep->pred_nocomm, &back->pred_nocomm, 1, "pred_nocomm");
    check_same_doubles(&rep->pred_noovh, &back->pred_noovh, 1, "pred_noovh");
    check_same_doubles(&rep->pred_links, &back->pred_links, 1, "pred_links");
    check_same_doubles(&rep->judged_measured, &back->judged_measured, 1, "judged_measured");
    check_same_doubles(&rep->judged_predicted, &back->judged_predicted, 1, "judged_predicted");
    check_same_doubles(&rep->judged_spread, &back->judged_spread, 1, "judged_spread");
    check_same_doubles(&rep->tolerance, &back->tolerance, 1, "tolerance");
    CHECK_EQ_INT(back->host.known, rep->host.known);
    check_same_doubles(&rep->host.contention, &back->host.contention, 1, "contention");
    CHECK_EQ_INT(pps_report_verdict(rep, va, sizeof(va)), pps_report_verdict(back, vb, sizeof(vb)));
    CHECK(!strcmp(va, vb));
    check_same_flags(run, rep, back);
    CHECK((cp == NULL) == (cp_back == NULL));
    if (cp && cp->typical >= 0) {
        pps_critpath_chain(cp, cp->typical, ca, sizeof(ca));
        pps_critpath_chain(cp_back, cp_back->typical, cb, sizeof(cb));
        CHECK(ca[0] != '\0');
        CHECK(!strcmp(ca, cb));
    }
    /* Every cut of the bytes is refused, and none is read past (ASan). */
    for (size_t cut = 0; cut < len; cut += 1 + cut / 64) {
        struct pps_report *r2 = NULL;
        struct pps_critpath *c2 = NULL;
        CHECK(pps_summary_decode(run, bytes, cut, &r2, &c2, &err) == PPS_EFORMAT);
        CHECK(r2 == NULL && c2 == NULL);
    }
    free(bytes);
    free(again);
    pps_report_free(rep);
    pps_report_free(back);
    pps_critpath_free(cp);
    pps_critpath_free(cp_back);
}

static void uneven(struct pps_sim_costs *c, int p)
{
    CHECK_EQ_INT(pps_sim_costs_init(c, p, 1.0, 1.5, 0.75), 0);
    for (int s = 0; s < p; s++) {
        c->tf[s] += 0.25 * s;
        c->tb[s] += 0.1 * (s % 2);
    }
    c->tcomm = 0.125;
    c->topt = 0.5;
}

static void check_sim(int kind, int p, int m, int v)
{
    struct pps_sim_costs c;
    struct pps_sim_result res;
    struct pps_run *run;

    uneven(&c, p);
    run = run_from_sim(kind, p, m, v, &c, 4, 3000, &res);
    check_round_trip(run);
    pps_sim_result_release(&res);
    pps_sim_costs_release(&c);
    run_free(run);
}

static void test_every_schedule(void)
{
    check_sim(PPS_SCHED_GPIPE, 4, 8, 1);
    check_sim(PPS_SCHED_1F1B, 4, 12, 1);
    check_sim(PPS_SCHED_INTERLEAVED, 4, 8, 2);
    check_sim(PPS_SCHED_ZB_H1, 4, 8, 1);
    check_sim(PPS_SCHED_ZB_H2, 3, 9, 1);
}

/* Messages, waits on a peer, a partial last iteration, host contention and an unnamed schedule
 * (the observed order): the links, the peers, the host and the observed schedule go through. */
static void test_links_peers_host_observed(void)
{
    struct pps_sim_costs c;
    struct pps_sim_result res;
    struct pps_run *run;
    int64_t corr = 1;

    uneven(&c, 3);
    run = run_from_sim(PPS_SCHED_1F1B, 3, 6, 1, &c, 3, 5000, &res);
    free(run->schedule);
    run->schedule = NULL; /* the order is read from the spans */
    for (int it = 0; it < 3; it++)
        for (int s = 0; s + 1 < 3; s++)
            for (int mb = 0; mb < 6; mb++) {
                int64_t t = it * 100000 + mb * 1000 + s * 50;
                struct pps_span *sp;
                run_add(run, s, PPS_SPAN_SEND, it, mb, t, t + 40);
                sp = &run->stages[s].spans[run->stages[s].n - 1];
                sp->peer = (int16_t)(s + 1);
                sp->corr = corr;
                run_add(run, s + 1, PPS_SPAN_WAIT, it, mb, t, t + 300 + 10 * mb);
                sp = &run->stages[s + 1].spans[run->stages[s + 1].n - 1];
                sp->peer = (int16_t)s;
                sp->corr = corr;
                run_add(run, s + 1, PPS_SPAN_RECV, it, mb, t + 300 + 10 * mb, t + 320 + 10 * mb);
                sp = &run->stages[s + 1].spans[run->stages[s + 1].n - 1];
                sp->peer = (int16_t)s;
                sp->corr = corr++;
            }
    /* A stop in the last iteration: drop stage 2's last forwards. */
    run->stages[2].n -= 2;
    run->n_spans -= 2;
    run->complete = 0;
    run_meta_rank(run, 0, "host_run_delay_ns", "400000");
    run_meta_rank(run, 0, "host_wall_ns", "1000000");
    run_meta_rank(run, 1, "host_run_delay_ns", "10000");
    run_meta_rank(run, 1, "host_wall_ns", "1000000");
    run_meta(run, "iters", "5");
    span_sort(run);
    check_round_trip(run);
    pps_sim_result_release(&res);
    pps_sim_costs_release(&c);
    run_free(run);
}

/* A report with nothing in it (no spans) goes through too. */
static void test_empty_run(void)
{
    struct pps_run *run = run_new(2, "1f1b", 2, 4, 1);

    check_round_trip(run);
    run_free(run);
}

static void test_other_bytes_refused(void)
{
    struct pps_sim_costs c;
    struct pps_sim_result res;
    struct pps_run *run;
    struct pps_report *rep, *back = NULL;
    struct pps_critpath *cp = NULL;
    struct pps_err err = {0, ""};
    unsigned char *bytes = NULL;
    size_t len = 0;

    uneven(&c, 2);
    run = run_from_sim(PPS_SCHED_1F1B, 2, 4, 1, &c, 2, 0, &res);
    rep = report_of(run);
    CHECK_EQ_INT(pps_summary_encode(run, rep, NULL, (void **)&bytes, &len, &err), 0);
    /* Another format, another byte order, not a summary at all. */
    for (int at = 0; at < 16; at++) {
        bytes[at] ^= 0x40;
        CHECK(pps_summary_decode(run, bytes, len, &back, &cp, &err) == PPS_EFORMAT);
        CHECK(back == NULL);
        bytes[at] ^= 0x40;
    }
    /* The bytes as they were: read, and without a critical path. */
    CHECK_EQ_INT(pps_summary_decode(run, bytes, len, &back, &cp, &err), 0);
    CHECK(cp == NULL);
    /* Every byte changed in turn: refused by the check at the end, never read. */
    for (size_t at = 16; at < len; at += 7) {
        struct pps_report *r2 = NULL;
        struct pps_critpath *c2 = NULL;
        bytes[at] ^= 0xff;
        CHECK(pps_summary_decode(run, bytes, len, &r2, &c2, &err) == PPS_EFORMAT);
        CHECK(r2 == NULL && c2 == NULL);
        bytes[at] ^= 0xff;
    }
    free(bytes);
    pps_report_free(rep);
    pps_report_free(back);
    pps_sim_result_release(&res);
    pps_sim_costs_release(&c);
    run_free(run);
}

/* pps_summary_pick(): the newest iterations as pps_run_keep_iter() chooses them on the run, and
 * from an anchor either way, each choice whole iterations within keep (the anchor's and one more
 * at least), its times covering every span labelled with them. */
static void test_pick_iterations(void)
{
    struct pps_sim_costs c;
    struct pps_sim_result res;
    struct pps_run *run;
    struct pps_report *rep;
    struct pps_err err = {0, ""};
    void *bytes = NULL;
    size_t len = 0;
    long per_iter;

    uneven(&c, 3);
    run = run_from_sim(PPS_SCHED_1F1B, 3, 4, 1, &c, 8, 2000, &res);
    rep = report_of(run);
    CHECK_EQ_INT(pps_summary_encode(run, rep, NULL, &bytes, &len, &err), 0);
    per_iter = (long)run->n_spans / 8; /* every iteration alike */
    for (size_t keep = 1; keep < run->n_spans + 5; keep += 7) {
        struct pps_summary_pick pk;
        CHECK_EQ_INT(pps_summary_pick(bytes, len, keep, 0, 0, &pk, NULL, &err), 0);
        if (keep < run->n_spans)
            CHECK_EQ_INT(pk.first_iter, pps_run_keep_iter(run, keep));
        CHECK_EQ_INT(pk.end_iter, 0);
        CHECK_EQ_INT((int)pk.spans, (int)run->n_spans);
        CHECK_EQ_INT(pk.n_iters, 8);
        CHECK_EQ_INT(pk.older, pk.first_iter > 0);
        for (int dir = -1; dir <= 1; dir += 2)
            for (int anchor = 0; anchor < 8; anchor++) {
                int first, last;
                CHECK_EQ_INT(pps_summary_pick(bytes, len, keep, anchor, dir, &pk, NULL, &err), 0);
                first = pk.first_iter;
                last = pk.end_iter ? pk.end_iter - 1 : 7;
                CHECK(dir < 0 ? last == anchor : first == anchor);
                /* It moves: one more than the anchor's where there is one, whatever keep. */
                CHECK(dir < 0 ? first < anchor || anchor == 0 : last > anchor || anchor == 7);
                CHECK(last - first <= 1 || (size_t)((last - first + 1) * per_iter) <= keep);
                /* No more would have fit. */
                if (dir < 0 && first > 0)
                    CHECK((size_t)((last - first + 2) * per_iter) > keep);
                if (dir > 0 && last < 7)
                    CHECK((size_t)((last - first + 2) * per_iter) > keep);
                CHECK_EQ_INT(pk.older, first > 0);
                CHECK_EQ_INT(pk.newer, last < 7);
                for (int s = 0; s < run->n_stages; s++)
                    for (size_t i = 0; i < run->stages[s].n; i++) {
                        const struct pps_span *sp = &run->stages[s].spans[i];
                        if (sp->iter >= first && sp->iter <= last)
                            CHECK(sp->start_ns >= pk.t0 && sp->end_ns <= pk.t1);
                    }
            }
    }
    free(bytes);
    pps_report_free(rep);
    pps_sim_result_release(&res);
    pps_sim_costs_release(&c);
    run_free(run);
}

static const struct test_case cases[] = {
    TEST(test_pick_iterations),           TEST(test_every_schedule),
    TEST(test_links_peers_host_observed), TEST(test_empty_run),
    TEST(test_other_bytes_refused),       {NULL, NULL},
};

int main(int argc, char **argv)
{
    return test_main(cases, argc, argv);
}
