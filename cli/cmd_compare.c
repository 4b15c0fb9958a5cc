/*
 * cmd_compare.c - `ppscope compare A B [--markdown|--json] [--fail-if EXPR]...`: two runs' figures
 * side by side with B - A, B / A and whether each difference is beyond the runs' own spread, the
 * flags that appear or disappear, and gates that exit 1 when B regresses against A.
 * analysis/compare.c computes every figure; this file only prints them.
 */
#include <math.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "cli.h"
#include "report_load.h"
#include "compare.h"
#include "pps_text.h"

static const char usage_text[] =
    "usage: ppscope compare [--markdown | --json] [--fail-if EXPR]... A B\n"
    "\n"
    "Compares run B against run A (each a directory of per-rank shards, or a merged file):\n"
    "iteration time (the steady period, and the mean window), bubble and steady bubble, and\n"
    "per stage the compute (busy), idle and wait time per iteration, peak activation memory and\n"
    "peak pending W's (where the runs recorded them): each with A, B, B-A, B/A and whether the\n"
    "difference is beyond the runs' own spread: |B-A| > 2*sqrt(sA^2+sB^2), sA and sB each run's\n"
    "standard deviation over its iterations. Then the flags that appear or disappear. Runs with\n"
    "different stage counts compare their run-level figures only. docs/analysis.md, ## Compare.\n"
    "\n"
    "options:\n"
    "  --markdown       print the figures as a Markdown table\n"
    "  --json           print them as one JSON document\n"
    "  --fail-if EXPR   exit 1 when B's change against A exceeds the threshold; repeatable.\n"
    "                   EXPR is FIGURE[STAGE]>THRESHOLD, the threshold signed, with a unit:\n"
    "                     bubble>+2pp      the bubble up by more than 2 percentage points\n"
    "                     steady_bubble>+1pp  the steady bubble, up more than 1 point\n"
    "                     iter>+5%         iteration time up by more than 5% of A's\n"
    "                     idle[2]>+10%     stage 2's idle time per iteration, up 10%\n"
    "                     busy>1ms         any stage's compute per iteration, up 1 ms\n"
    "                     act>+64KiB       the largest stage's peak activations, up 64 KiB\n"
    "                     pending_w[0]>1   stage 0's peak pending W's, up more than 1\n"
    "                   figures: iter window bubble steady_bubble (the run's); busy idle wait\n"
    "                   (per stage: without [STAGE] the worst one); act pending_w (without\n"
    "                   [STAGE] the largest stage). Units: % of A (any figure), pp (bubbles),\n"
    "                   ns us ms s (times), B KiB MiB GiB (act), none (pending_w).\n"
    "                   A figure a run lacks cannot be judged: exit 2.\n"
    "  -h, --help       show this help\n"
    "\n"
    "exit: 0, 1 when a --fail-if gate finds a regression (one line on stderr), 2 bad input.\n";

#define MAX_GATES 32

/* ---- figures in words ---------------------------------------------------------------------- */

static int is_time(int figure)
{
    return figure == PPS_CMP_ITER || figure == PPS_CMP_WINDOW || figure == PPS_CMP_BUSY ||
           figure == PPS_CMP_IDLE || figure == PPS_CMP_WAIT;
}

static void fmt_bytes(char *buf, size_t len, double b)
{
    double x = fabs(b);

    if (x >= 1 << 30)
        snprintf(buf, len, "%.2f GiB", x / (1 << 30));
    else if (x >= 1 << 20)
        snprintf(buf, len, "%.2f MiB", x / (1 << 20));
    else if (x >= 1024)
        snprintf(buf, len, "%.1f KiB", x / 1024);
    else
        snprintf(buf, len, "%.0f B", x);
}

