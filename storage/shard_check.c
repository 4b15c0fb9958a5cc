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

/* A step that did not finish: damage where SQLite says so, else what SQLite could not do. */
static int step_failed(sqlite3 *db, int rc, const char *path, struct pps_err *err)
{
    if ((rc & 0xff) == SQLITE_CORRUPT)
        return damaged(path, sqlite3_errmsg(db), err);
    return pps__sql_fail(db, rc, path, "cannot check", err);
}

/* Whether key k sorts before key prev (each stage, start_ns, rowid). */
static int before(const int64_t k[3], const int64_t prev[3])
{
    for (int i = 0; i < 3; i++)
        if (k[i] != prev[i])
            return k[i] < prev[i];
    return 0;
}

/*
 * Every entry of the spans index into *t, read through the index alone, in the order the index
 * keeps them, which must be the order of their keys (stage, start_ns, rowid): quick_check does
 * not look at that, and a swapped pair of the index's pages holds every entry, so only their
 * order shows it. A file without the index has no tally (t->n = -1): nothing to compare.
 */
static int tally_index(sqlite3 *db, const char *path, struct pps__index_tally *t,
                       struct pps_err *err)
{
    sqlite3_stmt *st = NULL;
    int64_t prev[3] = {0, 0, 0}, k[3];
    int rc, have_prev = 0;

    rc = sqlite3_prepare_v2(
        db,
        "SELECT count(*) FROM sqlite_schema WHERE type = 'index' AND name = '" PPS__SPANS_INDEX "'",
        -1, &st, NULL);
    if (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW && !sqlite3_column_int64(st, 0)) {
        t->n = -1;
        sqlite3_finalize(st);
        return 0;
    }
    sqlite3_finalize(st);
    st = NULL;
    if (rc != SQLITE_ROW)
        return step_failed(db, rc, path, err);
    rc = sqlite3_prepare_v2(
        db, "SELECT stage, start_ns, rowid FROM spans INDEXED BY " PPS__SPANS_INDEX, -1, &st, NULL);
    while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        int ints = 1;

        for (int c = 0; c < 3; c++) {
            ints &= sqlite3_column_type(st, c) == SQLITE_INTEGER;
            k[c] = sqlite3_column_int64(st, c);
        }
        pps__index_tally_add(t, k[0], k[1], k[2]);
        rc = SQLITE_OK;
        /* A key that is not a number is the row's reader's to refuse (it sorts apart). */
        if (!ints)
            continue;
        if (have_prev && before(k, prev)) {
            rc = pps_err_set(err, PPS_EFORMAT,
                             "%s: damaged (the spans index is out of order at its entry %lld: "
                             "stage %lld, start_ns %lld after stage %lld, start_ns %lld)",
                             path, (long long)t->n, (long long)k[0], (long long)k[1],
                             (long long)prev[0], (long long)prev[1]);
            sqlite3_finalize(st);
            return rc;
        }
        memcpy(prev, k, sizeof(prev));
        have_prev = 1;
    }
    rc = rc == SQLITE_DONE ? 0 : step_failed(db, rc, path, err);
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

/* The index's tally against the table's (none without the index). */
static int compare(const char *path, const struct pps__index_tally *index,
                   const struct pps__index_tally *table, struct pps_err *err)
{
    if (index->n < 0)
        return 0;
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
