/*
 * host.c - a stage thread's CPU time and run delay (host.h), and the cores the process may use.
 */
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "host.h"

void pps_host_probe_open(struct pps_host_probe *hp)
{
    hp->fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
}

static int64_t thread_cpu_ns(void)
{
    struct timespec ts;

    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
        return -1;
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void pps_host_probe_read(struct pps_host_probe *hp, struct pps_host_sample *out)
{
    char buf[128];
    ssize_t n;

    out->cpu_ns = -1;
    out->run_delay_ns = -1;
    /* "CPU-ns run-delay-ns timeslices\n": the first two are what we need. */
    if (hp->fd >= 0 && (n = pread(hp->fd, buf, sizeof(buf) - 1, 0)) > 0) {
        char *end;
        long long cpu, delay;

        buf[n] = '\0';
        cpu = strtoll(buf, &end, 10);
        if (end != buf && *end == ' ') {
            char *p = end;
            delay = strtoll(p, &end, 10);
            if (end != p && cpu >= 0 && delay >= 0) {
                out->cpu_ns = cpu;
                out->run_delay_ns = delay;
                return;
            }
        }
    }
    out->cpu_ns = thread_cpu_ns();
}

void pps_host_probe_close(struct pps_host_probe *hp)
{
    if (hp->fd >= 0)
        close(hp->fd);
    hp->fd = -1;
}

int pps_host_cpus(void)
{
    cpu_set_t set;
    long n;

    if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0)
        return CPU_COUNT(&set);
    n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

void pps_host_cpu_list(char *buf, size_t len)
{
    cpu_set_t set;
    size_t used = 0;

    if (!len)
        return;
    buf[0] = '\0';
    if (sched_getaffinity(0, sizeof(set), &set) != 0)
        return;
    for (int c = 0; c < CPU_SETSIZE; c++) {
        int last = c;
        int n;

        if (!CPU_ISSET(c, &set))
            continue;
        while (last + 1 < CPU_SETSIZE && CPU_ISSET(last + 1, &set))
            last++;
        n = last > c ? snprintf(buf + used, len - used, "%s%d-%d", used ? "," : "", c, last)
                     : snprintf(buf + used, len - used, "%s%d", used ? "," : "", c);
        if (n < 0 || (size_t)n >= len - used) {
            buf[0] = '\0'; /* a list cut short would say something untrue */
            return;
        }
        used += (size_t)n;
        c = last;
    }
}
