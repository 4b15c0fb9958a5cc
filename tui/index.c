/*
 * index.c - per lane and span kind, the spans' starts and running duration sums, so that the
 * time a kind covers in any range is two binary searches: drawing a lane costs its columns,
 * not its spans.
 *
 * A track holds one kind's spans of one lane: start[i] sorted, cum[i] = sum of the durations of
 * spans 0 .. i-1 (so span i ends at start[i] + cum[i+1] - cum[i]). Covered time in [a, b) is
 * cum[ib] - cum[ia] for ia, ib the first spans starting at or after a and b, minus what the last
 * spans before ib run past b, plus what the spans before ia run past a. Those edge corrections
 * look at a few spans only (EDGE_SPANS): exact when a kind's spans on a lane do not overlap each
 * other, as a stage's ops do not. Columns of a lane are consecutive ranges, so each boundary's
 * search starts where the previous one ended (galloping).
 *
 * Memory: 16 bytes per span, plus 4 per span for interleaved runs (a lane's span positions).
 */
#include <stdlib.h>
#include <string.h>

#include "tui_core.h"

/* Spans looked at on each side of a range's edges. */
#define EDGE_SPANS 4
/* Spans looked back at for one that started before a range and reaches into it. */
#define REACH_BACK 8

struct track {
    size_t n, cap;
    int64_t *start;
    int64_t *cum; /* n + 1 */
};

struct lane {
    int stage, chunk;
    int device;                   /* the stage's device row: its KERNEL and MEMCPY spans */
    const struct pps_span *spans; /* the stage's spans */
    size_t n_stage;
    uint32_t *pos; /* interleaved: positions of this lane's spans in spans[]; NULL otherwise */
    size_t n;      /* spans on the lane */
    struct track tracks[PPS_SPAN_KIND_COUNT];
};

struct pps_tui_index {
    int n_lanes;
    int chunked;
    struct lane *lanes;
};

static int64_t max64(int64_t a, int64_t b)
{
    return a > b ? a : b;
}

static int64_t min64(int64_t a, int64_t b)
{
    return a < b ? a : b;
}

int pps_tui_index_lanes(const struct pps_tui_index *ix)
{
    return ix ? ix->n_lanes : 0;
}

int pps_tui_index_chunked(const struct pps_tui_index *ix)
{
    return ix ? ix->chunked : 0;
}

void pps_tui_index_lane_id(const struct pps_tui_index *ix, int lane, int *stage, int *chunk)
{
    *stage = ix->lanes[lane].stage;
    *chunk = ix->lanes[lane].chunk;
}

int pps_tui_index_lane_device(const struct pps_tui_index *ix, int lane)
{
    return ix && lane >= 0 && lane < ix->n_lanes && ix->lanes[lane].device;
}

/* Whether a span is the device's (it goes to the stage's device row). */
static int is_device_kind(int kind)
{
    return kind == PPS_SPAN_KERNEL || kind == PPS_SPAN_MEMCPY;
}

/* Whether stage s recorded device spans. */
static int has_device(const struct pps_stage_spans *ss)
{
    for (size_t i = 0; i < ss->n; i++)
        if (is_device_kind(ss->spans[i].kind))
            return 1;
    return 0;
}

/* The lane of span sp of the stage whose lanes start at base: its chunk's host lane, or the
 * stage's device row (after its nv host lanes) where it has one. */
static int lane_of(const struct pps_tui_index *ix, const struct pps_span *sp, int base, int nv,
                   int device)
{
    if (device && is_device_kind(sp->kind))
        return base + nv;
    return base + (ix->chunked ? (sp->chunk < 0 ? 0 : sp->chunk >= nv ? nv - 1 : sp->chunk) : 0);
}

size_t pps_tui_index_lane_spans(const struct pps_tui_index *ix, int lane)
{
    return ix->lanes[lane].n;
}

const struct pps_span *pps_tui_index_span(const struct pps_tui_index *ix, int lane, size_t pos)
{
    const struct lane *l = &ix->lanes[lane];

    return l->pos ? &l->spans[l->pos[pos]] : &l->spans[pos];
}

