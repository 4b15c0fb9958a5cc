/*
 * test_critpath.c - the critical path (analysis/critpath.c) on runs built in memory, where each
 * figure follows from the spans by hand: the message rule (a receiver that waited, one that came
 * late), clocks that put a producer's end after its consumer's start, the virtual stage order of
 * interleaved runs against the simulator, unlabelled runs, the optimizer barrier, the compressed
 * chain in a small buffer, and a run with no iteration.
 */
#include "analysis_fixture.h"

static struct pps_critpath *path_of(const struct pps_run *r, const struct pps_report *rep)
{
    struct pps_critpath *cp = NULL;
    struct pps_err err = {0, ""};
    int rc = pps_analysis_critpath(r, rep, &cp, &err);

    if (rc < 0)
        fprintf(stderr, "  pps_analysis_critpath: %s\n", err.msg);
    CHECK_EQ_INT(rc, 0);
    CHECK(cp != NULL);
    return cp;
}

static struct pps_span *msg(struct pps_run *r, int stage, int kind, int peer, int mb, int64_t corr,
                            int64_t start, int64_t end)
{
    struct pps_span *sp;

    run_add(r, stage, kind, 0, mb, start, end);
    sp = &r->stages[stage].spans[r->stages[stage].n - 1];
    sp->peer = peer;
    sp->corr = corr;
    sp->chunk = -1;
    return sp;
}

/* The path's parts add up to its length, which the window holds. */
static void check_sums(const struct pps_critpath_iter *ci)
{
    double sum = ci->comm_ns + ci->wait_ns;

    for (int k = 0; k < PPS_SPAN_KIND_COUNT; k++)
        sum += ci->kind_ns[k];
    CHECK(fabs(sum - ci->length_ns) < 1e-6);
    CHECK(ci->length_ns <= ci->window_ns + 1e-6);
}

/*
 * Two stages, one microbatch. Stage 0: F0 [0,100), sends it [100,110); stage 1 waits for it
 * [20,150), receives [150,155), F0 [160,260) and B0 [260,360), sends the gradient [360,365);
 * stage 0 comes to it late: busy with something else until 500 (an F of its own at [110, 500)),
 * receives [500,505), B0 [510,610).
 *   F0@s1 from F0@s0: the receiver waited, so the transfer is the send's start to the receive's
 *   end: [100,155) of the gap [100,160): 55 comm, 5 wait.
 *   B0@s0: its stage's F1 ended at 500, after the gradient's producer (B0@s1 at 360): the
 *   stage's own op is its predecessor, and the gap [500,510) holds the receive [500,505): 5
 *   comm, 5 wait.
 */
