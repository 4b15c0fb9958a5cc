/*
 * test_executor_emu.c - the emu backend: an op takes its modeled time (sleeping, not spinning),
 * the link model delivers no earlier than latency + bytes / bandwidth and poll says so, and a
 * whole emulated run measures, through the real tracer, storage and analysis, the bubble the
 * simulator predicts for each schedule (within 5 points here; bench/ holds the 2-point goal).
 */
#include <dirent.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "analysis.h"
#include "emu.h"
#include "run.h"
#include "run_fixture.h"
#include "schedule.h"
#include "storage.h"
#include "test.h"

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static double cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void test_emu_ops_take_their_time_asleep(void)
{
    struct pps_emu_config e;
    struct pps_compute *c = NULL;
    struct pps_err err = {0, ""};
    float in[4] = {0}, out[4] = {0};
    int64_t t0, t1;
    double c0, c1;

    pps_emu_config_init(&e);
    e.tf_ns = 8e6; /* two chunks: 4 ms each */
    e.tb_ns = 6e6;
    e.tw_ns = 2e6;
    CHECK_EQ_INT(pps_emu_compute_new(&e, 2, 2, PPS_PLACE_LOOP, 1, 1, 1, 4, 1024, &c, &err), 0);
    if (!c)
        return;
    CHECK_EQ_INT(c->vstage, 3);
    CHECK(c->last);
    c0 = cpu_ns();
    t0 = now_ns();
    CHECK_EQ_INT(c->ops->forward(c, 0, 0, in, NULL, &err), 0);
    t1 = now_ns();
    c1 = cpu_ns();
    CHECK(t1 - t0 >= 4000000);
    CHECK(t1 - t0 < 4000000 + 50000000); /* a wake-up may be late on a busy machine, not 50 ms */
    CHECK(c1 - c0 < 1e6);                /* slept: at most a millisecond of CPU for 4 ms of op */
    CHECK_EQ_INT(c->ops->act_bytes(c), 1024);
    t0 = now_ns();
    CHECK_EQ_INT(c->ops->backward_b(c, 0, 0, NULL, NULL, &err), 0);
    CHECK(now_ns() - t0 >= 3000000);
    CHECK_EQ_INT(c->ops->pending_w(c), 1);
    CHECK_EQ_INT(c->ops->act_bytes(c), 512);
    CHECK_EQ_INT(c->ops->backward_w(c, 0, 0, &err), 0);
    CHECK_EQ_INT(c->ops->act_bytes(c), 0);
    /* A W without its B is a schedule bug, said as such. */
    CHECK_EQ_INT(c->ops->backward_w(c, 0, 1, &err), PPS_EINVAL);
    CHECK_STR_CONTAINS(err.msg, "before its B");
    (void)out;
    c->ops->free(c);
}

static void test_emu_config_check_names_the_problem(void)
{
    struct pps_emu_config e;
    struct pps_err err = {0, ""};
    double mult[3] = {1, 1, 1};

    pps_emu_config_init(&e);
    CHECK_EQ_INT(pps_emu_config_check(&e, 4, &err), 0);
    e.stage_mult = mult;
    e.n_stage_mult = 3;
    CHECK_EQ_INT(pps_emu_config_check(&e, 4, &err), PPS_EINVAL);
    CHECK_STR_CONTAINS(err.msg, "3 stage multipliers for p=4");
    pps_emu_config_init(&e);
    e.slow_link_a = 2;
    e.slow_link_b = 2;
    CHECK_EQ_INT(pps_emu_config_check(&e, 4, &err), PPS_EINVAL);
    CHECK_STR_CONTAINS(err.msg, "itself");
    pps_emu_config_init(&e);
    e.slow_stage = 4;
    CHECK_EQ_INT(pps_emu_config_check(&e, 4, &err), PPS_EINVAL);
}

static void test_emu_link_delivers_after_latency_and_bandwidth(void)
{
    struct pps_emu_config e;
    struct pps_transport_threads *hub = NULL;
    struct pps_transport *a = NULL, *b = NULL;
    struct pps_err err = {0, ""};
    struct pps_msg_tag tag = {PPS_MSG_ACT, 0, 0, 1};
    float buf[256] = {1.5f}, got[256] = {0};
    int64_t t0, t1;
    int polled_early;

    pps_emu_config_init(&e);
    e.latency_ns = 3e6;
    e.bandwidth_gbps = 0.001; /* 1 Mbit/s: 1 kB takes 8 ms */
    e.slow_link_a = 0;
    e.slow_link_b = 1;
    e.slow_link_ns = 1e6;
    CHECK_NEAR(pps_emu_link_delay_ns(&e, 0, 1, 1000), 3e6 + 8e6 + 1e6, 1);
    CHECK_NEAR(pps_emu_link_delay_ns(&e, 1, 0, 0), 4e6, 1);
    CHECK_NEAR(pps_emu_link_delay_ns(&e, 1, 1, 1000), 0, 0);
    e.bandwidth_gbps = 0;
    CHECK_EQ_INT(pps_transport_threads_new(2, &hub, &err), 0);
    a = pps_transport_threads_endpoint(hub, 0);
    b = pps_transport_threads_endpoint(hub, 1);
    CHECK_EQ_INT(pps_emu_link_new(&e, a, &a, &err), 0);
    CHECK_EQ_INT(pps_emu_link_new(&e, b, &b, &err), 0);
    if (!a || !b)
        return;
    t0 = now_ns();
    CHECK_EQ_INT(a->ops->send(a, 1, &tag, buf, sizeof(buf), &err), 0);
    polled_early = b->ops->poll(b, 0, &tag);
    CHECK_EQ_INT(polled_early, 0); /* there, but not yet arrived: 4 ms on this link */
    CHECK_EQ_INT(b->ops->recv(b, 0, &tag, got, sizeof(got), &err), 0);
    t1 = now_ns();
    CHECK(t1 - t0 >= 4000000);
    CHECK(got[0] == 1.5f);
    /* The wrong size fails and the message is gone, as on any transport. */
    CHECK_EQ_INT(a->ops->send(a, 1, &tag, buf, 8, &err), 0);
    CHECK_EQ_INT(b->ops->recv(b, 0, &tag, got, sizeof(got), &err), PPS_EINVAL);
    CHECK_STR_CONTAINS(err.msg, "is 8 bytes");
    a->ops->free(a);
    b->ops->free(b);
    pps_transport_threads_free(hub);
}

