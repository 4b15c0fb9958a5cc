/*
 * flags.c - what a measured run says is wrong, each finding with the figures that show it:
 * a stage that computes more than the others (imbalance), a stage that waits for data longer
 * than its schedule explains (communication stall), and a bubble the schedule does not explain.
 *
 * Everything comes from the report; the run is read only to name the peer a stage waited on.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"

static const int op_kinds[] = {PPS_SPAN_F, PPS_SPAN_B, PPS_SPAN_W, PPS_SPAN_BW};
#define N_OP_KINDS ((int)(sizeof(op_kinds) / sizeof(op_kinds[0])))

const char *pps_flag_kind_name(int kind)
{
    switch (kind) {
    case PPS_FLAG_IMBALANCE:
        return "imbalance";
    case PPS_FLAG_COMM_STALL:
        return "stall";
    case PPS_FLAG_BUBBLE_ABOVE:
        return "bubble";
    default:
        return "?";
    }
}

void pps_flag_list_release(struct pps_flag_list *list)
{
    if (!list)
        return;
    free(list->items);
    list->items = NULL;
    list->n = 0;
}

/* "812 ns", "1.23 ms", "45.6 s": three significant figures, like the UI prints durations. */
static void fmt_ns(double ns, char *buf, size_t len)
{
    static const struct {
        double ns;
        const char *unit;
    } units[] = {{1e9, "s"}, {1e6, "ms"}, {1e3, "us"}, {1, "ns"}};
    double a = fabs(ns);
    size_t u = 0;

    while (u + 1 < sizeof(units) / sizeof(units[0]) && a < units[u].ns)
        u++;
    a = ns / units[u].ns;
    snprintf(buf, len, "%.*f %s", fabs(a) >= 100 ? 0 : fabs(a) >= 10 ? 1 : 2, a, units[u].unit);
}

static double op_time(const struct pps_stage_stats *st)
{
    double t = 0;

    for (int k = 0; k < N_OP_KINDS; k++)
        t += st->busy_ns[op_kinds[k]];
    return t;
}

static long op_count(const struct pps_stage_stats *st)
{
    long n = 0;

    for (int k = 0; k < N_OP_KINDS; k++)
        n += st->n_ops[op_kinds[k]];
    return n;
}

static struct pps_flag *add_flag(struct pps_flag_list *list, size_t *cap)
{
    struct pps_flag *f;

    if (list->n == *cap) {
        size_t n = *cap ? *cap * 2 : 8;
        f = realloc(list->items, n * sizeof(*f));
        if (!f)
            return NULL;
        list->items = f;
        *cap = n;
    }
    f = &list->items[list->n++];
    memset(f, 0, sizeof(*f));
    f->stage = -1;
    f->peer = -1;
    return f;
}

static int flag_worse(const void *a, const void *b)
{
    const struct pps_flag *x = a, *y = b;

    return (x->value < y->value) - (x->value > y->value);
}

static int find_imbalance(const struct pps_report *rep, struct pps_flag_list *list, size_t *cap)
{
    double mean = 0;
    size_t first = list->n;

    if (rep->n_stages < 2 || rep->n_iters < 1)
        return 0;
    for (int s = 0; s < rep->n_stages; s++)
        mean += op_time(&rep->total[s]);
    mean /= rep->n_stages;
    if (!(mean > 0))
        return 0;
    for (int s = 0; s < rep->n_stages; s++) {
        double t = op_time(&rep->total[s]);
        char a[32], b[32];
        const char *holds = "";
        struct pps_flag *f;

        if (!(t > (1 + PPS_FLAG_IMBALANCE_MARGIN) * mean))
            continue;
        if (!(f = add_flag(list, cap)))
            return PPS_ENOMEM;
        if (s == 0)
            holds = "; it holds the embedding (first stage)";
        else if (s == rep->n_stages - 1)
            holds = "; it holds the LM head (last stage)";
        fmt_ns(t / rep->n_iters, a, sizeof(a));
        fmt_ns(mean / rep->n_iters, b, sizeof(b));
        f->kind = PPS_FLAG_IMBALANCE;
        f->stage = s;
        f->value = t / mean;
        snprintf(f->text, sizeof(f->text),
                 "stage %d computes %.2fx the mean: %s vs %s of F/B/W per iteration%s", s, f->value,
                 a, b, holds);
    }
    if (list->n > first)
        qsort(list->items + first, list->n - first, sizeof(*list->items), flag_worse);
    return 0;
}