/* A value of figure in its unit; signed (diff) puts + or - before it. "-" for NaN. */
static void fmt_value(char *buf, size_t len, int figure, double v, int signed_)
{
    char body[40];
    const char *sign = !signed_ ? "" : v < 0 ? "-" : "+";

    if (isnan(v)) {
        snprintf(buf, len, "-");
        return;
    }
    if (figure == PPS_CMP_BUBBLE || figure == PPS_CMP_STEADY_BUBBLE) {
        snprintf(buf, len, signed_ ? "%+.1fpp" : "%.1f%%", 100 * v);
        return;
    }
    if (is_time(figure))
        pps_format_ns(signed_ ? fabs(v) : v, body, sizeof(body));
    else if (figure == PPS_CMP_ACT)
        fmt_bytes(body, sizeof(body), v);
    else
        snprintf(body, sizeof(body), "%.0f", signed_ ? fabs(v) : v);
    snprintf(buf, len, "%s%s", sign, body);
}

static const char *beyond_word(int beyond)
{
    return beyond < 0 ? "?" : beyond ? "yes" : "no";
}

/* A gate's change in its own unit, for the messages. */
static void fmt_change(char *buf, size_t len, const struct pps_gate *g, double ch)
{
    if (g->unit == PPS_GATE_PCT)
        snprintf(buf, len, isinf(ch) ? "from 0" : "%+.1f%%", ch);
    else if (g->unit == PPS_GATE_PP)
        snprintf(buf, len, "%+.1fpp", ch);
    else
        fmt_value(buf, len, g->figure, ch, 1);
}

/* ---- the result of the gates --------------------------------------------------------------- */

struct gate_result {
    struct pps_gate g;
    int regressed;
    double change;
    int stage;
};

/* ---- text and Markdown --------------------------------------------------------------------- */

static void print_side(FILE *f, const char *label, const struct pps_compare_side *s, int md)
{
    const char *name = pps_report_schedule_name(s->run, s->rep);

    fprintf(f, md ? "- **%s**: `" : "%s  ", label);
    pps_text_put(f, s->run->path ? s->run->path : "?");
    fputs(md ? "`: " : "  ", f);
    pps_text_put(f, name ? name : "unknown schedule");
    fprintf(f, " p=%d m=%d v=%d, %d whole iteration%s (%s)%s\n", s->rep->p, s->rep->m, s->rep->v,
            s->rep->n_full, s->rep->n_full == 1 ? "" : "s", pps_run_source(s->run),
            s->rep->complete ? "" : ", INCOMPLETE");
}

static void print_rows(FILE *f, const struct pps_compare *c, int md)
{
    static const char *const head[] = {"figure", "stage", "A", "B", "B-A", "B/A", "beyond spread"};

    if (md)
        fprintf(f, "\n| %s | %s | %s | %s | %s | %s | %s |\n|---|---:|---:|---:|---:|---:|---|\n",
                head[0], head[1], head[2], head[3], head[4], head[5], head[6]);
    else
        fprintf(f, "\n%-14s %5s %11s %11s %11s %7s  %s\n", head[0], head[1], head[2], head[3],
                head[4], head[5], head[6]);
    for (int i = 0; i < c->n_rows; i++) {
        const struct pps_cmp_row *r = &c->rows[i];
        char a[48], b[48], d[48], q[24], st[16];

        fmt_value(a, sizeof(a), r->figure, r->a, 0);
        fmt_value(b, sizeof(b), r->figure, r->b, 0);
        fmt_value(d, sizeof(d), r->figure, r->diff, 1);
        if (isnan(r->ratio))
            snprintf(q, sizeof(q), "-");
        else
            snprintf(q, sizeof(q), "%.3f", r->ratio);
        if (r->stage >= 0)
            snprintf(st, sizeof(st), "%d", r->stage);
        else
            snprintf(st, sizeof(st), "-");
        if (md)
            fprintf(f, "| %s | %s | %s | %s | %s | %s | %s |\n", pps_compare_figure_name(r->figure),
                    st, a, b, d, q, beyond_word(r->beyond));
        else
            fprintf(f, "%-14s %5s %11s %11s %11s %7s  %s\n", pps_compare_figure_name(r->figure), st,
                    a, b, d, q, beyond_word(r->beyond));
    }
}

