/*
 * test_tracer.c - the span API (ppscope/trace.h) case by case: options, every recording call
 * read back field by field, names, nesting, drops and their per-iteration rows, threads beyond
 * max_threads and threads that exit, flush and the periodic flusher, metadata and metrics.
 * Many threads, killed writers and live readers are in test_tracer_load.c. Each case works in
 * its own temporary directory and removes it.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

/* The run's only span of kind k on stage s (fails the case if not exactly one). */
static const struct pps_span *only(const struct pps_run *run, int stage, int kind)
{
    const struct pps_span *hit = NULL;
    int n = 0;
    for (size_t i = 0; stage < run->n_stages && i < run->stages[stage].n; i++)
        if (run->stages[stage].spans[i].kind == kind) {
            hit = &run->stages[stage].spans[i];
            n++;
        }
    CHECK_EQ_INT(n, 1);
    return n == 1 ? hit : NULL;
}

static void test_options_defaults(void)
{
    struct pps_trace_options o;
    memset(&o, 0x5a, sizeof(o));
    pps_trace_options_init(&o);
    CHECK(o.run_dir == NULL);
    CHECK_EQ_INT(o.rank, -1);
    CHECK_EQ_INT(o.world, -1);
    CHECK_EQ_INT(o.buffer_spans, 65536);
    CHECK_EQ_INT(o.flush_interval_ms, 20);
    CHECK_EQ_INT(o.clock_sync, 0);
    CHECK_EQ_INT(o.max_threads, 256);
}

static void expect_open_fails(const struct pps_trace_options *o, int code, const char *why)
{
    struct pps_tracer *t = (struct pps_tracer *)1;
    struct pps_err err = {0};
    CHECK_EQ_INT(pps_trace_open(o, &t, &err), code);
    CHECK(t == NULL);
    CHECK_STR_CONTAINS(err.msg, why);
}

static void test_open_bad_options(void)
{
    char *dir = tmpdir_new();
    struct pps_trace_options o = opts(dir, 16, 0);
    struct pps_tracer *t = NULL;

    CHECK_EQ_INT(pps_trace_open(NULL, &t, NULL), PPS_EINVAL);
    CHECK_EQ_INT(pps_trace_open(&o, NULL, NULL), PPS_EINVAL);
    o.run_dir = NULL;
    expect_open_fails(&o, PPS_EINVAL, "run directory");
    o = opts(dir, 0, 0);
    expect_open_fails(&o, PPS_EINVAL, "buffer_spans");
    o = opts(dir, 16, 0);
    o.max_threads = 0;
    expect_open_fails(&o, PPS_EINVAL, "max_threads");
    o = opts(dir, 16, 0);
    o.world = 0;
    expect_open_fails(&o, PPS_EINVAL, "world");
    o = opts(dir, 16, 0);
    o.rank = 2;
    o.world = 2;
    expect_open_fails(&o, PPS_EINVAL, "rank 2 is not below world 2");
    /* None of these left a shard behind. */
    char shard[600];
    CHECK_EQ_INT(file_size(join(shard, sizeof(shard), dir, "rank-00000.db")), -1);
    tmpdir_free(dir);
}

/* clock_sync without MPI running fails at open, with the reason, before the shard exists (a
 * rerun must not find a half-made one in its way). */
static void test_clock_sync_without_mpi_fails_cleanly(void)
{
    char *dir = tmpdir_new(), shard[600];
    struct pps_trace_options o = opts(dir, 16, 0);
    o.clock_sync = 1;
    expect_open_fails(&o, PPS_EINVAL, "MPI");
    CHECK_EQ_INT(file_size(join(shard, sizeof(shard), dir, "rank-00000.db")), -1);
    tmpdir_free(dir);
}

static void test_open_existing_shard_fails(void)
{
    char *dir = tmpdir_new();
    struct pps_trace_options o = opts(dir, 16, 0);
    struct pps_tracer *t = open_ok(&o);
    pps_trace_record(t, PPS_TRACE_F, 0, 0, 0, 10, 20);
    close_ok(t);

    expect_open_fails(&o, PPS_EINVAL, "rank-00000.db: already exists");
    /* and the first run is untouched */
    struct pps_run *run = load_ok(dir);
    if (run) {
        CHECK_EQ_INT(run->n_spans, 1);
        CHECK_EQ_INT(run->complete, 1);
    }
    pps_run_free(run);
    tmpdir_free(dir);
}

/*
 * Device activity (CUPTI): where it cannot trace (no CUPTI in the build, no libcupti, no GPU: CI
 * and this test's usual machine) the call says why, PPS_ENOENT, and the tracer goes on as if it
 * had not been asked: its spans are written, their corr stays 0, it closes complete. Where it
 * can, ops carry their id in corr (checked against the packing in test_devmap.c) and the shard
 * says device_activity=cupti; the device spans themselves are checked on a GPU
 * (tests/cli/run_cuda.sh).
 */
