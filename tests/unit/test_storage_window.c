/*
 * test_storage_window.c - pps_run_load_window(): for windows anywhere (before the run, across
 * it, on span edges exactly, after it), the spans are those of pps_run_load() that meet the
 * window, in the same order, with every field: over a run of three ranks whose clocks are moved
 * (a constant offset, a drifting one), with long spans that start far before a window, instants
 * and device-clock spans; from the directory and from the merged file; from a file written before
 * span_max_ns (read whole). And the window is read through the index: a damaged row outside it is
 * never read, one inside it is refused. The writer keeps span_max_ns over its batches.
 */
#include <sqlite3.h>

#include "test.h"
#include "unit/storage_fixture.h"

#define RANKS   3
#define BATCHES 8
#define PER     400

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t next_rand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* Span i of a batch of rank r: mostly short ops one after another, some instants, some long,
 * a few device kernels; a RANGE that covers the whole batch. */
static struct pps_span batch_span(int r, int b, int i, int32_t name)
{
    struct pps_span s;
    int64_t base = 10000000LL * b + 1000 * i + 7 * r;
    uint64_t x = next_rand();

    memset(&s, 0, sizeof(s));
    s.stage = (int16_t)r;
    s.mb = (int32_t)(i % 4);
    s.iter = b;
    s.peer = -1;
    s.name_id = -1;
    s.clock = PPS_CLOCK_HOST;
    s.start_ns = base;
    switch (x % 10) {
    case 0: /* an instant */
        s.kind = PPS_SPAN_WAIT;
        s.peer = (r + 1) % RANKS;
        s.end_ns = s.start_ns;
        break;
    case 1: /* a kernel on the device clock */
        s.kind = PPS_SPAN_KERNEL;
        s.clock = PPS_CLOCK_DEVICE;
        s.end_ns = s.start_ns + 300 + (int64_t)(x >> 40) % 5000;
        break;
    case 2: /* long: reaches over many later starts */
        s.kind = PPS_SPAN_SEND;
        s.peer = (r + 1) % RANKS;
        s.bytes = 64;
        s.end_ns = s.start_ns + 200000 + (int64_t)(x >> 32) % 3000000;
        break;
    default:
        s.kind = (uint8_t)(PPS_SPAN_F + (int)(x % 3));
        s.end_ns = s.start_ns + 1 + (int64_t)(x >> 40) % 900;
    }
    if (i == 0) { /* the batch's range, written first: the longest of its batch */
        s.kind = PPS_SPAN_RANGE;
        s.name_id = name;
        s.end_ns = s.start_ns + 9000000 + 1000000LL * b;
    }
    return s;
}

/* Three ranks: rank 1's clock runs 5..9 us ahead (drifting), rank 2's 3 us behind. */
static void write_window_run(const char *dir)
{
    for (int r = 0; r < RANKS; r++) {
        struct pps_store_writer *w = NULL;
        struct pps_err err = {0, ""};
        struct pps_span spans[PER];
        int32_t name = -1;

        CHECK_EQ_INT(pps_store_writer_open(dir, r, &w, &err), 0);
        if (!w)
            return;
        CHECK_EQ_INT(pps_store_writer_meta(w, "schedule", "1f1b", &err), 0);
        CHECK_EQ_INT(pps_store_writer_meta_int(w, "p", RANKS, &err), 0);
        CHECK_EQ_INT(pps_store_writer_meta_int(w, "m", 4, &err), 0);
        if (r == 1) {
            CHECK_EQ_INT(pps_store_writer_meta_int(w, "clock_offset_start_ns", 5000, &err), 0);
            CHECK_EQ_INT(pps_store_writer_meta_int(w, "clock_offset_end_ns", 9000, &err), 0);
            CHECK_EQ_INT(pps_store_writer_meta_int(w, "clock_sync_start_ns", 0, &err), 0);
            CHECK_EQ_INT(pps_store_writer_meta_int(w, "clock_sync_end_ns", 80000000, &err), 0);
        }
        if (r == 2)
            CHECK_EQ_INT(pps_store_writer_meta_int(w, "clock_offset_start_ns", -3000, &err), 0);
        CHECK_EQ_INT(pps_store_writer_name(w, "train_step", &name, &err), 0);
        for (int b = 0; b < BATCHES; b++) {
            for (int i = 0; i < PER; i++)
                spans[i] = batch_span(r, b, i, name);
            CHECK_EQ_INT(pps_store_writer_spans(w, spans, PER, &err), 0);
        }
        CHECK_EQ_INT(pps_store_writer_close(w, 1, &err), 0);
    }
}