void pps_tui_index_free(struct pps_tui_index *ix)
{
    if (!ix)
        return;
    for (int i = 0; i < ix->n_lanes; i++) {
        free(ix->lanes[i].pos);
        for (int k = 0; k < PPS_SPAN_KIND_COUNT; k++) {
            free(ix->lanes[i].tracks[k].start);
            free(ix->lanes[i].tracks[k].cum);
        }
    }
    free(ix->lanes);
    free(ix);
}

/* Allocates each lane's tracks (and positions) for the counts already in place. */
static int alloc_lane(struct lane *l)
{
    if (l->pos == NULL && l->n > 0 && l->n != l->n_stage) {
        if (l->n >= UINT32_MAX)
            return PPS_ENOMEM;
        l->pos = malloc(l->n * sizeof(*l->pos));
        if (!l->pos)
            return PPS_ENOMEM;
    }
    for (int k = 0; k < PPS_SPAN_KIND_COUNT; k++) {
        struct track *t = &l->tracks[k];
        if (!t->n)
            continue;
        t->start = malloc(t->n * sizeof(*t->start));
        t->cum = malloc((t->n + 1) * sizeof(*t->cum));
        if (!t->start || !t->cum)
            return PPS_ENOMEM;
        t->cum[0] = 0;
        t->cap = t->n;
        t->n = 0; /* refilled by fill_stage */
    }
    return 0;
}

static void fill_stage(struct pps_tui_index *ix, const struct pps_run *run, int s, int base, int nv,
                       int device)
{
    const struct pps_stage_spans *ss = &run->stages[s];
    size_t filled[65] = {0}; /* lanes' positions filled, by lane from base (nv <= 64, + device) */

    for (size_t i = 0; i < ss->n; i++) {
        const struct pps_span *sp = &ss->spans[i];
        int c = lane_of(ix, sp, base, nv, device) - base;
        struct lane *l = &ix->lanes[base + c];
        struct track *t = &l->tracks[sp->kind < PPS_SPAN_KIND_COUNT ? sp->kind : 0];

        if (l->pos)
            l->pos[filled[c]++] = (uint32_t)i;
        t->start[t->n] = sp->start_ns;
        t->cum[t->n + 1] = t->cum[t->n] + max64(0, sp->end_ns - sp->start_ns);
        t->n++;
    }
}

/*
 * Whether stage s gets lanes: the stages the run has, as the report counts them (analysis.h):
 * with p known, 0..p-1, and any stage that recorded spans; without p, only those. A process that
 * traced stage 1 alone shows one lane, not an empty stage 0 above it.
 */
static int stage_shown(const struct pps_run *run, int s)
{
    return (run->p > 0 && s < run->p) || run->stages[s].n > 0;
}

static int stages_shown(const struct pps_run *run)
{
    int n = 0;

    for (int s = 0; s < run->n_stages; s++)
        n += stage_shown(run, s);
    return n;
}

