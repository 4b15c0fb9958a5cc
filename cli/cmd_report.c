/*
 * cmd_report.c - `ppscope report RUN [--json]`: each stage's busy, idle and waiting time in a
 * run, its idle by phase, the measured bubble beside the theory and the simulator's prediction,
 * and one line that says what the difference means; `--iterations`, one row per iteration
 * (report_iters.c). analysis/ computes every figure; this file only prints them.
 */
#include <unistd.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "cli.h"
#include "pps_text.h"
#include "report_iters.h"
#include "report_memory.h"
#include "report_critpath.h"
#include "report_load.h"

static const char usage_text[] =
    "usage: ppscope report [--json] [--no-summary] [--verbose] RUN\n"
    "       ppscope report --iterations [--csv | --json] [--no-summary] [--verbose] RUN\n"
    "\n"
    "Measures a run (a directory of per-rank shards, or a merged file): per stage, the time\n"
    "spent in F, B, W, BW and the optimizer, the idle and the waiting time; the bubble beside\n"
    "the theory, (p-1)/m and (p-1)/(v*m+p-1), and beside the simulator's prediction for the\n"
    "run's schedule with the op costs and links the run measured; each stage's idle by phase\n"
    "(warm-up to its first backward, steady to its last forward, cool-down to its last op,\n"
    "then the optimizer barrier); each link's transfer time;\n"
    "how long the stage threads waited for a CPU core; the critical path of each iteration (its\n"
    "length, shares by stage and by kind, the typical iteration's chain of ops); the verdict\n"
    "(what explains the bubble) and every flag with its evidence. docs/analysis.md defines each\n"
    "figure.\n"
    "\n"
    "The first report of a finished run keeps what it measured beside the run's files (its\n"
    "summary: ppscope.summary in a run directory, FILE.summary beside a file); the next\n"
    "reports read that instead of the spans, for the same figures, until the run changes.\n"
    "\n"
    "options:\n"
    "  --json        print the figures as one JSON document on stdout\n"
    "  --iterations  one row per iteration instead: iteration, partial, window start and\n"
    "                length, iteration time (end to end), bubble and its phases, loss (where\n"
    "                the run's metrics have one) and each stage's idle time; as CSV with a\n"
    "                header row (--csv, the default), or as JSON lines (--json)\n"
    "  --csv         with --iterations: CSV\n"
    "  --no-summary  measure the spans; neither read nor keep the run's summary\n"
    "  -v, --verbose say on stderr where the figures came from (the summary, or the spans)\n"
    "  -h, --help    show this help\n";

/* Compute kinds in the order the table shows them. */
static const int table_kinds[] = {PPS_SPAN_F, PPS_SPAN_B, PPS_SPAN_W, PPS_SPAN_BW, PPS_SPAN_OPT};
#define N_TABLE_KINDS ((int)(sizeof(table_kinds) / sizeof(table_kinds[0])))

/* ---- text ---------------------------------------------------------------------------------- */

/* One time unit for a whole table, so its columns compare at a glance. */
struct time_unit {
    const char *name;
    double ns;
};

static struct time_unit unit_for(double max_ns)
{
    struct time_unit u = {"ms", 1e6};

    if (max_ns < 1e6) {
        u.name = "us";
        u.ns = 1e3;
    } else if (max_ns >= 1e11) {
        u.name = "s";
        u.ns = 1e9;
    }
    return u;
}

static void print_pct(FILE *f, const char *label, double frac)
{
    if (isnan(frac))
        fprintf(f, "%s n/a", label);
    else
        fprintf(f, "%s %.1f%%", label, 100 * frac);
}

/* The planned iterations with no span (report.c's count_missing): which, and what can have
 * happened to them. An incomplete run may have stopped there; a complete one ran them. */
static void print_missing(FILE *f, const struct pps_report *rep)
{
    int run_of = rep->n_missing == rep->missing_last - rep->missing_first + 1;

    if (rep->n_missing == 1)
        fprintf(f, "missing   iteration %d (1 of %d planned)", rep->missing_first,
                rep->planned_iters);
    else if (run_of)
        fprintf(f, "missing   iterations %d-%d (%d of %d planned)", rep->missing_first,
                rep->missing_last, rep->n_missing, rep->planned_iters);
    else
        fprintf(f, "missing   %d of %d planned iterations, from %d to %d", rep->n_missing,
                rep->planned_iters, rep->missing_first, rep->missing_last);
    fprintf(f, ": none of their ops (F, B, W, optimizer steps) is in the run: %s\n",
            rep->complete ? "the tracer could not write them"
                          : "it stopped before them, or its tracer could not write them (a full "
                            "disk)");
}

