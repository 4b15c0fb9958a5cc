/*
 * shard_check.c - SQLite's check of a finished shard beside its load (shard_check.h).
 *
 * A damaged page that SQLite can still read (a page copied over another, a cell moved) gives
 * rows the loader's own checks accept: a duplicated page drops and repeats spans without a
 * wrong value in any of them. SQLite's checks find what the loader cannot, on the file as it
 * is: the loader reads a finished shard, which nothing writes any more.
 */
#include "shard_check.h"

#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "storage_int.h"

struct pps__shard_check {
    pthread_t thread;
    char *path;
    struct pps_err err;
    struct pps__index_tally index;
    int rc;
};

static int damaged(const char *path, const char *said, struct pps_err *err)
{
    return pps_err_set(err, PPS_EFORMAT, "%s: damaged (SQLite's check: %s)", path, said);
}

/* One of SQLite's checks (a pragma that answers "ok" or its problems): 0, or the first problem.
 * The first problem says enough: each check is asked to stop there, not after a hundred. */
static int pragma_ok(sqlite3 *db, const char *sql, const char *path, struct pps_err *err)
{
    static const char head[] = "*** in database main ***\n";
    sqlite3_stmt *st = NULL;
    int rc = 0, step;

    step = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
    if (step == SQLITE_OK)
        step = sqlite3_step(st);
    if (step == SQLITE_ROW) {
        const char *said = (const char *)sqlite3_column_text(st, 0);
        if (said && !strncmp(said, head, sizeof(head) - 1))
            said += sizeof(head) - 1; /* SQLite's heading of the one database there is */
        if (!said || strcmp(said, "ok") != 0)
            rc = damaged(path, said ? said : "no answer", err);
    } else {
        rc = damaged(path, sqlite3_errmsg(db), err);
    }
    sqlite3_finalize(st);
    return rc;
}

/* Every entry of the spans index into *t, read through the index alone. */
static int tally_index(sqlite3 *db, const char *path, struct pps__index_tally *t,
                       struct pps_err *err)
{
    sqlite3_stmt *st = NULL;
    int rc;

    rc = sqlite3_prepare_v2(db,
                            "SELECT stage, start_ns, rowid FROM spans INDEXED BY " PPS__SPANS_INDEX,
                            -1, &st, NULL);
    while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        pps__index_tally_add(t, sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1),
                             sqlite3_column_int64(st, 2));
        rc = SQLITE_OK;
    }
    rc = rc == SQLITE_DONE ? 0 : damaged(path, sqlite3_errmsg(db), err);
    sqlite3_finalize(st);
    return rc;
}

/* Checks path, its index's tally into *t: 0, or the error in *err. */
static int check(const char *path, struct pps__index_tally *t, struct pps_err *err)
{
    sqlite3 *db = NULL;
    int rc;

    if ((rc = pps__trace_open(path, &db, NULL, err)))
        return rc;
    /* Every page's structure and the order of its keys; kinds' one index against its rows (the
     * tables meta and names are their own keys, WITHOUT ROWID); the spans index by tally. */
    if (!(rc = pragma_ok(db, "PRAGMA quick_check(1)", path, err)) &&
        !(rc = pragma_ok(db, "PRAGMA integrity_check(kinds)", path, err)))
        rc = tally_index(db, path, t, err);
    sqlite3_close(db);
    return rc;
}

/* The index's tally against the table's. */
static int compare(const char *path, const struct pps__index_tally *index,
                   const struct pps__index_tally *table, struct pps_err *err)
{
    if (index->n != table->n)
        return pps_err_set(err, PPS_EFORMAT,
                           "%s: damaged (the spans index does not match the table: %lld entries "
                           "for %lld rows)",
                           path, (long long)index->n, (long long)table->n);
    if (index->sum != table->sum)
        return pps_err_set(err, PPS_EFORMAT,
                           "%s: damaged (the spans index does not match the table: its %lld "
                           "entries are not the rows' stage, start_ns and rowid)",
                           path, (long long)index->n);
    return 0;
}

static void *check_main(void *arg)
{
    struct pps__shard_check *c = arg;

    c->rc = check(c->path, &c->index, &c->err);
    return NULL;
}

int pps__shard_check_start(const char *path, struct pps__shard_check **out, struct pps_err *err)
{
    struct pps__shard_check *c = calloc(1, sizeof(*c));

    *out = NULL;
    if (!c || !(c->path = strdup(path))) {
        free(c);
        return pps_err_set(err, PPS_ENOMEM, "%s: out of memory", path);
    }
    if (pthread_create(&c->thread, NULL, check_main, c) != 0) {
        free(c->path);
        free(c);
        return 0; /* finish checks on the caller's thread */
    }
    *out = c;
    return 0;
}

int pps__shard_check_finish(const char *path, struct pps__shard_check *c,
                            const struct pps__index_tally *table, struct pps_err *err)
{
    struct pps__index_tally index = {0, 0};
    int rc;

    if (!c) {
        rc = check(path, &index, err);
        return rc ? rc : compare(path, &index, table, err);
    }
    pthread_join(c->thread, NULL);
    rc = c->rc;
    if (rc && err)
        *err = c->err;
    if (!rc)
        rc = compare(path, &c->index, table, err);
    free(c->path);
    free(c);
    return rc;
}

void pps__shard_check_abandon(struct pps__shard_check *c)
{
    if (!c)
        return;
    pthread_join(c->thread, NULL);
    free(c->path);
    free(c);
}
