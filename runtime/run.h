/*
 * run.h - a whole pipeline run: from a configuration (what `ppscope run` parses) to one traced
 * run directory per schedule, with every stage's executor, transport, chunks and tracer.
 *
 * Transports. threads: the p stages are threads of this process, each with its own chunks (and
 * kernels contexts) and its own tracer writing shard "rank-0000S.db" of the run (stage = rank),
 * all on one clock. mpi: this process is one stage (rank = stage) of a job launched by mpirun or
 * srun with exactly p ranks; each rank writes its own shard with clock_sync = 1. pps_run()
 * initialises MPI when it is not yet (MPI_THREAD_FUNNELED) and finalises it if it did.
 *
 * A/B. Several schedules run one after the other in the same launch, on the same stages, model,
 * data and seed; each starts from freshly initialised chunks (the model is re-initialised from
 * the seed) and a fresh transport, and writes its own run, OUT/<schedule>. One schedule writes
 * OUT itself.
 *
 * W budget. w_budget bounds the pending W's of every stage (executor.h); act_budget_mib bounds
 * the bytes they hold: a stage whose largest chunk keeps X bytes per pending W (from its B to its
 * W: pps_model_act_bytes()'s after_b on cpu, half of after_f on emu, as emu.h counts) may hold
 * floor(act_budget_mib * 2^20 / X) of them. With both, each stage takes the smaller bound. Only
 * pending W's count: what a microbatch holds between its F and its B is the schedule's to decide.
 *
 * Metadata written into every shard: schedule, p, m, v, backend (emu says "emulated"), transport,
 * model (a description), partition (blocks per virtual stage), device, iters, optimizer, clip,
 * w_budget and act_budget_mib (as given, 0: none), stage_w_budget (this shard's stage's bound of
 * pending W's, 0: none), seed, lr, data; with emu, the modeled costs (emu_tf_ns, emu_tb_ns,
 * emu_tw_ns, the multipliers and injected faults) and tcomm_ns, the modeled time of one activation
 * on a link, which the analysis adds to each cross-stage dependency of its prediction; with
 * zb-auto, zb_auto_costs ("tf,tb,tw,tcomm" of this shard's stage, as its order was built for
 * them: run_schedule.c) and zb_auto_mem_limit (mem_limit, or p), which the analysis builds the
 * same order from; with a custom schedule (schedule "custom"), schedule_order (this shard's
 * stage's row of ppscope's grid: schedule.h) and schedule_file, which the analysis reads the
 * order from.
 *
 * Failure. A stage that fails stops the others (executor.h). Its run's tracers are closed with
 * pps_trace_close_incomplete(): everything recorded is written, the flushers stop, the shards
 * are closed without the complete mark (readers say the run is incomplete).
 *
 * Stopping. With the threads transport, SIGTERM or SIGINT during the run (pps_run sets handlers
 * that only note the signal, and puts the program's back when it returns) stops it the same way:
 * the stages are aborted, every tracer is closed incomplete with all it recorded, and pps_run
 * returns PPS_EIO, "stopped by SIGTERM: DIR is incomplete: N spans kept, D dropped".
 *
 * Lost spans. A tracer that could not write spans (a full disk) never stops training; when the
 * run is over, pps_run returns PPS_EIO with one line of what was lost, summed over the stages
 * (under MPI over the ranks, every rank returning it): "DIR: the tracer could not write U of N
 * spans (iterations A-B of ITERS, in whole or in part): REASON".
 *
 * Errors: 0 or a negative PPS_E... code with a one-line reason in err. pps_err_is_input() tells
 * the errors of the configuration (exit 2 in the CLI) from the failures of the run.
 */
#ifndef PPS_RUN_H
#define PPS_RUN_H

#include <stddef.h>
#include <stdio.h>

#include "emu.h"
#include "model.h"
#include "optimizer.h"
#include "pps_error.h"

#define PPS_RUN_MAX_SCHEDULES 8
/* In kinds[]: the custom schedule (config.custom), a schedule file's, run as kind "custom". */
#define PPS_RUN_CUSTOM (-1)

enum pps_run_backend {
    PPS_BACKEND_CPU = 0,
    PPS_BACKEND_EMU = 1,
    PPS_BACKEND_CUDA = 2, /* the real model on a GPU (the cuda kernels backend) */
};

/* The kernels backend a run's real math uses ("cpu", "cuda"); NULL for emu (no math). */
const char *pps_run_kernels_backend(int backend);

enum pps_run_transport {
    PPS_TRANSPORT_AUTO = 0, /* mpi under a launcher that started more than one rank, else threads */
    PPS_TRANSPORT_THREADS,
    PPS_TRANSPORT_MPI,
    PPS_TRANSPORT_NCCL, /* one rank per GPU under MPI, the messages through NCCL (cuda only) */
};

