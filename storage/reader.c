/*
 * reader.c - loads a run (a directory of shards, or one merged file) into a struct pps_run:
 * metadata, names, spans on rank 0's clock, metrics; every file's rows go into the run as one
 * batch of run_build.h, the path the live follower (incremental.c) takes too.
 *
 * Each file is read inside one read transaction, so a shard that a rank is still writing gives a
 * consistent snapshot. Every value that becomes an index or a narrower integer is range-checked:
 * a damaged file is an error with its name, never a crash.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "pps_hash.h"
#include "run_build.h"
#include "shard_check.h"
#include "storage_int.h"

struct loader {
    struct pps_run *run;
    const char *path;            /* the file being read */
    struct pps__run_build build; /* every file's rows, as one batch */
    size_t meta_cap;

    struct pps__clock *ranks; /* of the file being read, sorted by rank */
    size_t n_ranks, ranks_cap;
    struct pps__name_ref *refs; /* of the file being read, sorted by (rank, id) */
    size_t n_refs, refs_cap;
    struct pps__rank_set *claimed; /* the shards' ranks so far; NULL for a merged file */
    int check_only;                /* pps__run_check(): spans are checked and counted, not kept */
    int windowed;                  /* pps_run_load_window(): the spans meeting [w0, w1) */
    int64_t w0, w1;
    int meta_only; /* pps_run_load_meta(): no spans at all */
    /* pps__run_check(): told the spans read so far, every 2^16 */
    void (*progress)(void *ctx, int64_t spans);
    void *progress_ctx;
};

static int oom(struct loader *ld, struct pps_err *err)
{
    return pps_err_set(err, PPS_ENOMEM, "%s: out of memory", ld->path);
}

static int prepare(struct loader *ld, sqlite3 *db, const char *sql, sqlite3_stmt **st,
                   struct pps_err *err)
{
    return pps__prepare(db, sql, ld->path, st, err);
}

static int load_meta(struct loader *ld, sqlite3 *db, struct pps_err *err)
{
    struct pps_run *run = ld->run;
    sqlite3_stmt *st = NULL;
    int have[4] = {0};
    int rc;

    if ((rc = prepare(ld, db, "SELECT rank, key, value FROM meta ORDER BY rank, key", &st, err)))
        goto out;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *key, *value;
        int rank;

        if ((rc = pps__meta_row(st, ld->path, &rank, &key, &value, err)))
            goto out;
        if (ld->n_ranks == 0 || ld->ranks[ld->n_ranks - 1].rank != rank) {
            if (ld->claimed && (rc = pps__rank_claim(ld->claimed, rank, ld->path, err)))
                goto out;
            if (pps__clock_next(&ld->ranks, &ld->n_ranks, &ld->ranks_cap, have, rank)) {
                rc = oom(ld, err);
                goto out;
            }
        }
        if ((rc = pps__clock_note(&ld->ranks[ld->n_ranks - 1], have, key, value, ld->path, err)))
            goto out;
        if (pps__meta_push(&run->meta, &run->n_meta, &ld->meta_cap, rank, key, value)) {
            rc = oom(ld, err);
            goto out;
        }
    }
    if ((rc = pps__step_done(db, rc, ld->path, err)))
        goto out;
    if (ld->n_ranks)
        pps__clock_finish(&ld->ranks[ld->n_ranks - 1], have);
    rc = 0;
out:
    sqlite3_finalize(st);
    return rc;
}

static int load_names(struct loader *ld, sqlite3 *db, const struct pps__span_bounds *b,
                      struct pps_err *err)
{
    struct pps_run *run = ld->run;
    sqlite3_stmt *st = NULL;
    int rc;

    if ((rc = prepare(ld, db, "SELECT rank, id, name FROM names ORDER BY rank, id", &st, err)))
        goto out;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *name;
        int32_t id;
        int rank;
        char *copy;