static void test_messages_waited_and_late(void)
{
    struct pps_run *r = run_new(2, "1f1b", 2, 2, 1);
    struct pps_report *rep;
    struct pps_critpath *cp;
    const struct pps_critpath_iter *ci;
    char chain[256];

    run_add(r, 0, PPS_SPAN_F, 0, 0, 0, 100);
    msg(r, 0, PPS_SPAN_SEND, 1, 0, 7, 100, 110);
    run_add(r, 0, PPS_SPAN_F, 0, 1, 110, 500);
    msg(r, 0, PPS_SPAN_RECV, 1, 0, 9, 500, 505);
    run_add(r, 0, PPS_SPAN_BW, 0, 0, 510, 610);
    msg(r, 1, PPS_SPAN_WAIT, 0, 0, 7, 20, 150);
    msg(r, 1, PPS_SPAN_RECV, 0, 0, 7, 150, 155);
    run_add(r, 1, PPS_SPAN_F, 0, 0, 160, 260);
    run_add(r, 1, PPS_SPAN_BW, 0, 0, 260, 360);
    msg(r, 1, PPS_SPAN_SEND, 0, 0, 9, 360, 365);
    span_sort(r);
    rep = report_of(r);
    cp = path_of(r, rep);
    CHECK(cp->messages);
    CHECK_EQ_INT(cp->n_full, 1);
    ci = &cp->iters[0];
    check_sums(ci);
    CHECK_EQ_INT((int)ci->n_steps, 3);
    pps_critpath_chain(cp, 0, chain, sizeof(chain));
    CHECK(!strcmp(chain, "F0..BW0@s0 (3 ops)")); /* three steps on one stage */
    /* The stage's own chain wins: F1@s0 ended (500) after B0@s1, the gradient's producer (360). */
    CHECK_EQ_INT(ci->steps[2].via, PPS_CRITPATH_STAGE);
    CHECK(fabs(ci->steps[2].comm_ns - 5) < 1e-9 && fabs(ci->steps[2].wait_ns - 5) < 1e-9);
    CHECK(fabs(ci->length_ns - 610) < 1e-9);
    pps_critpath_free(cp);
    pps_report_free(rep);

    /* Stage 0's F1 shorter, [110, 200): now B0@s1 (ending 360) is B0@s0's predecessor, through
     * the gradient: sent [360,365), received late [500,505) after the message sat there: only
     * the send and the receive are transfer, 10 of the gap [360,510), 140 wait. And F0@s1
     * came from F0@s0 through the message the receiver waited for: 55 comm, 5 wait. */
    r->stages[0].spans[2].end_ns = 200;
    /* And stage 1's wait for F0 starts before the window does (at -50): it is still found. */
    CHECK_EQ_INT(r->stages[1].spans[0].kind, PPS_SPAN_WAIT);
    r->stages[1].spans[0].start_ns = -50;
    span_sort(r);
    rep = report_of(r);
    cp = path_of(r, rep);
    ci = &cp->iters[0];
    check_sums(ci);
    pps_critpath_chain(cp, 0, chain, sizeof(chain));
    CHECK(!strcmp(chain, "F0@s0 -> F0@s1 -> BW0@s1 -> BW0@s0"));
    CHECK_EQ_INT(ci->steps[1].via, PPS_CRITPATH_INPUT);
    CHECK(ci->steps[1].waited && ci->steps[1].has_send && ci->steps[1].has_recv);
    CHECK(fabs(ci->steps[1].comm_ns - 55) < 1e-9 && fabs(ci->steps[1].wait_ns - 5) < 1e-9);
    CHECK_EQ_INT(ci->steps[3].via, PPS_CRITPATH_INPUT);
    CHECK(!ci->steps[3].waited);
    CHECK(fabs(ci->steps[3].comm_ns - 10) < 1e-9 && fabs(ci->steps[3].wait_ns - 140) < 1e-9);
    CHECK(fabs(ci->comm_ns - 65) < 1e-9 && fabs(ci->wait_ns - 145) < 1e-9);
    CHECK(fabs(ci->stage_ns[0] - 200) < 1e-9 && fabs(ci->stage_ns[1] - 200) < 1e-9);
    pps_critpath_free(cp);
    pps_report_free(rep);
    run_free(r);
}

/* A consumer the clocks put 5 ns before its producer's end: the producer counts up to the
 * consumer's start, so no time counts twice and the parts still add up to the length. The
 * stages' spans are not in order of start. */
static void test_skewed_producer_is_clipped(void)
{
    struct pps_run *r = run_new(2, "gpipe", 2, 1, 1);
    struct pps_report *rep;
    struct pps_critpath *cp;
    const struct pps_critpath_iter *ci;

    /* Added out of order, and left so: a run not from the reader need not be sorted. */
    run_add(r, 0, PPS_SPAN_BW, 0, 0, 300, 400);
    run_add(r, 0, PPS_SPAN_F, 0, 0, 0, 100);
    run_add(r, 1, PPS_SPAN_BW, 0, 0, 200, 300);
    run_add(r, 1, PPS_SPAN_F, 0, 0, 95, 200);
    rep = report_of(r);
    cp = path_of(r, rep);
    ci = &cp->iters[0];
    check_sums(ci);
    CHECK_EQ_INT((int)ci->n_steps, 4);
    CHECK(ci->steps[0].kind == PPS_SPAN_F && ci->steps[0].stage == 0);
    CHECK(ci->steps[3].kind == PPS_SPAN_BW && ci->steps[3].stage == 0);
    CHECK(fabs(ci->steps[0].on_path_ns - 95) < 1e-9);
    CHECK(fabs(ci->length_ns - 400) < 1e-9 && fabs(ci->wait_ns) < 1e-9);
    pps_critpath_free(cp);
    pps_report_free(rep);
    run_free(r);
}