static void test_device_activity_on_or_said_why(void)
{
    char *dir = tmpdir_new();
    struct pps_trace_options o = opts(dir, 64, 0);
    struct pps_tracer *t = open_ok(&o);
    struct pps_err err = {0}, none = {0};
    int rc = pps_trace_device_activity(t, &err);

    CHECK_EQ_INT(pps_trace_device_activity(NULL, &none), PPS_EINVAL);
    if (rc != 0) {
        CHECK_EQ_INT(rc, PPS_ENOENT);
        CHECK_STR_CONTAINS(err.msg, "device activity: ");
    }
    pps_trace_iteration(t, 2);
    pps_trace_begin(t, PPS_TRACE_B, 0, 0, 5);
    pps_trace_end(t);
    close_ok(t);

    struct pps_run *run = load_ok(dir);
    if (run) {
        CHECK_EQ_INT(run->n_spans, 1);
        CHECK_EQ_INT(run->complete, 1);
        if (rc == 0)
            CHECK(run->stages[0].spans[0].corr > 0);
        else
            CHECK(run->stages[0].spans[0].corr == 0);
    }
    pps_run_free(run);
    tmpdir_free(dir);
}

static void test_close_null_is_noop(void)
{
    struct pps_err err = {0};
    CHECK_EQ_INT(pps_trace_close(NULL, &err), 0);
    CHECK_EQ_INT(pps_trace_close(NULL, NULL), 0);
    /* The recording calls take NULL for "tracing off". */
    pps_trace_begin(NULL, PPS_TRACE_F, 0, 0, 0);
    pps_trace_end(NULL);
    pps_trace_record(NULL, PPS_TRACE_F, 0, 0, 0, 1, 2);
    pps_trace_iteration(NULL, 3);
    CHECK_EQ_INT(pps_trace_dropped(NULL), 0);
    CHECK_EQ_INT(pps_trace_flush(NULL, &err), PPS_EINVAL);
}

/* Every recording call, read back field by field, with the meta the tracer writes itself. */
static void test_every_call_round_trips(void)
{
    char *dir = tmpdir_new();
    struct pps_trace_options o = opts(dir, 64, 0);
    o.rank = 2;
    o.world = 4;
    struct pps_tracer *t = open_ok(&o);
    int32_t gemm = pps_trace_name(t, "gemm"), step = pps_trace_name(t, "step");
    int64_t t0 = pps_trace_now();

    pps_trace_begin(t, PPS_TRACE_F, 1, 0, 5); /* before any iteration: iter -1 */
    pps_trace_end(t);
    pps_trace_iteration(t, 7);
    pps_trace_begin(t, PPS_TRACE_B, 1, 1, 6);
    pps_trace_end(t);
    pps_trace_record(t, PPS_TRACE_W, 1, 0, 8, 1000, 2000);
    pps_trace_p2p(t, PPS_TRACE_SEND, 1, 2, 9, 4096, 3000, 4000);
    pps_trace_named(t, PPS_TRACE_RANGE, 1, step, 5000, 6000);
    pps_trace_device(t, PPS_TRACE_KERNEL, 1, gemm, 7000, 8000, 77, 0);
    pps_trace_device(t, PPS_TRACE_MEMCPY, 1, -1, 9000, 9500, 78, 1 << 20);
    int64_t t1 = pps_trace_now();
    CHECK_EQ_INT(pps_trace_dropped(t), 0);
    close_ok(t);

    char shard_dir[600];
    struct pps_run *run = load_ok(join(shard_dir, sizeof(shard_dir), dir, "rank-00002.db"));
    if (!run)
        goto out;
    CHECK_EQ_INT(run->n_spans, 7);
    CHECK_EQ_INT(run->complete, 1);
    CHECK(pps_run_meta(run, "rank") && !strcmp(pps_run_meta(run, "rank"), "2"));
    CHECK(pps_run_meta(run, "world") && !strcmp(pps_run_meta(run, "world"), "4"));
    CHECK(pps_run_meta(run, "source") && !strcmp(pps_run_meta(run, "source"), "tracer"));
    CHECK(pps_run_meta(run, "clock_offset_start_ns") == NULL); /* no clock_sync asked */

    const struct pps_span *s = only(run, 1, PPS_SPAN_F);
    if (s) {
        CHECK(s->start_ns >= t0 && s->start_ns <= s->end_ns && s->end_ns <= t1);
        CHECK_EQ_INT(s->iter, -1);
        CHECK_EQ_INT(s->mb, 5);
        CHECK_EQ_INT(s->chunk, 0);
        CHECK_EQ_INT(s->peer, -1);
        CHECK_EQ_INT(s->name_id, -1);
        CHECK_EQ_INT(s->rank, 2);
        CHECK_EQ_INT(s->clock, PPS_CLOCK_HOST);
    }
    if ((s = only(run, 1, PPS_SPAN_B))) {
        CHECK(s->start_ns >= t0 && s->start_ns <= s->end_ns && s->end_ns <= t1);
        CHECK_EQ_INT(s->iter, 7);
        CHECK_EQ_INT(s->chunk, 1);
        CHECK_EQ_INT(s->mb, 6);
    }
    if ((s = only(run, 1, PPS_SPAN_W))) {
        CHECK_EQ_INT(s->start_ns, 1000);
        CHECK_EQ_INT(s->end_ns, 2000);
        CHECK_EQ_INT(s->iter, 7);
        CHECK_EQ_INT(s->mb, 8);
    }
    if ((s = only(run, 1, PPS_SPAN_SEND))) {
        CHECK_EQ_INT(s->start_ns, 3000);
        CHECK_EQ_INT(s->end_ns, 4000);
        CHECK_EQ_INT(s->peer, 2);
        CHECK_EQ_INT(s->mb, 9);
        CHECK_EQ_INT(s->bytes, 4096);
        CHECK_EQ_INT(s->iter, 7);
    }
    if ((s = only(run, 1, PPS_SPAN_RANGE))) {
        CHECK_EQ_INT(s->start_ns, 5000);
        CHECK(pps_run_span_name(run, s) && !strcmp(pps_run_span_name(run, s), "step"));
        CHECK_EQ_INT(s->clock, PPS_CLOCK_HOST);
        CHECK_EQ_INT(s->iter, 7);
    }
    if ((s = only(run, 1, PPS_SPAN_KERNEL))) {
        CHECK_EQ_INT(s->start_ns, 7000);
        CHECK_EQ_INT(s->end_ns, 8000);
        CHECK(pps_run_span_name(run, s) && !strcmp(pps_run_span_name(run, s), "gemm"));
        CHECK_EQ_INT(s->corr, 77);
        CHECK_EQ_INT(s->clock, PPS_CLOCK_DEVICE);
        CHECK_EQ_INT(s->iter, -1); /* device spans: the iteration is not guessed */
    }
    if ((s = only(run, 1, PPS_SPAN_MEMCPY))) {
        CHECK_EQ_INT(s->bytes, 1 << 20);
        CHECK_EQ_INT(s->corr, 78);
        CHECK_EQ_INT(s->name_id, -1);
        CHECK(pps_run_span_name(run, s) == NULL);
    }
out:
    pps_run_free(run);
    tmpdir_free(dir);
}

