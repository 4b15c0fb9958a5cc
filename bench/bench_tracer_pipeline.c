/*
 * bench_tracer_pipeline.c - what tracing costs a pipeline run: the same run with tracing on and
 * off, measured in turns in one process (goal: on/off within 1%).
 *
 * SYNTHETIC: this is a spin-wait pipeline, not ppscope's runtime (the emulated backend comes in a
 * later issue). Each stage is a thread that walks its action list from schedule/ (1F1B, m = 16);
 * every op spins for OP_US microseconds and waits for its dependencies (F after the previous
 * stage's F, B after the next stage's B) through atomic flags, yielding while it waits; stages
 * meet at a barrier between iterations, as at an optimizer step. With tracing on, each op is a
 * begin/end span, each wait that actually waited is a WAIT span, and stage 0 marks iterations.
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ppscope/trace.h"
#include "schedule.h"

#define M     16
#define OP_US 20
#define ITERS 300
#define WARM  5 /* iterations left out of the figure: threads registering, caches warming */
#define REPS  7
#define MAX_P 4

static int p; /* stages: 4, or fewer on a machine with fewer cores (one core per stage) */
static struct pps_schedule sched = PPS_SCHEDULE_INIT;
static _Atomic int fdone[MAX_P][M], bdone[MAX_P][M]; /* iteration + 1 once done */
static pthread_barrier_t iter_bar;
static struct pps_tracer *tracer; /* NULL: tracing off */
static int64_t warm_ns;           /* when iteration WARM began */

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void spin_us(int us)
{
    int64_t until = now_ns() + (int64_t)us * 1000;
    while (now_ns() < until)
        ;
}

/* Waits until *flag reaches want; a WAIT span (peer stage) if it had to wait and tracing is on. */
static void wait_flag(_Atomic int *flag, int want, int stage, int peer, int mb)
{
    if (atomic_load_explicit(flag, memory_order_acquire) >= want)
        return;
    int64_t t0 = tracer ? pps_trace_now() : 0;
    while (atomic_load_explicit(flag, memory_order_acquire) < want)
        sched_yield();
    if (tracer)
        pps_trace_p2p(tracer, PPS_TRACE_WAIT, stage, peer, mb, 0, t0, pps_trace_now());
}

static void *stage_main(void *arg)
{
    int s = (int)(intptr_t)arg;
    size_t n = pps_schedule_len(&sched, s);

    for (int it = 0; it < ITERS; it++) {
        int rc = pthread_barrier_wait(&iter_bar);
        if (rc != 0 && rc != PTHREAD_BARRIER_SERIAL_THREAD)
            abort();
        if (rc == PTHREAD_BARRIER_SERIAL_THREAD && it == WARM)
            warm_ns = now_ns(); /* the barrier orders it before the join */
        if (tracer && s == 0)
            pps_trace_iteration(tracer, it);
        for (size_t k = 0; k < n; k++) {
            const struct pps_action *a = pps_schedule_at(&sched, s, k);
            int mb = (int)a->mb, fwd = a->op == PPS_OP_F;

            if (fwd && s > 0)
                wait_flag(&fdone[s - 1][mb], it + 1, s, s - 1, mb);
            else if ((a->op == PPS_OP_B || a->op == PPS_OP_BW) && s < p - 1)
                wait_flag(&bdone[s + 1][mb], it + 1, s, s + 1, mb);
            if (tracer) {
                static const int kinds[] = {PPS_TRACE_F, PPS_TRACE_B, PPS_TRACE_W, PPS_TRACE_BW};
                pps_trace_begin(tracer, kinds[a->op], s, a->chunk, mb);
            }
            spin_us(OP_US);
            if (tracer)
                pps_trace_end(tracer);
            if (fwd)
                atomic_store_explicit(&fdone[s][mb], it + 1, memory_order_release);
            else if (a->op != PPS_OP_W)
                atomic_store_explicit(&bdone[s][mb], it + 1, memory_order_release);
        }
    }
    return NULL;
}

