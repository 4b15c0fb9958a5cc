/*
 * gather.c - the shards of several run directories (one per host: each host's ranks write into
 * a directory of their own, on storage local to it) copied into one run directory as they are
 * written, so that a viewer on one host follows the whole job (storage.h, docs/cluster.md).
 *
 * Each source shard gets a read-only connection, and a writer of its rank in the destination
 * once its meta shows it is of the same job as the others.
 * A step reads, inside one read transaction per shard, what was committed since the last step:
 * meta rows that changed, names past the last id, spans and metrics past the last rowid, every
 * row checked as the loader checks it; and writes them through the store writer, unchanged
 * (ranks kept, times raw, the clock offsets in meta), so that the destination loads exactly as
 * the sources would side by side. A source shard whose writer closed it complete, once read to
 * its end, has its copy closed complete; one whose writer is gone (killed) keeps what it wrote,
 * its copy closed incomplete. Nothing in a source is ever written.
 */
#define _DEFAULT_SOURCE /* realpath() */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "storage_int.h"

#define BATCH_ROWS 65536 /* spans or metrics per read and per write transaction */

struct gather_shard {
    char *path;
    int rank;
    sqlite3 *db;
    struct pps_store_writer *w;
    struct pps_meta_entry *meta; /* as copied so far, sorted by (rank, key) */
    size_t n_meta;
    struct pps_meta_entry *next; /* as read in this step, not yet copied */
    size_t n_next;
    int32_t n_names;                /* names copied: ids 0 .. n_names - 1 */
    int64_t last_span, last_metric; /* the highest rowid copied */
    struct pps__span_bounds bounds;
    int state; /* 0 being written, 1 closed complete, 2 its writer is gone */
    int gone;  /* its writer was gone before this step's read began */
};

struct pps_gather {
    char **srcs;
    int n_srcs;
    char *dest;
    char *what;                 /* the sources, "A, B", to name them in a message */
    char **real;                /* each source's realpath(), once it exists (NULL before) */
    char *dest_real;            /* the destination's */
    volatile sig_atomic_t stop; /* pps_gather_stop(): end the step at the next batch */
    struct gather_shard *shards;
    size_t n_shards, cap_shards;
    struct pps__rank_set claimed;
    int64_t spans, metrics; /* rows copied */
    struct pps_span *span_buf;
    struct pps_metric *metric_buf;
};

int pps_gather_open(const char *const *srcs, int n_srcs, const char *dest, struct pps_gather **out,
                    struct pps_err *err)
{
    struct pps_gather *g = NULL;
    struct stat st;
    int rc = 0;

    *out = NULL;
    if (!srcs || n_srcs < 1 || !dest || !*dest)
        return pps_err_set(err, PPS_EINVAL, "pps_gather_open: no source or no destination");
    if (stat(dest, &st) == 0)
        return pps_err_set(err, PPS_EINVAL,
                           "%s: already exists (gather writes a new run directory, never into "
                           "one that is there)",
                           dest);
    for (int i = 0; i < n_srcs; i++) {
        /* A source not there yet is one whose ranks have not started: it is waited for. */
        if (stat(srcs[i], &st) != 0 && errno == ENOENT)
            continue;
        if ((rc = pps__stat(srcs[i], &st, err)))
            return rc;
        if (!S_ISDIR(st.st_mode))
            return pps_err_set(err, PPS_EINVAL,
                               "%s: not a run directory (gather reads directories of rank-*.db "
                               "shards)",
                               srcs[i]);
    }
    if (!(g = calloc(1, sizeof(*g))) || !(g->srcs = calloc((size_t)n_srcs, sizeof(*g->srcs))) ||
        !(g->real = calloc((size_t)n_srcs, sizeof(*g->real))) || !(g->dest = strdup(dest)) ||
        !(g->span_buf = malloc(BATCH_ROWS * sizeof(*g->span_buf))) ||
        !(g->metric_buf = malloc(BATCH_ROWS * sizeof(*g->metric_buf))))
        goto nomem;
    for (int i = 0; i < n_srcs; i++, g->n_srcs++)
        if (!(g->srcs[i] = strdup(srcs[i])))
            goto nomem;
    {
        size_t len = 1;
        for (int i = 0; i < n_srcs; i++)
            len += strlen(srcs[i]) + 2;
        if (!(g->what = malloc(len)))
            goto nomem;
        g->what[0] = '\0';
        for (int i = 0; i < n_srcs; i++) {
            if (i)
                strcat(g->what, ", ");
            strcat(g->what, srcs[i]);
        }
    }
    if ((rc = pps__make_dirs(dest, err))) {
        pps_gather_free(g);
        return rc;
    }
    if (!(g->dest_real = realpath(dest, NULL))) {
        rc = pps_err_set(err, PPS_EIO, "%s: cannot resolve (%s)", dest, strerror(errno));
        pps_gather_free(g);
        return rc;
    }
    *out = g;
    return 0;
nomem:
    pps_gather_free(g);
    return pps_err_set(err, PPS_ENOMEM, "%s: out of memory", dest);
}

