/*
 * test_diagnosis.c - the diagnosis against faults of known size: real runs (the executor, the
 * transports, the tracer, the store and the analysis; ops emulated where timing must be known)
 * with one fault each, and the flags must name that fault, at its size, and nothing else.
 *
 *   clean          every schedule on emu: no flag, and the measured bubble within 2 pp of the
 *                  prediction (or a verdict that says why not)
 *   slow stage     --emu-slow-stage 2:2: one imbalance flag, stage 2, 2x within 10%
 *   slow link      --emu-slow-link 1-2:3000: the links 1->2 and 2->1 and no other, 3 ms of
 *                  extra latency within 20%, and no stall
 *   contention     cpu, four stage threads pinned to one core: contention, not a stall; a
 *                  slow link on a core a spinning thread shares: the link still named
 *   failed run     the iteration it stopped in left out, the whole ones as predicted
 *
 * Timings want the machine to themselves (RUN_SERIAL in tests/runtime.cmake).
 */
#define _GNU_SOURCE /* sched_setaffinity */
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "analysis.h"
#include "run.h"
#include "run_fixture.h"
#include "schedule.h"
#include "storage.h"
#include "test.h"

static char root[] = "/tmp/pps-test-diag-XXXXXX";
static int n_runs;

struct diag {
    struct pps_run *run;
    struct pps_report *rep;
    struct pps_flag_list flags;
};

static void emu_config(struct pps_run_config *c, int kind)
{
    run_config_threads(c, kind, PPS_BACKEND_EMU, 4, 8, 6);
}

/* Runs c into a fresh directory and reads it back as `ppscope report` does. */
static void diagnose(struct pps_run_config *c, struct diag *d)
{
    struct pps_run_result res;
    struct pps_err err = {0, ""};
    char out[256];

    memset(d, 0, sizeof(*d));
    if (n_runs++ == 0)
        CHECK(mkdtemp(root) != NULL);
    snprintf(out, sizeof(out), "%s/run-%d", root, n_runs);
    c->out = out;
    CHECK_EQ_INT(pps_run(c, &res, &err), 0);
    pps_run_result_release(&res);
    CHECK_EQ_INT(pps_run_load(out, &d->run, &err), 0);
    CHECK_EQ_INT(pps_analysis_report(d->run, &d->rep, &err), 0);
    CHECK_EQ_INT(pps_analysis_flags(d->run, d->rep, &d->flags, &err), 0);
    for (size_t i = 0; i < d->flags.n; i++)
        fprintf(stderr, "  flag %s: %s\n", pps_flag_kind_name(d->flags.items[i].kind),
                d->flags.items[i].text);
}

static void release(struct diag *d)
{
    pps_flag_list_release(&d->flags);
    pps_report_free(d->rep);
    pps_run_free(d->run);
}

static int count_kind(const struct diag *d, int kind)
{
    int n = 0;

    for (size_t i = 0; i < d->flags.n; i++)
        n += d->flags.items[i].kind == kind;
    return n;
}

/* Whether a clean run's only flags say the shared machine was busy: the bubble's, on a run
 * whose own op times varied (the emu's sleeps overshoot then), or the host's contention (another
 * process took the cores, and the report said so, rightly): what a second run may clear. */
static int busy_machine_only(const struct diag *d)
{
    int bubble = count_kind(d, PPS_FLAG_BUBBLE_ABOVE), host = count_kind(d, PPS_FLAG_CONTENTION);

    if (d->flags.n == 0 || bubble + host != (int)d->flags.n)
        return 0;
    return host > 0 || (!isnan(d->rep->op_cv) && d->rep->op_cv >= PPS_OP_CV_NOTE);
}

