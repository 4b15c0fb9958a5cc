/*
 * bench_child.h - one measurement in a child process of its own, so that the peak RSS it reports
 * is its own and not what an earlier one left: what bench_json.c and bench_import_kineto.c share.
 * Header only, as bench_json.sh builds bench_json.c outside CMake.
 */
#ifndef PPS_BENCH_CHILD_H
#define PPS_BENCH_CHILD_H

#include <stddef.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* What a measurement cost its child: the seconds its work took, and the child's peak RSS. */
struct bench_cost {
    double secs;
    long rss_kb;
};

static inline double bench_now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Runs fn(arg, res) in a child process, timed there, and brings back through a pipe *res (size
 * bytes, as fn left it in the child) and the child's cost. 0, or -1 where no child could be
 * started or none answered (*res is then as the caller left it, or partly written). */
static inline int bench_in_child(void (*fn)(const void *arg, void *res), const void *arg, void *res,
                                 size_t size, struct bench_cost *cost)
{
    int p[2], rc = 0;
    pid_t pid;

    if (pipe(p) != 0)
        return -1;
    if ((pid = fork()) < 0) {
        close(p[0]);
        close(p[1]);
        return -1;
    }
    if (pid == 0) {
        struct bench_cost me;
        struct rusage ru;
        double t0 = bench_now_s();

        close(p[0]);
        fn(arg, res);
        me.secs = bench_now_s() - t0;
        getrusage(RUSAGE_SELF, &ru);
        me.rss_kb = ru.ru_maxrss;
        if (write(p[1], res, size) != (ssize_t)size ||
            write(p[1], &me, sizeof(me)) != (ssize_t)sizeof(me))
            _exit(1);
        _exit(0);
    }
    close(p[1]);
    if (read(p[0], res, size) != (ssize_t)size ||
        read(p[0], cost, sizeof(*cost)) != (ssize_t)sizeof(*cost))
        rc = -1;
    close(p[0]);
    waitpid(pid, NULL, 0);
    return rc;
}

#endif
