/*
 * bench_import.c - `ppscope import` of a large Nsight Systems export, against SQLite's own scan
 * of the same rows in the same run, and its peak memory per span kept.
 *
 * The file is made here, with nsys 2022.4's columns: p processes of a 1F1B-like pipeline, each
 * iteration a ProfilerStep range, every op a PyTorch "PP:" label pushed and popped (half of them
 * inline text, half registered strings through StringIds), a kernel launched inside every op
 * (CUPTI_ACTIVITY_KIND_KERNEL, with its cudaLaunchKernel row in CUPTI_ACTIVITY_KIND_RUNTIME).
 *
 *   bench_import [NVTX_EVENTS] [DIR]     (default 2000000 events, DIR = $TMPDIR or /tmp)
 *
 * Figures, each the best of three runs:
 *   scan      the importer's queries (NVTX_EVENTS, the kernels, the runtime calls; the few
 *             distinct strings it then looks up by id are left out), stepped through with every
 *             column read: what SQLite alone costs to read what the import reads
 *   import    pps_import_nsys into a new run: events read per second, and the ratio to scan
 *   memory    the import's peak RSS (a child process of its own) less that of a child that only
 *             opened the file, per span kept
 * Goals: >= 2M events/s, < 100 bytes per span. A goal missed says MISSED; it never fails.
 */
#include <sqlite3.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "import.h"

#define STAGES 4
#define MBS    8

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void die(sqlite3 *db, const char *what)
{
    fprintf(stderr, "bench_import: %s: %s\n", what, db ? sqlite3_errmsg(db) : "failed");
    exit(1);
}

static void exec(sqlite3 *db, const char *sql)
{
    if (sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK)
        die(db, sql);
}

