/*
 * shard_check.c - PRAGMA integrity_check of a finished shard beside its load (shard_check.h).
 *
 * A damaged page that SQLite can still read (a page copied over another, a cell moved) gives
 * rows the loader's own checks accept: a duplicated page drops and repeats spans without a
 * wrong value in any of them. SQLite's check finds what the loader cannot, on the file as it
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
    int rc;
};

/* Checks path: 0, or the error in *err. */
static int check(const char *path, struct pps_err *err)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    int rc, step;

    if ((rc = pps__trace_open(path, &db, NULL, err)))
        return rc;
    /* integrity_check, not quick_check: it also matches every index entry with its row, which
     * finds a changed start_ns or stage that no page's structure shows. The first problem says
     * enough: the check stops there, not after a hundred. */
    step = sqlite3_prepare_v2(db, "PRAGMA integrity_check(1)", -1, &st, NULL);
    if (step == SQLITE_OK)
        step = sqlite3_step(st);
    if (step == SQLITE_ROW) {
        const char *said = (const char *)sqlite3_column_text(st, 0);
        static const char head[] = "*** in database main ***\n";
        if (said && !strncmp(said, head, sizeof(head) - 1))
            said += sizeof(head) - 1; /* SQLite's heading of the one database there is */
        if (!said || strcmp(said, "ok") != 0)
            rc = pps_err_set(err, PPS_EFORMAT, "%s: damaged (SQLite's check: %s)", path,
                             said ? said : "no answer");
    } else {
        rc = pps_err_set(err, PPS_EFORMAT, "%s: damaged (SQLite's check: %s)", path,
                         sqlite3_errmsg(db));
    }
    sqlite3_finalize(st);
    sqlite3_close(db);
    return rc;
}

static void *check_main(void *arg)
{
    struct pps__shard_check *c = arg;

    c->rc = check(c->path, &c->err);
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

int pps__shard_check_finish(const char *path, struct pps__shard_check *c, struct pps_err *err)
{
    int rc;

    if (!c)
        return check(path, err);
    pthread_join(c->thread, NULL);
    rc = c->rc;
    if (rc && err)
        *err = c->err;
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
