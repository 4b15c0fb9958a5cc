/*
 * report.c - measures a loaded run: the iteration windows, each stage's busy time by kind, idle,
 * wait and the bubble, per iteration and over the run. The costs and the prediction come from
 * predict.c, the verdict from verdict.c, the idle by phase from phase.c.
 *
 * Each stage's spans are swept once per window. Spans are sorted by start, so every kind's
 * union (and the union of all compute kinds) is one running "covered up to" mark: overlapping
 * spans are counted once. The first span that can reach into a window is found by binary search
 * over the running maximum of ends, so a long span that started early is not missed and a run
 * with many iterations is not swept from the beginning for each one.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis_int.h"

struct stage_index {
    const struct pps_span *spans; /* sorted by start, then end */
    size_t n;
    struct pps_span *sorted; /* our copy when the run's spans were out of order, else NULL */
    int64_t *max_end;        /* max_end[i]: the latest end among spans[0..i] */
};

static int span_cmp(const void *a, const void *b)
{
    const struct pps_span *x = a, *y = b;

    if (x->start_ns != y->start_ns)
        return x->start_ns < y->start_ns ? -1 : 1;
    if (x->end_ns != y->end_ns)
        return x->end_ns < y->end_ns ? -1 : 1;
    return 0;
}

static int int32_cmp(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;

    return (x > y) - (x < y);
}

static int64_t max64(int64_t a, int64_t b)
{
    return a > b ? a : b;
}

static int64_t min64(int64_t a, int64_t b)
{
    return a < b ? a : b;
}

/* The storage reader sorts spans; a run built some other way may not, and the sweep needs it. */
static int index_stage(const struct pps_stage_spans *ss, struct stage_index *ix,
                       struct pps_err *err)
{
    int sorted = 1;

    ix->spans = ss->spans;
    ix->n = ss->spans ? ss->n : 0;
    if (ix->n == 0)
        return 0;
    for (size_t i = 1; i < ix->n && sorted; i++)
        sorted = span_cmp(&ix->spans[i - 1], &ix->spans[i]) <= 0;
    if (!sorted) {
        ix->sorted = malloc(ix->n * sizeof(*ix->sorted));
        if (!ix->sorted)
            return pps_err_set(err, PPS_ENOMEM, "out of memory sorting %zu spans", ix->n);
        memcpy(ix->sorted, ix->spans, ix->n * sizeof(*ix->sorted));
        qsort(ix->sorted, ix->n, sizeof(*ix->sorted), span_cmp);
        ix->spans = ix->sorted;
    }
    ix->max_end = malloc(ix->n * sizeof(*ix->max_end));
    if (!ix->max_end)
        return pps_err_set(err, PPS_ENOMEM, "out of memory indexing %zu spans", ix->n);
    for (size_t i = 0; i < ix->n; i++)
        ix->max_end[i] = i ? max64(ix->max_end[i - 1], ix->spans[i].end_ns) : ix->spans[i].end_ns;
    return 0;
}

