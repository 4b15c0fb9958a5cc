/*
 * cmd_rebalance.c - `ppscope rebalance RUN [--json]`: the layer partition that minimises the
 * run's predicted iteration time (analysis/rebalance.h computes it; this file prints it).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "analysis.h"
#include "cli.h"
#include "pps_text.h"
#include "rebalance.h"

static const char usage_text[] =
    "usage: ppscope rebalance [--json] RUN\n"
    "\n"
    "Suggests the --partition (blocks per stage) for 'ppscope run' that minimises the run's\n"
    "predicted iteration time. Costs: each layer's median measured F, B and W (the embedding,\n"
    "each block, the LM head and loss: the runtime's per-layer spans, docs/runtime.md); what a\n"
    "stage's ops spend outside their layers stays with the stage. Every split of the blocks\n"
    "into contiguous runs per stage is simulated with the run's schedule, message time and\n"
    "optimizer step, as the report's prediction is (docs/analysis.md, ## Rebalance). A run\n"
    "without per-layer spans has each stage's cost spread evenly over its blocks (it says so).\n"
    "Runs with v > 1 (interleaved) are not searched.\n"
    "\n"
    "options:\n"
    "  --json       print the answer as one JSON document\n"
    "  -h, --help   show this help\n"
    "\n"
    "exit: 0, 1 when the run cannot be rebalanced (the reason on stderr), 2 bad input.\n";

static void put_ms3(FILE *f, const double *ns)
{
    for (int k = 0; k < 3; k++) {
        if (isnan(ns[k]))
            fprintf(f, "%s       -", k ? " " : "");
        else
            fprintf(f, "%s%8.3f", k ? " " : "", ns[k] / 1e6);
    }
}

static void assumed(const struct pps_rebalance *rb, char *buf, size_t len)
{
    snprintf(buf, len, "%s%s",
             rb->per_layer ? "per-layer costs measured (RANGE spans); each stage's time outside "
                             "its layers stays with it"
                           : "no per-layer spans in the run: each stage's measured cost is "
                             "assumed spread evenly over its blocks, the embedding and head inside",
             rb->exhaustive ? "" : "; too many partitions to try all: a descent from the current");
}

static void print_text(FILE *f, const struct pps_run *run, const struct pps_report *rep,
                       const struct pps_rebalance *rb)
{
    char why[400];
    const char *name = pps_report_schedule_name(run, rep);

    fputs("run        ", f);
    pps_text_put(f, run->path ? run->path : "?");
    fputs("\nschedule   ", f);
    pps_text_put(f, name ? name : "unknown schedule");
    fprintf(f, "  p=%d m=%d v=%d, %d blocks\n", rep->p, rep->m, rep->v, rb->layers);
    fprintf(f, "layer costs per microbatch (ms)      F        %s        W\n",
            rep->fused_bw ? "BW" : " B");
    fputs("  embedding                   ", f);
    put_ms3(f, rb->embed_ns);
    fputc('\n', f);
    for (int l = 0; l < rb->layers; l++) {
        fprintf(f, "  block %-5d                 ", l);
        put_ms3(f, rb->block_ns + 3 * l);
        fputc('\n', f);
    }
    fputs("  head                        ", f);
    put_ms3(f, rb->head_ns);
    fputc('\n', f);
    /* The measurement beside the predictions: they take each op's median cost, which a host
     * that held the stage threads back (contention) does not show. */
    fprintf(f, "measured   --partition %s: %.3f ms per iteration", rb->current, rep->iter_ns / 1e6);
    if (rep->host.known && rep->host.contention >= PPS_CONTENTION_MIN)
        fprintf(f, ", the stage threads waiting for a core %.1f%% of their time",
                100 * rep->host.contention);
    fputc('\n', f);
    fprintf(f, "current    --partition %s: predicted %.3f ms per iteration, bubble %.1f%%\n",
            rb->current, rb->before_iter_ns / 1e6, 100 * rb->before_bubble);
    fprintf(f, "suggested  --partition %s: predicted %.3f ms per iteration, bubble %.1f%%\n",
            rb->best, rb->after_iter_ns / 1e6, 100 * rb->after_bubble);
    fprintf(f, "gain       %+.1f%% iteration time (%ld partitions simulated)\n",
            100 * (rb->after_iter_ns / rb->before_iter_ns - 1), rb->candidates);
    assumed(rb, why, sizeof(why));
    fprintf(f, "assumed    %s\n", why);
}