/* Ids 0, 1, 2 in first-seen order, a repeated name keeps its id, and a name interned after
 * earlier batches were written still resolves (the flusher writes it before its spans). */
static void test_names_interned_and_resolved(void)
{
    char *dir = tmpdir_new();
    struct pps_trace_options o = opts(dir, 64, 0);
    struct pps_tracer *t = open_ok(&o);
    static const char *names[] = {"fwd", "bwd", "allreduce", "fwd"};
    int32_t ids[4];

    for (int i = 0; i < 4; i++)
        ids[i] = pps_trace_name(t, names[i]);
    CHECK_EQ_INT(ids[0], 0);
    CHECK_EQ_INT(ids[1], 1);
    CHECK_EQ_INT(ids[2], 2);
    CHECK_EQ_INT(ids[3], 0);
    CHECK(pps_trace_name(t, NULL) < 0);
    for (int i = 0; i < 3; i++)
        pps_trace_named(t, PPS_TRACE_RANGE, 0, ids[i], 100 * i, 100 * i + 50);
    flush_ok(t);
    int32_t late = pps_trace_name(t, "late name");
    CHECK_EQ_INT(late, 3);
    pps_trace_named(t, PPS_TRACE_RANGE, 0, late, 1000, 1050);
    pps_trace_named(t, PPS_TRACE_F, 0, ids[1], 2000, 2050); /* a pipeline kind with a name */
    close_ok(t);

    struct pps_run *run = load_ok(dir);
    if (run) {
        CHECK_EQ_INT(run->n_spans, 5);
        CHECK_EQ_INT(run->n_names, 4);
        const struct pps_stage_spans *b = &run->stages[0];
        static const char *want[] = {"fwd", "bwd", "allreduce", "late name", "bwd"};
        for (size_t i = 0; i < b->n && i < 5; i++) {
            const char *name = pps_run_span_name(run, &b->spans[i]);
            CHECK(name && !strcmp(name, want[i]));
        }
    }
    pps_run_free(run);
    tmpdir_free(dir);
}

/* 40 nested begins: the innermost 8 are dropped and counted, their ends ignored, and the 32
 * kept spans nest properly with the right fields. */
static void test_nesting_deeper_than_32_is_dropped(void)
{
    char *dir = tmpdir_new();
    struct pps_trace_options o = opts(dir, 256, 0);
    struct pps_tracer *t = open_ok(&o);

    for (int d = 0; d < 40; d++)
        pps_trace_begin(t, PPS_TRACE_RANGE, 0, 0, d);
    for (int d = 0; d < 40; d++)
        pps_trace_end(t);
    CHECK_EQ_INT(pps_trace_dropped(t), 8);
    /* the stack is balanced again: the next pair is kept */
    pps_trace_begin(t, PPS_TRACE_OPT, 0, 0, -1);
    pps_trace_end(t);
    CHECK_EQ_INT(pps_trace_dropped(t), 8);
    close_ok(t);

    struct pps_run *run = load_ok(dir);
    if (run) {
        CHECK_EQ_INT(count_kind(run, PPS_SPAN_RANGE), 32);
        CHECK_EQ_INT(count_kind(run, PPS_SPAN_OPT), 1);
        CHECK_EQ_INT(sum_dropped(run), 8);
        /* Depth d (its mb) holds depth d + 1. Found by mb, not by position: with TSC stamps
         * two begins can fall in one nanosecond, and then the inner span sorts first. */
        const struct pps_stage_spans *b = &run->stages[0];
        const struct pps_span *at[32] = {0};
        for (size_t i = 0; i < b->n; i++)
            if (b->spans[i].kind == PPS_SPAN_RANGE && b->spans[i].mb >= 0 && b->spans[i].mb < 32 &&
                !at[b->spans[i].mb])
                at[b->spans[i].mb] = &b->spans[i];
        for (int d = 0; d < 32; d++)
            CHECK(at[d] != NULL);
        for (int d = 0; d + 1 < 32 && at[d] && at[d + 1]; d++)
            CHECK(at[d]->start_ns <= at[d + 1]->start_ns && at[d + 1]->end_ns <= at[d]->end_ns);
    }
    pps_run_free(run);
    tmpdir_free(dir);
}

