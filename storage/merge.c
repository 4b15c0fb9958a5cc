/*
 * merge.c - a run directory into one portable file: every shard's meta, names, spans and
 * metrics, rows unchanged (ranks kept, times raw, the clock offsets in meta), so the reader
 * aligns a merged file exactly as it aligns the directory. The file uses a rollback journal
 * (journal_mode=DELETE): one file, nothing beside it, to copy anywhere.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "storage_int.h"

static const char copy_sql[] =
    "INSERT INTO main.meta (rank, key, value) SELECT rank, key, value FROM src.meta;"
    "INSERT INTO main.names (rank, id, name) SELECT rank, id, name FROM src.names;"
    "INSERT INTO main.spans (kind, stage, chunk, mb, iter, start_ns, end_ns, peer, bytes, name_id,"
    "  clock, corr, rank)"
    " SELECT kind, stage, chunk, mb, iter, start_ns, end_ns, peer, bytes, name_id, clock, corr,"
    "  rank FROM src.spans;"
    "INSERT INTO main.metrics (rank, iter, stage, loss, grad_norm, act_bytes, pending_w, dropped)"
    " SELECT rank, iter, stage, loss, grad_norm, act_bytes, pending_w, dropped FROM src.metrics;";

/* Copies one shard into the merged file, in one transaction. */
static int copy_shard(sqlite3 *db, const char *shard, const char *out_file, struct pps_err *err)
{
    sqlite3_stmt *attach = NULL;
    sqlite3 *check = NULL;
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
    if ((rc = pps__exec(db, "BEGIN", out_file, "cannot write", err)))
        goto out;
    in_txn = 1;
    rc = sqlite3_exec(db, copy_sql, NULL, NULL, NULL);
    if ((rc & 0xff) == SQLITE_CONSTRAINT) {
        rc = pps_err_set(err, PPS_EFORMAT, "%s: its rank is in another shard of this run too",
                         shard);
        goto out;
    }
    if (rc != SQLITE_OK) {
        rc = pps__sql_fail(db, rc, shard, "cannot merge", err);
        goto out;
    }
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

/* The ranks of one shard's meta rows into claimed: one rank in two shards is refused. */
static int claim_ranks(sqlite3 *db, const char *shard, struct pps__rank_set *claimed,
                       struct pps_err *err)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(db, "SELECT DISTINCT rank FROM meta", -1, &st, NULL);

    if (rc != SQLITE_OK) {
        rc = pps__sql_fail(db, rc, shard, "cannot read", err);
        goto out;
    }
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t rank = sqlite3_column_int64(st, 0);
        if ((rc = pps__rank_claim(claimed, rank < 0 || rank > INT16_MAX ? -1 : (int)rank, shard,
                                  err)))
            goto out;
    }
    if (rc != SQLITE_DONE) {
        rc = pps__sql_fail(db, rc, shard, "cannot read", err);
        goto out;
    }
    rc = 0;
out:
    sqlite3_finalize(st);
    return rc;
}

/* Appends one shard's meta rows to run->meta (capacity *cap), for the identity check. */
static int collect_meta(sqlite3 *db, const char *shard, struct pps_run *run, size_t *cap,
                        struct pps_err *err)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(db, "SELECT rank, key, value FROM meta", -1, &st, NULL);

    if (rc != SQLITE_OK) {
        rc = pps__sql_fail(db, rc, shard, "cannot read", err);
        goto out;
    }
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t rank = sqlite3_column_int64(st, 0);
        const char *key = (const char *)sqlite3_column_text(st, 1);
        const char *value = (const char *)sqlite3_column_text(st, 2);
        if (!key || !value || rank < 0 || rank > INT16_MAX)
            continue; /* claim_ranks and the reader say what is wrong with it */
        if (pps__meta_push(&run->meta, &run->n_meta, cap, (int)rank, key, value)) {
            rc = pps_err_set(err, PPS_ENOMEM, "%s: out of memory", shard);
            goto out;
        }
    }
    if (rc != SQLITE_DONE) {
        rc = pps__sql_fail(db, rc, shard, "cannot read", err);
        goto out;
    }
    rc = 0;
out:
    sqlite3_finalize(st);
    return rc;
}

/* Every shard opens, is a trace this ppscope reads, holds ranks no other shard holds, and is of
 * the same run as the others (pps__run_identity_check(), as the reader): checked before
 * anything is written. */
static int check_shards(const char *run_dir, const struct pps__shards *shards, struct pps_err *err)
{
    struct pps__rank_set *claimed = calloc(1, sizeof(*claimed));
    struct pps_run run = {0};
    size_t meta_cap = 0;
    int rc = 0;

    if (!claimed)
        return pps_err_set(err, PPS_ENOMEM, "out of memory");
    run.path = (char *)run_dir;
    for (size_t i = 0; i < shards->n && !rc; i++) {
        sqlite3 *db = NULL;
        rc = pps__trace_open(shards->paths[i], &db, NULL, err);
        if (!rc)
            rc = claim_ranks(db, shards->paths[i], claimed, err);
        if (!rc)
            rc = collect_meta(db, shards->paths[i], &run, &meta_cap, err);
        sqlite3_close(db);
    }
    if (!rc) {
        qsort(run.meta, run.n_meta, sizeof(*run.meta), pps__meta_cmp);
        rc = pps__run_identity_check(&run, err);
    }
    for (size_t i = 0; i < run.n_meta; i++) {
        free(run.meta[i].key);
        free(run.meta[i].value);
    }
    free(run.meta);
    free(claimed);
    return rc;
}

/* Every row the merge copies is one the reader takes: the reader's checks, by the reader. A
 * merged file that report then refuses would be damage made by ppscope. */
static int check_rows(const char *run_dir, struct pps_err *err)
{
    struct pps_run *run = NULL;
    int rc = pps_run_load(run_dir, &run, err);

    pps_run_free(run);
    return rc;
}

int pps_run_merge(const char *run_dir, const char *out_file, struct pps_err *err)
{
    struct pps__shards shards = {0};
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    const char *mode;
    char *uri = NULL;
    struct stat sb;
    int created = 0, fd, rc;

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
    /* The reader's checks first: its reasons are exact where a count of ranks is not. */
    if ((rc = pps__shards_list(run_dir, &shards, err)) || (rc = check_rows(run_dir, err)) ||
        (rc = check_shards(run_dir, &shards, err)))
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
    if ((rc = pps__schema_create(db, out_file, err)))
        goto out;
    for (size_t i = 0; i < shards.n; i++)
        if ((rc = copy_shard(db, shards.paths[i], out_file, err)))
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
