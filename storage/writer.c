/*
 * writer.c - one rank's shard: created once (never overwritten) under a hidden name and put in
 * place with its schema and first meta, WAL mode so a viewer reads while the rank writes, spans
 * and metrics appended in one transaction per batch through statements prepared once, names
 * interned in memory so a repeated name costs a hash lookup.
 *
 * The tracer's flusher calls this with millions of spans a second: the batch loop binds integers
 * into a reused statement and allocates nothing.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "pps_config.h"
#include "pps_strtab.h"
#include "storage_int.h"

/* Rows per step of the multi-row span insert (13 parameters each: far below SQLite's limit). */
#define PPS__SPAN_ROWS 64

#define SPAN_INSERT                                                                                \
    "INSERT INTO spans (kind, stage, chunk, mb, iter, start_ns, end_ns, peer, bytes, name_id, "    \
    "clock, corr, rank) VALUES "
#define SPAN_ROW "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"

struct pps_store_writer {
    sqlite3 *db;
    char *path; /* the shard, for messages */
    int rank;

    sqlite3_stmt *ins_span, *ins_spans, *ins_metric, *set_meta, *ins_name;
    sqlite3_stmt *begin, *commit;

    struct pps_strtab names; /* interned: names.strs[id] is the name of id */
    /* The longest span written (end - start), kept in meta span_max_ns with the rows that
     * make it so (docs/schema.md): what a reader of a time window looks back by. -1: none. */
    int64_t span_max_ns;
};

int pps__make_dirs(const char *dir, struct pps_err *err)
{
    struct stat st;
    char *p = strdup(dir);
    int rc = 0;

    if (!p) {
        rc = pps_err_set(err, PPS_ENOMEM, "%s: out of memory", dir);
        goto out;
    }
    for (char *s = p + 1;; s++) {
        char c = *s;
        if (c != '/' && c != '\0')
            continue;
        *s = '\0';
        if (mkdir(p, 0777) != 0 && errno != EEXIST) {
            rc = pps_err_set(err, errno == ENOTDIR ? PPS_EINVAL : PPS_EIO,
                             "%s: cannot create the run directory (%s)", dir, strerror(errno));
            goto out;
        }
        *s = c;
        if (!c)
            break;
    }
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        rc = pps_err_set(err, PPS_EINVAL, "%s: not a directory", dir);
        goto out;
    }
out:
    free(p);
    return rc;
}

static int prepare(struct pps_store_writer *w, const char *sql, sqlite3_stmt **st,
                   struct pps_err *err)
{
    int rc = sqlite3_prepare_v3(w->db, sql, -1, SQLITE_PREPARE_PERSISTENT, st, NULL);
    if (rc != SQLITE_OK)
        return pps__sql_fail(w->db, rc, w->path, "cannot prepare", err);
    return 0;
}

/* Steps a statement that returns no rows and makes it ready for the next use. */
static int run_stmt(sqlite3_stmt *st)
{
    int rc = sqlite3_step(st);
    int reset = sqlite3_reset(st);
    return rc == SQLITE_DONE ? reset : rc;
}

/* After a failed statement inside a batch: undo the batch unless SQLite already did. */
static void abandon_batch(struct pps_store_writer *w)
{
    if (!sqlite3_get_autocommit(w->db))
        sqlite3_exec(w->db, "ROLLBACK", NULL, NULL, NULL); /* the first error is reported */
}

/*
 * One statement that inserts PPS__SPAN_ROWS rows: what each step costs besides the rows (running
 * the statement's program from the start, resetting it) is paid once per group. That took a shard
 * from 1.0 to 1.9 million spans a second on the machine where it was measured.
 */
static int prepare_multi(struct pps_store_writer *w, struct pps_err *err)
{
    size_t n = sizeof(SPAN_INSERT) + PPS__SPAN_ROWS * (sizeof(SPAN_ROW) + 1);
    char *sql = malloc(n), *p;
    int rc;

    if (!sql)
        return pps_err_set(err, PPS_ENOMEM, "%s: out of memory", w->path);
    p = sql + sprintf(sql, "%s", SPAN_INSERT);
    for (int r = 0; r < PPS__SPAN_ROWS; r++)
        p += sprintf(p, "%s%s", r ? "," : "", SPAN_ROW);
    rc = prepare(w, sql, &w->ins_spans, err);
    free(sql);
    return rc;
}