static void print_flags(FILE *f, const struct pps_compare *c, int md)
{
    int n_new = 0;

    for (int i = 0; i < c->n_flags; i++)
        n_new += c->flags[i].in_b;
    fprintf(f,
            md ? "\n**flags**: %d appeared in B, %d gone from A, %d in both\n"
               : "\nflags     %d appeared in B, %d gone from A, %d in both\n",
            n_new, c->n_flags - n_new, c->n_flags_common);
    /* Appeared first: what B made worse is the news. */
    for (int pass = 1; pass >= 0; pass--)
        for (int i = 0; i < c->n_flags; i++) {
            const struct pps_cmp_flag *x = &c->flags[i];
            if (x->in_b != pass)
                continue;
            fprintf(f, md ? "- %s **%s**: " : "  %s %-10s ", pass ? "+" : "-",
                    pps_flag_kind_name(x->kind));
            pps_text_put(f, x->text);
            fputc('\n', f);
        }
}

static void print_gates(FILE *f, const struct gate_result *gr, int n, int md)
{
    for (int i = 0; i < n; i++) {
        char ch[48];

        fmt_change(ch, sizeof(ch), &gr[i].g, gr[i].change);
        fprintf(f, md ? "%s- fail-if `" : "%sfail-if   ", i == 0 ? "\n" : "");
        pps_text_put(f, gr[i].g.text);
        fprintf(f, md ? "`: %s" : ": %s", ch);
        if (gr[i].stage >= 0)
            fprintf(f, " (stage %d)", gr[i].stage);
        fprintf(f, ": %s\n", gr[i].regressed ? "REGRESSION" : "ok");
    }
}

static void print_text(FILE *f, const struct pps_compare_side *a, const struct pps_compare_side *b,
                       const struct pps_compare *c, const struct gate_result *gr, int n_gates,
                       int md)
{
    if (md)
        fprintf(f, "## ppscope compare\n\n");
    print_side(f, "A", a, md);
    print_side(f, "B", b, md);
    if (c->note[0])
        fprintf(f, md ? "\n*%s*\n" : "\nnote      %s\n", c->note);
    print_rows(f, c, md);
    fprintf(f, md ? "\n*beyond spread*: |B-A| > 2*sqrt(sA^2+sB^2), sA and sB each run's standard "
                    "deviation over its iterations; ? where a run has too few iterations for "
                    "one.\n"
                  : "beyond spread: |B-A| > 2*sqrt(sA^2+sB^2), sA, sB each run's standard "
                    "deviation over its\niterations; ? where a run has too few for one. busy, "
                    "idle, wait: per iteration.\n");
    print_flags(f, c, md);
    print_gates(f, gr, n_gates, md);
}

/* ---- JSON ---------------------------------------------------------------------------------- */

static void json_side(struct pps_json *j, const char *key, const struct pps_compare_side *s)
{
    pps_json_begin_object(j, key);
    pps_json_string(j, "run", s->run->path);
    pps_json_string(j, "schedule", pps_report_schedule_name(s->run, s->rep));
    pps_json_int(j, "p", s->rep->p);
    pps_json_int(j, "m", s->rep->m);
    pps_json_int(j, "v", s->rep->v);
    pps_json_int(j, "n_iterations", s->rep->n_iters);
    pps_json_int(j, "whole_iterations", s->rep->n_full);
    pps_json_bool(j, "complete", s->rep->complete);
    pps_json_end_object(j);
}

/* Bytes and W's are whole numbers: all their digits, where "%.6g" would round them. */
static void json_value(struct pps_json *j, const char *key, int figure, double v)
{
    if ((figure == PPS_CMP_ACT || figure == PPS_CMP_PENDING_W) && !isnan(v))
        pps_json_int(j, key, (int64_t)llround(v));
    else
        pps_json_double(j, key, v);
}

