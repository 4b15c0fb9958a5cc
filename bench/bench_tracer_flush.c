/*
 * bench_tracer_flush.c - how fast the tracer's flusher moves spans from the threads' buffers into
 * SQLite, against a bare loop that inserts the same rows with one prepared statement, measured in
 * the same run. Goals: at least 0.8x the bare loop, and at least 1M spans/s.
 *
 * Fair baseline: the same schema (a shard created by the store writer and closed, then opened
 * with SQLite directly), the same pragmas (WAL, synchronous=NORMAL), one transaction per 16384
 * rows (the flusher's batch), the same rows. The tracer side records every span first (4 threads'
 * buffers, flush_interval_ms 0), then times pps_trace_flush(): drain, names, metadata and the
 * batches' transactions. A second baseline, 64 rows per INSERT statement (what the store writer
 * does), is printed for information.
 */
#include <pthread.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ppscope/trace.h"
#include "storage.h"

#define THREADS 4
#define PER     (1 << 18) /* spans per thread per repetition */
#define TOTAL   (THREADS * PER)
#define BATCH   16384
#define REPS    5
#define MULTI   64

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* The rows both sides write: thread k's span i. */
static void make_span(struct pps_span *s, int k, int i, int rep)
{
    memset(s, 0, sizeof(*s));
    s->kind = (uint8_t)(1 + i % 3);
    s->stage = (int16_t)k;
    s->chunk = 0;
    s->mb = i;
    s->iter = rep;
    s->start_ns = (int64_t)rep * 1000000000 + (int64_t)i * 100;
    s->end_ns = s->start_ns + 50;
    s->peer = -1;
    s->name_id = -1;
}

struct rec_arg {
    struct pps_tracer *t;
    int k, rep;
};

static void *record_main(void *p)
{
    struct rec_arg *a = p;
    for (int i = 0; i < PER; i++) {
        struct pps_span s;
        make_span(&s, a->k, i, a->rep);
        pps_trace_record(a->t, s.kind, s.stage, s.chunk, s.mb, s.start_ns, s.end_ns);
    }
    return NULL;
}

/* One repetition of the tracer side: spans/s of the flush, or -1. */
static double tracer_rep(struct pps_tracer *t, int rep)
{
    pthread_t th[THREADS];
    struct rec_arg args[THREADS];
    struct pps_err err = {0};
    double t0;

    for (int k = 0; k < THREADS; k++) {
        args[k] = (struct rec_arg){t, k, rep};
        if (pthread_create(&th[k], NULL, record_main, &args[k]) != 0)
            return -1;
    }
    for (int k = 0; k < THREADS; k++)
        pthread_join(th[k], NULL);
    t0 = now_s();
    if (pps_trace_flush(t, &err) != 0) {
        fprintf(stderr, "bench_tracer_flush: %s\n", err.msg);
        return -1;
    }
    return TOTAL / (now_s() - t0);
}

static int exec(sqlite3 *db, const char *sql)
{
    char *msg = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK) {
        fprintf(stderr, "bench_tracer_flush: %s: %s\n", sql, msg ? msg : "?");
        sqlite3_free(msg);
        return -1;
    }
    return 0;
}

static int bind_row(sqlite3_stmt *st, int base, const struct pps_span *s)
{
    return sqlite3_bind_int(st, base + 1, s->kind) | sqlite3_bind_int(st, base + 2, s->stage) |
           sqlite3_bind_int(st, base + 3, s->chunk) | sqlite3_bind_int(st, base + 4, s->mb) |
           sqlite3_bind_int(st, base + 5, s->iter) | sqlite3_bind_int64(st, base + 6, s->start_ns) |
           sqlite3_bind_int64(st, base + 7, s->end_ns) | sqlite3_bind_int(st, base + 8, s->peer) |
           sqlite3_bind_int64(st, base + 9, s->bytes) |
           sqlite3_bind_int(st, base + 10, s->name_id) | sqlite3_bind_int(st, base + 11, s->clock) |
           sqlite3_bind_int64(st, base + 12, s->corr) | sqlite3_bind_int(st, base + 13, 0);
}

/* One repetition of a bare insert loop, rows statements of `rows` rows each: spans/s, or -1. */
static double bare_rep(sqlite3 *db, sqlite3_stmt *st, int rows, const struct pps_span *spans)
{
    double t0 = now_s();
    for (int i = 0; i < TOTAL;) {
        if (exec(db, "BEGIN"))
            return -1;
        for (int end = i + BATCH < TOTAL ? i + BATCH : TOTAL; i < end; i += rows) {
            for (int r = 0; r < rows; r++)
                if (bind_row(st, 13 * r, &spans[i + r]) != SQLITE_OK)
                    return -1;
            if (sqlite3_step(st) != SQLITE_DONE || sqlite3_reset(st) != SQLITE_OK) {
                fprintf(stderr, "bench_tracer_flush: insert: %s\n", sqlite3_errmsg(db));
                return -1;
            }
        }
        if (exec(db, "COMMIT"))
            return -1;
    }
    return TOTAL / (now_s() - t0);
}