static void test_end_without_begin_is_ignored(void)
{
    char *dir = tmpdir_new();
    struct pps_trace_options o = opts(dir, 64, 0);
    struct pps_tracer *t = open_ok(&o);

    pps_trace_end(t); /* the thread's very first call */
    pps_trace_end(t);
    pps_trace_begin(t, PPS_TRACE_F, 0, 0, 1);
    pps_trace_end(t);
    pps_trace_end(t);
    pps_trace_begin(t, PPS_TRACE_B, 0, 0, 1);
    pps_trace_end(t);
    CHECK_EQ_INT(pps_trace_dropped(t), 0);
    close_ok(t);

    struct pps_run *run = load_ok(dir);
    if (run) {
        CHECK_EQ_INT(run->n_spans, 2);
        CHECK_EQ_INT(count_kind(run, PPS_SPAN_F), 1);
        CHECK_EQ_INT(count_kind(run, PPS_SPAN_B), 1);
        CHECK_EQ_INT(sum_dropped(run), 0);
    }
    pps_run_free(run);
    tmpdir_free(dir);
}

/* A span the store would refuse would fail its whole batch: it is dropped alone instead. */
static void test_invalid_spans_are_dropped_alone(void)
{
    char *dir = tmpdir_new();
    struct pps_trace_options o = opts(dir, 64, 0);
    struct pps_tracer *t = open_ok(&o);

    pps_trace_record(t, PPS_TRACE_F, 0, 0, 0, 1, 2);
    pps_trace_record(t, 0, 0, 0, 0, 1, 2);
    pps_trace_record(t, PPS_TRACE_RANGE + 1, 0, 0, 0, 1, 2);
    pps_trace_record(t, PPS_TRACE_F, -1, 0, 0, 1, 2);
    pps_trace_record(t, PPS_TRACE_F, 40000, 0, 0, 1, 2);
    pps_trace_record(t, PPS_TRACE_F, 0, 40000, 0, 1, 2);
    pps_trace_p2p(t, -3, 0, 1, 0, 8, 1, 2);
    pps_trace_begin(t, 99, 0, 0, 0); /* dropped, and its end pairs with it */
    pps_trace_begin(t, PPS_TRACE_B, 0, 0, 0);
    pps_trace_end(t);
    pps_trace_end(t);
    pps_trace_record(t, PPS_TRACE_W, 0, -1, 0, 3, 4);
    CHECK_EQ_INT(pps_trace_dropped(t), 7);
    close_ok(t);

    struct pps_run *run = load_ok(dir);
    if (run) {
        CHECK_EQ_INT(run->n_spans, 3);
        CHECK_EQ_INT(count_kind(run, PPS_SPAN_F), 1);
        CHECK_EQ_INT(count_kind(run, PPS_SPAN_B), 1);
        CHECK_EQ_INT(count_kind(run, PPS_SPAN_W), 1);
        CHECK_EQ_INT(sum_dropped(run), 7);
    }
    pps_run_free(run);
    tmpdir_free(dir);
}

/* One metrics row per iteration (stage -1) with the spans dropped in it, the last one stored at
 * close; drops before the first mark as iteration -1; the caller's own metrics beside them. */