/* The export: n NVTX ranges (about n/4 kernels with them). Returns the kernels made. */
static int64_t make_export(const char *path, int64_t n)
{
    sqlite3 *db;
    sqlite3_stmt *nv, *rt, *kn, *si;
    int64_t made = 0, kernels = 0, corr = 0;
    static const char *const kinds[] = {"F", "I", "W", "SEND_F", "RECV_B"};

    unlink(path);
    if (sqlite3_open(path, &db) != SQLITE_OK)
        die(db, "open");
    exec(db, "PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; BEGIN;"
             "CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);"
             "CREATE TABLE EXPORT_META_DATA (name TEXT NOT NULL, value TEXT);"
             "INSERT INTO EXPORT_META_DATA VALUES ('EXPORT_PRODUCT_VERSION', 'bench');"
             "CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER "
             "NOT NULL, rangeId INTEGER, category INTEGER, color INTEGER, text TEXT, globalTid "
             "INTEGER, endGlobalTid INTEGER, textId INTEGER, domainId INTEGER, uint64Value "
             "INTEGER, int64Value INTEGER, doubleValue REAL, uint32Value INTEGER, int32Value "
             "INTEGER, floatValue REAL, jsonTextId INTEGER, jsonText TEXT);"
             "CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT "
             "NULL, eventClass INTEGER NOT NULL, globalTid INTEGER, correlationId INTEGER, nameId "
             "INTEGER NOT NULL, returnValue INTEGER NOT NULL, callchainId INTEGER);"
             "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT "
             "NULL, deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, streamId INTEGER NOT "
             "NULL, correlationId INTEGER, globalPid INTEGER, demangledName INTEGER NOT NULL, "
             "shortName INTEGER NOT NULL, mangledName INTEGER, gridId INTEGER NOT NULL);"
             "INSERT INTO StringIds VALUES (1, 'cudaLaunchKernel'), (2, 'gemm_kernel'),"
             "(3, 'void gemm_kernel<float, 128>(float const*, float*)');");
    if (sqlite3_prepare_v2(db,
                           "INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, "
                           "textId) VALUES (?, ?, 59, ?, ?, ?)",
                           -1, &nv, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(db,
                           "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?, ?, 0, ?, ?, 1, "
                           "0, NULL)",
                           -1, &rt, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(db,
                           "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (?, ?, 0, 1, 7, ?, "
                           "?, 3, 2, NULL, ?)",
                           -1, &kn, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(db, "INSERT OR IGNORE INTO StringIds VALUES (?, ?)", -1, &si, NULL) !=
            SQLITE_OK)
        die(db, "prepare");
    /* Per process, time runs on: iterations of MBS microbatches of 5 ops each. */
    int64_t t[STAGES] = {0}, iter[STAGES] = {0}, left[STAGES] = {0};
    for (int64_t i = 0; made < n; i++) {
        int s = (int)(i % STAGES);
        int64_t gpid = ((int64_t)1 << 48) | ((int64_t)(1000 + s) << 24), gtid = gpid | (1000 + s);
        char name[64];
        int64_t id = 0;
        if (left[s] == 0) { /* a new step: its range spans the ops that follow */
            snprintf(name, sizeof(name), "ProfilerStep#%" PRId64, iter[s]++);
            sqlite3_bind_int64(nv, 1, t[s]);
            sqlite3_bind_int64(nv, 2, t[s] + MBS * 5 * 1000 + 10);
            sqlite3_bind_text(nv, 3, name, -1, SQLITE_TRANSIENT);
            sqlite3_bind_int64(nv, 4, gtid);
            sqlite3_bind_null(nv, 5);
            if (sqlite3_step(nv) != SQLITE_DONE || sqlite3_reset(nv) != SQLITE_OK)
                die(db, "insert");
            made++;
            left[s] = MBS * 5;
            t[s] += 5;
            continue;
        }
        int k = (int)(left[s] % 5), mb = (int)((left[s] / 5) % MBS);
        snprintf(name, sizeof(name), "PP:%d%s%d", s, kinds[k], mb);
        /* Half the names inline, half registered strings (nsys writes both). */
        if (i & 1) {
            id = 100 + (int64_t)s * 64 + k * MBS + mb;
            sqlite3_bind_int64(si, 1, id);
            sqlite3_bind_text(si, 2, name, -1, SQLITE_TRANSIENT);
            if (sqlite3_step(si) != SQLITE_DONE || sqlite3_reset(si) != SQLITE_OK)
                die(db, "insert");
        }
        sqlite3_bind_int64(nv, 1, t[s]);
        sqlite3_bind_int64(nv, 2, t[s] + 900);
        if (id) {
            sqlite3_bind_null(nv, 3);
            sqlite3_bind_int64(nv, 5, id);
        } else {
            sqlite3_bind_text(nv, 3, name, -1, SQLITE_TRANSIENT);
            sqlite3_bind_null(nv, 5);
        }
        sqlite3_bind_int64(nv, 4, gtid);
        if (sqlite3_step(nv) != SQLITE_DONE || sqlite3_reset(nv) != SQLITE_OK)
            die(db, "insert");
        made++;
        if (k == 0 || k == 2) { /* a kernel for each F and W */
            corr++;
            sqlite3_bind_int64(rt, 1, t[s] + 10);
            sqlite3_bind_int64(rt, 2, t[s] + 20);
            sqlite3_bind_int64(rt, 3, gtid);
            sqlite3_bind_int64(rt, 4, corr);
            sqlite3_bind_int64(kn, 1, t[s] + 30);
            sqlite3_bind_int64(kn, 2, t[s] + 800);
            sqlite3_bind_int64(kn, 3, corr);
            sqlite3_bind_int64(kn, 4, gpid);
            sqlite3_bind_int64(kn, 5, corr);
            if (sqlite3_step(rt) != SQLITE_DONE || sqlite3_reset(rt) != SQLITE_OK ||
                sqlite3_step(kn) != SQLITE_DONE || sqlite3_reset(kn) != SQLITE_OK)
                die(db, "insert");
            kernels++;
        }
        left[s]--;
        t[s] += 1000;
    }
    sqlite3_finalize(nv);
    sqlite3_finalize(rt);
    sqlite3_finalize(kn);
    sqlite3_finalize(si);
    exec(db, "COMMIT");
    sqlite3_close(db);
    return kernels;
}

/* SQLite alone: the importer's queries (import_nsys.c), every column read. */
static int64_t scan(const char *path)
{
    /* Each query in parentheses: clang takes strings joined inside a list for a missing comma. */
    static const char *const queries[] = {
        ("SELECT n.start, n.end, n.eventType, n.globalTid, n.text, NULL, n.endGlobalTid, "
         "coalesce(n.uint64Value, n.int64Value, n.uint32Value, n.int32Value), n.textId "
         "FROM NVTX_EVENTS n WHERE n.eventType IN (34, 39, 59, 60, 70, 71)"),
        ("SELECT d.start, d.end, NULL, d.shortName, d.globalPid, NULL, NULL, d.correlationId "
         "FROM CUPTI_ACTIVITY_KIND_KERNEL d"),
        "SELECT start, globalTid, correlationId FROM CUPTI_ACTIVITY_KIND_RUNTIME",
    };
    sqlite3 *db;
    int64_t rows = 0, sink = 0;

    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK)
        die(db, "open");
    for (size_t q = 0; q < sizeof(queries) / sizeof(queries[0]); q++) {
        sqlite3_stmt *st;
        if (sqlite3_prepare_v2(db, queries[q], -1, &st, NULL) != SQLITE_OK)
            die(db, "prepare");
        while (sqlite3_step(st) == SQLITE_ROW) {
            for (int c = 0; c < sqlite3_column_count(st); c++) {
                if (sqlite3_column_type(st, c) == SQLITE_TEXT)
                    sink += (int64_t)strlen((const char *)sqlite3_column_text(st, c));
                else
                    sink += sqlite3_column_int64(st, c);
            }
            rows++;
        }
        sqlite3_finalize(st);
    }
    sqlite3_close(db);
    return sink == 42 ? rows + 1 : rows; /* keeps sink alive */
}

static void rm_run(const char *dir)
{
    char cmd[600];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "bench_import: could not remove %s\n", dir);
}

/* Runs the import in a child (or, with only_open, just opens the file there); returns the peak
 * RSS of the largest child so far (getrusage's RUSAGE_CHILDREN: run the small one first), its
 * wall time in *secs, and what it did in *st (through a pipe). */
static long child_peak(const char *path, const char *run, int only_open, double *secs,
                       struct pps_import_stats *st)
{
    int fd[2];
    struct rusage ru;
    int status;
    pid_t pid;

    if (pipe(fd) != 0)
        exit(1);
    if ((pid = fork()) == 0) {
        struct pps_import_opts o = {run, 0};
        struct pps_import_stats s = {0};
        struct pps_err err = {0};
        double t0 = now_s(), dt;
        int rc = 0;
        if (only_open) {
            sqlite3 *db;
            sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL);
            sqlite3_exec(db, "SELECT count(*) FROM sqlite_master", NULL, NULL, NULL);
            sqlite3_close(db);
        } else if ((rc = pps_import_nsys(&path, 1, &o, &s, &err)) != 0) {
            fprintf(stderr, "bench_import: %s\n", err.msg);
        }
        dt = now_s() - t0;
        if (write(fd[1], &dt, sizeof(dt)) != sizeof(dt) || write(fd[1], &s, sizeof(s)) != sizeof(s))
            _exit(1);
        _exit(rc ? 1 : 0);
    }
    close(fd[1]);
    if (read(fd[0], secs, sizeof(*secs)) != sizeof(*secs) ||
        read(fd[0], st, sizeof(*st)) != sizeof(*st) || waitpid(pid, &status, 0) < 0 ||
        !WIFEXITED(status) || WEXITSTATUS(status) != 0 || getrusage(RUSAGE_CHILDREN, &ru) != 0) {
        fprintf(stderr, "bench_import: the import failed\n");
        exit(1);
    }
    close(fd[0]);
    return ru.ru_maxrss * 1024L;
}

