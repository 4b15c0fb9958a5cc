/*
 * execute.c - dependency-driven execution of a schedule, shared by the validator (does it
 * deadlock?) and the simulator (when does each action run?).
 *
 * A worklist of stages: a stage runs its actions in order until one needs something that has
 * not happened yet; if that comes from another stage, the stage registers as its waiter and is
 * woken when it completes. Each action is executed once and each completion wakes at most one
 * stage, so the cost is linear in the number of actions. With unbounded buffers (sends never
 * block), a schedule deadlocks exactly when stages are left waiting with the worklist empty.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

char *pps__action_str(const struct pps_action *a, int v, char *buf, size_t len)
{
    if (v > 1)
        snprintf(buf, len, "%s%u.%u", pps_op_name(a->op), (unsigned)a->mb, (unsigned)a->chunk);
    else
        snprintf(buf, len, "%s%u", pps_op_name(a->op), (unsigned)a->mb);
    return buf;
}

/* What a blocked stage is waiting for, for the deadlock message. */
struct wait_note {
    int op;     /* PPS_OP_F or PPS_OP_B */
    int mb, vs; /* the dependency */
};

struct exec {
    const struct pps_schedule *s;
    const struct pps_sim_costs *c;
    int V;                 /* virtual stages p*v */
    double *fdone, *bdone; /* [vs*m + mb]: end time, or -1 */
    int *fwait, *bwait;    /* [vs*m + mb]: the stage waiting across stages, or -1 */
    size_t *pos;
    double *tfree;
    int *stack, top;
    struct wait_note *note;
};

static double op_cost(const struct exec *e, int stage, int op)
{
    const struct pps_sim_costs *c = e->c;
    if (!c)
        return 0.0;
    double v = e->s->v;
    switch (op) {
    case PPS_OP_F:
        return c->tf[stage] / v;
    case PPS_OP_B:
        return c->tb[stage] / v;
    case PPS_OP_W:
        return c->tw[stage] / v;
    default:
        return (c->tb[stage] + c->tw[stage]) / v;
    }
}

/*
 * Whether the dependency at done[idx] (from virtual stage dep_vs) has happened; folds its end
 * time (plus the link's time across stages: tlink, else tcomm) into *t. If not, registers stage s
 * as its waiter when it comes from another stage (a same-stage dependency that has not happened
 * never will: the stage runs in order).
 */
static int dep_ready(struct exec *e, int s, const double *done, int *wait, size_t idx, int dep_vs,
                     double *t)
{
    int from = pps_place_stage(e->s->placement, e->s->p, dep_vs);
    if (done[idx] < 0) {
        if (from != s)
            wait[idx] = s;
        return 0;
    }
    double at = done[idx];

    if (from != s && e->c)
        at += e->c->tlink ? e->c->tlink[from * e->s->p + s] : e->c->tcomm;
    if (at > *t)
        *t = at;
    return 1;
}

static void wake(struct exec *e, int *wait, size_t idx)
{
    if (wait[idx] >= 0) {
        e->stack[e->top++] = wait[idx];
        wait[idx] = -1;
    }
}

/* Runs stage s as far as it can. */
static void advance(struct exec *e, int s, struct pps_sim_span *spans)
{
    const struct pps_schedule *sc = e->s;
    size_t len = pps_schedule_len(sc, s), m = (size_t)sc->m;
    while (e->pos[s] < len) {
        const struct pps_action *a = pps_schedule_at(sc, s, e->pos[s]);
        int vs = pps_schedule_vstage(sc, s, a->chunk);
        size_t self = (size_t)vs * m + a->mb;
        double t = e->tfree[s];
        int ok = 1;
        struct wait_note *n = &e->note[s];
        n->mb = (int)a->mb;
        if (a->op == PPS_OP_F) {
            if (vs > 0) {
                n->op = PPS_OP_F;
                n->vs = vs - 1;
                ok = dep_ready(e, s, e->fdone, e->fwait, self - m, vs - 1, &t);
            }
        } else if (a->op == PPS_OP_W) {
            n->op = PPS_OP_B;
            n->vs = vs;
            ok = dep_ready(e, s, e->bdone, e->bwait, self, vs, &t);
        } else {
            n->op = PPS_OP_F;
            n->vs = vs;
            ok = dep_ready(e, s, e->fdone, e->fwait, self, vs, &t);
            if (ok && vs < e->V - 1) {
                n->op = PPS_OP_B;
                n->vs = vs + 1;
                ok = dep_ready(e, s, e->bdone, e->bwait, self + m, vs + 1, &t);
            }
        }
        if (!ok)
            return;
        double end = t + op_cost(e, s, a->op);
        if (spans) {
            spans[sc->start[s] + e->pos[s]].start = t;
            spans[sc->start[s] + e->pos[s]].end = end;
        }
        e->tfree[s] = end;
        if (a->op == PPS_OP_F) {
            e->fdone[self] = end;
            wake(e, e->fwait, self);
        } else if (a->op != PPS_OP_W) {
            e->bdone[self] = end;
            wake(e, e->bwait, self);
        }
        e->pos[s]++;
    }
}

