/*
 * report.c - measures a loaded run: the iteration windows, each stage's busy time by kind, idle,
 * wait and the bubble, per iteration and over the run. The costs and the prediction come from
 * predict.c, the verdict from verdict.c.
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
    int32_t *iters = NULL;
    size_t n = 0, n_distinct = 0;
    int ret = 0;

    *out = NULL;
    *n_out = 0;
    *n_no_iter = 0;
    for (int s = 0; s < run->n_stages; s++) {
        for (size_t i = 0; i < run->stages[s].n; i++) {
            n += run->stages[s].spans[i].iter >= 0 && defines_window(run->stages[s].spans[i].kind);
            *n_no_iter += run->stages[s].spans[i].iter < 0;
        }
    }
    if (n == 0)
        goto out;
    iters = malloc(n * sizeof(*iters));
    if (!iters) {
        ret = pps_err_set(err, PPS_ENOMEM, "out of memory listing iterations of %zu spans", n);
        goto out;
    }
    n = 0;
    for (int s = 0; s < run->n_stages; s++)
        for (size_t i = 0; i < run->stages[s].n; i++)
            if (run->stages[s].spans[i].iter >= 0 && defines_window(run->stages[s].spans[i].kind))
                iters[n++] = run->stages[s].spans[i].iter;
    qsort(iters, n, sizeof(*iters), int32_cmp);
    for (size_t i = 0; i < n; i++)
        if (i == 0 || iters[i] != iters[n_distinct - 1])
            iters[n_distinct++] = iters[i];
    *out = iters;
    *n_out = (int)n_distinct;
    iters = NULL;
out:
    free(iters);
    return ret;
}

static int iter_slot(const int32_t *iters, int n, int32_t iter)
{
    const int32_t *hit = bsearch(&iter, iters, (size_t)n, sizeof(*iters), int32_cmp);

    return hit ? (int)(hit - iters) : -1;
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
    for (int it = 0; it < rep->n_iters; it++) {
        struct pps_iter_stats *is = &rep->iters[it];
        double idle = 0;

        is->window_ns = (double)(is->t1 - is->t0);
        for (int s = 0; s < rep->n_stages; s++) {
            measure_stage(&ix[s], is->t0, is->t1, &is->stages[s]);
            is->stages[s].present = rep->total[s].present;
            if (is->stages[s].present)
                idle += is->stages[s].idle_ns;
        }
        is->bubble =
            is->window_ns > 0 && rep->n_present ? idle / (rep->n_present * is->window_ns) : 0.0;
    }
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
            if (it < 0)
                continue;
            end[it] = max64(end[it], sp->end_ns);
            busy[it] += (double)(sp->end_ns - sp->start_ns);
        }
    }
    if (end[0] != INT64_MIN && end[n - 1] > end[0]) {
        double mean, var = 0;
        int k = 0;

        for (int it = 1; it < n; it++)
            sum += busy[it];
        elapsed = (double)(end[n - 1] - end[0]);
        rep->steady_period_ns = elapsed / (n - 1);
        rep->steady_bubble = 1 - sum / (rep->n_present * elapsed);
        /* The same figure per iteration, for its spread: iteration i's busy time over the time
         * from the previous iteration's end to its own. */
        mean = 0;
        for (int it = 1; it < n; it++)
            if (end[it] > end[it - 1]) {
                busy[it] = 1 - busy[it] / (rep->n_present * (double)(end[it] - end[it - 1]));
                mean += busy[it];
                k++;
            } else {
                busy[it] = NAN;
            }
        if (k >= 2) {
            mean /= k;
            for (int it = 1; it < n; it++)
                if (!isnan(busy[it]))
                    var += (busy[it] - mean) * (busy[it] - mean);
            rep->steady_spread = sqrt(var / (k - 1));
        }
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
    double bubble_sum = 0;
    int n_windows = 0;
    int64_t u0 = 0, u1 = 0;

    for (int it = 0; it < rep->n_iters; it++) {
        const struct pps_iter_stats *is = &rep->iters[it];

        for (int s = 0; s < rep->n_stages; s++)
            for (int k = 0; k < PPS_SPAN_KIND_COUNT; k++)
                rep->total[s].n_ops[k] += is->stages[s].n_ops[k];
        if (!(is->window_ns > 0))
            continue;
        bubble_sum += is->bubble;
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
    rep->bubble_spread = NAN;
    if (n_windows >= 2) {
        double var = 0;
        for (int it = 0; it < rep->n_iters; it++)
            if (rep->iters[it].window_ns > 0)
                var += (rep->iters[it].bubble - rep->bubble) * (rep->iters[it].bubble - rep->bubble);
        rep->bubble_spread = sqrt(var / (n_windows - 1));
    }
}