/* The measured bubble of an emulated run against the simulator's prediction from the run's own
 * op costs, read back as `ppscope report` reads it. */
static void check_bubble(int kind, const char *root, double tolerance)
{
    struct pps_run_config c;
    struct pps_run_result res;
    struct pps_run *run = NULL;
    struct pps_report *rep = NULL;
    struct pps_err err = {0, ""};
    char out[256];

    snprintf(out, sizeof(out), "%s/%s", root, pps_sched_kind_name(kind));
    run_config_emu_timed(&c, kind, 4, 8, 3);
    c.out = out;
    CHECK_EQ_INT(pps_run(&c, &res, &err), 0);
    pps_run_result_release(&res);
    if (err.msg[0]) {
        fprintf(stderr, "  %s\n", err.msg);
        return;
    }
    CHECK_EQ_INT(pps_run_load(out, &run, &err), 0);
    if (run)
        CHECK_EQ_INT(pps_analysis_report(run, &rep, &err), 0);
    if (rep) {
        CHECK(rep->complete);
        CHECK_EQ_INT(rep->n_iters, 3);
        CHECK(rep->have_prediction);
        fprintf(stderr, "  %-12s measured %5.1f%%  predicted %5.1f%%\n", pps_sched_kind_name(kind),
                100 * rep->bubble, 100 * rep->pred.bubble);
        CHECK_NEAR(rep->bubble, rep->pred.bubble, tolerance);
        CHECK_STR_CONTAINS(pps_run_meta(run, "backend"), "emu");
        CHECK(pps_run_meta(run, "tcomm_ns") != NULL);
    }
    pps_report_free(rep);
    pps_run_free(run);
}

static void test_emu_bubble_matches_the_simulator(void)
{
    char dir[] = "/tmp/pps-test-emu-XXXXXX", cmd[96];

    if (!mkdtemp(dir)) {
        CHECK(mkdtemp(dir) != NULL);
        return;
    }
    for (int k = 0; k < PPS_SCHED_KIND_COUNT; k++)
        check_bubble(k, dir, 0.05);
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    CHECK_EQ_INT(system(cmd), 0);
}

/* Threads of this process, from /proc/self/task; -1 where there is none. */
static int thread_count(void)
{
    DIR *d = opendir("/proc/self/task");
    struct dirent *e;
    int n = 0;

    if (!d)
        return -1;
    while ((e = readdir(d)))
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

/* A run that fails closes its tracers (no flusher thread, no SQLite handle is left) and its
 * shards keep what was recorded, marked incomplete. */
static void test_failed_run_closes_its_tracers_incomplete(void)
{
    struct pps_run_config c;
    struct pps_run_result res;
    struct pps_run *run = NULL;
    struct pps_err err = {0, ""};
    char dir[] = "/tmp/pps-test-fail-XXXXXX", out[256], cmd[96];
    int before;

    if (thread_count() < 0)
        TEST_SKIP("no /proc/self/task to count threads in");
    CHECK(mkdtemp(dir) != NULL);
    snprintf(out, sizeof(out), "%s/run", dir);
    run_config_threads(&c, PPS_SCHED_1F1B, PPS_BACKEND_EMU, 3, 4, 4);
    c.emu.tf_ns = c.emu.tb_ns = c.emu.tw_ns = 2e5;
    c.fail_stage = 1;
    c.fail_iter = 2;
    c.out = out;
    before = thread_count();
    CHECK(pps_run(&c, &res, &err) < 0);
    pps_run_result_release(&res);
    CHECK_STR_CONTAINS(err.msg, "injected failure");
    CHECK_EQ_INT(thread_count(), before);
    CHECK_EQ_INT(pps_run_load(out, &run, &err), 0);
    CHECK_EQ_INT(run->complete, 0);
    CHECK_EQ_INT(run->n_shards, 3);
    CHECK(run->n_spans > 0);
    pps_run_free(run);
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    CHECK_EQ_INT(system(cmd), 0);
}

static const struct test_case cases[] = {
    TEST(test_failed_run_closes_its_tracers_incomplete),
    TEST(test_emu_ops_take_their_time_asleep),
    TEST(test_emu_config_check_names_the_problem),
    TEST(test_emu_link_delivers_after_latency_and_bandwidth),
    TEST(test_emu_bubble_matches_the_simulator),
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    return test_main(cases, argc, argv);
}
