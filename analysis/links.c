/*
 * links.c - what each link between two stages cost, per direction, measured from the messages
 * themselves: the sender's SEND and the receiver's RECV of one message carry the same id (corr;
 * pps_trace_p2p_msg), and the transfer is the time from the send's start to the receive's end,
 * both on rank 0's clock after the reader's alignment.
 *
 * Where the receiver was already waiting for the message (a WAIT with the same id), the
 * receive ended when the message arrived, so the transfer is what the message took, wake-up
 * included. Where the receiver came late, the message sat waiting for it, and the transfer is
 * only an upper bound: a link's figure is the median over the receives that waited, and the
 * smallest transfer where none did (marked bounded).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis_int.h"

/* One end of a message: the link it crossed, its id, and a time (the send's start, or the
 * receive's end). */
struct end {
    int from, to;
    int64_t corr;
    int64_t t;
    int blocked; /* receives: the receiver waited for it */
};

static int end_cmp(const void *a, const void *b)
{
    const struct end *x = a, *y = b;

    if (x->from != y->from)
        return x->from < y->from ? -1 : 1;
    if (x->to != y->to)
        return x->to < y->to ? -1 : 1;
    return (x->corr > y->corr) - (x->corr < y->corr);
}

static int double_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

/* The ends of messages of one kind in the run: SENDs (to their peer), RECVs and WAITs (from
 * theirs). n counts first when ends is NULL. */
static size_t collect(const struct pps_run *run, int kind, struct end *ends)
{
    size_t n = 0;

    for (int s = 0; s < run->n_stages; s++)
        for (size_t i = 0; i < run->stages[s].n; i++) {
            const struct pps_span *sp = &run->stages[s].spans[i];

            if (sp->kind != kind || sp->corr <= 0 || sp->peer < 0 || sp->peer >= run->n_stages ||
                sp->peer == s)
                continue;
            if (ends) {
                struct end *e = &ends[n];
                e->from = kind == PPS_SPAN_SEND ? s : sp->peer;
                e->to = kind == PPS_SPAN_SEND ? sp->peer : s;
                e->corr = sp->corr;
                e->t = kind == PPS_SPAN_SEND ? sp->start_ns : sp->end_ns;
                e->blocked = 0;
            }
            n++;
        }
    return n;
}

static int collect_sorted(const struct pps_run *run, int kind, struct end **out, size_t *n)
{
    *n = collect(run, kind, NULL);
    *out = malloc((*n ? *n : 1) * sizeof(**out));
    if (!*out)
        return PPS_ENOMEM;
    collect(run, kind, *out);
    qsort(*out, *n, sizeof(**out), end_cmp);
    return 0;
}

/* Marks the receives whose receiver waited: a WAIT with the same link and id. */
static void mark_blocked(struct end *recv, size_t nr, const struct end *wait, size_t nw)
{
    size_t j = 0;

    for (size_t i = 0; i < nr; i++) {
        while (j < nw && end_cmp(&wait[j], &recv[i]) < 0)
            j++;
        recv[i].blocked = j < nw && end_cmp(&wait[j], &recv[i]) == 0;
    }
}

static double median(double *x, size_t n)
{
    qsort(x, n, sizeof(*x), double_cmp);
    return n % 2 ? x[n / 2] : (x[n / 2 - 1] + x[n / 2]) / 2;
}

int pps__analysis_links(const struct pps_run *run, struct pps_report *rep, struct pps_err *err)
{
    struct end *send = NULL, *recv = NULL, *wait = NULL;
    size_t ns = 0, nr = 0, nw = 0, cap = 0;
    double *all = NULL, *blocked = NULL;
    int ret = 0;

    rep->n_links = 0;
    rep->links = NULL;
    if (collect_sorted(run, PPS_SPAN_SEND, &send, &ns) ||
        collect_sorted(run, PPS_SPAN_RECV, &recv, &nr) ||
        collect_sorted(run, PPS_SPAN_WAIT, &wait, &nw)) {
        ret = pps_err_set(err, PPS_ENOMEM, "out of memory matching the run's messages");
        goto out;
    }
    mark_blocked(recv, nr, wait, nw);
    all = malloc((nr ? nr : 1) * sizeof(*all));
    blocked = malloc((nr ? nr : 1) * sizeof(*blocked));
    if (!all || !blocked) {
        ret = pps_err_set(err, PPS_ENOMEM, "out of memory timing the run's messages");
        goto out;
    }
    /* Both lists sorted by (from, to, id): one walk pairs each receive with its send, link by
     * link; a link's figures are made when the walk leaves it. */
    for (size_t i = 0, j = 0; i < nr;) {
        int from = recv[i].from, to = recv[i].to, dup = 0;
        size_t n_all = 0, n_blocked = 0;
        double skew = 0;
        struct pps_link_stats *l;

        for (; i < nr && recv[i].from == from && recv[i].to == to; i++) {
            dup |= i + 1 < nr && end_cmp(&recv[i], &recv[i + 1]) == 0;
            while (j < ns && end_cmp(&send[j], &recv[i]) < 0)
                j++;
            if (j < ns && end_cmp(&send[j], &recv[i]) == 0) {
                double d = (double)(recv[i].t - send[j].t);
                dup |= j + 1 < ns && end_cmp(&send[j], &send[j + 1]) == 0;
                /* A receive that ends before its send starts: the ranks' clocks disagree, by
                 * more than their alignment's error where it is more than a microsecond. */
                if (-d > 1000 && -d > skew)
                    skew = -d;
                all[n_all++] = d;
                if (recv[i].blocked)
                    blocked[n_blocked++] = d;
                j++;
            }
        }
        if (n_all == 0)
            continue;
        if ((size_t)rep->n_links == cap) {
            size_t c = cap ? 2 * cap : 8;
            void *p = realloc(rep->links, c * sizeof(*rep->links));
            if (!p) {
                ret = pps_err_set(err, PPS_ENOMEM, "out of memory for the run's links");
                goto out;
            }
            rep->links = p;
            cap = c;
        }
        l = &rep->links[rep->n_links++];
        memset(l, 0, sizeof(*l));
        l->from = from;
        l->to = to;
        l->skew_ns = skew;
        l->dup_ids = dup;
        l->n_msgs = (long)n_all;
        l->n_blocked = (long)n_blocked;
        l->bounded = n_blocked == 0;
        l->min_ns = all[0];
        for (size_t k = 1; k < n_all; k++)
            l->min_ns = all[k] < l->min_ns ? all[k] : l->min_ns;
        l->latency_ns = n_blocked ? median(blocked, n_blocked) : l->min_ns;
        /* Clocks aligned to within their sync's error can put a receive's end a hair before
         * its send's start: within that, a transfer is 0, not negative (skew_ns says beyond). */
        if (l->latency_ns < 0)
            l->latency_ns = 0;
        if (l->min_ns < 0)
            l->min_ns = 0;
    }
out:
    if (ret < 0) {
        free(rep->links);
        rep->links = NULL;
        rep->n_links = 0;
    }
    free(send);
    free(recv);
    free(wait);
    free(all);
    free(blocked);
    return ret;
}

