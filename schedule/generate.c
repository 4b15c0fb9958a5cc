/*
 * generate.c - the action lists of each schedule kind.
 *
 * GPipe, 1F1B and interleaved 1F1B follow their published orders (Megatron-LM's for the
 * interleaved one) with a fused backward. The zero-bubble schedules ZB-H1 and ZB-H2 (Qi et al.,
 * "Zero Bubble Pipeline Parallelism") split the backward into B and W; their orders come from
 * running the pipeline greedily with unit op times, which reproduces the handcrafted layouts:
 * at each step a free stage runs a ready B, else a ready F the memory caps allow, else a
 * pending W. They differ in order and memory cap:
 *   ZB-H1  F and B in 1F1B's order; at most p live microbatches (F done, W not) on any stage,
 *          what 1F1B's first stage holds. W's run whenever the next F or B cannot, so deferred
 *          W's fill the drain: with tF = tB = tW each stage idles (p-1)(tF+tB-tW).
 *   ZB-H2  F and B as soon as they are ready, at most 2p-1 live microbatches; W's run only when
 *          that cap stops an F or when the F's are done, so each stage banks W's for its tail.
 *          The iteration becomes a parallelogram (stage s busy from s to s + 3m) and with
 *          m >= 2p back-to-back iterations do not idle at all.
 */
#include <stdlib.h>

#include "internal.h"

static void put(struct pps_action *a, int op, int mb, int chunk)
{
    a->op = (uint8_t)op;
    a->mb = (uint32_t)mb;
    a->chunk = (uint16_t)chunk;
}

static void gen_gpipe(struct pps_schedule *s)
{
    size_t n = 0;
    for (int st = 0; st < s->p; st++) {
        s->start[st] = n;
        for (int j = 0; j < s->m; j++)
            put(&s->actions[n++], PPS_OP_F, j, 0);
        for (int j = 0; j < s->m; j++)
            put(&s->actions[n++], PPS_OP_BW, j, 0);
    }
    s->start[s->p] = n;
}

static void gen_1f1b(struct pps_schedule *s)
{
    size_t n = 0;
    for (int st = 0; st < s->p; st++) {
        int warm = s->p - 1 - st < s->m ? s->p - 1 - st : s->m;
        s->start[st] = n;
        for (int j = 0; j < warm; j++)
            put(&s->actions[n++], PPS_OP_F, j, 0);
        for (int k = 0; k < s->m - warm; k++) {
            put(&s->actions[n++], PPS_OP_F, warm + k, 0);
            put(&s->actions[n++], PPS_OP_BW, k, 0);
        }
        for (int j = s->m - warm; j < s->m; j++)
            put(&s->actions[n++], PPS_OP_BW, j, 0);
    }
    s->start[s->p] = n;
}

/* Megatron-LM's interleaved order: the k-th forward of a stage works on microbatch group k/(pv),
 * chunk (k/p) mod v; backwards walk the chunks in reverse. */
static void interleaved_at(int p, int v, int k, int backward, int *mb, int *chunk)
{
    int in_group = k % (p * v);
    int c = in_group / p;
    *chunk = backward ? v - 1 - c : c;
    *mb = (k / (p * v)) * p + k % p;
}

static void gen_interleaved(struct pps_schedule *s)
{
    int p = s->p, v = s->v, total = s->m * s->v;
    size_t n = 0;
    for (int st = 0; st < p; st++) {
        int warm = (p - st - 1) * 2 + (v - 1) * p;
        if (warm > total)
            warm = total;
        int mb, c;
        s->start[st] = n;
        for (int k = 0; k < warm; k++) {
            interleaved_at(p, v, k, 0, &mb, &c);
            put(&s->actions[n++], PPS_OP_F, mb, c);
        }
        for (int k = 0; k < total - warm; k++) {
            interleaved_at(p, v, warm + k, 0, &mb, &c);
            put(&s->actions[n++], PPS_OP_F, mb, c);
            interleaved_at(p, v, k, 1, &mb, &c);
            put(&s->actions[n++], PPS_OP_BW, mb, c);
        }
        for (int k = total - warm; k < total; k++) {
            interleaved_at(p, v, k, 1, &mb, &c);
            put(&s->actions[n++], PPS_OP_BW, mb, c);
        }
    }
    s->start[p] = n;
}

/* Per-stage state of the greedy zero-bubble generator. */
struct zb_stage {
    int nf, nb, nw;  /* F, B, W issued so far (each in microbatch order) */
    int warm;        /* ZB-H1: 1F1B's warm-up forwards */
    long busy_until; /* the step at which the stage is free again */
    size_t n;        /* actions written */
};

/*
 * One step of stage i at time t: picks B, F or W (or nothing) and writes it. fend/bend hold the
 * step at which each F/B ends ([stage*m + mb]).
 */
