/*
 * wbudget.c - a schedule reordered so no stage holds more than its budget of pending W's.
 *
 * A pending W is a microbatch whose B has run and whose W has not: it pins the activations W
 * needs. With a budget of N on a stage, before each B that would leave more than N pending, the
 * stage's oldest pending W (the one whose B ran first) is moved up to run there, and skipped
 * where the list had it. A chunk's W's then still run in its B's order, which is microbatch
 * order in every generated schedule, so the gradients add up in the same order as without the
 * budget: the runtime's gradients stay bitwise the same, and the simulator predicts the order
 * that really runs.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* Pending W's of one stage: per chunk, a FIFO of (microbatch, when its B ran). */
struct ledger {
    int v, m;
    int *mb;              /* [c * m + i] */
    long *seq;            /* [c * m + i] */
    int *head;            /* per chunk: the oldest pending entry */
    int *tail;            /* per chunk: one past the newest */
    unsigned char *early; /* [c * m + mb]: moved up, skip it where the list has it */
    int pending;
    long clock;
};

/* The chunk whose oldest pending W had its B first, or -1. */
static int oldest(const struct ledger *l)
{
    int best = -1;
    for (int c = 0; c < l->v; c++)
        if (l->head[c] < l->tail[c] &&
            (best < 0 || l->seq[c * l->m + l->head[c]] < l->seq[best * l->m + l->head[best]]))
            best = c;
    return best;
}

/* Checks that each chunk's W's (and BW's) follow its B's (and BW's) order on stage s. */
static int check_order(const struct pps_schedule *in, int s, int *order, int *nb, int *nw,
                       struct pps_sched_fault *fault, struct pps_err *err)
{
    int m = in->m;
    memset(nb, 0, sizeof(int) * (size_t)in->v);
    memset(nw, 0, sizeof(int) * (size_t)in->v);
    for (size_t k = 0; k < pps_schedule_len(in, s); k++) {
        const struct pps_action *a = pps_schedule_at(in, s, k);
        if (a->op == PPS_OP_B || a->op == PPS_OP_BW)
            order[a->chunk * m + nb[a->chunk]++] = (int)a->mb;
    }
    for (size_t k = 0; k < pps_schedule_len(in, s); k++) {
        const struct pps_action *a = pps_schedule_at(in, s, k);
        int c = a->chunk;
        if (a->op != PPS_OP_W && a->op != PPS_OP_BW)
            continue;
        if (nw[c] >= nb[c] || order[c * m + nw[c]] != (int)a->mb) {
            if (fault) {
                fault->stage = s;
                fault->pos = (long)k;
                fault->action = *a;
                fault->why = "is out of its B's order, which a W budget cannot keep without "
                             "changing the gradients";
                fault->dep_stage = -1;
            }
            return pps_err_set(
                err, PPS_ESCHEDULE,
                "stage %d, step %zu: the W of microbatch %u (chunk %d) is out of its "
                "B's order, which a W budget cannot keep without changing the "
                "gradients",
                s, k, (unsigned)a->mb, c);
        }
        nw[c]++;
    }
    return 0;
}

static void put_w(struct pps_action *dst, int c, int mb)
{
    dst->op = PPS_OP_W;
    dst->chunk = (uint16_t)c;
    dst->mb = (uint32_t)mb;
}

/* Rewrites stage s of in into out->actions from out->start[s], with budget n (> 0). */
static void reorder_stage(const struct pps_schedule *in, int s, int n, struct ledger *l,
                          struct pps_schedule *out)
{
    size_t w = out->start[s];
    int m = l->m;
    memset(l->head, 0, sizeof(int) * (size_t)l->v);
    memset(l->tail, 0, sizeof(int) * (size_t)l->v);
    memset(l->early, 0, (size_t)l->v * (size_t)m);
    l->pending = 0;
    l->clock = 0;
    for (size_t k = 0; k < pps_schedule_len(in, s); k++) {
        const struct pps_action *a = pps_schedule_at(in, s, k);
        int c = a->chunk;
        if (a->op == PPS_OP_W && l->early[c * m + (int)a->mb])
            continue;
        if (a->op == PPS_OP_B) {
            while (l->pending >= n) {
                int o = oldest(l);
                int mb = l->mb[o * m + l->head[o]++];
                put_w(&out->actions[w++], o, mb);
                l->early[o * m + mb] = 1;
                l->pending--;
            }
            l->mb[c * m + l->tail[c]] = (int)a->mb;
            l->seq[c * m + l->tail[c]++] = l->clock++;
            l->pending++;
        } else if (a->op == PPS_OP_W) {
            l->head[c]++; /* check_order: it is the chunk's oldest */
            l->pending--;
        }
        out->actions[w++] = *a;
    }
}

int pps_schedule_apply_w_budget(const struct pps_schedule *in, const int *budget,
                                struct pps_schedule *out, struct pps_sched_fault *fault,
                                struct pps_err *err)
{
    int rc = pps__schedule_check_counts(in, fault, err);
    size_t n = 0, cells = 0;
    struct ledger l = {0};
    int *order = NULL, *nb = NULL, *nw = NULL;
    if (rc)
        return rc;
    n = in->start[in->p];
    cells = (size_t)in->v * (size_t)in->m;
    if (pps_schedule_alloc(out, in->p, in->m, in->v, n))
        return pps_err_set(err, PPS_ENOMEM, "out of memory");
    out->kind = in->kind;
    out->placement = in->placement;
    memcpy(out->start, in->start, sizeof(size_t) * ((size_t)in->p + 1));
    l.v = in->v;
    l.m = in->m;
    l.mb = malloc(sizeof(int) * cells);
    l.seq = malloc(sizeof(long) * cells);
    l.head = malloc(sizeof(int) * (size_t)in->v);
    l.tail = malloc(sizeof(int) * (size_t)in->v);
    l.early = malloc(cells);
    order = malloc(sizeof(int) * cells);
    nb = malloc(sizeof(int) * (size_t)in->v);
    nw = malloc(sizeof(int) * (size_t)in->v);
    if (!l.mb || !l.seq || !l.head || !l.tail || !l.early || !order || !nb || !nw) {
        rc = pps_err_set(err, PPS_ENOMEM, "out of memory");
        goto out;
    }
    for (int s = 0; s < in->p && !rc; s++) {
        if (!budget || budget[s] <= 0) {
            memcpy(&out->actions[in->start[s]], &in->actions[in->start[s]],
                   sizeof(*in->actions) * pps_schedule_len(in, s));
            continue;
        }
        rc = check_order(in, s, order, nb, nw, fault, err);
        if (!rc)
            reorder_stage(in, s, budget[s], &l, out);
    }
out:
    free(l.mb);
    free(l.seq);
    free(l.head);
    free(l.tail);
    free(l.early);
    free(order);
    free(nb);
    free(nw);
    if (rc)
        pps_schedule_release(out);
    return rc;
}
