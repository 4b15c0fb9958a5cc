/*
 * rows.c - one row of a trace file's tables, read and checked: every column of the type and
 * within the bounds the schema and the file's own meta give, or an error that names the file,
 * the row and the column (docs/schema.md). The loader (reader.c) and the follower
 * (incremental.c) read every row through these, so the two cannot disagree on what a good row
 * is; also the orders they sort by and the small helpers they share.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "storage_int.h"

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
int pps__count_rows(sqlite3 *db, const char *path, const char *sql, int64_t *n, struct pps_err *err)
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

void pps__meta_release(struct pps_meta_entry *meta, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(meta[i].key);
        free(meta[i].value);
    }
    free(meta);
}

int pps__meta_push(struct pps_meta_entry **meta, size_t *n, size_t *cap, int rank, const char *key,
                   const char *value)
{
    struct pps_meta_entry *e;

    if (pps_grow((void **)meta, cap, *n + 1, sizeof(**meta)))
        return -1;
    e = &(*meta)[(*n)++];
    e->rank = rank;
    e->key = strdup(key);
    e->value = strdup(value);
    return e->key && e->value ? 0 : -1;
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

/* "spans row N", from the rowid after the columns: only for a message. */
static const char *row_name(sqlite3_stmt *st, char *where, size_t len)
{
    snprintf(where, len, "spans row %lld", (long long)sqlite3_column_int64(st, 13));
    return where;
}

/* The bounds of every span column in a file whose spans b bounds, into b->col_lo and col_hi. */
static void span_col_bounds(struct pps__span_bounds *b)
{
    for (int c = 0; c < 13; c++) {
        b->col_lo[c] = span_cols[c].lo;
        b->col_hi[c] = span_cols[c].hi;
    }
    b->col_hi[1] = b->stage_max;
    b->col_hi[2] = b->chunk_max;
    b->col_hi[3] = b->mb_max;
    b->col_hi[4] = b->iter_max;
    b->col_hi[7] = b->peer_max;
    b->col_lo[12] = b->rank_min;
    b->col_hi[12] = b->rank_max;
}

int pps__span_row(sqlite3_stmt *st, const char *path, const struct pps__span_bounds *b,
                  struct pps_span *s, struct pps_err *err)
{
    char where[48];
    int64_t v[13];
    int rc, c;

    /* Every column an integer in its bounds: the row's name and the reason are made only for a
     * row that is not (pps__col_int below), since formatting them costs as much as the row. */
    for (c = 0; c < 13; c++) {
        /* One sqlite3_column_*() call a column, not two: each checks the statement and its
         * column index, at two thirds of a scan's cost (the sqlite3_value_*() calls do not). */
        sqlite3_value *val = sqlite3_column_value(st, c);

        if (sqlite3_value_type(val) != SQLITE_INTEGER)
            break;
        v[c] = sqlite3_value_int64(val);
        if (v[c] < b->col_lo[c] || v[c] > b->col_hi[c])
            break;
    }
    if (c < 13)
        row_name(st, where, sizeof(where));
    for (; c < 13; c++)
        if ((rc = pps__col_int(st, c, b->col_lo[c], b->col_hi[c], path, where, span_cols[c].name,
                               &v[c], err)))
            return rc;
    /* Both within +-PPS__TIME_LIMIT: start - end cannot overflow. No writer ends a span before
     * it starts (the tracer reads a monotonic clock; the importers refuse such events): one that
     * does would be a negative duration in every figure. */
    if (v[6] < v[5])
        return pps_err_set(err, PPS_EFORMAT,
                           "%s: truncated or corrupted (%s: ends %lld ns before it starts)", path,
                           row_name(st, where, sizeof(where)), (long long)(v[5] - v[6]));
    /* The writer keeps span_max_ns with the rows (docs/schema.md): a longer span was changed
     * after, and a reader of a window would miss it. */
    if (b->span_max_known && v[6] - v[5] > b->span_max_ns)
        return pps_err_set(err, PPS_EFORMAT,
                           "%s: truncated or corrupted (%s: lasts %lld ns, and meta span_max_ns "
                           "says no span lasts more than %lld)",
                           path, row_name(st, where, sizeof(where)), (long long)(v[6] - v[5]),
                           (long long)b->span_max_ns);
    /* `ppscope run` keeps one stage per rank (docs/schema.md): a span of another stage in a
     * rank's rows was moved there. */
    if (b->stage_is_rank && v[1] != v[12])
        return pps_err_set(err, PPS_EFORMAT,
                           "%s: truncated or corrupted (%s: stage %lld in rank %lld's rows, and "
                           "a ppscope run's rank is its stage)",
                           path, row_name(st, where, sizeof(where)), (long long)v[1],
                           (long long)v[12]);
    /* A message or a wait is between two stages: one with itself is not one ppscope wrote. */
    if ((v[0] == PPS_SPAN_SEND || v[0] == PPS_SPAN_RECV || v[0] == PPS_SPAN_WAIT) && v[7] == v[1])
        return pps_err_set(err, PPS_EFORMAT,
                           "%s: truncated or corrupted (%s: a %s of stage %lld with itself)", path,
                           row_name(st, where, sizeof(where)), pps_span_kind_name((int)v[0]),
                           (long long)v[1]);
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
    size_t n_ranks = 0, n_span_max = 0;

    if ((rc = meta_unique(meta, n, path, err)))
        return rc;
    b->span_max_ns = 0;
    for (size_t i = 0; i < n; i++) {
        if (meta[i].rank < lo_rank)
            lo_rank = meta[i].rank;
        if (meta[i].rank > hi_rank)
            hi_rank = meta[i].rank;
        n_ranks += i == 0 || meta[i].rank != meta[i - 1].rank; /* sorted by rank, key */
        if (!strcmp(meta[i].key, "span_max_ns")) {
            if (pps__parse_i64(meta[i].value, &v) != 0 || v < 0 || v > 2 * PPS__TIME_LIMIT)
                return pps_err_set(err, PPS_EFORMAT,
                                   "%s: meta span_max_ns of rank %d is '%s', not a number of "
                                   "nanoseconds",
                                   path, meta[i].rank, meta[i].value);
            n_span_max++;
            if (v > b->span_max_ns)
                b->span_max_ns = v;
        }
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
    b->span_max_known = n_ranks > 0 && n_span_max == n_ranks;
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
    span_col_bounds(b);
    return 0;
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
    if ((rc = pps__count_rows(db, path, "SELECT count(*) FROM kinds", &n_indexed, err)))
        goto out;
    if (n_indexed != n_read)
        rc = pps_err_set(err, PPS_EFORMAT, "%s: truncated or corrupted (the kinds index)", path);
out:
    sqlite3_finalize(st);
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
