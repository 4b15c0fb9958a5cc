/*
 * merge.c - a run directory into one portable file: every shard's meta, names, spans and
 * metrics, rows unchanged (ranks kept, times raw, the clock offsets in meta), so the reader
 * aligns a merged file exactly as it aligns the directory. The file uses a rollback journal
 * (journal_mode=DELETE): one file, nothing beside it, to copy anywhere.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "storage_int.h"

/* What the merge copies, table by table, so that a refusal can name the table. key is the column
 * that, with rank, is the table's primary key (NULL: spans and metrics have none). */
static const struct copy {
    const char *table, *key, *sql;
} copies[] = {
    {"meta", "key",
     "INSERT INTO main.meta (rank, key, value) SELECT rank, key, value FROM src.meta"},
    {"names", "id", "INSERT INTO main.names (rank, id, name) SELECT rank, id, name FROM src.names"},
    {"spans", NULL,
     "INSERT INTO main.spans (kind, stage, chunk, mb, iter, start_ns, end_ns, peer, bytes,"
     " name_id, clock, corr, rank)"
     " SELECT kind, stage, chunk, mb, iter, start_ns, end_ns, peer, bytes, name_id, clock, corr,"
     " rank FROM src.spans WHERE rowid >= ?1 AND rowid <= ?2"},
    {"metrics", NULL,
     "INSERT INTO main.metrics (rank, iter, stage, loss, grad_norm, act_bytes, pending_w, dropped)"
     " SELECT rank, iter, stage, loss, grad_norm, act_bytes, pending_w, dropped FROM src.metrics"},
};

/* SQLite's names of its extended constraint codes, as its documentation spells them. */
/* clang-format off */
#define CODE(c) {c, #c}
static const struct {
    int code;
    const char *name;
} constraint_codes[] = {
    CODE(SQLITE_CONSTRAINT_NOTNULL), CODE(SQLITE_CONSTRAINT_PRIMARYKEY),
    CODE(SQLITE_CONSTRAINT_UNIQUE), CODE(SQLITE_CONSTRAINT_CHECK),
    CODE(SQLITE_CONSTRAINT_FOREIGNKEY), CODE(SQLITE_CONSTRAINT_TRIGGER),
    CODE(SQLITE_CONSTRAINT_ROWID),
#ifdef SQLITE_CONSTRAINT_DATATYPE
    CODE(SQLITE_CONSTRAINT_DATATYPE),
#endif
};
#undef CODE
/* clang-format on */

static const char *constraint_name(int rc)
{
    for (size_t i = 0; i < sizeof(constraint_codes) / sizeof(constraint_codes[0]); i++)
        if (constraint_codes[i].code == rc)
            return constraint_codes[i].name;
    return "SQLITE_CONSTRAINT";
}

/*
 * The first key of c->table that is twice in the shard (where = 0) or is in the shard and in
 * the rows merged before it, another shard's (where = 1): 1 and its rank and key, 0 when there
 * is none, or an SQLite error.
 */
static int find_duplicate(sqlite3 *db, const struct copy *c, int where, int64_t *rank, char *key,
                          size_t key_size)
{
    sqlite3_stmt *st = NULL;
    char sql[256];
    int rc;

    if (where == 0)
        snprintf(sql, sizeof(sql),
                 "SELECT rank, %s FROM src.%s GROUP BY rank, %s HAVING count(*) > 1 LIMIT 1",
                 c->key, c->table, c->key);
    else
        snprintf(sql, sizeof(sql),
                 "SELECT s.rank, s.%s FROM src.%s s JOIN main.%s m"
                 " ON m.rank = s.rank AND m.%s = s.%s LIMIT 1",
                 c->key, c->table, c->table, c->key, c->key);
    rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
    if (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        const unsigned char *k = sqlite3_column_text(st, 1);
        *rank = sqlite3_column_int64(st, 0);
        snprintf(key, key_size, "%s", k ? (const char *)k : "NULL");
        rc = 1;
    } else if (rc == SQLITE_DONE) {
        rc = 0;
    }
    sqlite3_finalize(st);
    return rc;
}