void pps_gather_free(struct pps_gather *g)
{
    if (!g)
        return;
    for (size_t i = 0; i < g->n_shards; i++) {
        struct gather_shard *sh = &g->shards[i];
        sqlite3_close(sh->db);
        pps_store_writer_close(sh->w, 0, NULL); /* a copy not finished stays, incomplete */
        pps__meta_release(sh->meta, sh->n_meta);
        pps__meta_release(sh->next, sh->n_next);
        free(sh->path);
    }
    free(g->shards);
    if (g->dest)
        rmdir(g->dest); /* only where nothing was copied: a directory with shards stays */
    for (int i = 0; i < g->n_srcs; i++) {
        free(g->srcs[i]);
        if (g->real)
            free(g->real[i]);
    }
    free(g->srcs);
    free(g->real);
    free(g->dest_real);
    free(g->dest);
    free(g->what);
    free(g->span_buf);
    free(g->metric_buf);
    free(g);
}

/* Shards that appeared in the sources since the last step: each opened and its rank claimed
 * (two sources holding one rank are two runs, or one copied twice); its copy is made later, by
 * copy_shard(). A source is checked once, when it first appears: not the destination, not
 * another source under a second name. */
static int find_shards(struct pps_gather *g, struct pps_err *err)
{
    for (int i = 0; i < g->n_srcs; i++) {
        struct pps__shards list = {0};
        int rc;

        if (!g->real[i]) {
            if (!(g->real[i] = realpath(g->srcs[i], NULL)))
                continue; /* not there yet */
            if (!strcmp(g->real[i], g->dest_real))
                return pps_err_set(err, PPS_EINVAL,
                                   "%s: is the destination: gather would read what it writes",
                                   g->srcs[i]);
            for (int k = 0; k < g->n_srcs; k++)
                if (k != i && g->real[k] && !strcmp(g->real[k], g->real[i]))
                    return pps_err_set(err, PPS_EINVAL, "%s and %s: one directory named twice",
                                       g->srcs[k], g->srcs[i]);
        }
        rc = pps__shards_list(g->srcs[i], &list, err);

        if (rc == PPS_ENOENT) { /* nothing written there yet, or no directory yet */
            pps__shards_release(&list);
            continue;
        }
        for (size_t k = 0; k < list.n && rc == 0; k++) {
            struct gather_shard *sh;
            size_t j;

            for (j = 0; j < g->n_shards && strcmp(g->shards[j].path, list.paths[k]) != 0; j++)
                ;
            if (j < g->n_shards)
                continue;
            if ((rc = pps__rank_claim(&g->claimed, list.ranks[k], list.paths[k], err)))
                break;
            if (g->n_shards == g->cap_shards && pps_grow((void **)&g->shards, &g->cap_shards,
                                                         g->n_shards + 1, sizeof(*g->shards))) {
                rc = pps_err_set(err, PPS_ENOMEM, "%s: out of memory", g->dest);
                break;
            }
            sh = &g->shards[g->n_shards];
            memset(sh, 0, sizeof(*sh));
            if (!(sh->path = strdup(list.paths[k]))) {
                rc = pps_err_set(err, PPS_ENOMEM, "%s: out of memory", g->dest);
                break;
            }
            sh->rank = list.ranks[k];
            g->n_shards++;
            if ((rc = pps__trace_open(sh->path, &sh->db, NULL, err)) ||
                (rc = pps__kinds_check(sh->db, sh->path, err)))
                break;
        }
        pps__shards_release(&list);
        if (rc)
            return rc;
    }
    return 0;
}

