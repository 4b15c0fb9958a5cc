/*
 * reader.c - loads a run (a directory of shards, or one merged file) into a struct pps_run:
 * metadata, names, spans bucketed per stage on rank 0's clock and sorted, metrics sorted.
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

#include "shard_check.h"
#include "storage_int.h"

struct loader {
    struct pps_run *run;
    const char *path; /* the file being read */
    size_t stages_cap;
    size_t *span_cap; /* per stage */
    size_t meta_cap, names_cap, metrics_cap;
    int64_t max_iter;

    struct pps__clock *ranks; /* of the file being read, sorted by rank */
    size_t n_ranks, ranks_cap;
    struct pps__name_ref *refs; /* of the file being read, sorted by (rank, id) */
    size_t n_refs, refs_cap;
    struct pps__rank_set *claimed; /* the shards' ranks so far; NULL for a merged file */
};

int pps__grow(void **arr, size_t *cap, size_t need, size_t elem)
{
    size_t n = *cap ? *cap : 16;
    void *p;

    if (need <= *cap)
        return 0;
    while (n < need)
        n *= 2;
    if (!(p = realloc(*arr, n * elem)))
        return -1;
    *arr = p;
    *cap = n;
    return 0;
}

static int oom(struct loader *ld, struct pps_err *err)
{
    return pps_err_set(err, PPS_ENOMEM, "%s: out of memory", ld->path);
}

int pps__prepare(sqlite3 *db, const char *sql, const char *path, sqlite3_stmt **st,
                 struct pps_err *err)
{
    int rc = sqlite3_prepare_v2(db, sql, -1, st, NULL);
    if (rc == SQLITE_ERROR) /* a column is missing: some other program's table */
        return pps_err_set(err, PPS_EFORMAT, "%s: not a ppscope trace (%s)", path,
                           sqlite3_errmsg(db));
    if (rc != SQLITE_OK)
        return pps__sql_fail(db, rc, path, "cannot read", err);
    return 0;
}

static int prepare(struct loader *ld, sqlite3 *db, const char *sql, sqlite3_stmt **st,
                   struct pps_err *err)
{
    return pps__prepare(db, sql, ld->path, st, err);
}

int pps__step_done(sqlite3 *db, int rc, const char *path, struct pps_err *err)
{
    return rc == SQLITE_DONE ? 0 : pps__sql_fail(db, rc, path, "cannot read", err);
}

/* What a value of the wrong type is, for the message. */
static const char *type_words(int type)
{
    switch (type) {
    case SQLITE_TEXT:
        return "text";
    case SQLITE_BLOB:
        return "a blob";
    case SQLITE_NULL:
        return "NULL";
    default:
        return "a real number";
    }
}

int pps__col_int(sqlite3_stmt *st, int col, int64_t lo, int64_t hi, const char *path,
                 const char *where, const char *name, int64_t *out, struct pps_err *err)
{
    int type = sqlite3_column_type(st, col);

    /* sqlite3_column_int64() reads text, blobs and NULL as 0 (or a prefix): a number that was
     * never written. Only an integer is one. */
    if (type != SQLITE_INTEGER)
        return pps_err_set(err, PPS_EFORMAT,
                           "%s: truncated or corrupted (%s: %s is %s, not an integer)", path, where,
                           name, type_words(type));
    *out = sqlite3_column_int64(st, col);
    if (*out < lo || *out > hi)
        return pps_err_set(err, PPS_EFORMAT,
                           "%s: truncated or corrupted (%s: %s %lld out of range %lld..%lld)", path,
                           where, name, (long long)*out, (long long)lo, (long long)hi);
    return 0;
}

int pps__col_text(sqlite3_stmt *st, int col, const char *path, const char *where, const char *name,
                  const char **out, struct pps_err *err)
{
    int type = sqlite3_column_type(st, col);

    if (type != SQLITE_TEXT || !(*out = (const char *)sqlite3_column_text(st, col)))
        return pps_err_set(err, PPS_EFORMAT, "%s: truncated or corrupted (%s: %s is %s, not text)",
                           path, where, name,
                           type == SQLITE_TEXT ? "unreadable" : type_words(type));
    return 0;
}