static void print_json(FILE *f, const struct pps_compare_side *a, const struct pps_compare_side *b,
                       const struct pps_compare *c, const struct gate_result *gr, int n_gates)
{
    struct pps_json j;
    int regressed = 0;

    pps_json_init(&j, f);
    pps_json_begin_object(&j, NULL);
    json_side(&j, "a", a);
    json_side(&j, "b", b);
    pps_json_bool(&j, "per_stage", c->per_stage);
    if (c->note[0])
        pps_json_string(&j, "note", c->note);
    else
        pps_json_null(&j, "note");
    pps_json_double(&j, "sigmas", PPS_COMPARE_SIGMAS);
    pps_json_begin_array(&j, "figures");
    for (int i = 0; i < c->n_rows; i++) {
        const struct pps_cmp_row *r = &c->rows[i];

        pps_json_begin_object(&j, NULL);
        pps_json_string(&j, "figure", pps_compare_figure_name(r->figure));
        if (r->stage >= 0)
            pps_json_int(&j, "stage", r->stage);
        else
            pps_json_null(&j, "stage");
        json_value(&j, "a", r->figure, r->a);
        json_value(&j, "b", r->figure, r->b);
        json_value(&j, "diff", r->figure, r->diff);
        pps_json_double(&j, "ratio", r->ratio);
        pps_json_double(&j, "spread_a", r->spread_a);
        pps_json_double(&j, "spread_b", r->spread_b);
        if (r->beyond < 0)
            pps_json_null(&j, "beyond_spread");
        else
            pps_json_bool(&j, "beyond_spread", r->beyond);
        pps_json_end_object(&j);
    }
    pps_json_end_array(&j);
    pps_json_begin_array(&j, "flags");
    for (int i = 0; i < c->n_flags; i++) {
        const struct pps_cmp_flag *x = &c->flags[i];

        pps_json_begin_object(&j, NULL);
        pps_json_string(&j, "change", x->in_b ? "appeared" : "disappeared");
        pps_json_string(&j, "kind", pps_flag_kind_name(x->kind));
        if (x->stage >= 0)
            pps_json_int(&j, "stage", x->stage);
        else
            pps_json_null(&j, "stage");
        if (x->peer >= 0)
            pps_json_int(&j, "peer", x->peer);
        else
            pps_json_null(&j, "peer");
        pps_json_string(&j, "text", x->text);
        pps_json_end_object(&j);
    }
    pps_json_end_array(&j);
    pps_json_int(&j, "flags_in_both", c->n_flags_common);
    pps_json_begin_array(&j, "fail_if");
    for (int i = 0; i < n_gates; i++) {
        pps_json_begin_object(&j, NULL);
        pps_json_string(&j, "expr", gr[i].g.text);
        pps_json_string(&j, "figure", pps_compare_figure_name(gr[i].g.figure));
        if (gr[i].stage >= 0)
            pps_json_int(&j, "stage", gr[i].stage);
        else
            pps_json_null(&j, "stage");
        pps_json_string(&j, "unit",
                        gr[i].g.unit == PPS_GATE_PCT  ? "%"
                        : gr[i].g.unit == PPS_GATE_PP ? "pp"
                                                      : "abs");
        pps_json_double(&j, "threshold", gr[i].g.threshold);
        pps_json_double(&j, "change", gr[i].change);
        pps_json_bool(&j, "regressed", gr[i].regressed);
        pps_json_end_object(&j);
        regressed |= gr[i].regressed;
    }
    pps_json_end_array(&j);
    pps_json_bool(&j, "regressed", regressed);
    pps_json_end_object(&j);
    pps_json_finish(&j);
}

/* ---- the command --------------------------------------------------------------------------- */

/* Loads and analyses one run (from its summary where it has one: report_load.h). 0, or the exit
 * code after saying why. */
static int load_side(const char *path, struct pps_run **run, struct pps_report **rep,
                     struct pps_flag_list *fl)
{
    struct pps_err err = {0, ""};
    struct pps_critpath *cp = NULL;
    int rc = pps_report_load(path, PPS_SUMMARY_READ, run, rep, &cp, NULL, 0, &err);

    pps_critpath_free(cp);
    if (rc < 0 || pps_analysis_flags(*run, *rep, fl, &err) < 0)
        return pps_cli_fail("compare", &err);
    return 0;
}

/* The one line a regression gets on stderr: every gate that found one. */
static int report_regressions(const struct gate_result *gr, int n)
{
    int any = 0;

    for (int i = 0; i < n; i++) {
        char ch[48];

        if (!gr[i].regressed)
            continue;
        fmt_change(ch, sizeof(ch), &gr[i].g, gr[i].change);
        fputs(any ? "; " : "ppscope compare: regression: ", stderr);
        pps_text_put(stderr, gr[i].g.text);
        fprintf(stderr, " (B %s", ch);
        if (gr[i].stage >= 0)
            fprintf(stderr, " at stage %d", gr[i].stage);
        fputc(')', stderr);
        any = 1;
    }
    if (any)
        fputc('\n', stderr);
    return any;
}