/* The first span whose end (or an earlier span's) lies after t: nothing before it reaches t. */
static size_t first_reaching(const struct stage_index *ix, int64_t t)
{
    size_t lo = 0, hi = ix->n;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (ix->max_end[mid] > t)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

/* Busy time by kind, compute and idle of one stage inside [t0, t1). */
static void measure_stage(const struct stage_index *ix, int64_t t0, int64_t t1,
                          struct pps_stage_stats *st)
{
    int64_t covered[PPS_SPAN_KIND_COUNT], busy[PPS_SPAN_KIND_COUNT] = {0};
    int64_t covered_compute = t0, compute = 0;
    int64_t window = t1 - t0;

    for (int k = 0; k < PPS_SPAN_KIND_COUNT; k++)
        covered[k] = t0;
    for (size_t i = first_reaching(ix, t0); i < ix->n && ix->spans[i].start_ns < t1; i++) {
        const struct pps_span *s = &ix->spans[i];
        int64_t a = max64(s->start_ns, t0), b = min64(s->end_ns, t1);
        int k = s->kind;

        if (b <= a || k >= PPS_SPAN_KIND_COUNT)
            continue;
        if (b > covered[k]) {
            busy[k] += b - max64(a, covered[k]);
            covered[k] = b;
        }
        if (pps_span_kind_is_compute(k) && b > covered_compute) {
            compute += b - max64(a, covered_compute);
            covered_compute = b;
        }
    }
    for (int k = 0; k < PPS_SPAN_KIND_COUNT; k++)
        st->busy_ns[k] = (double)busy[k];
    st->compute_ns = (double)compute;
    st->idle_ns = (double)(window - compute);
    st->wait_ns = st->busy_ns[PPS_SPAN_WAIT];
    st->idle_frac = window > 0 ? st->idle_ns / (double)window : 0.0;
}

/*
 * Whether a span's kind marks out its iteration's window: the work itself (F, B, W, BW, the
 * optimizer). Waits and receives do not: under post-validation a stage starts waiting for the
 * next iteration's input as soon as it is done with this one, and a window opened by that wait
 * would overlap the previous iteration's. Named ranges and device spans (CUPTI records may
 * arrive late) never stretch a window either; all of them are measured inside the windows.
 */
static int defines_window(int kind)
{
    return pps_span_kind_is_compute(kind);
}

/*
 * The distinct iteration labels of the run's window-defining spans, sorted, into *out (NULL when
 * there are none), and how many spans of any kind carry no iteration.
 */
static int collect_iters(const struct pps_run *run, int32_t **out, int *n_out, size_t *n_no_iter,
                         struct pps_err *err)
{
    int32_t *iters = NULL, lo = 0, hi = 0;
    size_t n = 0, n_distinct = 0, range;
    int ret = 0;

    *out = NULL;
    *n_out = 0;
    *n_no_iter = 0;
    for (int s = 0; s < run->n_stages; s++) {
        for (size_t i = 0; i < run->stages[s].n; i++) {
            const struct pps_span *sp = &run->stages[s].spans[i];
            int counts = sp->iter >= 0 && defines_window(sp->kind);

            if (counts && (n == 0 || sp->iter < lo))
                lo = sp->iter;
            if (counts && (n == 0 || sp->iter > hi))
                hi = sp->iter;
            n += counts;
            *n_no_iter += sp->iter < 0;
        }
    }
    if (n == 0)
        goto out;
    /* Labels are iteration numbers, a few thousand for millions of spans: one mark per label
     * in [lo, hi] lists them in one pass. Labels spread wider than that (a foreign trace's)
     * are sorted. */
    range = (size_t)((int64_t)hi - lo) + 1;
    if (range <= ((size_t)1 << 26) && range <= 8 * n + 4096) {
        unsigned char *seen = calloc(range, 1);

        iters = seen ? malloc((range < n ? range : n) * sizeof(*iters)) : NULL;
        if (!iters) {
            free(seen);
            ret = pps_err_set(err, PPS_ENOMEM, "out of memory listing iterations of %zu spans", n);
            goto out;
        }
        for (int s = 0; s < run->n_stages; s++)
            for (size_t i = 0; i < run->stages[s].n; i++)
                if (run->stages[s].spans[i].iter >= 0 &&
                    defines_window(run->stages[s].spans[i].kind))
                    seen[run->stages[s].spans[i].iter - lo] = 1;
        for (size_t k = 0; k < range; k++)
            if (seen[k])
                iters[n_distinct++] = (int32_t)(lo + (int64_t)k);
        free(seen);
    } else {
        iters = malloc(n * sizeof(*iters));
        if (!iters) {
            ret = pps_err_set(err, PPS_ENOMEM, "out of memory listing iterations of %zu spans", n);
            goto out;
        }
        n = 0;
        for (int s = 0; s < run->n_stages; s++)
            for (size_t i = 0; i < run->stages[s].n; i++)
                if (run->stages[s].spans[i].iter >= 0 &&
                    defines_window(run->stages[s].spans[i].kind))
                    iters[n++] = run->stages[s].spans[i].iter;
        qsort(iters, n, sizeof(*iters), int32_cmp);
        for (size_t i = 0; i < n; i++)
            if (i == 0 || iters[i] != iters[n_distinct - 1])
                iters[n_distinct++] = iters[i];
    }
    *out = iters;
    *n_out = (int)n_distinct;
    iters = NULL;
out:
    free(iters);
    return ret;
}

/* The slot of label iter in iters[0..n) (sorted, distinct), or -1: at once where the labels are
 * contiguous (a ppscope run's 0..n-1), else by binary search. */
static int iter_slot(const int32_t *iters, int n, int32_t iter)
{
    const int32_t *hit;

    if (n <= 0 || !iters)
        return -1;
    if ((int64_t)iters[n - 1] - iters[0] == n - 1)
        return iter >= iters[0] && iter <= iters[n - 1] ? (int)(iter - iters[0]) : -1;
    hit = bsearch(&iter, iters, (size_t)n, sizeof(*iters), int32_cmp);

    return hit ? (int)(hit - iters) : -1;
}

/* Whether a stage recorded device kernels (a GPU run traced with CUPTI, or an import). */
static int has_kernels(const struct pps_stage_spans *ss)
{
    for (size_t i = 0; i < ss->n; i++)
        if (ss->spans[i].kind == PPS_SPAN_KERNEL)
            return 1;
    return 0;
}

/* Windows and op counts from the labelled spans, then each stage's sweep of each window. */
static void measure_iters(const struct pps_run *run, const struct stage_index *ix,
                          const int32_t *labels, struct pps_report *rep)
{
    for (int it = 0; it < rep->n_iters; it++) {
        rep->iters[it].t0 = INT64_MAX;
        rep->iters[it].t1 = INT64_MIN;
    }
    for (int s = 0; s < rep->n_stages; s++) {
        for (size_t i = 0; i < run->stages[s].n; i++) {
            const struct pps_span *sp = &run->stages[s].spans[i];
            int it = sp->iter >= 0 ? iter_slot(labels, rep->n_iters, sp->iter) : -1;

            if (it < 0)
                continue;
            if (defines_window(sp->kind)) {
                rep->iters[it].t0 = min64(rep->iters[it].t0, sp->start_ns);
                rep->iters[it].t1 = max64(rep->iters[it].t1, max64(sp->start_ns, sp->end_ns));
            }
            if (sp->kind < PPS_SPAN_KIND_COUNT)
                rep->iters[it].stages[s].n_ops[sp->kind]++;
        }
    }
    /* Which stages ran kernels, found once: per iteration it would cost a scan of every span. */
    unsigned char *dev = calloc(rep->n_stages > 0 ? (size_t)rep->n_stages : 1, 1);
    rep->n_device_stages = 0;
    for (int s = 0; s < rep->n_stages; s++) {
        if (dev)
            dev[s] = rep->total[s].present && has_kernels(&run->stages[s]);
        rep->n_device_stages +=
            dev ? dev[s] : rep->total[s].present && has_kernels(&run->stages[s]);
    }
    for (int it = 0; it < rep->n_iters; it++) {
        struct pps_iter_stats *is = &rep->iters[it];
        double idle = 0, device_idle = 0;

        is->window_ns = (double)(is->t1 - is->t0);
        for (int s = 0; s < rep->n_stages; s++) {
            size_t from = first_reaching(&ix[s], is->t0);

            measure_stage(&ix[s], is->t0, is->t1, &is->stages[s]);
            pps_analysis_phase_split(ix[s].n ? ix[s].spans + from : NULL, ix[s].n - from, is->iter,
                                     is->t0, is->t1, is->stages[s].phase_idle_ns);
            is->stages[s].present = rep->total[s].present;
            if (is->stages[s].present)
                idle += is->stages[s].idle_ns;
            if (is->stages[s].present && (dev ? dev[s] : has_kernels(&run->stages[s])))
                device_idle += is->window_ns - is->stages[s].busy_ns[PPS_SPAN_KERNEL];
        }
        is->bubble =
            is->window_ns > 0 && rep->n_present ? idle / (rep->n_present * is->window_ns) : 0.0;
        is->device_bubble = !rep->n_device_stages ? NAN
                            : is->window_ns > 0
                                ? device_idle / (rep->n_device_stages * is->window_ns)
                                : 0.0;
    }
    free(dev);
}

/* The forwards one iteration of the run's schedule runs: one per microbatch and virtual stage
 * (p * v * m), whether its backwards are fused or split; -1 when p, m are not known. */
static long expected_forwards(const struct pps_report *rep)
{
    if (rep->p < 1 || rep->m < 1 || (rep->sched_kind < 0 && !rep->observed.actions))
        return -1;
    return (long)rep->p * rep->v * rep->m;
}

static long iter_forwards(const struct pps_report *rep, const struct pps_iter_stats *is)
{
    long n = 0;

    for (int s = 0; s < rep->n_stages; s++)
        n += is->stages[s].n_ops[PPS_SPAN_F];
    return n;
}

/*
 * Marks the iterations a run stopped in. With its schedule known (and some iteration running it
 * whole), an iteration with fewer forwards than the schedule runs (a pass that post-validation
 * runs again holds more, not fewer; fused and split backwards hold the same forwards).
 * Without it, only where it shows: the last iteration of a run not closed, with fewer ops than
 * the one before.
 */
static void mark_partial(struct pps_report *rep)
{
    long want = expected_forwards(rep);
    int whole = 0;

    /* A schedule no iteration runs in full is not the one the run ran (a trace that names it
     * wrongly): it says nothing about which iterations are partial. */
    for (int it = 0; it < rep->n_iters && want > 0 && !whole; it++)
        whole = iter_forwards(rep, &rep->iters[it]) >= want;
    if (!whole)
        want = -1;
    rep->n_full = rep->n_iters;
    for (int it = 0; it < rep->n_iters; it++) {
        struct pps_iter_stats *is = &rep->iters[it];

        if (want > 0)
            is->partial = iter_forwards(rep, is) < want;
        else
            is->partial = !rep->complete && it == rep->n_iters - 1 && it > 0 &&
                          iter_forwards(rep, is) < iter_forwards(rep, &rep->iters[it - 1]);
        rep->n_full -= is->partial;
    }
}

/* A sample's standard deviation, one value at a time (Welford's update). */
struct spread {
    int k;
    double mean, m2;
};

static void spread_add(struct spread *s, double x)
{
    double d = x - s->mean;

    s->k++;
    s->mean += d / s->k;
    s->m2 += d * (x - s->mean);
}

/* NaN with fewer than two values. */
static double spread_sd(const struct spread *s)
{
    return s->k >= 2 ? sqrt(s->m2 / (s->k - 1)) : NAN;
}

/*
 * The steady state, as the simulator defines it: iterations 1..N-1 back to back take
 * end(N-1) - end(0), where end(i) is the last end of a compute span of iteration i; the stages
 * are busy for their compute spans of those iterations; the bubble is 1 - busy / (stages * that
 * time). Unlike the mean of the iterations' bubbles, this counts each idle moment once when
 * iterations overlap (post-validation). NaN with fewer than two iterations.
 */
static int steady_state(const struct pps_run *run, const int32_t *labels, struct pps_report *rep,
                        struct pps_err *err)
{
    int n = rep->n_iters;
    int64_t *end = NULL;
    double *busy = NULL, sum = 0, elapsed;

    rep->steady_bubble = NAN;
    rep->steady_period_ns = NAN;
    rep->steady_spread = NAN;
    if (n < 2 || rep->n_present < 1)
        return 0;
    end = malloc((size_t)n * sizeof(*end));
    busy = calloc((size_t)n, sizeof(*busy));
    if (!end || !busy) {
        free(end);
        free(busy);
        return pps_err_set(err, PPS_ENOMEM, "out of memory for the steady state");
    }
    for (int it = 0; it < n; it++)
        end[it] = INT64_MIN;
    for (int s = 0; s < rep->n_stages; s++) {
        if (!rep->total[s].present)
            continue;
        for (size_t i = 0; i < run->stages[s].n; i++) {
            const struct pps_span *sp = &run->stages[s].spans[i];
            int it = sp->iter >= 0 && pps_span_kind_is_compute(sp->kind)
                         ? iter_slot(labels, n, sp->iter)
                         : -1;
            if (it < 0 || rep->iters[it].partial)
                continue;
            end[it] = max64(end[it], sp->end_ns);
            busy[it] += (double)(sp->end_ns - sp->start_ns);
        }
    }
    /* Partial iterations (a run that stopped in them) end the range: the steady state is the
     * whole iterations from the first up to the first partial one. */
    for (int it = 0; it < n; it++)
        if (rep->iters[it].partial) {
            n = it;
            break;
        }
    if (n >= 2 && end[0] != INT64_MIN && end[n - 1] > end[0]) {
        struct spread spr = {0, 0, 0};

        for (int it = 1; it < n; it++)
            sum += busy[it];
        elapsed = (double)(end[n - 1] - end[0]);
        rep->steady_period_ns = elapsed / (n - 1);
        rep->steady_bubble = 1 - sum / (rep->n_present * elapsed);
        /* The same figure per iteration, for its spread: iteration i's busy time over the time
         * from the previous iteration's end to its own. */
        for (int it = 1; it < n; it++)
            if (end[it] > end[it - 1])
                spread_add(&spr, 1 - busy[it] / (rep->n_present * (double)(end[it] - end[it - 1])));
        rep->steady_spread = spread_sd(&spr);
    }
    free(end);
    free(busy);
    return 0;
}

/* Adds b's measured times into a. */
static void add_stats(struct pps_stage_stats *a, const struct pps_stage_stats *b)
{
    for (int k = 0; k < PPS_SPAN_KIND_COUNT; k++)
        a->busy_ns[k] += b->busy_ns[k];
    a->compute_ns += b->compute_ns;
    a->idle_ns += b->idle_ns;
    a->wait_ns += b->wait_ns;
}

/*
 * Per-stage totals over the union of the iterations' windows: windows that overlap
 * (post-validation) are merged first, so their common time counts once; time between windows
 * counts for none. The run's bubble is the mean of the iterations'.
 */
static void sum_iters(const struct stage_index *ix, struct pps_report *rep)
{
    double bubble_sum = 0, device_sum = 0;
    int n_windows = 0;
    int64_t u0 = 0, u1 = 0;

    for (int it = 0; it < rep->n_iters; it++) {
        const struct pps_iter_stats *is = &rep->iters[it];

        if (is->partial)
            continue;
        for (int s = 0; s < rep->n_stages; s++)
            for (int k = 0; k < PPS_SPAN_KIND_COUNT; k++)
                rep->total[s].n_ops[k] += is->stages[s].n_ops[k];
        if (!(is->window_ns > 0))
            continue;
        bubble_sum += is->bubble;
        device_sum += is->device_bubble;
        /* Windows come in iteration order, which is time order up to overlaps. */
        if (n_windows++ == 0 || is->t0 > u1) {
            if (n_windows > 1)
                for (int s = 0; s < rep->n_stages; s++) {
                    struct pps_stage_stats x = {0};
                    measure_stage(&ix[s], u0, u1, &x);
                    add_stats(&rep->total[s], &x);
                }
            if (n_windows > 1)
                rep->total_window_ns += (double)(u1 - u0);
            u0 = is->t0;
            u1 = is->t1;
        } else {
            u0 = min64(u0, is->t0);
            u1 = max64(u1, is->t1);
        }
    }
    if (n_windows) {
        for (int s = 0; s < rep->n_stages; s++) {
            struct pps_stage_stats x = {0};
            measure_stage(&ix[s], u0, u1, &x);
            add_stats(&rep->total[s], &x);
        }
        rep->total_window_ns += (double)(u1 - u0);
    }
    for (int s = 0; s < rep->n_stages; s++)
        rep->total[s].idle_frac =
            rep->total_window_ns > 0 ? rep->total[s].idle_ns / rep->total_window_ns : 0.0;
    rep->bubble = n_windows ? bubble_sum / n_windows : NAN;
    rep->device_bubble = n_windows && rep->n_device_stages ? device_sum / n_windows : NAN;
    rep->bubble_spread = NAN;
    /* The spread of the iterations after the first: the first warms up (allocation, caches,
     * threads starting), which is no measure of how alike the others are. */
    {
        struct spread spr = {0, 0, 0};
        int first = n_windows >= 3;

        for (int it = 0, w = 0; it < rep->n_iters; it++)
            if (!rep->iters[it].partial && rep->iters[it].window_ns > 0 && w++ >= first)
                spread_add(&spr, rep->iters[it].bubble);
        rep->bubble_spread = spread_sd(&spr);
    }
}

/* Whether rank r is among the n missing ranks (ascending). */
static int is_missing(const int *missing, int n, int r)
{
    for (int i = 0; i < n && missing[i] <= r; i++)
        if (missing[i] == r)
            return 1;
    return 0;
}

/*
 * The stages the run has: with p known, 0..p-1 (a stage that recorded nothing in a run of p
 * stages idled), and any other that recorded spans; without p, only those that recorded spans
 * (a process that traced stage 1 alone has one stage, not two). A stage with no spans whose
 * rank's shard is missing from the run (a stage per rank) is not there: its idle time is not
 * known, and the figures are the other stages'.
 */
static int mark_present(const struct pps_run *run, struct pps_report *rep, struct pps_err *err)
{
    int n_missing = pps_run_missing_ranks(run, NULL, 0), *missing = NULL;

    if (n_missing > 0) {
        if (!(missing = malloc((size_t)n_missing * sizeof(*missing))))
            return pps_err_set(err, PPS_ENOMEM, "out of memory for the missing ranks");
        pps_run_missing_ranks(run, missing, n_missing);
    }
    rep->n_present = 0;
    for (int s = 0; s < rep->n_stages; s++) {
        rep->total[s].present = (rep->p > 0 && s < rep->p) || run->stages[s].n > 0;
        if (run->stages[s].n == 0 && is_missing(missing, n_missing, s))
            rep->total[s].present = 0;
        rep->n_present += rep->total[s].present;
    }
    free(missing);
    return 0;
}

struct window {
    int64_t t0, reach; /* a window's start; the latest end of it and every window before it */
};

static int window_cmp(const void *a, const void *b)
{
    const struct window *x = a, *y = b;

    return (x->t0 > y->t0) - (x->t0 < y->t0);
}

/* Spans that no window reaches: no figure counts them. With the windows sorted by start and
 * their running latest end, a span [a, b) meets some window exactly when the last window that
 * starts before b reaches past a. An instant (a == b) lies in a window that starts at or before
 * it and reaches it: a zero-length optimizer step at the end of an iteration is that iteration's
 * last op and defines the window's end, so it lies at the end, not outside. */
static void count_outside(const struct pps_run *run, struct pps_report *rep)
{
    struct window *w;

    rep->n_outside = 0;
    if (rep->n_iters == 0) {
        rep->n_outside = run->n_spans;
        return;
    }
    w = malloc((size_t)rep->n_iters * sizeof(*w));
    if (!w)
        return; /* a count that cannot be made is not printed: 0 */
    for (int it = 0; it < rep->n_iters; it++) {
        w[it].t0 = rep->iters[it].t0;
        w[it].reach = rep->iters[it].t1;
    }
    qsort(w, (size_t)rep->n_iters, sizeof(*w), window_cmp);
    for (int it = 1; it < rep->n_iters; it++)
        w[it].reach = max64(w[it].reach, w[it - 1].reach);
    for (int s = 0; s < run->n_stages; s++)
        for (size_t i = 0; i < run->stages[s].n; i++) {
            const struct pps_span *sp = &run->stages[s].spans[i];
            int64_t b = max64(sp->end_ns, sp->start_ns + 1); /* an instant still lies somewhere */
            int lo = 0, hi = rep->n_iters;

            while (lo < hi) {
                int mid = lo + (hi - lo) / 2;
                if (w[mid].t0 < b)
                    lo = mid + 1;
                else
                    hi = mid;
            }
            if (lo == 0 || w[lo - 1].reach < sp->start_ns + (sp->end_ns > sp->start_ns))
                rep->n_outside++;
        }
    free(w);
}

/*
 * The per-op overhead of each stage (ovh_ns): between two of its ops (F, B, W, BW) of whole
 * iterations (one, or the next), the time that is neither an op, a WAIT nor an optimizer step,
 * over its ops (times v, as the costs are). A run that records no wait at all says nothing about
 * which of its idle time is waiting (an imported trace): none is taken as overhead there. The
 * time before a stage's first op is not overhead: it waits for its neighbours.
 */
static int measure_overhead(const struct stage_index *ix, const int32_t *labels,
                            struct pps_report *rep, struct pps_err *err)
{
    rep->have_ovh = 0;
    rep->ovh_ns = calloc(rep->n_stages ? (size_t)rep->n_stages : 1, sizeof(double));
    if (!rep->ovh_ns)
        return pps_err_set(err, PPS_ENOMEM, "out of memory for the stages' overhead");
    for (int s = 0; s < rep->n_stages; s++)
        rep->have_ovh |= rep->total[s].n_ops[PPS_SPAN_WAIT] > 0;
    for (int s = 0; s < rep->n_stages && rep->have_ovh; s++) {
        const struct stage_index *x = &ix[s];
        int64_t last_end = INT64_MIN, waited = 0, waited_to = INT64_MIN;
        int32_t last_iter = -1;
        double free_ns = 0;
        long n_ops = 0;

        for (size_t i = 0; i < x->n; i++) {
            const struct pps_span *sp = &x->spans[i];
            int k = sp->kind, it;

            if ((k == PPS_SPAN_WAIT || k == PPS_SPAN_OPT || k == PPS_SPAN_ROLLBACK) &&
                last_end != INT64_MIN) {
                /* The part of a wait (or of an optimizer step, which the prediction has) after
                 * the last op, counted once where they overlap. */
                int64_t a = max64(sp->start_ns, max64(last_end, waited_to));
                if (sp->end_ns > a)
                    waited += sp->end_ns - a;
                waited_to = max64(waited_to, sp->end_ns);
                continue;
            }
            if (k != PPS_SPAN_F && k != PPS_SPAN_B && k != PPS_SPAN_W && k != PPS_SPAN_BW)
                continue;
            it = sp->iter >= 0 ? iter_slot(labels, rep->n_iters, sp->iter) : -1;
            /* Between two ops of one iteration, or from an iteration's last op to the next
             * one's first (back to back, that gap is on the stage's path as much). */
            if (it >= 0 && !rep->iters[it].partial && last_iter >= 0 &&
                (sp->iter == last_iter || sp->iter == last_iter + 1) && sp->start_ns > last_end) {
                int64_t gap = sp->start_ns - last_end;
                int64_t w = waited < gap ? waited : gap;
                free_ns += (double)(gap - w);
            }
            if (it >= 0 && !rep->iters[it].partial)
                n_ops++;
            last_end = max64(last_end == INT64_MIN ? sp->end_ns : last_end, sp->end_ns);
            last_iter = sp->iter;
            waited = 0;
            waited_to = last_end;
        }
        rep->ovh_ns[s] = n_ops > 0 ? free_ns / (double)n_ops * rep->v : 0;
    }
    return 0;
}

void pps__analysis_unknown(struct pps_report *rep)
{
    rep->bubble = NAN;
    rep->device_bubble = NAN;
    rep->bubble_spread = NAN;
    for (int k = 0; k < PPS_PHASE_COUNT; k++)
        rep->phase_bubble[k] = NAN;
    rep->steady_bubble = NAN;
    rep->steady_period_ns = NAN;
    rep->steady_spread = NAN;
    rep->iter_ns = NAN;
    rep->pred_iter_ns = rep->pred_steady_bubble = NAN;
    rep->pred_balanced = rep->pred_links = rep->pred_nocomm = rep->pred_noovh = NAN;
    rep->judged_measured = rep->judged_predicted = rep->judged_spread = rep->tolerance = NAN;
    rep->host.contention = rep->host.worst = NAN;
    rep->host.worst_stage = -1;
    rep->op_cv = NAN;
    rep->op_cv_stage = rep->op_cv_kind = -1;
    rep->bubble_quoted = NAN;
    rep->bubble_exact = NAN;
    rep->observed = (struct pps_schedule)PPS_SCHEDULE_INIT;
}

/* The run's parameters, the theory, and the arrays the measurement fills. */
static int report_init(const struct pps_run *run, int n_iters, const int32_t *labels,
                       struct pps_report *rep, struct pps_err *err)
{
    rep->p = run->p > 0 ? run->p : 0;
    rep->m = run->m > 0 ? run->m : 0;
    rep->v = run->v > 0 ? run->v : 1;
    rep->sched_kind = run->schedule ? pps_sched_kind_parse(run->schedule) : -1;
    rep->complete = run->complete;
    /* Each row's count fits int64, their sum need not: it stops at INT64_MAX ("at least"). */
    for (size_t i = 0; i < run->n_metrics; i++)
        if (run->metrics[i].dropped > 0 &&
            __builtin_add_overflow(rep->dropped, run->metrics[i].dropped, &rep->dropped))
            rep->dropped = INT64_MAX;
    pps__analysis_unknown(rep);
    {
        const char *opt = pps_run_meta(run, "optimizer");
        rep->postval = opt && !strcmp(opt, "postval");
    }

    rep->n_stages = run->n_stages > 0 ? run->n_stages : 0;
    rep->total = calloc(rep->n_stages ? (size_t)rep->n_stages : 1, sizeof(*rep->total));
    rep->iters = calloc(n_iters ? (size_t)n_iters : 1, sizeof(*rep->iters));
    if (!rep->total || !rep->iters)
        return pps_err_set(err, PPS_ENOMEM, "out of memory for the report");
    for (int s = 0; s < rep->n_stages; s++)
        rep->total[s].stage = s;
    for (int it = 0; it < n_iters; it++) {
        struct pps_iter_stats *is = &rep->iters[it];

        is->iter = labels[it];
        is->n_stages = rep->n_stages;
        is->stages = calloc(rep->n_stages ? (size_t)rep->n_stages : 1, sizeof(*is->stages));
        if (!is->stages)
            return pps_err_set(err, PPS_ENOMEM, "out of memory for %d iterations", n_iters);
        rep->n_iters = it + 1;
        for (int s = 0; s < rep->n_stages; s++)
            is->stages[s].stage = s;
    }
    return 0;
}

/*
 * The iterations the run planned (meta iters, written by `ppscope run`) that left no span at
 * all: a run that stopped early, or whose tracer could not write them (a full disk), says which
 * are missing even when nothing in its shards counts them. A meta iters that is not a count
 * says nothing (planned 0).
 */
static void count_missing(const struct pps_run *run, struct pps_report *rep)
{
    const char *s = pps_run_meta(run, "iters");
    char *end;
    long planned;
    int at = 0;

    rep->planned_iters = 0;
    rep->n_missing = 0;
    rep->missing_first = rep->missing_last = -1;
    if (!s || *s < '0' || *s > '9')
        return;
    planned = strtol(s, &end, 10);
    if (*end || planned < 1 || planned > INT32_MAX)
        return;
    rep->planned_iters = (int)planned;
    /* Iterations from end_iter on are not in memory (a view paged back): none is missing. */
    if (run->end_iter > 0 && run->end_iter < planned)
        planned = run->end_iter;
    /* The labels are sorted and distinct: the gaps between them in 0..planned-1, in the time of
     * the labels, not of the plan (a plan of 2^31 - 1 iterations is no reason to wait). */
    for (int next = run->first_iter > 0 ? run->first_iter : 0;; at++) {
        int upto = at < rep->n_iters && rep->iters[at].iter < planned
                       ? rep->iters[at].iter
                       : (int)planned; /* the gap before this label, or the plan's tail */
        if (upto > next) {
            if (rep->missing_first < 0)
                rep->missing_first = next;
            rep->missing_last = upto - 1;
            rep->n_missing += upto - next;
        }
        if (upto == planned)
            break;
        if (rep->iters[at].iter >= next)
            next = rep->iters[at].iter + 1;
    }
}

int pps__analysis_derive(const struct pps_run *run, struct pps_report *rep, struct pps_err *err)
{
    int ret = pps__analysis_host(run, rep, err);

    if (ret == 0)
        ret = pps__analysis_predict(run, rep, err);
    if (ret == 0)
        pps__analysis_judge(rep);
    return ret;
}

int pps_analysis_report(const struct pps_run *given, struct pps_report **out, struct pps_err *err)
{
    const struct pps_run *run = given;
    struct pps_run *labelled = NULL;
    struct pps_report *rep = NULL;
    struct stage_index *ix = NULL;
    int32_t *labels = NULL;
    int n_labels = 0, n_ix = 0;
    int ret = 0;

    if (out)
        *out = NULL;
    if (!run || !out) {
        ret = pps_err_set(err, PPS_EINVAL, "no run to analyse");
        goto out;
    }
    rep = calloc(1, sizeof(*rep));
    if (!rep) {
        ret = pps_err_set(err, PPS_ENOMEM, "out of memory for the report");
        goto out;
    }
    /* A run whose spans carry no iteration is measured by the iterations its order shows. */
    ret = pps__analysis_infer_iters(given, &labelled, err);
    if (ret < 0)
        goto out;
    if (labelled) {
        run = labelled;
        rep->inferred |= PPS_INFERRED_ITERS;
    }
    ret = collect_iters(run, &labels, &n_labels, &rep->n_no_iter, err);
    if (ret < 0)
        goto out;
    ret = report_init(run, n_labels, labels, rep, err);
    if (ret < 0)
        goto out;
    count_missing(run, rep);

    ix = calloc(rep->n_stages ? (size_t)rep->n_stages : 1, sizeof(*ix));
    if (!ix) {
        ret = pps_err_set(err, PPS_ENOMEM, "out of memory indexing %d stages", rep->n_stages);
        goto out;
    }
    for (n_ix = 0; n_ix < rep->n_stages; n_ix++) {
        ret = index_stage(&run->stages[n_ix], &ix[n_ix], err);
        if (ret < 0) {
            n_ix++;
            goto out;
        }
    }
    if ((ret = mark_present(run, rep, err)) < 0)
        goto out;
    pps__analysis_infer_shape(run, rep);
    ret = pps__analysis_infer_schedule(run, rep, err);
    if (ret < 0)
        goto out;
    if (rep->p >= 1 && rep->m >= 1) {
        rep->bubble_quoted = pps_bubble_quoted(rep->p, rep->m);
        rep->bubble_exact = pps_bubble_exact(rep->p, rep->m, pps_report_theory_v(rep));
    }
    measure_iters(run, ix, labels, rep);
    mark_partial(rep);
    sum_iters(ix, rep);
    pps__analysis_phase_totals(rep);
    count_outside(run, rep);
    ret = steady_state(run, labels, rep, err);
    if (ret < 0)
        goto out;
    /* Post-validated iterations overlap: they are judged as they ran, back to back. */
    rep->basis =
        rep->postval && !isnan(rep->steady_bubble) ? PPS_BASIS_STEADY : PPS_BASIS_ITERATION;
    rep->iter_ns = NAN;
    if (!isnan(rep->steady_period_ns))
        rep->iter_ns = rep->steady_period_ns;
    else
        for (int it = 0; it < rep->n_iters && isnan(rep->iter_ns); it++)
            if (!rep->iters[it].partial)
                rep->iter_ns = rep->iters[it].window_ns;

    ret = measure_overhead(ix, labels, rep, err);
    if (ret == 0)
        ret = pps__analysis_costs(run, rep, err);
    if (ret == 0)
        ret = pps__analysis_links(run, rep, err);
    if (ret == 0)
        ret = pps__analysis_peers(run, rep, err);
    if (ret == 0)
        ret = pps__analysis_derive(run, rep, err);
    if (ret < 0)
        goto out;
    *out = rep;
    rep = NULL;
out:
    for (int s = 0; s < n_ix; s++) {
        free(ix[s].sorted);
        free(ix[s].max_end);
    }
    free(ix);
    free(labels);
    pps__analysis_free_copy(labelled);
    pps_report_free(rep);
    return ret;
}

void pps_report_free(struct pps_report *rep)
{
    if (!rep)
        return;
    for (int it = 0; it < rep->n_iters; it++)
        free(rep->iters[it].stages);
    free(rep->iters);
    free(rep->total);
    free(rep->tf_ns);
    free(rep->tb_ns);
    free(rep->tw_ns);
    free(rep->ovh_ns);
    free(rep->links);
    free(rep->host.share);
    free(rep->stage_spans);
    free(rep->wait_peer);
    free(rep->recv_peer);
    pps_sim_result_release(&rep->pred);
    pps_sim_result_release(&rep->pred_comm);
    pps_schedule_release(&rep->observed);
    free(rep);
}
