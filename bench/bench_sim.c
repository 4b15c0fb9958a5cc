/*
 * bench_sim.c - the simulator's cost against its size. Times generate+validate+simulate for each
 * schedule at p=64 with m = 256 and m = 1024 (4x the actions) and prints the ratio: linear cost
 * gives about 4x. The absolute time of the large case is printed too (goal: well under a second),
 * but the ratio is the figure to compare between machines.
 */
#include <stdio.h>
#include <time.h>

#include "schedule.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Best of three runs of the whole pipeline for one size, in seconds; -1 on error. */
static double time_one(int kind, int p, int m)
{
    double best = -1;
    for (int rep = 0; rep < 3; rep++) {
        struct pps_schedule s = PPS_SCHEDULE_INIT;
        struct pps_sim_costs c;
        struct pps_sim_result r;
        struct pps_err err = {0};
        int v = kind == PPS_SCHED_INTERLEAVED ? 2 : 1;
        double t0 = now();
        if (pps_sim_costs_init(&c, p, 1, 1, 1) || pps_schedule_generate(&s, kind, p, m, v, &err) ||
            pps_schedule_validate(&s, NULL, &err) || pps_simulate(&s, &c, &r, &err)) {
            fprintf(stderr, "bench_sim: %s\n", err.msg);
            return -1;
        }
        double dt = now() - t0;
        if (best < 0 || dt < best)
            best = dt;
        pps_sim_result_release(&r);
        pps_sim_costs_release(&c);
        pps_schedule_release(&s);
    }
    return best;
}

int main(void)
{
    int fail = 0;
    printf("%-12s %12s %12s %8s\n", "schedule", "m=256 (ms)", "m=1024 (ms)", "ratio");
    for (int kind = 0; kind < PPS_SCHED_KIND_COUNT; kind++) {
        double small = time_one(kind, 64, 256), large = time_one(kind, 64, 1024);
        if (small < 0 || large < 0) {
            fail = 1;
            continue;
        }
        printf("%-12s %12.2f %12.2f %7.2fx\n", pps_sched_kind_name(kind), small * 1e3, large * 1e3,
               large / small);
    }
    printf("(4x the actions: a linear simulator takes about 4x the time)\n");
    return fail;
}