/* A run without some of its ranks' shards (its world says how many it had) says which first:
 * their stages recorded nothing, and nothing about them is a finding. */
static void print_status(FILE *f, const struct pps_run *run, const struct pps_report *rep)
{
    char ranks[128];
    int n = pps_run_missing_text(run, ranks, sizeof(ranks));

    if (n > 0)
        fprintf(f,
                "status    missing rank%s %s: %s shard%s not in the run, the figures are the "
                "other ranks'%s\n",
                n == 1 ? "" : "s", ranks, n == 1 ? "its" : "their", n == 1 ? " is" : "s are",
                rep->complete ? "" : "; INCOMPLETE: a rank did not close its shard");
    else
        fprintf(f, "status    %s\n",
                rep->complete ? "complete" : "INCOMPLETE: a rank did not close its shard");
}

static void print_header(FILE *f, const struct pps_run *run, const struct pps_report *rep)
{
    /* Text out of the run (its path, its schedule's name, notes and flags that quote its
     * metadata) goes through pps_text_put: a run file must not drive the terminal. */
    fputs("run       ", f);
    pps_text_put(f, run->path ? run->path : "?");
    fprintf(f, " (%s, from %s)\n", run->merged ? "merged file" : "run directory",
            pps_run_source(run));
    const char *name = pps_report_schedule_name(run, rep);

    fputs("schedule  ", f);
    pps_text_put(f, name ? name : "unknown");
    if (rep->inferred & PPS_INFERRED_SCHEDULE) {
        fprintf(f, rep->sched_kind >= 0 ? " (its order, inferred)" : " (its observed order)");
    } else if (rep->observed.actions) {
        /* A schedule file's, whose order the run keeps. */
        const char *file = pps_run_meta(run, "schedule_file");

        fputs(file ? " (from " : " (its own order", f);
        if (file)
            pps_text_put(f, file);
        fputc(')', f);
    }
    if (rep->p)
        fprintf(f, "  p=%d", rep->p);
    else
        fprintf(f, "  p=?");
    if (rep->m)
        fprintf(f, " m=%d", rep->m);
    else
        fprintf(f, " m=?");
    fprintf(f, " v=%d", rep->v);
    if (rep->inferred & (PPS_INFERRED_P | PPS_INFERRED_M | PPS_INFERRED_V | PPS_INFERRED_ITERS)) {
        const char *sep = " (inferred:";
        static const struct {
            int bit;
            const char *what;
        } what[] = {{PPS_INFERRED_P, "p"},
                    {PPS_INFERRED_M, "m"},
                    {PPS_INFERRED_V, "v"},
                    {PPS_INFERRED_ITERS, "iterations"}};
        for (size_t i = 0; i < sizeof(what) / sizeof(what[0]); i++)
            if (rep->inferred & what[i].bit) {
                fprintf(f, "%s %s", sep, what[i].what);
                sep = ",";
            }
        fprintf(f, ")");
    }
    fprintf(f, "  %d stage%s", rep->n_present, rep->n_present == 1 ? "" : "s");
    /* Stages numbered other than 0..n-1 (a process that traced stage 1 alone) say which. */
    if (rep->n_present != rep->n_stages) {
        const char *sep = rep->n_present == 1 ? " (stage " : " (stages ";
        for (int s = 0; s < rep->n_stages; s++)
            if (rep->total[s].present) {
                fprintf(f, "%s%d", sep, s);
                sep = ", ";
            }
        fprintf(f, ")");
    }
    fprintf(f, ", %d iteration%s", rep->n_iters, rep->n_iters == 1 ? "" : "s");
    if (rep->n_full < rep->n_iters)
        fprintf(f, " (%d partial: the run stopped in %s, left out of the figures)",
                rep->n_iters - rep->n_full, rep->n_iters - rep->n_full == 1 ? "it" : "them");
    fprintf(f, "\n");
    print_status(f, run, rep);
    if (rep->dropped > 0)
        fprintf(f, "dropped   %lld spans the tracer could not keep: the figures miss them\n",
                (long long)rep->dropped);
    if (rep->n_missing > 0)
        print_missing(f, rep);
    if (rep->n_outside > 0 && rep->n_iters > 0)
        fprintf(f, "note      %zu span%s outside every iteration's window: no figure counts %s\n",
                rep->n_outside, rep->n_outside == 1 ? " lies" : "s lie",
                rep->n_outside == 1 ? "it" : "them");
}

