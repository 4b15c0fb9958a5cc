/*
 * incremental.c - follows a run as it is written: each poll reads only the rows added since the
 * last one (spans and metrics by rowid; meta and names, which are small, whole) and appends them
 * to a loaded run, which stays exactly what pps_run_load() would give of the same rows.
 *
 * Reading is split in two so that a viewer can do the slow half on a thread of its own: fetch
 * reads the files into a buffer held by the follower, apply gives the buffer to the run as one
 * batch of the loader's own path (run_build.h: a copy and, for the rare span that starts before
 * the stage's last one, a merge). Each file keeps one
 * read-only connection, used inside a short read transaction per fetch, so a writer is never
 * blocked. The clock model of each rank (meta clock_offset_*) is the full loader's; when it
 * changes after spans were read with the old one (a rank writes its end offset when it closes),
 * the follower reads every file again from the start and apply rebuilds the run.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "run_build.h"
#include "shard_check.h"
#include "storage_int.h"

/* One file of the run: a shard, or the merged file. */
struct follow_file {
    char *path;
    sqlite3 *db;
    sqlite3_stmt *q_spans, *q_metrics;
    int64_t last_span, last_metric; /* the highest rowid read */
    int read_once;                  /* a fetch read it whole: it is a trace */
    struct pps__clock *ranks;       /* sorted by rank, from the last meta read */
    size_t n_ranks;
    struct pps_meta_entry *meta; /* the file's meta rows, as last read */
    size_t n_meta;
    struct pps__name_ref *refs; /* names seen, sorted by (rank, id) */
    size_t n_refs, refs_cap;
    struct pps__span_bounds bounds; /* from pps__file_meta_check() of meta */
    /* SQLite's check of a finished file (shard_check.h): started when its ranks all say they are
     * complete, its answer taken once the file is read to its end. */
    struct pps__shard_check *check;
    int check_state;               /* 0 not started, 1 running, 2 done */
    struct pps__index_tally tally; /* every row read, as stored, for that check */
};

struct pps_run_follow {
    char *path;
    int is_dir;
    struct follow_file *files;
    size_t n_files, files_cap;
    struct pps__rank_set *claimed; /* a directory's ranks at this fetch, as the loader claims */
    size_t n_names;                /* names given an index in the run so far (applied or pending) */

    /* Fetched, not yet applied. */
    struct pps_span *spans;
    size_t n_spans, spans_cap;
    struct pps_metric *metrics;
    size_t n_metrics, metrics_cap;
    char **names;
    size_t n_pending_names, pending_names_cap;
    int meta_changed;
    int reset;      /* the run must be rebuilt from what is pending */
    int fetched_ok; /* a fetch succeeded */

    struct pps__run_build build; /* of the run this follower fills: each apply is a batch */
    int64_t total_rows; /* spans in the files at the last fetch (max rowid), for progress */
    int64_t read_rows;  /* spans read since the last reset */
};

static int oom(const char *path, struct pps_err *err)
{
    return pps_err_set(err, PPS_ENOMEM, "%s: out of memory", path);
}

static void file_release(struct follow_file *ff)
{
    if (ff->check_state == 1)
        pps__shard_check_abandon(ff->check);
    sqlite3_finalize(ff->q_spans);
    sqlite3_finalize(ff->q_metrics);
    sqlite3_close(ff->db);
    free(ff->path);
    free(ff->ranks);
    pps__meta_release(ff->meta, ff->n_meta);
    free(ff->refs);
    memset(ff, 0, sizeof(*ff));
}

/* Drops what is pending and starts every file again from its first row. */
static void start_over(struct pps_run_follow *f)
{
    for (size_t i = 0; i < f->n_pending_names; i++)
        free(f->names[i]);
    f->n_pending_names = 0;
    f->n_spans = f->n_metrics = 0;
    f->n_names = 0;
    f->read_rows = 0;
    f->meta_changed = 1;
    f->reset = 1;
    for (size_t i = 0; i < f->n_files; i++) {
        f->files[i].last_span = f->files[i].last_metric = 0;
        f->files[i].tally = (struct pps__index_tally){0, 0};
        f->files[i].n_refs = 0;
    }
}

