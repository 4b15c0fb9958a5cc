/*
 * test_tracer_load.c - the tracer under load and under failure: eight threads of a million
 * spans each with nothing lost, exact drop counts with small buffers, many threads flushing at
 * once, a writer killed with SIGKILL (the shard opens with everything flushed, and `ppscope
 * report` says the run is incomplete), and a reader polling a shard while it is written.
 *
 * Every span encodes who recorded it: stage = thread, mb = its sequence number in that thread,
 * so a loaded run says exactly which spans arrived. PPS_TEST_SPANS overrides the million (for
 * valgrind or sanitizer runs).
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "test.h"
#include "test_tracer_fixture.h"

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

static int spans_per_thread(void)
{
    const char *s = getenv("PPS_TEST_SPANS");
    int n = s && *s ? atoi(s) : 0;
    return n > 0 ? n : 1000000;
}

/*
 * Checks that stage s of run holds exactly the spans mb = 0 .. want-1, each once (and kind in
 * kinds, when not 0). Returns how many were missing or repeated.
 */
static long check_stage_prefix(const struct pps_run *run, int s, int want)
{
    const struct pps_stage_spans *b = s < run->n_stages ? &run->stages[s] : NULL;
    unsigned char *seen = calloc((size_t)want + 1, 1);
    long bad = 0;

    if (!seen) {
        CHECK(seen != NULL);
        return 1;
    }
    for (size_t i = 0; b && i < b->n; i++) {
        int mb = b->spans[i].mb;
        if (mb < 0 || mb >= want || seen[mb]++)
            bad++;
    }
    for (int i = 0; i < want; i++)
        bad += !seen[i];
    free(seen);
    return bad;
}

struct worker {
    struct pps_tracer *t;
    int stage, n;
    int use_record;  /* pps_trace_record instead of begin/end */
    int flush_every; /* 0: never */
};

static void *worker_main(void *p)
{
    struct worker *w = p;
    for (int i = 0; i < w->n; i++) {
        if (w->use_record) {
            int64_t t0 = pps_trace_now();
            pps_trace_record(w->t, PPS_TRACE_B, w->stage, 0, i, t0, t0 + 1);
        } else {
            pps_trace_begin(w->t, PPS_TRACE_F, w->stage, 0, i);
            pps_trace_end(w->t);
        }
        if (w->flush_every && (i + 1) % w->flush_every == 0) {
            struct pps_err err = {0};
            CHECK_EQ_INT(pps_trace_flush(w->t, &err), 0);
        }
    }
    return NULL;
}

/* 8 threads x 1M spans, buffers that hold them all, the flusher draining meanwhile: every
 * (thread, sequence) arrives exactly once and nothing is dropped. */
static void test_8_threads_1m_spans_nothing_lost(void)
{
    enum { T = 8 };
    int n = spans_per_thread();
    char *dir = tmpdir_new();
    struct pps_trace_options o = opts(dir, (size_t)1 << 20, 2);
    struct worker w[T];

    if ((size_t)n > o.buffer_spans)
        o.buffer_spans = (size_t)n;
    struct pps_tracer *t = open_ok(&o);
    for (int i = 0; i < T; i++)
        w[i] = (struct worker){t, i, n, i % 2, 0};
    pps_trace_iteration(t, 0);
    run_threads(T, worker_main, w, sizeof(w[0]));
    CHECK_EQ_INT(pps_trace_dropped(t), 0);
    close_ok(t);

    struct pps_run *run = load_ok(dir);
    if (run) {
        CHECK_EQ_INT(run->n_spans, (size_t)T * (size_t)n);
        CHECK_EQ_INT(run->n_stages, T);
        for (int s = 0; s < T; s++)
            CHECK_EQ_INT(check_stage_prefix(run, s, n), 0);
        CHECK_EQ_INT(count_kind(run, PPS_SPAN_F), (size_t)n * T / 2);
        CHECK_EQ_INT(sum_dropped(run), 0);
        CHECK_EQ_INT(run->complete, 1);
    }
    pps_run_free(run);
    tmpdir_free(dir);
}

/* flush_interval_ms 0 and 4096-span buffers: each thread keeps exactly its first 4096 spans,
 * and the drop count is exact, live and stored. */