static void print_table(FILE *f, const struct pps_report *rep)
{
    int shown[N_TABLE_KINDS];
    double max_ns = 0;
    struct time_unit u;

    for (int k = 0; k < N_TABLE_KINDS; k++) {
        int kind = table_kinds[k];
        shown[k] = 0;
        for (int s = 0; s < rep->n_stages; s++) {
            const struct pps_stage_stats *t = &rep->total[s];
            if (!t->present)
                continue;
            if (t->n_ops[kind] > 0 || t->busy_ns[kind] > 0)
                shown[k] = 1;
            if (t->busy_ns[kind] > max_ns)
                max_ns = t->busy_ns[kind];
        }
    }
    shown[0] = 1; /* a table of stages that never ran F still says so */
    u = unit_for(max_ns);

    fprintf(f, "\nbusy time per stage, over %d iteration%s\n", rep->n_full,
            rep->n_full == 1 ? "" : "s");
    fprintf(f, "stage");
    for (int k = 0; k < N_TABLE_KINDS; k++) {
        char head[16];
        if (!shown[k])
            continue;
        snprintf(head, sizeof(head), "%s %s", pps_span_kind_name(table_kinds[k]), u.name);
        fprintf(f, " %11s", head);
    }
    fprintf(f, " %8s %8s\n", "idle", "wait");
    for (int s = 0; s < rep->n_stages; s++) {
        const struct pps_stage_stats *t = &rep->total[s];
        double wait_frac = rep->total_window_ns > 0 ? t->wait_ns / rep->total_window_ns : 0.0;

        if (!t->present)
            continue;
        fprintf(f, "%5d", s);
        for (int k = 0; k < N_TABLE_KINDS; k++)
            if (shown[k])
                fprintf(f, " %11.3f", t->busy_ns[table_kinds[k]] / u.ns);
        fprintf(f, " %7.1f%% %7.1f%%\n", 100 * t->idle_frac, 100 * wait_frac);
    }
}

/* Each stage's idle per whole iteration split by phase (analysis/phase.c), and the bubble's
 * split below it: the four columns add up to the idle column and to the bubble. */
static void print_phases(FILE *f, const struct pps_report *rep)
{
    double max_ns = 0;
    struct time_unit u;

    if (rep->n_full < 1)
        return;
    for (int s = 0; s < rep->n_stages; s++)
        for (int k = 0; k < PPS_PHASE_COUNT; k++)
            if (rep->total[s].present && rep->total[s].phase_idle_ns[k] / rep->n_full > max_ns)
                max_ns = rep->total[s].phase_idle_ns[k] / rep->n_full;
    u = unit_for(max_ns);
    fprintf(f,
            "\nidle by phase, %s per iteration: warm-up to the stage's first backward, steady "
            "to its\nlast forward, cool-down to its last op, then the optimizer barrier\n",
            u.name);
    fprintf(f, "stage   warm-up    steady cool-down   barrier      idle\n");
    for (int s = 0; s < rep->n_stages; s++) {
        const struct pps_stage_stats *t = &rep->total[s];
        double sum = 0;

        if (!t->present)
            continue;
        fprintf(f, "%5d", s);
        for (int k = 0; k < PPS_PHASE_COUNT; k++) {
            fprintf(f, " %9.3f", t->phase_idle_ns[k] / rep->n_full / u.ns);
            sum += t->phase_idle_ns[k];
        }
        fprintf(f, " %9.3f\n", sum / rep->n_full / u.ns);
    }
    fprintf(f, "bubble");
    for (int k = 0; k < PPS_PHASE_COUNT; k++)
        fprintf(f, "%s%8.1f%%", k ? " " : "", 100 * rep->phase_bubble[k]);
    fprintf(f, " %8.1f%%\n", 100 * rep->bubble);
}

static void print_links(FILE *f, const struct pps_report *rep)
{
    char a[32], b[32];

    if (rep->n_links == 0)
        return;
    fprintf(f,
            "\nlinks, per message: send start to receive end (median where the receiver "
            "waited)%s\n",
            rep->host.known && rep->host.contention >= PPS_CONTENTION_MIN
                ? ";\n          on this contended host they include the receiver's wait for a core"
                : "");
    for (int i = 0; i < rep->n_links; i++) {
        const struct pps_link_stats *l = &rep->links[i];

        pps_format_ns(l->latency_ns, a, sizeof(a));
        pps_format_ns(l->min_ns, b, sizeof(b));
        fprintf(f, "  %3d->%-3d %10s %s  min %s  (%ld messages, %ld waited for)", l->from, l->to, a,
                l->bounded ? "at most" : "median ", b, l->n_msgs, l->n_blocked);
        if (l->skew_ns > 0) {
            pps_format_ns(l->skew_ns, a, sizeof(a));
            fprintf(f,
                    "; NOT USED: a receive ends %s before its send starts (the clocks "
                    "disagree)",
                    a);
        } else if (l->dup_ids) {
            fprintf(f, "; NOT USED: its messages' ids repeat");
        }
        fprintf(f, "\n");
    }
}

