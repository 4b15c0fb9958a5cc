/*
 * run_build.c - rows into a struct pps_run, for the loader and the follower alike
 * (run_build.h): per-stage buckets, their order, the run's extents.
 */
#include <stdlib.h>
#include <string.h>

#include "run_build.h"
#include "storage_int.h"

void pps__run_build_init(struct pps__run_build *b, struct pps_run *run, int count_only)
{
    memset(b, 0, sizeof(*b));
    b->run = run;
    b->count_only = count_only;
    b->max_iter = -1;
}

void pps__run_build_release(struct pps__run_build *b)
{
    free(b->span_cap);
    free(b->from);
    pps__run_build_init(b, NULL, 0);
}

void pps__run_build_begin(struct pps__run_build *b)
{
    struct pps_run *run = b->run;

    for (int s = 0; s < run->n_stages; s++)
        b->from[s] = run->stages[s].n;
    b->spans_from = run->n_spans;
    b->metrics_from = run->n_metrics;
}

int pps__run_build_stages(struct pps__run_build *b, size_t n)
{
    struct pps_run *run = b->run;
    size_t old = b->stages_cap, cap2 = old, cap3 = old;

    if (n > old) {
        if (pps_grow((void **)&run->stages, &b->stages_cap, n, sizeof(*run->stages)) ||
            pps_grow((void **)&b->span_cap, &cap2, b->stages_cap, sizeof(*b->span_cap)) ||
            pps_grow((void **)&b->from, &cap3, b->stages_cap, sizeof(*b->from)))
            return PPS_ENOMEM;
        /* A stage new in this batch had nothing before it. */
        memset(run->stages + old, 0, (b->stages_cap - old) * sizeof(*run->stages));
        memset(b->span_cap + old, 0, (b->stages_cap - old) * sizeof(*b->span_cap));
        memset(b->from + old, 0, (b->stages_cap - old) * sizeof(*b->from));
    }
    if (n > (size_t)run->n_stages)
        run->n_stages = (int)n;
    return 0;
}

int pps__run_build_span(struct pps__run_build *b, const struct pps_span *s)
{
    struct pps_run *run = b->run;
    struct pps_stage_spans *st;

    if ((size_t)s->stage >= (size_t)run->n_stages && pps__run_build_stages(b, (size_t)s->stage + 1))
        return PPS_ENOMEM;
    if (s->iter > b->max_iter)
        b->max_iter = s->iter;
    if (!b->count_only) {
        st = &run->stages[s->stage];
        if (pps_grow((void **)&st->spans, &b->span_cap[s->stage], st->n + 1, sizeof(*st->spans)))
            return PPS_ENOMEM;
        st->spans[st->n++] = *s;
    }
    run->n_spans++;
    return 0;
}

int pps__run_build_names(struct pps__run_build *b, char **names, size_t n)
{
    struct pps_run *run = b->run;

    if (n == 0)
        return 0; /* names may be NULL: memcpy may not be handed it */
    if (pps_grow((void **)&run->names, &b->names_cap, run->n_names + n, sizeof(*run->names)))
        return PPS_ENOMEM;
    memcpy(run->names + run->n_names, names, n * sizeof(*names));
    run->n_names += n;
    return 0;
}

int pps__run_build_metrics(struct pps__run_build *b, const struct pps_metric *m, size_t n)
{
    struct pps_run *run = b->run;

    if (n == 0)
        return 0; /* m may be NULL: memcpy may not be handed it */
    if (pps_grow((void **)&run->metrics, &b->metrics_cap, run->n_metrics + n,
                 sizeof(*run->metrics)))
        return PPS_ENOMEM;
    memcpy(run->metrics + run->n_metrics, m, n * sizeof(*m));
    run->n_metrics += n;
    return 0;
}

static int sorted_from(const void *a, size_t elem, size_t from, size_t n,
                       int (*cmp)(const void *, const void *))
{
    const char *p = a;

    for (size_t k = from + 1; k < n; k++)
        if (cmp(p + (k - 1) * elem, p + k * elem) > 0)
            return 0;
    return 1;
}

/*
 * Puts stage st's spans from old_n on (sorted among themselves) into order with those before:
 * they merge from the first old span that sorts after the first new one. 1 when an old span
 * moved, 0 when none did, -1 out of memory.
 */
static int merge_tail(struct pps_stage_spans *st, size_t old_n)
{
    struct pps_span *tail = st->spans + old_n, *tmp;
    size_t n_tail = st->n - old_n, lo = 0, hi = old_n, i, j, k;

    if (n_tail == 0 || old_n == 0 || pps__span_cmp(&st->spans[old_n - 1], &tail[0]) <= 0)
        return 0;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (pps__span_cmp(&st->spans[mid], &tail[0]) <= 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (!(tmp = malloc((st->n - lo) * sizeof(*tmp))))
        return -1;
    for (i = lo, j = 0, k = 0; i < old_n || j < n_tail; k++) {
        if (j == n_tail || (i < old_n && pps__span_cmp(&st->spans[i], &tail[j]) <= 0))
            tmp[k] = st->spans[i++];
        else
            tmp[k] = tail[j++];
    }
    memcpy(st->spans + lo, tmp, k * sizeof(*tmp));
    free(tmp);
    return 1;
}

int pps__run_build_end(struct pps__run_build *b)
{
    struct pps_run *run = b->run;
    int moved = 0, have_t = b->spans_from > 0;

    for (int s = 0; s < run->n_stages; s++) {
        struct pps_stage_spans *st = &run->stages[s];
        size_t from = b->from[s];
        int m;

        if (st->n == from)
            continue;
        if (!sorted_from(st->spans, sizeof(*st->spans), from, st->n, pps__span_cmp))
            qsort(st->spans + from, st->n - from, sizeof(*st->spans), pps__span_cmp);
        for (size_t k = from; k < st->n; k++) {
            const struct pps_span *sp = &st->spans[k];
            if (!have_t || sp->start_ns < run->t_min)
                run->t_min = sp->start_ns;
            if (!have_t || sp->end_ns > run->t_max)
                run->t_max = sp->end_ns;
            have_t = 1;
        }
        if ((m = merge_tail(st, from)) < 0)
            return PPS_ENOMEM;
        moved |= m;
        b->from[s] = st->n;
    }
    b->spans_from = run->n_spans;
    run->n_iters = (int)(b->max_iter + 1);

    /* Metrics: sorted again only when the new ones do not all come after. */
    if (!sorted_from(run->metrics, sizeof(*run->metrics), b->metrics_from ? b->metrics_from - 1 : 0,
                     run->n_metrics, pps__metric_cmp))
        qsort(run->metrics, run->n_metrics, sizeof(*run->metrics), pps__metric_cmp);
    b->metrics_from = run->n_metrics;
    return moved;
}