int main(int argc, char **argv)
{
    int64_t n = argc > 1 ? strtoll(argv[1], NULL, 10) : 2000000;
    const char *dir = argc > 2 ? argv[2] : getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    char path[512], run[512];
    double best_scan = 1e9, best_import = 1e9, t;
    struct pps_import_stats st = {0};
    long peak = 0, base = 0;
    int64_t rows = 0, kernels;

    if (n < 1000) {
        fprintf(stderr, "usage: bench_import [NVTX_EVENTS >= 1000] [DIR]\n");
        return 2;
    }
    snprintf(path, sizeof(path), "%s/bench_import_%d.sqlite", dir, (int)getpid());
    snprintf(run, sizeof(run), "%s/bench_import_%d.run", dir, (int)getpid());
    t = now_s();
    kernels = make_export(path, n);
    printf("export    %" PRId64 " NVTX ranges, %" PRId64 " kernels (%" PRId64
           " runtime rows), %d processes: made in %.1f s\n",
           n, kernels, kernels, STAGES, now_s() - t);
    base = child_peak(path, run, 1, &t, &(struct pps_import_stats){0});
    for (int r = 0; r < 3; r++) {
        double s;
        t = now_s();
        rows = scan(path);
        if ((s = now_s() - t) < best_scan)
            best_scan = s;
        rm_run(run);
        peak = child_peak(path, run, 0, &s, &st);
        if (s < best_import)
            best_import = s;
    }
    double rate = (double)st.events_read / best_import;
    double scan_rate = (double)rows / best_scan;
    double per_span = st.spans ? (double)(peak - base) / (double)st.spans : 0;
    printf("scan      %" PRId64 " rows in %.3f s: %.2f M rows/s (SQLite alone)\n", rows, best_scan,
           scan_rate / 1e6);
    printf("import    %" PRId64 " events, %" PRId64 " spans, %d ranks in %.3f s: %.2f M events/s, "
           "%.2fx the scan's time%s\n",
           st.events_read, st.spans, st.ranks, best_import, rate / 1e6, best_import / best_scan,
           rate >= 2e6 ? "" : "  MISSED (goal >= 2M events/s)");
    printf("memory    peak RSS %.1f MB, %.1f MB without the import: %.1f bytes per span kept%s\n",
           peak / 1e6, base / 1e6, per_span, per_span < 100 ? "" : "  MISSED (goal < 100)");
    rm_run(run);
    if (!getenv("PPS_BENCH_KEEP"))
        unlink(path);
    else
        printf("kept      %s\n", path);
    return 0;
}
