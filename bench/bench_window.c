/*
 * bench_window.c - what reading a time window of a run costs against reading it whole, in the
 * same run: pps_run_load_window() of about one iteration in the middle of RUN (and of the last
 * one) against pps_run_load(), with the spans each holds. bench/scale.sh runs it on its 100M-span
 * run; usage: bench_window RUN.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "storage.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* The window [t0, t1) of path, timed; -1 on failure (said on stderr). */
static double time_window(const char *path, int64_t t0, int64_t t1, size_t *n_spans)
{
    struct pps_err err = {0, ""};
    struct pps_run *run = NULL;
    double t = now_s();

    if (pps_run_load_window(path, t0, t1, &run, &err) != 0) {
        fprintf(stderr, "bench_window: %s\n", err.msg);
        return -1;
    }
    t = now_s() - t;
    *n_spans = run->n_spans;
    pps_run_free(run);
    return t;
}

int main(int argc, char **argv)
{
    struct pps_err err = {0, ""};
    struct pps_run *run = NULL;
    size_t n_mid = 0, n_last = 0;
    double t_full, t_mid, t_last, iter_ns;
    int64_t mid;

    if (argc != 2) {
        fprintf(stderr, "usage: bench_window RUN\n");
        return 2;
    }
    t_full = now_s();
    if (pps_run_load(argv[1], &run, &err) != 0) {
        fprintf(stderr, "bench_window: %s\n", err.msg);
        return 1;
    }
    t_full = now_s() - t_full;
    /* About one iteration: the run's time over its iterations. */
    iter_ns = (double)(run->t_max - run->t_min) / (run->n_iters > 0 ? run->n_iters : 1);
    mid = run->t_min + (run->t_max - run->t_min) / 2;
    printf("full load   %10zu spans  %8.3f s\n", run->n_spans, t_full);
    t_mid = time_window(argv[1], mid, mid + (int64_t)iter_ns + 1, &n_mid);
    t_last = time_window(argv[1], run->t_max - (int64_t)iter_ns - 1, run->t_max + 1, &n_last);
    pps_run_free(run);
    if (t_mid < 0 || t_last < 0)
        return 1;
    printf("window mid  %10zu spans  %8.3f s  %.4fx the full load's time\n", n_mid, t_mid,
           t_mid / t_full);
    printf("window last %10zu spans  %8.3f s  %.4fx the full load's time\n", n_last, t_last,
           t_last / t_full);
    return 0;
}
