/*
 * bench_tracer_clock.c - TSC stamps against CLOCK_MONOTONIC over a long run (tracer/tsc.h).
 *
 * Records a begin+end pair between two clock_gettime() readings every millisecond for
 * PPS_BENCH_CLOCK_S seconds (60 by default; the figure is an hour: 3600), with the
 * flusher draining as in a job, then loads the shard and reports how far outside its readings
 * the worst span lies: goal within 1 us. NTP may slew CLOCK_MONOTONIC meanwhile; the map's
 * calibration points follow it. Prints the mode the process ran in (PPSCOPE_CLOCK picks it).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ppscope/trace.h"
#include "storage.h"

static int64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int main(void)
{
    char dir[] = "/tmp/pps-bench-clock-XXXXXX", cmd[256];
    const char *env = getenv("PPS_BENCH_CLOCK_S");
    long secs = env ? strtol(env, NULL, 10) : 60;
    struct pps_trace_options o;
    struct pps_tracer *t = NULL;
    struct pps_run *run = NULL;
    struct pps_err err = {0};
    int64_t *before = NULL, *after = NULL, worst = 0, sum = 0;
    size_t n = 0, cap, seen = 0;
    int rc = 1;

    if (secs <= 0)
        secs = 60;
    cap = (size_t)secs * 1000 + 16;
    before = malloc(cap * sizeof(*before));
    after = malloc(cap * sizeof(*after));
    if (!before || !after || !mkdtemp(dir)) {
        fprintf(stderr, "bench_tracer_clock: out of memory or no temporary directory\n");
        goto out;
    }
    pps_trace_options_init(&o);
    o.run_dir = dir;
    o.rank = 0;
    o.world = 1;
    if (pps_trace_open(&o, &t, &err) != 0) {
        fprintf(stderr, "bench_tracer_clock: %s\n", err.msg);
        goto out;
    }
    for (int64_t end = mono_ns() + secs * 1000000000LL; n < cap && mono_ns() < end; n++) {
        struct timespec ms = {0, 1000000};
        before[n] = mono_ns();
        pps_trace_begin(t, PPS_TRACE_F, 0, 0, (int)n);
        pps_trace_end(t);
        after[n] = mono_ns();
        nanosleep(&ms, NULL);
    }
    if (pps_trace_close(t, &err) != 0 || pps_run_load(dir, &run, &err) != 0) {
        fprintf(stderr, "bench_tracer_clock: %s\n", err.msg);
        goto out;
    }
    for (size_t k = 0; k < run->stages[0].n; k++) {
        const struct pps_span *s = &run->stages[0].spans[k];
        if (s->mb < 0 || (size_t)s->mb >= n)
            continue;
        int64_t out_lo = before[s->mb] - s->start_ns, out_hi = s->end_ns - after[s->mb];
        int64_t d = out_lo > out_hi ? out_lo : out_hi;
        worst = d > worst ? d : worst;
        sum += s->start_ns - before[s->mb];
        seen++;
    }
    printf("tracer clock over %ld s: %zu spans, clock_source %s, TSC %s Hz\n", secs, seen,
           pps_run_meta(run, "clock_source") ? pps_run_meta(run, "clock_source") : "?",
           pps_run_meta(run, "clock_tsc_hz") ? pps_run_meta(run, "clock_tsc_hz") : "-");
    printf("  mean start - reading before       %7.1f ns\n", seen ? (double)sum / seen : 0.0);
    printf("  worst span outside its readings   %7lld ns   goal <= 1000 ns   %s\n",
           (long long)worst, worst <= 1000 && seen == n ? "ok" : "MISSED");
    rc = seen == n ? 0 : 1;
out:
    pps_run_free(run);
    free(before);
    free(after);
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "bench_tracer_clock: could not remove %s\n", dir);
    return rc;
}
