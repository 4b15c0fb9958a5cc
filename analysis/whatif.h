/*
 * whatif.h - what another schedule or shape would give on this run: the run's own measured
 * per-stage op costs, per-op overhead, message time and optimizer step (the report's, the ones
 * its prediction uses) replayed by the simulator under other schedules, p, m and v.
 *
 *   struct pps_whatif w = {.kind = PPS_SCHED_ZB_H1, .p = rep->p, .m = rep->m, .v = 1};
 *   struct pps_whatif_opts o = {.w_share = 0.5};
 *   if (pps_whatif_predict(rep, &o, &w, &err) < 0)
 *       ...out of memory...
 *   if (w.ok)
 *       printf("%.1f ms\n", w.iter_ns / 1e6);
 *   else
 *       puts(w.note);
 *
 * What is assumed where the run cannot say (each case sets a bit of w.assumed, and
 * pps_whatif_assumptions() says it in words):
 *   - a run that measured B and W fused (BW: gpipe, 1f1b, interleaved) predicts the schedules
 *     that split them with B and W sharing BW's time as opts->w_share says;
 *   - another p spreads the run's whole per-microbatch work (every stage's, summed) evenly over
 *     the new stages: the run's per-layer costs are not known to this module;
 *   - another m keeps the batch: each microbatch costs m_run / m of the run's, its activations
 *     too; the time of a message and of the optimizer step stay as measured;
 *   - the per-op overhead (sending, copying, the runtime's steps between ops) is paid per op, so
 *     v chunks pay it v times per microbatch and a split B and W twice.
 */
#ifndef PPS_WHATIF_H
#define PPS_WHATIF_H

#include "analysis.h"

struct pps_whatif_opts {
    double w_share; /* W's share of a fused BW, in [0, 1] (0.5: B and W cost the same) */
    int mem_limit;  /* zb-auto, built for the replayed costs: live microbatches a stage; 0: p */
};

#define PPS_WHATIF_ASSUMED_SPLIT 0x1 /* B and W from a fused BW, by w_share */
#define PPS_WHATIF_ASSUMED_P     0x2 /* the work spread evenly over another p */
#define PPS_WHATIF_ASSUMED_M     0x4 /* another m, the batch kept */

struct pps_whatif {
    /* Asked: the schedule (enum pps_sched_kind) and its shape; v is 1 except for interleaved.
     * Or kind -1 and custom: that schedule (a schedule file's), of its own p, m and v. */
    int kind, p, m, v;
    const struct pps_schedule *custom;
    /* Answered: ok = 0 and note says why when the shape does not fit the schedule, or the run
     * has no costs to replay (no prediction of its own: rep->prediction_note). */
    int ok;
    char note[256];
    int assumed; /* PPS_WHATIF_ASSUMED_* */
    /* On the run's own terms (the report's basis): with an optimizer barrier, one iteration's
     * makespan and its bubble; post-validated, the steady period and steady bubble. */
    double iter_ns;
    double bubble;
    /* Peak live activations of the stage that holds most, in the run's microbatches through one
     * stage (another m rescales the simulator's own units), and which stage that is. */
    double peak_act;
    int peak_stage;
};

/* The same for the run's own schedule and shape, from its prediction (rep->pred): the baseline
 * every what-if is compared with. ok = 0 (with rep's note) where the run has no prediction. */
void pps_whatif_baseline(const struct pps_report *rep, struct pps_whatif *w);

/*
 * Fills w's answer for its question (kind, p, m, v) from rep's measured costs. Returns 0 (w->ok
 * says whether there is a figure), PPS_EINVAL for a NULL argument or a w_share outside [0, 1],
 * or PPS_ENOMEM.
 */
int pps_whatif_predict(const struct pps_report *rep, const struct pps_whatif_opts *opts,
                       struct pps_whatif *w, struct pps_err *err);

/* The assumptions w->assumed names, as one sentence ("" when none), at most len bytes with the
 * NUL. */
void pps_whatif_assumptions(const struct pps_report *rep, const struct pps_whatif_opts *opts,
                            const struct pps_whatif *w, char *buf, size_t len);

#endif
