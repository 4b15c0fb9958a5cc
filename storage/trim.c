/*
 * trim.c - the newest iterations of a run kept, the older dropped from memory (storage.h:
 * pps_run_drop_before(), pps_run_keep_iter()): what bounds a view of a run of days.
 */
#include <stdint.h>
#include <stdlib.h>

#include "storage_int.h"

/* The first start of a compute span labelled iter or later, over every stage; INT64_MAX: none. */
static int64_t first_start_from(const struct pps_run *run, int iter)
{
    int64_t t = INT64_MAX;

    for (int s = 0; s < run->n_stages; s++)
        for (size_t i = 0; i < run->stages[s].n; i++) {
            const struct pps_span *sp = &run->stages[s].spans[i];
            if (sp->iter >= iter && pps_span_kind_is_compute(sp->kind)) {
                if (sp->start_ns < t)
                    t = sp->start_ns;
                break; /* sorted by start: the stage's first such span is its earliest */
            }
        }
    return t;
}

static int kept(const struct pps_span *sp, int iter, int64_t cut)
{
    if (sp->iter >= 0)
        return sp->iter >= iter;
    return sp->end_ns > sp->start_ns ? sp->end_ns > cut : sp->start_ns >= cut;
}

/* The last end of a compute span labelled below iter, over every stage; INT64_MIN: none. */
static int64_t last_end_before(const struct pps_run *run, int iter)
{
    int64_t t = INT64_MIN;

    for (int s = 0; s < run->n_stages; s++)
        for (size_t i = 0; i < run->stages[s].n; i++) {
            const struct pps_span *sp = &run->stages[s].spans[i];
            if (sp->iter >= 0 && sp->iter < iter && pps_span_kind_is_compute(sp->kind) &&
                sp->end_ns > t)
                t = sp->end_ns;
        }
    return t;
}

/* Spans, t_min, t_max and metrics of run after a cut: keep(span) says what stays. */
static void keep_only(struct pps_run *run, int (*keep)(const struct pps_span *, int, int64_t),
                      int iter, int64_t cut, int metrics_from)
{
    size_t n = 0, m = 0;
    int have_t = 0;

    for (int s = 0; s < run->n_stages; s++) {
        struct pps_stage_spans *b = &run->stages[s];
        size_t k = 0;
        for (size_t i = 0; i < b->n; i++)
            if (keep(&b->spans[i], iter, cut))
                b->spans[k++] = b->spans[i];
        run->n_dropped += b->n - k;
        b->n = k;
        for (size_t i = 0; i < k; i++) {
            if (!have_t || b->spans[i].start_ns < run->t_min)
                run->t_min = b->spans[i].start_ns;
            if (!have_t || b->spans[i].end_ns > run->t_max)
                run->t_max = b->spans[i].end_ns;
            have_t = 1;
        }
        n += k;
    }
    run->n_spans = n;
    if (!have_t)
        run->t_min = run->t_max = 0;
    for (size_t i = 0; i < run->n_metrics; i++)
        if (metrics_from ? run->metrics[i].iter >= iter : run->metrics[i].iter < iter)
            run->metrics[m++] = run->metrics[i];
    run->n_metrics = m;
}

void pps_run_drop_before(struct pps_run *run, int iter)
{
    /* At first_iter itself: what came in since the last drop below it (rows a reader fetched
     * later, from a shard behind the others) goes too. */
    if (!run || iter <= 0 || iter < run->first_iter)
        return;
    keep_only(run, kept, iter, first_start_from(run, iter), 1);
    run->first_iter = iter;
}

static int kept_before(const struct pps_span *sp, int iter, int64_t cut)
{
    if (sp->iter >= 0)
        return sp->iter < iter;
    return sp->end_ns > sp->start_ns ? sp->start_ns < cut : sp->start_ns <= cut;
}

void pps_run_drop_from(struct pps_run *run, int iter)
{
    if (!run || iter <= run->first_iter || (run->end_iter > 0 && iter > run->end_iter))
        return;
    keep_only(run, kept_before, iter, last_end_before(run, iter), 0);
    run->end_iter = iter;
}

static int int_cmp(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

int pps_run_keep_iter(const struct pps_run *run, size_t keep)
{
    size_t n = 0, kept = 0;
    int *labels, k;

    if (!run || run->n_spans <= keep)
        return run ? run->first_iter : 0;
    for (int s = 0; s < run->n_stages; s++)
        for (size_t i = 0; i < run->stages[s].n; i++)
            n += run->stages[s].spans[i].iter >= 0;
    if (n == 0)
        return run->first_iter;
    if (!(labels = malloc(n * sizeof(*labels))))
        return -1;
    n = 0;
    for (int s = 0; s < run->n_stages; s++)
        for (size_t i = 0; i < run->stages[s].n; i++)
            if (run->stages[s].spans[i].iter >= 0)
                labels[n++] = run->stages[s].spans[i].iter;
    qsort(labels, n, sizeof(*labels), int_cmp);
    /* From the newest label down, whole iterations while their labelled spans fit in keep; the
     * newest stays whatever keep says. It depends on those iterations alone: a run that holds
     * more of the older ones, or fewer, chooses the same (pps_summary_pick() too). */
    k = labels[n - 1];
    for (size_t i = n; i > 0;) {
        size_t j = i;
        while (j > 0 && labels[j - 1] == labels[i - 1])
            j--;
        if (kept + (i - j) > keep && kept > 0)
            break;
        kept += i - j;
        k = labels[i - 1];
        i = j;
    }
    free(labels);
    return k > run->first_iter ? k : run->first_iter;
}
