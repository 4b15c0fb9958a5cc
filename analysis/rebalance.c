/*
 * rebalance.c - the partition search (rebalance.h): per-layer costs from the runtime's RANGE
 * spans, a per-stage cost model around them, and each candidate partition simulated.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis_int.h"
#include "rebalance.h"

#define MAX_EXHAUSTIVE 100000.0

/* What the search carries: the run's shape, its costs and the simulator's inputs. */
struct search {
    const struct pps_report *rep;
    int p, layers;
    double (*cost)[3];  /* layers + 2: 0 embedding, 1 + b block b, layers + 1 head */
    double (*resid)[3]; /* p: what a stage's op costs beyond its layers */
    int *parts;         /* p: blocks per stage, the candidate being built */
    struct pps_schedule sched;
    struct pps_sim_costs costs;
    long n_sim;
};

/* Layer index of a span's name, or -1 for a name that is no layer of a model of layers blocks. */
static int layer_of(const char *name, int layers)
{
    char *end;
    long b;

    if (!name)
        return -1;
    if (!strcmp(name, "embedding"))
        return 0;
    if (!strcmp(name, "head"))
        return layers + 1;
    if (strncmp(name, "block ", 6) != 0)
        return -1;
    b = strtol(name + 6, &end, 10);
    return end != name + 6 && *end == '\0' && b >= 0 && b < layers ? (int)b + 1 : -1;
}

/* Cost slot of an op kind: F 0, B and BW 1 (the report's tb of a fused run), W 2; -1 other. */
static int slot_of(int kind)
{
    switch (kind) {
    case PPS_SPAN_F:
        return 0;
    case PPS_SPAN_B:
    case PPS_SPAN_BW:
        return 1;
    case PPS_SPAN_W:
        return 2;
    default:
        return -1;
    }
}

/* One measured duration: of a layer (key l * 3 + k) or of a stage's op (key nl * 3 + st * 3 + k,
 * nl = layers + 2), k the cost slot. */
struct dur {
    long key;
    double d;
};

static int dur_cmp(const void *a, const void *b)
{
    const struct dur *x = a, *y = b;

    if (x->key != y->key)
        return (x->key > y->key) - (x->key < y->key);
    return (x->d > y->d) - (x->d < y->d);
}

/*
 * The median duration of each layer's spans by the op that holds them (s->cost; NaN: none) and
 * of each stage's ops by kind (op_med, p * 3; NaN: none); returns whether any layer span was
 * found, or PPS_ENOMEM. Medians, not means: on a shared host a rare stall of a thread lands in
 * one op, and a mean would carry it to every stage the layer is moved to. A span belongs to the
 * op on its stage that contains it.
 */
static int medians(const struct pps_run *run, struct search *s, double (*op_med)[3])
{
    long nl = s->layers + 2, n_keys = (nl + s->p) * 3;
    size_t n = 0, cap = 0;
    struct dur *v = NULL;
    int any = 0;

    for (int st = 0; st < run->n_stages && st < s->p; st++)
        cap += run->stages[st].n;
    v = malloc((cap ? cap : 1) * sizeof(*v));
    if (!v)
        return PPS_ENOMEM;
    for (int st = 0; st < run->n_stages && st < s->p; st++) {
        const struct pps_stage_spans *ss = &run->stages[st];
        size_t op = 0; /* the first op that may contain the next range */
        for (size_t i = 0; i < ss->n; i++) {
            const struct pps_span *r = &ss->spans[i];
            double d = r->end_ns > r->start_ns ? (double)(r->end_ns - r->start_ns) : 0;
            int l, k = slot_of(r->kind);
            if (k >= 0) {
                v[n++] = (struct dur){nl * 3 + st * 3 + k, d};
                continue;
            }
            if (r->kind != PPS_SPAN_RANGE || r->name_id < 0 || (size_t)r->name_id >= run->n_names)
                continue;
            l = layer_of(run->names[r->name_id], s->layers);
            if (l < 0)
                continue;
            /* Ops on a stage do not overlap, and both run by start time. */
            while (op < ss->n &&
                   (slot_of(ss->spans[op].kind) < 0 || ss->spans[op].end_ns < r->end_ns))
                op++;
            if (op < ss->n && ss->spans[op].start_ns <= r->start_ns)
                k = slot_of(ss->spans[op].kind);
            if (k < 0)
                continue;
            v[n++] = (struct dur){l * 3 + k, d};
            any = 1;
        }
    }
    if (n > 1)
        qsort(v, n, sizeof(*v), dur_cmp);
    for (long key = 0; key < n_keys; key++) {
        double *at =
            key < nl * 3 ? &s->cost[key / 3][key % 3] : &op_med[(key - nl * 3) / 3][key % 3];
        *at = NAN;
    }
    for (size_t i = 0; i < n;) {
        size_t j = i;
        long key = v[i].key;
        double med;
        while (j < n && v[j].key == key)
            j++;
        med = (j - i) % 2 ? v[i + (j - i) / 2].d
                          : (v[i + (j - i) / 2 - 1].d + v[i + (j - i) / 2].d) / 2;
        if (key < nl * 3)
            s->cost[key / 3][key % 3] = med;
        else
            op_med[(key - nl * 3) / 3][key % 3] = med;
        i = j;
    }
    free(v);
    return any;
}