int pps__meta_row(sqlite3_stmt *st, const char *path, int *rank, const char **key,
                  const char **value, struct pps_err *err)
{
    char where[96];
    int64_t r;
    int rc;

    if ((rc = pps__col_text(st, 1, path, "a meta row", "key", key, err)))
        return rc;
    /* The key is the row's name: meta has no rowid. */
    snprintf(where, sizeof(where), "meta row '%.40s'", *key);
    for (char *c = where; *c; c++)
        if ((unsigned char)*c < 0x20 || *c == 0x7f)
            *c = '?';
    if ((rc = pps__col_int(st, 0, 0, INT16_MAX, path, where, "rank", &r, err)) ||
        (rc = pps__col_text(st, 2, path, where, "value", value, err)))
        return rc;
    *rank = (int)r;
    return 0;
}

int pps__name_row(sqlite3_stmt *st, const char *path, const struct pps__span_bounds *b, int *rank,
                  int32_t *id, const char **name, struct pps_err *err)
{
    int64_t r, i;
    int rc;

    if ((rc =
             pps__col_int(st, 0, b->rank_min, b->rank_max, path, "a names row", "rank", &r, err)) ||
        (rc = pps__col_int(st, 1, 0, INT32_MAX, path, "a names row", "id", &i, err)) ||
        (rc = pps__col_text(st, 2, path, "a names row", "name", name, err)))
        return rc;
    *rank = (int)r;
    *id = (int32_t)i;
    return 0;
}

/* The one number that sql ("SELECT count(*) ...") returns, into *n. */
static int count_rows(sqlite3 *db, const char *path, const char *sql, int64_t *n,
                      struct pps_err *err)
{
    sqlite3_stmt *st = NULL;
    int rc;

    if ((rc = pps__prepare(db, sql, path, &st, err)))
        goto out;
    if ((rc = sqlite3_step(st)) != SQLITE_ROW) {
        rc = pps__sql_fail(db, rc, path, "cannot read", err);
        goto out;
    }
    *n = sqlite3_column_int64(st, 0);
    rc = 0;
out:
    sqlite3_finalize(st);
    return rc;
}

int pps__parse_i64(const char *s, int64_t *out)
{
    char *end;
    long long v;

    if (!s || !*s)
        return -1;
    errno = 0;
    v = strtoll(s, &end, 10);
    if (errno || *end)
        return -1;
    *out = v;
    return 0;
}

static const char *const clock_keys[] = {"clock_offset_start_ns", "clock_offset_end_ns",
                                         "clock_sync_start_ns", "clock_sync_end_ns"};

int pps__clock_note(struct pps__clock *ri, int have[4], const char *key, const char *value,
                    const char *path, struct pps_err *err)
{
    int64_t v;

    if (!strcmp(key, "complete")) {
        /* Only the writer sets it, to 0 or 1: anything else is damage, not "still running". */
        if (strcmp(value, "0") != 0 && strcmp(value, "1") != 0)
            return pps_err_set(err, PPS_EFORMAT, "%s: meta complete of rank %d is '%s', not 0 or 1",
                               path, ri->rank, value);
        ri->complete = value[0] == '1';
        return 0;
    }
    for (int k = 0; k < 4; k++) {
        if (strcmp(key, clock_keys[k]) != 0)
            continue;
        if (pps__parse_i64(value, &v) != 0)
            return pps_err_set(err, PPS_EFORMAT,
                               "%s: meta %s of rank %d is '%s', not a number of nanoseconds", path,
                               key, ri->rank, value);
        have[k] = 1;
        *(k == 0 ? &ri->o0 : k == 1 ? &ri->o1 : k == 2 ? &ri->t0 : &ri->t1) = v;
    }
    return 0;
}

void pps__clock_finish(struct pps__clock *ri, const int have[4])
{
    ri->linear = have[0] && have[1] && have[2] && have[3] && ri->t1 != ri->t0;
    ri->has_offset = have[0] || have[1];
    if (!have[0] && have[1])
        ri->o0 = ri->o1; /* only the end offset: use it throughout */
}

int pps__clock_next(struct pps__clock **ranks, size_t *n, size_t *cap, int have[4], int rank)
{
    if (*n)
        pps__clock_finish(&(*ranks)[*n - 1], have);
    if (pps__grow((void **)ranks, cap, *n + 1, sizeof(**ranks)))
        return -1;
    memset(&(*ranks)[*n], 0, sizeof(**ranks));
    (*ranks)[(*n)++].rank = rank;
    memset(have, 0, 4 * sizeof(*have));
    return 0;
}