static void test_iteration_drop_rows_and_metrics(void)
{
    char *dir = tmpdir_new();
    struct pps_trace_options o = opts(dir, 8, 0); /* 8 slots, drained only on flush */
    struct pps_tracer *t = open_ok(&o);

    for (int i = 0; i < 9; i++) /* 1 dropped before any mark */
        pps_trace_record(t, PPS_TRACE_F, 0, 0, i, i, i + 1);
    flush_ok(t);
    pps_trace_iteration(t, 0);
    for (int i = 0; i < 10; i++) /* 2 dropped */
        pps_trace_record(t, PPS_TRACE_F, 0, 0, i, 100 + i, 101 + i);
    flush_ok(t);
    pps_trace_iteration(t, 1);
    for (int i = 0; i < 3; i++) /* none dropped */
        pps_trace_record(t, PPS_TRACE_B, 0, 0, i, 200 + i, 201 + i);
    flush_ok(t);
    pps_trace_iteration(t, 2);
    for (int i = 0; i < 20; i++) /* 12 dropped */
        pps_trace_record(t, PPS_TRACE_W, 0, 0, i, 300 + i, 301 + i);
    pps_trace_metric(t, 2, 0, 0.5, NAN, 1 << 20, 3);
    CHECK_EQ_INT(pps_trace_dropped(t), 15);
    close_ok(t);

    struct pps_run *run = load_ok(dir);
    if (!run)
        goto out;
    CHECK_EQ_INT(run->n_spans, 8 + 8 + 3 + 8);
    CHECK_EQ_INT(sum_dropped(run), 15);
    /* sorted by iter, then stage */
    CHECK_EQ_INT(run->n_metrics, 5);
    static const int want_iter[] = {-1, 0, 1, 2, 2}, want_stage[] = {-1, -1, -1, -1, 0};
    static const int want_dropped[] = {1, 2, 0, 12, -1};
    for (size_t i = 0; i < run->n_metrics && i < 5; i++) {
        const struct pps_metric *m = &run->metrics[i];
        CHECK_EQ_INT(m->iter, want_iter[i]);
        CHECK_EQ_INT(m->stage, want_stage[i]);
        CHECK_EQ_INT(m->dropped, want_dropped[i]);
        if (m->stage == 0) {
            CHECK_NEAR(m->loss, 0.5, 0);
            CHECK(isnan(m->grad_norm));
            CHECK_EQ_INT(m->act_bytes, 1 << 20);
            CHECK_EQ_INT(m->pending_w, 3);
        } else {
            CHECK(isnan(m->loss));
            CHECK_EQ_INT(m->act_bytes, -1);
        }
    }
    /* the spans carry the iteration current when they were recorded */
    for (size_t i = 0; i < run->stages[0].n; i++) {
        const struct pps_span *s = &run->stages[0].spans[i];
        int want = s->start_ns < 100 ? -1 : s->start_ns < 200 ? 0 : s->start_ns < 300 ? 1 : 2;
        CHECK_EQ_INT(s->iter, want);
    }
out:
    pps_run_free(run);
    tmpdir_free(dir);
}

/* `ppscope report` shows the drops the tracer stored: the analysis sums the metrics rows. */
static void test_report_shows_drops(void)
{
    char *dir = tmpdir_new(), args[700], out[8192];
    struct pps_trace_options o = opts(dir, 4, 0);
    struct pps_tracer *t = open_ok(&o);

    pps_trace_meta(t, "schedule", "1f1b");
    pps_trace_meta_int(t, "p", 1);
    pps_trace_meta_int(t, "m", 7);
    for (int it = 0; it < 2; it++) {
        pps_trace_iteration(t, it);
        for (int i = 0; i < 7; i++) /* 3 dropped per iteration */
            pps_trace_record(t, PPS_TRACE_F, 0, 0, i, 1000 * it + 10 * i, 1000 * it + 10 * i + 5);
        flush_ok(t);
    }
    close_ok(t);
    snprintf(args, sizeof(args), "'%s'", dir);
    int rc = run_report(args, out, sizeof(out));
    if (rc == -1) {
        tmpdir_free(dir);
        TEST_SKIP("PPS_BIN is not set");
    }
    CHECK_EQ_INT(rc, 0);
    CHECK_STR_CONTAINS(out, "dropped   6 spans");
    snprintf(args, sizeof(args), "--json '%s'", dir);
    CHECK_EQ_INT(run_report(args, out, sizeof(out)), 0);
    CHECK_STR_CONTAINS(out, "\"dropped\":6");
    tmpdir_free(dir);
}

/* Metadata from many threads at once; a later value replaces an earlier one. */
struct meta_arg {
    struct pps_tracer *t;
    int i;
};

static void *meta_thread(void *p)
{
    struct meta_arg *a = p;
    char key[32];
    snprintf(key, sizeof(key), "key%d", a->i);
    for (int k = 0; k < 50; k++)
        CHECK_EQ_INT(pps_trace_meta_int(a->t, key, k), 0);
    return NULL;
}

static void test_meta_from_threads(void)
{
    char *dir = tmpdir_new();
    struct pps_trace_options o = opts(dir, 64, 1);
    struct pps_tracer *t = open_ok(&o);
    struct meta_arg args[4];

    CHECK_EQ_INT(pps_trace_meta(t, "model", "tiny"), 0);
    CHECK_EQ_INT(pps_trace_meta(t, "model", "tiny-2"), 0);
    CHECK_EQ_INT(pps_trace_meta(t, NULL, "x"), PPS_EINVAL);
    CHECK_EQ_INT(pps_trace_meta(t, "", "x"), PPS_EINVAL);
    CHECK_EQ_INT(pps_trace_meta(t, "x", NULL), PPS_EINVAL);
    CHECK_EQ_INT(pps_trace_meta(NULL, "x", "y"), PPS_EINVAL);
    for (int i = 0; i < 4; i++)
        args[i] = (struct meta_arg){t, i};
    run_threads(4, meta_thread, args, sizeof(args[0]));
    close_ok(t);

    struct pps_run *run = load_ok(dir);
    if (run) {
        CHECK(pps_run_meta(run, "model") && !strcmp(pps_run_meta(run, "model"), "tiny-2"));
        for (int i = 0; i < 4; i++) {
            char key[32];
            snprintf(key, sizeof(key), "key%d", i);
            CHECK(pps_run_meta(run, key) && !strcmp(pps_run_meta(run, key), "49"));
        }
    }
    pps_run_free(run);
    tmpdir_free(dir);
}

