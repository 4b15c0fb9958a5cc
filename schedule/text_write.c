/*
 * text_write.c - a schedule as text: PyTorch's pipeline-order CSV, each action in the column of
 * its step, and ppscope's grid (schedule.h). pps_schedule_read reads both back to the same
 * schedule.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* The stages to look at in a step: each once (stamp: the step it is queued for). */
struct steps {
    int *now, *next, n_now, n_next;
    long *stamp;
};

static void queue(struct steps *q, int s, long t)
{
    if (q->stamp[s] != t) {
        q->stamp[s] = t;
        q->next[q->n_next++] = s;
    }
}

/*
 * Each action's step (laid out like sched->actions) when every action takes one step and runs
 * at the first step after its input is made and its stage's previous action: lockstep, as
 * PyTorch's schedules lay their orders out. The inputs are the validator's (schedule.h). A stage
 * is looked at in a step only where it may run: it ran the step before, or what it waits for was
 * made then; so the cost is linear in the actions, as execute.c's. 0, or -1 where sched does not
 * run (a deadlock) or memory runs out.
 */
static int lockstep(const struct pps_schedule *sc, long *step)
{
    int p = sc->p, V = sc->p * sc->v, rc = -1, *tmp;
    size_t slots = (size_t)V * (size_t)sc->m, left = sc->start[p], m = (size_t)sc->m;
    long *done[2] = {malloc(slots * sizeof(long)), malloc(slots * sizeof(long))}; /* F, B */
    int *wait[2] = {malloc(slots * sizeof(int)), malloc(slots * sizeof(int))};
    size_t *pos = calloc((size_t)p, sizeof(size_t));
    struct steps q = {malloc((size_t)p * sizeof(int)), malloc((size_t)p * sizeof(int)), 0, 0,
                      malloc((size_t)p * sizeof(long))};

    if (!done[0] || !done[1] || !wait[0] || !wait[1] || !pos || !q.now || !q.next || !q.stamp)
        goto out;
    for (size_t k = 0; k < slots; k++) {
        done[0][k] = done[1][k] = -1;
        wait[0][k] = wait[1][k] = -1;
    }
    for (int s = 0; s < p; s++) {
        q.stamp[s] = -1;
        queue(&q, s, 0);
    }
    for (long t = 0; q.n_next > 0; t++) {
        tmp = q.now, q.now = q.next, q.next = tmp;
        q.n_now = q.n_next;
        q.n_next = 0;
        for (int i = 0; i < q.n_now; i++) {
            int s = q.now[i], vs, dep = -1, made;
            const struct pps_action *a;
            size_t self, idx = 0;

            if (pos[s] >= pps_schedule_len(sc, s))
                continue;
            a = pps_schedule_at(sc, s, pos[s]);
            vs = pps_schedule_vstage(sc, s, a->chunk);
            self = (size_t)vs * m + a->mb;
            if (a->op == PPS_OP_F && vs > 0)
                dep = 0, idx = self - m;
            else if ((a->op == PPS_OP_B || a->op == PPS_OP_BW) && vs < V - 1)
                dep = 1, idx = self + m;
            /* Made at a step before t: what is made this step is an input from the next. */
            if (dep >= 0 && !(done[dep][idx] >= 0 && done[dep][idx] < t)) {
                if (done[dep][idx] == t)
                    queue(&q, s, t + 1);
                else
                    wait[dep][idx] = s;
                continue;
            }
            step[sc->start[s] + pos[s]] = t;
            made = a->op == PPS_OP_F ? 0 : a->op == PPS_OP_W ? -1 : 1;
            if (made >= 0) {
                done[made][self] = t;
                if (wait[made][self] >= 0) {
                    queue(&q, wait[made][self], t + 1);
                    wait[made][self] = -1;
                }
            }
            pos[s]++;
            left--;
            queue(&q, s, t + 1);
        }
    }
    rc = left == 0 ? 0 : -1;
out:
    free(done[0]);
    free(done[1]);
    free(wait[0]);
    free(wait[1]);
    free(pos);
    free(q.now);
    free(q.next);
    free(q.stamp);
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
