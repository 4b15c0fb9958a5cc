/*
 * openmetrics.c - the report's figures in the OpenMetrics 1.0 text format, for the dashboards
 * (Prometheus, Grafana, VictoriaMetrics) where a job's loss already lives: a file that any
 * OpenMetrics parser reads, and node exporter's textfile collector too.
 *
 * Every family is a gauge, labelled by run, and by iter or stage where it is per iteration or
 * per stage, so one file per run sits beside others. The run's description is the gauge
 * ppscope_run_info at 1, as Prometheus writes info metrics, rather than an OpenMetrics info
 * family: the Prometheus text format (the textfile collector's, the Pushgateway's) has no
 * "info" type and would refuse the whole file over it, while it takes # UNIT and # EOF for
 * comments; so the file is both OpenMetrics and Prometheus text. Ratios
 * carry the unit "ratio" and times "seconds", each as the suffix of its family's name, as the
 * spec asks. A figure the run has not got (NaN: no prediction, one iteration) is left out while
 * its family stays, so a dashboard sees "no data", never a made-up 0. Samples carry no
 * timestamp: the run's clock is monotonic, not wall time.
 */
#include <math.h>
#include <string.h>

#include "export_int.h"

struct om {
    FILE *f;
    const char *run;
    size_t n_samples;
};

static void family(struct om *o, const char *name, const char *type, const char *unit,
                   const char *help)
{
    fprintf(o->f, "# TYPE %s %s\n", name, type);
    if (unit)
        fprintf(o->f, "# UNIT %s %s\n", name, unit);
    fprintf(o->f, "# HELP %s ", name);
    pps__export_om_string(o->f, help);
    fputc('\n', o->f);
}

/* name{run="...",k1="v1",k2="v2",...} value: labels is a NULL-ended list of name, value pairs
 * after run (NULL for none); a value pair of NULL is skipped. Non-finite values are left out. */
static void sample(struct om *o, const char *name, const char *const *labels, double value)
{
    if (!isfinite(value))
        return;
    fprintf(o->f, "%s{run=\"", name);
    pps__export_om_string(o->f, o->run);
    fputc('"', o->f);
    for (size_t i = 0; labels && labels[i]; i += 2) {
        if (!labels[i + 1])
            continue;
        fprintf(o->f, ",%s=\"", labels[i]);
        pps__export_om_string(o->f, labels[i + 1]);
        fputc('"', o->f);
    }
    /* 12 significant digits: nanoseconds in seconds up to 1000 s, more than any ratio needs. */
    fprintf(o->f, "} %.12g\n", value);
    o->n_samples++;
}

static void iterations(struct om *o, const struct pps_report *rep)
{
    char it[16];

    family(o, "ppscope_bubble_ratio", "gauge", "ratio",
           "Each whole iteration's bubble: idle over stages x window (docs/analysis.md).");
    for (int i = 0; i < rep->n_iters; i++) {
        const struct pps_iter_stats *is = &rep->iters[i];

        if (is->partial)
            continue;
        snprintf(it, sizeof(it), "%d", is->iter);
        sample(o, "ppscope_bubble_ratio", (const char *const[]){"iter", it, NULL}, is->bubble);
    }

    family(o, "ppscope_iteration_seconds", "gauge", "seconds",
           "Each whole iteration's time: from the end of the one before to its own end (the "
           "window of a run's only iteration).");
    for (int i = 0; i < rep->n_iters; i++) {
        const struct pps_iter_stats *is = &rep->iters[i];
        double t = NAN;

        if (is->partial)
            continue;
        if (i > 0 && !rep->iters[i - 1].partial)
            t = (double)(is->t1 - rep->iters[i - 1].t1);
        else if (rep->n_full == 1)
            t = is->window_ns;
        snprintf(it, sizeof(it), "%d", is->iter);
        sample(o, "ppscope_iteration_seconds", (const char *const[]){"iter", it, NULL}, t / 1e9);
    }

    family(o, "ppscope_iteration_window_seconds", "gauge", "seconds",
           "Each whole iteration's window: its first compute span's start to its last one's "
           "end, over all stages.");
    for (int i = 0; i < rep->n_iters; i++) {
        const struct pps_iter_stats *is = &rep->iters[i];

        if (is->partial)
            continue;
        snprintf(it, sizeof(it), "%d", is->iter);
        sample(o, "ppscope_iteration_window_seconds", (const char *const[]){"iter", it, NULL},
               is->window_ns / 1e9);
    }
}

static void stages(struct om *o, const struct pps_report *rep)
{
    char st[16];

    family(o, "ppscope_stage_idle_ratio", "gauge", "ratio",
           "Each stage's idle time over the sum of the whole iterations' windows.");
    for (int s = 0; s < rep->n_stages; s++) {
        if (!rep->total[s].present)
            continue;
        snprintf(st, sizeof(st), "%d", s);
        sample(o, "ppscope_stage_idle_ratio", (const char *const[]){"stage", st, NULL},
               rep->total[s].idle_frac);
    }
}