        if ((rc = pps__name_row(st, ld->path, b, &rank, &id, &name, err)))
            goto out;
        /* In (rank, id) order: a key said twice (a table without its primary key) is adjacent. */
        if (ld->n_refs && ld->refs[ld->n_refs - 1].rank == rank &&
            ld->refs[ld->n_refs - 1].id == id) {
            rc = pps_err_set(err, PPS_EFORMAT,
                             "%s: truncated or corrupted (name id %d of rank %d is there twice)",
                             ld->path, (int)id, rank);
            goto out;
        }
        if (run->n_names >= INT32_MAX) {
            rc = pps_err_set(err, PPS_EFORMAT, "%s: too many names", ld->path);
            goto out;
        }
        if (pps_grow((void **)&ld->refs, &ld->refs_cap, ld->n_refs + 1, sizeof(*ld->refs)) ||
            !(copy = strdup(name))) {
            rc = oom(ld, err);
            goto out;
        }
        ld->refs[ld->n_refs].rank = rank;
        ld->refs[ld->n_refs].id = id;
        ld->refs[ld->n_refs].index = (int32_t)run->n_names;
        if (pps__run_build_names(&ld->build, &copy, 1)) {
            free(copy);
            rc = oom(ld, err);
            goto out;
        }
        ld->n_refs++;
    }
    rc = pps__step_done(db, rc, ld->path, err);
out:
    sqlite3_finalize(st);
    return rc;
}

int pps__span_read(sqlite3_stmt *st, const char *path, const struct pps__span_bounds *b,
                   const struct pps__name_ref *refs, size_t n_refs, const struct pps__clock *ranks,
                   size_t n_ranks, const struct pps__clock **ri, struct pps_span *s,
                   struct pps__index_tally *tally, struct pps_err *err)
{
    int rc;

    if ((rc = pps__span_row(st, path, b, s, err)))
        return rc;
    if (tally)
        pps__index_tally_add(tally, s->stage, s->start_ns, sqlite3_column_int64(st, 13));
    if (s->name_id >= 0)
        s->name_id = pps__name_ref_find(refs, n_refs, s->rank, s->name_id);
    if (s->clock == PPS_CLOCK_HOST) {
        if (!*ri || (*ri)->rank != s->rank)
            *ri = pps__clock_find(ranks, n_ranks, s->rank);
        if (*ri && (rc = pps__clock_align_span(*ri, s, path, err)))
            return rc;
    }
    return 0;
}

/* One spans row of the file being read: read, checked, and kept unless a window leaves it out.
 * What pps__window_rows() hands each row to (ctx: a struct row_ctx). */
struct row_ctx {
    struct loader *ld;
    const struct pps__span_bounds *b;
    const struct pps__clock *ri;    /* the last row's rank's clock (pps__span_read()) */
    struct pps__index_tally *tally; /* the rows read, for SQLite's check; NULL: none */
};

static int take_row(void *ctx, sqlite3_stmt *st, struct pps_err *err)
{
    struct row_ctx *c = ctx;
    struct loader *ld = c->ld;
    struct pps_span s;
    int rc;

    if ((rc = pps__span_read(st, ld->path, c->b, ld->refs, ld->n_refs, ld->ranks, ld->n_ranks,
                             &c->ri, &s, c->tally, err)))
        return rc;
    if (ld->windowed && !pps__span_in_window(&s, ld->w0, ld->w1))
        return 0;
    return pps__run_build_span(&ld->build, &s) ? oom(ld, err) : 0;
}

/* Every spans row of the file, by a scan of the table; each row as stored into *tally. */
static int load_spans(struct loader *ld, sqlite3 *db, const struct pps__span_bounds *b,
                      struct pps__index_tally *tally, struct pps_err *err)
{
    struct row_ctx c = {ld, b, NULL, tally};
    sqlite3_stmt *st = NULL;
    int64_t n_read = 0, n_indexed = 0;
    int rc;