/*
 * A constraint of the merged file that a shard's rows break, said as it is: a key twice in the
 * shard, a key another shard holds too, or SQLite's own reason with its extended code (a NULL
 * in a NOT NULL column: a shard whose tables were made without the constraints). The reader
 * may take such a shard, as it reads each shard's rows by themselves; one file cannot hold them.
 */
static int constraint_fail(sqlite3 *db, int rc, const struct copy *c, const char *shard,
                           struct pps_err *err)
{
    char why[256], key[128] = "";
    int64_t rank = 0;
    int found = -1; /* where find_duplicate() found the key */

    /* sqlite3_errmsg() is the failed INSERT's until the next statement: keep it first. */
    snprintf(why, sizeof(why), "%s: %s", constraint_name(rc), sqlite3_errmsg(db));
    for (int where = 0; c->key && rc == SQLITE_CONSTRAINT_PRIMARYKEY && where < 2; where++)
        if (find_duplicate(db, c, where, &rank, key, sizeof(key)) == 1) {
            found = where;
            break;
        }
    if (found == 0)
        rc = pps_err_set(err, PPS_EFORMAT, "%s: two %s rows of rank %lld have %s '%s' (%s)", shard,
                         c->table, (long long)rank, c->key, key, why);
    else if (found == 1)
        rc = pps_err_set(err, PPS_EFORMAT,
                         "%s: its %s row of rank %lld with %s '%s' is in another shard of this "
                         "run too (%s)",
                         shard, c->table, (long long)rank, c->key, key, why);
    else
        rc = pps_err_set(err, PPS_EFORMAT, "%s: its %s rows break the merged file's schema (%s)",
                         shard, c->table, why);
    /* The key and SQLite's reason may quote the file's bytes: one printable line. */
    for (char *p = err ? err->msg : NULL; p && *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            *p = '?';
    return rc;
}

/* ---- the check, on a thread of its own beside the copy ---- */

/* The reader's check of the run (check_main()), run while the rows are copied: on two cores the
 * merge then costs about the larger of the two, not their sum. A failed check stops the copy at
 * its next chunk, and its error is the merge's, whatever the copy met meanwhile. */
struct check {
    pthread_t thread;
    const char *run_dir;
    struct pps__progress when;
    struct pps_run_counts counts;
    struct pps_err err;
    int rc;
    atomic_int failed, done;
};

/* ---- progress: a line on stderr about once a second, from the first second on ---- */

struct progress {
    struct pps__progress when;
    const char *run;
    struct check *check;
    int64_t copied;
    /* The copy of one shard's spans in one statement (copy_whole()): the merged file's size
     * where it began, and the shard's (what its spans and their index take, about). */
    const char *out_file, *shard;
    int64_t out_base, shard_bytes;
    int index_later; /* the merged file's index is built at the end (not copied with the rows) */
};

static void checked(void *ctx, int64_t spans)
{
    struct check *c = ctx;
    if (pps__progress_due(&c->when))
        fprintf(stderr, "ppscope merge: %s: %lld spans checked\n", c->run_dir, (long long)spans);
}

static void copied(struct progress *p)
{
    int64_t total;

    if (!pps__progress_due(&p->when))
        return;
    /* A total only from a check that finished well: a failed one counted nothing. */
    if (!atomic_load(&p->check->done) || atomic_load(&p->check->failed)) {
        fprintf(stderr, "ppscope merge: %s: %lld spans copied\n", p->run, (long long)p->copied);
        return;
    }
    total = p->check->counts.spans;
    fprintf(stderr, "ppscope merge: %s: %lld of %lld spans copied (%d%%)\n", p->run,
            (long long)p->copied, (long long)total,
            total > 0 ? (int)(100 * (double)p->copied / (double)total) : 100);
}

/* Every row the merge copies is one the reader takes: the reader's checks, by the reader (the
 * shards open, are traces this ppscope reads, hold ranks no other shard holds, and are of one
 * run: pps__run_identity_check()). A merged file that report then refuses would be damage made
 * by ppscope. */
static void *check_main(void *arg)
{
    struct check *c = arg;

    c->rc = pps__run_check(c->run_dir, checked, c, &c->counts, &c->err);
    if (c->rc)
        atomic_store(&c->failed, 1);
    atomic_store(&c->done, 1);
    return NULL;
}

/* Starts the check; *threaded is 0 where no thread could be had: then it has run here. */
static void check_start(struct check *c, int *threaded)
{
    *threaded = pthread_create(&c->thread, NULL, check_main, c) == 0;
    if (!*threaded)
        check_main(c);
}

/* The merge's outcome: the check's error first (the copy may have stopped for it), else the
 * copy's (rc, already in err). */
static int check_finish(struct check *c, int threaded, int rc, struct pps_err *err)
{
    if (threaded)
        pthread_join(c->thread, NULL);
    if (c->rc) {
        if (err)
            *err = c->err;
        return c->rc;
    }
    return rc;
}

/* Whether the shard's schema object name (the spans table, its index) is made by the same SQL as
 * the merged file's: 1, 0 (different, or not there), or an SQLite error. */
static int same_sql(sqlite3 *db, const char *name)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(db,
                                "SELECT (SELECT sql FROM main.sqlite_master WHERE name = ?1) IS"
                                " (SELECT sql FROM src.sqlite_master WHERE name = ?1)"
                                " AND (SELECT sql FROM src.sqlite_master WHERE name = ?1) NOT NULL",
                                -1, &st, NULL);