static void print_host(FILE *f, const struct pps_report *rep)
{
    const struct pps_host_stats *h = &rep->host;

    if (!h->known)
        return;
    fprintf(f, "host      the stage threads waited for a CPU core %.1f%% of their time",
            100 * h->contention);
    if (h->worst_stage >= 0 && rep->n_present > 1)
        fprintf(f, " (stage %d the most, %.1f%%)", h->worst_stage, 100 * h->worst);
    if (h->cpus > 0)
        fprintf(f, "; %d stage thread%s on %d core%s", h->stage_threads,
                h->stage_threads == 1 ? "" : "s", h->cpus, h->cpus == 1 ? "" : "s");
    fprintf(f, "\n");
}

static void print_bubble(FILE *f, const struct pps_run *run, const struct pps_report *rep)
{
    char verdict[512];
    double lo = INFINITY, hi = -INFINITY, zb;
    struct time_unit u;
    int zb_steady;

    for (int it = 0; it < rep->n_iters; it++) {
        if (rep->iters[it].partial)
            continue;
        if (rep->iters[it].bubble < lo)
            lo = rep->iters[it].bubble;
        if (rep->iters[it].bubble > hi)
            hi = rep->iters[it].bubble;
    }
    u = unit_for(!isnan(rep->pred_iter_ns) && rep->pred_iter_ns > rep->iter_ns ? rep->pred_iter_ns
                                                                               : rep->iter_ns);

    fprintf(f, "\n");
    print_pct(f, "bubble    measured", rep->bubble);
    /* Post-validated windows overlap: their bubble has no one-iteration prediction to stand
     * beside; the steady figures below are the ones to compare. */
    if (rep->have_prediction && rep->basis != PPS_BASIS_STEADY)
        print_pct(f, "   predicted", rep->pred.bubble);
    if (rep->n_full > 1)
        fprintf(f, "   (mean of %d iterations: %.1f%% to %.1f%%)", rep->n_full, 100 * lo, 100 * hi);
    if (rep->basis == PPS_BASIS_STEADY)
        fprintf(f, "\n          (post-validated: the iterations overlap, so compare the steady "
                   "figures)");
    fprintf(f, "\n");
    if (!isnan(rep->steady_bubble)) {
        print_pct(f, "steady    measured", rep->steady_bubble);
        if (rep->have_prediction)
            print_pct(f, "   predicted", rep->pred_steady_bubble);
        fprintf(f, "   (iterations 1..%d back to back%s)\n", rep->n_full - 1,
                rep->basis == PPS_BASIS_STEADY ? "; post-validated: the verdict's figures" : "");
    }
    if (rep->n_device_stages > 0) {
        print_pct(f, "device    bubble", rep->device_bubble);
        fprintf(f,
                "   on the device: each window less its kernels, on the %d stage%s with "
                "kernels\n",
                rep->n_device_stages, rep->n_device_stages == 1 ? "" : "s");
    }
    print_pct(f, "theory    (p-1)/m", rep->bubble_quoted);
    print_pct(f, pps_report_theory_v(rep) > 1 ? "   (p-1)/(v*m+p-1)" : "   (p-1)/(m+p-1)",
              rep->bubble_exact);
    fprintf(f, "\n");
    zb = pps_report_zb_theory(rep, &zb_steady);
    if (!isnan(zb))
        fprintf(f,
                "          zero-bubble %.1f%%%s: %s idle a stage at the stages' mean op times, "
                "no message time or optimizer step\n",
                100 * zb, zb_steady ? " steady" : "", pps_zb_theory_formula(rep->sched_kind));
    if (rep->have_prediction) {
        char t[32];

        pps_format_ns(rep->tcomm_ns, t, sizeof(t));
        fputs("predicted ", f);
        pps_text_put(f, pps_report_schedule_name(run, rep));
        fprintf(f, "%s with the measured mean op costs, tcomm %s",
                !rep->observed.actions                  ? ""
                : rep->inferred & PPS_INFERRED_SCHEDULE ? " (the observed order)"
                                                        : " (the order it ran)",
                t);
        if (!isnan(rep->pred_balanced))
            fprintf(f, "; balanced stages %.1f%%", 100 * rep->pred_balanced);
        if (!isnan(rep->pred_links))
            fprintf(f, "; with the links as measured %.1f%%", 100 * rep->pred_links);
        fprintf(f, "%s\n", rep->basis == PPS_BASIS_STEADY ? " (steady)" : "");
    } else {
        fputs("predicted none: ", f);
        pps_text_put(f, rep->prediction_note);
        fputc('\n', f);
    }
    if (!isnan(rep->iter_ns)) {
        fprintf(f, "iteration measured %.3f %s", rep->iter_ns / u.ns, u.name);
        if (!isnan(rep->pred_iter_ns))
            fprintf(f, ", predicted %.3f %s", rep->pred_iter_ns / u.ns, u.name);
        fprintf(f, " (%s)\n",
                rep->n_full > 1 ? "one iteration's end to the next's"
                                : "the one iteration's window");
    }
    pps_report_verdict(rep, verdict, sizeof(verdict));
    fputs("verdict   ", f);
    pps_text_put(f, verdict);
    fputc('\n', f);
}