struct rec_arg {
    struct pps_tracer *t;
    int stage, n;
    pthread_barrier_t *bar; /* waited on after recording, if set */
};

static void *record_thread(void *p)
{
    struct rec_arg *a = p;
    for (int i = 0; i < a->n; i++) {
        pps_trace_begin(a->t, PPS_TRACE_F, a->stage, 0, i);
        pps_trace_end(a->t);
    }
    if (a->bar) {
        int rc = pthread_barrier_wait(a->bar);
        CHECK(rc == 0 || rc == PTHREAD_BARRIER_SERIAL_THREAD);
    }
    return NULL;
}

static void *begin_only_thread(void *p)
{
    pps_trace_begin(p, PPS_TRACE_F, 3, 0, 0);
    return NULL;
}

/* max_threads threads get a buffer; the others' spans are dropped and counted. */
static void test_threads_beyond_max_are_dropped(void)
{
    char *dir = tmpdir_new();
    struct pps_trace_options o = opts(dir, 64, 0);
    o.max_threads = 2;
    struct pps_tracer *t = open_ok(&o);
    struct rec_arg args[4];
    pthread_barrier_t bar;

    /* All four stay alive until all have recorded, so none takes over another's buffer. */
    CHECK_EQ_INT(pthread_barrier_init(&bar, NULL, 4), 0);
    for (int i = 0; i < 4; i++)
        args[i] = (struct rec_arg){t, i, 10, &bar};
    run_threads(4, record_thread, args, sizeof(args[0]));
    pthread_barrier_destroy(&bar);
    CHECK_EQ_INT(pps_trace_dropped(t), 20);
    close_ok(t);

    struct pps_run *run = load_ok(dir);
    if (run) {
        CHECK_EQ_INT(run->n_spans, 20);
        CHECK_EQ_INT(sum_dropped(run), 20);
        int full = 0;
        for (int s = 0; s < run->n_stages; s++) {
            CHECK(run->stages[s].n == 0 || run->stages[s].n == 10);
            full += run->stages[s].n == 10;
        }
        CHECK_EQ_INT(full, 2);
    }
    pps_run_free(run);
    tmpdir_free(dir);
}

struct init_arg {
    struct pps_tracer *t;
    int rc;
};

static void *init_thread(void *p)
{
    struct init_arg *a = p;
    a->rc = pps_trace_thread_init(a->t);
    return NULL;
}

/* pps_trace_thread_init takes the thread's buffer up front, and says when it was refused. */
static void test_thread_init_claims_or_refuses(void)
{
    char *dir = tmpdir_new();
    struct pps_trace_options o = opts(dir, 64, 0);
    o.max_threads = 1;
    struct pps_tracer *t = open_ok(&o);
    struct init_arg a = {t, 1};

    CHECK_EQ_INT(pps_trace_thread_init(NULL), 0);
    CHECK_EQ_INT(pps_trace_thread_init(t), 0);
    CHECK_EQ_INT(pps_trace_thread_init(t), 0); /* twice is fine: the same buffer */
    run_threads(1, init_thread, &a, sizeof(a));
    CHECK_EQ_INT(a.rc, PPS_ENOMEM); /* the main thread holds the only buffer */
    pps_trace_record(t, PPS_TRACE_F, 0, 0, 0, 1, 2);
    CHECK_EQ_INT(pps_trace_dropped(t), 0);
    close_ok(t);
    tmpdir_free(dir);
}

/* A thread that exits hands its buffer back: with max_threads 1, threads that run one after
 * another (and then the main thread) all record, and nothing is dropped. */
static void test_exited_thread_buffer_is_reused(void)
{
    char *dir = tmpdir_new();
    struct pps_trace_options o = opts(dir, 64, 0);
    o.max_threads = 1;
    struct pps_tracer *t = open_ok(&o);

    for (int i = 0; i < 3; i++) {
        struct rec_arg a = {t, i, 10, NULL};
        run_threads(1, record_thread, &a, sizeof(a));
    }
    /* A thread that exits inside a begin leaves no open frame behind: the next owner has all
     * 32 levels. */
    run_threads(1, begin_only_thread, t, 0);
    for (int d = 0; d < 32; d++)
        pps_trace_begin(t, PPS_TRACE_B, 4, 0, d);
    for (int d = 0; d < 32; d++)
        pps_trace_end(t);
    CHECK_EQ_INT(pps_trace_dropped(t), 0);
    close_ok(t);

    struct pps_run *run = load_ok(dir);
    if (run) {
        CHECK_EQ_INT(run->n_spans, 30 + 32);
        for (int s = 0; s < 3 && s < run->n_stages; s++)
            CHECK_EQ_INT(run->stages[s].n, 10);
    }
    pps_run_free(run);
    tmpdir_free(dir);
}

/* Regression: a thread's cache is keyed by the tracer's id, not its address. A tracer opened
 * where a closed one was (malloc hands the block back) must get its own buffer, not the freed
 * one of its predecessor. */