static void test_small_buffers_drop_exactly(void)
{
    enum { T = 8, N = 20000, CAP = 4096 };
    char *dir = tmpdir_new();
    struct pps_trace_options o = opts(dir, CAP, 0);
    struct pps_tracer *t = open_ok(&o);
    struct worker w[T];

    for (int i = 0; i < T; i++)
        w[i] = (struct worker){t, i, N, i % 2, 0};
    pps_trace_iteration(t, 0);
    run_threads(T, worker_main, w, sizeof(w[0]));
    CHECK_EQ_INT(pps_trace_dropped(t), (uint64_t)T * (N - CAP));
    close_ok(t);

    struct pps_run *run = load_ok(dir);
    if (run) {
        CHECK_EQ_INT(run->n_spans, T * CAP);
        for (int s = 0; s < T; s++)
            CHECK_EQ_INT(check_stage_prefix(run, s, CAP), 0);
        CHECK_EQ_INT(sum_dropped(run), (int64_t)T * (N - CAP));
    }
    pps_run_free(run);
    tmpdir_free(dir);
}

/* Threads that flush while others record (and the periodic flusher runs): every flush returns,
 * and since each thread flushes before its buffer can fill, nothing is dropped. */
static void test_concurrent_flushes_lose_nothing(void)
{
    enum { T = 6, N = 60000, CAP = 4096 };
    char *dir = tmpdir_new();
    struct pps_trace_options o = opts(dir, CAP, 3);
    struct pps_tracer *t = open_ok(&o);
    struct worker w[T];

    for (int i = 0; i < T; i++)
        w[i] = (struct worker){t, i, N, i % 2, CAP / 2};
    run_threads(T, worker_main, w, sizeof(w[0]));
    CHECK_EQ_INT(pps_trace_dropped(t), 0);
    close_ok(t);

    struct pps_run *run = load_ok(dir);
    if (run) {
        CHECK_EQ_INT(run->n_spans, T * N);
        for (int s = 0; s < T; s++)
            CHECK_EQ_INT(check_stage_prefix(run, s, N), 0);
    }
    pps_run_free(run);
    tmpdir_free(dir);
}

/* ---- killed writers ------------------------------------------------------------------------ */

/* The child of the SIGKILL cases: records, flushes, records more, and dies. Never returns. */
static void child_record_then_die(const char *dir, int flushed, int unflushed)
{
    struct pps_trace_options o = opts(dir, 1 << 16, 0);
    struct pps_tracer *t = NULL;

    if (pps_trace_open(&o, &t, NULL) != 0)
        _exit(2);
    pps_trace_meta(t, "schedule", "1f1b");
    pps_trace_meta_int(t, "p", 1);
    pps_trace_meta_int(t, "m", flushed + unflushed); /* a microbatch a span */
    pps_trace_iteration(t, 0);
    for (int i = 0; i < flushed; i++)
        pps_trace_record(t, PPS_TRACE_F, 0, 0, i, 10 * i, 10 * i + 5);
    if (pps_trace_flush(t, NULL) != 0)
        _exit(3);
    for (int i = 0; i < unflushed; i++)
        pps_trace_record(t, PPS_TRACE_F, 0, 0, flushed + i, 10 * (flushed + i),
                         10 * (flushed + i) + 5);
    kill(getpid(), SIGKILL);
    _exit(4);
}

static int died_of_sigkill(pid_t pid)
{
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    return WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL;
}

static void check_report_incomplete(const char *dir)
{
    char args[700], out[8192];
    snprintf(args, sizeof(args), "'%s'", dir);
    int rc = run_report(args, out, sizeof(out));
    if (rc == -1) {
        fprintf(stderr, "  (PPS_BIN not set: `ppscope report` not checked)\n");
        return;
    }
    CHECK_EQ_INT(rc, 0);
    CHECK_STR_CONTAINS(out, "INCOMPLETE");
}

/* Killed after a flush: the shard opens, holds exactly the flushed spans, says it is incomplete,
 * and `ppscope report` reads it. */
static void test_sigkill_keeps_flushed_spans(void)
{
    enum { FLUSHED = 10000, UNFLUSHED = 5000 };
    char *dir = tmpdir_new();
    pid_t pid = fork();

    CHECK(pid >= 0);
    if (pid == 0)
        child_record_then_die(dir, FLUSHED, UNFLUSHED);
    CHECK(died_of_sigkill(pid));
    struct pps_run *run = load_ok(dir);
    if (run) {
        CHECK_EQ_INT(run->complete, 0);
        CHECK_EQ_INT(run->n_spans, FLUSHED);
        CHECK_EQ_INT(check_stage_prefix(run, 0, FLUSHED), 0);
        CHECK(pps_run_meta(run, "schedule") && !strcmp(pps_run_meta(run, "schedule"), "1f1b"));
    }
    pps_run_free(run);
    check_report_incomplete(dir);
    tmpdir_free(dir);
}

/* Killed at a random moment while two threads record and the flusher commits every
 * millisecond: the shard opens, and each thread's spans are a prefix of what it recorded (a batch
 * is committed whole or not at all, in order). */