static int zb_pick(const struct pps_schedule *s, int h2, int i, long t, struct zb_stage *z,
                   const long *fend, const long *bend)
{
    int p = s->p, m = s->m;
    int live_cap = h2 ? 2 * p - 1 : p;
    int b_ready = z->nb < z->nf && fend[(size_t)i * m + z->nb] <= t &&
                  (i == p - 1 || bend[(size_t)(i + 1) * m + z->nb] <= t);
    int f_ready =
        z->nf < m && (i == 0 || fend[(size_t)(i - 1) * m + z->nf] <= t) && z->nf - z->nw < live_cap;
    int w_forced = z->nf < m && z->nf - z->nw >= live_cap;
    int w_ok = z->nw < z->nb;
    if (!h2) {
        /* ZB-H1 keeps 1F1B's order of F and B: warm-up F's, F/B pairs, then B's. */
        int want_f = z->nf < z->warm || (z->nf < m && z->nf - z->nb <= z->warm);
        if (want_f)
            b_ready = 0;
        else
            f_ready = 0;
    } else {
        /* ZB-H2 banks W's for the tail: only the memory cap or the end of the F's runs them. */
        w_ok = w_ok && (w_forced || z->nf == m);
    }
    if (b_ready)
        return PPS_OP_B;
    if (f_ready)
        return PPS_OP_F;
    if (w_ok)
        return PPS_OP_W;
    return -1;
}

static int gen_zb(struct pps_schedule *s, int h2, struct pps_err *err)
{
    int p = s->p, m = s->m, rc = PPS_ENOMEM;
    struct zb_stage *st = calloc((size_t)p, sizeof(*st));
    long *fend = malloc(sizeof(long) * (size_t)p * (size_t)m);
    long *bend = malloc(sizeof(long) * (size_t)p * (size_t)m);
    if (!st || !fend || !bend)
        goto out;
    const long never = (long)1 << 60;
    for (size_t k = 0; k < (size_t)p * (size_t)m; k++)
        fend[k] = bend[k] = never;
    for (int i = 0; i < p; i++) {
        st[i].warm = p - 1 - i < m ? p - 1 - i : m;
        s->start[i] = (size_t)i * 3 * (size_t)m;
    }
    s->start[p] = (size_t)p * 3 * (size_t)m;

    /* Unit op times: every decision happens on an integer step, and what ends at step t is
     * visible to every stage deciding at t, whatever order the stages are visited in. */
    int finished = 0;
    long limit = 16L * ((long)m + p) + 16; /* a bug guard: the run takes ~3m + 2p steps */
    for (long t = 0; finished < p; t++) {
        if (t > limit) {
            rc = pps_err_set(err, PPS_ESCHEDULE, "internal error: zero-bubble generator stuck");
            goto out;
        }
        for (int i = 0; i < p; i++) {
            struct zb_stage *z = &st[i];
            if (z->busy_until > t || z->nw == m)
                continue;
            int op = zb_pick(s, h2, i, t, z, fend, bend);
            if (op < 0)
                continue;
            int mb = op == PPS_OP_F ? z->nf++ : op == PPS_OP_B ? z->nb++ : z->nw++;
            if (op == PPS_OP_F)
                fend[(size_t)i * m + mb] = t + 1;
            else if (op == PPS_OP_B)
                bend[(size_t)i * m + mb] = t + 1;
            else if (z->nw == m)
                finished++;
            put(&s->actions[s->start[i] + z->n++], op, mb, 0);
            z->busy_until = t + 1;
        }
    }
    rc = 0;
out:
    free(st);
    free(fend);
    free(bend);
    return rc;
}

/* zb-auto without costs: unit costs and 1F1B's memory, p live microbatches (schedule.h). */
static int gen_zb_auto_default(struct pps_schedule *sched, int p, int m, struct pps_err *err)
{
    struct pps_sim_costs c;
    int rc;

    if (pps_sim_costs_init(&c, p, 1, 1, 1))
        return pps_err_set(err, PPS_ENOMEM, "out of memory");
    rc = pps_schedule_auto(sched, &c, m, p, err);
    pps_sim_costs_release(&c);
    return rc;
}

int pps_schedule_generate(struct pps_schedule *sched, int kind, int p, int m, int v,
                          struct pps_err *err)
{
    int rc = pps_schedule_check_params(kind, p, m, v, err);
    if (rc)
        return rc;
    if (kind == PPS_SCHED_ZB_AUTO)
        return gen_zb_auto_default(sched, p, m, err);
    int split = pps_sched_kind_split(kind);
    size_t n = (size_t)p * (size_t)m * (size_t)v * (split ? 3 : 2);
    if (pps_schedule_alloc(sched, p, m, v, n))
        return pps_err_set(err, PPS_ENOMEM, "out of memory for %zu actions", n);
    sched->kind = kind;
    sched->placement = pps_sched_kind_placement(kind);
    switch (kind) {
    case PPS_SCHED_GPIPE:
        gen_gpipe(sched);
        break;
    case PPS_SCHED_1F1B:
        gen_1f1b(sched);
        break;
    case PPS_SCHED_INTERLEAVED:
        gen_interleaved(sched);
        break;
    case PPS_SCHED_ZB_V:
        pps__gen_zb_v(sched);
        break;
    case PPS_SCHED_DUALPIPEV:
        pps__gen_dualpipev(sched);
        break;
    case PPS_SCHED_INTERLEAVED_ZB:
        pps__gen_interleaved_zb(sched);
        break;
    default:
        rc = gen_zb(sched, kind == PPS_SCHED_ZB_H2, err);
        break;
    }
    if (rc) {
        pps_schedule_release(sched);
        return rc == PPS_ENOMEM ? pps_err_set(err, rc, "out of memory") : rc;
    }
    sched->kind = kind;
    return 0;
}