    if (rc == SQLITE_OK)
        rc = sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
    if (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW)
        rc = sqlite3_column_int(st, 0) == 1;
    else if (rc == SQLITE_OK || rc == SQLITE_DONE)
        rc = SQLITE_ERROR;
    sqlite3_finalize(st);
    return rc == 1 ? 1 : rc == 0 ? 0 : -rc;
}

/* SQLite's progress handler during a shard's copy in one statement: a line about once a second
 * (the merged file's growth: rows are not counted until the statement ends), and the copy
 * stopped (SQLITE_INTERRUPT) when the check has failed. */
static int copy_progress(void *ctx)
{
    struct progress *p = ctx;
    struct stat sb;

    if (atomic_load(&p->check->failed))
        return 1;
    if (pps__progress_due(&p->when) && stat(p->out_file, &sb) == 0)
        fprintf(stderr, "ppscope merge: %s: %s: %lld MB written (the shard is %lld MB)\n", p->run,
                p->shard, (long long)((sb.st_size - p->out_base) >> 20),
                (long long)(p->shard_bytes >> 20));
    return 0;
}

/* A shard whose spans table is the merged file's (same_sql()) is copied in one statement, row
 * for row as stored: into the still empty table, with its index alike, SQLite's transfer copies
 * the table's and the index's pages in order, no row decoded and no sort (on 10M spans 2.3x as
 * fast as copying column by column and building the index after: docs/schema.md). 0, or the
 * SQLite error. */
static int copy_whole(sqlite3 *db, struct progress *p)
{
    sqlite3_stmt *st = NULL;
    struct stat sb;
    int rc;

    p->out_base = stat(p->out_file, &sb) == 0 ? (int64_t)sb.st_size : 0;
    sqlite3_progress_handler(db, 1 << 16, copy_progress, p);
    rc = sqlite3_prepare_v2(db, "INSERT INTO main.spans SELECT * FROM src.spans", -1, &st, NULL);
    if (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_DONE) {
        rc = SQLITE_OK;
        p->copied += sqlite3_changes(db);
    }
    sqlite3_finalize(st); /* keeps SQLite's reason for constraint_fail() */
    sqlite3_progress_handler(db, 0, NULL, NULL);
    return rc;
}

/* The spans of the shard attached as src, as this transaction sees them. */
struct span_rows {
    int64_t first, last; /* their lowest and highest rowid */
    int64_t n;
};

static int span_rows(sqlite3 *db, struct span_rows *r)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(
        db, "SELECT coalesce(min(rowid), 0), coalesce(max(rowid), 0), count(*) FROM src.spans", -1,
        &st, NULL);

    if (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        r->first = sqlite3_column_int64(st, 0);
        r->last = sqlite3_column_int64(st, 1);
        r->n = sqlite3_column_int64(st, 2);
        rc = SQLITE_OK;
    }
    sqlite3_finalize(st);
    return rc;
}