static const char *meta_value(const struct pps_meta_entry *meta, size_t n, const char *key)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(meta[i].key, key))
            return meta[i].value;
    return NULL;
}

/* The shard's meta as it is now, into sh->next (checked: a count that is not one, a row of
 * another rank), and the bounds of its rows. */
static int read_meta(struct gather_shard *sh, struct pps_err *err)
{
    sqlite3_stmt *st = NULL;
    size_t cap = 0;
    int rc, step;

    pps__meta_release(sh->next, sh->n_next);
    sh->next = NULL;
    sh->n_next = 0;
    if ((rc = pps__prepare(sh->db, "SELECT rank, key, value FROM meta ORDER BY rank, key", sh->path,
                           &st, err)))
        return rc;
    while ((step = sqlite3_step(st)) == SQLITE_ROW) {
        const char *key, *value;
        int rank;
        if ((rc = pps__meta_row(st, sh->path, &rank, &key, &value, err)))
            goto out;
        if (rank != sh->rank) {
            rc = pps_err_set(err, PPS_EFORMAT, "%s: holds meta of rank %d, not only its own (%d)",
                             sh->path, rank, sh->rank);
            goto out;
        }
        if (pps__meta_push(&sh->next, &sh->n_next, &cap, rank, key, value)) {
            rc = pps_err_set(err, PPS_ENOMEM, "%s: out of memory", sh->path);
            goto out;
        }
    }
    if (!(rc = pps__step_done(sh->db, step, sh->path, err)))
        rc = pps__file_meta_check(sh->next, sh->n_next, sh->path, &sh->bounds, err);
out:
    sqlite3_finalize(st);
    return rc;
}

/* The rows of sh->next that changed since the last copy, written (the copy's writer marks it
 * complete itself, at close); sh->next becomes what was copied. */
static int write_meta(struct gather_shard *sh, struct pps_err *err)
{
    int rc;

    for (size_t i = 0; i < sh->n_next; i++) {
        const struct pps_meta_entry *e = &sh->next[i];
        const char *was = meta_value(sh->meta, sh->n_meta, e->key);
        /* complete and writer_pid are the copy's own (its writer's, the gather's), which says
         * whether it is still being written; the rank's process is kept as source_writer_pid. */
        const char *key = !strcmp(e->key, "writer_pid") ? "source_writer_pid" : e->key;
        if (!strcmp(e->key, "complete") || (was && !strcmp(was, e->value)))
            continue;
        if ((rc = pps_store_writer_meta(sh->w, key, e->value, err)))
            return rc;
    }
    pps__meta_release(sh->meta, sh->n_meta);
    sh->meta = sh->next;
    sh->n_meta = sh->n_next;
    sh->next = NULL;
    sh->n_next = 0;
    return 0;
}

/* The shards are of one job, as the loader would judge them side by side
 * (pps__run_identity_check(): run id, source, schedule, p, m, ...): from their meta as read
 * now, before any of it is copied. */
static int identity_check(struct pps_gather *g, struct pps_err *err)
{
    struct pps_run run = {0};
    size_t n = 0, cap = 0;
    int rc = 0;

    for (size_t i = 0; i < g->n_shards && rc == 0; i++) {
        const struct gather_shard *sh = &g->shards[i];
        const struct pps_meta_entry *m = sh->state == 0 ? sh->next : sh->meta;
        size_t k = sh->state == 0 ? sh->n_next : sh->n_meta;
        for (size_t j = 0; j < k && rc == 0; j++)
            if (pps__meta_push(&run.meta, &n, &cap, m[j].rank, m[j].key, m[j].value))
                rc = pps_err_set(err, PPS_ENOMEM, "%s: out of memory", g->dest);
    }
    if (rc == 0 && n) {
        run.n_meta = n;
        run.path = g->what;
        qsort(run.meta, n, sizeof(*run.meta), pps__meta_cmp);
        rc = pps__run_identity_check_in(&run, "these directories", err);
    }
    pps__meta_release(run.meta, n);
    return rc;
}

