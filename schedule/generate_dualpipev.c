/*
 * generate_dualpipev.c - DualPipeV: DeepSeek's DualPipe (DeepSeek-V3 technical report, section
 * 3.2.1) cut in half into a V (Sea AI Lab's "cut-in-half"; dualpipev.py of deepseek-ai/DualPipe
 * and PyTorch's ScheduleDualPipeV). Two chunks per stage in the V placement: stage s holds
 * virtual stages s (chunk 0) and 2p-1-s (chunk 1), so microbatches enter at stage 0, go down the
 * stages and come back up to stage 0, where the loss is.
 *
 * Stage s's order, for m >= 2p microbatches (the reference asserts it: with fewer the main step
 * has a negative count on the first stages), in the reference's eight steps:
 *   1  2(p-s-1) forwards of chunk 0
 *   2  s+1 pairs F0 F1
 *   3  p-s-1 triples B1 W1 F1 (zero bubble: W right after its B)
 *   4  m-2p+s+1 quadruples F0 BW1 F1 BW0: the reference's two overlapped F&B pairs
 *   5  p-s-1 triples BW1 F1 BW0
 *   6  s+1 pairs B1 B0, full backwards (BW) for the first half and B's whose W waits for the
 *      second (the pair's second op switches first on even stages, its first on odd ones)
 *   7  p-s-1 pairs W B0
 *   8  s+1 W's
 * W's run in the order of their B's, across both chunks (the reference's FIFO weight store).
 *
 * Where a run departs from DeepSeek's: the reference runs each F&B pair as one unit that
 * overlaps one microbatch's forward with another's backward (one's communication hiding behind
 * the other's compute). ppscope's executor runs one action at a time per stage, so each pair is
 * its F then its BW, and no compute hides communication: F&B costs F + B.
 */
#include "internal.h"

/* One stage's list being written: counts per chunk, and where the oldest pending W's B is. */
struct dpv_stage {
    struct pps_schedule *s;
    size_t first; /* the stage's first action */
    size_t n;     /* actions written so far, from 0 */
    size_t wq;    /* actions before this hold no B whose W is still to be written */
    int f[2], b[2];
};

static void put(struct dpv_stage *z, int op, int chunk, int mb)
{
    struct pps_action *a = &z->s->actions[z->first + z->n++];

    a->op = (uint8_t)op;
    a->chunk = (uint16_t)chunk;
    a->mb = (uint32_t)mb;
}

static void f(struct dpv_stage *z, int c)
{
    put(z, PPS_OP_F, c, z->f[c]++);
}

/* A backward of chunk c: B with its W left for later (split) or BW. */
static void b(struct dpv_stage *z, int c, int split)
{
    put(z, split ? PPS_OP_B : PPS_OP_BW, c, z->b[c]++);
}

/* The W of the oldest B whose W is pending, if any: the list itself is the queue, each B's W
 * written once the scan passes it. */
static void w(struct dpv_stage *z)
{
    const struct pps_action *a = &z->s->actions[z->first];

    while (z->wq < z->n && a[z->wq].op != PPS_OP_B)
        z->wq++;
    if (z->wq == z->n)
        return;
    put(z, PPS_OP_W, a[z->wq].chunk, (int)a[z->wq].mb);
    z->wq++;
}

void pps__gen_dualpipev(struct pps_schedule *s)
{
    int p = s->p, m = s->m;
    size_t at = 0;

    for (int st = 0; st < p; st++) {
        struct dpv_stage z = {s, at, 0, 0, {0, 0}, {0, 0}};
        int zb = 0;

        s->start[st] = at;
        for (int k = 0; k < 2 * (p - st - 1); k++)
            f(&z, 0);
        for (int k = 0; k < st + 1; k++) {
            f(&z, 0);
            f(&z, 1);
        }
        for (int k = 0; k < p - st - 1; k++) {
            b(&z, 1, 1);
            w(&z);
            f(&z, 1);
        }
        for (int k = 0; k < m - 2 * p + st + 1; k++) {
            f(&z, 0);
            b(&z, 1, 0);
            f(&z, 1);
            b(&z, 0, 0);
        }
        for (int k = 0; k < p - st - 1; k++) {
            b(&z, 1, 0);
            f(&z, 1);
            b(&z, 0, 0);
        }
        for (int k = 0; k < st + 1; k++) {
            if (k == (st + 1) / 2 && st % 2 == 1)
                zb = 1;
            b(&z, 1, zb);
            if (k == (st + 1) / 2 && st % 2 == 0)
                zb = 1;
            b(&z, 0, zb);
        }
        for (int k = 0; k < p - st - 1; k++) {
            w(&z);
            b(&z, 0, 1);
        }
        for (int k = 0; k < st + 1; k++)
            w(&z);
        at += z.n;
    }
    s->start[p] = at;
}
