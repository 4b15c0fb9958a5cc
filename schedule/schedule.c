/* schedule.c - schedule names, parameter checks, allocation, and the bubble theory. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static const char *const kind_names[PPS_SCHED_KIND_COUNT] = {
    [PPS_SCHED_GPIPE] = "gpipe",
    [PPS_SCHED_1F1B] = "1f1b",
    [PPS_SCHED_INTERLEAVED] = "interleaved",
    [PPS_SCHED_ZB_H1] = "zb-h1",
    [PPS_SCHED_ZB_H2] = "zb-h2",
    [PPS_SCHED_ZB_V] = "zb-v",
    [PPS_SCHED_DUALPIPEV] = "dualpipev",
    [PPS_SCHED_INTERLEAVED_ZB] = "interleaved-zb",
    [PPS_SCHED_ZB_AUTO] = "zb-auto",
};

const char *pps_sched_kind_name(int kind)
{
    if (kind < 0 || kind >= PPS_SCHED_KIND_COUNT)
        return "custom";
    return kind_names[kind];
}

int pps_sched_kind_parse(const char *name)
{
    if (!name)
        return -1;
    for (int k = 0; k < PPS_SCHED_KIND_COUNT; k++)
        if (!strcmp(name, kind_names[k]))
            return k;
    return -1;
}

int pps_sched_kind_placement(int kind)
{
    return kind == PPS_SCHED_ZB_V || kind == PPS_SCHED_DUALPIPEV ? PPS_PLACE_V : PPS_PLACE_LOOP;
}

int pps_sched_kind_v(int kind, int asked)
{
    if (kind == PPS_SCHED_ZB_V || kind == PPS_SCHED_DUALPIPEV)
        return 2;
    if (kind == PPS_SCHED_INTERLEAVED || kind == PPS_SCHED_INTERLEAVED_ZB)
        return asked > 0 ? asked : 2;
    return 1;
}

int pps_sched_kind_split(int kind)
{
    return kind == PPS_SCHED_ZB_H1 || kind == PPS_SCHED_ZB_H2 || kind == PPS_SCHED_ZB_V ||
           kind == PPS_SCHED_DUALPIPEV || kind == PPS_SCHED_INTERLEAVED_ZB ||
           kind == PPS_SCHED_ZB_AUTO;
}

const char *pps_placement_name(int placement)
{
    return placement == PPS_PLACE_V ? "v" : "loop";
}

int pps_placement_parse(const char *name)
{
    if (name && !strcmp(name, "loop"))
        return PPS_PLACE_LOOP;
    if (name && !strcmp(name, "v"))
        return PPS_PLACE_V;
    return -1;
}

const char *pps_op_name(int op)
{
    static const char *const names[] = {"F", "B", "W", "BW"};
    return (op >= 0 && op <= PPS_OP_BW) ? names[op] : "?";
}

int pps_schedule_check_params(int kind, int p, int m, int v, struct pps_err *err)
{
    const char *name = pps_sched_kind_name(kind);
    if (kind < 0 || kind >= PPS_SCHED_KIND_COUNT)
        return pps_err_set(err, PPS_EINVAL, "unknown schedule kind %d", kind);
    if (p < 1 || p > MAX_P)
        return pps_err_set(err, PPS_EINVAL, "%s needs 1 <= p <= %d stages, got p=%d", name, MAX_P,
                           p);
    if (m < 1 || m > MAX_M)
        return pps_err_set(err, PPS_EINVAL, "%s needs 1 <= m <= %d microbatches, got m=%d", name,
                           MAX_M, m);
    if (kind == PPS_SCHED_ZB_V && v != 2)
        return pps_err_set(err, PPS_EINVAL,
                           "zb-v runs two model chunks per stage (v=2), down the stages and back "
                           "up; got v=%d",
                           v);
    if (kind == PPS_SCHED_DUALPIPEV && v != 2)
        return pps_err_set(err, PPS_EINVAL,
                           "dualpipev runs two model chunks per stage (v=2), down the stages and "
                           "back up; got v=%d",
                           v);
    if (kind == PPS_SCHED_DUALPIPEV && m < 2 * p)
        return pps_err_set(err, PPS_EINVAL,
                           "dualpipev needs m >= 2p = %d microbatches for p=%d, as DeepSeek's "
                           "DualPipeV asserts; got m=%d",
                           2 * p, p, m);
    int chunked = kind == PPS_SCHED_INTERLEAVED || kind == PPS_SCHED_INTERLEAVED_ZB;
    if (!chunked && pps_sched_kind_v(kind, 0) != 2 && v != 1)
        return pps_err_set(err, PPS_EINVAL,
                           "%s runs one model chunk per stage (v=1); got v=%d (only interleaved "
                           "and interleaved-zb take v > 1)",
                           name, v);
    if ((long)p * m * (v > 0 ? v : 1) > MAX_CELLS)
        return pps_err_set(err, PPS_EINVAL,
                           "%s with p=%d, m=%d, v=%d is %ld microbatch-stage pairs, more than the "
                           "%ld ppscope schedules",
                           name, p, m, v, (long)p * m * (v > 0 ? v : 1), MAX_CELLS);
    if (chunked && (v < 1 || v > MAX_V))
        return pps_err_set(err, PPS_EINVAL, "%s needs 1 <= v <= %d chunks, got v=%d", name, MAX_V,
                           v);
    if (kind == PPS_SCHED_INTERLEAVED_ZB && pps__izb_group(p, m) < 0)
        return pps_err_set(err, PPS_EINVAL,
                           "interleaved-zb sends microbatches round in %d groups (m / p) of equal "
                           "size; got m=%d, not a multiple of %d",
                           m / p, m, m / p);
    if (kind == PPS_SCHED_INTERLEAVED) {
        /* Megatron's interleaved order walks microbatches in groups of p. */
        if (m % p != 0)
            return pps_err_set(err, PPS_EINVAL,
                               "interleaved needs m to be a multiple of p (microbatches go "
                               "round in groups of p); got m=%d, p=%d",
                               m, p);
    }
    return 0;
}

