/* internal.h - what schedule/'s files share and nobody else may use. */
#ifndef PPS_SCHEDULE_INTERNAL_H
#define PPS_SCHEDULE_INTERNAL_H

#include "schedule.h"

/* Upper bounds that keep every index and count comfortably inside the types used. */
#define MAX_P 4096
#define MAX_M (1 << 20)
#define MAX_V 64
/* The most (microbatch, virtual stage) pairs: ~12M actions, a few hundred MB simulated. */
#define MAX_CELLS (1L << 22)

/*
 * Dependency-driven execution of one iteration of sched: each stage walks its list in order; an
 * action runs when its stage is free and its dependencies have ended (plus costs->tcomm when a
 * dependency comes from another stage). costs NULL runs every action in zero time, which checks
 * deadlock-freedom only. ready[s] is when stage s may start (NULL: all at 0). Writes each action's
 * start and end to spans (may be NULL) and each stage's end time to stage_end (may be NULL).
 * Expects counts and ranges already checked (pps__schedule_check_counts). Returns 0, or
 * PPS_ESCHEDULE with the stuck stages named in err and the first one's head in *fault.
 * Linear in the number of actions.
 */
int pps__schedule_execute(const struct pps_schedule *sched, const struct pps_sim_costs *costs,
                          const double *ready, struct pps_sim_span *spans, double *stage_end,
                          struct pps_sched_fault *fault, struct pps_err *err);

/* Counts, ranges and per-microbatch order on each stage: the checks that need no execution. */
int pps__schedule_check_counts(const struct pps_schedule *sched, struct pps_sched_fault *fault,
                               struct pps_err *err);

/* Costs fit for p stages: every time finite and >= 0, w_mem in [0, 1]. 0 or PPS_EINVAL. */
int pps__sim_check_costs(int p, const struct pps_sim_costs *c, struct pps_err *err);

/* ZB-V's action lists into sched (allocated for p, m, v = 2: 6m actions a stage; generate_v.c). */
void pps__gen_zb_v(struct pps_schedule *sched);

/* DualPipeV's action lists into sched (allocated for p, m >= 2p, v = 2: at most 6m actions a
 * stage, 4m + 2p-s-1 on stage s, its backwards part BW, part B and W; generate_dualpipev.c). */
void pps__gen_dualpipev(struct pps_schedule *sched);

/* Interleaved zero bubble's action lists into sched (allocated for p, m, v: 3vm actions a stage;
 * generate_izb.c), and the size of its groups of microbatches: m / max(1, m / p), or -1 when the
 * groups cannot all be that size. */
void pps__gen_interleaved_zb(struct pps_schedule *sched);
int pps__izb_group(int p, int m);

/* Appends s to buf (len bytes) like snprintf, *need counting the length the whole text needs;
 * pps__emit_end puts the NUL and returns that length. */
void pps__emit(char *buf, size_t len, size_t *need, const char *s);
size_t pps__emit_end(char *buf, size_t len, size_t need);

/* "F3", "BW12", "F3.1" (chunk shown when v > 1) into buf; returns buf. */
char *pps__action_str(const struct pps_action *a, int v, char *buf, size_t len);

#endif
