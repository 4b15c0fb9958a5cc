/*
 * test_tracer_fixture.h - what the tracer tests share: opening a tracer on a fresh run directory
 * with the options a case wants, counting a loaded run's spans, and running `ppscope report` (the
 * binary named by PPS_BIN, which tests/tracer.cmake sets). Include after test.h.
 */
#ifndef PPS_TRACER_FIXTURE_H
#define PPS_TRACER_FIXTURE_H

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "ppscope/trace.h"
#include "storage.h"
#include "storage_fixture.h"
#include "test.h"

/* Options for a tracer of rank 0 of 1 writing into run_dir. */
static inline struct pps_trace_options opts(const char *run_dir, size_t buffer_spans,
                                            unsigned flush_ms)
{
    struct pps_trace_options o;
    pps_trace_options_init(&o);
    o.run_dir = run_dir;
    o.rank = 0;
    o.world = 1;
    o.buffer_spans = buffer_spans;
    o.flush_interval_ms = flush_ms;
    return o;
}

static inline struct pps_tracer *open_ok(const struct pps_trace_options *o)
{
    struct pps_tracer *t = NULL;
    struct pps_err err = {0};
    int rc = pps_trace_open(o, &t, &err);
    CHECK_EQ_INT(rc, 0);
    if (rc) {
        fprintf(stderr, "  %s\n", err.msg);
        exit(1); /* every later check would be about a NULL tracer */
    }
    return t;
}

static inline void close_ok(struct pps_tracer *t)
{
    struct pps_err err = {0};
    int rc = pps_trace_close(t, &err);
    CHECK_EQ_INT(rc, 0);
    if (rc)
        fprintf(stderr, "  %s\n", err.msg);
}

static inline void flush_ok(struct pps_tracer *t)
{
    struct pps_err err = {0};
    int rc = pps_trace_flush(t, &err);
    CHECK_EQ_INT(rc, 0);
    if (rc)
        fprintf(stderr, "  %s\n", err.msg);
}

/* Spans of one kind in a loaded run (kind 0: all). */
static inline size_t count_kind(const struct pps_run *run, int kind)
{
    size_t n = 0;
    for (int s = 0; s < run->n_stages; s++)
        for (size_t i = 0; i < run->stages[s].n; i++)
            n += !kind || run->stages[s].spans[i].kind == kind;
    return n;
}

/* Sum of the dropped column over the run's metrics (unknown, -1, left out). */
static inline int64_t sum_dropped(const struct pps_run *run)
{
    int64_t n = 0;
    for (size_t i = 0; i < run->n_metrics; i++)
        if (run->metrics[i].dropped > 0)
            n += run->metrics[i].dropped;
    return n;
}

/* Runs `ppscope report ARGS` with its output (stdout and stderr) in out; returns its exit
 * status, or -1 when PPS_BIN is not set (the caller skips). */
static inline int run_report(const char *args, char *out, size_t len)
{
    const char *bin = getenv("PPS_BIN");
    char cmd[2048];
    FILE *p;
    size_t n = 0;
    int st;

    out[0] = '\0';
    if (!bin || !*bin)
        return -1;
    snprintf(cmd, sizeof(cmd), "'%s' report %s 2>&1", bin, args);
    if (!(p = popen(cmd, "r")))
        return -2;
    while (n + 1 < len) {
        size_t k = fread(out + n, 1, len - 1 - n, p);
        if (k == 0)
            break;
        n += k;
    }
    out[n] = '\0';
    st = pclose(p);
    return st == -1 ? -2 : WEXITSTATUS(st);
}

/* Starts n threads running fn(&args[i]) and joins them. */
static inline void run_threads(int n, void *(*fn)(void *), void *args, size_t arg_size)
{
    pthread_t th[64];
    CHECK(n <= 64);
    for (int i = 0; i < n && i < 64; i++)
        CHECK_EQ_INT(pthread_create(&th[i], NULL, fn, (char *)args + (size_t)i * arg_size), 0);
    for (int i = 0; i < n && i < 64; i++)
        CHECK_EQ_INT(pthread_join(th[i], NULL), 0);
}

#endif