int pps__meta_push(struct pps_meta_entry **meta, size_t *n, size_t *cap, int rank, const char *key,
                   const char *value)
{
    struct pps_meta_entry *e;

    if (pps__grow((void **)meta, cap, *n + 1, sizeof(**meta)))
        return -1;
    e = &(*meta)[(*n)++];
    e->rank = rank;
    e->key = strdup(key);
    e->value = strdup(value);
    return e->key && e->value ? 0 : -1;
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
        if (pps__grow((void **)&run->names, &ld->names_cap, run->n_names + 1,
                      sizeof(*run->names)) ||
            pps__grow((void **)&ld->refs, &ld->refs_cap, ld->n_refs + 1, sizeof(*ld->refs)) ||
            !(copy = strdup(name))) {
            rc = oom(ld, err);
            goto out;
        }
        ld->refs[ld->n_refs].rank = rank;
        ld->refs[ld->n_refs].id = id;
        ld->refs[ld->n_refs++].index = (int32_t)run->n_names;
        run->names[run->n_names++] = copy;
    }
    rc = pps__step_done(db, rc, ld->path, err);
out:
    sqlite3_finalize(st);
    return rc;
}

const struct pps__clock *pps__clock_find(const struct pps__clock *ranks, size_t n, int rank)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (ranks[mid].rank < rank)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && ranks[lo].rank == rank ? &ranks[lo] : NULL;
}

size_t pps__name_ref_pos(const struct pps__name_ref *refs, size_t n, int rank, int32_t id)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const struct pps__name_ref *r = &refs[mid];
        if (r->rank < rank || (r->rank == rank && r->id < id))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

int32_t pps__name_ref_find(const struct pps__name_ref *refs, size_t n, int rank, int32_t id)
{
    size_t at = pps__name_ref_pos(refs, n, rank, id);
    return at < n && refs[at].rank == rank && refs[at].id == id ? refs[at].index : -1;
}

int pps__clock_align(const struct pps__clock *ri, int64_t t, int64_t *out)
{
    int64_t off = ri->o0;

    if (ri->linear) {
        double f = ((double)t - (double)ri->t0) / ((double)ri->t1 - (double)ri->t0);
        double o = (double)ri->o0 + f * ((double)ri->o1 - (double)ri->o0);
        if (!(o > -9.2e18 && o < 9.2e18))
            return -1;
        off = (int64_t)llround(o);
    }
    if ((off > 0 && t > INT64_MAX - off) || (off < 0 && t < INT64_MIN - off))
        return -1;
    *out = t + off;
    return 0;
}

static int add_span(struct loader *ld, const struct pps_span *s, struct pps_err *err)
{
    struct pps_run *run = ld->run;
    struct pps_stage_spans *b;

    if ((size_t)s->stage >= ld->stages_cap) {
        size_t old = ld->stages_cap, cap2 = old;
        if (pps__grow((void **)&run->stages, &ld->stages_cap, (size_t)s->stage + 1,
                      sizeof(*run->stages)) ||
            pps__grow((void **)&ld->span_cap, &cap2, ld->stages_cap, sizeof(*ld->span_cap)))
            return oom(ld, err);
        memset(run->stages + old, 0, (ld->stages_cap - old) * sizeof(*run->stages));
        memset(ld->span_cap + old, 0, (ld->stages_cap - old) * sizeof(*ld->span_cap));
    }
    if (s->stage >= run->n_stages)
        run->n_stages = s->stage + 1;
    b = &run->stages[s->stage];
    if (pps__grow((void **)&b->spans, &ld->span_cap[s->stage], b->n + 1, sizeof(*b->spans)))
        return oom(ld, err);
    b->spans[b->n++] = *s;
    run->n_spans++;
    return 0;
}

/*
 * The range of each column of spans, in SELECT order. A kind or clock this ppscope does not know
 * is a newer schema or damage: callers index arrays by kind, so only known ones pass. iter + 1
 * must fit an int (n_iters), and mb + 1 too (the microbatches counted from the highest). Times
 * stay within +-PPS__TIME_LIMIT (146 years either side of the epoch), so that the difference of
 * any two, which every duration and the run's extent are, fits int64. The run's own bounds
 * (stage, chunk, mb, peer, rank: struct pps__span_bounds) come from the file's meta.
 */