static void print_flags(FILE *f, const struct pps_flag_list *fl)
{
    if (fl->n == 0) {
        fprintf(f, "flags     none\n");
        return;
    }
    fprintf(f, "flags     %zu\n", fl->n);
    for (size_t i = 0; i < fl->n; i++) {
        fprintf(f, "  ! %-10s ", pps_flag_kind_name(fl->items[i].kind));
        pps_text_put(f, fl->items[i].text);
        fputc('\n', f);
    }
}

static void print_text(FILE *f, const struct pps_run *run, const struct pps_report *rep,
                       const struct pps_flag_list *fl, const struct pps_memory *mem,
                       const struct pps_critpath *cp)
{
    print_header(f, run, rep);
    if (rep->n_iters > 0) {
        print_table(f, rep);
        print_phases(f, rep);
    }
    pps_report_memory_text(f, mem);
    print_links(f, rep);
    if (rep->host.known)
        fprintf(f, "\n");
    print_host(f, rep);
    print_bubble(f, run, rep);
    print_flags(f, fl);
    pps_report_critpath_text(f, rep, cp);
}

/* ---- JSON ---------------------------------------------------------------------------------- */

static void json_ns(struct pps_json *j, const char *key, double ns)
{
    pps_json_int(j, key, (int64_t)llround(ns));
}

static void json_positive_or_null(struct pps_json *j, const char *key, int value)
{
    if (value > 0)
        pps_json_int(j, key, value);
    else
        pps_json_null(j, key);
}

static void json_stage(struct pps_json *j, const struct pps_stage_stats *st)
{
    pps_json_begin_object(j, NULL);
    pps_json_int(j, "stage", st->stage);
    pps_json_begin_object(j, "busy_ns");
    for (int k = 1; k < PPS_SPAN_KIND_COUNT; k++)
        if (pps_span_kind_is_compute(k) || st->busy_ns[k] > 0 || st->n_ops[k] > 0)
            json_ns(j, pps_span_kind_name(k), st->busy_ns[k]);
    pps_json_end_object(j);
    pps_json_begin_object(j, "n_ops");
    for (int k = 1; k < PPS_SPAN_KIND_COUNT; k++)
        if (pps_span_kind_is_compute(k) || st->busy_ns[k] > 0 || st->n_ops[k] > 0)
            pps_json_int(j, pps_span_kind_name(k), st->n_ops[k]);
    pps_json_end_object(j);
    json_ns(j, "compute_ns", st->compute_ns);
    json_ns(j, "idle_ns", st->idle_ns);
    pps_json_double(j, "idle_frac", st->idle_frac);
    json_ns(j, "wait_ns", st->wait_ns);
    pps_json_begin_object(j, "phase_idle_ns");
    for (int k = 0; k < PPS_PHASE_COUNT; k++)
        json_ns(j, pps_phase_name(k), st->phase_idle_ns[k]);
    pps_json_end_object(j);
    pps_json_end_object(j);
}

static void json_phase_bubble(struct pps_json *j, const double *phase_bubble)
{
    pps_json_begin_object(j, "phase_bubble");
    for (int k = 0; k < PPS_PHASE_COUNT; k++)
        pps_json_double(j, pps_phase_name(k), phase_bubble[k]);
    pps_json_end_object(j);
}

static void json_stages(struct pps_json *j, const char *key, const struct pps_stage_stats *st,
                        int n)
{
    pps_json_begin_array(j, key);
    for (int s = 0; s < n; s++)
        if (st[s].present)
            json_stage(j, &st[s]);
    pps_json_end_array(j);
}

static void json_doubles(struct pps_json *j, const char *key, const double *x, int n)
{
    pps_json_begin_array(j, key);
    for (int i = 0; i < n; i++)
        pps_json_double(j, NULL, x[i]);
    pps_json_end_array(j);
}