    if ((rc = prepare(ld, db, "SELECT " PPS__SPAN_COLS ", rowid FROM spans", &st, err)))
        goto out;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if ((rc = take_row(&c, st, err)))
            goto out;
        n_read++;
        if (ld->progress && (ld->run->n_spans & 0xffff) == 0)
            ld->progress(ld->progress_ctx, (int64_t)ld->run->n_spans);
    }
    if ((rc = pps__step_done(db, rc, ld->path, err)))
        goto out;
    /*
     * The scan above read every page of the table; counting through the (stage, start_ns) index
     * reads every page of the index, for a few milliseconds per million spans. Together they
     * find a damaged page anywhere the spans live, which PRAGMA quick_check would find at half
     * the cost of the whole load.
     */
    sqlite3_finalize(st);
    st = NULL;
    if ((rc = pps__count_rows(db, ld->path, "SELECT count(*) FROM spans", &n_indexed, err)))
        goto out;
    if (n_indexed != n_read) {
        rc = pps_err_set(err, PPS_EFORMAT,
                         "%s: truncated or corrupted (the spans index has %lld rows, the table "
                         "%lld)",
                         ld->path, (long long)n_indexed, (long long)n_read);
        goto out;
    }
    rc = 0;
out:
    sqlite3_finalize(st);
    return rc;
}

static int load_metrics(struct loader *ld, sqlite3 *db, const struct pps__span_bounds *b,
                        struct pps_err *err)
{
    sqlite3_stmt *st = NULL;
    int rc;

    if ((rc = prepare(ld, db, "SELECT " PPS__METRIC_COLS ", rowid FROM metrics", &st, err)))
        goto out;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        struct pps_metric m;

        if ((rc = pps__metric_row(st, ld->path, b, &m, err)))
            goto out;
        if (pps__run_build_metrics(&ld->build, &m, 1)) {
            rc = oom(ld, err);
            goto out;
        }
    }
    rc = pps__step_done(db, rc, ld->path, err);
out:
    sqlite3_finalize(st);
    return rc;
}

/* The spans of a window through the index: *indexed 0 where the file cannot say how far back to
 * look (no span_max_ns, or a clock that drifts too far): then read it whole. */
static int load_spans_window(struct loader *ld, sqlite3 *db, const struct pps__span_bounds *b,
                             int *indexed, struct pps_err *err)
{
    struct row_ctx c = {ld, b, NULL, NULL};
    int64_t lo, hi;

    *indexed = b->span_max_known && pps__window_raw_range(ld->ranks, ld->n_ranks, ld->w0, ld->w1,
                                                          b->span_max_ns, &lo, &hi) == 0;
    if (!*indexed)
        return 0;
    return pps__window_rows(db, ld->path, lo, hi, take_row, &c, err);
}

/* The file's inode, size, modification and change times, and its log's where it has one, into
 * the stamp: any write by anyone (an edit of a row in place too) changes the change time, which
 * no one can set back (touch sets the modification time only). Taken before the file is read,
 * so a change between the two makes the stamp older than what was read, never newer. */
static void stamp_stat(struct loader *ld, const char *path)
{
    char wal[4096];
    struct stat st;
    int64_t v[6];

    for (int k = 0; k < 2; k++) {
        if (k == 1 && (size_t)snprintf(wal, sizeof(wal), "%s-wal", path) >= sizeof(wal))
            break;
        memset(v, 0, sizeof(v));
        if (stat(k ? wal : path, &st) == 0) {
            v[0] = (int64_t)st.st_size;
            v[1] = (int64_t)st.st_mtim.tv_sec;
            v[2] = (int64_t)st.st_mtim.tv_nsec;
            /* Not the log's change time: SQLite run by root gives the log to the file's owner
             * (fchown) on every open, reads too, which changes it. */
            v[3] = k ? 0 : (int64_t)st.st_ctim.tv_sec;
            v[4] = k ? 0 : (int64_t)st.st_ctim.tv_nsec;
            v[5] = (int64_t)st.st_ino;
        }
        ld->run->stamp = pps_fnv1a_more(ld->run->stamp, v, sizeof(v));
    }
}

/* The file's part of the run's stamp: the highest rowid of its spans, metrics and names (rows
 * are only ever appended; names are counted), in the snapshot being read. */