static void json_ms3(struct pps_json *j, const char *key, const double *ns)
{
    static const char *const k3[3] = {"f_ns", "b_ns", "w_ns"};

    pps_json_begin_object(j, key);
    for (int k = 0; k < 3; k++)
        if (isnan(ns[k]))
            pps_json_null(j, k3[k]);
        else
            pps_json_double(j, k3[k], ns[k]);
    pps_json_end_object(j);
}

static void print_json(FILE *f, const struct pps_run *run, const struct pps_report *rep,
                       const struct pps_rebalance *rb)
{
    const char *backend = pps_run_meta(run, "backend");
    struct pps_json j;
    char why[400];

    pps_json_init(&j, f);
    pps_json_begin_object(&j, NULL);
    pps_json_bool(&j, "ok", rb->ok);
    if (backend)
        pps_json_string(&j, "backend", backend);
    else
        pps_json_null(&j, "backend");
    if (!rb->ok) {
        pps_json_string(&j, "note", rb->note);
    } else {
        pps_json_int(&j, "p", rep->p);
        pps_json_int(&j, "m", rep->m);
        pps_json_int(&j, "v", rep->v);
        pps_json_int(&j, "layers", rb->layers);
        pps_json_bool(&j, "fused_bw", rep->fused_bw);
        pps_json_bool(&j, "per_layer", rb->per_layer);
        pps_json_bool(&j, "exhaustive", rb->exhaustive);
        pps_json_int(&j, "candidates", rb->candidates);
        pps_json_string(&j, "current", rb->current);
        pps_json_string(&j, "suggested", rb->best);
        pps_json_double(&j, "before_iter_ns", rb->before_iter_ns);
        pps_json_double(&j, "before_bubble", rb->before_bubble);
        pps_json_double(&j, "after_iter_ns", rb->after_iter_ns);
        pps_json_double(&j, "after_bubble", rb->after_bubble);
        json_ms3(&j, "embedding", rb->embed_ns);
        pps_json_begin_array(&j, "blocks");
        for (int l = 0; l < rb->layers; l++)
            json_ms3(&j, NULL, rb->block_ns + 3 * l);
        pps_json_end_array(&j);
        json_ms3(&j, "head", rb->head_ns);
        assumed(rb, why, sizeof(why));
        pps_json_string(&j, "assumed", why);
    }
    pps_json_end_object(&j);
    pps_json_finish(&j);
}

int pps_cmd_rebalance(int argc, char **argv)
{
    struct pps_run *run = NULL;
    struct pps_report *rep = NULL;
    struct pps_rebalance rb;
    struct pps_err err = {0, ""};
    int json = 0, rc;
    const struct pps_cli_opt opts[] = {{"json", &json, NULL, NULL, 0}};

    memset(&rb, 0, sizeof(rb));
    rc = pps_cli_options("rebalance", argc, argv, opts, 1, usage_text);
    if (rc) {
        rc = rc == PPS_CLI_HELP ? PPS_EXIT_OK : rc;
        goto out;
    }
    if (argc - optind != 1) {
        rc = pps_cli_usage_error("rebalance", "one run needed, got %d", argc - optind);
        goto out;
    }
    if (pps_run_load(argv[optind], &run, &err) < 0 || pps_analysis_report(run, &rep, &err) < 0 ||
        pps_rebalance_search(run, rep, &rb, &err) < 0) {
        rc = pps_cli_fail("rebalance", &err);
        goto out;
    }
    if (json)
        print_json(stdout, run, rep, &rb);
    else if (rb.ok)
        print_text(stdout, run, rep, &rb);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        err.code = PPS_EIO;
        snprintf(err.msg, sizeof(err.msg), "could not write the answer to stdout");
        rc = pps_cli_fail("rebalance", &err);
        goto out;
    }
    if (!rb.ok) {
        fputs("ppscope rebalance: ", stderr);
        pps_text_put(stderr, rb.note);
        fputc('\n', stderr);
        rc = PPS_EXIT_FAIL;
    }
out:
    pps_rebalance_release(&rb);
    pps_report_free(rep);
    pps_run_free(run);
    return rc;
}