int pps_run_follow_open(const char *path, struct pps_run_follow **out, struct pps_err *err)
{
    struct pps_run_follow *f = NULL;
    struct stat st;
    int rc;

    if (out)
        *out = NULL;
    if (!path || !out)
        return pps_err_set(err, PPS_EINVAL, "pps_run_follow_open: no path");
    if ((rc = pps__stat(path, &st, err)))
        return rc;
    if (!(f = calloc(1, sizeof(*f))) || !(f->path = strdup(path))) {
        free(f);
        return oom(path, err);
    }
    f->is_dir = S_ISDIR(st.st_mode);
    if (f->is_dir && !(f->claimed = calloc(1, sizeof(*f->claimed)))) {
        free(f->path);
        free(f);
        return oom(path, err);
    }
    f->reset = 1; /* the first apply makes the run */
    f->meta_changed = 1;
    *out = f;
    return 0;
}

void pps_run_follow_free(struct pps_run_follow *f)
{
    if (!f)
        return;
    for (size_t i = 0; i < f->n_files; i++)
        file_release(&f->files[i]);
    free(f->files);
    for (size_t i = 0; i < f->n_pending_names; i++)
        free(f->names[i]);
    free(f->names);
    free(f->spans);
    free(f->metrics);
    pps__run_build_release(&f->build);
    free(f->claimed);
    free(f->path);
    free(f);
}

/* Adds the run's files not followed yet (a new shard appears when its rank starts). */
static int find_files(struct pps_run_follow *f, struct pps_err *err)
{
    struct pps__shards shards = {0};
    int rc = 0;

    if (!f->is_dir) {
        if (f->n_files)
            return 0;
        if (pps_grow((void **)&f->files, &f->files_cap, 1, sizeof(*f->files)))
            return oom(f->path, err);
        memset(&f->files[0], 0, sizeof(f->files[0]));
        if (!(f->files[0].path = strdup(f->path)))
            return oom(f->path, err);
        f->n_files = 1;
        return 0;
    }
    if ((rc = pps__shards_list(f->path, &shards, err)))
        goto out;
    for (size_t i = 0; i < shards.n; i++) {
        size_t k = 0;
        while (k < f->n_files && strcmp(f->files[k].path, shards.paths[i]) != 0)
            k++;
        if (k < f->n_files)
            continue;
        if (pps_grow((void **)&f->files, &f->files_cap, f->n_files + 1, sizeof(*f->files))) {
            rc = oom(f->path, err);
            goto out;
        }
        memset(&f->files[f->n_files], 0, sizeof(f->files[0]));
        f->files[f->n_files].path = shards.paths[i];
        shards.paths[i] = NULL;
        f->n_files++;
    }
out:
    pps__shards_release(&shards);
    return rc;
}

static int same_meta(const struct follow_file *ff, const struct pps_meta_entry *meta, size_t n)
{
    if (n != ff->n_meta)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (meta[i].rank != ff->meta[i].rank || strcmp(meta[i].key, ff->meta[i].key) != 0 ||
            strcmp(meta[i].value, ff->meta[i].value) != 0)
            return 0;
    return 1;
}

/*
 * Reads the file's meta again. When it changed, it replaces the file's; *clock_changed says
 * whether a rank's clock model changed (or a rank appeared) after spans were read.
 */
static int read_meta(struct pps_run_follow *f, struct follow_file *ff, int *clock_changed,
                     struct pps_err *err)
{
    sqlite3_stmt *st = NULL;
    struct pps_meta_entry *meta = NULL;
    struct pps__clock *ranks = NULL;
    size_t n_meta = 0, meta_cap = 0, n_ranks = 0, ranks_cap = 0;
    int have[4] = {0};
    int rc;

    *clock_changed = 0;
    if ((rc = pps__prepare(ff->db, "SELECT rank, key, value FROM meta ORDER BY rank, key", ff->path,
                           &st, err)))
        goto out;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *key, *value;
        int rank;