/* A stage's op cost of slot k: its median op, else (no op of that kind) 0. */
static double op_cost(double (*op_med)[3], int st, int k)
{
    return isnan(op_med[st][k]) ? 0 : op_med[st][k];
}

/* The layers stage st holds under parts, as [lo, hi) of layer indices. */
static void stage_layers(const struct search *s, const int *parts, int st, int *lo, int *hi)
{
    int b0 = 0;

    for (int k = 0; k < st; k++)
        b0 += parts[k];
    *lo = st == 0 ? 0 : 1 + b0;
    *hi = 1 + b0 + parts[st] + (st == s->p - 1);
}

static double layers_cost(const struct search *s, int lo, int hi, int k)
{
    double c = 0;

    for (int l = lo; l < hi; l++)
        c += isnan(s->cost[l][k]) ? 0 : s->cost[l][k];
    return c;
}

/* Simulates the partition parts: its iteration time and bubble on the run's terms. */
static int evaluate(struct search *s, const int *parts, double *iter, double *bubble,
                    struct pps_err *err)
{
    const struct pps_report *rep = s->rep;
    struct pps_sim_result r;
    struct pps_err perr = {0, ""};
    int rc;

    for (int st = 0; st < s->p; st++) {
        double o = rep->have_ovh ? rep->ovh_ns[st] : 0, c[3];
        int lo, hi;
        stage_layers(s, parts, st, &lo, &hi);
        for (int k = 0; k < 3; k++) {
            c[k] = s->resid[st][k] + layers_cost(s, lo, hi, k);
            c[k] = c[k] > 0 ? c[k] : 0;
        }
        s->costs.tf[st] = c[0] + o;
        s->costs.tb[st] = c[1] + o;
        s->costs.tw[st] = c[2] + (rep->fused_bw ? 0 : o); /* a fused BW pays it once, in tb */
    }
    memset(&r, 0, sizeof(r));
    rc = pps_simulate(&s->sched, &s->costs, &r, &perr);
    if (rc == 0) {
        *iter = rep->postval ? r.steady_period : r.makespan;
        *bubble = rep->postval ? r.steady_bubble : r.bubble;
        s->n_sim++;
    } else {
        pps_err_set(err, rc, "the simulator: %s", perr.msg);
    }
    pps_sim_result_release(&r);
    return rc;
}

static void format_parts(const int *parts, int n, char *buf, size_t len)
{
    size_t used = 0;

    buf[0] = '\0';
    for (int k = 0; k < n && used < len; k++)
        used += (size_t)snprintf(buf + used, len - used, "%s%d", k ? "," : "", parts[k]);
}

/* The best partition so far: its parts, time and bubble. */
struct best {
    int *parts;
    double iter, bubble;
};