int pps_schedule_alloc(struct pps_schedule *sched, int p, int m, int v, size_t n)
{
    sched->kind = -1;
    sched->placement = PPS_PLACE_LOOP;
    sched->p = p;
    sched->m = m;
    sched->v = v;
    sched->actions = calloc(n ? n : 1, sizeof(*sched->actions));
    sched->start = calloc((size_t)p + 1, sizeof(*sched->start));
    if (!sched->actions || !sched->start) {
        pps_schedule_release(sched);
        return PPS_ENOMEM;
    }
    return 0;
}

void pps_schedule_release(struct pps_schedule *sched)
{
    free(sched->actions);
    free(sched->start);
    sched->actions = NULL;
    sched->start = NULL;
    sched->kind = -1;
    sched->placement = PPS_PLACE_LOOP;
    sched->p = sched->m = sched->v = 0;
}

double pps_zb_theory_idle(int kind, int p, int m, int v, double tf, double tb, double tw,
                          int *steady)
{
    double fill = tf > tf + tb - tw ? tf : tf + tb - tw;
    double h2 = tf + tb - 2 * tw;
    int st = kind == PPS_SCHED_ZB_H2 || kind == PPS_SCHED_ZB_V;

    if (steady)
        *steady = st;
    if ((kind == PPS_SCHED_ZB_H1 || kind == PPS_SCHED_INTERLEAVED_ZB) && m >= p)
        return (p - 1) * fill / (kind == PPS_SCHED_ZB_H1 || v < 1 ? 1 : v);
    if (kind == PPS_SCHED_ZB_H2 && m >= 2 * p - 1)
        return (p - 1) * (h2 > 0 ? h2 : 0);
    if (kind == PPS_SCHED_ZB_V && m >= 2 * p - 1 && tf == tb && tb == tw)
        return 0;
    /* DeepSeek-V3's Table 2 in chunk costs F = tF/2, B = (tB+tW)/2 (full), W = tW/2, with F&B
     * = F+B, less what running the pair as F then BW gives back: test_dualpipev.c derives it. */
    if (kind == PPS_SCHED_DUALPIPEV && m >= 2 * p && tf == tb && tw <= tb)
        return (p - 1) * (tf + tb - tw) / 2;
    return NAN;
}

const char *pps_zb_theory_formula(int kind)
{
    static const char *const formula[PPS_SCHED_KIND_COUNT] = {
        [PPS_SCHED_ZB_H1] = "(p-1)max(tF, tF+tB-tW)",
        [PPS_SCHED_ZB_H2] = "(p-1)max(0, tF+tB-2tW)",
        [PPS_SCHED_INTERLEAVED_ZB] = "(p-1)max(tF, tF+tB-tW)/v",
        [PPS_SCHED_ZB_V] = "0 (tF = tB = tW)",
        [PPS_SCHED_DUALPIPEV] = "(p-1)(tF+tB-tW)/2",
    };
    return kind >= 0 && kind < PPS_SCHED_KIND_COUNT ? formula[kind] : NULL;
}

double pps_bubble_quoted(int p, int m)
{
    return m > 0 ? (double)(p - 1) / m : 0.0;
}

double pps_bubble_exact(int p, int m, int v)
{
    double d = (double)v * m + p - 1;
    return d > 0 ? (double)(p - 1) / d : 0.0;
}

int pps_schedule_copy(struct pps_schedule *out, const struct pps_schedule *in)
{
    size_t n = in->start[in->p];

    if (pps_schedule_alloc(out, in->p, in->m, in->v, n))
        return PPS_ENOMEM;
    memcpy(out->actions, in->actions, n * sizeof(*in->actions));
    memcpy(out->start, in->start, ((size_t)in->p + 1) * sizeof(*in->start));
    out->kind = in->kind;
    out->placement = in->placement;
    return 0;
}

int pps_schedule_equal(const struct pps_schedule *a, const struct pps_schedule *b)
{
    if (a->p != b->p || a->m != b->m || a->v != b->v || (a->placement != b->placement && a->p > 1))
        return 0;
    for (int s = 0; s <= a->p; s++)
        if (a->start[s] != b->start[s])
            return 0;
    for (size_t i = 0; i < a->start[a->p]; i++)
        if (a->actions[i].op != b->actions[i].op || a->actions[i].chunk != b->actions[i].chunk ||
            a->actions[i].mb != b->actions[i].mb)
            return 0;
    return 1;
}