static const struct {
    const char *name;
    int64_t lo, hi;
} span_cols[13] = {
    {"kind", 1, PPS_SPAN_KIND_COUNT - 1},
    {"stage", 0, INT16_MAX},
    /* -1 is "none" or "unknown" (schema.md); nothing writes another negative. */
    {"chunk", -1, INT16_MAX},
    {"mb", -1, INT32_MAX - 1},
    {"iter", -1, INT32_MAX - 1},
    {"start_ns", -PPS__TIME_LIMIT, PPS__TIME_LIMIT},
    {"end_ns", -PPS__TIME_LIMIT, PPS__TIME_LIMIT},
    {"peer", -1, INT32_MAX},
    {"bytes", 0, INT64_MAX}, /* moved by SEND, RECV, MEMCPY; 0 otherwise */
    {"name_id", INT32_MIN, INT32_MAX},
    {"clock", PPS_CLOCK_HOST, PPS_CLOCK_DEVICE},
    {"corr", INT64_MIN, INT64_MAX},
    {"rank", 0, INT16_MAX},
};

int pps__span_row(sqlite3_stmt *st, const char *path, const struct pps__span_bounds *b,
                  struct pps_span *s, struct pps_err *err)
{
    char where[48];
    int64_t v[13];
    int rc;

    snprintf(where, sizeof(where), "spans row %lld", (long long)sqlite3_column_int64(st, 13));
    for (int c = 0; c < 13; c++) {
        int64_t lo = span_cols[c].lo, hi = span_cols[c].hi;

        switch (c) {
        case 1:
            hi = b->stage_max;
            break;
        case 2:
            hi = b->chunk_max;
            break;
        case 3:
            hi = b->mb_max;
            break;
        case 4:
            hi = b->iter_max;
            break;
        case 7:
            hi = b->peer_max;
            break;
        case 12:
            lo = b->rank_min, hi = b->rank_max;
            break;
        default:
            break;
        }
        if ((rc = pps__col_int(st, c, lo, hi, path, where, span_cols[c].name, &v[c], err)))
            return rc;
    }
    /* Both within +-PPS__TIME_LIMIT: start - end cannot overflow. No writer ends a span before
     * it starts (the tracer reads a monotonic clock; the importers refuse such events): one that
     * does would be a negative duration in every figure. */
    if (v[6] < v[5])
        return pps_err_set(err, PPS_EFORMAT,
                           "%s: truncated or corrupted (%s: ends %lld ns before it starts)", path,
                           where, (long long)(v[5] - v[6]));
    /* `ppscope run` keeps one stage per rank (docs/schema.md): a span of another stage in a
     * rank's rows was moved there. */
    if (b->stage_is_rank && v[1] != v[12])
        return pps_err_set(err, PPS_EFORMAT,
                           "%s: truncated or corrupted (%s: stage %lld in rank %lld's rows, and "
                           "a ppscope run's rank is its stage)",
                           path, where, (long long)v[1], (long long)v[12]);
    /* A message or a wait is between two stages: one with itself is not one ppscope wrote. */
    if ((v[0] == PPS_SPAN_SEND || v[0] == PPS_SPAN_RECV || v[0] == PPS_SPAN_WAIT) && v[7] == v[1])
        return pps_err_set(err, PPS_EFORMAT,
                           "%s: truncated or corrupted (%s: a %s of stage %lld with itself)", path,
                           where, pps_span_kind_name((int)v[0]), (long long)v[1]);
    s->kind = (uint8_t)v[0];
    s->stage = (int16_t)v[1];
    s->chunk = (int16_t)v[2];
    s->mb = (int32_t)v[3];
    s->iter = (int32_t)v[4];
    s->start_ns = v[5];
    s->end_ns = v[6];
    s->peer = (int32_t)v[7];
    s->bytes = v[8];
    s->name_id = (int32_t)v[9];
    s->clock = (uint8_t)v[10];
    s->corr = v[11];
    s->rank = (int16_t)v[12];
    return 0;
}

/* The bound of each count in meta: p names stages 0..32767, v chunks of a stage, world ranks
 * 0..32767. */
