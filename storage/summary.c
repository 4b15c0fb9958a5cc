/*
 * summary.c - keeps a summary of a run beside its files: bytes that a reader made from the run
 * (the analysis's measurement: analysis/summary.c), under a name, valid for one stamp of the run
 * (pps_run.stamp). Where: ppscope.summary in a run directory, FILE.summary beside one file.
 * It is an SQLite file of its own, never one of the run's: a shard or a merged file may be open
 * for reading (immutable) while a summary is written, and nothing may change under such a reader.
 *
 *   summaries(name TEXT PRIMARY KEY, stamp INTEGER, written_ns INTEGER, data BLOB)
 *
 * application_id 'ppsS' says the file is ours: one that is not is neither read nor written.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "storage_int.h"

#define SUMMARY_APP_ID 0x70707353 /* 'ppsS' */
#define SUMMARY_FILE   "ppscope.summary"

/* Where the summary of the run at path lives (malloc'd), or NULL out of memory or for a path that
 * is neither a directory nor a file (*missing = 1 then). */
static char *summary_path(const char *path, int *missing)
{
    struct stat st;
    size_t n = strlen(path);
    char *out;

    *missing = 0;
    if (stat(path, &st) != 0 || (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode))) {
        *missing = 1;
        return NULL;
    }
    if (!(out = malloc(n + sizeof(SUMMARY_FILE) + 2)))
        return NULL;
    if (S_ISDIR(st.st_mode))
        snprintf(out, n + sizeof(SUMMARY_FILE) + 2, "%s/%s", path, SUMMARY_FILE);
    else
        snprintf(out, n + sizeof(SUMMARY_FILE) + 2, "%s.summary", path);
    return out;
}

/* A summary is waited for this long where another report holds it: it only saves time. */
#define SUMMARY_BUSY_MS 500

/* What is at file: 0 nothing, 1 a regular file, -1 anything else (a symbolic link, a FIFO, a
 * directory: never opened, nor written through). */
static int what_is(const char *file)
{
    struct stat st;

    if (lstat(file, &st) != 0)
        return errno == ENOENT ? 0 : -1;
    return S_ISREG(st.st_mode) ? 1 : -1;
}

static int open_summary(const char *file, int write, sqlite3 **db, struct pps_err *err)
{
    char *uri = pps__file_uri(file, write ? "mode=rwc" : "mode=ro");
    int flags = SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_URI | SQLITE_OPEN_NOFOLLOW |
                (write ? SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE : SQLITE_OPEN_READONLY);
    int rc;

    *db = NULL;
    if (!uri)
        return pps_err_set(err, PPS_ENOMEM, "%s: out of memory", file);
    rc = sqlite3_open_v2(uri, db, flags, NULL);
    free(uri);
    if (rc == SQLITE_OK)
        rc = sqlite3_extended_result_codes(*db, 1);
    if (rc == SQLITE_OK)
        rc = sqlite3_busy_timeout(*db, SUMMARY_BUSY_MS);
    if (rc != SQLITE_OK)
        return pps__sql_fail(*db, rc, file, write ? "cannot write" : "cannot read", err);
    return 0;
}

/* The file's application_id and whether it has tables; PPS_EFORMAT, in the summary's words,
 * for a file SQLite cannot read. */
static int probe(sqlite3 *db, const char *file, int64_t *app_id, int64_t *tables,
                 struct pps_err *err)
{
    struct pps_err why = {0, ""};
    int rc = pps__count_rows(db, file, "PRAGMA application_id", app_id, &why);

    if (rc == 0)
        rc = pps__count_rows(db, file, "SELECT count(*) FROM sqlite_master", tables, &why);
    if (rc == PPS_ENOMEM)
        *err = why;
    else if (rc < 0)
        rc = pps_err_set(err, PPS_EFORMAT, "%s: not a ppscope summary (SQLite cannot read it)",
                         file);
    return rc;
}