int pps__analysis_contended(const struct pps_report *rep)
{
    return rep->host.known && rep->host.contention >= PPS_CONTENTION_MIN;
}

double pps__analysis_link_ns(const struct pps_report *rep, const struct pps_link_stats *l)
{
    return pps__analysis_contended(rep) ? l->min_ns : l->latency_ns;
}

int pps__analysis_links_matter(const struct pps_report *rep)
{
    double gap = rep->judged_measured - rep->judged_predicted;
    double rise = rep->pred_links - rep->judged_predicted;

    if (isnan(rep->pred_links) || isnan(gap) || !(gap > rep->tolerance) || !(rise > 0))
        return 0;
    return rise > rep->tolerance || rise >= gap / 2 ||
           rep->judged_measured - rep->pred_links <= rep->tolerance;
}

static double extra_of(const struct pps_report *rep, const struct pps_link_stats *l)
{
    return pps__analysis_link_ns(rep, l) - rep->tcomm_ns;
}

int pps__analysis_slow_links(const struct pps_report *rep, int *idx, int max)
{
    double top = 0;
    int n = 0;

    for (int i = 0; i < rep->n_links; i++)
        if (!rep->links[i].dup_ids && !(rep->links[i].skew_ns > 0))
            top = extra_of(rep, &rep->links[i]) > top ? extra_of(rep, &rep->links[i]) : top;
    if (!(top > 0))
        return 0;
    for (int i = 0; i < rep->n_links; i++)
        if (!rep->links[i].dup_ids && !(rep->links[i].skew_ns > 0) &&
            extra_of(rep, &rep->links[i]) >= top / 2) {
            if (n < max)
                idx[n] = i;
            n++;
        }
    return n;
}

void pps__analysis_slow_links_text(const struct pps_report *rep, char *buf, size_t len)
{
    int idx[4], n = pps__analysis_slow_links(rep, idx, 4), shown = n < 4 ? n : 3;
    double lat[4], sum = 0;
    char a[32], b[80];
    size_t used = 0;

    if (!len)
        return;
    buf[0] = '\0';
    if (n == 0) {
        snprintf(buf, len, "no link takes longer than the prediction assumes");
        return;
    }
    pps_format_ns(rep->tcomm_ns, b, sizeof(b));
    if (n == rep->n_links && n >= 3) {
        for (int i = 0; i < rep->n_links; i++)
            sum += pps__analysis_link_ns(rep, &rep->links[i]);
        pps_format_ns(sum / rep->n_links, a, sizeof(a));
        snprintf(buf, len, "every link takes about %s per message where the prediction assumes %s",
                 a, b);
        return;
    }
    if (rep->tcomm_measured)
        snprintf(b + strlen(b), sizeof(b) - strlen(b), " (the run's typical link)");
    for (int i = 0; i < shown; i++)
        lat[i] = pps__analysis_link_ns(rep, &rep->links[idx[i]]);
    used += (size_t)snprintf(buf, len, "%s", n == 1 ? "the link " : "links ");
    for (int i = 0; i < shown && used < len; i++)
        used += (size_t)snprintf(buf + used, len - used, "%s%d->%d", i ? ", " : "",
                                 rep->links[idx[i]].from, rep->links[idx[i]].to);
    if (n > shown && used < len)
        used += (size_t)snprintf(buf + used, len - used, " and %d more", n - shown);
    sum = 0;
    for (int i = 0; i < shown; i++)
        sum += lat[i];
    pps_format_ns(sum / shown, a, sizeof(a));
    if (used < len)
        snprintf(buf + used, len - used, " take%s %s per message where the prediction assumes %s",
                 n == 1 ? "s" : "", a, b);
}