/* Interleaved (p = 4, v = 2) from the simulator: every step reached from another stage follows
 * the virtual stage order k = c*p + s, F from k-1 and a backward from k+1; the path spans the
 * window. */
static void test_interleaved_virtual_order(void)
{
    struct pps_sim_costs c;
    struct pps_sim_result res;
    struct pps_run *r;
    struct pps_report *rep;
    struct pps_critpath *cp;
    int crossings = 0, wraps = 0;

    CHECK(pps_sim_costs_init(&c, 4, 1, 1, 0) == 0);
    c.tcomm = 0.25;
    r = run_from_sim(PPS_SCHED_INTERLEAVED, 4, 8, 2, &c, 2, 0, &res);
    rep = report_of(r);
    cp = path_of(r, rep);
    CHECK_EQ_INT(cp->v, 2);
    for (int it = 0; it < cp->n_iters; it++) {
        const struct pps_critpath_iter *ci = &cp->iters[it];

        check_sums(ci);
        CHECK(fabs(ci->length_ns - ci->window_ns) < 1e-6);
        for (size_t i = 1; i < ci->n_steps; i++) {
            const struct pps_critpath_step *a = &ci->steps[i - 1], *b = &ci->steps[i];
            int ka = a->chunk * 4 + a->stage, kb = b->chunk * 4 + b->stage;

            if (b->via != PPS_CRITPATH_INPUT)
                continue;
            crossings++;
            CHECK_EQ_INT(a->mb, b->mb);
            CHECK_EQ_INT(ka, b->kind == PPS_SPAN_F ? kb - 1 : kb + 1);
            /* Each crossing carries one tcomm (a simulated run has no messages). */
            CHECK(fabs(b->comm_ns - ns_of(0.25)) < 1e-6 && fabs(b->wait_ns) < 1e-6);
            wraps += a->stage == 3 && b->stage == 0 && b->kind == PPS_SPAN_F;
        }
    }
    CHECK(crossings > 0 && wraps > 0);
    pps_critpath_free(cp);
    pps_report_free(rep);
    run_free(r);
    pps_sim_result_release(&res);
    pps_sim_costs_release(&c);
}

/* Spans without iterations: the report labels them by the order (each stage's first F); the
 * path uses the same labels, so each iteration has one, spanning its window. And the optimizer
 * step at the barrier is reached from the stage that finished last. */