static sqlite3_stmt *prepare_insert(sqlite3 *db, int rows)
{
    size_t n = 256 + (size_t)rows * 64;
    char *sql = malloc(n), *p;
    sqlite3_stmt *st = NULL;

    if (!sql)
        return NULL;
    p = sql + sprintf(sql, "INSERT INTO spans (kind, stage, chunk, mb, iter, start_ns, end_ns, "
                           "peer, bytes, name_id, clock, corr, rank) VALUES ");
    for (int r = 0; r < rows; r++)
        p += sprintf(p, "%s(?,?,?,?,?,?,?,?,?,?,?,?,?)", r ? "," : "");
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
        fprintf(stderr, "bench_tracer_flush: prepare: %s\n", sqlite3_errmsg(db));
        st = NULL;
    }
    free(sql);
    return st;
}

/* A shard with the store's schema, then closed and reopened by SQLite alone. */
static sqlite3 *baseline_db(const char *dir)
{
    struct pps_store_writer *w = NULL;
    struct pps_err err = {0};
    char path[512];
    sqlite3 *db = NULL;

    if (pps_store_writer_open(dir, 0, &w, &err) != 0 || pps_store_writer_close(w, 1, &err) != 0) {
        fprintf(stderr, "bench_tracer_flush: %s\n", err.msg);
        return NULL;
    }
    snprintf(path, sizeof(path), "%s/rank-00000.db", dir);
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL) !=
            SQLITE_OK ||
        exec(db, "PRAGMA journal_mode = WAL") || exec(db, "PRAGMA synchronous = NORMAL")) {
        sqlite3_close(db);
        return NULL;
    }
    return db;
}

static void verdict(const char *what, double v, const char *goal, int ok)
{
    printf("%-40s %8.2f   goal %s   %s\n", what, v, goal, ok ? "ok" : "MISSED");
}

int main(void)
{
    char root[] = "/tmp/pps-bench-flush-XXXXXX", tdir[600], bdir[600], mdir[600], cmd[700];
    struct pps_trace_options o;
    struct pps_tracer *t = NULL;
    struct pps_err err = {0};
    struct pps_span *spans = NULL;
    sqlite3 *db = NULL, *mdb = NULL; /* one file per baseline: each grows like the tracer's */
    sqlite3_stmt *one = NULL, *multi = NULL;
    double best_t = 0, best_1 = 0, best_m = 0;
    int rc = 1;

    if (!mkdtemp(root)) {
        perror("mkdtemp");
        return 1;
    }
    snprintf(tdir, sizeof(tdir), "%s/tracer", root);
    snprintf(bdir, sizeof(bdir), "%s/bare", root);
    snprintf(mdir, sizeof(mdir), "%s/multi", root);
    if (!(spans = malloc(TOTAL * sizeof(*spans))))
        goto out;
    pps_trace_options_init(&o);
    o.run_dir = tdir;
    o.rank = 0;
    o.world = 1;
    o.buffer_spans = PER;
    o.flush_interval_ms = 0;
    if (pps_trace_open(&o, &t, &err) != 0) {
        fprintf(stderr, "bench_tracer_flush: %s\n", err.msg);
        goto out;
    }
    if (!(db = baseline_db(bdir)) || !(one = prepare_insert(db, 1)) || !(mdb = baseline_db(mdir)) ||
        !(multi = prepare_insert(mdb, MULTI)))
        goto out;

    for (int rep = 0; rep < REPS; rep++) {
        for (int k = 0; k < THREADS; k++)
            for (int i = 0; i < PER; i++)
                make_span(&spans[k * PER + i], k, i, rep);
        double a = tracer_rep(t, rep), b = bare_rep(db, one, 1, spans),
               c = bare_rep(mdb, multi, MULTI, spans);
        if (a < 0 || b < 0 || c < 0)
            goto out;
        best_t = a > best_t ? a : best_t;
        best_1 = b > best_1 ? b : best_1;
        best_m = c > best_m ? c : best_m;
    }
    printf("flush into SQLite, best of %d repetitions of %d spans (%d threads' buffers), "
           "batches of %d\n",
           REPS, TOTAL, THREADS, BATCH);
    printf("  tracer flush                           %8.2f M spans/s\n", best_t / 1e6);
    printf("  bare loop, 1-row prepared INSERT       %8.2f M spans/s   (baseline)\n", best_1 / 1e6);
    printf("  bare loop, %d-row prepared INSERT      %8.2f M spans/s   (for information)\n", MULTI,
           best_m / 1e6);
    printf("  dropped                                %8llu\n",
           (unsigned long long)pps_trace_dropped(t));
    verdict("tracer / bare 1-row loop (x)", best_t / best_1, ">= 0.80x", best_t >= 0.8 * best_1);
    verdict("tracer (M spans/s)", best_t / 1e6, ">= 1.00", best_t >= 1e6);
    printf("(tracer / bare %d-row loop: %.2fx)\n", MULTI, best_t / best_m);
    rc = 0;
out:
    sqlite3_finalize(one);
    sqlite3_finalize(multi);
    sqlite3_close(db);
    sqlite3_close(mdb);
    if (t && pps_trace_close(t, &err) != 0) {
        fprintf(stderr, "bench_tracer_flush: %s\n", err.msg);
        rc = 1;
    }
    free(spans);
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
    if (system(cmd) != 0)
        fprintf(stderr, "bench_tracer_flush: could not remove %s\n", root);
    return rc;
}
