/*
 * report_critpath.c - prints the critical path that analysis/critpath.c walked: over the whole
 * iterations, the path's length against the window and its shares by stage and by kind, and the
 * typical iteration's chain, compressed. Every figure is the analysis's; this file only prints.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "pps_text.h"
#include "report_critpath.h"

/* The kinds the shares list, in order. */
static const int path_kinds[] = {PPS_SPAN_F, PPS_SPAN_B, PPS_SPAN_W, PPS_SPAN_BW, PPS_SPAN_OPT};
#define N_PATH_KINDS ((int)(sizeof(path_kinds) / sizeof(path_kinds[0])))

static int has_path(const struct pps_critpath *cp)
{
    return cp && cp->n_full > 0 && cp->length_ns > 0 && cp->typical >= 0;
}

void pps_report_critpath_text(FILE *f, const struct pps_report *rep, const struct pps_critpath *cp)
{
    char a[32], b[32], chain[1024];
    double len;
    int n;

    if (!has_path(cp))
        return;
    len = cp->length_ns;
    n = cp->n_full;
    pps_format_ns(len / n, a, sizeof(a));
    pps_format_ns(cp->window_ns / n, b, sizeof(b));
    fprintf(f, "\ncritical path  %s of the %s window (%.1f%%), mean of %d iteration%s\n", a, b,
            cp->window_ns > 0 ? 100 * len / cp->window_ns : 0.0, n, n == 1 ? "" : "s");
    fprintf(f, "  by stage   ");
    for (int s = 0; s < cp->n_stages; s++)
        if (rep->total[s].present)
            fprintf(f, " s%d %.1f%%", s, 100 * cp->stage_ns[s] / len);
    fprintf(f, "\n  by kind    ");
    for (int k = 0; k < N_PATH_KINDS; k++)
        if (cp->kind_ns[path_kinds[k]] > 0)
            fprintf(f, " %s %.1f%%", pps_span_kind_name(path_kinds[k]),
                    100 * cp->kind_ns[path_kinds[k]] / len);
    fprintf(f, " comm %.1f%% wait %.1f%%%s\n", 100 * cp->comm_ns / len, 100 * cp->wait_ns / len,
            cp->messages ? "" : " (no messages recorded: comm is the gaps between stages)");
    pps_critpath_chain(cp, cp->typical, chain, sizeof(chain));
    fprintf(f, "  iteration %d: ", cp->iters[cp->typical].iter);
    pps_text_put(f, chain);
    fputc('\n', f);
}

static void shares(struct pps_json *j, const char *key, double ns, double len)
{
    pps_json_begin_object(j, key);
    pps_json_int(j, "ns", (int64_t)llround(ns));
    pps_json_double(j, "share", len > 0 ? ns / len : NAN);
    pps_json_end_object(j);
}

/* Per iteration: sums over n iterations divided by n. */
static void json_kinds(struct pps_json *j, const double *kind_ns, double comm, double wait,
                       double len, int n)
{
    pps_json_begin_object(j, "by_kind");
    for (int k = 0; k < N_PATH_KINDS; k++)
        shares(j, pps_span_kind_name(path_kinds[k]), kind_ns[path_kinds[k]] / n, len / n);
    shares(j, "comm", comm / n, len / n);
    shares(j, "wait", wait / n, len / n);
    pps_json_end_object(j);
}

static void json_steps(struct pps_json *j, const struct pps_critpath *cp,
                       const struct pps_critpath_iter *ci)
{
    pps_json_begin_array(j, "steps");
    for (size_t i = 0; i < ci->n_steps; i++) {
        const struct pps_critpath_step *st = &ci->steps[i];

        pps_json_begin_object(j, NULL);
        pps_json_string(j, "kind", pps_span_kind_name(st->kind));
        pps_json_int(j, "stage", st->stage);
        if (cp->v > 1)
            pps_json_int(j, "chunk", st->chunk);
        pps_json_int(j, "mb", st->mb);
        pps_json_int(j, "start_ns", st->start_ns);
        pps_json_int(j, "end_ns", st->end_ns);
        pps_json_int(j, "on_path_ns", (int64_t)llround(st->on_path_ns));
        pps_json_string(j, "via", pps_critpath_via_name(st->via));
        if (st->via == PPS_CRITPATH_INPUT && cp->messages)
            pps_json_bool(j, "waited", st->waited);
        pps_json_int(j, "comm_ns", (int64_t)llround(st->comm_ns));
        pps_json_int(j, "wait_ns", (int64_t)llround(st->wait_ns));
        pps_json_end_object(j);
    }
    pps_json_end_array(j);
}

void pps_report_critpath_json(struct pps_json *j, const struct pps_report *rep,
                              const struct pps_critpath *cp)
{
    char chain[4096];
    const struct pps_critpath_iter *ty;

    if (!has_path(cp)) {
        pps_json_null(j, "critical_path");
        return;
    }
    ty = &cp->iters[cp->typical];
    pps_json_begin_object(j, "critical_path");
    pps_json_int(j, "iterations", cp->n_full);
    pps_json_int(j, "length_ns", (int64_t)llround(cp->length_ns / cp->n_full));
    pps_json_int(j, "window_ns", (int64_t)llround(cp->window_ns / cp->n_full));
    pps_json_double(j, "share_of_window", cp->window_ns > 0 ? cp->length_ns / cp->window_ns : NAN);
    pps_json_bool(j, "messages", cp->messages);
    /* Figures per iteration: the whole iterations' means. */
    pps_json_begin_array(j, "by_stage");
    for (int s = 0; s < cp->n_stages; s++) {
        if (!rep->total[s].present)
            continue;
        pps_json_begin_object(j, NULL);
        pps_json_int(j, "stage", s);
        pps_json_int(j, "ns", (int64_t)llround(cp->stage_ns[s] / cp->n_full));
        pps_json_double(j, "share", cp->stage_ns[s] / cp->length_ns);
        pps_json_end_object(j);
    }
    pps_json_end_array(j);
    json_kinds(j, cp->kind_ns, cp->comm_ns, cp->wait_ns, cp->length_ns, cp->n_full);
    pps_json_begin_array(j, "per_iteration");
    for (int it = 0; it < cp->n_iters; it++) {
        const struct pps_critpath_iter *ci = &cp->iters[it];

        pps_json_begin_object(j, NULL);
        pps_json_int(j, "iter", ci->iter);
        pps_json_bool(j, "partial", ci->partial);
        pps_json_int(j, "length_ns", (int64_t)llround(ci->length_ns));
        pps_json_int(j, "window_ns", (int64_t)llround(ci->window_ns));
        pps_json_int(j, "steps", (int64_t)ci->n_steps);
        pps_json_end_object(j);
    }
    pps_json_end_array(j);
    pps_json_begin_object(j, "typical");
    pps_json_int(j, "iter", ty->iter);
    pps_json_int(j, "length_ns", (int64_t)llround(ty->length_ns));
    pps_json_int(j, "window_ns", (int64_t)llround(ty->window_ns));
    pps_critpath_chain(cp, cp->typical, chain, sizeof(chain));
    pps_json_string(j, "chain", chain);
    pps_json_begin_array(j, "by_stage_ns");
    for (int s = 0; s < cp->n_stages; s++)
        pps_json_int(j, NULL, (int64_t)llround(ty->stage_ns[s]));
    pps_json_end_array(j);
    json_kinds(j, ty->kind_ns, ty->comm_ns, ty->wait_ns, ty->length_ns, 1);
    json_steps(j, cp, ty);
    pps_json_end_object(j);
    pps_json_end_object(j);
}