/* The --fail-if gates parsed so far. */
struct gates {
    struct gate_result *g;
    int n;
};

/* One --fail-if value into the next gate. */
static int take_gate(const char *value, void *ctx)
{
    struct gates *gs = ctx;
    struct pps_err err = {0, ""};

    if (gs->n == MAX_GATES)
        return pps_cli_usage_error("compare", "at most %d --fail-if gates", MAX_GATES);
    memset(&gs->g[gs->n], 0, sizeof(gs->g[gs->n]));
    if (pps_compare_gate_parse(value, &gs->g[gs->n].g, &err) < 0)
        return pps_cli_fail("compare", &err);
    gs->n++;
    return 0;
}

int pps_cmd_compare(int argc, char **argv)
{
    struct pps_run *run_a = NULL, *run_b = NULL;
    struct pps_report *rep_a = NULL, *rep_b = NULL;
    struct pps_flag_list fl_a = PPS_FLAG_LIST_INIT, fl_b = PPS_FLAG_LIST_INIT;
    struct pps_compare *cmp = NULL;
    struct gate_result gates[MAX_GATES];
    struct pps_err err = {0, ""};
    int json = 0, md = 0, rc;
    struct gates gs = {gates, 0};
    const struct pps_cli_opt opts[] = {
        {"json", &json, NULL, NULL, 0},
        {"markdown", &md, NULL, NULL, 0},
        {"fail-if", NULL, take_gate, &gs, 0},
    };

    rc = pps_cli_options("compare", argc, argv, opts, 3, usage_text);
    if (rc) {
        rc = rc == PPS_CLI_HELP ? PPS_EXIT_OK : rc;
        goto out;
    }
    if (json && md) {
        rc = pps_cli_usage_error("compare", "--json and --markdown: choose one");
        goto out;
    }
    if (argc - optind != 2) {
        rc = argc - optind < 2
                 ? pps_cli_usage_error("compare", "two runs needed: A (the baseline) and B")
                 : pps_cli_usage_error("compare", "two runs, A and B: got %d", argc - optind);
        goto out;
    }
    if ((rc = load_side(argv[optind], &run_a, &rep_a, &fl_a)) != 0 ||
        (rc = load_side(argv[optind + 1], &run_b, &rep_b, &fl_b)) != 0)
        goto out;
    {
        struct pps_compare_side a = {run_a, rep_a, &fl_a}, b = {run_b, rep_b, &fl_b};

        if (pps_compare_runs(&a, &b, &cmp, &err) < 0) {
            rc = pps_cli_fail("compare", &err);
            goto out;
        }
        /* Every gate is judged before anything is printed: one that cannot be is bad input. */
        for (int i = 0; i < gs.n; i++) {
            int r =
                pps_compare_gate_check(cmp, &gates[i].g, &gates[i].change, &gates[i].stage, &err);
            if (r < 0) {
                rc = pps_cli_fail("compare", &err);
                goto out;
            }
            gates[i].regressed = r;
        }
        if (json)
            print_json(stdout, &a, &b, cmp, gates, gs.n);
        else
            print_text(stdout, &a, &b, cmp, gates, gs.n, md);
    }
    if (fflush(stdout) != 0 || ferror(stdout)) {
        err.code = PPS_EIO;
        snprintf(err.msg, sizeof(err.msg), "could not write the comparison to stdout");
        rc = pps_cli_fail("compare", &err);
        goto out;
    }
    if (report_regressions(gates, gs.n))
        rc = PPS_EXIT_FAIL;
out:
    pps_compare_free(cmp);
    pps_flag_list_release(&fl_a);
    pps_flag_list_release(&fl_b);
    pps_report_free(rep_a);
    pps_report_free(rep_b);
    pps_run_free(run_a);
    pps_run_free(run_b);
    return rc;
}
