/*
 * report_iters.c - `ppscope report --iterations`: one row per iteration, as CSV or JSON lines,
 * for a training dashboard to chart the bubble beside the loss. Every figure is the report's
 * (analysis.h) or the run's own metrics; nothing here measures.
 */
#include <math.h>

#include "cli.h"
#include "report_iters.h"

/* The loss of iteration iter: the metrics (sorted by iteration, then stage) from *at on, the
 * highest stage's finite loss (the last stage computes it); NaN where none has one. *at moves
 * past the rows of earlier iterations, so the rows are walked once for the whole table. */
static double loss_of(const struct pps_run *run, int32_t iter, size_t *at)
{
    double loss = NAN;

    while (*at < run->n_metrics && run->metrics[*at].iter < iter)
        (*at)++;
    for (size_t i = *at; i < run->n_metrics && run->metrics[i].iter == iter; i++)
        if (isfinite(run->metrics[i].loss))
            loss = run->metrics[i].loss;
    return loss;
}

/* From the previous iteration's last compute end to this one's, where both are whole and
 * consecutive: the time the iteration added, as the steady state counts it. NaN otherwise. */
static double iteration_ns(const struct pps_report *rep, int it)
{
    const struct pps_iter_stats *is = &rep->iters[it], *prev = it > 0 ? &rep->iters[it - 1] : NULL;

    if (!prev || prev->partial || is->partial || prev->iter + 1 != is->iter)
        return NAN;
    return (double)(is->t1 - prev->t1);
}

static void csv_double(FILE *f, double x, const char *fmt)
{
    fputc(',', f);
    if (!isnan(x))
        fprintf(f, fmt, x);
}

static void print_csv(FILE *f, const struct pps_run *run, const struct pps_report *rep)
{
    size_t at = 0;

    fprintf(f, "iter,partial,t0_ns,window_ns,iteration_ns,bubble");
    for (int k = 0; k < PPS_PHASE_COUNT; k++)
        fprintf(f, ",bubble_%s", pps_phase_name(k));
    fprintf(f, ",loss");
    for (int s = 0; s < rep->n_stages; s++)
        fprintf(f, ",idle_ns_%d", s);
    fputc('\n', f);
    for (int it = 0; it < rep->n_iters; it++) {
        const struct pps_iter_stats *is = &rep->iters[it];

        fprintf(f, "%d,%d,%lld,%.0f", is->iter, is->partial, (long long)is->t0, is->window_ns);
        csv_double(f, iteration_ns(rep, it), "%.0f");
        csv_double(f, is->bubble, "%.9g");
        for (int k = 0; k < PPS_PHASE_COUNT; k++)
            csv_double(f, is->phase_bubble[k], "%.9g");
        csv_double(f, loss_of(run, is->iter, &at), "%.9g");
        for (int s = 0; s < rep->n_stages; s++)
            csv_double(f, is->stages[s].present ? is->stages[s].idle_ns : NAN, "%.0f");
        fputc('\n', f);
    }
}

static void print_json_lines(FILE *f, const struct pps_run *run, const struct pps_report *rep)
{
    size_t at = 0;

    for (int it = 0; it < rep->n_iters; it++) {
        const struct pps_iter_stats *is = &rep->iters[it];
        double t = iteration_ns(rep, it);
        struct pps_json j;

        pps_json_init(&j, f);
        pps_json_begin_object(&j, NULL);
        pps_json_int(&j, "iter", is->iter);
        pps_json_bool(&j, "partial", is->partial);
        pps_json_int(&j, "t0_ns", is->t0);
        pps_json_int(&j, "window_ns", (int64_t)llround(is->window_ns));
        if (isnan(t))
            pps_json_null(&j, "iteration_ns");
        else
            pps_json_int(&j, "iteration_ns", (int64_t)llround(t));
        pps_json_double(&j, "bubble", is->bubble);
        pps_json_begin_object(&j, "phase_bubble");
        for (int k = 0; k < PPS_PHASE_COUNT; k++)
            pps_json_double(&j, pps_phase_name(k), is->phase_bubble[k]);
        pps_json_end_object(&j);
        pps_json_double(&j, "loss", loss_of(run, is->iter, &at));
        pps_json_begin_array(&j, "idle_ns");
        for (int s = 0; s < rep->n_stages; s++)
            if (is->stages[s].present)
                pps_json_int(&j, NULL, (int64_t)llround(is->stages[s].idle_ns));
            else
                pps_json_null(&j, NULL);
        pps_json_end_array(&j);
        pps_json_end_object(&j);
        pps_json_finish(&j);
    }
}

void pps_report_print_iterations(FILE *f, const struct pps_run *run, const struct pps_report *rep,
                                 int json)
{
    if (json)
        print_json_lines(f, run, rep);
    else
        print_csv(f, run, rep);
}