/* One family of one figure of the run. */
static void run_figure(struct om *o, const char *name, const char *unit, const char *help,
                       double value)
{
    family(o, name, "gauge", unit, help);
    sample(o, name, NULL, value);
}

static void figures(struct om *o, const struct pps_report *rep)
{
    const char *exact = pps_report_theory_v(rep) > 1 ? "(p-1)/(v*m+p-1)" : "(p-1)/(m+p-1)";

    run_figure(o, "ppscope_mean_bubble_ratio", "ratio",
               "The run's bubble: the mean of its whole iterations' bubbles.", rep->bubble);
    run_figure(o, "ppscope_steady_bubble_ratio", "ratio",
               "The steady bubble: iterations 1..N-1 back to back, as they ran.",
               rep->steady_bubble);
    run_figure(o, "ppscope_predicted_bubble_ratio", "ratio",
               "The simulator's bubble for the run's schedule with its measured op costs.",
               rep->have_prediction ? rep->pred.bubble : NAN);
    run_figure(o, "ppscope_predicted_steady_bubble_ratio", "ratio",
               "The predicted steady bubble, on the run's own terms (sync or post-validated).",
               rep->have_prediction ? rep->pred_steady_bubble : NAN);

    family(o, "ppscope_theory_bubble_ratio", "gauge", "ratio",
           "The textbook bubble for the run's p, m and v: equal op costs, free messages.");
    sample(o, "ppscope_theory_bubble_ratio", (const char *const[]){"formula", "(p-1)/m", NULL},
           rep->bubble_quoted);
    sample(o, "ppscope_theory_bubble_ratio", (const char *const[]){"formula", exact, NULL},
           rep->bubble_exact);

    run_figure(o, "ppscope_run_iteration_seconds", "seconds",
               "The run's iteration time: the steady period (one iteration's end to the "
               "next's), the window with one iteration.",
               rep->iter_ns / 1e9);
    run_figure(o, "ppscope_predicted_iteration_seconds", "seconds",
               "The predicted iteration time, on the run's own terms.",
               rep->have_prediction ? rep->pred_iter_ns / 1e9 : NAN);
}

/* The flags, each once: a label set must be unique within a family. */
static void flags(struct om *o, const struct pps_flag_list *fl)
{
    char st[16], peer[16];

    family(o, "ppscope_flag", "gauge", NULL,
           "Each flag of the report, its value as its kind defines it (docs/analysis.md): "
           "imbalance compute/others' mean, stall per op/mean op, bubble measured-predicted, "
           "link extra ns per message, contention share of stage time.");
    for (size_t i = 0; fl && i < fl->n; i++) {
        const struct pps_flag *x = &fl->items[i];
        int seen = 0;

        for (size_t j = 0; j < i && !seen; j++)
            seen = fl->items[j].kind == x->kind && fl->items[j].stage == x->stage &&
                   fl->items[j].peer == x->peer;
        if (seen)
            continue;
        snprintf(st, sizeof(st), "%d", x->stage);
        snprintf(peer, sizeof(peer), "%d", x->peer);
        sample(o, "ppscope_flag",
               (const char *const[]){"kind", pps_flag_kind_name(x->kind), "stage",
                                     x->stage >= 0 ? st : NULL, "peer", x->peer >= 0 ? peer : NULL,
                                     NULL},
               x->value);
    }
}

static void info(struct om *o, const struct pps_run *run, const struct pps_report *rep)
{
    char p[16], m[16], v[16], verdict[512];
    int kind = pps_report_verdict(rep, verdict, sizeof(verdict));
    const char *source = pps_run_meta(run, "source");

    snprintf(p, sizeof(p), "%d", rep->p);
    snprintf(m, sizeof(m), "%d", rep->m);
    snprintf(v, sizeof(v), "%d", rep->v);
    family(o, "ppscope_run_info", "gauge", NULL,
           "The run: its schedule, p, m, v, where it came from, whether every rank closed its "
           "shard, and the verdict on its bubble.");
    sample(o, "ppscope_run_info",
           (const char *const[]){"schedule",
                                 run->schedule && run->schedule[0] ? run->schedule : "unknown", "p",
                                 rep->p > 0 ? p : NULL, "m", rep->m > 0 ? m : NULL, "v", v,
                                 "source", source, "complete", rep->complete ? "1" : "0", "verdict",
                                 pps_verdict_name(kind), "verdict_text", verdict, NULL},
           1);
}

int pps_export_openmetrics(FILE *f, const struct pps_export_input *in, char *what, size_t len,
                           struct pps_err *err)
{
    struct om o = {f, in->run->path ? in->run->path : "", 0};

    iterations(&o, in->rep);
    stages(&o, in->rep);
    figures(&o, in->rep);
    flags(&o, in->flags);
    info(&o, in->run, in->rep);
    fputs("# EOF\n", f);
    pps__export_what(what, len, "%zu samples", o.n_samples);
    return pps__export_finish(f, err);
}