        if ((rc = pps__meta_row(st, ff->path, &rank, &key, &value, err)))
            goto out;
        if ((n_ranks == 0 || ranks[n_ranks - 1].rank != rank) &&
            pps__clock_next(&ranks, &n_ranks, &ranks_cap, have, rank)) {
            rc = oom(ff->path, err);
            goto out;
        }
        if ((rc = pps__clock_note(&ranks[n_ranks - 1], have, key, value, ff->path, err)))
            goto out;
        if (pps__meta_push(&meta, &n_meta, &meta_cap, rank, key, value)) {
            rc = oom(ff->path, err);
            goto out;
        }
    }
    if ((rc = pps__step_done(ff->db, rc, ff->path, err)))
        goto out;
    if (n_ranks)
        pps__clock_finish(&ranks[n_ranks - 1], have);
    rc = 0;
    if (same_meta(ff, meta, n_meta))
        goto out;
    if (ff->last_span > 0) {
        /* complete is not part of the clock model: compare the rest. */
        *clock_changed = n_ranks != ff->n_ranks;
        for (size_t i = 0; i < n_ranks && !*clock_changed; i++) {
            struct pps__clock a = ranks[i], b = ff->ranks[i];
            a.complete = b.complete = 0;
            *clock_changed = memcmp(&a, &b, sizeof(a)) != 0;
        }
    }
    pps__meta_release(ff->meta, ff->n_meta);
    free(ff->ranks);
    ff->meta = meta;
    ff->n_meta = n_meta;
    ff->ranks = ranks;
    ff->n_ranks = n_ranks;
    meta = NULL;
    ranks = NULL;
    n_meta = 0;
    f->meta_changed = 1;
out:
    sqlite3_finalize(st);
    pps__meta_release(meta, n_meta);
    free(ranks);
    return rc;
}

/* New names of the file: each gets the next index of the run's names. */
static int read_names(struct pps_run_follow *f, struct follow_file *ff, struct pps_err *err)
{
    sqlite3_stmt *st = NULL;
    int64_t prev = -1; /* the previous row's (rank, id), as the loader checks it */
    int rc;

    if ((rc = pps__prepare(ff->db, "SELECT rank, id, name FROM names ORDER BY rank, id", ff->path,
                           &st, err)))
        goto out;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *name;
        int32_t id;
        int rank;
        size_t at;
        char *copy;

        if ((rc = pps__name_row(st, ff->path, &ff->bounds, &rank, &id, &name, err)))
            goto out;
        if (prev == ((int64_t)rank << 32 | (uint32_t)id)) {
            rc = pps_err_set(err, PPS_EFORMAT,
                             "%s: truncated or corrupted (name id %d of rank %d is there twice)",
                             ff->path, (int)id, rank);
            goto out;
        }
        prev = (int64_t)rank << 32 | (uint32_t)id;
        at = pps__name_ref_pos(ff->refs, ff->n_refs, rank, id);
        if (at < ff->n_refs && ff->refs[at].rank == rank && ff->refs[at].id == id)
            continue;
        if (f->n_names >= INT32_MAX) {
            rc = pps_err_set(err, PPS_EFORMAT, "%s: too many names", ff->path);
            goto out;
        }
        if (pps_grow((void **)&ff->refs, &ff->refs_cap, ff->n_refs + 1, sizeof(*ff->refs)) ||
            pps_grow((void **)&f->names, &f->pending_names_cap, f->n_pending_names + 1,
                     sizeof(*f->names)) ||
            !(copy = strdup(name))) {
            rc = oom(ff->path, err);
            goto out;
        }
        memmove(&ff->refs[at + 1], &ff->refs[at], (ff->n_refs - at) * sizeof(*ff->refs));
        ff->refs[at].rank = rank;
        ff->refs[at].id = id;
        ff->refs[at].index = (int32_t)f->n_names++;
        ff->n_refs++;
        f->names[f->n_pending_names++] = copy;
    }
    rc = pps__step_done(ff->db, rc, ff->path, err);
