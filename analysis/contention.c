/*
 * contention.c - host contention: how long the stage threads waited, runnable, for a CPU core.
 * The runtime stores what each stage thread got from its host as meta of its shard (rank =
 * stage): host_run_delay_ns and host_wall_ns, cumulative, with the host's name and the cores its
 * process may use (host_cpus). Their ratio is the share of a stage's time that no schedule, link
 * or op cost explains: the thread wanted to run and the machine had no core for it.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis_int.h"

/* Rank r's value of key as a non-negative integer, or -1. */
static int64_t meta_count(const struct pps_run *run, int r, const char *key)
{
    for (size_t i = 0; i < run->n_meta; i++) {
        const struct pps_meta_entry *e = &run->meta[i];
        char *end;
        long long v;

        if (e->rank != r || strcmp(e->key, key))
            continue;
        v = strtoll(e->value, &end, 10);
        return end != e->value && *end == '\0' && v >= 0 ? v : -1;
    }
    return -1;
}

static const char *meta_text(const struct pps_run *run, int r, const char *key)
{
    for (size_t i = 0; i < run->n_meta; i++)
        if (run->meta[i].rank == r && !strcmp(run->meta[i].key, key))
            return run->meta[i].value;
    return NULL;
}

#define MAX_CPUS 4096

/* Adds the cores of a list like "0-3,8" to set; 0, or -1 for a list that is not one. */
static int add_cpu_list(const char *list, unsigned char *set)
{
    const char *p = list;

    while (*p) {
        char *end;
        long a = strtol(p, &end, 10), b;

        if (end == p || a < 0 || a >= MAX_CPUS)
            return -1;
        b = a;
        if (*end == '-') {
            p = end + 1;
            b = strtol(p, &end, 10);
            if (end == p || b < a || b >= MAX_CPUS)
                return -1;
        }
        for (long c = a; c <= b; c++)
            set[c] = 1;
        if (*end == ',')
            end++;
        else if (*end)
            return -1;
        p = end;
    }
    return 0;
}

int pps__analysis_host(const struct pps_run *run, struct pps_report *rep, struct pps_err *err)
{
    struct pps_host_stats *h = &rep->host;

    memset(h, 0, sizeof(*h));
    h->contention = h->worst = NAN;
    h->worst_stage = -1;
    h->share = malloc((rep->n_stages ? (size_t)rep->n_stages : 1) * sizeof(*h->share));
    if (!h->share)
        return pps_err_set(err, PPS_ENOMEM, "out of memory for the host's figures");
    for (int s = 0; s < rep->n_stages; s++)
        h->share[s] = NAN;
    for (int r = 0; r < rep->n_stages; r++) {
        int64_t delay = meta_count(run, r, "host_run_delay_ns");
        int64_t wall = meta_count(run, r, "host_wall_ns");
        const char *host = meta_text(run, r, "host");
        unsigned char set[MAX_CPUS];
        int same = 0, listed = 1;
        int64_t cpus = 0;

        /* Figures that cannot be (a wait for a core longer than the time it lies in, more than
         * a year of it) are not believed: that rank's host is unknown. */
        if (delay < 0 || wall <= 0 || delay > wall || wall > (int64_t)3.2e16)
            continue;
        h->known = 1;
        h->share[r] = (double)delay / (double)wall;
        h->run_delay_ns += (double)delay;
        h->wall_ns += (double)wall;
        if (isnan(h->worst) || (double)delay / (double)wall > h->worst) {
            h->worst = (double)delay / (double)wall;
            h->worst_stage = r;
        }
        /* The stages that share this rank's host, and the cores they may use there: the union
         * of their affinity lists (ranks bound to cores of their own share none), else the
         * most any of them may use. */
        memset(set, 0, sizeof(set));
        for (int q = 0; q < rep->n_stages; q++) {
            const char *other = meta_text(run, q, "host");
            const char *list = meta_text(run, q, "host_cpu_list");
            int64_t c = meta_count(run, q, "host_cpus");

            if (meta_count(run, q, "host_wall_ns") <= 0 ||
                (host && other ? strcmp(host, other) != 0 : host != other))
                continue;
            same++;
            cpus = c > cpus ? c : cpus;
            if (!list || add_cpu_list(list, set) < 0)
                listed = 0;
        }
        if (listed) {
            cpus = 0;
            for (int c = 0; c < MAX_CPUS; c++)
                cpus += set[c];
        }
        if (same > h->stage_threads) {
            h->stage_threads = same;
            h->cpus = (int)cpus;
        }
    }
    if (h->known && h->wall_ns > 0)
        h->contention = h->run_delay_ns / h->wall_ns;
    return 0;
}

static double op_time(const struct pps_stage_stats *st)
{
    return st->busy_ns[PPS_SPAN_F] + st->busy_ns[PPS_SPAN_B] + st->busy_ns[PPS_SPAN_W] +
           st->busy_ns[PPS_SPAN_BW];
}

double pps__analysis_stage_compute(const struct pps_report *rep, int s, double *less_ns)
{
    double t = op_time(&rep->total[s]), others = 0, less = 0;
    int n = 0;

    if (less_ns)
        *less_ns = 0;
    if (!pps__analysis_contended(rep) || !rep->host.share || isnan(rep->host.share[s]))
        return t;
    for (int q = 0; q < rep->n_stages; q++)
        if (q != s && rep->total[q].present && !isnan(rep->host.share[q])) {
            others += rep->host.share[q];
            n++;
        }
    if (n > 0 && rep->host.share[s] > others / n)
        less = (rep->host.share[s] - others / n) * rep->total_window_ns;
    less = less < t ? less : t;
    if (less_ns)
        *less_ns = less;
    return t - less;
}