static void json_prediction(struct pps_json *j, const struct pps_report *rep)
{
    if (!rep->have_prediction) {
        pps_json_null(j, "predicted_bubble");
        pps_json_null(j, "prediction");
        pps_json_string(j, "prediction_note", rep->prediction_note);
        return;
    }
    pps_json_double(j, "predicted_bubble", rep->pred.bubble);
    pps_json_begin_object(j, "prediction");
    pps_json_double(j, "makespan_ns", rep->pred.makespan);
    pps_json_double(j, "bubble", rep->pred.bubble);
    pps_json_double(j, "steady_bubble", rep->pred_steady_bubble);
    pps_json_double(j, "iteration_ns", rep->pred_iter_ns);
    pps_json_double(j, "balanced_bubble", rep->pred_balanced);
    pps_json_double(j, "links_bubble", rep->pred_links);
    pps_json_double(j, "free_messages_bubble", rep->pred_nocomm);
    pps_json_double(j, "no_overhead_bubble", rep->pred_noovh);
    pps_json_begin_object(j, "simulator");
    pps_json_double(j, "steady_period_ns", rep->pred.steady_period);
    pps_json_double(j, "steady_bubble", rep->pred.steady_bubble);
    pps_json_end_object(j);
    json_doubles(j, "busy_ns", rep->pred.busy, rep->pred.p);
    json_doubles(j, "idle_ns", rep->pred.idle, rep->pred.p);
    pps_json_end_object(j);
    pps_json_null(j, "prediction_note");
}

static void json_links_host(struct pps_json *j, const struct pps_report *rep)
{
    pps_json_begin_array(j, "links");
    for (int i = 0; i < rep->n_links; i++) {
        const struct pps_link_stats *l = &rep->links[i];

        pps_json_begin_object(j, NULL);
        pps_json_int(j, "from", l->from);
        pps_json_int(j, "to", l->to);
        pps_json_int(j, "messages", l->n_msgs);
        pps_json_int(j, "waited_for", l->n_blocked);
        pps_json_double(j, "latency_ns", l->latency_ns);
        pps_json_double(j, "min_ns", l->min_ns);
        pps_json_bool(j, "upper_bound", l->bounded);
        pps_json_double(j, "clock_skew_ns", l->skew_ns > 0 ? l->skew_ns : 0);
        pps_json_bool(j, "ids_repeat", l->dup_ids);
        pps_json_end_object(j);
    }
    pps_json_end_array(j);
    if (!rep->host.known) {
        pps_json_null(j, "host");
        return;
    }
    pps_json_begin_object(j, "host");
    pps_json_double(j, "contention", rep->host.contention);
    json_ns(j, "run_delay_ns", rep->host.run_delay_ns);
    json_ns(j, "wall_ns", rep->host.wall_ns);
    if (rep->host.worst_stage >= 0)
        pps_json_int(j, "worst_stage", rep->host.worst_stage);
    pps_json_double(j, "worst_contention", rep->host.worst);
    pps_json_int(j, "stage_threads", rep->host.stage_threads);
    if (rep->host.cpus > 0)
        pps_json_int(j, "cpus", rep->host.cpus);
    else
        pps_json_null(j, "cpus");
    pps_json_end_object(j);
}

static void json_flags(struct pps_json *j, const struct pps_flag_list *fl)
{
    pps_json_begin_array(j, "flags");
    for (size_t i = 0; i < fl->n; i++) {
        const struct pps_flag *x = &fl->items[i];

        pps_json_begin_object(j, NULL);
        pps_json_string(j, "kind", pps_flag_kind_name(x->kind));
        if (x->stage >= 0)
            pps_json_int(j, "stage", x->stage);
        else
            pps_json_null(j, "stage");
        if (x->peer >= 0)
            pps_json_int(j, "peer", x->peer);
        else
            pps_json_null(j, "peer");
        pps_json_double(j, "value", x->value);
        pps_json_string(j, "text", x->text);
        pps_json_end_object(j);
    }
    pps_json_end_array(j);
}

/* complete (false without every rank), status in words, the ranks whose shards are missing. */
static void json_status(struct pps_json *j, const struct pps_run *run, const struct pps_report *rep)
{
    char list[128], text[160];
    int n = pps_run_missing_text(run, list, sizeof(list)), *ranks = NULL;

    snprintf(text, sizeof(text), "missing rank%s %s", n == 1 ? "" : "s", list);
    pps_json_bool(j, "complete", rep->complete && n == 0);
    pps_json_string(j, "status", n > 0 ? text : rep->complete ? "complete" : "incomplete");
    pps_json_begin_array(j, "missing_ranks");
    if (n > 0 && (ranks = malloc((size_t)n * sizeof(*ranks)))) {
        pps_run_missing_ranks(run, ranks, n);
        for (int k = 0; k < n; k++)
            pps_json_int(j, NULL, ranks[k]);
    }
    pps_json_end_array(j);
    free(ranks);
}

