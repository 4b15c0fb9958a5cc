/*
 * sim_from.c - `ppscope sim --from RUN`: the run's own measured per-stage costs replayed under
 * other schedules and shapes (analysis/whatif.h), ranked by predicted iteration time, with the
 * run's own schedule, predicted from the same costs, as the baseline every row is compared with.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "report_load.h"
#include "pps_text.h"
#include "sim_from.h"
#include "whatif.h"

#define MAX_ROWS (PPS_SCHED_KIND_COUNT + 2) /* the run's own, a file's, every kind */

struct row {
    struct pps_whatif w;
    int baseline; /* the run's own schedule and shape */
    char assumed[256];
};

/* The rows asked: each schedule at the asked (or the run's) shape, the run's own first. */
static int make_rows(const struct pps_sim_from_opts *o, const struct pps_report *rep,
                     struct row *rows, int *n, struct pps_err *err)
{
    static const int every[] = {
        PPS_SCHED_GPIPE,     PPS_SCHED_1F1B,           PPS_SCHED_INTERLEAVED,
        PPS_SCHED_ZB_H1,     PPS_SCHED_ZB_H2,          PPS_SCHED_ZB_V,
        PPS_SCHED_DUALPIPEV, PPS_SCHED_INTERLEAVED_ZB, PPS_SCHED_ZB_AUTO};
    const int *kinds = o->n_kinds ? o->kinds : every;
    int n_kinds = o->n_kinds ? o->n_kinds : o->custom ? 0 : (int)(sizeof(every) / sizeof(every[0]));
    struct pps_whatif_opts wo = {.w_share = o->w_share, .mem_limit = o->mem_limit};
    int rc;

    *n = 0;
    memset(&rows[0], 0, sizeof(rows[0]));
    pps_whatif_baseline(rep, &rows[0].w);
    rows[0].baseline = 1;
    *n = 1;
    if (o->custom) {
        struct row *r = &rows[(*n)++];

        memset(r, 0, sizeof(*r));
        r->w.kind = -1;
        r->w.custom = o->custom;
        r->w.p = o->custom->p;
        r->w.m = o->custom->m;
        r->w.v = o->custom->v;
        if ((rc = pps_whatif_predict(rep, &wo, &r->w, err)) < 0)
            return rc;
        pps_whatif_assumptions(rep, &wo, &r->w, r->assumed, sizeof(r->assumed));
    }
    for (int k = 0; k < n_kinds && *n < MAX_ROWS; k++) {
        struct row *r = &rows[*n];
        int v = pps_sched_kind_v(kinds[k], o->v ? o->v : rep->v > 1 ? rep->v : 2);

        memset(r, 0, sizeof(*r));
        r->w.kind = kinds[k];
        r->w.p = o->p ? o->p : rep->p;
        r->w.m = o->m ? o->m : rep->m;
        r->w.v = v;
        /* The run's own question is the baseline already (zb-auto's, with a limit asked, is
         * another question: built for the measured costs, not the configured ones). */
        if (r->w.kind == rep->sched_kind && r->w.p == rep->p && r->w.m == rep->m &&
            r->w.v == rep->v && !(r->w.kind == PPS_SCHED_ZB_AUTO && o->mem_limit))
            continue;
        if ((rc = pps_whatif_predict(rep, &wo, &r->w, err)) < 0)
            return rc;
        pps_whatif_assumptions(rep, &wo, &r->w, r->assumed, sizeof(r->assumed));
        (*n)++;
    }
    return 0;
}

/* Answered rows first, by predicted iteration time; the unanswerable after, in asked order. */
static int row_cmp(const void *a, const void *b)
{
    const struct row *x = a, *y = b;

    if (x->w.ok != y->w.ok)
        return y->w.ok - x->w.ok;
    if (!x->w.ok)
        return 0;
    return (x->w.iter_ns > y->w.iter_ns) - (x->w.iter_ns < y->w.iter_ns);
}

static const char *kind_name(int kind)
{
    return kind >= 0 ? pps_sched_kind_name(kind) : "custom";
}

/* A row's schedule as printed: its kind's, "custom" (the run's own), "custom (file)". */
static const char *row_name(const struct pps_whatif *w)
{
    return w->custom ? "custom (file)" : kind_name(w->kind);
}