static void test_sigkill_mid_flush_leaves_a_prefix(void)
{
    char *dir = tmpdir_new();
    pid_t pid = fork();

    CHECK(pid >= 0);
    if (pid == 0) {
        struct pps_trace_options o = opts(dir, 1 << 14, 1);
        struct pps_tracer *t = NULL;
        struct worker w[2];
        if (pps_trace_open(&o, &t, NULL) != 0)
            _exit(2);
        /* flush before the buffer can fill: no drops, so whatever arrived is a prefix */
        for (int i = 0; i < 2; i++)
            w[i] = (struct worker){t, i, 1 << 30, i, 1 << 12};
        run_threads(2, worker_main, w, sizeof(w[0]));
        _exit(5); /* not reached */
    }
    sleep_ms(300);
    kill(pid, SIGKILL);
    CHECK(died_of_sigkill(pid));
    struct pps_run *run = load_ok(dir);
    if (run) {
        CHECK_EQ_INT(run->complete, 0);
        for (int s = 0; s < run->n_stages; s++)
            CHECK_EQ_INT(check_stage_prefix(run, s, (int)run->stages[s].n), 0);
        if (run->n_spans == 0)
            fprintf(stderr, "  (note: the child was killed before its first commit)\n");
    }
    pps_run_free(run);
    check_report_incomplete(dir);
    tmpdir_free(dir);
}

/* ---- a live reader ------------------------------------------------------------------------- */

/*
 * The reader, in its own process as `ppscope view` would be: once the parent says the shard
 * exists (one byte on the pipe), loads the run over and over until the parent writes the final
 * count, then loads once more and compares. Exit 0 on success, 1 on a load error, 2 if the count
 * ever went down, 3 if the final count differs, 4 if the pipe broke.
 */
static void reader_main(const char *dir, int fd)
{
    size_t last = 0, loads = 0;
    char go;

    if (read(fd, &go, 1) != 1)
        _exit(4);
    for (;;) {
        struct pollfd pfd = {fd, POLLIN, 0};
        int done = poll(&pfd, 1, 0) > 0;
        uint64_t want = 0;
        struct pps_run *run = NULL;
        struct pps_err err = {0};

        if (done && read(fd, &want, sizeof(want)) != (ssize_t)sizeof(want))
            _exit(4);
        if (pps_run_load(dir, &run, &err) != 0) {
            fprintf(stderr, "  reader: %s\n", err.msg);
            _exit(1);
        }
        loads++;
        if (run->n_spans < last) {
            fprintf(stderr, "  reader: %zu spans after %zu\n", run->n_spans, last);
            _exit(2);
        }
        last = run->n_spans;
        pps_run_free(run);
        if (done) {
            fprintf(stderr, "  reader: %zu loads, last saw %zu spans\n", loads, last);
            _exit(last == want ? 0 : 3);
        }
    }
}

static void test_live_reader_sees_counts_grow(void)
{
    enum { T = 4, ROUNDS = 100, BURST = 2000 };
    char *dir = tmpdir_new();
    struct pps_trace_options o = opts(dir, 1 << 14, 1);
    int fds[2];

    /* Fork before this process opens the shard: a child must not inherit an open SQLite
     * connection's file and lock state, even one it never uses. */
    CHECK_EQ_INT(pipe(fds), 0);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        close(fds[1]);
        reader_main(dir, fds[0]);
    }
    close(fds[0]);
    struct pps_tracer *t = open_ok(&o);
    CHECK(write(fds[1], "g", 1) == 1);
    for (int r = 0; r < ROUNDS; r++) {
        struct worker w[T];
        for (int i = 0; i < T; i++)
            w[i] = (struct worker){t, i, BURST, i % 2, 0};
        run_threads(T, worker_main, w, sizeof(w[0]));
        sleep_ms(5);
    }
    uint64_t dropped = pps_trace_dropped(t);
    close_ok(t);
    uint64_t want = (uint64_t)T * ROUNDS * BURST - dropped;
    CHECK(write(fds[1], &want, sizeof(want)) == (ssize_t)sizeof(want));
    close(fds[1]);
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    CHECK(WIFEXITED(st));
    CHECK_EQ_INT(WEXITSTATUS(st), 0);
    tmpdir_free(dir);
}

static const struct test_case cases[] = {
    TEST(test_8_threads_1m_spans_nothing_lost),
    TEST(test_small_buffers_drop_exactly),
    TEST(test_concurrent_flushes_lose_nothing),
    TEST(test_sigkill_keeps_flushed_spans),
    TEST(test_sigkill_mid_flush_leaves_a_prefix),
    TEST(test_live_reader_sees_counts_grow),
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    return test_main(cases, argc, argv);
}
