/*
 * test_executor.c - the runtime end to end on the cpu backend (pps_run over the threads
 * transport): post-validation leaves the parameters bitwise where sync mode does, with clipping
 * and with an injected inf; the loss falls over a few hundred iterations on the built-in text,
 * read back from the run's metrics; gradients of every schedule match the reference; a W budget
 * bounds the recorded pending W's and leaves the parameters bitwise where the schedule's own order
 * does, and is refused on a list whose W's leave their B's order.
 */
#include <math.h>
#include <stdlib.h>

#include "emu.h"
#include "executor.h"
#include "run.h"
#include "run_fixture.h"
#include "schedule.h"
#include "storage.h"
#include "test.h"

/* A model small enough for many runs: 4 blocks of width 16, 2 sequences of 8 bytes. */
static void small_config(struct pps_run_config *c, int kind, int p, int m)
{
    pps_run_config_init(c);
    c->kinds[0] = kind;
    c->n_kinds = 1;
    c->p = p;
    c->m = m;
    c->model.layers = 4;
    c->model.hidden = 16;
    c->model.seq_len = 8;
    c->model.micro_batch = 2;
    c->model.seed = 7;
    c->trace = 0;
    c->progress = 0;
    c->transport = PPS_TRANSPORT_THREADS;
}

/* Runs c; the parameters at the end into *params (caller frees). */
static int run_params(struct pps_run_config *c, float **params, size_t *n,
                      struct pps_run_outcome *out)
{
    struct pps_run_result res;
    struct pps_err err = {0, ""};
    int rc;

    c->keep_params = 1;
    rc = pps_run(c, &res, &err);
    if (rc) {
        fprintf(stderr, "  pps_run: %s\n", err.msg);
        pps_run_result_release(&res);
        return rc;
    }
    *params = res.outcomes[0].params;
    *n = res.outcomes[0].n_params;
    *out = res.outcomes[0];
    res.outcomes[0].params = NULL;
    out->params = NULL;
    pps_run_result_release(&res);
    return 0;
}

/* Sync and post-validation from the same seed: the same parameters, to the bit. */
static void check_postval_equals_sync(int kind, int p, int m, double clip, int inject,
                                      int expect_rollbacks)
{
    struct pps_run_config c;
    struct pps_run_outcome os, op;
    float *ps = NULL, *pp = NULL;
    size_t ns = 0, np = 0;

    small_config(&c, kind, p, m);
    c.iters = 6;
    c.clip = clip;
    c.inject_nonfinite_iter = inject;
    c.optim_mode = PPS_OPTIM_SYNC;
    CHECK_EQ_INT(run_params(&c, &ps, &ns, &os), 0);
    c.optim_mode = PPS_OPTIM_POSTVAL;
    CHECK_EQ_INT(run_params(&c, &pp, &np, &op), 0);
    CHECK(ns > 0);
    CHECK_EQ_INT(np, ns);
    if (ps && pp && np == ns) {
        size_t diff = ns;
        for (size_t i = 0; i < ns && diff == ns; i++)
            if (memcmp(&ps[i], &pp[i], sizeof(float)) != 0)
                diff = i;
        if (diff != ns)
            fprintf(stderr,
                    "  %s p=%d m=%d clip %g inject %d: parameter %zu differs: %.9g vs %.9g\n",
                    pps_sched_kind_name(kind), p, m, clip, inject, diff, (double)ps[diff],
                    (double)pp[diff]);
        CHECK_EQ_INT(diff, ns);
    }
    CHECK_EQ_INT(op.steps, os.steps);
    CHECK_EQ_INT(op.skips, os.skips);
    CHECK_EQ_INT(op.clips, os.clips);
    CHECK_EQ_INT(os.rollbacks, 0);
    if (expect_rollbacks)
        CHECK(op.rollbacks >= 1);
    else
        CHECK_EQ_INT(op.rollbacks, 0);
    CHECK(memcmp(&os.loss, &op.loss, sizeof(double)) == 0);
    free(ps);
    free(pp);
}

static void test_postval_without_failures_steps_like_sync(void)
{
    check_postval_equals_sync(PPS_SCHED_ZB_H2, 4, 8, 0, -1, 0);
}