static void print_json(FILE *f, const struct pps_run *run, const struct pps_report *rep,
                       const struct pps_flag_list *fl, const struct pps_memory *mem,
                       const struct pps_critpath *cp)
{
    struct pps_json j;
    char verdict[512];
    int v = pps_report_verdict(rep, verdict, sizeof(verdict));

    pps_json_init(&j, f);
    pps_json_begin_object(&j, NULL);
    pps_json_string(&j, "run", run->path);
    pps_json_string(&j, "source", pps_run_meta(run, "source"));
    pps_json_string(&j, "schedule", pps_report_schedule_name(run, rep));
    if (pps_run_meta(run, "schedule_file"))
        pps_json_string(&j, "schedule_file", pps_run_meta(run, "schedule_file"));
    pps_json_begin_object(&j, "inferred");
    pps_json_bool(&j, "schedule", (rep->inferred & PPS_INFERRED_SCHEDULE) != 0);
    pps_json_bool(&j, "custom", rep->observed.actions != NULL);
    pps_json_bool(&j, "p", (rep->inferred & PPS_INFERRED_P) != 0);
    pps_json_bool(&j, "m", (rep->inferred & PPS_INFERRED_M) != 0);
    pps_json_bool(&j, "v", (rep->inferred & PPS_INFERRED_V) != 0);
    pps_json_bool(&j, "iterations", (rep->inferred & PPS_INFERRED_ITERS) != 0);
    pps_json_end_object(&j);
    json_positive_or_null(&j, "p", rep->p);
    json_positive_or_null(&j, "m", rep->m);
    pps_json_int(&j, "v", rep->v);
    pps_json_string(&j, "placement", pps_placement_name(pps_report_placement(rep)));
    json_status(&j, run, rep);
    pps_json_int(&j, "dropped", rep->dropped);
    pps_json_int(&j, "n_stages", rep->n_present);
    pps_json_int(&j, "n_iterations", rep->n_iters);
    pps_json_int(&j, "partial_iterations", rep->n_iters - rep->n_full);
    pps_json_int(&j, "planned_iterations", rep->planned_iters);
    pps_json_int(&j, "missing_iterations", rep->n_missing);
    pps_json_int(&j, "missing_first", rep->missing_first);
    pps_json_int(&j, "missing_last", rep->missing_last);
    pps_json_int(&j, "spans_outside_windows", (int64_t)rep->n_outside);
    pps_json_int(&j, "spans_without_iteration", (int64_t)rep->n_no_iter);
    pps_json_double(&j, "bubble", rep->bubble);
    pps_json_double(&j, "bubble_spread", rep->bubble_spread);
    pps_json_int(&j, "device_stages", rep->n_device_stages);
    pps_json_double(&j, "device_bubble", rep->device_bubble);
    json_phase_bubble(&j, rep->phase_bubble);
    pps_json_double(&j, "steady_bubble", rep->steady_bubble);
    pps_json_double(&j, "steady_spread", rep->steady_spread);
    pps_json_double(&j, "steady_period_ns", rep->steady_period_ns);
    pps_json_double(&j, "iteration_ns", rep->iter_ns);
    pps_json_bool(&j, "postval", rep->postval);
    pps_json_double(&j, "bubble_quoted", rep->bubble_quoted);
    pps_json_double(&j, "bubble_exact", rep->bubble_exact);
    {
        int steady;
        double zb = pps_report_zb_theory(rep, &steady);
        pps_json_double(&j, "bubble_zero_bubble_theory", zb);
        pps_json_bool(&j, "zero_bubble_theory_steady", !isnan(zb) && steady);
    }
    json_prediction(&j, rep);
    pps_json_begin_object(&j, "verdict");
    pps_json_string(&j, "kind", pps_verdict_name(v));
    pps_json_string(&j, "basis", rep->basis == PPS_BASIS_STEADY ? "steady" : "iteration");
    pps_json_double(&j, "measured", rep->judged_measured);
    pps_json_double(&j, "predicted", rep->judged_predicted);
    pps_json_double(&j, "tolerance", rep->tolerance);
    pps_json_string(&j, "text", verdict);
    pps_json_end_object(&j);
    json_flags(&j, fl);
    json_links_host(&j, rep);

    pps_json_begin_object(&j, "costs");
    json_doubles(&j, "tf_ns", rep->tf_ns, rep->n_stages);
    json_doubles(&j, "tb_ns", rep->tb_ns, rep->n_stages);
    json_doubles(&j, "tw_ns", rep->tw_ns, rep->n_stages);
    if (rep->have_ovh)
        json_doubles(&j, "overhead_ns", rep->ovh_ns, rep->n_stages);
    else
        pps_json_null(&j, "overhead_ns");
    pps_json_bool(&j, "fused_bw", rep->fused_bw);
    pps_json_double(&j, "tcomm_ns", rep->tcomm_ns);
    pps_json_double(&j, "topt_ns", rep->topt_ns);
    pps_json_double(&j, "op_cv", rep->op_cv);
    pps_json_end_object(&j);

    pps_json_begin_array(&j, "iterations");
    for (int it = 0; it < rep->n_iters; it++) {
        const struct pps_iter_stats *is = &rep->iters[it];

        pps_json_begin_object(&j, NULL);
        pps_json_int(&j, "iter", is->iter);
        pps_json_int(&j, "t0_ns", is->t0);
        pps_json_int(&j, "t1_ns", is->t1);
        json_ns(&j, "window_ns", is->window_ns);
        pps_json_double(&j, "bubble", is->bubble);
        pps_json_double(&j, "device_bubble", is->device_bubble);
        json_phase_bubble(&j, is->phase_bubble);
        pps_json_bool(&j, "partial", is->partial);
        json_stages(&j, "stages", is->stages, is->n_stages);
        pps_json_end_object(&j);
    }
    pps_json_end_array(&j);
    json_ns(&j, "total_window_ns", rep->total_window_ns);
    json_stages(&j, "stages", rep->total, rep->n_stages);
    pps_report_memory_json(&j, mem);
    pps_report_critpath_json(&j, rep, cp);
    pps_json_end_object(&j);
    pps_json_finish(&j);
}