static void test_clean_runs_have_no_flag_and_match_the_prediction(void)
{
    for (int k = 0; k < PPS_SCHED_KIND_COUNT; k++) {
        struct pps_run_config c;
        struct diag d;
        char why[512];
        int v;

        run_config_emu_timed(&c, k, 4, 8, 6);
        diagnose(&c, &d);
        /* Up to two more tries where the machine, not ppscope, made the run noisy (and the
         * report said so); the last run is held to everything below. */
        for (int again = 0; again < 2 && busy_machine_only(&d); again++) {
            fprintf(stderr,
                    "  %-12s a busy machine (op times varied %.0f%%, %d contention flag): "
                    "once more\n",
                    pps_sched_kind_name(k), 100 * d.rep->op_cv,
                    count_kind(&d, PPS_FLAG_CONTENTION));
            release(&d);
            diagnose(&c, &d);
        }
        v = pps_report_verdict(d.rep, why, sizeof(why));
        fprintf(stderr, "  %-12s measured %5.1f%%  predicted %5.1f%%  %s\n", pps_sched_kind_name(k),
                100 * d.rep->judged_measured, 100 * d.rep->judged_predicted, why);
        /* Within the verdict's tolerance: 2 pp, or the run's own spread where its iterations
         * vary more (a busy shared machine; the verdict then says how wide it is). Where not,
         * the verdict must say so (and why), never "as predicted". */
        CHECK(d.rep->tolerance >= 0.02);
        if (d.rep->tolerance > 2 * 0.02) /* wide: the verdict says it is a weak test, and why */
            CHECK(strstr(why, "a loose test") != NULL);
        if (fabs(d.rep->judged_measured - d.rep->judged_predicted) > d.rep->tolerance)
            CHECK(v == PPS_VERDICT_ABOVE || v == PPS_VERDICT_BELOW);
        else
            CHECK_EQ_INT(v, PPS_VERDICT_AS_PREDICTED);
        CHECK_EQ_INT(d.flags.n, 0);
        /* Every span of a run ppscope made lies in some iteration's window. */
        CHECK_EQ_INT(d.rep->n_outside, 0);
        CHECK_EQ_INT(d.rep->n_present, 4);
        /* Chunks in a loop add the last stage's link back to the first. */
        int looped = pps_sched_kind_v(k, 0) > 1 && pps_sched_kind_placement(k) == PPS_PLACE_LOOP;
        CHECK(d.rep->n_links == 6 || (looped && d.rep->n_links >= 6));
        release(&d);
    }
}

static void test_slow_stage_is_named_at_its_factor(void)
{
    struct pps_run_config c;
    struct diag d;

    emu_config(&c, PPS_SCHED_1F1B);
    c.emu.slow_stage = 2;
    c.emu.slow_factor = 2;
    diagnose(&c, &d);
    CHECK_EQ_INT(d.flags.n, 1);
    CHECK_EQ_INT(d.flags.items[0].kind, PPS_FLAG_IMBALANCE);
    CHECK_EQ_INT(d.flags.items[0].stage, 2);
    CHECK_NEAR(d.flags.items[0].value, 2.0, 0.2);
    /* emu has no model: no claim about an embedding or an LM head. */
    CHECK(!strstr(d.flags.items[0].text, "embedding") && !strstr(d.flags.items[0].text, "head"));
    CHECK_EQ_INT(pps_report_verdict(d.rep, NULL, 0), PPS_VERDICT_AS_PREDICTED);
    release(&d);
}

static void test_slow_link_is_named_with_its_extra_latency(void)
{
    struct pps_run_config c;
    struct diag d;
    char why[512];
    int seen[2] = {0, 0};

    emu_config(&c, PPS_SCHED_1F1B);
    c.emu.slow_link_a = 1;
    c.emu.slow_link_b = 2;
    c.emu.slow_link_ns = 3e6;
    diagnose(&c, &d);
    CHECK_EQ_INT(d.flags.n, 2);
    for (size_t i = 0; i < d.flags.n; i++) {
        const struct pps_flag *f = &d.flags.items[i];

        CHECK_EQ_INT(f->kind, PPS_FLAG_SLOW_LINK);
        CHECK((f->stage == 1 && f->peer == 2) || (f->stage == 2 && f->peer == 1));
        seen[f->stage == 2] = 1;
        CHECK_NEAR(f->value, 3e6, 0.2 * 3e6);
    }
    CHECK(seen[0] && seen[1]);
    CHECK_EQ_INT(pps_report_verdict(d.rep, why, sizeof(why)), PPS_VERDICT_ABOVE);
    CHECK_STR_CONTAINS(why, "communication: links 1->2, 2->1");
    /* The links as measured account for the measured bubble. */
    CHECK_NEAR(d.rep->pred_links, d.rep->judged_measured, d.rep->tolerance);
    release(&d);
}