/* Names past the last copied, in id order: the writer gives each the id it had (ids are 0, 1,
 * 2, ... in order of first sight in both). */
static int copy_names(struct gather_shard *sh, struct pps_err *err)
{
    sqlite3_stmt *st = NULL;
    int rc, step;

    if ((rc = pps__prepare(sh->db, "SELECT rank, id, name FROM names WHERE id >= ? ORDER BY id",
                           sh->path, &st, err)))
        return rc;
    sqlite3_bind_int64(st, 1, sh->n_names);
    while ((step = sqlite3_step(st)) == SQLITE_ROW) {
        const char *name;
        int32_t id, got;
        int rank;
        if ((rc = pps__name_row(st, sh->path, &sh->bounds, &rank, &id, &name, err)))
            goto out;
        if (id != sh->n_names) {
            rc = pps_err_set(err, PPS_EFORMAT, "%s: its names skip from id %d to %d", sh->path,
                             (int)sh->n_names - 1, (int)id);
            goto out;
        }
        if ((rc = pps_store_writer_name(sh->w, name, &got, err)))
            goto out;
        if (got != id) {
            rc = pps_err_set(err, PPS_EFORMAT,
                             "%s: name id %d ('%s') is also id %d: the shard names one thing "
                             "twice",
                             sh->path, (int)id, name, (int)got);
            goto out;
        }
        sh->n_names++;
    }
    rc = pps__step_done(sh->db, step, sh->path, err);
out:
    sqlite3_finalize(st);
    return rc;
}

/* Spans (or metrics) past the last copied rowid, a batch at a time. */
static int copy_rows(struct pps_gather *g, struct gather_shard *sh, int spans, struct pps_err *err)
{
    const char *sql = spans ? "SELECT " PPS__SPAN_COLS ", rowid FROM spans WHERE rowid > ?"
                              " ORDER BY rowid LIMIT ?"
                            : "SELECT " PPS__METRIC_COLS ", rowid FROM metrics WHERE rowid > ?"
                              " ORDER BY rowid LIMIT ?";
    int64_t *last = spans ? &sh->last_span : &sh->last_metric;
    sqlite3_stmt *st = NULL;
    int rc, step;

    if ((rc = pps__prepare(sh->db, sql, sh->path, &st, err)))
        return rc;
    for (;;) {
        size_t n = 0;
        sqlite3_reset(st);
        sqlite3_bind_int64(st, 1, *last);
        sqlite3_bind_int64(st, 2, BATCH_ROWS);
        while ((step = sqlite3_step(st)) == SQLITE_ROW) {
            rc = spans ? pps__span_row(st, sh->path, &sh->bounds, &g->span_buf[n], err)
                       : pps__metric_row(st, sh->path, &sh->bounds, &g->metric_buf[n], err);
            if (rc)
                goto out;
            *last = sqlite3_column_int64(st, spans ? 13 : 8);
            n++;
        }
        if ((rc = pps__step_done(sh->db, step, sh->path, err)))
            goto out;
        if (n == 0)
            break;
        rc = spans ? pps_store_writer_spans(sh->w, g->span_buf, n, err)
                   : pps_store_writer_metrics(sh->w, g->metric_buf, n, err);
        if (rc)
            goto out;
        if (spans)
            g->spans += (int64_t)n;
        else
            g->metrics += (int64_t)n;
        if (n < BATCH_ROWS || g->stop)
            break; /* the rest, if stopped, is the next step's */
    }
out:
    sqlite3_finalize(st);
    return rc;
}

/* The shard's writer is a process of this host that exists no more (its meta host, writer_pid). */
static int writer_gone(const struct gather_shard *sh)
{
    return pps__writer_gone(meta_value(sh->meta, sh->n_meta, "host"),
                            meta_value(sh->meta, sh->n_meta, "writer_host"),
                            meta_value(sh->meta, sh->n_meta, "writer_pid"));
}

/* The rest of a shard's step, inside the read transaction that read its meta: the meta, names,
 * spans and metrics committed so far; then, where nothing more will come, its copy closed. */