static const struct {
    const char *key;
    int64_t max;
} meta_counts[5] = {{"p", (int64_t)INT16_MAX + 1},
                    {"m", PPS__MAX_M},
                    {"v", INT16_MAX},
                    {"iters", INT32_MAX},
                    {"world", (int64_t)INT16_MAX + 1}};

/* A shard's meta table keys (rank, key): a file whose table does not (not ppscope's schema, or
 * damaged) could say two things at once, and merge could not copy it. */
static int meta_unique(const struct pps_meta_entry *meta, size_t n, const char *path,
                       struct pps_err *err)
{
    struct pps_meta_entry *sorted;
    int rc = 0;

    if (n < 2)
        return 0;
    if (!(sorted = malloc(n * sizeof(*sorted))))
        return pps_err_set(err, PPS_ENOMEM, "%s: out of memory", path);
    memcpy(sorted, meta, n * sizeof(*sorted));
    qsort(sorted, n, sizeof(*sorted), pps__meta_cmp);
    for (size_t i = 1; i < n && !rc; i++)
        if (pps__meta_cmp(&sorted[i - 1], &sorted[i]) == 0)
            rc = pps_err_set(err, PPS_EFORMAT,
                             "%s: truncated or corrupted (meta key '%s' of rank %d is there twice)",
                             path, sorted[i].key, sorted[i].rank);
    free(sorted);
    return rc;
}

int pps__file_meta_check(const struct pps_meta_entry *meta, size_t n, const char *path,
                         struct pps__span_bounds *b, struct pps_err *err)
{
    int from[5] = {-1, -1, -1, -1, -1}; /* the rank each bound was taken from */
    int64_t got[5] = {0}, v;
    int lo_rank = INT_MAX, hi_rank = -1, rc;

    if ((rc = meta_unique(meta, n, path, err)))
        return rc;
    for (size_t i = 0; i < n; i++) {
        if (meta[i].rank < lo_rank)
            lo_rank = meta[i].rank;
        if (meta[i].rank > hi_rank)
            hi_rank = meta[i].rank;
        /* The writer's own rank key says what its rows' rank column does. */
        if (!strcmp(meta[i].key, "rank") &&
            (pps__parse_i64(meta[i].value, &v) != 0 || v != meta[i].rank))
            return pps_err_set(err, PPS_EFORMAT,
                               "%s: truncated or corrupted (meta rank of rank %d is '%s')", path,
                               meta[i].rank, meta[i].value);
        for (int k = 0; k < 5; k++) {
            if (strcmp(meta[i].key, meta_counts[k].key) != 0)
                continue;
            if (pps__parse_i64(meta[i].value, &v) != 0 || v < 1 || v > meta_counts[k].max)
                return pps_err_set(
                    err, PPS_EFORMAT, "%s: meta %s of rank %d is '%s', not a count in 1..%lld",
                    path, meta[i].key, meta[i].rank, meta[i].value, (long long)meta_counts[k].max);
            if (from[k] < 0 || meta[i].rank < from[k]) {
                from[k] = meta[i].rank;
                got[k] = v;
            }
        }
    }
    b->stage_max = from[0] >= 0 ? got[0] - 1 : INT16_MAX;
    b->peer_max = from[0] >= 0 ? got[0] - 1 : INT32_MAX;
    b->mb_max = from[1] >= 0 ? got[1] - 1 : INT32_MAX - 1;
    b->chunk_max = from[2] >= 0 ? got[2] - 1 : INT16_MAX;
    b->rank_min = 0;
    b->rank_max = from[4] >= 0 ? got[4] - 1 : INT16_MAX;
    b->iter_max = from[3] >= 0 ? got[3] - 1 : INT32_MAX - 1;
    /* `ppscope run` says so twice: its source, and the transport its stages talked over (a
     * program of the user's that calls itself ppscope records stages as it likes). */
    b->stage_is_rank = 0;
    for (size_t i = 0, src = 0, transport = 0; i < n && !b->stage_is_rank; i++) {
        src |= !strcmp(meta[i].key, "source") && !strcmp(meta[i].value, "ppscope");
        transport |= !strcmp(meta[i].key, "transport");
        b->stage_is_rank = src && transport;
    }
    /* A shard of one rank holds that rank's spans: a row of another is a copy or damage, and
     * would be counted under a rank whose own shard may hold it too. */
    if (lo_rank == hi_rank)
        b->rank_min = b->rank_max = lo_rank;
    return 0;
}