static void test_unlabelled_and_barrier(void)
{
    struct pps_sim_costs c;
    struct pps_sim_result res;
    struct pps_run *r;
    struct pps_report *rep;
    struct pps_critpath *cp;

    CHECK(pps_sim_costs_init(&c, 4, 1, 1, 0) == 0);
    c.topt = 1;
    r = run_from_sim(PPS_SCHED_1F1B, 4, 8, 1, &c, 3, 5000, &res);
    for (int s = 0; s < r->n_stages; s++)
        for (size_t i = 0; i < r->stages[s].n; i++)
            r->stages[s].spans[i].iter = -1;
    r->n_iters = 0;
    rep = report_of(r);
    CHECK(rep->inferred & PPS_INFERRED_ITERS);
    CHECK_EQ_INT(rep->n_iters, 3);
    cp = path_of(r, rep);
    CHECK_EQ_INT(cp->n_full, 3);
    for (int it = 0; it < 3; it++) {
        const struct pps_critpath_iter *ci = &cp->iters[it];
        const struct pps_critpath_step *last = &ci->steps[ci->n_steps - 1];

        check_sums(ci);
        CHECK(fabs(ci->length_ns - ci->window_ns) < 1e-6);
        CHECK(fabs(ci->kind_ns[PPS_SPAN_OPT] - ns_of(1)) < 1e-6);
        CHECK_EQ_INT(last->kind, PPS_SPAN_OPT);
        /* Every stage's OPT ends at once (ties: the lowest stage, 0), after stage 0's own
         * BW7, the iteration's last op: reached through its stage. */
        CHECK_EQ_INT(ci->steps[ci->n_steps - 2].kind, PPS_SPAN_BW);
        CHECK_EQ_INT(ci->steps[ci->n_steps - 2].stage, 0);
    }
    pps_critpath_free(cp);
    pps_report_free(rep);

    /* Stage 3's OPT 1 ns longer: it ends last, and before it, at the barrier, the op that ended
     * last on any stage, stage 0's BW7 (stage 3's own last op ended long before). Without the
     * barrier (post-validated), its own stage's last op instead, and the time between is wait. */
    for (size_t i = 0; i < r->stages[3].n; i++)
        if (r->stages[3].spans[i].kind == PPS_SPAN_OPT)
            r->stages[3].spans[i].end_ns++;
    rep = report_of(r);
    cp = path_of(r, rep);
    for (int it = 0; it < 3; it++) {
        const struct pps_critpath_iter *ci = &cp->iters[it];
        const struct pps_critpath_step *last = &ci->steps[ci->n_steps - 1];

        CHECK(last->kind == PPS_SPAN_OPT && last->stage == 3);
        CHECK_EQ_INT(last->via, PPS_CRITPATH_BARRIER);
        CHECK(ci->steps[ci->n_steps - 2].stage == 0 && fabs(last->wait_ns) < 1e-9);
    }
    pps_critpath_free(cp);
    pps_report_free(rep);
    run_meta(r, "optimizer", "postval");
    rep = report_of(r);
    CHECK(rep->postval);
    cp = path_of(r, rep);
    for (int it = 0; it < 3; it++) {
        const struct pps_critpath_iter *ci = &cp->iters[it];
        const struct pps_critpath_step *last = &ci->steps[ci->n_steps - 1];

        CHECK_EQ_INT(last->via, PPS_CRITPATH_STAGE);
        CHECK(ci->steps[ci->n_steps - 2].stage == 3 && last->wait_ns > 0);
        check_sums(ci);
    }
    pps_critpath_free(cp);
    pps_report_free(rep);
    run_free(r);
    pps_sim_result_release(&res);
    pps_sim_costs_release(&c);
}

/* The chain in a buffer too small for it ends with " ..." and stays in the buffer; a run with no
 * iteration has no path (and no typical one). */
static void test_chain_cut_and_empty_run(void)
{
    struct pps_sim_costs c;
    struct pps_sim_result res;
    struct pps_run *r, *empty = run_new(2, "1f1b", 2, 4, 1);
    struct pps_report *rep;
    struct pps_critpath *cp;
    char small[40], full[1024];

    CHECK(pps_sim_costs_init(&c, 4, 1, 1, 0) == 0);
    r = run_from_sim(PPS_SCHED_1F1B, 4, 8, 1, &c, 1, 0, &res);
    rep = report_of(r);
    cp = path_of(r, rep);
    memset(small, 'x', sizeof(small));
    pps_critpath_chain(cp, 0, small, sizeof(small));
    CHECK(strlen(small) < sizeof(small));
    CHECK(strlen(small) >= 4 && !strcmp(small + strlen(small) - 4, " ..."));
    pps_critpath_chain(cp, 0, full, sizeof(full));
    CHECK(!strcmp(full, "F0@s0 -> F0@s1 -> F0@s2 -> F0..BW7@s3 (16 ops) -> BW7@s2 -> BW7@s1 -> "
                        "BW7@s0"));
    pps_critpath_chain(cp, 5, full, sizeof(full)); /* no such iteration */
    CHECK(full[0] == '\0');
    pps_critpath_free(cp);
    pps_report_free(rep);
    run_free(r);
    pps_sim_result_release(&res);
    pps_sim_costs_release(&c);

    rep = report_of(empty);
    cp = path_of(empty, rep);
    CHECK_EQ_INT(cp->n_iters, 0);
    CHECK_EQ_INT(cp->n_full, 0);
    CHECK_EQ_INT(cp->typical, -1);
    pps_critpath_free(cp);
    pps_report_free(rep);
    run_free(empty);
    pps_critpath_free(NULL);
}

static const struct test_case cases[] = {
    TEST(test_messages_waited_and_late),  TEST(test_skewed_producer_is_clipped),
    TEST(test_interleaved_virtual_order), TEST(test_unlabelled_and_barrier),
    TEST(test_chain_cut_and_empty_run),   {NULL, NULL},
};

int main(int argc, char **argv)
{
    return test_main(cases, argc, argv);
}
