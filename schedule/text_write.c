/*
 * text_write.c - a schedule as text: PyTorch's pipeline-order CSV, each action in the column of
 * its step, and ppscope's grid (schedule.h). pps_schedule_read reads both back to the same
 * schedule.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/*
 * Each action's step (laid out like sched->actions) when every action takes one step and runs
 * at the first step after its inputs are made and its stage's previous action: lockstep, as
 * PyTorch's schedules lay their orders out. The inputs are the validator's (schedule.h). 0, or
 * -1 where sched does not run (a deadlock) or memory runs out.
 */
static int lockstep(const struct pps_schedule *sc, long *step)
{
    int p = sc->p, V = sc->p * sc->v, rc = -1;
    size_t slots = (size_t)V * (size_t)sc->m, left = sc->start[p];
    long *fdone = malloc(slots * sizeof(long)), *bdone = malloc(slots * sizeof(long));
    size_t *pos = calloc((size_t)p, sizeof(size_t));

    if (!fdone || !bdone || !pos)
        goto out;
    for (size_t k = 0; k < slots; k++)
        fdone[k] = bdone[k] = -1;
    for (long t = 0; left > 0; t++) {
        int ran = 0;

        for (int s = 0; s < p; s++) {
            const struct pps_action *a;
            size_t self;
            int vs;

            if (pos[s] >= pps_schedule_len(sc, s))
                continue;
            a = pps_schedule_at(sc, s, pos[s]);
            vs = pps_schedule_vstage(sc, s, a->chunk);
            self = (size_t)vs * (size_t)sc->m + a->mb;
            /* Made at a step before t: an action made this step is not yet an input. */
            if (a->op == PPS_OP_F && vs > 0 &&
                !(fdone[self - sc->m] >= 0 && fdone[self - sc->m] < t))
                continue;
            if ((a->op == PPS_OP_B || a->op == PPS_OP_BW) && vs < V - 1 &&
                !(bdone[self + sc->m] >= 0 && bdone[self + sc->m] < t))
                continue;
            step[sc->start[s] + pos[s]] = t;
            if (a->op == PPS_OP_F)
                fdone[self] = t;
            else if (a->op != PPS_OP_W)
                bdone[self] = t;
            pos[s]++;
            left--;
            ran = 1;
        }
        if (!ran)
            goto out;
    }
    rc = 0;
out:
    free(fdone);
    free(bdone);
    free(pos);
    return rc;
}

/* PyTorch's letters for ours: F, I (input gradient), W, B (full backward). */
static const char csv_letter[] = {'F', 'I', 'W', 'B'};

size_t pps_schedule_write_csv(const struct pps_schedule *sched, char *buf, size_t len)
{
    size_t n = sched->start[sched->p], need = 0;
    long *step = malloc((n ? n : 1) * sizeof(long));
    char cell[48];

    if (!step || lockstep(sched, step)) {
        free(step);
        return pps__emit_end(buf, len, 0);
    }
    for (int s = 0; s < sched->p; s++) {
        long t = 0;

        for (size_t k = sched->start[s]; k < sched->start[s + 1]; k++) {
            const struct pps_action *a = &sched->actions[k];

            for (; t < step[k]; t++) /* an idle step: an empty cell */
                pps__emit(buf, len, &need, t ? "," : "");
            snprintf(cell, sizeof(cell), "%s%d%c%u", t ? "," : "",
                     pps_schedule_vstage(sched, s, a->chunk), csv_letter[a->op & 3],
                     (unsigned)a->mb);
            pps__emit(buf, len, &need, cell);
            t++;
        }
        pps__emit(buf, len, &need, "\r\n");
    }
    free(step);
    return pps__emit_end(buf, len, need);
}

size_t pps_schedule_write_grid(const struct pps_schedule *sched, char *buf, size_t len)
{
    size_t need = 0;

    if (sched->placement == PPS_PLACE_V)
        pps__emit(buf, len, &need, "placement: v\n");
    need += pps_schedule_format(sched, -1, -1, len > need ? buf + need : NULL,
                                len > need ? len - need : 0);
    return pps__emit_end(buf, len, need);
}
