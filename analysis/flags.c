/*
 * flags.c - what a measured run says is wrong, each finding with the figures that show it: a
 * stage that computes more than the others (imbalance), links slower than the prediction
 * assumes, a host that left the stage threads waiting for a core, a stage that waits for data
 * longer than all of that explains (a stall), and a bubble that nothing measured explains.
 *
 * Everything comes from the report; the run is read for its metadata (which stage holds the
 * model's ends) and to name the peer a stage waited on.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis_int.h"

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
    case PPS_FLAG_SLOW_LINK:
        return "link";
    case PPS_FLAG_CONTENTION:
        return "contention";
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

/* Whether the run's metadata says stage s holds the model's end named by key. */
static int holds(const struct pps_run *run, const char *key, int s)
{
    const char *v = run ? pps_run_meta(run, key) : NULL;
    char *end;
    long n;

    if (!v)
        return 0;
    n = strtol(v, &end, 10);
    return end != v && *end == '\0' && n == s;
}

/*
 * A stage that the run's p counts but that recorded nothing: its rank's shard is not in the run
 * (the status says which ranks are missing), not a stage with nothing to do. No flag is about it,
 * and none compares a stage with it: its zero would make every other stage look heavy.
 */
static int recorded(const struct pps_report *rep, int s)
{
    return rep->total[s].present && (!rep->stage_spans || rep->stage_spans[s] > 0);
}

static int find_imbalance(const struct pps_run *run, const struct pps_report *rep,
                          struct pps_flag_list *list, size_t *cap)
{
    double total = 0;
    size_t first = list->n;
    int n_recorded = 0;

    for (int s = 0; s < rep->n_stages; s++)
        if (recorded(rep, s)) {
            total += op_time(&rep->total[s]);
            n_recorded++;
        }
    if (n_recorded < 2 || rep->n_full < 1)
        return 0;
    for (int s = 0; s < rep->n_stages; s++) {
        double less, t = pps__analysis_stage_compute(rep, s, &less), others;
        char a[32], b[32], c[32], ends[160] = "";
        struct pps_flag *f;

        if (!recorded(rep, s))
            continue;
        others = (total - op_time(&rep->total[s])) / (n_recorded - 1);
        if (!(others > 0) || !(t > (1 + PPS_FLAG_IMBALANCE_MARGIN) * others))
            continue;
        if (!(f = add_flag(list, cap)))
            return PPS_ENOMEM;
        if (holds(run, "model_embedding_stage", s) && holds(run, "model_head_stage", s))
            snprintf(ends, sizeof(ends), "; it holds the embedding and the LM head");
        else if (holds(run, "model_embedding_stage", s))
            snprintf(ends, sizeof(ends), "; it holds the embedding");
        else if (holds(run, "model_head_stage", s))
            snprintf(ends, sizeof(ends), "; it holds the LM head and the loss");
        if (less > 0) {
            size_t n = strlen(ends);
            pps_format_ns(less / rep->n_full, c, sizeof(c));
            snprintf(ends + n, sizeof(ends) - n,
                     " (less the %s per iteration it waited for a core beyond the others)", c);
        }
        pps_format_ns(t / rep->n_full, a, sizeof(a));
        pps_format_ns(others / rep->n_full, b, sizeof(b));
        f->kind = PPS_FLAG_IMBALANCE;
        f->stage = s;
        f->value = t / others;
        snprintf(f->text, sizeof(f->text),
                 "stage %d computes %.2fx the other stages' mean: %s vs %s of F/B/W per "
                 "iteration%s",
                 s, f->value, a, b, ends);
    }
    if (list->n > first) {
        struct pps_flag *worst = &list->items[first];

        qsort(list->items + first, list->n - first, sizeof(*list->items), flag_worse);
        /* What it costs: the worst one says what balanced stages would give. */
        if (!isnan(rep->pred_balanced) && !isnan(rep->judged_predicted)) {
            size_t n = strlen(worst->text);
            snprintf(worst->text + n, sizeof(worst->text) - n,
                     "; balanced stages would give a %s of %.1f%%, not %.1f%%",
                     rep->basis == PPS_BASIS_STEADY ? "steady bubble" : "bubble",
                     100 * rep->pred_balanced, 100 * rep->judged_predicted);
        }
    }
    return 0;
}

static int links_matter(const struct pps_report *rep)
{
    return pps__analysis_links_matter(rep);
}

