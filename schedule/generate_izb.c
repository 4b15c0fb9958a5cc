/*
 * generate_izb.c - interleaved zero bubble: interleaved 1F1B with the backward split into B and W
 * and each stage's W's deferred into the drain, in the order of PyTorch's
 * ScheduleInterleavedZeroBubble (after Qi et al.'s zero-bubble interleaving).
 *
 * v chunks a stage in the loop placement (chunk c of stage s is virtual stage c*p + s).
 * Microbatches go round in groups of r = m / max(1, m / p) (p when m is a multiple of p; m when
 * m < p), each group through every chunk before the next, as in Megatron's interleaving. Stage s
 * walks v*m forward steps and v*m backward steps:
 *   warm-up    (v-1)*r + (p-1-s) forwards (at most v*m): the steps of chunk k/r mod v
 *   steady     pairs F B, forwards going on, backwards walking the chunks in reverse
 *   cool-down  the B's left
 * and after its first s backwards, each backward is followed by the W of the backward s places
 * earlier, so stage s keeps s W's back to run in the drain, where it would idle; the W's left run
 * at the end, in their B's order. Warm-up grows by one forward a stage up the pipe, where
 * Megatron's grows by two: the backward that comes back is a B, about one op long, not a fused
 * BW of two, so one more forward covers it.
 */
#include "internal.h"

/* The chunk of the k-th forward (backward = 0) or backward step of a stage. */
static int izb_chunk(int v, int r, int warm, int k, int backward)
{
    if (!backward)
        return (k / r) % v;
    return v - 1 - ((k - warm) / r) % v;
}

int pps__izb_group(int p, int m)
{
    int rounds = m / p > 1 ? m / p : 1;
    return m % rounds ? -1 : m / rounds;
}

void pps__gen_interleaved_zb(struct pps_schedule *s)
{
    int p = s->p, m = s->m, v = s->v, r = pps__izb_group(p, m), total = v * m;
    /* Per chunk, the microbatch each op works on next (v <= 64: pps_schedule_check_params). */
    int nf[64], nb[64], nw[64];
    size_t n = 0;

    for (int st = 0; st < p; st++) {
        int warm = (v - 1) * r + (p - 1 - st);
        int nbw = 0, nws = 0; /* backwards issued, W's issued */
        if (warm > total)
            warm = total;
        for (int c = 0; c < v; c++)
            nf[c] = nb[c] = nw[c] = 0;
        s->start[st] = n;
        for (int k = 0; k < total + warm; k++) {
            /* Step k: a forward while k < total (warm-up and steady), a backward from warm on. */
            if (k < total) {
                int c = izb_chunk(v, r, warm, k, 0);
                struct pps_action *a = &s->actions[n++];
                a->op = PPS_OP_F, a->chunk = (uint16_t)c, a->mb = (uint32_t)nf[c]++;
            }
            if (k < warm)
                continue;
            int c = izb_chunk(v, r, warm, k, 1);
            struct pps_action *a = &s->actions[n++];
            a->op = PPS_OP_B, a->chunk = (uint16_t)c, a->mb = (uint32_t)nb[c]++;
            nbw++;
            if (nbw > st) {
                /* The W of the backward st places back: the nws-th backward step's chunk. */
                int wc = izb_chunk(v, r, warm, warm + nws, 1);
                a = &s->actions[n++];
                a->op = PPS_OP_W, a->chunk = (uint16_t)wc, a->mb = (uint32_t)nw[wc]++;
                nws++;
            }
        }
        while (nws < total) {
            int wc = izb_chunk(v, r, warm, warm + nws, 1);
            struct pps_action *a = &s->actions[n++];
            a->op = PPS_OP_W, a->chunk = (uint16_t)wc, a->mb = (uint32_t)nw[wc]++;
            nws++;
        }
    }
    s->start[p] = n;
}