static void test_postval_rolls_back_an_injected_inf_exactly(void)
{
    struct pps_run_config c;
    struct pps_run_outcome o;
    float *ps = NULL;
    size_t n = 0;

    check_postval_equals_sync(PPS_SCHED_ZB_H2, 4, 8, 0, 2, 1);
    check_postval_equals_sync(PPS_SCHED_1F1B, 2, 4, 0, 5, 1); /* the last iteration */

    /* The skipped step does not count: 6 iterations, 5 steps. */
    small_config(&c, PPS_SCHED_ZB_H1, 2, 4);
    c.iters = 6;
    c.clip = 0;
    c.inject_nonfinite_iter = 0;
    c.optim_mode = PPS_OPTIM_POSTVAL;
    CHECK_EQ_INT(run_params(&c, &ps, &n, &o), 0);
    CHECK_EQ_INT(o.steps, 5);
    CHECK_EQ_INT(o.skips, 1);
    for (size_t i = 0; i < n; i++)
        if (!isfinite(ps[i])) {
            CHECK(isfinite(ps[i])); /* a rollback left a parameter not finite */
            break;
        }
    free(ps);
}

static void test_postval_redoes_clipped_steps_exactly(void)
{
    /* A clip this small clips every step: every optimistic step is undone and redone. */
    check_postval_equals_sync(PPS_SCHED_ZB_H2, 4, 8, 0.05, -1, 1);
    check_postval_equals_sync(PPS_SCHED_INTERLEAVED, 2, 4, 0.05, 3, 1);
    check_postval_equals_sync(PPS_SCHED_GPIPE, 3, 3, 0.05, 1, 1);
}

static void test_check_grads_every_schedule(void)
{
    static const int kinds[] = {PPS_SCHED_GPIPE, PPS_SCHED_1F1B, PPS_SCHED_INTERLEAVED,
                                PPS_SCHED_ZB_H1, PPS_SCHED_ZB_H2, PPS_SCHED_ZB_V,
                                PPS_SCHED_DUALPIPEV, PPS_SCHED_INTERLEAVED_ZB, PPS_SCHED_ZB_AUTO};
    struct pps_run_config c;

    for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
        struct pps_run_result res;
        struct pps_err err = {0, ""};

        small_config(&c, kinds[k], 3, 6);
        c.check_grads = 1;
        int two = pps_run_config_v(&c, kinds[k]) == 2; /* interleaved, zb-v: 6 virtual stages */
        c.model.layers = two ? 7 : 5; /* uneven, an empty chunk */
        c.partition = two ? "2,0,1,1,2,1" : "3,0,2";
        CHECK_EQ_INT(pps_run(&c, &res, &err), 0);
        if (err.msg[0])
            fprintf(stderr, "  %s: %s\n", pps_sched_kind_name(kinds[k]), err.msg);
        CHECK_EQ_INT(res.n, 1);
        CHECK(res.outcomes[0].grads_checked);
        CHECK(res.outcomes[0].grads_equal);
        CHECK(res.outcomes[0].loss_equal);
        CHECK_EQ_INT(res.outcomes[0].first_diff, -1);
        pps_run_result_release(&res);
    }
}

/* zb-auto under other limits runs other orders (one microbatch at a time, fewer than p, past
 * 2p-1): each gives the reference's gradients bit for bit. */
static void test_check_grads_zb_auto_limits(void)
{
    const int limits[] = {1, 2, 6};

    for (size_t k = 0; k < sizeof(limits) / sizeof(limits[0]); k++) {
        struct pps_run_config c;
        struct pps_run_result res;
        struct pps_err err = {0, ""};

        small_config(&c, PPS_SCHED_ZB_AUTO, 3, 6);
        c.check_grads = 1;
        c.mem_limit = limits[k];
        CHECK_EQ_INT(pps_run(&c, &res, &err), 0);
        CHECK_EQ_INT(res.n, 1);
        CHECK(res.outcomes[0].grads_checked);
        CHECK(res.outcomes[0].grads_equal);
        CHECK(res.outcomes[0].loss_equal);
        pps_run_result_release(&res);
    }
}

/* The loss as the run recorded it: the last stage's metrics, by iteration. */
static int read_losses(const char *dir, int p, double *loss, int n)
{
    struct pps_run *run = NULL;
    struct pps_err err = {0, ""};
    int got = 0;

    if (pps_run_load(dir, &run, &err) < 0) {
        fprintf(stderr, "  %s\n", err.msg);
        return 0;
    }
    for (size_t i = 0; i < run->n_metrics; i++) {
        const struct pps_metric *mt = &run->metrics[i];
        if (mt->stage == p - 1 && mt->iter >= 0 && mt->iter < n) {
            loss[mt->iter] = mt->loss;
            got++;
        }
    }
    pps_run_free(run);
    return got;
}