/* Names up to three stuck stages and what each waits for. */
static int deadlock(struct exec *e, struct pps_sched_fault *fault, struct pps_err *err)
{
    const struct pps_schedule *sc = e->s;
    char msg[sizeof(err->msg)] = "deadlock:";
    size_t used = strlen(msg);
    int named = 0, stuck = 0;
    for (int s = 0; s < sc->p; s++) {
        if (e->pos[s] >= pps_schedule_len(sc, s))
            continue;
        const struct pps_action *a = pps_schedule_at(sc, s, e->pos[s]);
        if (stuck++ == 0 && fault) {
            const struct wait_note *w = &e->note[s];

            fault->stage = s;
            fault->pos = (long)e->pos[s];
            fault->action = *a;
            fault->why = NULL;
            fault->dep_stage = pps_place_stage(sc->placement, sc->p, w->vs);
            fault->dep.op = (uint8_t)w->op;
            fault->dep.chunk = (uint16_t)pps_place_chunk(sc->placement, sc->p, w->vs);
            fault->dep.mb = (uint32_t)w->mb;
        }
        if (named < 3 && used < sizeof(msg)) {
            char what[32], dep[32];
            const struct wait_note *w = &e->note[s];
            if (sc->v > 1)
                snprintf(dep, sizeof(dep), "%s%d.%d", w->op == PPS_OP_F ? "F" : "B/BW", w->mb,
                         pps_place_chunk(sc->placement, sc->p, w->vs));
            else
                snprintf(dep, sizeof(dep), "%s%d", w->op == PPS_OP_F ? "F" : "B/BW", w->mb);
            used += (size_t)snprintf(msg + used, sizeof(msg) - used,
                                     "%s stage %d at step %zu (%s) waits for %s of stage %d",
                                     named ? ";" : "", s, e->pos[s],
                                     pps__action_str(a, sc->v, what, sizeof(what)), dep,
                                     pps_place_stage(sc->placement, sc->p, w->vs));
            named++;
        }
    }
    if (stuck > named && used < sizeof(msg))
        snprintf(msg + used, sizeof(msg) - used, "; and %d more stage(s)", stuck - named);
    return pps_err_set(err, PPS_ESCHEDULE, "%s", msg);
}

int pps__schedule_execute(const struct pps_schedule *sched, const struct pps_sim_costs *costs,
                          const double *ready, struct pps_sim_span *spans, double *stage_end,
                          struct pps_sched_fault *fault, struct pps_err *err)
{
    int p = sched->p, rc = PPS_ENOMEM;
    struct exec e = {.s = sched, .c = costs, .V = sched->p * sched->v};
    size_t slots = (size_t)e.V * (size_t)sched->m;
    e.fdone = malloc(slots * sizeof(double));
    e.bdone = malloc(slots * sizeof(double));
    e.fwait = malloc(slots * sizeof(int));
    e.bwait = malloc(slots * sizeof(int));
    e.pos = calloc((size_t)p, sizeof(size_t));
    e.tfree = malloc((size_t)p * sizeof(double));
    /* A stage is on the stack at most once per completion that wakes it plus once at start. */
    e.stack = malloc(((size_t)p + slots * 2) * sizeof(int));
    e.note = calloc((size_t)p, sizeof(*e.note));
    if (!e.fdone || !e.bdone || !e.fwait || !e.bwait || !e.pos || !e.tfree || !e.stack || !e.note) {
        rc = pps_err_set(err, PPS_ENOMEM, "out of memory simulating %zu slots", slots);
        goto out;
    }
    for (size_t k = 0; k < slots; k++) {
        e.fdone[k] = e.bdone[k] = -1.0;
        e.fwait[k] = e.bwait[k] = -1;
    }
    for (int s = p - 1; s >= 0; s--) {
        e.tfree[s] = ready ? ready[s] : 0.0;
        e.stack[e.top++] = s;
    }
    while (e.top > 0) {
        int s = e.stack[--e.top];
        advance(&e, s, spans);
    }
    for (int s = 0; s < p; s++) {
        if (e.pos[s] < pps_schedule_len(sched, s)) {
            rc = deadlock(&e, fault, err);
            goto out;
        }
        if (stage_end)
            stage_end[s] = e.tfree[s];
    }
    rc = 0;
out:
    free(e.fdone);
    free(e.bdone);
    free(e.fwait);
    free(e.bwait);
    free(e.pos);
    free(e.tfree);
    free(e.stack);
    free(e.note);
    return rc;
}
