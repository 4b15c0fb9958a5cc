/*
 * run_summary.c - the end of `ppscope run`: the gradient check's verdict per schedule, or a table
 * of each schedule's figures read back from the run it wrote (pps_run_load, pps_analysis_report):
 * iteration time, measured bubble (all iterations, and the steady state: iterations after the
 * first), the simulator's prediction with the run's own op costs, peak activations per stage.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "analysis.h"
#include "cli.h"
#include "optimizer.h"
#include "pps_text.h"
#include "report_load.h"
#include "run_summary.h"

/* What one schedule's row shows. */
struct row {
    double iter_ns, pred_iter_ns;
    double bubble, steady;
    double pred, pred_steady;
    double act_peak; /* bytes, the largest stage's; NaN when unknown */
    int n_flags;
    char flags[4][560];
};

static void fmt_bytes(char *buf, size_t len, double b)
{
    if (isnan(b))
        snprintf(buf, len, "-");
    else if (b >= 1 << 30)
        snprintf(buf, len, "%.1f GiB", b / (1 << 30));
    else if (b >= 1 << 20)
        snprintf(buf, len, "%.1f MiB", b / (1 << 20));
    else
        snprintf(buf, len, "%.1f KiB", b / 1024);
}

static void fmt_ms(char *buf, size_t len, double ns)
{
    if (isnan(ns))
        snprintf(buf, len, "-");
    else
        snprintf(buf, len, "%.2f ms", ns / 1e6);
}

static void fmt_pct(char *buf, size_t len, double x)
{
    if (isnan(x))
        snprintf(buf, len, "-");
    else
        snprintf(buf, len, "%.1f%%", 100 * x);
}

/* The row of a written run; 0, or -1 with the reason on stderr. */
static int read_row(const struct pps_run_outcome *o, struct row *r)
{
    struct pps_run *run = NULL;
    struct pps_report *rep = NULL;
    struct pps_critpath *cp = NULL;
    struct pps_flag_list fl = PPS_FLAG_LIST_INIT;
    struct pps_err err = {0, ""};
    int rc = -1;

    memset(r, 0, sizeof(*r));
    r->iter_ns = r->bubble = r->steady = r->pred = r->pred_steady = r->act_peak = NAN;
    r->pred_iter_ns = NAN;
    /* The run read back whole, as the report reads it, keeps its summary: the first report and
     * view of it read that (docs/schema.md). */
    if (pps_report_load(o->dir, PPS_SUMMARY_USE, &run, &rep, &cp, NULL, 0, &err) < 0) {
        fputs("ppscope run: cannot read back ", stderr);
        pps_text_put(stderr, o->dir);
        fputs(": ", stderr);
        pps_text_put(stderr, err.msg);
        fputc('\n', stderr);
        goto out;
    }
    /* The report's own figures, under the report's own names (docs/analysis.md). */
    r->bubble = rep->bubble;
    r->steady = rep->steady_bubble;
    r->iter_ns = rep->iter_ns;
    r->pred_iter_ns = rep->pred_iter_ns;
    if (rep->have_prediction) {
        /* Post-validated windows overlap: no one-iteration prediction stands beside them (the
         * report says the same); the steady figures compare. */
        r->pred = rep->basis == PPS_BASIS_STEADY ? NAN : rep->pred.bubble;
        r->pred_steady = rep->pred_steady_bubble;
    }
    if (pps_analysis_flags(run, rep, &fl, &err) == 0) {
        r->n_flags = (int)fl.n;
        for (size_t i = 0; i < fl.n && i < sizeof(r->flags) / sizeof(r->flags[0]); i++)
            snprintf(r->flags[i], sizeof(r->flags[i]), "%s: %s",
                     pps_flag_kind_name(fl.items[i].kind), fl.items[i].text);
        pps_flag_list_release(&fl);
    }
    for (size_t i = 0; i < run->n_metrics; i++)
        if (run->metrics[i].stage >= 0 && run->metrics[i].act_bytes >= 0 &&
            (isnan(r->act_peak) || run->metrics[i].act_bytes > r->act_peak))
            r->act_peak = (double)run->metrics[i].act_bytes;
    rc = 0;
out:
    pps_critpath_free(cp);
    pps_report_free(rep);
    pps_run_free(run);
    return rc;
}

static int print_check(FILE *f, const struct pps_run_config *c, const struct pps_run_result *r)
{
    int bad = 0;

    for (int i = 0; i < r->n; i++) {
        const struct pps_run_outcome *o = &r->outcomes[i];
        int kind = o->kind;

        fprintf(f, "check-grads %s p=%d m=%d v=%d (%s): ", pps_sched_kind_name(kind), c->p, c->m,
                pps_run_config_v(c, kind), r->transport);
        if (!o->grads_checked) {
            fprintf(f, "not checked\n");
            bad = 1;
        } else if (!o->grads_equal) {
            char name[64];
            int tensor = 0;
            pps_run_grad_tensor(&c->model, (size_t)o->first_diff, &tensor, name, sizeof(name));
            fprintf(f, "MISMATCH at gradient %ld (tensor %d, %s): pipeline %.9g, reference %.9g",
                    o->first_diff, tensor, name, (double)o->diff_got, (double)o->diff_want);
            if (o->tolerance > 0)
                fprintf(f,
                        "; %.2g of its tensor's largest, beyond the %g the schedule's order "
                        "allows",
                        o->max_rel_diff, o->tolerance);
            fputc('\n', f);
            bad = 1;
        } else if (!o->loss_equal) {
            fprintf(f, "MISMATCH: gradients equal, but the loss is not the reference's %.9g\n",
                    o->ref_loss);
            bad = 1;
        } else if (o->tolerance > 0) {
            /* Not bitwise, and why: the schedule adds microbatches in another order. */
            fprintf(f,
                    "ok, %zu gradients and the loss (%.6f) equal to the single-process "
                    "reference within %g of each tensor's largest gradient (at most %.2g), not "
                    "bitwise: the schedule adds microbatches in another order (",
                    o->n_grads, o->ref_loss, o->tolerance, o->max_rel_diff);
            pps_text_put(f, o->order_note);
            fputs(")\n", f);
        } else {
            fprintf(f,
                    "ok, %zu gradients and the loss (%.6f) bitwise equal to the "
                    "single-process reference\n",
                    o->n_grads, o->ref_loss);
        }
    }
    return bad ? PPS_EXIT_FAIL : PPS_EXIT_OK;
}