static void test_new_tracer_at_old_address_gets_own_buffer(void)
{
    enum { ROUNDS = 16 };
    char *dir = tmpdir_new();
    struct pps_tracer *last = NULL;
    int reused = 0;

    /* Tracer k writes shard k; the main thread records into each. */
    for (int k = 0; k < ROUNDS; k++) {
        struct pps_trace_options o = opts(dir, 64, 0);
        o.rank = k;
        o.world = ROUNDS;
        struct pps_tracer *t = open_ok(&o);
        reused += t == last;
        last = t;
        for (int i = 0; i < 5; i++)
            pps_trace_record(t, PPS_TRACE_F, k, 0, i, i, i + 1);
        close_ok(t);
    }
    struct pps_run *run = load_ok(dir);
    if (run) {
        CHECK_EQ_INT(run->n_shards, ROUNDS);
        CHECK_EQ_INT(run->n_spans, 5 * ROUNDS);
        for (int k = 0; k < ROUNDS && k < run->n_stages; k++) {
            CHECK_EQ_INT(run->stages[k].n, 5);
            for (size_t i = 0; i < run->stages[k].n; i++)
                CHECK_EQ_INT(run->stages[k].spans[i].rank, k);
        }
    }
    pps_run_free(run);
    fprintf(stderr, "  (%d of %d tracers opened at the address of the one before)\n", reused,
            ROUNDS - 1);
    tmpdir_free(dir);
}

/* flush waits until everything recorded before it is in the shard, where another connection
 * reads it while the tracer is still open; with flush_interval_ms 0 nothing else is written. */
static void test_flush_commits_everything_before_it(void)
{
    char *dir = tmpdir_new();
    struct pps_trace_options o = opts(dir, 1 << 16, 0);
    struct pps_tracer *t = open_ok(&o);
    struct pps_run *run;

    for (int i = 0; i < 40000; i++) /* more than one batch */
        pps_trace_record(t, PPS_TRACE_F, 0, 0, i, i, i + 1);
    sleep_ms(30);
    if ((run = load_ok(dir))) {
        CHECK_EQ_INT(run->n_spans, 0); /* no periodic flush with interval 0 */
        CHECK_EQ_INT(run->complete, 0);
    }
    pps_run_free(run);
    flush_ok(t);
    if ((run = load_ok(dir)))
        CHECK_EQ_INT(run->n_spans, 40000);
    pps_run_free(run);
    pps_trace_record(t, PPS_TRACE_B, 0, 0, 0, 50000, 50001);
    flush_ok(t);
    if ((run = load_ok(dir)))
        CHECK_EQ_INT(run->n_spans, 40001);
    pps_run_free(run);
    close_ok(t);
    tmpdir_free(dir);
}

/* With an interval, the flusher writes on its own: spans show up without a flush. */
static void test_periodic_flusher_writes_without_flush(void)
{
    char *dir = tmpdir_new();
    struct pps_trace_options o = opts(dir, 1024, 5);
    struct pps_tracer *t = open_ok(&o);
    size_t seen = 0;

    for (int i = 0; i < 100; i++)
        pps_trace_record(t, PPS_TRACE_F, 0, 0, i, i, i + 1);
    for (int tries = 0; tries < 500 && seen < 100; tries++) { /* up to 5 s on a loaded box */
        struct pps_run *run = load_ok(dir);
        seen = run ? run->n_spans : 0;
        pps_run_free(run);
        if (seen < 100)
            sleep_ms(10);
    }
    CHECK_EQ_INT(seen, 100);
    close_ok(t);
    tmpdir_free(dir);
}

/* A child forked while the tracer is open (a data loader's workers) has no flusher: flush and
 * close refuse at once instead of waiting forever or closing the parent's SQLite connection, the
 * locked calls refuse, and recording does no harm. The parent's shard is unaffected. */
static void test_forked_child_leaves_tracer_alone(void)
{
    char *dir = tmpdir_new();
    struct pps_trace_options o = opts(dir, 64, 1);
    struct pps_tracer *t = open_ok(&o);

    int fds[2];
    char verdict = 'x';

    /* The child answers on a pipe: its exit status is valgrind's when run under it (the child
     * leaks the parent's tracer on purpose). */
    CHECK_EQ_INT(pipe(fds), 0);
    pps_trace_record(t, PPS_TRACE_F, 0, 0, 0, 1, 2);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        struct pps_err err = {0};
        int bad = 0;
        struct rec_arg a = {t, 1, 10, NULL};
        pps_trace_record(t, PPS_TRACE_F, 0, 0, 1, 3, 4); /* registered thread: its own copy */
        run_threads(1, record_thread, &a, sizeof(a));    /* a new thread: dropped */
        pps_trace_iteration(t, 5);
        bad |= pps_trace_meta(t, "k", "v") != PPS_EINVAL;
        bad |= pps_trace_name(t, "n") != PPS_EINVAL;
        bad |= pps_trace_flush(t, &err) != PPS_EINVAL;
        bad |= strstr(err.msg, "forked child") == NULL;
        bad |= pps_trace_close(t, &err) != PPS_EINVAL;
        verdict = bad || test_failures_ ? 'F' : 'P';
        _exit(write(fds[1], &verdict, 1) == 1 ? 0 : 1);
    }
    close(fds[1]);
    CHECK(read(fds[0], &verdict, 1) == 1 && verdict == 'P');
    close(fds[0]);
    CHECK(waitpid(pid, NULL, 0) == pid);
    pps_trace_record(t, PPS_TRACE_B, 0, 0, 0, 5, 6);
    flush_ok(t);
    close_ok(t);
    struct pps_run *run = load_ok(dir);
    if (run) {
        CHECK_EQ_INT(run->n_spans, 2);
        CHECK(pps_run_meta(run, "k") == NULL);
    }
    pps_run_free(run);
    tmpdir_free(dir);
}