int pps__clock_align_span(const struct pps__clock *ri, struct pps_span *s, const char *path,
                          struct pps_err *err)
{
    int64_t raw = s->start_ns;

    if (ri->has_offset && (pps__clock_align(ri, s->start_ns, &s->start_ns) ||
                           pps__clock_align(ri, s->end_ns, &s->end_ns) ||
                           s->start_ns < -PPS__TIME_LIMIT || s->start_ns > PPS__TIME_LIMIT ||
                           s->end_ns < -PPS__TIME_LIMIT || s->end_ns > PPS__TIME_LIMIT))
        return pps_err_set(err, PPS_EFORMAT,
                           "%s: truncated or corrupted (aligned time %lld out of range)", path,
                           (long long)raw);
    return 0;
}

int pps__span_read(sqlite3_stmt *st, const char *path, const struct pps__span_bounds *b,
                   const struct pps__name_ref *refs, size_t n_refs, const struct pps__clock *ranks,
                   size_t n_ranks, const struct pps__clock **ri, struct pps_span *s,
                   struct pps_err *err)
{
    int rc;

    if ((rc = pps__span_row(st, path, b, s, err)))
        return rc;
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

static int load_spans(struct loader *ld, sqlite3 *db, const struct pps__span_bounds *b,
                      struct pps_err *err)
{
    const struct pps__clock *ri = NULL;
    sqlite3_stmt *st = NULL;
    int64_t n_read = 0, n_indexed = 0;
    int rc;

    if ((rc = prepare(ld, db, "SELECT " PPS__SPAN_COLS ", rowid FROM spans", &st, err)))
        goto out;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        struct pps_span s;

        if ((rc = pps__span_read(st, ld->path, b, ld->refs, ld->n_refs, ld->ranks, ld->n_ranks, &ri,
                                 &s, err)))
            goto out;
        if (s.iter > ld->max_iter)
            ld->max_iter = s.iter;
        if ((rc = add_span(ld, &s, err)))
            goto out;
        n_read++;
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
    if ((rc = count_rows(db, ld->path, "SELECT count(*) FROM spans", &n_indexed, err)))
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

/* A REAL column: a number, or NULL for unknown (NaN). */
static int col_real(sqlite3_stmt *st, int col, const char *path, const char *where,
                    const char *name, double *out, struct pps_err *err)
{
    int type = sqlite3_column_type(st, col);

    if (type == SQLITE_NULL) {
        *out = NAN;
        return 0;
    }
    if (type != SQLITE_FLOAT && type != SQLITE_INTEGER)
        return pps_err_set(err, PPS_EFORMAT,
                           "%s: truncated or corrupted (%s: %s is %s, not a number)", path, where,
                           name, type_words(type));
    *out = sqlite3_column_double(st, col);
    return 0;
}

int pps__metric_row(sqlite3_stmt *st, const char *path, const struct pps__span_bounds *b,
                    struct pps_metric *m, struct pps_err *err)
{
    char where[48];
    int64_t rank, iter, stage;
    int rc;

    snprintf(where, sizeof(where), "metrics row %lld", (long long)sqlite3_column_int64(st, 8));
    /* -1 is "unknown" for the counts; a sum of counts is the reader's to keep in range. */
    if ((rc = pps__col_int(st, 0, b->rank_min, b->rank_max, path, where, "rank", &rank, err)) ||
        (rc = pps__col_int(st, 1, -1, b->iter_max, path, where, "iter", &iter, err)) ||
        (rc = pps__col_int(st, 2, -1, b->stage_max, path, where, "stage", &stage, err)) ||
        (rc = col_real(st, 3, path, where, "loss", &m->loss, err)) ||
        (rc = col_real(st, 4, path, where, "grad_norm", &m->grad_norm, err)) ||
        (rc = pps__col_int(st, 5, -1, INT64_MAX, path, where, "act_bytes", &m->act_bytes, err)) ||
        (rc = pps__col_int(st, 6, -1, INT64_MAX, path, where, "pending_w", &m->pending_w, err)) ||
        (rc = pps__col_int(st, 7, -1, INT64_MAX, path, where, "dropped", &m->dropped, err)))
        return rc;
    m->rank = (int16_t)rank;
    m->iter = (int32_t)iter;
    m->stage = (int32_t)stage;
    return 0;
}

static int load_metrics(struct loader *ld, sqlite3 *db, const struct pps__span_bounds *b,
                        struct pps_err *err)
{
    struct pps_run *run = ld->run;
    sqlite3_stmt *st = NULL;
    int rc;

