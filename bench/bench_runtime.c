/*
 * bench_runtime.c - the runtime against the theory, and what tracing costs it.
 *
 * 1. emu backend (EMULATED: every op sleeps its modeled time), p = 4, m = 16, tF = tB = tW =
 *    2 ms, sync optimizer: each schedule's measured bubble, read back from its run as `ppscope
 *    report` reads it, beside the simulator's prediction from the run's own op costs (goal:
 *    within 2 points); ZB-H1's bubble over 1F1B's (goal <= 0.4x).
 * 2. The same, ZB-H2 with the post-validated optimizer: its steady-state bubble, iterations 1..N-1
 *    back to back (goal < 5%).
 * 3. cpu backend, the real model: iteration time with tracing on and off, runs in turns, the best
 *    of each (goal: within 1%).
 * Prints figures and goals, MISSED for a goal missed; fails only when a run fails.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis.h"
#include "run.h"
#include "schedule.h"
#include "storage.h"

#define P     4
#define M     16
#define T_MS  2.0
#define ITERS 4
#define REPS  5

static char root[] = "/tmp/pps-bench-runtime-XXXXXX";

static int run(struct pps_run_config *c, struct pps_run_outcome *o)
{
    struct pps_run_result res;
    struct pps_err err = {0, ""};
    int rc = pps_run(c, &res, &err);

    if (rc)
        fprintf(stderr, "bench_runtime: %s\n", err.msg);
    else
        *o = res.outcomes[0];
    o->params = NULL;
    pps_run_result_release(&res);
    return rc;
}

static void emu_config(struct pps_run_config *c, int kind, const char *out)
{
    pps_run_config_init(c);
    c->kinds[0] = kind;
    c->p = P;
    c->m = M;
    c->iters = ITERS;
    c->backend = PPS_BACKEND_EMU;
    c->transport = PPS_TRANSPORT_THREADS;
    c->emu.tf_ns = c->emu.tb_ns = c->emu.tw_ns = T_MS * 1e6;
    c->out = out;
}

/* The steady state as the simulator defines it (cli/run_summary.c computes it the same way for
 * `ppscope run`): iterations 1..N-1 back to back, 1 - busy / (stages * their time). */
static double steady_bubble(const struct pps_run *run)
{
    int64_t end0 = INT64_MIN, endn = INT64_MIN;
    double busy = 0;

    for (int s = 0; s < run->n_stages; s++)
        for (size_t i = 0; i < run->stages[s].n; i++) {
            const struct pps_span *sp = &run->stages[s].spans[i];
            if (sp->iter == 0 && sp->end_ns > end0)
                end0 = sp->end_ns;
            if (sp->iter == run->n_iters - 1 && sp->end_ns > endn)
                endn = sp->end_ns;
            if (sp->iter >= 1 && pps_span_kind_is_compute(sp->kind))
                busy += (double)(sp->end_ns - sp->start_ns);
        }
    if (run->n_iters < 2 || endn <= end0)
        return NAN;
    return 1 - busy / (run->n_stages * (double)(endn - end0));
}

/* Reads a run back: its measured and predicted bubble, and the steady state. */
static int measure(const char *dir, double *bubble, double *pred, double *steady)
{
    struct pps_run *r = NULL;
    struct pps_report *rep = NULL;
    struct pps_err err = {0, ""};
    int rc = pps_run_load(dir, &r, &err);

    if (!rc)
        rc = pps_analysis_report(r, &rep, &err);
    if (rc) {
        fprintf(stderr, "bench_runtime: %s\n", err.msg);
    } else {
        *bubble = rep->bubble;
        *pred = rep->have_prediction ? rep->pred.bubble : NAN;
        *steady = steady_bubble(r);
    }
    pps_report_free(rep);
    pps_run_free(r);
    return rc;
}

static const char *verdict(int ok)
{
    return ok ? "ok" : "MISSED";
}

static int emu_schedules(void)
{
    double b1f1b = NAN, bzbh1 = NAN, p1f1b = NAN, pzbh1 = NAN;
    char out[128];

    printf("emu backend (EMULATED), p=%d m=%d, tF=tB=tW=%g ms, sync optimizer, %d iterations\n", P,
           M, T_MS, ITERS);
    printf("  %-12s %9s %10s %8s\n", "schedule", "measured", "predicted", "diff");
    for (int k = 0; k < PPS_SCHED_KIND_COUNT; k++) {
        struct pps_run_config c;
        struct pps_run_outcome o;
        double b, pr, st;

        snprintf(out, sizeof(out), "%s/sync-%s", root, pps_sched_kind_name(k));
        emu_config(&c, k, out);
        if (run(&c, &o) || measure(out, &b, &pr, &st))
            return 1;
        printf("  %-12s %8.2f%% %9.2f%% %+6.2f pp   goal within 2 pp   %s\n",
               pps_sched_kind_name(k), 100 * b, 100 * pr, 100 * (b - pr),
               verdict(fabs(b - pr) <= 0.02));
        if (k == PPS_SCHED_1F1B)
            b1f1b = b, p1f1b = pr;
        if (k == PPS_SCHED_ZB_H1)
            bzbh1 = b, pzbh1 = pr;
    }
    printf("  %-40s %6.3fx   goal <= 0.4x   %s   (the simulator: %.3fx)\n",
           "zb-h1 bubble / 1f1b bubble", bzbh1 / b1f1b, verdict(bzbh1 / b1f1b <= 0.4),
           pzbh1 / p1f1b);
    return 0;
}

