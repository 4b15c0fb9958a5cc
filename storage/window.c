/*
 * window.c - the rows of one file that may meet a time window, found through the spans' (stage,
 * start_ns) index instead of a scan (pps_run_load_window(); storage_int.h).
 *
 * A span meets the window [t0, t1) on rank 0's clock when it starts before t1 and ends after t0
 * (an instant: when it lies in it). The index orders raw starts, so the window is taken back to
 * each rank's own clock (through its offset, which moves by far less than the window), widened by
 * the longest span the file holds (meta span_max_ns: a span that starts that long before the
 * window can still reach into it), and read stage by stage; the reader then keeps exactly the
 * spans that meet the window once aligned. Reading a window costs the rows in it, not the file's.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "storage_int.h"

/* What a clock is allowed to drift against rank 0's for its window to be taken back to it by the
 * offset at the window's edges: 0.1 %, a hundred times what a host clock drifts. */
#define MAX_DRIFT 1e-3
/* Slack on each side of the raw range for the rounding of the offsets. */
#define SLACK_NS 1000

int pps__span_in_window(const struct pps_span *s, int64_t t0, int64_t t1)
{
    if (s->end_ns > s->start_ns)
        return s->start_ns < t1 && s->end_ns > t0;
    return s->start_ns >= t0 && s->start_ns < t1;
}

static int64_t sat_add(int64_t a, int64_t b)
{
    if (b > 0 && a > INT64_MAX - b)
        return INT64_MAX;
    if (b < 0 && a < INT64_MIN - b)
        return INT64_MIN;
    return a + b;
}

/* t on rank ri's own clock, give or take slack (*slack), for an aligned time t: t - offset(t). */
static int take_back(const struct pps__clock *ri, int64_t t, int64_t *raw, int64_t *slack)
{
    int64_t aligned;
    double drift = 0;

    if (ri->linear)
        drift = fabs(((double)ri->o1 - (double)ri->o0) / ((double)ri->t1 - (double)ri->t0));
    if (!(drift <= MAX_DRIFT) || pps__clock_align(ri, t, &aligned))
        return -1;
    /* offset(t) = aligned - t; the raw r with r + offset(r) = t lies within drift * |offset| of
     * t - offset(t). */
    int64_t off = aligned - t;
    if (off == INT64_MIN)
        return -1; /* no window lies that far back: read the file whole */
    *raw = sat_add(t, -off);
    *slack = (int64_t)(fabs((double)off) * 2 * MAX_DRIFT) + SLACK_NS;
    return 0;
}

int pps__window_raw_range(const struct pps__clock *ranks, size_t n, int64_t t0, int64_t t1,
                          int64_t span_max_ns, int64_t *lo, int64_t *hi)
{
    /* Device-clock spans and ranks without an offset keep their times: the window itself. */
    int64_t a = t0, b = t1;

    for (size_t i = 0; i < n; i++) {
        int64_t r0, r1, s0, s1;
        if (!ranks[i].has_offset)
            continue;
        if (take_back(&ranks[i], t0, &r0, &s0) || take_back(&ranks[i], t1, &r1, &s1))
            return -1;
        if (sat_add(r0, -s0) < a)
            a = sat_add(r0, -s0);
        if (sat_add(r1, s1) > b)
            b = sat_add(r1, s1);
    }
    *lo = sat_add(a, -(span_max_ns < 0 ? 0 : span_max_ns));
    *hi = b; /* the rows start before it */
    return 0;
}

/* Steps every row of st (its parameters bound) through row(); 0, its error, or SQLite's. */
static int step_rows(sqlite3 *db, const char *path, sqlite3_stmt *st,
                     int (*row)(void *ctx, sqlite3_stmt *st, struct pps_err *err), void *ctx,
                     struct pps_err *err)
{
    int rc;

    while ((rc = sqlite3_step(st)) == SQLITE_ROW)
        if ((rc = row(ctx, st, err)))
            return rc;
    rc = pps__step_done(db, rc, path, err);
    sqlite3_reset(st);
    return rc;
}