static int prepare_all(struct pps_store_writer *w, struct pps_err *err)
{
    int rc;

    if ((rc = prepare(w, SPAN_INSERT SPAN_ROW, &w->ins_span, err)) ||
        (rc = prepare(w,
                      "INSERT INTO metrics (rank, iter, stage, loss, grad_norm, act_bytes, "
                      "pending_w, dropped) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                      &w->ins_metric, err)) ||
        (rc = prepare(w, "INSERT OR REPLACE INTO meta (rank, key, value) VALUES (?, ?, ?)",
                      &w->set_meta, err)) ||
        (rc = prepare(w, "INSERT INTO names (rank, id, name) VALUES (?, ?, ?)", &w->ins_name,
                      err)) ||
        (rc = prepare(w, "BEGIN", &w->begin, err)) || (rc = prepare(w, "COMMIT", &w->commit, err)))
        return rc;
    if ((rc = prepare_multi(w, err)))
        return rc;
    /* Bindings survive sqlite3_reset(): the rank is bound once for good. */
    rc = sqlite3_bind_int(w->ins_span, 13, w->rank);
    for (int r = 0; rc == SQLITE_OK && r < PPS__SPAN_ROWS; r++)
        rc = sqlite3_bind_int(w->ins_spans, r * 13 + 13, w->rank);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_int(w->ins_metric, 1, w->rank);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_int(w->set_meta, 1, w->rank);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_int(w->ins_name, 1, w->rank);
    if (rc != SQLITE_OK)
        return pps__sql_fail(w->db, rc, w->path, "cannot prepare", err);
    return 0;
}

/* The keys every shard gets at creation; the caller adds the rest and may replace host. */
static int initial_meta(struct pps_store_writer *w, struct pps_err *err)
{
    char host[256];
    int rc;

    if ((rc = pps_store_writer_meta_int(w, "rank", w->rank, err)) ||
        (rc = pps_store_writer_meta_int(w, "complete", 0, err)) ||
        (rc = pps_store_writer_meta_int(w, "created_unix", (int64_t)time(NULL), err)) ||
        (rc = pps_store_writer_meta_int(w, "writer_pid", (int64_t)getpid(), err)) ||
        (rc = pps_store_writer_meta(w, "ppscope_version", PPS_VERSION, err)))
        return rc;
    if (gethostname(host, sizeof(host)) == 0) {
        host[sizeof(host) - 1] = '\0';
        rc = pps_store_writer_meta(w, "host", host, err);
    }
    return rc;
}

/* Removes the -wal and -shm files beside a shard; -1 when out of memory. */
static int unlink_side_files(const char *path)
{
    char *side = malloc(strlen(path) + 5);

    if (!side)
        return -1;
    sprintf(side, "%s-wal", path);
    unlink(side);
    sprintf(side, "%s-shm", path);
    unlink(side);
    free(side);
    return 0;
}

static void stmts_free(struct pps_store_writer *w)
{
    sqlite3_stmt **all[] = {&w->ins_span, &w->ins_spans, &w->ins_metric, &w->set_meta,
                            &w->ins_name, &w->begin,     &w->commit};

    /* finalize returns the last step's error, already reported; it cannot fail itself. */
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
        sqlite3_finalize(*all[i]);
        *all[i] = NULL;
    }
}

static void writer_free(struct pps_store_writer *w)
{
    stmts_free(w);
    pps_strtab_release(&w->names);
    free(w->path);
    free(w);
}

/* Opens w->db on path (the shard, or its creation name) in WAL mode; messages name w->path. */
static int db_open(struct pps_store_writer *w, const char *path, struct pps_err *err)
{
    sqlite3_stmt *st = NULL;
    const char *mode;
    char *uri = pps__file_uri(path, "mode=rw");
    int rc;

    if (!uri) {
        rc = pps_err_set(err, PPS_ENOMEM, "%s: out of memory", w->path);
        goto out;
    }
    rc = sqlite3_open_v2(uri, &w->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_URI,
                         NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_extended_result_codes(w->db, 1);
    if (rc == SQLITE_OK)
        rc = sqlite3_busy_timeout(w->db, PPS__BUSY_TIMEOUT_MS);
    if (rc != SQLITE_OK) {
        rc = pps__sql_fail(w->db, rc, w->path, "cannot open", err);
        goto out;
    }
    rc = sqlite3_prepare_v2(w->db, "PRAGMA journal_mode = WAL", -1, &st, NULL);
    if (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW)
        rc = SQLITE_OK;
    if (rc != SQLITE_OK) {
        rc = pps__sql_fail(w->db, rc, w->path, "cannot set WAL mode", err);
        goto out;
    }
    /* Without WAL a viewer could not read while the rank writes: better say so now. */
    mode = (const char *)sqlite3_column_text(st, 0);
    if (!mode || strcmp(mode, "wal") != 0) {
        rc = pps_err_set(err, PPS_EIO, "%s: this file system does not allow WAL mode (got '%s')",
                         w->path, mode ? mode : "?");
        goto out;
    }
    sqlite3_finalize(st); /* a statement still running would keep COMMIT from working */
    st = NULL;
    rc = pps__exec(w->db, "PRAGMA synchronous = NORMAL", w->path, "cannot open", err);
out:
    sqlite3_finalize(st);
    free(uri);
    return rc;
}

/* Closes w->db after its statements; the last connection checkpoints the log and removes it. */
static int db_close(struct pps_store_writer *w, struct pps_err *err)
{
    int rc;

    stmts_free(w);
    rc = sqlite3_close(w->db);
    if (rc != SQLITE_OK) {
        rc = pps__sql_fail(w->db, rc, w->path, "cannot close", err);
        sqlite3_close_v2(w->db); /* let SQLite release it when it can */
    }
    w->db = NULL;
    return rc;
}

/*
 * The name a shard is created under, in its run directory: it starts with a dot and ends with
 * ".new", so no reader takes it for a shard (rank-N.db, files.c) nor the viewer for a change
 * (-wal); the process id and a counter keep two writers apart.
 */
static char *creation_name(const char *run_dir, int rank)
{
    static atomic_uint seq;
    char name[80];

    snprintf(name, sizeof(name), "." PPS__SHARD_FMT ".%ld-%u.new", rank, (long)getpid(),
             atomic_fetch_add_explicit(&seq, 1, memory_order_relaxed));
    return pps__path_join(run_dir, name);
}

/*
 * Puts the finished creation file tmp in place as w->path. link(2) fails if the name exists,
 * which makes "never overwrite" hold even when two writers race for one rank. A file system
 * without hard links gets rename(2) after a check, which a racing writer could slip between.
 */
static int publish(struct pps_store_writer *w, const char *tmp, struct pps_err *err)
{
    struct stat st;
    int rc = link(tmp, w->path) == 0 ? 0 : errno;

    if (rc == EPERM || rc == ENOTSUP || rc == EOPNOTSUPP || rc == EMLINK || rc == ENOSYS)
        rc = lstat(w->path, &st) == 0 ? EEXIST : rename(tmp, w->path) == 0 ? 0 : errno;
    if (rc == EEXIST)
        return pps_err_set(err, PPS_EINVAL,
                           "%s: already exists (ppscope never overwrites a run's shard)", w->path);
    if (rc)
        return pps_err_set(err, PPS_EIO, "%s: cannot create (%s)", w->path, strerror(rc));
    unlink(tmp); /* gone already after a rename */
    return 0;
}

/*
 * A shard is created under another name (creation_name) and appears as rank-N.db only once it
 * holds the schema and its first meta: a reader that lists a run at its start never finds an
 * empty file, a header with no tables yet, or a file shorter than the header its log will give
 * it. The file is in WAL mode from the start, so the published shard is a WAL one with
 * complete=0, which readers open as a live one (files.c). The writer then reopens it by its
 * name: SQLite names the log after the file it opened.
 */
int pps_store_writer_open(const char *run_dir, int rank, struct pps_store_writer **out,
                          struct pps_err *err)
{
    struct pps_store_writer *w = NULL;
    struct stat st;
    char name[32], *tmp = NULL;
    int published = 0, rc, fd;

    if (out)
        *out = NULL;
    if (!run_dir || !*run_dir || !out) {
        rc = pps_err_set(err, PPS_EINVAL, "pps_store_writer_open: no run directory");
        goto out;
    }
    if (rank < 0 || rank > INT16_MAX) {
        rc = pps_err_set(err, PPS_EINVAL, "%s: rank %d is not in 0..%d", run_dir, rank, INT16_MAX);
        goto out;
    }
    if ((rc = pps__make_dirs(run_dir, err)))
        goto out;
    snprintf(name, sizeof(name), PPS__SHARD_FMT, rank);
    if (!(w = calloc(1, sizeof(*w))) || !(w->path = pps__path_join(run_dir, name)) ||
        !(tmp = creation_name(run_dir, rank))) {
        rc = pps_err_set(err, PPS_ENOMEM, "%s: out of memory", run_dir);
        goto out;
    }
    w->rank = rank;
    w->span_max_ns = -1;
    /* Said before any work; publish() is what makes it hold. */
    if (lstat(w->path, &st) == 0) {
        rc = pps_err_set(err, PPS_EINVAL,
                         "%s: already exists (ppscope never overwrites a run's shard)", w->path);
        goto out;
    }
    fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0) {
        rc = pps_err_set(err, PPS_EIO, "%s: cannot create (%s)", w->path, strerror(errno));
        free(tmp);
        tmp = NULL; /* not ours to remove */
        goto out;
    }
    close(fd);
    /* The files are new, so a -wal or -shm beside either name is left from a removed shard:
     * SQLite would replay that log into this one. */
    if (unlink_side_files(tmp) != 0 || unlink_side_files(w->path) != 0) {
        rc = pps_err_set(err, PPS_ENOMEM, "%s: out of memory", w->path);
        goto out;
    }
    if ((rc = db_open(w, tmp, err)) || (rc = pps__schema_create(w->db, w->path, err)) ||
        (rc = prepare_all(w, err)) || (rc = initial_meta(w, err)) || (rc = db_close(w, err)) ||
        (rc = publish(w, tmp, err)))
        goto out;
    published = 1;
    if ((rc = db_open(w, w->path, err)) || (rc = prepare_all(w, err)))
        goto out;
    *out = w;
    w = NULL;
out:
    if (w) {
        stmts_free(w);
        sqlite3_close(w->db); /* statements are finalized: this closes */
        if (published) {
            unlink(w->path);
            unlink_side_files(w->path);
        }
        writer_free(w);
    }
    if (tmp && !published) {
        unlink(tmp);
        unlink_side_files(tmp);
    }
    free(tmp);
    return rc;
}

int pps_store_writer_meta(struct pps_store_writer *w, const char *key, const char *value,
                          struct pps_err *err)
{
    int rc;

    if (!w || !key || !*key || !value)
        return pps_err_set(err, PPS_EINVAL, "pps_store_writer_meta: no writer, key or value");
    /* TRANSIENT: SQLite copies the strings, so none of the caller's pointers outlive the call
     * (metadata is written a few times per run, the copy costs nothing). */
    rc = sqlite3_bind_text(w->set_meta, 2, key, -1, SQLITE_TRANSIENT);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_text(w->set_meta, 3, value, -1, SQLITE_TRANSIENT);
    if (rc == SQLITE_OK)
        rc = run_stmt(w->set_meta);
    if (rc != SQLITE_OK)
        rc = pps__sql_fail(w->db, rc, w->path, "cannot write metadata", err);
    return rc;
}

int pps_store_writer_meta_int(struct pps_store_writer *w, const char *key, int64_t value,
                              struct pps_err *err)
{
    char buf[32];
    snprintf(buf, sizeof(buf), "%" PRId64, value);
    return pps_store_writer_meta(w, key, buf, err);
}

int pps_store_writer_name(struct pps_store_writer *w, const char *name, int32_t *id,
                          struct pps_err *err)
{
    char *copy = NULL;
    int32_t found;
    int rc = 0;

    if (!w || !name || !id) {
        rc = pps_err_set(err, PPS_EINVAL, "pps_store_writer_name: no writer, name or id");
        goto out;
    }
    if ((found = pps_strtab_find(&w->names, name)) >= 0) {
        *id = found;
        goto out;
    }
    /* The name is kept only once it is stored: a failed write leaves it unknown. */
    if ((rc = pps_strtab_reserve(&w->names)) == PPS_EINVAL) {
        rc = pps_err_set(err, PPS_EINVAL, "%s: too many names", w->path);
        goto out;
    }
    if (rc || !(copy = strdup(name))) {
        rc = pps_err_set(err, PPS_ENOMEM, "%s: out of memory", w->path);
        goto out;
    }
    rc = sqlite3_bind_int(w->ins_name, 2, (int)w->names.n);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_text(w->ins_name, 3, copy, -1, SQLITE_STATIC);
    if (rc == SQLITE_OK)
        rc = run_stmt(w->ins_name);
    if (rc != SQLITE_OK) {
        rc = pps__sql_fail(w->db, rc, w->path, "cannot write a name", err);
        goto out;
    }
    *id = pps_strtab_add(&w->names, copy);
    copy = NULL;
out:
    free(copy);
    return rc;
}

/* Binds one span's 12 columns after parameter base (the rank, 13th, is bound for good). */
static int bind_span(sqlite3_stmt *st, int base, const struct pps_span *s)
{
    /* SQLITE_OK is 0: or-ing the results tells whether any bind failed. */
    return sqlite3_bind_int(st, base + 1, s->kind) | sqlite3_bind_int(st, base + 2, s->stage) |
           sqlite3_bind_int(st, base + 3, s->chunk) | sqlite3_bind_int(st, base + 4, s->mb) |
           sqlite3_bind_int(st, base + 5, s->iter) | sqlite3_bind_int64(st, base + 6, s->start_ns) |
           sqlite3_bind_int64(st, base + 7, s->end_ns) | sqlite3_bind_int(st, base + 8, s->peer) |
           sqlite3_bind_int64(st, base + 9, s->bytes) |
           sqlite3_bind_int(st, base + 10, s->name_id) | sqlite3_bind_int(st, base + 11, s->clock) |
           sqlite3_bind_int64(st, base + 12, s->corr);
}

int pps_store_writer_spans(struct pps_store_writer *w, const struct pps_span *spans, size_t n,
                           struct pps_err *err)
{
    sqlite3_stmt *st;
    size_t i;
    int rc = 0;

    if (!w || (n && !spans))
        return pps_err_set(err, PPS_EINVAL, "pps_store_writer_spans: no writer or spans");
    if (n == 0)
        return 0;
    /* A bad span would only surface when a reader trips on it: refuse the batch now. */
    for (i = 0; i < n; i++) {
        const struct pps_span *s = &spans[i];
        if (s->kind < 1 || s->kind >= PPS_SPAN_KIND_COUNT || s->stage < 0 ||
            s->clock > PPS_CLOCK_DEVICE)
            return pps_err_set(err, PPS_EINVAL,
                               "%s: span %zu of the batch is invalid (kind %d, stage %d, clock %d)",
                               w->path, i, s->kind, s->stage, s->clock);
    }
    /* Lengths in unsigned arithmetic, and no more than any two times a reader takes can be
     * apart: a wild span (the reader refuses it) overflows nothing here. */
    int64_t longest = w->span_max_ns;
    for (i = 0; i < n; i++) {
        uint64_t len = spans[i].end_ns > spans[i].start_ns
                           ? (uint64_t)spans[i].end_ns - (uint64_t)spans[i].start_ns
                           : 0;
        if (len > (uint64_t)(2 * PPS__TIME_LIMIT))
            len = (uint64_t)(2 * PPS__TIME_LIMIT);
        if ((int64_t)len > longest)
            longest = (int64_t)len;
    }
    if (longest < 0)
        longest = 0; /* instants only: they reach no further than they start */
    if ((rc = run_stmt(w->begin)) != SQLITE_OK)
        goto fail;
    /* In the rows' own transaction: no reader ever sees a span longer than the key says. */
    if (longest != w->span_max_ns &&
        (rc = pps_store_writer_meta_int(w, "span_max_ns", longest, err))) {
        abandon_batch(w);
        return rc;
    }
    for (i = 0; i < n;) {
        /* Whole groups of rows go through the multi-row statement, the rest one by one. */
        size_t rows = n - i >= PPS__SPAN_ROWS ? PPS__SPAN_ROWS : 1;
        st = rows > 1 ? w->ins_spans : w->ins_span;
        for (size_t r = 0; r < rows; r++)
            if ((rc = bind_span(st, (int)r * 13, &spans[i + r])) != SQLITE_OK) {
                rc = SQLITE_MISUSE;
                goto fail;
            }
        if ((rc = run_stmt(st)) != SQLITE_OK)
            goto fail;
        i += rows;
    }
    if ((rc = run_stmt(w->commit)) != SQLITE_OK)
        goto fail;
    w->span_max_ns = longest;
    return 0;
fail:
    rc = pps__sql_fail(w->db, rc, w->path, "cannot write spans", err);
    abandon_batch(w);
    return rc;
}

static int bind_double_or_null(sqlite3_stmt *st, int i, double v)
{
    return isnan(v) ? sqlite3_bind_null(st, i) : sqlite3_bind_double(st, i, v);
}

int pps_store_writer_metrics(struct pps_store_writer *w, const struct pps_metric *metrics, size_t n,
                             struct pps_err *err)
{
    sqlite3_stmt *st;
    int rc = 0;

    if (!w || (n && !metrics))
        return pps_err_set(err, PPS_EINVAL, "pps_store_writer_metrics: no writer or metrics");
    if (n == 0)
        return 0;
    st = w->ins_metric;
    if ((rc = run_stmt(w->begin)) != SQLITE_OK)
        goto fail;
    for (size_t i = 0; i < n; i++) {
        const struct pps_metric *m = &metrics[i];
        rc = sqlite3_bind_int(st, 2, m->iter) | sqlite3_bind_int(st, 3, m->stage) |
             bind_double_or_null(st, 4, m->loss) | bind_double_or_null(st, 5, m->grad_norm) |
             sqlite3_bind_int64(st, 6, m->act_bytes) | sqlite3_bind_int64(st, 7, m->pending_w) |
             sqlite3_bind_int64(st, 8, m->dropped);
        if (rc != SQLITE_OK) {
            rc = SQLITE_MISUSE;
            goto fail;
        }
        if ((rc = run_stmt(st)) != SQLITE_OK)
            goto fail;
    }
    if ((rc = run_stmt(w->commit)) != SQLITE_OK)
        goto fail;
    return 0;
fail:
    rc = pps__sql_fail(w->db, rc, w->path, "cannot write metrics", err);
    abandon_batch(w);
    return rc;
}

int pps__store_writer_exec(struct pps_store_writer *w, const char *sql, struct pps_err *err)
{
    return pps__exec(w->db, sql, w->path, "cannot write", err);
}

/*
 * A closed shard is written no more: it leaves WAL mode, so that it is one file with nothing
 * beside it, which copies, tars and read-only media take as it is, and readers open it without
 * creating a -wal or -shm (files.c). Leaving WAL needs the shard to itself: while a reader holds
 * it open that fails, and the close tries again for a while (a report reads a shard in tens of
 * milliseconds) but not for ever (it must not hang on a viewer that stays open); then the shard
 * stays in WAL with its log checkpointed into it and emptied, which readers take as finished
 * too. Nothing here fails the close: the shard holds all its rows either way.
 */
#define LEAVE_WAL_TRIES 25 /* 10 ms apart: a quarter of a second at the most */

static void leave_wal(sqlite3 *db)
{
    const struct timespec gap = {0, 10 * 1000 * 1000};
    int left = 0;

    sqlite3_busy_timeout(db, 0);
    for (int i = 0; i < LEAVE_WAL_TRIES && !left; i++) {
        sqlite3_stmt *st = NULL;
        const char *mode;

        if (i)
            nanosleep(&gap, NULL);
        if (sqlite3_prepare_v2(db, "PRAGMA journal_mode = DELETE", -1, &st, NULL) == SQLITE_OK &&
            sqlite3_step(st) == SQLITE_ROW) {
            mode = (const char *)sqlite3_column_text(st, 0);
            left = mode && !strcmp(mode, "delete");
        }
        sqlite3_finalize(st);
    }
    if (!left)
        (void)sqlite3_exec(db, "PRAGMA wal_checkpoint(TRUNCATE)", NULL, NULL, NULL);
}

int pps_store_writer_close(struct pps_store_writer *w, int complete, struct pps_err *err)
{
    int rc = 0, crc;

    if (!w)
        return 0;
    if (complete)
        rc = pps_store_writer_meta(w, "complete", "1", err);
    stmts_free(w);
    leave_wal(w->db);
    /* The last connection checkpoints what is left of the log into the shard and removes it. */
    crc = db_close(w, rc ? NULL : err);
    writer_free(w);
    rc = rc ? rc : crc;
    return rc;
}
