/*
 * rebalance.h - the layer partition that minimises the predicted iteration time of a run: its
 * measured per-layer costs (the runtime's RANGE spans "embedding", "block B", "head" inside each
 * F, B, W or BW op; docs/runtime.md), summed per stage for each candidate partition and replayed
 * by the simulator with the run's own schedule, message time and optimizer step, as the report's
 * prediction (predict.c) does for the partition the run had.
 *
 *   struct pps_rebalance rb;
 *   if (pps_rebalance_search(run, rep, &rb, &err) < 0)
 *       ...out of memory...
 *   if (rb.ok)
 *       printf("--partition %s: %.1f ms\n", rb.best, rb.after_iter_ns / 1e6);
 *   pps_rebalance_release(&rb);
 *
 * The cost model. A stage's op costs its median measured op minus the median costs of the layers
 * it ran, plus those of the layers the candidate gives it, plus the report's per-op overhead:
 * what an op spends outside its layers (copies in and out) stays with the stage. Medians, not
 * means: a rare stall of a thread on a shared host lands in one op, and a mean would carry it to
 * whichever stage the layer moves to (docs/analysis.md, ## Rebalance).
 * Where the run has no per-layer spans, each stage's cost is assumed spread evenly over its
 * blocks (the embedding and the head inside them): per_layer = 0 says so.
 *
 * Candidates: every split of the blocks into p contiguous runs (stages may hold none), when
 * there are at most 100000 of them; beyond, a descent from the current partition moving one
 * boundary by one block at a time. Runs of v > 1 are not searched (the simulator takes one cost
 * per stage and splits it evenly over its chunks): ok = 0 with a note.
 */
#ifndef PPS_REBALANCE_H
#define PPS_REBALANCE_H

#include "analysis.h"

struct pps_rebalance {
    int ok; /* 0: no answer, note says why */
    char note[256];
    int per_layer;   /* 1: costs from the run's per-layer spans; 0: per-stage costs spread evenly */
    int layers;      /* blocks of the model (the sum of meta partition) */
    int exhaustive;  /* 1: every partition was simulated; 0: the descent's */
    long candidates; /* partitions simulated */
    char current[512], best[512]; /* blocks per virtual stage, "2,6" */
    /* On the run's own terms (the report's): with an optimizer barrier the simulator's makespan
     * and bubble, post-validated its steady period and steady bubble. */
    double before_iter_ns, before_bubble, after_iter_ns, after_bubble;
    /* Median measured cost per microbatch of each layer, ns: F, B (BW in fused runs), W (0 in
     * fused runs); the embedding's and the head's, and layers entries for the blocks. NaN where
     * the run has no spans of it. */
    double embed_ns[3], head_ns[3];
    double *block_ns; /* layers * 3 */
};

/* Searches rb's answer for run, whose report rep is. Returns 0 (rb->ok says whether there is
 * one) or PPS_ENOMEM; release rb in every case. */
int pps_rebalance_search(const struct pps_run *run, const struct pps_report *rep,
                         struct pps_rebalance *rb, struct pps_err *err);

void pps_rebalance_release(struct pps_rebalance *rb);

#endif
