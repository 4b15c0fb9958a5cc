/*
 * validate.c - is an action list a correct pipeline schedule?
 *
 * First the checks that need no execution, stage by stage: every action in range, each
 * microbatch and chunk with exactly one F and either one fused BW or one B and one W, and on the
 * stage F before its backward and B before its W. Then dependency-driven execution
 * (execute.c) proves the cross-stage order cannot deadlock. Every failure names the stage, the
 * step (position in the stage's list, from 0) and the action.
 */
#include <stdlib.h>

#include "internal.h"

/* What a stage has seen of one (chunk, microbatch). */
enum { SEEN_F = 1, SEEN_B = 2, SEEN_W = 4, SEEN_BW = 8 };

static int fault_at(struct pps_sched_fault *fault, int stage, long pos, const struct pps_action *a,
                    const char *why)
{
    if (fault) {
        fault->stage = stage;
        fault->pos = pos;
        fault->action = *a;
        fault->why = why;
        fault->dep_stage = -1;
        fault->dep = (struct pps_action){0, 0, 0};
    }
    return PPS_ESCHEDULE;
}

/* Walks stage s, recording what it sees in seen[chunk*m + mb]; reports the first bad step. */
static int check_stage(const struct pps_schedule *sc, int s, unsigned char *seen,
                       struct pps_sched_fault *fault, struct pps_err *err)
{
    size_t len = pps_schedule_len(sc, s);
    char str[32];
    for (size_t k = 0; k < len; k++) {
        const struct pps_action *a = pps_schedule_at(sc, s, k);
        const char *why = NULL;
        if (a->op > PPS_OP_BW) {
            fault_at(fault, s, (long)k, a, "is no op (F, B, W or BW)");
            return pps_err_set(err, PPS_ESCHEDULE, "stage %d, step %zu: unknown op %u", s, k,
                               (unsigned)a->op);
        }
        pps__action_str(a, sc->v, str, sizeof(str));
        if (a->mb >= (unsigned)sc->m || a->chunk >= (unsigned)sc->v) {
            fault_at(fault, s, (long)k, a, "is out of range");
            return pps_err_set(err, PPS_ESCHEDULE,
                               "stage %d, step %zu: %s is out of range (m=%d, v=%d)", s, k, str,
                               sc->m, sc->v);
        }
        unsigned char *f = &seen[(size_t)a->chunk * sc->m + a->mb];
        switch (a->op) {
        case PPS_OP_F:
            if (*f & SEEN_F)
                why = "repeats the microbatch's forward";
            else if (*f)
                why = "comes after the microbatch's backward";
            *f |= SEEN_F;
            break;
        case PPS_OP_B:
        case PPS_OP_BW:
            if (!(*f & SEEN_F))
                why = "comes before the microbatch's forward";
            else if (*f & (SEEN_B | SEEN_BW))
                why = "repeats the microbatch's backward";
            else if (*f & SEEN_W)
                why = "comes after the microbatch's W";
            *f |= a->op == PPS_OP_B ? SEEN_B : SEEN_BW;
            break;
        case PPS_OP_W:
            if (*f & SEEN_BW)
                why = "mixes a split W with the microbatch's fused backward";
            else if (!(*f & SEEN_B))
                why = "comes before the microbatch's split backward";
            else if (*f & SEEN_W)
                why = "repeats the microbatch's W";
            *f |= SEEN_W;
            break;
        }
        if (why) {
            fault_at(fault, s, (long)k, a, why);
            return pps_err_set(err, PPS_ESCHEDULE, "stage %d, step %zu: %s %s", s, k, str, why);
        }
    }
    /* Whatever is missing: reported with the action that should be there, at step -1. */
    for (int c = 0; c < sc->v; c++) {
        for (int j = 0; j < sc->m; j++) {
            unsigned char f = seen[(size_t)c * sc->m + j];
            struct pps_action a = {PPS_OP_F, (uint16_t)c, (uint32_t)j};
            const char *what = NULL;
            if (!(f & SEEN_F)) {
                what = "its forward";
            } else if (!(f & (SEEN_B | SEEN_BW))) {
                a.op = PPS_OP_B;
                what = "its backward (B or BW)";
            } else if ((f & SEEN_B) && !(f & SEEN_W)) {
                a.op = PPS_OP_W;
                what = "its W after a split B";
            }
            if (what) {
                fault_at(fault, s, -1, &a, what);
                return pps_err_set(err, PPS_ESCHEDULE,
                                   "stage %d: microbatch %d (chunk %d) is missing %s (%s)", s, j, c,
                                   what, pps__action_str(&a, sc->v, str, sizeof(str)));
            }
        }
    }
    return 0;
}

int pps__schedule_check_counts(const struct pps_schedule *sc, struct pps_sched_fault *fault,
                               struct pps_err *err)
{
    static const struct pps_action none = {0, 0, 0};
    if (sc->p < 1 || sc->m < 1 || sc->v < 1 || !sc->start || !sc->actions) {
        fault_at(fault, -1, -1, &none, NULL);
        return pps_err_set(err, PPS_ESCHEDULE, "empty schedule (p=%d, m=%d, v=%d)", sc->p, sc->m,
                           sc->v);
    }
    if (sc->placement != PPS_PLACE_LOOP && (sc->placement != PPS_PLACE_V || sc->v != 2)) {
        fault_at(fault, -1, -1, &none, NULL);
        if (sc->placement == PPS_PLACE_V)
            return pps_err_set(err, PPS_ESCHEDULE,
                               "the V placement holds two chunks on each stage, not v=%d", sc->v);
        return pps_err_set(err, PPS_ESCHEDULE, "unknown placement %d", sc->placement);
    }
    for (int s = 0; s < sc->p; s++) {
        if (sc->start[s + 1] < sc->start[s]) {
            fault_at(fault, s, -1, &none, NULL);
            return pps_err_set(err, PPS_ESCHEDULE, "stage %d: its list ends before it starts", s);
        }
    }
    size_t cells = (size_t)sc->m * (size_t)sc->v;
    unsigned char *seen = malloc(cells);
    if (!seen)
        return pps_err_set(err, PPS_ENOMEM, "out of memory");
    int rc = 0;
    for (int s = 0; s < sc->p && !rc; s++) {
        for (size_t k = 0; k < cells; k++)
            seen[k] = 0;
        rc = check_stage(sc, s, seen, fault, err);
    }
    free(seen);
    return rc;
}

int pps_schedule_validate(const struct pps_schedule *sched, struct pps_sched_fault *fault,
                          struct pps_err *err)
{
    int rc = pps__schedule_check_counts(sched, fault, err);
    if (rc)
        return rc;
    return pps__schedule_execute(sched, NULL, NULL, NULL, NULL, fault, err);
}