static void test_contention_is_named_not_a_stall(void)
{
    struct pps_run_config c;
    struct diag d;
    cpu_set_t one, all;

    if (sched_getaffinity(0, sizeof(all), &all) != 0)
        TEST_SKIP("cannot read this process's CPU affinity");
    CPU_ZERO(&one);
    for (int cpu = 0; cpu < CPU_SETSIZE; cpu++)
        if (CPU_ISSET(cpu, &all)) {
            CPU_SET(cpu, &one);
            break;
        }
    /* Stage threads inherit the affinity of the thread that starts them. */
    CHECK_EQ_INT(sched_setaffinity(0, sizeof(one), &one), 0);
    run_config_threads(&c, PPS_SCHED_1F1B, PPS_BACKEND_CPU, 4, 8, 8);
    diagnose(&c, &d);
    CHECK_EQ_INT(sched_setaffinity(0, sizeof(all), &all), 0);
    CHECK_EQ_INT(count_kind(&d, PPS_FLAG_CONTENTION), 1);
    CHECK_EQ_INT(d.rep->host.cpus, 1);
    CHECK_EQ_INT(d.rep->host.stage_threads, 4);
    /* Four threads on one core: each waits for it most of the time it wants it. */
    CHECK(d.rep->host.contention > 0.3);
    CHECK_EQ_INT(count_kind(&d, PPS_FLAG_COMM_STALL), 0);
    CHECK_EQ_INT(count_kind(&d, PPS_FLAG_SLOW_LINK), 0);
    CHECK_EQ_INT(count_kind(&d, PPS_FLAG_BUBBLE_ABOVE), 0);
    release(&d);
}

static volatile int hog_stop;

static void *hog(void *arg)
{
    volatile unsigned long n = 0;

    (void)arg;
    while (!hog_stop)
        n++;
    return NULL;
}

/* Pins this thread (and the threads it starts) to its first usable core: 0, or -1. */
static int pin_to_one_core(cpu_set_t *all)
{
    cpu_set_t one;

    if (sched_getaffinity(0, sizeof(*all), all) != 0)
        return -1;
    CPU_ZERO(&one);
    for (int cpu = 0; cpu < CPU_SETSIZE; cpu++)
        if (CPU_ISSET(cpu, all)) {
            CPU_SET(cpu, &one);
            break;
        }
    return sched_setaffinity(0, sizeof(one), &one);
}

/* A slow link on a busy host: a thread spinning on the stages' one core, at a higher priority
 * than theirs, makes them wait for it, and the link is still named, by its fastest messages
 * (which no wait for a core inflates), beside the contention. In a child process: the lowered
 * priority cannot be raised again without privileges. */