/* The definition, independently: [start, end) meets [t0, t1); an instant lies in it. */
static int meets(const struct pps_span *s, int64_t t0, int64_t t1)
{
    if (s->end_ns == s->start_ns)
        return t0 <= s->start_ns && s->start_ns < t1;
    return s->start_ns < t1 && s->end_ns > t0;
}

/* The window's run against the full run filtered: span for span, every field. */
static int same_as_filtered(const struct pps_run *full, const struct pps_run *win, int64_t t0,
                            int64_t t1)
{
    size_t total = 0;
    int ok = 1;

    for (int s = 0; s < full->n_stages; s++) {
        const struct pps_stage_spans *f = &full->stages[s];
        const struct pps_stage_spans *w = s < win->n_stages ? &win->stages[s] : NULL;
        size_t k = 0;

        for (size_t i = 0; i < f->n && ok; i++) {
            if (!meets(&f->spans[i], t0, t1))
                continue;
            ok = w && k < w->n && memcmp(&f->spans[i], &w->spans[k], sizeof(f->spans[i])) == 0;
            k++;
        }
        ok = ok && (w ? w->n : 0) == k;
        total += k;
        if (!ok) {
            fprintf(stderr, "  window [%lld, %lld): stage %d differs (%zu kept, window has %zu)\n",
                    (long long)t0, (long long)t1, s, k, w ? w->n : 0);
            return 0;
        }
    }
    if (win->n_spans != total || win->n_meta != full->n_meta || win->n_metrics != full->n_metrics ||
        win->n_names != full->n_names) {
        fprintf(stderr, "  window [%lld, %lld): %zu spans (want %zu), meta %zu/%zu\n",
                (long long)t0, (long long)t1, win->n_spans, total, win->n_meta, full->n_meta);
        return 0;
    }
    return 1;
}

/* One window of path, compared with the full load. */
static void check_windows_of(const char *path, const struct pps_run *full, int64_t t0, int64_t t1)
{
    struct pps_run *win = NULL;
    struct pps_err err = {0, ""};

    CHECK_EQ_INT(pps_run_load_window(path, t0, t1, &win, &err), 0);
    if (win)
        CHECK(same_as_filtered(full, win, t0, t1));
    else
        fprintf(stderr, "  %s\n", err.msg);
    pps_run_free(win);
}