static int find_slow_links(const struct pps_report *rep, struct pps_flag_list *list, size_t *cap)
{
    int idx[64], n, shown;
    char a[32], b[64], c[32], tail[160];

    if (!links_matter(rep))
        return 0;
    n = pps__analysis_slow_links(rep, idx, 64);
    shown = n < 64 ? n : 64;
    pps_format_ns(rep->tcomm_ns, c, sizeof(c));
    snprintf(b, sizeof(b), rep->tcomm_measured ? "the run's typical link (%s)" : "the %s the prediction assumes", c);
    snprintf(tail, sizeof(tail), "with the links as measured the simulator predicts %.1f%% (%s %.1f%%)",
             100 * rep->pred_links, "measured", 100 * rep->judged_measured);
    if (n >= 3 && n == rep->n_links) {
        struct pps_flag *f = add_flag(list, cap);
        char links[160];

        if (!f)
            return PPS_ENOMEM;
        pps__analysis_slow_links_text(rep, links, sizeof(links));
        f->kind = PPS_FLAG_SLOW_LINK;
        for (int i = 0; i < n; i++)
            f->value += (pps__analysis_link_ns(rep, &rep->links[idx[i]]) - rep->tcomm_ns) / n;
        snprintf(f->text, sizeof(f->text), "communication: %s; %s", links, tail);
        return 0;
    }
    for (int i = 0; i < shown; i++) {
        const struct pps_link_stats *l = &rep->links[idx[i]];
        struct pps_flag *f = add_flag(list, cap);

        if (!f)
            return PPS_ENOMEM;
        f->kind = PPS_FLAG_SLOW_LINK;
        f->stage = l->from;
        f->peer = l->to;
        f->value = pps__analysis_link_ns(rep, l) - rep->tcomm_ns;
        pps_format_ns(pps__analysis_link_ns(rep, l), a, sizeof(a));
        pps_format_ns(f->value, c, sizeof(c));
        if (pps__analysis_contended(rep))
            snprintf(f->text, sizeof(f->text),
                     "the link %d->%d takes %s per message at the fastest of %ld (on this contended "
                     "host the others include waits for a core), %s more than %s; %s",
                     l->from, l->to, a, l->n_msgs, c, b, tail);
        else
            snprintf(f->text, sizeof(f->text),
                     "the link %d->%d takes %s per message (%s %ld%s), %s more than %s; %s",
                     l->from, l->to, a, l->bounded ? "at most, over" : "median of the",
                     l->bounded ? l->n_msgs : l->n_blocked,
                     l->bounded ? " messages" : " messages its receiver waited for", c, b, tail);
    }
    return 0;
}

static int contended(const struct pps_report *rep)
{
    return pps__analysis_contended(rep);
}