/* The stage s waited on longest (WAIT spans, or RECV when wait_kind is RECV), or -1. */
static int main_peer(const struct pps_run *run, int s, int wait_kind)
{
    double *by_peer;
    int best = -1;

    if (!run || s >= run->n_stages || run->n_stages < 1)
        return -1;
    by_peer = calloc((size_t)run->n_stages, sizeof(*by_peer));
    if (!by_peer)
        return -1; /* the flag still stands without its peer */
    for (size_t i = 0; i < run->stages[s].n; i++) {
        const struct pps_span *sp = &run->stages[s].spans[i];

        if (sp->kind == wait_kind && sp->peer >= 0 && sp->peer < run->n_stages &&
            sp->end_ns > sp->start_ns)
            by_peer[sp->peer] += (double)(sp->end_ns - sp->start_ns);
    }
    for (int p = 0; p < run->n_stages; p++)
        if (by_peer[p] > 0 && (best < 0 || by_peer[p] > by_peer[best]))
            best = p;
    free(by_peer);
    return best;
}

/*
 * A stage stalls on communication when it idles longer than its schedule says it should (the
 * prediction runs the schedule with the stage's own op costs) and its waits for data cover that
 * extra idle: the stall is the smaller of the two. Against the stage's compute, per op.
 */
static int find_stalls(const struct pps_run *run, const struct pps_report *rep,
                       struct pps_flag_list *list, size_t *cap)
{
    if (!rep->have_prediction || !rep->pred.idle || rep->n_iters < 1)
        return 0;
    for (int s = 0; s < rep->n_stages && s < rep->pred.p; s++) {
        const struct pps_stage_stats *st = &rep->total[s];
        int kind = st->busy_ns[PPS_SPAN_WAIT] > 0 ? PPS_SPAN_WAIT : PPS_SPAN_RECV;
        double wait = st->busy_ns[kind], extra_idle, stall, per_op, mean_op;
        long n_ops = op_count(st);
        char a[32], b[32], c[32], peer[48] = "";
        struct pps_flag *f;

        if (!(wait > 0) || n_ops < 1 || !(op_time(st) > 0))
            continue;
        extra_idle = st->idle_ns - rep->pred.idle[s] * rep->n_iters;
        stall = wait < extra_idle ? wait : extra_idle;
        per_op = stall / (double)n_ops;
        mean_op = op_time(st) / (double)n_ops;
        if (!(stall > 0) || per_op < PPS_FLAG_STALL_RATIO * mean_op)
            continue;
        if (!(f = add_flag(list, cap)))
            return PPS_ENOMEM;
        f->kind = PPS_FLAG_COMM_STALL;
        f->stage = s;
        f->value = per_op / mean_op;
        f->peer = main_peer(run, s, kind);
        if (f->peer >= 0)
            snprintf(peer, sizeof(peer), ", mostly on stage %d", f->peer);
        fmt_ns(per_op, a, sizeof(a));
        fmt_ns(mean_op, b, sizeof(b));
        fmt_ns(stall / rep->n_iters, c, sizeof(c));
        snprintf(f->text, sizeof(f->text),
                 "stage %d waits for data %s per iteration beyond its schedule's idle: %s per "
                 "op, %.2fx its mean op (%s)%s",
                 s, c, a, f->value, b, peer);
    }
    return 0;
}

static int find_bubble(const struct pps_report *rep, struct pps_flag_list *list, size_t *cap)
{
    struct pps_flag *f;

    if (pps_report_verdict(rep, NULL, 0) != PPS_VERDICT_ABOVE)
        return 0;
    if (!(f = add_flag(list, cap)))
        return PPS_ENOMEM;
    f->kind = PPS_FLAG_BUBBLE_ABOVE;
    f->value = rep->bubble - rep->pred.bubble;
    snprintf(f->text, sizeof(f->text),
             "measured bubble %.1f%% vs %.1f%% predicted for %s (+%.1f pp): imbalance or "
             "communication, not the schedule",
             100 * rep->bubble, 100 * rep->pred.bubble,
             rep->sched_kind >= 0 ? pps_sched_kind_name(rep->sched_kind) : "its schedule",
             100 * f->value);
    return 0;
}

int pps_analysis_flags(const struct pps_run *run, const struct pps_report *rep,
                       struct pps_flag_list *list, struct pps_err *err)
{
    size_t cap = 0;
    int rc;

    if (!list)
        return pps_err_set(err, PPS_EINVAL, "no flag list to fill");
    list->items = NULL;
    list->n = 0;
    if (!rep)
        return 0;
    rc = find_imbalance(rep, list, &cap);
    if (!rc)
        rc = find_stalls(run, rep, list, &cap);
    if (!rc)
        rc = find_bubble(rep, list, &cap);
    if (rc < 0) {
        pps_flag_list_release(list);
        return pps_err_set(err, rc, "out of memory for the flags");
    }
    return 0;
}