/* Windows of every kind over path: each compared with the full load. */
static void check_windows(const char *path, const struct pps_run *full)
{
    struct pps_err err = {0, ""};
    int64_t edges[12];
    const struct pps_stage_spans *st = &full->stages[1];
    int n_edges = 0;

    CHECK(st->n > 100);
    if (st->n <= 100)
        return;
    /* Edges of real spans, exactly: a span ending at t0 is out, one starting at t1 is out. */
    edges[n_edges++] = st->spans[50].start_ns;
    edges[n_edges++] = st->spans[50].end_ns;
    edges[n_edges++] = st->spans[99].start_ns;
    edges[n_edges++] = st->spans[99].end_ns;
    edges[n_edges++] = full->t_min;
    edges[n_edges++] = full->t_max;
    for (int a = 0; a < n_edges; a++)
        for (int b = 0; b < n_edges; b++) {
            struct pps_run *win = NULL;
            int64_t t0 = edges[a], t1 = edges[b];
            if (t1 <= t0)
                continue;
            CHECK_EQ_INT(pps_run_load_window(path, t0, t1, &win, &err), 0);
            if (win)
                CHECK(same_as_filtered(full, win, t0, t1));
            pps_run_free(win);
        }
    for (int k = 0; k < 40; k++) {
        struct pps_run *win = NULL;
        int64_t span = full->t_max - full->t_min + 4000000;
        int64_t t0 = full->t_min - 2000000 + (int64_t)(next_rand() % (uint64_t)span);
        int64_t len = 1 + (int64_t)(next_rand() % (uint64_t)(k < 20 ? 20000 : 30000000));
        CHECK_EQ_INT(pps_run_load_window(path, t0, t0 + len, &win, &err), 0);
        if (!win) {
            fprintf(stderr, "  %s\n", err.msg);
            continue;
        }
        CHECK(same_as_filtered(full, win, t0, t0 + len));
        pps_run_free(win);
    }
    /* Wholly before and after the run: no span, the rest of the run whole. */
    for (int side = 0; side < 2; side++) {
        struct pps_run *win = NULL;
        int64_t t0 = side ? full->t_max + 1 : full->t_min - 1000000;
        CHECK_EQ_INT(pps_run_load_window(path, t0, t0 + 1000, &win, &err), 0);
        if (win) {
            CHECK_EQ_INT(win->n_spans, 0);
            CHECK_EQ_INT(win->n_metrics, full->n_metrics);
        }
        pps_run_free(win);
    }
}

static void test_windows_equal_the_full_load(void)
{
    char *dir = tmpdir_new();
    char merged[1024];
    struct pps_run *full = NULL, *full_merged = NULL;
    struct pps_err err = {0, ""};

    write_window_run(dir);
    CHECK_EQ_INT(pps_run_load(dir, &full, &err), 0);
    if (full) {
        CHECK_EQ_INT(full->n_spans, RANKS * BATCHES * PER);
        check_windows(dir, full);
    }
    join(merged, sizeof(merged), dir, "merged.db");
    CHECK_EQ_INT(pps_run_merge(dir, merged, &err), 0);
    CHECK_EQ_INT(pps_run_load(merged, &full_merged, &err), 0);
    if (full_merged)
        check_windows(merged, full_merged);
    pps_run_free(full);
    pps_run_free(full_merged);
    tmpdir_free(dir);
}

/* Runs SQL on a file; 0 on success. */
static int exec_sql(const char *path, const char *sql)
{
    sqlite3 *db = NULL;
    int rc = sqlite3_open(path, &db);
    if (rc == SQLITE_OK)
        rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
    sqlite3_close(db);
    return rc;
}

/* The longest span of every batch so far: what the writer left in meta. */
static void test_writer_keeps_span_max(void)
{
    char *dir = tmpdir_new();
    char shard[1024];
    struct pps_run *run = NULL;
    struct pps_err err = {0, ""};
    int64_t longest = 0;

    rng = 0x1234567ull;
    write_window_run(dir);
    CHECK_EQ_INT(pps_run_load(dir, &run, &err), 0);
    /* Stage 0's clock is rank 0's: aligned durations are raw ones (rank 1's drift stretches its
     * spans once aligned; the key is of the rows as written). */
    for (int s = 0; run && s < 1; s++)
        for (size_t i = 0; i < run->stages[s].n; i++) {
            const struct pps_span *sp = &run->stages[s].spans[i];
            if (sp->end_ns - sp->start_ns > longest)
                longest = sp->end_ns - sp->start_ns;
        }
    /* The last batch's range is the longest (9 ms + 7 ms); every rank says so of its own. */
    CHECK_EQ_INT(longest, 9000000 + 1000000LL * (BATCHES - 1));
    for (int r = 0; run && r < RANKS; r++) {
        char want[32];
        int found = 0;
        snprintf(want, sizeof(want), "%lld", (long long)longest);
        for (size_t i = 0; i < run->n_meta; i++)
            if (run->meta[i].rank == r && !strcmp(run->meta[i].key, "span_max_ns")) {
                found = 1;
                CHECK(!strcmp(run->meta[i].value, want));
            }
        CHECK(found);
    }
    pps_run_free(run);
    run = NULL;

    /* A file from before the key: read whole, the same spans. */
    join(shard, sizeof(shard), dir, "rank-00001.db");
    CHECK_EQ_INT(exec_sql(shard, "DELETE FROM meta WHERE key = 'span_max_ns';"), 0);
    CHECK_EQ_INT(pps_run_load(dir, &run, &err), 0);
    if (run)
        check_windows(dir, run);
    pps_run_free(run);
    tmpdir_free(dir);
}