int pps_tui_index_build(const struct pps_run *run, struct pps_tui_index **out, struct pps_err *err)
{
    struct pps_tui_index *ix = NULL;
    int nv = 1, rc = 0, base = 0;

    *out = NULL;
    ix = calloc(1, sizeof(*ix));
    if (!ix)
        goto oom;
    /* Lanes per chunk when the run is interleaved (v > 1) or its spans carry chunks. */
    if (run->v > 1)
        nv = run->v;
    for (int s = 0; s < run->n_stages; s++)
        for (size_t i = 0; i < run->stages[s].n; i++)
            if (run->stages[s].spans[i].chunk + 1 > nv)
                nv = run->stages[s].spans[i].chunk + 1;
    if (nv > 64)
        nv = 64;
    ix->chunked = nv > 1;
    ix->n_lanes = stages_shown(run) * nv;
    for (int s = 0; s < run->n_stages; s++)
        ix->n_lanes += stage_shown(run, s) && has_device(&run->stages[s]);
    ix->lanes = calloc(ix->n_lanes ? (size_t)ix->n_lanes : 1, sizeof(*ix->lanes));
    if (!ix->lanes)
        goto oom;
    for (int s = 0; s < run->n_stages; s++) {
        int device, lanes;

        if (!stage_shown(run, s))
            continue;
        device = has_device(&run->stages[s]);
        lanes = nv + device;
        for (int c = 0; c < lanes; c++) {
            struct lane *l = &ix->lanes[base + c];
            l->stage = s;
            l->chunk = c < nv ? c : 0;
            l->device = c == nv;
            l->spans = run->stages[s].spans;
            l->n_stage = run->stages[s].n;
        }
        for (size_t i = 0; i < run->stages[s].n; i++) {
            const struct pps_span *sp = &run->stages[s].spans[i];
            struct lane *l = &ix->lanes[lane_of(ix, sp, base, nv, device)];
            l->n++;
            l->tracks[sp->kind < PPS_SPAN_KIND_COUNT ? sp->kind : 0].n++;
        }
        for (int c = 0; c < lanes; c++)
            if (alloc_lane(&ix->lanes[base + c]) < 0)
                goto oom;
        fill_stage(ix, run, s, base, nv, device);
        base += lanes;
    }
    *out = ix;
    return rc;
oom:
    pps_tui_index_free(ix);
    return pps_err_set(err, PPS_ENOMEM, "out of memory indexing %zu spans", run->n_spans);
}

/* Appends one span to a track, growing it by half again when full. */
static int track_push(struct track *t, const struct pps_span *sp)
{
    if (t->n == t->cap) {
        size_t cap = t->cap < 16 ? 16 : t->cap + t->cap / 2;
        int64_t *start = realloc(t->start, cap * sizeof(*start));
        int64_t *cum;
        if (!start)
            return PPS_ENOMEM;
        t->start = start;
        if (!(cum = realloc(t->cum, (cap + 1) * sizeof(*cum))))
            return PPS_ENOMEM;
        if (t->cap == 0)
            cum[0] = 0;
        t->cum = cum;
        t->cap = cap;
    }
    t->start[t->n] = sp->start_ns;
    t->cum[t->n + 1] = t->cum[t->n] + max64(0, sp->end_ns - sp->start_ns);
    t->n++;
    return 0;
}

int pps_tui_index_update(struct pps_tui_index **ixp, const struct pps_run *run, int moved,
                         struct pps_err *err)
{
    struct pps_tui_index *ix = *ixp, *fresh = NULL;
    int rc;

    /* Appending is only the common case: one lane per stage, every stage shown, the old spans
     * where they were. */
    if (ix && !moved && !ix->chunked && run->v <= 1 && ix->n_lanes == run->n_stages &&
        stages_shown(run) == run->n_stages) {
        int ok = 1;
        /* A device span (the stage's first, perhaps) needs the stage's device row: rebuilt. */
        for (int s = 0; s < run->n_stages && ok; s++)
            for (size_t i = ix->lanes[s].n_stage; i < run->stages[s].n && ok; i++)
                ok = run->stages[s].spans[i].chunk <= 0 &&
                     !is_device_kind(run->stages[s].spans[i].kind);
        for (int s = 0; s < run->n_stages && ok; s++) {
            struct lane *l = &ix->lanes[s];
            const struct pps_stage_spans *ss = &run->stages[s];
            for (size_t i = l->n_stage; i < ss->n; i++) {
                const struct pps_span *sp = &ss->spans[i];
                if (track_push(&l->tracks[sp->kind < PPS_SPAN_KIND_COUNT ? sp->kind : 0], sp) < 0) {
                    ok = 0; /* half appended: rebuilt below */
                    break;
                }
            }
            l->spans = ss->spans;
            l->n = l->n_stage = ss->n;
        }
        if (ok)
            return 0;
    }
    rc = pps_tui_index_build(run, &fresh, err);
    pps_tui_index_free(ix);
    *ixp = fresh;
    return rc < 0 ? rc : 0;
}