/* The same ratio with longer ops: what the wake-up latency of each hop (tens of microseconds,
 * machine-dependent) weighs against op times. */
static int emu_ratio_long_ops(double t_ms)
{
    double b[2], pr[2], st;
    char out[128];

    for (int i = 0; i < 2; i++) {
        struct pps_run_config c;
        struct pps_run_outcome o;
        int kind = i ? PPS_SCHED_ZB_H1 : PPS_SCHED_1F1B;

        snprintf(out, sizeof(out), "%s/long-%s", root, pps_sched_kind_name(kind));
        emu_config(&c, kind, out);
        c.iters = 3;
        c.emu.tf_ns = c.emu.tb_ns = c.emu.tw_ns = t_ms * 1e6;
        if (run(&c, &o) || measure(out, &b[i], &pr[i], &st))
            return 1;
    }
    printf("  %-40s %6.3fx   (tF=tB=tW=%g ms: 1f1b %.2f%%, zb-h1 %.2f%%; simulator %.3fx)\n",
           "zb-h1 / 1f1b with longer ops", b[1] / b[0], t_ms, 100 * b[0], 100 * b[1],
           pr[1] / pr[0]);
    return 0;
}

static int emu_postval(void)
{
    struct pps_run_config c;
    struct pps_run_outcome o;
    double b, pr, st;
    char out[128];

    snprintf(out, sizeof(out), "%s/postval-zb-h2", root);
    emu_config(&c, PPS_SCHED_ZB_H2, out);
    c.iters = 8;
    c.optim_mode = PPS_OPTIM_POSTVAL;
    if (run(&c, &o) || measure(out, &b, &pr, &st))
        return 1;
    printf("emu, zb-h2, post-validated optimizer, %d iterations back to back\n", c.iters);
    printf("  %-40s %6.2f%%   goal < 5%%   %s   (mean of windows %.2f%%, simulator 0%%)\n",
           "steady-state bubble (iterations 1..N-1)", 100 * st, verdict(st < 0.05), 100 * b);
    return 0;
}

static int cpu_tracing(void)
{
    double best[2] = {INFINITY, INFINITY};
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    /* One core per stage and one left for the tracer's flushers, as in bench_tracer_pipeline:
     * with none left, the figure measures the cores being shared, not tracing. */
    int p = cpus > 5 ? 4 : cpus > 2 ? (int)cpus - 1 : 1;
    char out[128];
    int n = 0;

    for (int rep = 0; rep < REPS; rep++) {
        for (int on = 0; on < 2; on++) {
            struct pps_run_config c;
            struct pps_run_outcome o;

            pps_run_config_init(&c);
            c.kinds[0] = PPS_SCHED_1F1B;
            c.p = p;
            c.m = 8;
            c.iters = 40;
            c.transport = PPS_TRANSPORT_THREADS;
            c.trace = on;
            snprintf(out, sizeof(out), "%s/cpu-%d", root, n++);
            c.out = on ? out : NULL;
            if (run(&c, &o))
                return 1;
            if (o.wall_ns / c.iters < best[on])
                best[on] = o.wall_ns / c.iters;
        }
    }
    printf("cpu backend, the real model (defaults), 1f1b p=%d m=8, 40 iterations, best of %d "
           "(%ld cores)\n",
           p, REPS, cpus);
    printf("  tracing off %8.3f ms per iteration\n", best[0] / 1e6);
    printf("  tracing on  %8.3f ms per iteration\n", best[1] / 1e6);
    printf("  %-40s %6.4fx   goal < 1.01x   %s\n", "on / off", best[1] / best[0],
           verdict(best[1] / best[0] < 1.01));
    return 0;
}

int main(void)
{
    char cmd[128];
    int rc;

    if (!mkdtemp(root)) {
        perror("bench_runtime: mkdtemp");
        return 1;
    }
    rc = emu_schedules();
    if (!rc)
        rc = emu_ratio_long_ops(8.0);
    if (!rc)
        rc = emu_postval();
    if (!rc)
        rc = cpu_tracing();
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
    if (system(cmd) != 0)
        fprintf(stderr, "bench_runtime: could not remove %s\n", root);
    return rc;
}
