/*
 * run_int.h - what the files behind run.h share: one schedule's setup (schedule, partition, text,
 * run directory), building a stage's chunks, tracer and transport, the executor's config, the
 * gradient check, and the two drivers (threads in run_threads.c, MPI in run_mpi.c).
 */
#ifndef PPS_RUN_INT_H
#define PPS_RUN_INT_H

#include "executor.h"
#include "run.h"
#include "schedule.h"

/* One schedule's run, as every stage of it sees it. */
struct pps__run_sched {
    const struct pps_run_config *cfg;
    int kind, p, m, v, nvs;
    struct pps_schedule sched;
    int *first_block;            /* nvs + 1 offsets (model.h's partition) */
    struct pps_model_data *data; /* cpu: the text, shared read-only by every chunk */
    char dir[1024];              /* the run directory, "" when not traced */
    char partition[512];         /* blocks per virtual stage, "1,1,1,1" */
    char run_id[17];             /* meta run_id of every shard (pps_run_id.h); MPI: rank 0's */
    int one_device;              /* every stage on one device (the threads transport) */
    /* progress on stderr */
    int64_t progress_ns;
};

/* The stage that holds the last virtual stage, which computes the loss (the schedule's placement:
 * the last stage in a loop, stage 0 in V). */
static inline int pps__run_loss_stage(const struct pps__run_sched *rs)
{
    return pps_place_stage(rs->sched.placement, rs->p, rs->nvs - 1);
}

/* Generates and validates the schedule, splits the blocks, loads the text (cpu) and names the
 * run directory (OUT, or OUT/<schedule> when c runs several). Release with
 * pps__run_sched_release() in every case. */
int pps__run_sched_prepare(struct pps__run_sched *rs, const struct pps_run_config *c, int kind,
                           struct pps_err *err);
void pps__run_sched_release(struct pps__run_sched *rs);

/* Stage stage's v chunks (model or emu), chunks[c] of the virtual stage the schedule's placement
 * gives chunk c of stage (pps_schedule_vstage()); on failure
 * none is left. */
int pps__run_chunks_new(const struct pps__run_sched *rs, int stage, struct pps_compute **chunks,
                        struct pps_err *err);
void pps__run_chunks_free(struct pps_compute **chunks, int v);

/* Gives stage stage's chunks the tracer for their per-layer spans, with the layers' names
 * interned ("embedding", "block B", "head"); nothing without a tracer. Freed with the chunks. */
int pps__run_chunks_trace(const struct pps__run_sched *rs, int stage, struct pps_compute **chunks,
                          struct pps_tracer *tracer, struct pps_err *err);

/* Stage stage's tracer on the run directory, shard of rank stage in a world of p, with the run's
 * metadata written; *out NULL when the run is not traced. */
int pps__run_tracer_open(struct pps__run_sched *rs, int stage, int clock_sync,
                         const char *transport, struct pps_tracer **out, struct pps_err *err);

/* With emu, wraps *t in the link model (taking it); otherwise leaves it. */
int pps__run_transport_wrap(const struct pps__run_sched *rs, struct pps_transport **t,
                            struct pps_err *err);

/* The schedule of kind for c: generated, or zb-auto built for c's costs (run_schedule.c). */
int pps__run_schedule_make(const struct pps_run_config *c, int kind, int v,
                           struct pps_schedule *sched, struct pps_err *err);
/* zb-auto's limit of live microbatches per stage: c->mem_limit, or p. */
int pps__run_mem_limit(const struct pps_run_config *c);
/* The costs zb-auto is built for under c (emu: its configured op and message times; cpu,
 * cuda: unit costs): 0 or PPS_ENOMEM. Release with pps_sim_costs_release(). */
int pps__run_zb_auto_costs(const struct pps_run_config *c, struct pps_sim_costs *costs);
/* zb_auto_costs ("tf,tb,tw,tcomm" of stage, exactly) and zb_auto_mem_limit into t's metadata;
 * nonzero when one was not written. */
int pps__run_zb_auto_meta(const struct pps_run_config *c, int stage, struct pps_tracer *t);

/* A custom schedule's stage row (schedule_order: the grid's "s2: F0 F1 ...") and schedule_file
 * into t's metadata; nonzero when one was not written (run_schedule.c). */
int pps__run_custom_meta(const struct pps__run_sched *rs, int stage, struct pps_tracer *t);

/* Stage stage's bound of pending W's (run.h) under c, for p * v virtual stages split by
 * first_block, in *budget (0: unbounded). PPS_EINVAL naming the schedule kind when
 * c->act_budget_mib does not hold one pending W on that stage. */
int pps__run_stage_w_budget(const struct pps_run_config *c, int kind, int p, int v,
                            const int *first_block, int stage, int *budget, struct pps_err *err);

/* The executor's config for stage stage. */
void pps__run_exec_config(struct pps__run_sched *rs, int stage, struct pps_transport *t,
                          struct pps_tracer *tracer, struct pps_compute **chunks,
                          struct pps_exec_config *ec);

/* Compares the pipeline's gradients (every chunk's export in virtual-stage order) and loss sum
 * with pps_model_reference() for iteration 0, filling o's check fields. */
int pps__run_compare_grads(const struct pps__run_sched *rs, const float *grads, size_t n,
                           double loss_sum, struct pps_run_outcome *o, struct pps_err *err);

/* Refuses an OUT that exists and is not an empty directory. */
int pps__run_out_check(const char *out, struct pps_err *err);

/* What a run's tracers did with its spans, summed over its stages (or ranks): committed, and
 * refused by the store (a full disk) with their lowest and highest iteration (-1: none). */
struct pps__run_loss {
    uint64_t written, unwritten;
    int32_t first, last;
    uint64_t dropped; /* every span not kept, the unwritten included */
};

/* Adds a tracer's pps_trace_stats() (taken after the last flush) to l; l starts zeroed with
 * first = last = -1: {.first = -1, .last = -1}. */
void pps__run_loss_add(struct pps__run_loss *l, const struct pps_trace_stats *s);

/* When l lost spans: PPS_EIO with the one line `ppscope run` ends with, "DIR: the tracer could
 * not write N of M spans (iterations A-B of ITERS, in whole or in part): WHY". 0 otherwise. */
int pps__run_loss_error(const struct pps__run_loss *l, const char *dir, int iters, const char *why,
                        struct pps_err *err);

/* The drivers: every schedule of c, in this process's threads or as this MPI rank. */
int pps__run_threads(const struct pps_run_config *c, struct pps_run_result *res,
                     struct pps_err *err);
int pps__run_mpi(const struct pps_run_config *c, struct pps_run_result *res, struct pps_err *err);
/* Every rank meets, then MPI is finalised (a no-op without MPI). */
void pps__run_mpi_finalize(void);

/* The world size a launcher (mpirun, srun) gave this process, 1 without one. */
int pps__run_launched_world(void);

#endif