static void test_loss_falls_through_the_pipeline(void)
{
    enum { ITERS = 200, WINDOW = 20 };
    static double loss[ITERS];
    struct pps_run_config c;
    struct pps_run_result res;
    struct pps_err err = {0, ""};
    char dir[] = "/tmp/pps-test-executor-XXXXXX", out[64];
    double first = 0, last = 0;

    CHECK(mkdtemp(dir) != NULL);
    if (!dir[0] || dir[strlen(dir) - 1] == 'X')
        return;
    snprintf(out, sizeof(out), "%s/run", dir);
    /* The model's defaults, as `ppscope run` trains without flags, post-validated. */
    run_config_threads(&c, PPS_SCHED_ZB_H1, PPS_BACKEND_CPU, 2, 4, ITERS);
    c.optim_mode = PPS_OPTIM_POSTVAL;
    c.out = out;
    CHECK_EQ_INT(pps_run(&c, &res, &err), 0);
    if (err.msg[0])
        fprintf(stderr, "  %s\n", err.msg);
    pps_run_result_release(&res);
    CHECK_EQ_INT(read_losses(out, c.p, loss, ITERS), ITERS);
    for (int i = 0; i < WINDOW; i++) {
        first += loss[i] / WINDOW;
        last += loss[ITERS - WINDOW + i] / WINDOW;
    }
    fprintf(stderr, "  mean loss: first %d iterations %.4f, last %d %.4f (ln 256 = %.4f)\n", WINDOW,
            first, WINDOW, last, log(256.0));
    CHECK(fabs(loss[0] - log(256.0)) < 0.5);
    CHECK(last < 0.85 * first);
    {
        char cmd[128];
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        CHECK_EQ_INT(system(cmd), 0);
    }
}

/* The largest peak pending W's the run recorded, over stages and iterations; -1 when it has not
 * p * iters metrics rows. */
static long read_peak_pending_w(const char *dir, int p, int iters)
{
    struct pps_run *run = NULL;
    struct pps_err err = {0, ""};
    long peak = 0, rows = 0;

    if (pps_run_load(dir, &run, &err) < 0) {
        fprintf(stderr, "  %s\n", err.msg);
        return -1;
    }
    for (size_t i = 0; i < run->n_metrics; i++) {
        const struct pps_metric *mt = &run->metrics[i];
        if (mt->stage < 0 || mt->iter < 0)
            continue; /* not a stage's row */
        rows++;
        if (mt->pending_w > peak)
            peak = (long)mt->pending_w;
    }
    pps_run_free(run);
    return rows == (long)p * iters ? peak : -1;
}

/* Runs c into dir/name, traced; the parameters into *params, the peak pending W into *peak. */
static int run_traced(struct pps_run_config *c, const char *dir, const char *name, float **params,
                      size_t *n, long *peak)
{
    struct pps_run_outcome o;
    char out[128];
    int rc;

    snprintf(out, sizeof(out), "%s/%s", dir, name);
    c->trace = 1;
    c->out = out;
    rc = run_params(c, params, n, &o);
    *peak = rc ? -1 : read_peak_pending_w(out, c->p, c->iters);
    return rc;
}

static void check_w_budget(int kind, int p, int m, int optim_mode, int budget)
{
    struct pps_run_config c;
    char dir[] = "/tmp/pps-test-executor-XXXXXX", cmd[128];
    float *pf = NULL, *pb = NULL;
    size_t nf = 0, nb = 0;
    long peak_free = -1, peak_bound = -1;

    CHECK(mkdtemp(dir) != NULL);
    if (dir[strlen(dir) - 1] == 'X')
        return;
    small_config(&c, kind, p, m);
    c.iters = 4;
    c.clip = 0.05; /* clips every step: post-validation rolls back and reruns passes too */
    c.optim_mode = optim_mode;
    CHECK_EQ_INT(run_traced(&c, dir, "free", &pf, &nf, &peak_free), 0);
    c.w_budget = budget;
    CHECK_EQ_INT(run_traced(&c, dir, "bound", &pb, &nb, &peak_bound), 0);
    fprintf(stderr, "  %s p=%d m=%d %s: peak pending W %ld, %ld with --w-budget %d\n",
            pps_sched_kind_name(kind), p, m, pps_optim_mode_name(optim_mode), peak_free, peak_bound,
            budget);
    /* The schedule alone goes over the budget, so the bound below is the budget's doing. */
    CHECK(peak_free > budget);
    CHECK(peak_bound >= 1 && peak_bound <= budget);
    CHECK(nf > 0);
    CHECK_EQ_INT(nb, nf);
    if (pf && pb && nb == nf)
        CHECK(memcmp(pf, pb, nf * sizeof(float)) == 0);
    free(pf);
    free(pb);
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    CHECK_EQ_INT(system(cmd), 0);
}