    if ((rc = prepare(ld, db, "SELECT " PPS__METRIC_COLS ", rowid FROM metrics", &st, err)))
        goto out;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (pps__grow((void **)&run->metrics, &ld->metrics_cap, run->n_metrics + 1,
                      sizeof(*run->metrics))) {
            rc = oom(ld, err);
            goto out;
        }
        if ((rc = pps__metric_row(st, ld->path, b, &run->metrics[run->n_metrics], err)))
            goto out;
        run->n_metrics++;
    }
    rc = pps__step_done(db, rc, ld->path, err);
out:
    sqlite3_finalize(st);
    return rc;
}

/*
 * The kinds table is not needed to read spans, but reading it (rows, then a count through its
 * index on name) costs nothing and finds damage there too; and its rows must say what ours say.
 */
int pps__kinds_check(sqlite3 *db, const char *path, struct pps_err *err)
{
    sqlite3_stmt *st = NULL;
    int64_t n_read = 0, n_indexed = 0;
    int rc;

    /* compute, which the index on name lacks, makes SQLite read the table itself */
    if ((rc = pps__prepare(db, "SELECT id, name, compute, rowid FROM kinds", path, &st, err)))
        goto out;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t id, compute;
        const char *name;
        char where[48];

        snprintf(where, sizeof(where), "kinds row %lld", (long long)sqlite3_column_int64(st, 3));
        if ((rc = pps__col_int(st, 0, INT64_MIN, INT64_MAX, path, where, "id", &id, err)) ||
            (rc = pps__col_text(st, 1, path, where, "name", &name, err)) ||
            (rc = pps__col_int(st, 2, 0, 1, path, where, "compute", &compute, err)))
            goto out;
        n_read++;
        if (id > 0 && id < PPS_SPAN_KIND_COUNT &&
            (strcmp(name, pps_span_kind_name((int)id)) != 0 ||
             compute != pps_span_kind_is_compute((int)id))) {
            rc = pps_err_set(err, PPS_EFORMAT,
                             "%s: truncated or corrupted (kind %lld is '%s', not '%s')", path,
                             (long long)id, name, pps_span_kind_name((int)id));
            goto out;
        }
    }
    if ((rc = pps__step_done(db, rc, path, err)))
        goto out;
    sqlite3_finalize(st);
    st = NULL;
    if ((rc = count_rows(db, path, "SELECT count(*) FROM kinds", &n_indexed, err)))
        goto out;
    if (n_indexed != n_read)
        rc = pps_err_set(err, PPS_EFORMAT, "%s: truncated or corrupted (the kinds index)", path);
out:
    sqlite3_finalize(st);
    return rc;
}

/*
 * Reads one file (a shard or a merged file) into the run. *n_ranks is the number of ranks with
 * metadata in it; *complete is 1 when there is one and each has complete=1.
 */
/* Whether the file's ranks all say they are complete (the shard is finished). */
static int all_complete(const struct loader *ld)
{
    for (size_t i = 0; i < ld->n_ranks; i++)
        if (!ld->ranks[i].complete)
            return 0;
    return ld->n_ranks > 0;
}

static int load_file(struct loader *ld, const char *path, size_t *n_ranks, int *complete,
                     struct pps_err *err)
{
    sqlite3 *db = NULL;
    struct pps__shard_check *check = NULL;
    size_t meta_from;
    struct pps__span_bounds bounds;
    int in_txn = 0, checking = 0, rc;