static int consider(struct search *s, struct best *b, struct pps_err *err)
{
    double it, bub;
    int rc = evaluate(s, s->parts, &it, &bub, err);

    if (rc < 0)
        return rc;
    /* Strictly better only: of equal times the first (the current one) stays. */
    if (it < b->iter * (1 - 1e-9)) {
        memcpy(b->parts, s->parts, (size_t)s->p * sizeof(int));
        b->iter = it;
        b->bubble = bub;
    }
    return 0;
}

/* Every split of left blocks over stages st..p-1. */
static int enumerate(struct search *s, struct best *b, int st, int left, struct pps_err *err)
{
    int rc = 0;

    if (st == s->p - 1) {
        s->parts[st] = left;
        return consider(s, b, err);
    }
    for (int k = 0; k <= left && rc == 0; k++) {
        s->parts[st] = k;
        rc = enumerate(s, b, st + 1, left - k, err);
    }
    return rc;
}

/* From b's partition, moves one block across one boundary while that helps. */
static int descend(struct search *s, struct best *b, struct pps_err *err)
{
    int improved = 1, rc = 0;

    while (improved && rc == 0) {
        double was = b->iter;
        improved = 0;
        for (int st = 0; st + 1 < s->p && rc == 0; st++) {
            for (int dir = -1; dir <= 1 && rc == 0; dir += 2) {
                memcpy(s->parts, b->parts, (size_t)s->p * sizeof(int));
                if (s->parts[dir < 0 ? st : st + 1] == 0)
                    continue;
                s->parts[st] -= dir;
                s->parts[st + 1] += dir;
                rc = consider(s, b, err);
            }
        }
        improved = b->iter < was;
    }
    return rc;
}

/* The run's partition, blocks per virtual stage, from meta partition. */
static int read_partition(const struct pps_run *run, int p, int *parts, int *layers)
{
    const char *m = pps_run_meta(run, "partition");
    int n = 0;

    *layers = 0;
    if (!m || !*m)
        return -1;
    for (const char *c = m; *c;) {
        char *end;
        long x = strtol(c, &end, 10);
        if (end == c || x < 0 || x > 100000 || n == p || (*end != ',' && *end != '\0'))
            return -1;
        parts[n++] = (int)x;
        *layers += (int)x;
        c = *end ? end + 1 : end;
    }
    return n == p ? 0 : -1;
}

/* Why the run cannot be rebalanced, or "" when it can. */
static void check_run(const struct pps_report *rep, char *note, size_t len)
{
    note[0] = '\0';
    if (!rep->have_prediction)
        snprintf(note, len, "no prediction for this run: %.200s", rep->prediction_note);
    else if (rep->v != 1)
        snprintf(note, len,
                 "v = %d: the simulator takes one cost per stage, split evenly over its chunks, "
                 "so it cannot weigh partitions of interleaved chunks",
                 rep->v);
    else if (rep->sched_kind < 0)
        snprintf(note, len, "the run's order is no schedule family this ppscope generates");
}

int pps_rebalance_search(const struct pps_run *run, const struct pps_report *rep,
                         struct pps_rebalance *rb, struct pps_err *err)
{
    struct search s;
    struct best b = {0};
    struct pps_err perr = {0, ""};
    double(*op_med)[3] = NULL, count;
    int *cur = NULL, rc = 0, p = rep->p;