out:
    sqlite3_finalize(st);
    return rc;
}

/* Up to limit (< 0: all) spans after the last rowid read; *n_read says how many. */
static int read_spans(struct pps_run_follow *f, struct follow_file *ff, int64_t limit,
                      size_t *n_read, struct pps_err *err)
{
    sqlite3_stmt *st = ff->q_spans;
    const struct pps__clock *ri = NULL;
    int rc;

    *n_read = 0;
    sqlite3_reset(st);
    sqlite3_bind_int64(st, 1, ff->last_span);
    sqlite3_bind_int64(st, 2, limit);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        struct pps_span s;

        if ((rc = pps__span_read(st, ff->path, &ff->bounds, ff->refs, ff->n_refs, ff->ranks,
                                 ff->n_ranks, &ri, &s, &ff->tally, err)))
            goto out;
        if (pps_grow((void **)&f->spans, &f->spans_cap, f->n_spans + 1, sizeof(*f->spans))) {
            rc = oom(ff->path, err);
            goto out;
        }
        f->spans[f->n_spans++] = s;
        ff->last_span = sqlite3_column_int64(st, 13);
        (*n_read)++;
    }
    rc = pps__step_done(ff->db, rc, ff->path, err);
out:
    sqlite3_reset(st);
    return rc;
}

static int read_metrics(struct pps_run_follow *f, struct follow_file *ff, struct pps_err *err)
{
    sqlite3_stmt *st = ff->q_metrics;
    int rc;

    sqlite3_reset(st);
    sqlite3_bind_int64(st, 1, ff->last_metric);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (pps_grow((void **)&f->metrics, &f->metrics_cap, f->n_metrics + 1,
                     sizeof(*f->metrics))) {
            rc = oom(ff->path, err);
            goto out;
        }
        if ((rc = pps__metric_row(st, ff->path, &ff->bounds, &f->metrics[f->n_metrics], err)))
            goto out;
        f->n_metrics++;
        ff->last_metric = sqlite3_column_int64(st, 8);
    }
    rc = pps__step_done(ff->db, rc, ff->path, err);
out:
    sqlite3_reset(st);
    return rc;
}