static void print_text(const struct pps_sim_from_opts *o, const struct pps_run *run,
                       const struct pps_report *rep, const struct row *rows, int n,
                       const struct row *base)
{
    char t[32], meas[32];

    fputs("what-if   ", stdout);
    pps_text_put(stdout, o->run);
    printf(": %s p=%d m=%d v=%d, ", kind_name(rep->sched_kind), rep->p, rep->m, rep->v);
    pps_format_ns(rep->iter_ns, meas, sizeof(meas));
    pps_format_ns(base->w.iter_ns, t, sizeof(t));
    printf("measured iteration %s, predicted %s from its own costs\n", meas, t);
    printf("costs     per microbatch through a stage, the run's means%s\n",
           rep->have_ovh ? " with its per-op overhead" : "");
    printf("%-18s %5s %5s %3s %11s %8s %7s %10s %6s\n", "schedule", "p", "m", "v", "iteration",
           "vs run", "bubble", "peak act", "vs run");
    for (int i = 0; i < n; i++) {
        const struct pps_whatif *w = &rows[i].w;
        char name[32];

        snprintf(name, sizeof(name), "%s%s", row_name(w), rows[i].baseline ? " (run)" : "");
        if (!w->ok) {
            printf("%-18s %5d %5d %3d  ", name, w->p, w->m, w->v);
            pps_text_put(stdout, w->note);
            fputc('\n', stdout);
            continue;
        }
        pps_format_ns(w->iter_ns, t, sizeof(t));
        printf("%-18s %5d %5d %3d %11s %+7.1f%% %6.1f%% %10.2f %+6.2f\n", name, w->p, w->m, w->v, t,
               100 * (w->iter_ns / base->w.iter_ns - 1), 100 * w->bubble, w->peak_act,
               w->peak_act - base->w.peak_act);
    }
    for (int i = 0; i < n; i++)
        if (rows[i].assumed[0])
            printf("assumed   %s: %s\n", row_name(&rows[i].w), rows[i].assumed);
    printf("iteration: %s; bubble: on the same\nterms; peak act: the fullest stage's live "
           "activations, in the run's microbatches through one stage\n",
           rep->postval ? "the steady period (post-validated: iterations back to back)"
                        : "one iteration with its optimizer barrier");
    (void)run;
}

static void json_row(struct pps_json *j, const struct row *r, const struct row *base,
                     const char *file)
{
    const struct pps_whatif *w = &r->w;

    pps_json_begin_object(j, NULL);
    pps_json_string(j, "schedule", kind_name(w->kind));
    if (w->custom)
        pps_json_string(j, "schedule_file", file);
    pps_json_bool(j, "baseline", r->baseline);
    pps_json_int(j, "p", w->p);
    pps_json_int(j, "m", w->m);
    pps_json_int(j, "v", w->v);
    pps_json_bool(j, "ok", w->ok);
    if (w->ok) {
        pps_json_double(j, "iter_ns", w->iter_ns);
        pps_json_double(j, "iter_vs_run", w->iter_ns / base->w.iter_ns - 1);
        pps_json_double(j, "bubble", w->bubble);
        pps_json_double(j, "peak_act", w->peak_act);
        pps_json_int(j, "peak_stage", w->peak_stage);
        pps_json_double(j, "peak_act_vs_run", w->peak_act - base->w.peak_act);
        pps_json_string(j, "assumed", r->assumed);
    } else {
        pps_json_string(j, "note", w->note);
    }
    pps_json_end_object(j);
}

static void print_json(const struct pps_sim_from_opts *o, const struct pps_report *rep,
                       const struct row *rows, int n, const struct row *base)
{
    struct pps_json j;

    pps_json_init(&j, stdout);
    pps_json_begin_object(&j, NULL);
    pps_json_string(&j, "run", o->run);
    pps_json_string(&j, "schedule", kind_name(rep->sched_kind));
    pps_json_double(&j, "measured_iter_ns", rep->iter_ns);
    pps_json_double(&j, "w_share", o->w_share);
    pps_json_begin_array(&j, "predictions");
    for (int i = 0; i < n; i++)
        json_row(&j, &rows[i], base, o->custom_file);
    pps_json_end_array(&j);
    pps_json_end_object(&j);
    pps_json_finish(&j);
}

int pps_sim_from(const struct pps_sim_from_opts *o)
{
    struct pps_run *run = NULL;
    struct pps_report *rep = NULL;
    struct pps_err err = {0, ""};
    struct row rows[MAX_ROWS], base;
    int n = 0, code = PPS_EXIT_OK;

    struct pps_critpath *cp = NULL;
    int rc = pps_report_load(o->run, PPS_SUMMARY_READ, &run, &rep, &cp, NULL, 0, &err);

    pps_critpath_free(cp);
    if (rc < 0 || make_rows(o, rep, rows, &n, &err) < 0) {
        code = pps_cli_fail("sim", &err);
        goto out;
    }
    if (!rows[0].w.ok) {
        fputs("ppscope sim: ", stderr);
        pps_text_put(stderr, o->run);
        fputs(": no costs to replay: ", stderr);
        pps_text_put(stderr, rows[0].w.note);
        fputc('\n', stderr);
        code = PPS_EXIT_USAGE;
        goto out;
    }
    base = rows[0];
    qsort(rows, (size_t)n, sizeof(rows[0]), row_cmp);
    if (o->json)
        print_json(o, rep, rows, n, &base);
    else
        print_text(o, run, rep, rows, n, &base);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "ppscope sim: could not write the output\n");
        code = PPS_EXIT_FAIL;
    }
out:
    pps_report_free(rep);
    pps_run_free(run);
    return code;
}
