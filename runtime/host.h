/*
 * host.h - what a stage thread got from the machine it runs on: the CPU time it ran, and the time
 * it was ready to run but waited for a core (the scheduler's run delay). A pipeline whose stage
 * threads outnumber the cores idles for that reason alone, and no schedule or link explains it:
 * the executor samples these per iteration and the analysis names host contention with its size.
 *
 * Linux keeps both per thread in /proc/thread-self/schedstat (CONFIG_SCHED_INFO, on in the
 * distributions' kernels): reading it costs under a microsecond (0.74 us measured on the 2-core
 * development VM), once per iteration. Elsewhere only
 * the CPU time is known (CLOCK_THREAD_CPUTIME_ID) and the run delay is reported unknown.
 */
#ifndef PPS_HOST_H
#define PPS_HOST_H

#include <stddef.h>
#include <stdint.h>

/* The calling thread's probe; caller-held, belongs to the thread that opened it. */
struct pps_host_probe {
    int fd; /* /proc/thread-self/schedstat, -1 where there is none */
};

struct pps_host_sample {
    int64_t cpu_ns;       /* CPU time the thread has run, since it started */
    int64_t run_delay_ns; /* time it was runnable and waited for a core; -1: unknown */
};

/* Opens the calling thread's statistics. Never fails: without schedstat, fd is -1. */
void pps_host_probe_open(struct pps_host_probe *hp);
/* Reads the thread's figures now (the thread that opened hp must call it). */
void pps_host_probe_read(struct pps_host_probe *hp, struct pps_host_sample *out);
void pps_host_probe_close(struct pps_host_probe *hp);

/* Cores this process may run on (its affinity mask), at least 1. */
int pps_host_cpus(void);
/* Those cores as a list of ranges, "0-3,8" (the form taskset and /proc use), into buf; "" when
 * the mask cannot be read or does not fit. */
void pps_host_cpu_list(char *buf, size_t len);

#endif