    ld->path = path;
    ld->n_ranks = 0;
    ld->n_refs = 0;
    *n_ranks = 0;
    *complete = 0;
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
    /* A finished shard is checked whole by SQLite too, beside the load (shard_check.h). */
    if (all_complete(ld)) {
        if ((rc = pps__shard_check_start(path, &check, err)))
            goto out;
        checking = 1;
    }
    if ((rc = load_names(ld, db, &bounds, err)) || (rc = load_spans(ld, db, &bounds, err)) ||
        (rc = load_metrics(ld, db, &bounds, err)))
        goto out;
    if ((rc = pps__exec(db, "COMMIT", path, "cannot read", err)))
        goto out;
    in_txn = 0;
    if (checking) {
        checking = 0; /* finish frees the check, whatever it says */
        if ((rc = pps__shard_check_finish(path, check, err)))
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

#define CMP(a, b)                                                                                  \
    do {                                                                                           \
        if ((a) != (b))                                                                            \
            return (a) < (b) ? -1 : 1;                                                             \
    } while (0)

int pps__span_cmp(const void *pa, const void *pb)
{
    const struct pps_span *a = pa, *b = pb;
    CMP(a->start_ns, b->start_ns);
    CMP(a->end_ns, b->end_ns);
    CMP(a->rank, b->rank);
    CMP(a->kind, b->kind);
    CMP(a->chunk, b->chunk);
    CMP(a->mb, b->mb);
    CMP(a->iter, b->iter);
    CMP(a->peer, b->peer);
    CMP(a->corr, b->corr);
    CMP(a->bytes, b->bytes);
    CMP(a->name_id, b->name_id);
    CMP(a->clock, b->clock);
    return 0;
}

int pps__metric_cmp(const void *pa, const void *pb)
{
    const struct pps_metric *a = pa, *b = pb;
    CMP(a->iter, b->iter);
    CMP(a->stage, b->stage);
    CMP(a->rank, b->rank);
    return 0;
}

int pps__meta_cmp(const void *pa, const void *pb)
{
    const struct pps_meta_entry *a = pa, *b = pb;
    CMP(a->rank, b->rank);
    return strcmp(a->key, b->key);
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
    int have_t = 0, rc;

    if (run->n_meta) /* a run of files without meta rows has no array: qsort(NULL) is UB */
        qsort(run->meta, run->n_meta, sizeof(*run->meta), pps__meta_cmp);
    if ((rc = pps__run_meta_counts(run, err)))
        return rc;

    if ((size_t)run->p > ld->stages_cap) {
        size_t old = ld->stages_cap;
        if (pps__grow((void **)&run->stages, &ld->stages_cap, (size_t)run->p, sizeof(*run->stages)))
            return oom(ld, err);
        memset(run->stages + old, 0, (ld->stages_cap - old) * sizeof(*run->stages));
    }
    if (run->p > run->n_stages)
        run->n_stages = run->p;
    run->n_iters = (int)(ld->max_iter + 1);

    for (int i = 0; i < run->n_stages; i++) {
        struct pps_stage_spans *b = &run->stages[i];
        int sorted = 1;
        for (size_t k = 1; k < b->n && sorted; k++)
            sorted = pps__span_cmp(&b->spans[k - 1], &b->spans[k]) <= 0;
        if (!sorted)
            qsort(b->spans, b->n, sizeof(*b->spans), pps__span_cmp);
        for (size_t k = 0; k < b->n; k++) {
            const struct pps_span *s = &b->spans[k];
            if (!have_t || s->start_ns < run->t_min)
                run->t_min = s->start_ns;
            if (!have_t || s->end_ns > run->t_max)
                run->t_max = s->end_ns;
            have_t = 1;
        }
    }
    if (run->n_metrics)
        qsort(run->metrics, run->n_metrics, sizeof(*run->metrics), pps__metric_cmp);
    return 0;
}

int pps_run_load(const char *path, struct pps_run **out, struct pps_err *err)
{
    struct loader ld = {.max_iter = -1};
    struct pps__shards shards = {0};
    struct pps_run *run = NULL;
    struct stat st;
    size_t n_ranks;
    int complete, rc;

    if (out)
        *out = NULL;
    if (!path || !out) {
        rc = pps_err_set(err, PPS_EINVAL, "pps_run_load: no path");
        goto out;
    }
    if ((rc = pps__stat(path, &st, err)))
        goto out;
    if (!(run = calloc(1, sizeof(*run))) || !(run->path = strdup(path))) {
        rc = pps_err_set(err, PPS_ENOMEM, "%s: out of memory", path);
        goto out;
    }
    ld.run = run;
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
    free(ld.span_cap);
    free(ld.refs);
    pps_run_free(run);
    return rc;
}

void pps__run_free_data(struct pps_run *run)
{
    free(run->schedule);
    for (size_t i = 0; i < run->n_meta; i++) {
        free(run->meta[i].key);
        free(run->meta[i].value);
    }
    free(run->meta);
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