/* ---- the command --------------------------------------------------------------------------- */

int pps_cmd_report(int argc, char **argv)
{
    const char *path = NULL;
    struct pps_run *run = NULL;
    struct pps_report *rep = NULL;
    struct pps_flag_list flags = PPS_FLAG_LIST_INIT;
    struct pps_memory mem;
    struct pps_critpath *cp = NULL;
    struct pps_err err = {0, ""};
    int json = 0, iterations = 0, csv = 0, no_summary = 0, verbose = 0, rc;
    char from[512];
    const struct pps_cli_opt opts[] = {
        {"json", &json, NULL, NULL, 0},         {"iterations", &iterations, NULL, NULL, 0},
        {"csv", &csv, NULL, NULL, 0},           {"no-summary", &no_summary, NULL, NULL, 0},
        {"verbose", &verbose, NULL, NULL, 'v'},
    };

    memset(&mem, 0, sizeof(mem));
    rc = pps_cli_options("report", argc, argv, opts, 5, usage_text);
    if (rc) {
        rc = rc == PPS_CLI_HELP ? PPS_EXIT_OK : rc;
        goto out;
    }
    if (csv && !iterations) {
        rc = pps_cli_usage_error("report", "--csv goes with --iterations");
        goto out;
    }
    if (csv && json) {
        rc = pps_cli_usage_error("report", "--csv or --json, not both");
        goto out;
    }
    if (argc - optind > 1) {
        rc = pps_cli_usage_error("report", "one run at a time: got '%s' and '%s'", argv[optind],
                                 argv[optind + 1]);
        goto out;
    }
    path = optind < argc ? argv[optind] : NULL;
    if (!path) {
        rc = pps_cli_usage_error("report", "missing RUN (a run directory or a merged file)");
        goto out;
    }
    if (pps_report_load(path, no_summary ? PPS_SUMMARY_NONE : PPS_SUMMARY_USE, &run, &rep, &cp,
                        from, sizeof(from), &err) < 0 ||
        pps_analysis_flags(run, rep, &flags, &err) < 0 ||
        pps_analysis_memory(run, rep, &mem, &err) < 0) {
        rc = pps_cli_fail("report", &err);
        goto out;
    }
    if (verbose)
        fprintf(stderr, "report: %s\n", from);
    if (iterations)
        pps_report_print_iterations(stdout, run, rep, json);
    else if (json)
        print_json(stdout, run, rep, &flags, &mem, cp);
    else
        print_text(stdout, run, rep, &flags, &mem, cp);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        err.code = PPS_EIO;
        snprintf(err.msg, sizeof(err.msg), "could not write the report to stdout");
        rc = pps_cli_fail("report", &err);
    }
out:
    pps_memory_release(&mem);
    pps_flag_list_release(&flags);
    pps_critpath_free(cp);
    pps_report_free(rep);
    pps_run_free(run);
    return rc;
}