static void test_contention_does_not_hide_a_slow_link(void)
{
    struct pps_run_config c;
    struct diag d;
    char out[256];
    int seen[2] = {0, 0}, status = 0;
    pid_t pid;

    if (n_runs++ == 0)
        CHECK(mkdtemp(root) != NULL);
    snprintf(out, sizeof(out), "%s/run-%d", root, n_runs);
    emu_config(&c, PPS_SCHED_1F1B);
    c.emu.slow_link_a = 1;
    c.emu.slow_link_b = 2;
    c.emu.slow_link_ns = 3e6;
    c.out = out;
    fflush(NULL);
    pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        struct pps_run_result res;
        struct pps_err err = {0, ""};
        cpu_set_t all;
        pthread_t th;
        int rc;

        if (pin_to_one_core(&all) != 0 || pthread_create(&th, NULL, hog, NULL) != 0 ||
            setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), 19) != 0)
            _exit(3);
        rc = pps_run(&c, &res, &err);
        pps_run_result_release(&res);
        _exit(rc == 0 ? 0 : 4);
    }
    CHECK_EQ_INT(waitpid(pid, &status, 0), pid);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    memset(&d, 0, sizeof(d));
    CHECK_EQ_INT(pps_run_load(out, &d.run, NULL), 0);
    CHECK_EQ_INT(pps_analysis_report(d.run, &d.rep, NULL), 0);
    CHECK_EQ_INT(pps_analysis_flags(d.run, d.rep, &d.flags, NULL), 0);
    for (size_t i = 0; i < d.flags.n; i++)
        fprintf(stderr, "  flag %s: %s\n", pps_flag_kind_name(d.flags.items[i].kind),
                d.flags.items[i].text);
    /* The host was contended, as arranged... */
    CHECK(d.rep->host.contention >= PPS_CONTENTION_MIN);
    CHECK_EQ_INT(count_kind(&d, PPS_FLAG_CONTENTION), 1);
    /* ...and the slow link is named all the same, both ways, at its size. */
    for (size_t i = 0; i < d.flags.n; i++) {
        const struct pps_flag *f = &d.flags.items[i];

        if (f->kind != PPS_FLAG_SLOW_LINK)
            continue;
        CHECK((f->stage == 1 && f->peer == 2) || (f->stage == 2 && f->peer == 1));
        seen[f->stage == 2] = 1;
        CHECK_NEAR(f->value, 3e6, 0.2 * 3e6);
    }
    CHECK(seen[0] && seen[1]);
    CHECK_EQ_INT(count_kind(&d, PPS_FLAG_SLOW_LINK), 2);
    CHECK_EQ_INT(count_kind(&d, PPS_FLAG_COMM_STALL), 0);
    release(&d);
}

/* A run that fails in its fourth iteration: that iteration is partial and left out, and the
 * figures are the three whole ones', as predicted. */
static void test_a_failed_run_is_judged_by_its_whole_iterations(void)
{
    struct pps_run_config c;
    struct pps_run_result res;
    struct pps_run *run = NULL;
    struct pps_report *rep = NULL;
    struct pps_err err = {0, ""};
    char out[256];

    if (n_runs++ == 0)
        CHECK(mkdtemp(root) != NULL);
    snprintf(out, sizeof(out), "%s/run-%d", root, n_runs);
    emu_config(&c, PPS_SCHED_1F1B);
    c.fail_stage = 2;
    c.fail_iter = 3;
    c.out = out;
    CHECK(pps_run(&c, &res, &err) < 0);
    pps_run_result_release(&res);
    CHECK_EQ_INT(pps_run_load(out, &run, &err), 0);
    CHECK_EQ_INT(pps_analysis_report(run, &rep, &err), 0);
    CHECK_EQ_INT(rep->complete, 0);
    CHECK_EQ_INT(rep->n_iters, 4);
    CHECK_EQ_INT(rep->n_full, 3);
    CHECK(rep->iters[3].partial);
    /* The stub the run stopped in (a millisecond, mostly idle) is in no figure: the bubble is
     * the three whole iterations', and the iteration time their period, near the prediction's
     * (20%: a loaded machine stretches an emulated op's wake-ups, not its stub's absence). */
    CHECK_NEAR(rep->bubble,
               (rep->iters[0].bubble + rep->iters[1].bubble + rep->iters[2].bubble) / 3, 1e-12);
    CHECK_NEAR(rep->iter_ns, rep->pred_iter_ns, 0.2 * rep->pred_iter_ns);
    pps_report_free(rep);
    pps_run_free(run);
}

static const struct test_case cases[] = {
    TEST(test_clean_runs_have_no_flag_and_match_the_prediction),
    TEST(test_slow_stage_is_named_at_its_factor),
    TEST(test_slow_link_is_named_with_its_extra_latency),
    TEST(test_contention_is_named_not_a_stall),
    TEST(test_contention_does_not_hide_a_slow_link),
    TEST(test_a_failed_run_is_judged_by_its_whole_iterations),
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    int rc = test_main(cases, argc, argv);
    char cmd[96];

    if (n_runs) {
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
        if (system(cmd) != 0)
            fprintf(stderr, "could not remove %s\n", root);
    }
    return rc;
}