/* The spans in the file now (its highest rowid: rows are only appended). */
static int64_t max_rowid(struct follow_file *ff)
{
    sqlite3_stmt *st = NULL;
    int64_t n = 0;

    if (sqlite3_prepare_v2(ff->db, "SELECT max(rowid) FROM spans", -1, &st, NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
        n = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return n;
}

/* One file in one read transaction: meta, names, then up to limit spans, then metrics. */
/* Whether every rank of the file says it closed normally (the file is finished). */
static int file_complete(const struct follow_file *ff)
{
    for (size_t r = 0; r < ff->n_ranks; r++)
        if (!ff->ranks[r].complete)
            return 0;
    return ff->n_ranks > 0;
}

static int fetch_file(struct pps_run_follow *f, struct follow_file *ff, int64_t limit,
                      size_t *n_read, int *clock_changed, struct pps_err *err)
{
    int in_txn = 0, rc;

    *n_read = 0;
    if (!ff->db) {
        if ((rc = pps__trace_open(ff->path, &ff->db, NULL, err)))
            return rc;
        if ((rc = pps__prepare(ff->db,
                               "SELECT " PPS__SPAN_COLS ", rowid FROM spans WHERE rowid > ?1 "
                               "ORDER BY rowid LIMIT ?2",
                               ff->path, &ff->q_spans, err)) ||
            (rc = pps__prepare(ff->db,
                               "SELECT " PPS__METRIC_COLS ", rowid FROM metrics WHERE rowid > ?1 "
                               "ORDER BY rowid",
                               ff->path, &ff->q_metrics, err)))
            return rc;
    }
    if ((rc = pps__exec(ff->db, "BEGIN", ff->path, "cannot read", err)))
        return rc;
    in_txn = 1;
    /* The loader's checks of the whole file, once: the kinds table is written with the schema. */
    if (!ff->read_once && (rc = pps__kinds_check(ff->db, ff->path, err)))
        goto out;
    if ((rc = read_meta(f, ff, clock_changed, err)) || *clock_changed)
        goto out;
    if ((rc = pps__file_meta_check(ff->meta, ff->n_meta, ff->path, &ff->bounds, err)))
        goto out;
    if (ff->check_state == 0 && file_complete(ff)) {
        if ((rc = pps__shard_check_start(ff->path, &ff->check, err)))
            goto out;
        ff->check_state = 1;
    }
    if ((rc = read_names(f, ff, err)) || (rc = read_spans(f, ff, limit, n_read, err)) ||
        (rc = read_metrics(f, ff, err)))
        goto out;
    /* Read to its end: no limit (-1), or fewer rows than the limit. */
    if (ff->check_state == 1 && (limit < 0 || (int64_t)*n_read < limit)) {
        ff->check_state = 2; /* finish frees the check, whatever it says */
        if ((rc = pps__shard_check_finish(ff->path, ff->check, &ff->tally, err)))
            goto out;
    }
    f->total_rows += max_rowid(ff);
out:
    if (in_txn)
        sqlite3_exec(ff->db, "ROLLBACK", NULL, NULL, NULL); /* ends a read: nothing to undo */
    return rc;
}

int pps_run_follow_fetch(struct pps_run_follow *f, size_t max_rows, size_t *n_fetched,
                         struct pps_err *err)
{
    size_t total = 0, n_read;
    int more = 0, clock_changed, rc;

    if (n_fetched)
        *n_fetched = 0;
    if ((rc = find_files(f, err)))
        return rc;
    f->total_rows = 0;
    if (f->claimed)
        memset(f->claimed, 0, sizeof(*f->claimed));
    for (size_t i = 0; i < f->n_files; i++) {
        /* A budget shared by the files, so that every rank's first spans come early. */
        int64_t limit = -1;
        if (max_rows) {
            size_t share = max_rows / f->n_files;
            limit = (int64_t)(share ? share : 1);
        }
        rc = fetch_file(f, &f->files[i], limit, &n_read, &clock_changed, err);
        if (rc == PPS_EFORMAT && f->fetched_ok && !f->files[i].read_once) {
            /* A shard that appeared since the last fetch and is not a trace yet: its rank is
             * creating it (an empty file, then the schema). Try it again next time. */
            struct follow_file *ff = &f->files[i];
            sqlite3_finalize(ff->q_spans);
            sqlite3_finalize(ff->q_metrics);
            sqlite3_close(ff->db);
            ff->q_spans = ff->q_metrics = NULL;
            ff->db = NULL;
            continue;
        }
        if (rc)
            return rc;
        f->files[i].read_once = 1;
        /* A shard copied under another name would add its rank's spans twice. */
        for (size_t r = 0; f->claimed && !clock_changed && r < f->files[i].n_ranks; r++)
            if ((rc =
                     pps__rank_claim(f->claimed, f->files[i].ranks[r].rank, f->files[i].path, err)))
                return rc;
        if (clock_changed) {
            /* Spans already read used the old offsets: read everything again. */
            start_over(f);
            if (f->claimed)
                memset(f->claimed, 0, sizeof(*f->claimed));
            f->total_rows = 0;
            total = 0;
            more = 0;
            i = (size_t)-1;
            continue;
        }
        total += n_read;
        if (limit >= 0 && (int64_t)n_read == limit)
            more = 1;
    }
    f->read_rows += (int64_t)total;
    f->fetched_ok = 1;
    if (n_fetched)
        *n_fetched = total;
    return more;
}

void pps_run_follow_progress(const struct pps_run_follow *f, int64_t *read, int64_t *total)
{
    *read = f->read_rows;
    *total = f->total_rows > f->read_rows ? f->total_rows : f->read_rows;
}

/* Empties run (keeping its path) for a rebuild. */
static void run_clear(struct pps_run_follow *f, struct pps_run *run)
{
    char *path = run->path;
    int merged = run->merged;

    pps__run_free_data(run);
    memset(run, 0, sizeof(*run));
    run->path = path;
    run->merged = merged;
    pps__run_build_release(&f->build);
    pps__run_build_init(&f->build, run, 0);
}

int pps_run_follow_apply(struct pps_run_follow *f, struct pps_run **runp, size_t *n_new,
                         struct pps_err *err)
{
    struct pps_run *run = *runp;
    int moved = 0, rc = 0;

    if (n_new)
        *n_new = 0;
    if (!run) {
        if (!(run = calloc(1, sizeof(*run))) || !(run->path = strdup(f->path))) {
            free(run);
            return oom(f->path, err);
        }
        run->merged = !f->is_dir;
        *runp = run;
        f->reset = 1;
    }
    if (f->reset) {
        run_clear(f, run);
        moved = 1;
        f->reset = 0;
    }
    pps__run_build_begin(&f->build);
    if (f->meta_changed) {
        size_t n = 0, k = 0, n_ranks = 0;
        struct pps_meta_entry *meta;

        for (size_t i = 0; i < f->n_files; i++)
            n += f->files[i].n_meta;
        if (!(meta = calloc(n ? n : 1, sizeof(*meta))))
            return oom(f->path, err);
        for (size_t i = 0; i < f->n_files; i++)
            for (size_t j = 0; j < f->files[i].n_meta; j++, k++) {
                meta[k].rank = f->files[i].meta[j].rank;
                meta[k].key = strdup(f->files[i].meta[j].key);
                meta[k].value = strdup(f->files[i].meta[j].value);
                if (!meta[k].key || !meta[k].value) {
                    pps__meta_release(meta, k + 1);
                    return oom(f->path, err);
                }
            }
        qsort(meta, n, sizeof(*meta), pps__meta_cmp);
        pps__meta_release(run->meta, run->n_meta);
        run->meta = meta;
        run->n_meta = n;
        if ((rc = pps__run_meta_counts(run, err)))
            return rc;
        /* complete: every file has metadata and every rank in it closed normally. */
        run->complete = f->n_files > 0;
        for (size_t i = 0; i < f->n_files; i++) {
            const struct follow_file *ff = &f->files[i];
            int done = ff->n_ranks > 0;
            for (size_t r = 0; r < ff->n_ranks; r++)
                done &= ff->ranks[r].complete;
            run->complete &= done;
            n_ranks = ff->n_ranks;
        }
        run->n_shards = f->is_dir ? (int)f->n_files : n_ranks > 0 ? (int)n_ranks : 1;
        f->meta_changed = 0;
    }

    /* Names: the pending ones were given the next indices in order. */
    if (f->n_pending_names) {
        if (pps__run_build_names(&f->build, f->names, f->n_pending_names))
            goto nomem;
        f->n_pending_names = 0;
    }
    /* Spans and metrics: the loader's batch, appended to what the run holds. */
    if (run->p > 0 && pps__run_build_stages(&f->build, (size_t)run->p))
        goto nomem;
    for (size_t i = 0; i < f->n_spans; i++)
        if (pps__run_build_span(&f->build, &f->spans[i]))
            goto nomem;
    if (pps__run_build_metrics(&f->build, f->metrics, f->n_metrics))
        goto nomem;
    if (n_new)
        *n_new = f->n_spans;
    f->n_spans = f->n_metrics = 0;
    if ((rc = pps__run_build_end(&f->build)) < 0)
        goto nomem;
    return moved | rc;
nomem:
    /* Part of what was fetched may be in the run: build it again from the files. */
    start_over(f);
    return oom(f->path, err);
}

int pps_run_follow_poll(struct pps_run_follow *f, struct pps_run **run, size_t *n_new,
                        struct pps_err *err)
{
    int rc = pps_run_follow_fetch(f, 0, NULL, err);

    if (rc < 0)
        return rc;
    return pps_run_follow_apply(f, run, n_new, err);
}