/* The statements of a window's read, in this order (their SQL: window_sql). */
enum { FIRST, NEXT, ROWS, LOW, ODD, N_STMTS };

#define SPAN_ROW_SQL "SELECT " PPS__SPAN_COLS ", rowid FROM spans INDEXED BY " PPS__SPANS_INDEX
static const char *const window_sql[N_STMTS] = {
    [FIRST] = "SELECT stage FROM spans INDEXED BY " PPS__SPANS_INDEX " ORDER BY stage LIMIT 1",
    [NEXT] = "SELECT stage FROM spans INDEXED BY " PPS__SPANS_INDEX
             " WHERE stage > ?1 ORDER BY stage LIMIT 1",
    [ROWS] = SPAN_ROW_SQL " WHERE stage = ?1 AND start_ns >= ?2 AND start_ns < ?3",
    [LOW] = SPAN_ROW_SQL " WHERE stage = ?1 ORDER BY start_ns LIMIT 1",
    [ODD] = SPAN_ROW_SQL " WHERE stage = ?1 AND start_ns >= ''",
};

int pps__window_rows(sqlite3 *db, const char *path, int64_t lo, int64_t hi,
                     int (*row)(void *ctx, sqlite3_stmt *st, struct pps_err *err), void *ctx,
                     struct pps_err *err)
{
    sqlite3_stmt *st[N_STMTS] = {NULL}, *at;
    int64_t stage;
    int rc = 0;

    /*
     * Each stage the index holds, in order, by one descent of the index each: the lowest first,
     * whatever it is (a NULL, or a stage out of range, is the row's reader's to refuse), then the
     * next above the last (FIRST, NEXT). In each, the rows that start in the range (ROWS), and
     * those whose start is not a number (SQLite orders NULL first and text and blobs after every
     * number, outside any range of numbers): a damaged row the whole file's read would refuse is
     * refused here too. Each is a range of the index: the stage's lowest entry (LOW: a NULL start
     * is there if any is, and the first refuses the file), and the entries from the first text on
     * (ODD: none, in a file that is not damaged).
     */
    for (int k = 0; k < N_STMTS && !rc; k++)
        rc = pps__prepare(db, window_sql[k], path, &st[k], err);
    for (at = st[FIRST]; !rc; at = st[NEXT]) {
        rc = sqlite3_step(at);
        if (rc != SQLITE_ROW) {
            rc = pps__step_done(db, rc, path, err);
            break;
        }
        if (sqlite3_column_type(at, 0) != SQLITE_INTEGER) {
            rc = pps_err_set(err, PPS_EFORMAT,
                             "%s: truncated or corrupted (a spans row's stage is not an integer)",
                             path);
            break;
        }
        stage = sqlite3_column_int64(at, 0);
        sqlite3_reset(at);
        sqlite3_bind_int64(st[ROWS], 1, stage);
        sqlite3_bind_int64(st[ROWS], 2, lo);
        sqlite3_bind_int64(st[ROWS], 3, hi);
        sqlite3_bind_int64(st[LOW], 1, stage);
        sqlite3_bind_int64(st[ODD], 1, stage);
        if ((rc = step_rows(db, path, st[ROWS], row, ctx, err)) ||
            (rc = step_rows(db, path, st[ODD], row, ctx, err)))
            break;
        if ((rc = sqlite3_step(st[LOW])) == SQLITE_ROW &&
            sqlite3_column_type(st[LOW], 5) == SQLITE_NULL)
            rc = row(ctx, st[LOW], err); /* refused by the row's reader, as the whole read does */
        else
            rc = rc == SQLITE_ROW ? 0 : pps__step_done(db, rc, path, err);
        sqlite3_reset(st[LOW]);
        if (rc || stage == INT64_MAX)
            break;
        sqlite3_bind_int64(st[NEXT], 1, stage);
    }
    for (int k = 0; k < N_STMTS; k++)
        sqlite3_finalize(st[k]);
    return rc;
}
