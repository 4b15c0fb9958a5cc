/*
 * svg_view.c - which part of a run the SVG draws: one iteration, a range of milliseconds, or by
 * default the first few iterations, checked against what the run has, so that a range it cannot
 * show is a one-line error before any file is written.
 */
#include <math.h>

#include "export_int.h"

/* The iterations whose windows meet [t0, t1]. */
static void iterations_in(const struct pps_report *rep, struct pps_svg_view *v)
{
    v->first_iter = v->last_iter = -1;
    v->n_iters = 0;
    for (int i = 0; i < rep->n_iters; i++) {
        const struct pps_iter_stats *is = &rep->iters[i];

        if (is->t1 < v->t0 || is->t0 > v->t1)
            continue;
        if (v->first_iter < 0)
            v->first_iter = is->iter;
        v->last_iter = is->iter;
        v->n_iters++;
    }
}

int pps_export_svg_view(const struct pps_run *run, const struct pps_report *rep,
                        const struct pps_svg_range *range, struct pps_svg_view *out,
                        struct pps_err *err)
{
    struct pps_svg_range none = PPS_SVG_RANGE_INIT;
    const struct pps_svg_range *r = range ? range : &none;
    int has_from = !isnan(r->from_ms), has_to = !isnan(r->to_ms);
    double run_ms;
    struct pps_svg_view v = {0};

    if (!run || !rep)
        return pps_err_set(err, PPS_EINVAL, "an SVG view needs a run and its report");
    if (run->n_spans == 0)
        return pps_err_set(err, PPS_EINVAL, "%s: no spans to draw", run->path);
    run_ms = (double)(run->t_max - run->t_min) / 1e6;
    v.n_run_iters = rep->n_iters;
    if (r->iter >= 0 && (has_from || has_to))
        return pps_err_set(err, PPS_EINVAL, "--iter and --from/--to: give one or the other");
    if (r->iter >= 0) {
        const struct pps_iter_stats *is = NULL;

        for (int i = 0; i < rep->n_iters && !is; i++)
            if (rep->iters[i].iter == r->iter)
                is = &rep->iters[i];
        if (!is && rep->n_iters == 0)
            return pps_err_set(err, PPS_EINVAL, "%s has no iterations: --iter %d cannot be drawn",
                               run->path, r->iter);
        if (!is)
            return pps_err_set(err, PPS_EINVAL, "%s has no iteration %d (it has %d to %d)",
                               run->path, r->iter, rep->iters[0].iter,
                               rep->iters[rep->n_iters - 1].iter);
        v.t0 = is->t0;
        v.t1 = is->t1;
    } else if (has_from || has_to) {
        double from = has_from ? r->from_ms : 0, to = has_to ? r->to_ms : run_ms;

        if (!isfinite(from) || !isfinite(to) || from < 0 || to < 0)
            return pps_err_set(err, PPS_EINVAL,
                               "--from and --to are ms since the run's start, "
                               "from 0 up");
        if (from >= run_ms)
            return pps_err_set(err, PPS_EINVAL, "--from %g ms is past the end of %s (%.3f ms)",
                               from, run->path, run_ms);
        if (from >= to)
            return pps_err_set(err, PPS_EINVAL, "--from %g ms is not before --to %g ms", from, to);
        v.t0 = run->t_min + llround(from * 1e6);
        v.t1 = run->t_min + llround(to * 1e6);
    } else if (rep->n_iters > 0) {
        int last = rep->n_iters < PPS_SVG_DEFAULT_ITERS ? rep->n_iters : PPS_SVG_DEFAULT_ITERS;

        v.defaulted = 1;
        v.t0 = rep->iters[0].t0;
        v.t1 = rep->iters[0].t1;
        for (int i = 1; i < last; i++)
            if (rep->iters[i].t1 > v.t1)
                v.t1 = rep->iters[i].t1;
    } else {
        v.defaulted = 1;
        v.t0 = run->t_min;
        v.t1 = run->t_max;
    }
    if (v.t1 <= v.t0)
        v.t1 = v.t0 + 1; /* a window of nothing but instants still gets a width */
    iterations_in(rep, &v);
    *out = v;
    return 0;
}