/* The first i >= from with a[i] >= x (a sorted, a[from-1] < x): galloping, then bisection. */
static size_t lower_bound_from(const int64_t *a, size_t n, size_t from, int64_t x)
{
    size_t lo = from, bound = 1, hi;

    while (lo + bound <= n && a[lo + bound - 1] < x) {
        lo += bound;
        bound *= 2;
    }
    hi = lo + bound - 1 < n ? lo + bound - 1 : n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (a[mid] < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static int64_t span_end(const struct track *t, size_t i)
{
    return t->start[i] + (t->cum[i + 1] - t->cum[i]);
}

/* Time t covers in [a, b), given ia and ib, the first spans starting at or after a and b. */
static int64_t track_busy(const struct track *t, int64_t a, int64_t b, size_t ia, size_t ib)
{
    int64_t sum = t->cum[ib] - t->cum[ia];

    for (size_t i = ib; i > ia && i + EDGE_SPANS > ib; i--) {
        int64_t e = span_end(t, i - 1);
        if (e > b)
            sum -= e - max64(b, t->start[i - 1]);
    }
    for (size_t i = ia; i > 0 && i + EDGE_SPANS > ia; i--) {
        int64_t e = span_end(t, i - 1);
        if (e > a)
            sum += min64(e, b) - a;
    }
    return sum > 0 ? sum : 0;
}

int64_t pps_tui_index_busy(const struct pps_tui_index *ix, int lane, int kind, int64_t a, int64_t b)
{
    const struct track *t;
    size_t ia, ib;

    if (!ix || lane < 0 || lane >= ix->n_lanes || kind <= 0 || kind >= PPS_SPAN_KIND_COUNT ||
        b <= a)
        return 0;
    t = &ix->lanes[lane].tracks[kind];
    if (!t->n)
        return 0;
    ia = lower_bound_from(t->start, t->n, 0, a);
    ib = lower_bound_from(t->start, t->n, ia, b);
    return track_busy(t, a, b, ia, ib);
}

/*
 * Which kinds a column shows first: the work (F, B, W, BW, SEND, RECV, OPT, ROLLBACK), then
 * waiting for data, then device spans and named ranges. A column shows the first class that
 * covers any of it: work is never hidden behind the waits around it, nor behind a range that
 * encloses it.
 */
static int class_of(int kind)
{
    if (kind == PPS_SPAN_WAIT)
        return 1;
    return kind >= PPS_SPAN_F && kind <= PPS_SPAN_ROLLBACK ? 0 : 2;
}

/* Column j of n over [t0, t1) starts here (exact in 128 bits, no overflow for any run). */
static int64_t col_edge(int64_t t0, int64_t t1, int j, int n)
{
    return t0 + (int64_t)((__int128)(t1 - t0) * j / n);
}

/* busy[k][j]: time kind k covers in column j; 0 rows for kinds the lane does not have. */
static void column_busy(const struct lane *l, int64_t t0, int64_t t1, int n,
                        int64_t busy[PPS_SPAN_KIND_COUNT][512])
{
    for (int k = 1; k < PPS_SPAN_KIND_COUNT; k++) {
        const struct track *t = &l->tracks[k];
        int64_t a = t0, b;
        size_t ia, ib;

        if (!t->n) {
            memset(busy[k], 0, (size_t)n * sizeof(busy[k][0]));
            continue;
        }
        ia = lower_bound_from(t->start, t->n, 0, a);
        for (int j = 0; j < n; j++, a = b, ia = ib) {
            b = col_edge(t0, t1, j + 1, n);
            ib = lower_bound_from(t->start, t->n, ia, b);
            busy[k][j] = track_busy(t, a, b, ia, ib);
        }
    }
}

void pps_tui_index_columns(const struct pps_tui_index *ix, int lane, int64_t t0, int64_t t1, int n,
                           struct pps_tui_col *out)
{
    int64_t busy[PPS_SPAN_KIND_COUNT][512];

    for (int j = 0; j < n; j++)
        out[j].kind = out[j].cover = 0;
    if (!ix || lane < 0 || lane >= ix->n_lanes || t1 <= t0 || n <= 0)
        return;
    /* Wider screens go in slices of 512 columns: same result, bounded stack. */
    if (n > 512) {
        int64_t mid = col_edge(t0, t1, 512, n);
        pps_tui_index_columns(ix, lane, t0, mid, 512, out);
        pps_tui_index_columns(ix, lane, mid, t1, n - 512, out + 512);
        return;
    }
    column_busy(&ix->lanes[lane], t0, t1, n, busy);
    for (int j = 0; j < n; j++) {
        int64_t w = col_edge(t0, t1, j + 1, n) - col_edge(t0, t1, j, n), sum[3] = {0, 0, 0};
        int64_t best = 0, c;
        int cls;

        for (int k = 1; k < PPS_SPAN_KIND_COUNT; k++)
            sum[class_of(k)] += busy[k][j];
        for (cls = 0; cls < 3 && sum[cls] == 0; cls++)
            ;
        if (cls == 3 || w <= 0)
            continue;
        for (int k = 1; k < PPS_SPAN_KIND_COUNT; k++)
            if (class_of(k) == cls && busy[k][j] > best) {
                best = busy[k][j];
                out[j].kind = (uint8_t)k;
            }
        c = sum[cls] * 255 / w;
        out[j].cover = (uint8_t)(c > 255 ? 255 : c < 1 ? 1 : c);
    }
}

/* The pipeline's own ops (work and waits): picked over device spans and named ranges. */
static int is_op(int kind)
{
    return kind >= PPS_SPAN_F && kind <= PPS_SPAN_ROLLBACK;
}

/* The first position of lane whose span starts at or after t. */
static size_t lane_lower_bound(const struct pps_tui_index *ix, int lane, int64_t t)
{
    size_t lo = 0, hi = ix->lanes[lane].n;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (pps_tui_index_span(ix, lane, mid)->start_ns < t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

void pps_tui_index_visible(const struct pps_tui_index *ix, int lane, int64_t t0, int64_t t1,
                           size_t max, size_t *first, size_t *count)
{
    size_t i, n = 0;

    *first = *count = 0;
    if (!ix || lane < 0 || lane >= ix->n_lanes || t1 <= t0)
        return;
    i = lane_lower_bound(ix, lane, t0);
    for (size_t back = 1; back <= REACH_BACK && back <= i; back++)
        if (pps_tui_index_span(ix, lane, i - back)->end_ns > t0) {
            *first = i - back;
            n = back;
        }
    if (!n)
        *first = i;
    for (i = *first + n; i < ix->lanes[lane].n && n <= max; i++, n++)
        if (pps_tui_index_span(ix, lane, i)->start_ns >= t1)
            break;
    *count = n;
}

const struct pps_span *pps_tui_index_pick(const struct pps_tui_index *ix, int lane, int64_t t,
                                          int64_t tol, size_t *pos)
{
    const struct pps_span *best = NULL;
    int64_t best_d = INT64_MAX;
    int best_op = 0;
    size_t first, count;

    if (tol < 0)
        tol = 0;
    pps_tui_index_visible(ix, lane, t - tol, t + tol + 1, 4096, &first, &count);
    for (size_t i = first; i < first + count && i < pps_tui_index_lane_spans(ix, lane); i++) {
        const struct pps_span *s = pps_tui_index_span(ix, lane, i);
        int64_t d = t < s->start_ns ? s->start_ns - t : t >= s->end_ns ? t - s->end_ns + 1 : 0;
        int op = is_op(s->kind);

        if (d > tol)
            continue;
        /* An op beats a device span or a range; then the nearer, then the shorter. */
        if (!best || op > best_op || (op == best_op && d < best_d) ||
            (op == best_op && d == best_d &&
             s->end_ns - s->start_ns < best->end_ns - best->start_ns)) {
            best = s;
            best_d = d;
            best_op = op;
            if (pos)
                *pos = i;
        }
    }
    return best;
}