static void test_w_budget_bounds_pending_w_with_the_same_parameters(void)
{
    check_w_budget(PPS_SCHED_ZB_H2, 4, 8, PPS_OPTIM_SYNC, 2);
    check_w_budget(PPS_SCHED_ZB_H2, 4, 8, PPS_OPTIM_POSTVAL, 1);
    check_w_budget(PPS_SCHED_ZB_H1, 3, 6, PPS_OPTIM_POSTVAL, 1);
}

/* The bytes budget becomes a count per stage: the last stage's pending W holds the most. */
static void test_act_budget_turns_into_a_count_per_stage(void)
{
    struct pps_run_config c;
    struct pps_err err = {0, ""};
    size_t last_b = 0;

    small_config(&c, PPS_SCHED_ZB_H2, 4, 8);
    pps_model_act_bytes(&c.model, 1, 0, 1, NULL, &last_b);
    CHECK(last_b > 0);
    /* Room for one and a half of the last stage's pending W's: one there. */
    c.act_budget_mib = 1.5 * (double)last_b / 1048576.0;
    CHECK_EQ_INT(pps_run_config_check(&c, &err), 0);
    c.act_budget_mib = 0.5 * (double)last_b / 1048576.0;
    CHECK_EQ_INT(pps_run_config_check(&c, &err), PPS_EINVAL);
    CHECK(strstr(err.msg, "holds no pending W on stage 3 of zb-h2") != NULL);
    c.act_budget_mib = 0;
    c.w_budget = -1;
    CHECK_EQ_INT(pps_run_config_check(&c, &err), PPS_EINVAL);
}

/* A hand-made list whose W's come out of their B's order: running the oldest pending W early
 * would add the gradients up in another order, so a budget refuses it; without one it runs. */
static void test_w_budget_refuses_w_out_of_b_order(void)
{
    static const struct pps_action list[] = {
        {PPS_OP_F, 0, 0}, {PPS_OP_F, 0, 1}, {PPS_OP_B, 0, 0},
        {PPS_OP_B, 0, 1}, {PPS_OP_W, 0, 1}, {PPS_OP_W, 0, 0},
    };
    const size_t n = sizeof(list) / sizeof(list[0]);
    struct pps_schedule s = PPS_SCHEDULE_INIT;
    struct pps_emu_config ec;
    struct pps_transport_threads *hub = NULL;
    struct pps_compute *chunk = NULL;
    struct pps_exec_config cfg;
    struct pps_exec_result res;
    struct pps_err err = {0, ""};

    CHECK_EQ_INT(pps_schedule_alloc(&s, 1, 2, 1, n), 0);
    memcpy(s.actions, list, sizeof(list));
    s.start[0] = 0;
    s.start[1] = n;
    CHECK_EQ_INT(pps_schedule_validate(&s, NULL, &err), 0);
    pps_emu_config_init(&ec);
    ec.tf_ns = ec.tb_ns = ec.tw_ns = 0;
    CHECK_EQ_INT(pps_emu_compute_new(&ec, 1, 1, PPS_PLACE_LOOP, 0, 0, 1, 4, 64, &chunk, &err), 0);
    CHECK_EQ_INT(pps_transport_threads_new(1, &hub, &err), 0);
    if (!chunk || !hub)
        goto out;
    pps_exec_config_init(&cfg);
    cfg.sched = &s;
    cfg.stage = 0;
    cfg.t = pps_transport_threads_endpoint(hub, 0);
    cfg.chunks = &chunk;
    cfg.iters = 1;
    cfg.no_step = 1;
    CHECK_EQ_INT(pps_executor_run(&cfg, &res, &err), 0);
    cfg.w_budget = 1;
    CHECK_EQ_INT(pps_executor_run(&cfg, &res, &err), PPS_ESCHEDULE);
    CHECK(strstr(err.msg, "out of its B's order") != NULL);
out:
    if (chunk)
        chunk->ops->free(chunk);
    if (hub) {
        struct pps_transport *t = pps_transport_threads_endpoint(hub, 0);
        t->ops->free(t);
    }
    pps_transport_threads_free(hub);
    pps_schedule_release(&s);
}

static const struct test_case cases[] = {
    TEST(test_postval_without_failures_steps_like_sync),
    TEST(test_postval_rolls_back_an_injected_inf_exactly),
    TEST(test_postval_redoes_clipped_steps_exactly),
    TEST(test_check_grads_every_schedule),
    TEST(test_check_grads_zb_auto_limits),
    TEST(test_loss_falls_through_the_pipeline),
    TEST(test_w_budget_bounds_pending_w_with_the_same_parameters),
    TEST(test_act_budget_turns_into_a_count_per_stage),
    TEST(test_w_budget_refuses_w_out_of_b_order),
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    return test_main(cases, argc, argv);
}