static int find_contention(const struct pps_report *rep, struct pps_flag_list *list, size_t *cap)
{
    const struct pps_host_stats *h = &rep->host;
    struct pps_flag *f;
    size_t n;

    if (!contended(rep))
        return 0;
    if (!(f = add_flag(list, cap)))
        return PPS_ENOMEM;
    f->kind = PPS_FLAG_CONTENTION;
    f->value = h->contention;
    n = (size_t)snprintf(f->text, sizeof(f->text),
                         "the stage threads waited for a CPU core %.1f%% of their time",
                         100 * h->contention);
    if (h->worst_stage >= 0 && n < sizeof(f->text))
        n += (size_t)snprintf(f->text + n, sizeof(f->text) - n, " (stage %d the most, %.1f%%)",
                              h->worst_stage, 100 * h->worst);
    if (h->cpus > 0 && n < sizeof(f->text))
        n += (size_t)snprintf(f->text + n, sizeof(f->text) - n, "; %d stage thread%s on %d core%s%s",
                              h->stage_threads, h->stage_threads == 1 ? "" : "s", h->cpus,
                              h->cpus == 1 ? "" : "s",
                              h->stage_threads > h->cpus
                                  ? ""
                                  : ", so other threads or processes took the cores");
    if (n < sizeof(f->text))
        snprintf(f->text + n, sizeof(f->text) - n, ": no schedule or link explains that time");
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

int pps__analysis_peers(const struct pps_run *run, struct pps_report *rep, struct pps_err *err)
{
    size_t n = rep->n_stages > 0 ? (size_t)rep->n_stages : 1;

    rep->stage_spans = calloc(n, sizeof(*rep->stage_spans));
    rep->wait_peer = calloc(n, sizeof(*rep->wait_peer));
    rep->recv_peer = calloc(n, sizeof(*rep->recv_peer));
    if (!rep->stage_spans || !rep->wait_peer || !rep->recv_peer)
        return pps_err_set(err, PPS_ENOMEM, "out of memory for the stages' peers");
    for (int s = 0; s < rep->n_stages; s++) {
        rep->stage_spans[s] = s < run->n_stages ? (int64_t)run->stages[s].n : 0;
        rep->wait_peer[s] = main_peer(run, s, PPS_SPAN_WAIT);
        rep->recv_peer[s] = main_peer(run, s, PPS_SPAN_RECV);
    }
    return 0;
}

/*
 * A stage stalls on communication when it idles longer than its schedule says it should (the
 * prediction runs the schedule with the stage's own op costs, and with the links as measured
 * where the run measured them), its waits for data cover that extra idle, and host contention
 * does not: the stall is the smaller of the first two, less the time the run's stage threads
 * waited for a core within the windows. Against the stage's compute, per op.
 */
static int find_stalls(const struct pps_run *run, const struct pps_report *rep,
                       struct pps_flag_list *list, size_t *cap)
{
    const struct pps_sim_result *ref = rep->have_pred_comm ? &rep->pred_comm : &rep->pred;
    double host_wait = 0;

    if (!rep->have_prediction || !ref->idle || rep->n_full < 1)
        return 0;
    if (rep->host.known && !isnan(rep->host.contention))
        host_wait = rep->host.contention * rep->n_present * rep->total_window_ns;
    for (int s = 0; s < rep->n_stages && s < ref->p; s++) {
        const struct pps_stage_stats *st = &rep->total[s];
        int kind = st->busy_ns[PPS_SPAN_WAIT] > 0 ? PPS_SPAN_WAIT : PPS_SPAN_RECV;
        double wait = st->busy_ns[kind], extra_idle, stall, per_op, mean_op;
        long n_ops = op_count(st);
        char a[32], b[32], c[32], peer[48] = "";
        struct pps_flag *f;

        if (!recorded(rep, s) || !(wait > 0) || n_ops < 1 || !(op_time(st) > 0))
            continue;
        extra_idle = st->idle_ns - ref->idle[s] * rep->n_full;
        stall = (wait < extra_idle ? wait : extra_idle) - host_wait;
        per_op = stall / (double)n_ops;
        mean_op = op_time(st) / (double)n_ops;
        if (!(stall > 0) || per_op < PPS_FLAG_STALL_RATIO * mean_op)
            continue;
        if (!(f = add_flag(list, cap)))
            return PPS_ENOMEM;
        f->kind = PPS_FLAG_COMM_STALL;
        f->stage = s;
        f->value = per_op / mean_op;
        f->peer = !rep->wait_peer ? -1 : kind == PPS_SPAN_WAIT ? rep->wait_peer[s] : rep->recv_peer[s];
        if (f->peer >= 0)
            snprintf(peer, sizeof(peer), ", mostly on stage %d", f->peer);
        pps_format_ns(per_op, a, sizeof(a));
        pps_format_ns(mean_op, b, sizeof(b));
        pps_format_ns(stall / rep->n_full, c, sizeof(c));
        snprintf(f->text, sizeof(f->text),
                 "stage %d waits for data %s per iteration beyond its schedule's idle%s: %s per "
                 "op, %.2fx its mean op (%s)%s",
                 s, c, rep->have_pred_comm ? " with the links as measured" : "", a, f->value, b,
                 peer);
    }
    return 0;
}

static int find_bubble(const struct pps_report *rep, struct pps_flag_list *list, size_t *cap)
{
    struct pps_flag *f;
    char why[400];
    const char *colon;

    if (pps_report_verdict(rep, why, sizeof(why)) != PPS_VERDICT_ABOVE || links_matter(rep) ||
        contended(rep))
        return 0;
    if (!(f = add_flag(list, cap)))
        return PPS_ENOMEM;
    f->kind = PPS_FLAG_BUBBLE_ABOVE;
    f->value = rep->judged_measured - rep->judged_predicted;
    colon = strstr(why, "): ");
    snprintf(f->text, sizeof(f->text),
             "%s %.1f%% vs %.1f%% predicted for %s (+%.1f pp, tolerance %.1f pp): %s",
             rep->basis == PPS_BASIS_STEADY ? "steady bubble" : "measured bubble",
             100 * rep->judged_measured, 100 * rep->judged_predicted,
             pps_report_schedule_name(NULL, rep) ? pps_report_schedule_name(NULL, rep)
                                                  : "its schedule",
             100 * f->value, 100 * rep->tolerance, colon ? colon + 3 : why);
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
    rc = find_imbalance(run, rep, list, &cap);
    if (!rc)
        rc = find_slow_links(rep, list, &cap);
    if (!rc)
        rc = find_contention(rep, list, &cap);
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