struct pps_run_config {
    int kinds[PPS_RUN_MAX_SCHEDULES]; /* enum pps_sched_kind or PPS_RUN_CUSTOM, in this order */
    /* The schedule PPS_RUN_CUSTOM runs (of p, m and its own v and placement; validated), and the
     * file it came from, kept in the run's metadata (schedule_file); the caller's. */
    const struct pps_schedule *custom;
    const char *custom_file;
    int n_kinds;
    int p, m;
    int v;         /* chunks per stage; 0: 2 for interleaved, 1 for the others */
    int backend;   /* enum pps_run_backend */
    int transport; /* enum pps_run_transport */
    int iters;
    struct pps_model_spec model; /* layers, hidden, seq_len, micro_batch, seed, data, AdamW */
    const char *partition;       /* blocks per virtual stage "3,5,5,3"; NULL or "": even */
    const char *out;             /* the run directory (OUT/<schedule> with several); NULL: none */
    int trace;                   /* 0: no tracer at all (the runs are not written) */
    int optim_mode;              /* enum pps_optim_mode */
    double clip;                 /* global gradient-norm clip; <= 0: none */
    int check_grads;             /* cpu: one pass, no step, gradients against the reference */
    int w_budget;                /* the most pending W's per stage (above); 0: unbounded */
    double act_budget_mib;       /* MiB that pending W's may hold per stage (above); 0: none */
    int mem_limit;               /* zb-auto: live microbatches per stage, F to W; 0: p */
    struct pps_emu_config emu;
    int inject_nonfinite_iter; /* -1: none (executor.h) */
    int fail_stage, fail_iter; /* -1: none; that stage fails at the start of that iteration */
    int progress;              /* "iteration k/N, loss" on stderr about once a second */
    int warn_cores;            /* threads, cpu: a warning on stderr, once the run is set up, when
                                  the p stage threads outnumber the cores it may use */
    int keep_params;           /* threads: export every parameter at the end (tests) */
    int device_spans;          /* cuda: the device's kernels and copies from CUPTI (default 1) */
    int gpu_partition;         /* cuda: each stage on its own SM partition (default 1) */
};

/* Defaults that run in seconds: 1f1b, p = 4, m = 8, cpu, auto transport, 20 iterations, the
 * model's defaults (pps_model_spec_init), sync, clip 1, no W budget, emu defaults, nothing
 * injected. */
void pps_run_config_init(struct pps_run_config *c);

/* The v a schedule kind runs with under c (c->v, or its default; the custom schedule's own). */
int pps_run_config_v(const struct pps_run_config *c, int kind);
/* The placement of kind under c (the custom schedule's own). */
int pps_run_config_placement(const struct pps_run_config *c, int kind);

/*
 * Checks everything that can be checked without starting anything: every schedule against
 * (p, m, v), the partition against each schedule's virtual stages, the model, the emu config,
 * --check-grads only on cpu and with an output-free run or not, injections in range, budgets
 * that are >= 0 and, for act_budget_mib, hold one pending W on every stage. Returns
 * PPS_EINVAL or PPS_ESCHEDULE with a one-line reason.
 */
int pps_run_config_check(const struct pps_run_config *c, struct pps_err *err);

/* What one schedule's run did. */
struct pps_run_outcome {
    int kind;
    char dir[1024]; /* its run directory ("" when not traced) */
    double wall_ns; /* first action to last optimizer step, over this process's stages */
    double loss;    /* the last iteration's mean loss (NaN with emu) */
    long steps, skips, clips, rollbacks, reruns;
    /* --check-grads (filled on rank 0) */
    int grads_checked;
    int grads_equal; /* bitwise equal to pps_model_reference() */
    size_t n_grads;  /* gradients compared (the reference's count) */
    long first_diff; /* index of the first differing gradient, -1 when equal */
    float diff_got, diff_want;
    /* Where the schedule adds microbatches out of the reference's order ("" where it does not,
     * and the check is bitwise); there grads_equal and loss_equal mean within tolerance. */
    char order_note[160];
    double tolerance;    /* that tolerance, a share of each tensor's largest gradient; 0: bitwise */
    double max_rel_diff; /* the largest difference, in the same share */
    double ref_loss;     /* the reference's loss, and whether the pipeline's is bitwise it */
    int loss_equal;
    /* keep_params */
    float *params;
    size_t n_params;
};

struct pps_run_result {
    int rank;  /* this process's rank (0 with threads): the one that prints is rank 0 */
    int world; /* processes in the job */
    int n;     /* schedules run */
    struct pps_run_outcome outcomes[PPS_RUN_MAX_SCHEDULES];
    char transport[16]; /* "threads", "mpi" or "nccl" */
    int mpi_finalize;   /* pps_run started MPI: pps_run_result_release() finalises it */
};

/* Runs every schedule of c in turn (see above). res is filled as far as the run got; release it
 * with pps_run_result_release() in every case, after printing what rank 0 has to say: when pps_run
 * started MPI, the release waits for every rank and finalises MPI, so no rank exits (and has the
 * launcher kill the job) before rank 0's message is out. An OUT that exists and is not an empty
 * directory is PPS_EINVAL: a run is never overwritten. */
int pps_run(const struct pps_run_config *c, struct pps_run_result *res, struct pps_err *err);
void pps_run_result_release(struct pps_run_result *res);

/* This process's rank as the launcher (mpirun, srun) numbers it, 0 without one: for what a job
 * says once, before pps_run starts MPI. */
int pps_run_launched_rank(void);

/* Where the first differing gradient lies in the model's export order: tensor index and a name
 * like "block 1 w1" (for --check-grads' message). */
void pps_run_grad_tensor(const struct pps_model_spec *s, size_t index, int *tensor, char *name,
                         size_t len);

#endif