/* The window reads its own rows through the index: a damaged row far from it is never read. */
static void test_window_reads_only_its_rows(void)
{
    char *dir = tmpdir_new();
    char shard[1024];
    struct pps_run *run = NULL;
    struct pps_err err = {0, ""};
    int64_t far;

    rng = 0xabcdefull;
    write_window_run(dir);
    join(shard, sizeof(shard), dir, "rank-00000.db");
    /* Batch 7's op spans of rank 0 get an unknown kind (the index holds stage and start only). */
    CHECK_EQ_INT(exec_sql(shard, "UPDATE spans SET kind = 99 WHERE start_ns >= 70000000 AND kind "
                                 "IN (1, 2, 3);"),
                 0);
    CHECK(pps_run_load(dir, &run, &err) == PPS_EFORMAT);
    CHECK_STR_CONTAINS(err.msg, "kind 99");
    err = (struct pps_err){0, ""};
    far = 1000000; /* batch 0: rank 0's damaged rows start 69 ms later, its longest span is 16 ms */
    CHECK_EQ_INT(pps_run_load_window(dir, far, far + 100000, &run, &err), 0);
    CHECK(run && run->n_spans > 0);
    pps_run_free(run);
    run = NULL;
    CHECK(pps_run_load_window(dir, 70500000, 70600000, &run, &err) == PPS_EFORMAT);
    CHECK_STR_CONTAINS(err.msg, "kind 99");
    CHECK(run == NULL);
    CHECK(pps_run_load_window(dir, 5, 5, &run, &err) == PPS_EINVAL);
    CHECK(pps_run_load_window("/nonexistent/pps-window", 0, 10, &run, &err) == PPS_ENOENT);
    tmpdir_free(dir);
}

/* A span of stage on clock (1: the device's) from s0 to s1. */
static struct pps_span edge_span(int stage, int64_t s0, int64_t s1, int clock)
{
    struct pps_span s;

    memset(&s, 0, sizeof(s));
    s.kind = clock ? PPS_SPAN_KERNEL : PPS_SPAN_F;
    s.stage = (int16_t)stage;
    s.peer = -1;
    s.name_id = -1;
    s.clock = (uint8_t)clock;
    s.start_ns = s0;
    s.end_ns = s1;
    return s;
}

/* One rank 0 shard in a new directory: spans, and one meta key (NULL: none). */
static char *edge_run(const struct pps_span *spans, size_t n, const char *key, const char *value)
{
    char *dir = tmpdir_new();
    struct pps_store_writer *w = NULL;
    struct pps_err err = {0, ""};

    CHECK_EQ_INT(pps_store_writer_open(dir, 0, &w, &err), 0);
    if (key)
        CHECK_EQ_INT(pps_store_writer_meta(w, key, value, &err), 0);
    CHECK_EQ_INT(pps_store_writer_spans(w, spans, n, &err), 0);
    CHECK_EQ_INT(pps_store_writer_close(w, 1, &err), 0);
    return dir;
}

