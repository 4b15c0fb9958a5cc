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

void pps_run_drop_before(struct pps_run *run, int iter)
{
    int64_t cut;
    size_t n = 0, m = 0;
    int have_t = 0;

    if (!run || iter <= run->first_iter)
        return;
    cut = first_start_from(run, iter);
    for (int s = 0; s < run->n_stages; s++) {
        struct pps_stage_spans *b = &run->stages[s];
        size_t k = 0;
        for (size_t i = 0; i < b->n; i++)
            if (kept(&b->spans[i], iter, cut))
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
        if (run->metrics[i].iter >= iter)
            run->metrics[m++] = run->metrics[i];
    run->n_metrics = m;
    run->first_iter = iter;
}

static int int_cmp(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

int pps_run_keep_iter(const struct pps_run *run, size_t keep)
{
    size_t n = 0, want;
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
    /* The labelled spans in the same share as keep of all: the label where they begin, and then
     * the whole of that iteration (its first span) with them. */
    want = (size_t)((double)n * ((double)keep / (double)run->n_spans));
    if (want < 1)
        want = 1;
    k = labels[n - (want < n ? want : n)];
    free(labels);
    /* One iteration at least stays, whatever keep says. */
    return k > run->first_iter ? k : run->first_iter;
}