static int stamp_file(struct loader *ld, sqlite3 *db, struct pps_err *err)
{
    static const char *const sql[] = {
        "SELECT coalesce(max(rowid), 0) FROM spans", "SELECT coalesce(max(rowid), 0) FROM metrics",
        "SELECT count(*) FROM names", /* names are few, and keyed by (rank, id) */
    };
    int rc;

    for (size_t i = 0; i < sizeof(sql) / sizeof(sql[0]); i++) {
        int64_t top = 0;
        if ((rc = pps__count_rows(db, ld->path, sql[i], &top, err)))
            return rc;
        ld->run->stamp = pps_fnv1a_more(ld->run->stamp, &top, sizeof(top));
    }
    return 0;
}

/* Whether the file's ranks all say they are complete (the shard is finished). */
static int all_complete(const struct loader *ld)
{
    for (size_t i = 0; i < ld->n_ranks; i++)
        if (!ld->ranks[i].complete)
            return 0;
    return ld->n_ranks > 0;
}

/*
 * Reads one file (a shard or a merged file) into the run. *n_ranks is the number of ranks with
 * metadata in it; *complete is 1 when there is one and each has complete=1.
 */
static int load_file(struct loader *ld, const char *path, size_t *n_ranks, int *complete,
                     struct pps_err *err)
{
    sqlite3 *db = NULL;
    struct pps__shard_check *check = NULL;
    struct pps__index_tally tally = {0, 0};
    size_t meta_from;
    struct pps__span_bounds bounds;
    int in_txn = 0, checking = 0, rc;

    ld->path = path;
    ld->n_ranks = 0;
    ld->n_refs = 0;
    *n_ranks = 0;
    *complete = 0;
    stamp_stat(ld, path);
    if ((rc = pps__trace_open(path, &db, NULL, err)))
        goto out;
    /* One snapshot for the whole file, however much the rank writes meanwhile. */
    if ((rc = pps__exec(db, "BEGIN", path, "cannot read", err)))
        goto out;
    in_txn = 1;
    meta_from = ld->run->n_meta;
    if ((rc = pps__kinds_check(db, path, err)) || (rc = load_meta(ld, db, err)) ||
        (rc = pps__file_meta_check(ld->run->meta ? ld->run->meta + meta_from : NULL,
                                   ld->run->n_meta - meta_from, path, &bounds, err)))
        goto out;
    /* A window is read through the index where the file allows; what is read whole (the run,
     * or a window of a file that cannot be read in part) is checked whole by SQLite too, beside
     * the load (shard_check.h). */
    int indexed = ld->meta_only;
    if ((rc = stamp_file(ld, db, err)) || (rc = load_names(ld, db, &bounds, err)) ||
        (ld->windowed && (rc = load_spans_window(ld, db, &bounds, &indexed, err))))
        goto out;
    if (!indexed && all_complete(ld)) {
        if ((rc = pps__shard_check_start(path, &check, err)))
            goto out;
        checking = 1;
    }
    if ((!indexed && (rc = load_spans(ld, db, &bounds, &tally, err))) ||
        (rc = load_metrics(ld, db, &bounds, err)))
        goto out;
    if ((rc = pps__exec(db, "COMMIT", path, "cannot read", err)))
        goto out;
    in_txn = 0;
    if (checking) {
        checking = 0; /* finish frees the check, whatever it says */
        if ((rc = pps__shard_check_finish(path, check, &tally, err)))
            goto out;
    }
    *n_ranks = ld->n_ranks;
    *complete = all_complete(ld);
out:
    if (checking)
        pps__shard_check_abandon(check);
    if (in_txn)
        sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL); /* ends a read: nothing to undo */
    sqlite3_close(db);
    free(ld->ranks);
    ld->ranks = NULL;
    ld->n_ranks = ld->ranks_cap = 0;
    return rc;
}

/* p, m or v from the metadata: absent is 0, anything but a count in 1..max is an error. */
static int meta_count(struct pps_run *run, const char *key, int64_t max, int *out,
                      struct pps_err *err)
{
    const char *s = pps_run_meta(run, key);
    int64_t v;