/*
 * The stages the run has: with p known, 0..p-1 (a stage that recorded nothing in a run of p
 * stages idled), and any other that recorded spans; without p, only those that recorded spans
 * (a process that traced stage 1 alone has one stage, not two).
 */
static void mark_present(const struct pps_run *run, struct pps_report *rep)
{
    rep->n_present = 0;
    for (int s = 0; s < rep->n_stages; s++) {
        rep->total[s].present = (rep->p > 0 && s < rep->p) || run->stages[s].n > 0;
        rep->n_present += rep->total[s].present;
    }
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
 * starts before b reaches past a. */
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
            if (lo == 0 || w[lo - 1].reach <= sp->start_ns)
                rep->n_outside++;
        }
    free(w);
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
    for (size_t i = 0; i < run->n_metrics; i++)
        if (run->metrics[i].dropped > 0)
            rep->dropped += run->metrics[i].dropped;
    rep->bubble = NAN;
    rep->bubble_spread = NAN;
    rep->steady_bubble = NAN;
    rep->steady_period_ns = NAN;
    rep->steady_spread = NAN;
    rep->iter_ns = NAN;
    rep->pred_iter_ns = rep->pred_steady_bubble = NAN;
    rep->pred_balanced = rep->pred_links = rep->pred_nocomm = NAN;
    rep->judged_measured = rep->judged_predicted = rep->judged_spread = rep->tolerance = NAN;
    rep->host.contention = rep->host.worst = NAN;
    rep->host.worst_stage = -1;
    rep->op_cv = NAN;
    rep->op_cv_stage = rep->op_cv_kind = -1;
    {
        const char *opt = pps_run_meta(run, "optimizer");
        rep->postval = opt && !strcmp(opt, "postval");
    }
    rep->bubble_quoted = NAN;
    rep->bubble_exact = NAN;
    if (rep->p >= 1 && rep->m >= 1) {
        rep->bubble_quoted = pps_bubble_quoted(rep->p, rep->m);
        rep->bubble_exact = pps_bubble_exact(rep->p, rep->m, rep->v);
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

int pps_analysis_report(const struct pps_run *run, struct pps_report **out, struct pps_err *err)
{
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
    ret = collect_iters(run, &labels, &n_labels, &rep->n_no_iter, err);
    if (ret < 0)
        goto out;
    ret = report_init(run, n_labels, labels, rep, err);
    if (ret < 0)
        goto out;

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
    mark_present(run, rep);
    measure_iters(run, ix, labels, rep);
    sum_iters(ix, rep);
    count_outside(run, rep);
    ret = steady_state(run, labels, rep, err);
    if (ret < 0)
        goto out;
    /* Post-validated iterations overlap: they are judged as they ran, back to back. */
    rep->basis = rep->postval && !isnan(rep->steady_bubble) ? PPS_BASIS_STEADY : PPS_BASIS_ITERATION;
    rep->iter_ns = !isnan(rep->steady_period_ns) ? rep->steady_period_ns
                   : rep->n_iters == 1          ? rep->iters[0].window_ns
                                                : NAN;

    ret = pps__analysis_costs(run, rep, err);
    if (ret == 0)
        ret = pps__analysis_links(run, rep, err);
    if (ret == 0)
        ret = pps__analysis_host(run, rep, err);
    if (ret == 0)
        ret = pps__analysis_predict(run, rep, err);
    if (ret < 0)
        goto out;
    pps__analysis_judge(rep);
    *out = rep;
    rep = NULL;
out:
    for (int s = 0; s < n_ix; s++) {
        free(ix[s].sorted);
        free(ix[s].max_end);
    }
    free(ix);
    free(labels);
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
    free(rep->links);
    pps_sim_result_release(&rep->pred);
    pps_sim_result_release(&rep->pred_comm);
    free(rep);
}
