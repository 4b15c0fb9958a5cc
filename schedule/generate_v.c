/*
 * generate_v.c - ZB-V (Qi et al., "Zero Bubble Pipeline Parallelism", section 6; the V-shaped
 * schedule of their repository and PyTorch's ScheduleZBVZeroBubble): two chunks per stage in the
 * V placement (stage s holds virtual stages s and 2p-1-s), B and W split.
 *
 * Stage s's order, for n = max(m, 2p-1) microbatches (those past m are left out at the end:
 * every stage leaves out the same ones, so what is left still runs):
 *   warm-up    2(p-s)-1 forwards of chunk 0; then s pairs F1 F0; then p-s triples F1 B1 W1
 *   steady     F0 (while chunk 0 has forwards left) B0 W0 F1 B1 W1, until chunk 1's forwards
 *              catch up with chunk 0's
 *   cool-down  s pairs B0 B1; p-s pairs B0 W0; then chunk 1's W's left, then chunk 0's
 * With tF = tB = tW the steady state has no bubble, at 1F1B's peak of activations (p
 * microbatches through a whole stage: 2p chunk halves on stage 0).
 */
#include "internal.h"

/* The counts of one stage's actions so far, per chunk. */
struct v_stage {
    struct pps_schedule *s;
    size_t n;  /* actions written on this stage */
    int limit; /* m: the microbatches that are kept */
    int f[2], b[2], w[2];
};

static void put(struct v_stage *z, int op, int chunk, int mb)
{
    struct pps_action *a;

    if (mb >= z->limit)
        return; /* a padding microbatch */
    a = &z->s->actions[z->n++];
    a->op = (uint8_t)op;
    a->chunk = (uint16_t)chunk;
    a->mb = (uint32_t)mb;
}

static void f(struct v_stage *z, int c)
{
    put(z, PPS_OP_F, c, z->f[c]++);
}

static void b(struct v_stage *z, int c)
{
    put(z, PPS_OP_B, c, z->b[c]++);
}

static void w(struct v_stage *z, int c)
{
    put(z, PPS_OP_W, c, z->w[c]++);
}

void pps__gen_zb_v(struct pps_schedule *s)
{
    int p = s->p, m = s->m, n = m > 2 * p - 1 ? m : 2 * p - 1;
    size_t at = 0;

    for (int st = 0; st < p; st++) {
        struct v_stage z = {s, at, m, {0, 0}, {0, 0}, {0, 0}};

        s->start[st] = at;
        for (int k = 0; k < 2 * (p - st) - 1; k++)
            f(&z, 0);
        for (int k = 0; k < st; k++) {
            f(&z, 1);
            f(&z, 0);
        }
        for (int k = 0; k < p - st; k++) {
            f(&z, 1);
            b(&z, 1);
            w(&z, 1);
        }
        while (z.f[1] < z.f[0] || z.f[0] < n) {
            if (z.f[0] < n)
                f(&z, 0);
            b(&z, 0);
            w(&z, 0);
            f(&z, 1);
            b(&z, 1);
            w(&z, 1);
        }
        for (int k = 0; k < st; k++) {
            b(&z, 0);
            b(&z, 1);
        }
        for (int k = 0; k < p - st; k++) {
            b(&z, 0);
            w(&z, 0);
        }
        while (z.w[1] < z.b[1])
            w(&z, 1);
        while (z.w[0] < z.b[0])
            w(&z, 0);
        at = z.n;
    }
    s->start[p] = at;
}