    *out = 0;
    if (!s)
        return 0;
    if (pps__parse_i64(s, &v) != 0 || v < 1 || v > max)
        return pps_err_set(err, PPS_EFORMAT, "%s: meta %s is '%s', not a count in 1..%lld",
                           run->path, key, s, (long long)max);
    *out = (int)v;
    return 0;
}

int pps__run_meta_counts(struct pps_run *run, struct pps_err *err)
{
    const char *sched = pps_run_meta(run, "schedule");
    int rc;

    if ((rc = pps__run_identity_check(run, err)) || /* identity.c: one run, not two */
        (rc = meta_count(run, "p", (int64_t)INT16_MAX + 1, &run->p, err)) ||
        (rc = meta_count(run, "m", PPS__MAX_M, &run->m, err)) ||
        (rc = meta_count(run, "v", INT16_MAX, &run->v, err)))
        return rc;
    if (sched && (!run->schedule || strcmp(run->schedule, sched) != 0)) {
        free(run->schedule);
        if (!(run->schedule = strdup(sched)))
            return pps_err_set(err, PPS_ENOMEM, "%s: out of memory", run->path);
    }
    return 0;
}

/* Everything after the files are read: run-wide figures, sorting. */
static int finish(struct loader *ld, struct pps_err *err)
{
    struct pps_run *run = ld->run;
    int rc;

    if (run->n_meta) /* a run of files without meta rows has no array: qsort(NULL) is UB */
        qsort(run->meta, run->n_meta, sizeof(*run->meta), pps__meta_cmp);
    for (size_t i = 0; i < run->n_meta; i++) {
        const struct pps_meta_entry *e = &run->meta[i];
        run->stamp = pps_fnv1a_more(run->stamp, &e->rank, sizeof(e->rank));
        run->stamp = pps_fnv1a_more(run->stamp, e->key, strlen(e->key) + 1);
        run->stamp = pps_fnv1a_more(run->stamp, e->value, strlen(e->value) + 1);
    }
    if ((rc = pps__run_meta_counts(run, err)))
        return rc;

    /* Stages the metadata names but no span reached are there, empty. */
    if ((run->p > 0 && pps__run_build_stages(&ld->build, (size_t)run->p)) ||
        pps__run_build_end(&ld->build) < 0)
        return oom(ld, err);
    return 0;
}

static int load(const char *path, struct loader ld, struct pps_run **out, struct pps_err *err)
{
    struct pps__shards shards = {0};
    struct pps_run *run = NULL;
    struct stat st;
    size_t n_ranks;
    int complete, rc;

    if (out)
        *out = NULL;
    if (!path || !out) {
        rc = pps_err_set(err, PPS_EINVAL, "%s: no path",
                         ld.check_only ? "pps__run_check" : "pps_run_load");
        goto out;
    }
    if ((rc = pps__stat(path, &st, err)))
        goto out;
    if (!(run = calloc(1, sizeof(*run))) || !(run->path = strdup(path))) {
        rc = pps_err_set(err, PPS_ENOMEM, "%s: out of memory", path);
        goto out;
    }
    ld.run = run;
    pps__run_build_init(&ld.build, run, ld.check_only);
    pps__run_build_begin(&ld.build);
    run->stamp = PPS_FNV_OFFSET;
    if (S_ISDIR(st.st_mode)) {
        if ((rc = pps__shards_list(path, &shards, err)))
            goto out;
        if (!(ld.claimed = calloc(1, sizeof(*ld.claimed)))) {
            rc = pps_err_set(err, PPS_ENOMEM, "%s: out of memory", path);
            goto out;
        }
        run->complete = 1;
        for (size_t i = 0; i < shards.n; i++) {
            if ((rc = load_file(&ld, shards.paths[i], &n_ranks, &complete, err)))
                goto out;
            run->complete &= complete;
        }
        run->n_shards = (int)shards.n;
    } else {
        if ((rc = load_file(&ld, path, &n_ranks, &complete, err)))
            goto out;
        run->merged = 1;
        run->complete = complete;
        run->n_shards = n_ranks > 0 ? (int)n_ranks : 1;
    }
    ld.path = path;
    if ((rc = finish(&ld, err)))
        goto out;
    *out = run;
    run = NULL;
out:
    pps__shards_release(&shards);
    free(ld.claimed);
    pps__run_build_release(&ld.build);
    free(ld.refs);
    pps_run_free(run);
    return rc;
}