static int copy_shard(struct pps_gather *g, struct gather_shard *sh, struct pps_err *err)
{
    const char *c = meta_value(sh->next, sh->n_next, "complete");
    int complete = c && !strcmp(c, "1"), rc;

    /* The copy is made once the shard is known to be of this job (identity_check()). */
    if (!sh->w) {
        char here[256];
        if ((rc = pps_store_writer_open(g->dest, sh->rank, &sh->w, err)))
            return rc;
        if (gethostname(here, sizeof(here)) == 0) {
            here[sizeof(here) - 1] = '\0';
            if ((rc = pps_store_writer_meta(sh->w, "writer_host", here, err)))
                return rc;
        }
        if ((rc = pps_store_writer_meta(sh->w, "gathered_from", sh->path, err)))
            return rc;
    }
    if ((rc = write_meta(sh, err)) || (rc = copy_names(sh, err)) ||
        (rc = copy_rows(g, sh, 1, err)) || (rc = copy_rows(g, sh, 0, err)))
        return rc;
    if (complete || sh->gone) {
        /* Read to its end in a transaction that saw complete=1, or that began after its writer
         * was gone: nothing more will come. (A writer found gone after the read may have
         * committed rows the read did not see: the next step reads them.) */
        sh->state = complete ? 1 : 2;
        rc = pps_store_writer_close(sh->w, complete, err);
        sh->w = NULL;
    }
    return rc;
}

/* Ends the read transactions of the step, and closes what is done. */
static void end_reads(struct pps_gather *g)
{
    for (size_t i = 0; i < g->n_shards; i++) {
        struct gather_shard *sh = &g->shards[i];
        if (!sh->db)
            continue;
        sqlite3_exec(sh->db, "ROLLBACK", NULL, NULL, NULL); /* ends a read: nothing to undo */
        if (sh->state != 0) {
            sqlite3_close(sh->db);
            sh->db = NULL;
        }
    }
}

void pps_gather_stop(struct pps_gather *g)
{
    g->stop = 1;
}

/* The ranks the job has, from any shard's meta world (0 when none says). */
static int job_world(const struct pps_gather *g)
{
    int world = 0;

    for (size_t i = 0; i < g->n_shards; i++) {
        const char *w = meta_value(g->shards[i].meta, g->shards[i].n_meta, "world");
        int64_t v;
        if (w && pps__parse_i64(w, &v) == 0 && v > world && v <= INT16_MAX + 1)
            world = (int)v;
    }
    return world;
}

int pps_gather_step(struct pps_gather *g, struct pps_gather_stats *stats, struct pps_err *err)
{
    int rc = 0, open = 0, unseen = 0, world;

    if ((rc = find_shards(g, err)))
        return rc;
    /* Each open shard's meta first, in the read transaction its rows will be read in: the shards
     * are checked to be of one job before anything of this step is copied. */
    for (size_t i = 0; i < g->n_shards && rc == 0; i++) {
        struct gather_shard *sh = &g->shards[i];
        if (sh->state != 0)
            continue;
        sh->gone = writer_gone(sh); /* from its meta as last copied */
        if (!(rc = pps__exec(sh->db, "BEGIN", sh->path, "cannot read", err)))
            rc = read_meta(sh, err);
    }
    if (rc == 0)
        rc = identity_check(g, err);
    for (size_t i = 0; i < g->n_shards && rc == 0; i++) {
        struct gather_shard *sh = &g->shards[i];
        if (sh->state == 0 && !g->stop)
            rc = copy_shard(g, sh, err);
        open += sh->state == 0;
    }
    end_reads(g);
    if (rc)
        return rc;
    for (int i = 0; i < g->n_srcs; i++)
        unseen += !g->real[i];
    world = job_world(g);
    if (stats) {
        memset(stats, 0, sizeof(*stats));
        stats->shards = (int)g->n_shards;
        for (size_t i = 0; i < g->n_shards; i++) {
            stats->complete += g->shards[i].state == 1;
            stats->gone += g->shards[i].state == 2;
        }
        stats->spans = g->spans;
        stats->metrics = g->metrics;
        stats->world = world;
        stats->unseen = unseen;
    }
    /* Done once every shard found is, every source has appeared, and the shards are as many as
     * the job's ranks (where it says): a host that has not started yet is waited for. */
    return open > 0 || g->n_shards == 0 || unseen > 0 || (size_t)world > g->n_shards;
}