int pps_run_summary_get(const char *path, const char *name, uint64_t stamp, void **data,
                        size_t *len, struct pps_err *err)
{
    char *file = NULL;
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    int64_t app_id = 0, tables = 0;
    int missing, rc;

    *data = NULL;
    *len = 0;
    if (!path || !name)
        return pps_err_set(err, PPS_EINVAL, "pps_run_summary_get: no run or no name");
    if (!(file = summary_path(path, &missing))) {
        rc = missing ? 0 : pps_err_set(err, PPS_ENOMEM, "%s: out of memory", path);
        goto out;
    }
    switch (what_is(file)) {
    case 0:
        rc = 0; /* no summary yet */
        goto out;
    case -1:
        rc = pps_err_set(err, PPS_EFORMAT, "%s: not a ppscope summary (not a regular file)", file);
        goto out;
    }
    if ((rc = open_summary(file, 0, &db, err)) || (rc = probe(db, file, &app_id, &tables, err)))
        goto out;
    if (app_id != SUMMARY_APP_ID) {
        rc = pps_err_set(err, PPS_EFORMAT, "%s: not a ppscope summary", file);
        goto out;
    }
    if ((rc = pps__prepare(db, "SELECT data FROM summaries WHERE name = ?1 AND stamp = ?2", file,
                           &st, err)))
        goto out;
    sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, (int64_t)stamp);
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        const void *blob = sqlite3_column_blob(st, 0);
        int n = sqlite3_column_bytes(st, 0);

        if (n > 0 && blob) {
            if (!(*data = malloc((size_t)n))) {
                rc = pps_err_set(err, PPS_ENOMEM, "%s: out of memory", file);
                goto out;
            }
            memcpy(*data, blob, (size_t)n);
            *len = (size_t)n;
        }
        rc = *data != NULL;
    } else {
        rc = pps__step_done(db, rc, file, err);
    }
out:
    sqlite3_finalize(st);
    sqlite3_close(db);
    free(file);
    return rc;
}

int pps_run_summary_put(const char *path, const char *name, uint64_t stamp, const void *data,
                        size_t len, struct pps_err *err)
{
    char *file = NULL;
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    int64_t app_id = 0, tables = 0;
    int missing, in_txn = 0, existed, rc;
    struct timespec now;

    if (!path || !name || !data || len == 0 || len > INT32_MAX)
        return pps_err_set(err, PPS_EINVAL, "pps_run_summary_put: nothing to keep");
    if (!(file = summary_path(path, &missing))) {
        rc = missing ? pps_err_set(err, PPS_ENOENT, "%s: no such run", path)
                     : pps_err_set(err, PPS_ENOMEM, "%s: out of memory", path);
        goto out;
    }
    /* Only a summary of ours is written over, and only a file: a link is not followed. */
    if ((existed = what_is(file)) < 0) {
        rc = pps_err_set(err, PPS_EFORMAT,
                         "%s: not a ppscope summary (not a regular file): left as it is", file);
        goto out;
    }
    if ((rc = open_summary(file, 1, &db, err)))
        goto out;
    /* A file SQLite cannot read is said to be no summary, before a write is tried on it. */
    if (existed && (rc = probe(db, file, &app_id, &tables, err)))
        goto out;
    if ((rc = pps__exec(db, "BEGIN IMMEDIATE", file, "cannot write", err)))
        goto out;
    in_txn = 1;
    if ((rc = probe(db, file, &app_id, &tables, err)))
        goto out;
    if (existed && (app_id != SUMMARY_APP_ID || tables == 0)) {
        rc = pps_err_set(err, PPS_EFORMAT, "%s: not a ppscope summary: left as it is", file);
        goto out;
    }
    if ((rc = pps__exec(db,
                        "PRAGMA application_id = 1886417747;" /* SUMMARY_APP_ID */
                        "CREATE TABLE IF NOT EXISTS summaries(name TEXT PRIMARY KEY, stamp INTEGER "
                        "NOT NULL, written_ns INTEGER NOT NULL, data BLOB NOT NULL)",
                        file, "cannot write", err)))
        goto out;
    if ((rc = pps__prepare(db, "INSERT OR REPLACE INTO summaries VALUES (?1, ?2, ?3, ?4)", file,
                           &st, err)))
        goto out;
    clock_gettime(CLOCK_REALTIME, &now);
    sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, (int64_t)stamp);
    sqlite3_bind_int64(st, 3, (int64_t)now.tv_sec * 1000000000 + now.tv_nsec);
    sqlite3_bind_blob(st, 4, data, (int)len, SQLITE_STATIC);
    if ((rc = pps__step_done(db, sqlite3_step(st), file, err)))
        goto out;
    rc = pps__exec(db, "COMMIT", file, "cannot write", err);
    in_txn = rc != 0;
out:
    sqlite3_finalize(st);
    if (in_txn)
        sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
    sqlite3_close(db);
    free(file);
    return rc;
}