int pps_run_load(const char *path, struct pps_run **out, struct pps_err *err)
{
    return load(path, (struct loader){0}, out, err);
}

int pps_run_load_window(const char *path, int64_t t0, int64_t t1, struct pps_run **out,
                        struct pps_err *err)
{
    if (out)
        *out = NULL;
    if (t1 <= t0)
        return pps_err_set(err, PPS_EINVAL, "pps_run_load_window: an empty window [%lld, %lld)",
                           (long long)t0, (long long)t1);
    return load(path, (struct loader){.windowed = 1, .w0 = t0, .w1 = t1}, out, err);
}

int pps_run_load_meta(const char *path, struct pps_run **out, struct pps_err *err)
{
    return load(path, (struct loader){.meta_only = 1}, out, err);
}

int pps__run_check(const char *path, void (*progress)(void *ctx, int64_t spans), void *ctx,
                   struct pps_run_counts *counts, struct pps_err *err)
{
    struct loader ld = {.check_only = 1, .progress = progress, .progress_ctx = ctx};
    struct pps_run *run = NULL;
    int rc = load(path, ld, &run, err);

    if (rc == 0 && counts)
        *counts =
            (struct pps_run_counts){(int64_t)run->n_spans, (int64_t)run->n_metrics, run->n_shards};
    pps_run_free(run);
    return rc;
}

int pps_run_count(const char *path, struct pps_run_counts *out, struct pps_err *err)
{
    if (!out)
        return pps_err_set(err, PPS_EINVAL, "pps_run_count: nowhere to count into");
    return pps__run_check(path, NULL, NULL, out, err);
}

void pps__run_free_data(struct pps_run *run)
{
    free(run->schedule);
    pps__meta_release(run->meta, run->n_meta);
    for (int i = 0; i < run->n_stages; i++)
        free(run->stages[i].spans);
    free(run->stages);
    free(run->metrics);
    for (size_t i = 0; i < run->n_names; i++)
        free(run->names[i]);
    free(run->names);
}

void pps_run_free(struct pps_run *run)
{
    if (!run)
        return;
    free(run->path);
    pps__run_free_data(run);
    free(run);
}

const char *pps_run_source(const struct pps_run *run)
{
    static const struct {
        const char *key, *words;
    } sources[] = {
        {"ppscope", "ppscope run"}, {"sim", "ppscope sim"},
        {"nvtx", "NVTX injection"}, {"tracer", "the tracer API"},
        {"nsys", "Nsight Systems"}, {"kineto", "the PyTorch profiler"},
    };
    const char *v = pps_run_meta(run, "source");

    for (size_t i = 0; v && i < sizeof(sources) / sizeof(sources[0]); i++)
        if (!strcmp(v, sources[i].key))
            return sources[i].words;
    return v && v[0] ? "another tool" : "unknown";
}

const char *pps_run_meta(const struct pps_run *run, const char *key)
{
    const char *best = NULL;
    int best_rank = 0;

    if (!run || !key)
        return NULL;
    for (size_t i = 0; i < run->n_meta; i++) {
        const struct pps_meta_entry *e = &run->meta[i];
        if (strcmp(e->key, key) == 0 && (!best || e->rank < best_rank)) {
            best = e->value;
            best_rank = e->rank;
        }
    }
    return best;
}

const char *pps_run_span_name(const struct pps_run *run, const struct pps_span *span)
{
    if (!run || !span || span->name_id < 0 || (size_t)span->name_id >= run->n_names)
        return NULL;
    return run->names[span->name_id];
}