    memset(rb, 0, sizeof(*rb));
    memset(&s, 0, sizeof(s));
    s.sched = (struct pps_schedule)PPS_SCHEDULE_INIT;
    rb->before_iter_ns = rb->before_bubble = rb->after_iter_ns = rb->after_bubble = NAN;
    check_run(rep, rb->note, sizeof(rb->note));
    if (rb->note[0])
        return 0;
    cur = calloc((size_t)p, sizeof(int));
    if (!cur) {
        rc = pps_err_set(err, PPS_ENOMEM, "rebalance: out of memory");
        goto out;
    }
    if (read_partition(run, p, cur, &rb->layers) < 0) {
        snprintf(rb->note, sizeof(rb->note),
                 "the run's meta partition is missing or does not give blocks for its %d stages",
                 p);
        goto out;
    }
    s.rep = rep;
    s.p = p;
    s.layers = rb->layers;
    s.cost = calloc((size_t)rb->layers + 2, sizeof(*s.cost));
    s.resid = calloc((size_t)p, sizeof(*s.resid));
    s.parts = calloc((size_t)p, sizeof(int));
    b.parts = calloc((size_t)p, sizeof(int));
    op_med = calloc((size_t)p, sizeof(*op_med));
    rb->block_ns = calloc((size_t)rb->layers * 3 + 1, sizeof(double));
    if (!s.cost || !s.resid || !s.parts || !b.parts || !op_med || !rb->block_ns ||
        (rb->per_layer = medians(run, &s, op_med)) < 0) {
        rc = pps_err_set(err, PPS_ENOMEM, "rebalance: out of memory");
        goto out;
    }
    for (int st = 0; st < p; st++) {
        int lo, hi;
        stage_layers(&s, cur, st, &lo, &hi);
        if (!rb->per_layer) {
            /* No layer spans: the stage's cost spread evenly over its blocks (the ends inside). */
            for (int l = lo; l < hi; l++)
                for (int k = 0; k < 3; k++)
                    s.cost[l][k] = l == 0 || l == rb->layers + 1
                                       ? 0
                                       : op_cost(op_med, st, k) / (double)cur[st];
        }
        for (int k = 0; k < 3; k++)
            s.resid[st][k] = op_cost(op_med, st, k) - layers_cost(&s, lo, hi, k);
    }
    for (int k = 0; k < 3; k++) {
        rb->embed_ns[k] = s.cost[0][k];
        rb->head_ns[k] = s.cost[rb->layers + 1][k];
        for (int l = 0; l < rb->layers; l++)
            rb->block_ns[l * 3 + k] = s.cost[1 + l][k];
    }

    rc = pps__analysis_generate(run, rep, &s.sched, &perr);
    if (!rc)
        rc = pps__analysis_w_budget(run, &s.sched, &perr);
    if (!rc)
        rc = pps_sim_costs_init(&s.costs, p, 1, 1, 1);
    if (rc < 0) {
        rc = pps__analysis_note_fail(rc, &perr, "rebalance", "", rb->note, sizeof(rb->note), err);
        goto out;
    }
    s.costs.tcomm = rep->tcomm_ns;
    s.costs.topt = rep->topt_ns;
    s.costs.w_mem = 0.5;

    rc = evaluate(&s, cur, &rb->before_iter_ns, &rb->before_bubble, &perr);
    if (rc < 0) {
        rc = pps__analysis_note_fail(rc, &perr, "rebalance", "", rb->note, sizeof(rb->note), err);
        goto out;
    }
    memcpy(b.parts, cur, (size_t)p * sizeof(int));
    b.iter = rb->before_iter_ns;
    b.bubble = rb->before_bubble;
    /* Splits of L blocks over p stages: C(L + p - 1, p - 1). */
    count = 1;
    for (int k = 1; k < p && count <= MAX_EXHAUSTIVE; k++)
        count = count * (rb->layers + k) / k;
    rb->exhaustive = count <= MAX_EXHAUSTIVE;
    rc = rb->exhaustive ? enumerate(&s, &b, 0, rb->layers, &perr) : descend(&s, &b, &perr);
    if (rc < 0) {
        rc = pps__analysis_note_fail(rc, &perr, "rebalance", "", rb->note, sizeof(rb->note), err);
        goto out;
    }
    rb->candidates = s.n_sim;
    rb->after_iter_ns = b.iter;
    rb->after_bubble = b.bubble;
    format_parts(cur, p, rb->current, sizeof(rb->current));
    format_parts(b.parts, p, rb->best, sizeof(rb->best));
    rb->ok = 1;
out:
    pps_sim_costs_release(&s.costs);
    pps_schedule_release(&s.sched);
    free(s.cost);
    free(s.resid);
    free(s.parts);
    free(b.parts);
    free(op_med);
    free(cur);
    return rc;
}

void pps_rebalance_release(struct pps_rebalance *rb)
{
    if (!rb)
        return;
    free(rb->block_ns);
    rb->block_ns = NULL;
}