int pps_run_summary_print(FILE *f, const struct pps_run_config *c, const struct pps_run_result *r)
{
    int code = PPS_EXIT_OK;

    if (r->rank > 0) { /* rank 0 speaks for the job; the others only agree on its exit code */
        for (int i = 0; c->check_grads && i < r->n; i++)
            if (!r->outcomes[i].grads_equal || !r->outcomes[i].loss_equal)
                code = PPS_EXIT_FAIL;
        return code;
    }
    if (c->check_grads)
        return print_check(f, c, r);

    fprintf(f,
            "ppscope run: %d schedule%s, p=%d m=%d, %s backend%s, %s transport, %d iteration%s, "
            "optimizer %s\n",
            r->n, r->n == 1 ? "" : "s", c->p, c->m,
            c->backend == PPS_BACKEND_EMU ? "emu" : pps_run_kernels_backend(c->backend),
            c->backend == PPS_BACKEND_EMU ? " (EMULATED: ops sleep their modeled time)" : "",
            r->transport, c->iters, c->iters == 1 ? "" : "s", pps_optim_mode_name(c->optim_mode));
    fprintf(f, "%-12s %10s %10s %7s %9s %7s %9s %9s %7s  %s\n", "schedule", "iteration",
            "predicted", "bubble", "predicted", "steady", "predicted", "peak act", "loss", "run");
    for (int i = 0; i < r->n; i++) {
        const struct pps_run_outcome *o = &r->outcomes[i];
        struct row row;
        char b[8][32];

        if (o->dir[0]) {
            if (read_row(o, &row) < 0)
                code = PPS_EXIT_FAIL;
        } else {
            memset(&row, 0, sizeof(row));
            row.bubble = row.steady = row.pred = row.pred_steady = row.act_peak = NAN;
            row.pred_iter_ns = NAN;
            row.iter_ns = o->wall_ns / c->iters;
        }
        fmt_ms(b[6], sizeof(b[6]), row.iter_ns);
        fmt_ms(b[7], sizeof(b[7]), row.pred_iter_ns);
        fmt_pct(b[0], sizeof(b[0]), row.bubble);
        fmt_pct(b[1], sizeof(b[1]), row.pred);
        fmt_pct(b[2], sizeof(b[2]), row.steady);
        fmt_pct(b[3], sizeof(b[3]), row.pred_steady);
        fmt_bytes(b[4], sizeof(b[4]), row.act_peak);
        if (isnan(o->loss))
            snprintf(b[5], sizeof(b[5]), "-");
        else
            snprintf(b[5], sizeof(b[5]), "%.4f", o->loss);
        /* The run's directory is the user's, its flags quote the run: neither drives the
         * terminal (pps_text_put). */
        fprintf(f, "%-12s %10s %10s %7s %9s %7s %9s %9s %7s  ", pps_sched_kind_name(o->kind), b[6],
                b[7], b[0], b[1], b[2], b[3], b[4], b[5]);
        pps_text_put(f, o->dir[0] ? o->dir : "(not traced)");
        fputc('\n', f);
        if (o->rollbacks || o->skips || o->clips)
            fprintf(f,
                    "%-12s optimizer: %ld steps, %ld clipped, %ld skipped, %ld rolled back, "
                    "%ld passes rerun\n",
                    "", o->steps, o->clips, o->skips, o->rollbacks, o->reruns);
        for (int k = 0; k < row.n_flags && k < (int)(sizeof(row.flags) / sizeof(row.flags[0]));
             k++) {
            fprintf(f, "%-12s ! ", "");
            pps_text_put(f, row.flags[k]);
            fputc('\n', f);
        }
        if (row.n_flags > (int)(sizeof(row.flags) / sizeof(row.flags[0]))) {
            fprintf(f, "%-12s ! and %d more: ppscope report ", "",
                    row.n_flags - (int)(sizeof(row.flags) / sizeof(row.flags[0])));
            pps_text_put(f, o->dir);
            fputc('\n', f);
        }
    }
    if (r->n > 0 && r->outcomes[0].dir[0]) {
        fprintf(f,
                "iteration: one iteration's end to the next's; bubble: the mean over iterations; "
                "steady: iterations\n1..N-1 back to back; predicted: the simulator with the "
                "run's own op costs. Per stage: ppscope report ");
        pps_text_put(f, r->outcomes[0].dir);
        fputc('\n', f);
    }
    return code;
}