/* The window and the full load refuse a damaged file alike: rc, and the reason's words. */
static void refused_alike(const char *dir, const char *sql, const char *why)
{
    char shard[1024];
    struct pps_run *run = NULL;
    struct pps_err err = {0, ""};

    join(shard, sizeof(shard), dir, "rank-00000.db");
    CHECK_EQ_INT(exec_sql(shard, sql), 0);
    CHECK(pps_run_load(dir, &run, &err) == PPS_EFORMAT);
    CHECK_STR_CONTAINS(err.msg, why);
    err = (struct pps_err){0, ""};
    CHECK(pps_run_load_window(dir, 100, 200, &run, &err) == PPS_EFORMAT);
    CHECK_STR_CONTAINS(err.msg, "truncated or corrupted");
    CHECK(run == NULL);
}

/* What a hostile review found (each failed before its fix). */
static void test_window_edges(void)
{
    struct pps_span two[2] = {edge_span(0, 100, 200, 1), edge_span(0, 300, 400, 1)};
    struct pps_span bad = edge_span(0, INT64_MIN + 1, 10, 0);
    struct pps_store_writer *w = NULL;
    struct pps_run *full = NULL;
    struct pps_err err = {0, ""};
    char *dir;

    /* An offset of -2^63 (device spans only: the full load never applies it) is no overflow;
     * such a file is read whole. */
    dir = edge_run(two, 2, "clock_offset_start_ns", "-9223372036854775808");
    CHECK_EQ_INT(pps_run_load(dir, &full, &err), 0);
    if (full)
        check_windows_of(dir, full, 150, 350);
    pps_run_free(full);
    tmpdir_free(dir);

    /* Rows whose start is text, or whose stage is -1, lie outside the index's ranges: the
     * window finds them anyway, and refuses them as the full load does. */
    two[0] = edge_span(0, 100, 200, 0);
    two[1] = edge_span(0, 150, 160, 0); /* row 2, in the window */
    dir = edge_run(two, 2, NULL, NULL);
    refused_alike(dir, "UPDATE spans SET start_ns = 'x150' WHERE rowid = 2;", "start_ns is text");
    tmpdir_free(dir);
    dir = edge_run(two, 2, NULL, NULL);
    refused_alike(dir, "UPDATE spans SET stage = -1 WHERE rowid = 2;", "stage -1 out of range");
    tmpdir_free(dir);

    /* The writer stores what it is given (readers refuse a wild span): a length that would
     * overflow int64 (UBSan) is kept as the longest any two times a reader takes can be apart. */
    dir = tmpdir_new();
    CHECK_EQ_INT(pps_store_writer_open(dir, 0, &w, &err), 0);
    CHECK_EQ_INT(pps_store_writer_spans(w, &bad, 1, &err), 0);
    CHECK_EQ_INT(pps_store_writer_close(w, 1, &err), 0);
    {
        char shard[1024];
        sqlite3 *db = NULL;
        sqlite3_stmt *st = NULL;
        join(shard, sizeof(shard), dir, "rank-00000.db");
        CHECK_EQ_INT(sqlite3_open(shard, &db), SQLITE_OK);
        CHECK_EQ_INT(sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key = 'span_max_ns'", -1,
                                        &st, NULL),
                     SQLITE_OK);
        CHECK_EQ_INT(sqlite3_step(st), SQLITE_ROW);
        CHECK_EQ_INT(sqlite3_column_int64(st, 0), (((int64_t)1 << 62) - 1) * 2);
        sqlite3_finalize(st);
        sqlite3_close(db);
    }
    tmpdir_free(dir);
}

static const struct test_case cases[] = {
    TEST(test_windows_equal_the_full_load),
    TEST(test_writer_keeps_span_max),
    TEST(test_window_reads_only_its_rows),
    TEST(test_window_edges),
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    return test_main(cases, argc, argv);
}