/* One run of ITERS iterations: seconds per iteration after the first WARM, or -1. */
static double run_once(struct pps_tracer *t)
{
    pthread_t th[MAX_P];

    tracer = t;
    for (int s = 0; s < p; s++)
        for (int j = 0; j < M; j++) {
            atomic_store(&fdone[s][j], 0);
            atomic_store(&bdone[s][j], 0);
        }
    for (int s = 0; s < p; s++)
        if (pthread_create(&th[s], NULL, stage_main, (void *)(intptr_t)s) != 0)
            return -1;
    for (int s = 0; s < p; s++)
        pthread_join(th[s], NULL);
    return (now_ns() - warm_ns) * 1e-9 / (ITERS - WARM);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* One traced run into root/runN: seconds per iteration as run_once(), or -1. */
static double traced_run(const char *root, int n, unsigned flush_ms, uint64_t *dropped)
{
    struct pps_trace_options o;
    struct pps_tracer *t = NULL;
    struct pps_err err = {0};
    char dir[600];
    double dt;

    snprintf(dir, sizeof(dir), "%s/run%d", root, n);
    pps_trace_options_init(&o);
    o.run_dir = dir;
    o.rank = 0;
    o.world = 1;
    o.flush_interval_ms = flush_ms;
    o.buffer_spans = 1 << 17; /* holds a whole run when nothing drains it */
    if (pps_trace_open(&o, &t, &err) != 0) {
        fprintf(stderr, "bench_tracer_pipeline: %s\n", err.msg);
        return -1;
    }
    pps_trace_meta(t, "schedule", "1f1b");
    pps_trace_meta_int(t, "p", p);
    pps_trace_meta_int(t, "m", M);
    dt = run_once(t);
    *dropped += pps_trace_dropped(t);
    if (pps_trace_close(t, &err) != 0) {
        fprintf(stderr, "bench_tracer_pipeline: %s\n", err.msg);
        return -1;
    }
    return dt;
}

int main(void)
{
    char root[] = "/tmp/pps-bench-pipeline-XXXXXX", cmd[700];
    struct pps_err err = {0};
    double best_on = 1e30, best_off = 1e30, best_quiet = 1e30, ratios[REPS];
    uint64_t dropped = 0;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    int rc = 1, bar = 0;

    /* a core per stage, and one for the flusher and the rest of the machine */
    p = cpus > MAX_P ? MAX_P : cpus > 2 ? (int)cpus - 1 : 2;
    if (!mkdtemp(root)) {
        perror("mkdtemp");
        return 1;
    }
    if (pps_schedule_generate(&sched, PPS_SCHED_1F1B, p, M, 1, &err) != 0 ||
        (bar = pthread_barrier_init(&iter_bar, NULL, (unsigned)p) == 0) == 0) {
        fprintf(stderr, "bench_tracer_pipeline: %s\n", err.msg[0] ? err.msg : "no barrier");
        goto out;
    }
    for (int rep = 0; rep < REPS; rep++) {
        double off = run_once(NULL), on, quiet;
        if (off < 0 || (on = traced_run(root, rep, 20, &dropped)) < 0 ||
            (quiet = traced_run(root, rep + REPS, 0, &dropped)) < 0)
            goto out;
        ratios[rep] = on / off;
        best_off = off < best_off ? off : best_off;
        best_on = on < best_on ? on : best_on;
        best_quiet = quiet < best_quiet ? quiet : best_quiet;
    }
    printf("tracing overhead on a SYNTHETIC spin-wait pipeline (not the runtime): 1f1b p=%d m=%d, "
           "%d us per op, iterations %d..%d of %d timed, best of %d\n",
           p, M, OP_US, WARM, ITERS - 1, ITERS, REPS);
    if (cpus <= MAX_P)
        printf("  (%ld cores: p = %d, so that the stages leave a core to the flusher%s)\n", cpus, p,
               cpus <= 2 ? "; with 2 cores they cannot, and its SQLite time is the stages'" : "");
    printf("  tracing off                          %8.3f ms per iteration\n", best_off * 1e3);
    printf("  tracing on (flusher every 20 ms)     %8.3f ms per iteration\n", best_on * 1e3);
    printf("  tracing on (flusher idle until close)%8.3f ms per iteration   (%llu spans dropped "
           "in all runs)\n",
           best_quiet * 1e3, (unsigned long long)dropped);
    double ratio = best_on / best_off;
    printf("%-40s %6.4fx   goal < 1.01x   %s\n", "on / off", ratio, ratio < 1.01 ? "ok" : "MISSED");
    printf("%-40s %6.4fx   (the recording threads' own cost)\n", "on, flusher idle / off",
           best_quiet / best_off);
    qsort(ratios, REPS, sizeof(ratios[0]), cmp_double);
    printf("%-40s %6.4fx   (runs side by side: less sensitive to the load changing)\n",
           "on / off, median of paired runs", ratios[REPS / 2]);
    rc = 0;
out:
    if (bar)
        pthread_barrier_destroy(&iter_bar);
    pps_schedule_release(&sched);
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
    if (system(cmd) != 0)
        fprintf(stderr, "bench_tracer_pipeline: could not remove %s\n", root);
    return rc;
}