/* PPSCOPE_CLOCK_SKEW_NS, read at open, shifts pps_trace_now() and the spans. */
static void test_clock_skew_from_environment(void)
{
    char *dir = tmpdir_new(), sub[600];
    struct timespec ts;

    setenv("PPSCOPE_CLOCK_SKEW_NS", "5000000000", 1);
    struct pps_trace_options o = opts(join(sub, sizeof(sub), dir, "skewed"), 16, 0);
    struct pps_tracer *t = open_ok(&o);
    clock_gettime(CLOCK_MONOTONIC, &ts);
    int64_t raw = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
    int64_t d = pps_trace_now() - raw;
    CHECK(d >= 5000000000LL && d < 5000000000LL + 1000000000LL);
    close_ok(t);

    setenv("PPSCOPE_CLOCK_SKEW_NS", "not a number", 1);
    o = opts(join(sub, sizeof(sub), dir, "garbage"), 16, 0);
    t = open_ok(&o);
    clock_gettime(CLOCK_MONOTONIC, &ts);
    raw = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
    d = pps_trace_now() - raw;
    CHECK(d >= 0 && d < 1000000000LL);
    close_ok(t);
    unsetenv("PPSCOPE_CLOCK_SKEW_NS");
    tmpdir_free(dir);
}

/* A full disk (PPSCOPE_TRACE_FULL_AFTER): spans written before it are kept, every later batch is
 * counted as dropped with its iterations, flush and close say why, and the shard stays
 * incomplete. Iterations 0-2 flushed one by one, then 3-5 refused. */
static void test_full_disk_counts_what_it_could_not_write(void)
{
    char *dir = tmpdir_new();
    struct pps_trace_options o = opts(dir, 256, 0);
    struct pps_trace_stats ts;
    struct pps_err err = {0};
    struct pps_tracer *t;

    setenv("PPSCOPE_TRACE_FULL_AFTER", "30", 1);
    t = open_ok(&o);
    unsetenv("PPSCOPE_TRACE_FULL_AFTER");
    for (int it = 0; it < 6; it++) {
        pps_trace_iteration(t, it);
        for (int k = 0; k < 10; k++)
            pps_trace_record(t, PPS_TRACE_F, 0, 0, k, 100 * it + k, 100 * it + k + 1);
        if (it < 3)
            CHECK_EQ_INT(pps_trace_flush(t, NULL), 0);
    }
    CHECK_EQ_INT(pps_trace_flush(t, &err), PPS_EIO);
    CHECK(strstr(err.msg, "database or disk is full") != NULL);
    pps_trace_stats(t, &ts);
    CHECK_EQ_INT(ts.written, 30);
    CHECK_EQ_INT(ts.unwritten, 30);
    CHECK_EQ_INT(ts.dropped, 30);
    CHECK_EQ_INT(ts.unwritten_first_iter, 3);
    CHECK_EQ_INT(ts.unwritten_last_iter, 5);
    CHECK_EQ_INT(pps_trace_dropped(t), 30);
    CHECK_EQ_INT(pps_trace_close(t, &err), PPS_EIO);

    struct pps_run *run = load_ok(dir);
    if (run) {
        CHECK_EQ_INT(count_kind(run, PPS_SPAN_F), 30);
        CHECK_EQ_INT(run->complete, 0);
        pps_run_free(run);
    }
    pps_trace_stats(NULL, &ts);
    CHECK_EQ_INT(ts.written, 0);
    CHECK_EQ_INT(ts.unwritten_first_iter, -1);
    tmpdir_free(dir);
}

static const struct test_case cases[] = {
    TEST(test_options_defaults),
    TEST(test_open_bad_options),
    TEST(test_clock_sync_without_mpi_fails_cleanly),
    TEST(test_open_existing_shard_fails),
    TEST(test_close_null_is_noop),
    TEST(test_device_activity_on_or_said_why),
    TEST(test_every_call_round_trips),
    TEST(test_names_interned_and_resolved),
    TEST(test_nesting_deeper_than_32_is_dropped),
    TEST(test_end_without_begin_is_ignored),
    TEST(test_invalid_spans_are_dropped_alone),
    TEST(test_iteration_drop_rows_and_metrics),
    TEST(test_report_shows_drops),
    TEST(test_meta_from_threads),
    TEST(test_threads_beyond_max_are_dropped),
    TEST(test_thread_init_claims_or_refuses),
    TEST(test_exited_thread_buffer_is_reused),
    TEST(test_new_tracer_at_old_address_gets_own_buffer),
    TEST(test_flush_commits_everything_before_it),
    TEST(test_periodic_flusher_writes_without_flush),
    TEST(test_forked_child_leaves_tracer_alone),
    TEST(test_clock_skew_from_environment),
    TEST(test_full_disk_counts_what_it_could_not_write),
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    return test_main(cases, argc, argv);
}