/* The spans of a shard of another layout, column by column, by name: 2^20 rows at a time in
 * rowid order (so that progress can be told), each chunk's bounds found among the rowids there
 * are, whatever they are (negative, far apart). 0, or the SQLite error (finalized: SQLite's
 * reason is kept for constraint_fail()). */
#define SPAN_CHUNK ((int64_t)1 << 20)
static int copy_chunked(sqlite3 *db, const char *sql, const struct span_rows *r, struct progress *p)
{
    sqlite3_stmt *copy = NULL, *end = NULL;
    int64_t lo = r->first, hi;
    int rc;

    if (r->n == 0)
        return SQLITE_OK;
    rc = sqlite3_prepare_v2(db, sql, -1, &copy, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_prepare_v2(db,
                                "SELECT rowid FROM src.spans WHERE rowid >= ?1 ORDER BY rowid"
                                " LIMIT 1 OFFSET ?2",
                                -1, &end, NULL);
    while (rc == SQLITE_OK) {
        sqlite3_bind_int64(end, 1, lo);
        sqlite3_bind_int64(end, 2, SPAN_CHUNK - 1);
        rc = sqlite3_step(end);
        hi = rc == SQLITE_ROW ? sqlite3_column_int64(end, 0) : r->last;
        if (rc != SQLITE_ROW && rc != SQLITE_DONE)
            break;
        sqlite3_reset(end);
        sqlite3_bind_int64(copy, 1, lo);
        sqlite3_bind_int64(copy, 2, hi);
        if ((rc = sqlite3_step(copy)) != SQLITE_DONE)
            break;
        rc = SQLITE_OK;
        sqlite3_reset(copy);
        p->copied += sqlite3_changes(db);
        copied(p);
        if (hi >= r->last || atomic_load(&p->check->failed))
            break; /* the check's error is the merge's (check_finish()) */
        lo = hi + 1;
    }
    sqlite3_finalize(end);
    sqlite3_finalize(copy);
    return rc;
}

/* Copies the shard attached as src into the merged file, table by table. Every span the shard
 * holds in this transaction is copied, or the merge fails. */
static int copy_rows(sqlite3 *db, const char *shard, struct progress *p, struct pps_err *err)
{
    struct span_rows rows = {0, 0, 0};
    int64_t before = p->copied;
    int whole = 0, rc;

    if ((rc = span_rows(db, &rows)) == SQLITE_OK && (whole = same_sql(db, "spans")) < 0)
        rc = -whole;
    /* Into the empty table SQLite's transfer keeps the shard's rowids: near the top, the next
     * shards' would be chosen at random (SQLite's way past the highest), and two merges differ. */
    if (p->copied == 0 && rows.last >= (INT64_C(1) << 62))
        whole = 0;
    /* The first shard keeps the merged file's index only where it has the same one to copy:
     * else the rows go in without it, and it is built once at the end, a sort of the whole
     * table, as a bulk load does. */
    if (rc == SQLITE_OK && p->copied == 0 && !p->index_later) {
        int same = whole ? same_sql(db, PPS__SPANS_INDEX) : 0;
        if (same < 0)
            rc = -same;
        else if (!same && (rc = pps__exec(db, "DROP INDEX " PPS__SPANS_INDEX, p->out_file,
                                          "cannot write", err)))
            return rc;
        else
            p->index_later = !same;
    }
    if (rc != SQLITE_OK)
        return pps__sql_fail(db, rc, shard, "cannot merge", err);
    for (size_t i = 0; i < sizeof(copies) / sizeof(copies[0]); i++) {
        sqlite3_stmt *st = NULL;

        if (strcmp(copies[i].table, "spans") != 0) {
            rc = sqlite3_prepare_v2(db, copies[i].sql, -1, &st, NULL);
            if (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_DONE)
                rc = SQLITE_OK;
            sqlite3_finalize(st); /* keeps SQLite's reason for constraint_fail() */
        } else if (whole) {
            rc = copy_whole(db, p);
            copied(p);
        } else {
            rc = copy_chunked(db, copies[i].sql, &rows, p);
        }
        if (atomic_load(&p->check->failed))
            return pps_err_set(err, PPS_EFORMAT, "%s: the check failed", shard);
        if ((rc & 0xff) == SQLITE_CONSTRAINT)
            return constraint_fail(db, rc, &copies[i], shard, err);
        if (rc != SQLITE_OK)
            return pps__sql_fail(db, rc, shard, "cannot merge", err);
    }
    if (p->copied - before != rows.n)
        return pps_err_set(err, PPS_EIO, "%s: %lld of its %lld spans were copied", shard,
                           (long long)(p->copied - before), (long long)rows.n);
    return 0;
}

/* Copies one shard into the merged file, in one transaction. */
static int copy_shard(sqlite3 *db, const char *shard, const char *out_file, struct progress *p,
                      struct pps_err *err)
{
    sqlite3_stmt *attach = NULL;
    sqlite3 *check = NULL;
    struct stat sb;
    char *uri = NULL;
    int attached = 0, in_txn = 0, immutable = 0, rc;

    /* Checked just before, opened as the reader would (immutable where it must be). */
    rc = pps__trace_open(shard, &check, &immutable, err);
    sqlite3_close(check);
    if (rc)
        goto out;
    if (!(uri = pps__file_uri(shard, immutable ? "mode=ro&immutable=1" : "mode=ro"))) {
        rc = pps_err_set(err, PPS_ENOMEM, "%s: out of memory", shard);
        goto out;
    }
    rc = sqlite3_prepare_v2(db, "ATTACH DATABASE ? AS src", -1, &attach, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_text(attach, 1, uri, -1, SQLITE_STATIC);
    if (rc == SQLITE_OK && (rc = sqlite3_step(attach)) == SQLITE_DONE)
        rc = SQLITE_OK;
    if (rc != SQLITE_OK) {
        rc = pps__sql_fail(db, rc, shard, "cannot open", err);
        goto out;
    }
    attached = 1;
    p->shard = shard;
    p->shard_bytes = stat(shard, &sb) == 0 ? (int64_t)sb.st_size : 0;
    if ((rc = pps__exec(db, "BEGIN", out_file, "cannot write", err)))
        goto out;
    in_txn = 1;
    if ((rc = copy_rows(db, shard, p, err)))
        goto out;
    if ((rc = pps__exec(db, "COMMIT", out_file, "cannot write", err)))
        goto out;
    in_txn = 0;
out:
    if (in_txn)
        sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL); /* the output is removed anyway */
    sqlite3_finalize(attach);
    if (attached) {
        int drc = sqlite3_exec(db, "DETACH DATABASE src", NULL, NULL, NULL);
        if (drc != SQLITE_OK && !rc)
            rc = pps__sql_fail(db, drc, shard, "cannot close", err);
    }
    free(uri);
    return rc;
}

/* An output in the run directory under a shard's name would be read by the check as one of the
 * run's shards, half written: refused, before anything is written. run_sb: the run directory's
 * stat. */
static int not_a_shard_of(const char *run_dir, const struct stat *run_sb, const char *out_file,
                          struct pps_err *err)
{
    const char *base = strrchr(out_file, '/');
    char *dir;
    struct stat sb;
    int inside;

    base = base ? base + 1 : out_file;
    if (pps__shard_name_rank(base) < 0)
        return 0;
    if (!(dir = strdup(out_file)))
        return pps_err_set(err, PPS_ENOMEM, "%s: out of memory", out_file);
    dir[base - out_file] = '\0';
    inside = stat(*dir ? dir : ".", &sb) == 0 && sb.st_dev == run_sb->st_dev &&
             sb.st_ino == run_sb->st_ino;
    free(dir);
    if (inside)
        return pps_err_set(err, PPS_EINVAL,
                           "%s: a shard's name in %s itself (the merge would read its own output "
                           "as one of the run's shards): write it elsewhere",
                           out_file, run_dir);
    return 0;
}

int pps_run_merge(const char *run_dir, const char *out_file, struct pps_err *err)
{
    return pps_run_merge_progress(run_dir, out_file, 0, err);
}

int pps_run_merge_progress(const char *run_dir, const char *out_file, int progress,
                           struct pps_err *err)
{
    struct check check = {.run_dir = run_dir};
    struct progress p = {.run = run_dir, .check = &check};
    struct pps__shards shards = {0};
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    const char *mode;
    char *uri = NULL;
    struct stat sb;
    int created = 0, checking = 0, threaded = 0, fd, rc;

    if (!run_dir || !out_file || !*out_file) {
        rc = pps_err_set(err, PPS_EINVAL, "pps_run_merge: no run directory or output file");
        goto out;
    }
    if ((rc = pps__stat(run_dir, &sb, err)))
        goto out;
    if (!S_ISDIR(sb.st_mode)) {
        rc = pps_err_set(err, PPS_EINVAL,
                         "%s: not a run directory (merge reads a directory of rank-*.db shards)",
                         run_dir);
        goto out;
    }
    pps__progress_start(&p.when, progress);
    pps__progress_start(&check.when, progress);
    if ((rc = pps__shards_list(run_dir, &shards, err)))
        goto out;
    check_start(&check, &threaded);
    checking = 1;
    if (!threaded && check.rc)
        goto out;

    if ((rc = not_a_shard_of(run_dir, &sb, out_file, err)))
        goto out;
    fd = open(out_file, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0) {
        if (errno == EEXIST)
            rc =
                pps_err_set(err, PPS_EINVAL,
                            "%s: already exists (ppscope merge never overwrites a file)", out_file);
        else
            rc = pps_err_set(err, errno == ENOENT || errno == ENOTDIR ? PPS_EINVAL : PPS_EIO,
                             "%s: cannot create (%s)", out_file, strerror(errno));
        goto out;
    }
    close(fd);
    created = 1;

    if (!(uri = pps__file_uri(out_file, "mode=rw"))) {
        rc = pps_err_set(err, PPS_ENOMEM, "%s: out of memory", out_file);
        goto out;
    }
    rc = sqlite3_open_v2(uri, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_URI,
                         NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_extended_result_codes(db, 1);
    if (rc == SQLITE_OK)
        rc = sqlite3_busy_timeout(db, PPS__BUSY_TIMEOUT_MS);
    if (rc == SQLITE_OK)
        rc = sqlite3_prepare_v2(db, "PRAGMA journal_mode = DELETE", -1, &st, NULL);
    if (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW)
        rc = SQLITE_OK;
    if (rc != SQLITE_OK) {
        rc = pps__sql_fail(db, rc, out_file, "cannot create", err);
        goto out;
    }
    mode = (const char *)sqlite3_column_text(st, 0);
    if (!mode || strcmp(mode, "delete") != 0) {
        rc = pps_err_set(err, PPS_EIO, "%s: cannot use journal_mode=DELETE (got '%s')", out_file,
                         mode ? mode : "?");
        goto out;
    }
    sqlite3_finalize(st); /* a statement still running would keep COMMIT from working */
    st = NULL;
    /* With its index: the first shard's is copied with its rows (copy_rows()). */
    if ((rc = pps__schema_create(db, out_file, err)))
        goto out;
    p.out_file = out_file;
    for (size_t i = 0; i < shards.n; i++)
        if ((rc = copy_shard(db, shards.paths[i], out_file, &p, err)))
            goto out;
    if (p.index_later && progress)
        fprintf(stderr, "ppscope merge: %s: indexing %lld spans\n", run_dir, (long long)p.copied);
    if (p.index_later && (rc = pps__exec(db, PPS__SPANS_INDEX_SQL, out_file, "cannot index", err)))
        goto out;
    rc = sqlite3_close(db);
    db = NULL;
    if (rc != SQLITE_OK) {
        rc = pps__sql_fail(NULL, rc, out_file, "cannot close", err);
        goto out;
    }
out:
    free(uri);
    sqlite3_finalize(st);
    sqlite3_close(db);
    if (checking)
        rc = check_finish(&check, threaded, rc, err);
    if (rc && created) {
        /* Half a merged file is worse than none. */
        char *journal = malloc(strlen(out_file) + 9);
        unlink(out_file);
        if (journal) {
            strcpy(journal, out_file);
            strcat(journal, "-journal");
            unlink(journal);
            free(journal);
        }
    }
    pps__shards_release(&shards);
    return rc;
}
