/*
 * analysis.h - what a loaded run means: per-iteration, per-stage busy time by kind, idle, the
 * measured bubble, the theory beside it, the simulator's prediction for the run's schedule with
 * the op costs and links the run measured, the links and the host themselves, the verdict and
 * the flags that say why.
 *
 * Definitions (docs/analysis.md says them for users):
 *   stages            those the run has: with p known 0..p-1 and any that recorded spans,
 *                     without p only those that recorded spans
 *   iteration window  [earliest start, latest end] of the compute spans labelled with that
 *                     iteration, over all stages; other spans, and spans without an iteration
 *                     (iter < 0), open no window but are measured inside the windows they meet
 *   busy              time the stage spends in compute spans (F, B, W, BW, OPT) inside the
 *                     window: their union, clipped to the window, whatever their iteration label,
 *                     so overlapping spans are not counted twice
 *   idle              window - busy (waiting, communicating or doing nothing)
 *   bubble            sum of idle over the stages / (stages * window); the run's bubble is the
 *                     mean of its iterations' bubbles
 *   iteration time    the steady period (one iteration's end to the next's), else the window
 *   idle by phase     a stage's idle in one window cut at its first backward's start, its last
 *                     forward's end and its last op's end: warm-up, steady, cool-down, barrier
 *                     (schedule.h, pps_phase_edges; phase.c)
 * No I/O here: the CLI and the TUI print what this computes.
 *
 *   struct pps_report *rep = NULL;
 *   if (pps_analysis_report(run, &rep, &err) < 0)
 *       ...err.msg says why...
 *   printf("%.1f%%\n", 100 * rep->bubble);
 *   pps_report_free(rep);
 */
#ifndef PPS_ANALYSIS_H
#define PPS_ANALYSIS_H

#include <stddef.h>
#include <stdint.h>

#include "pps_error.h"
#include "schedule.h"
#include "storage.h"

/* The verdict's tolerance: at least this far (a fraction: 0.02 = 2 percentage points) from the
 * prediction, or PPS_VERDICT_SIGMAS times the run's own iteration-to-iteration spread when that
 * is wider, a measured bubble is not explained by the schedule and its measured op costs. */
#define PPS_VERDICT_FLOOR  0.02
#define PPS_VERDICT_SIGMAS 2.0

struct pps_stage_stats {
    int stage;
    int present; /* the run has this stage: it recorded spans, or the run's p includes it */
    /* Time by span kind inside the window (compute and communication), each kind's spans
     * counted as a union; indexed by enum pps_span_kind. */
    double busy_ns[PPS_SPAN_KIND_COUNT];
    long n_ops[PPS_SPAN_KIND_COUNT]; /* spans labelled with the iteration, by kind */
    double compute_ns;               /* union of F, B, W, BW, OPT inside the window */
    double idle_ns;                  /* window - compute */
    double wait_ns;                  /* WAIT spans inside the window (= busy_ns[PPS_SPAN_WAIT]) */
    double idle_frac;                /* idle_ns / window; 0 for an empty window */
    /* idle_ns by phase (enum pps_phase: warm-up, steady, cool-down, barrier; phase.c): the four
     * add up to idle_ns in an iteration's stages[]; in total[], each is summed over the whole
     * iterations (the sum of the four is total idle_ns where windows do not overlap). */
    double phase_idle_ns[PPS_PHASE_COUNT];
};

struct pps_iter_stats {
    int iter;
    int64_t t0, t1; /* the window, ns on rank 0's clock */
    double window_ns;
    double bubble; /* 0 for an empty window */
    /* The bubble on the device: over the stages with device kernels (KERNEL spans), the window
     * less the union of their kernels, over (those stages * window). NaN when no stage of the
     * run has a kernel; 0 for an empty window. Host-side gaps the device did not see (work
     * queued ahead) are not in it; device time a host span covers without a kernel is. */
    double device_bubble;
    /* The bubble by phase: the present stages' idle in each phase over (stages * window); the
     * four add up to bubble (0 for an empty window; phase.c). */
    double phase_bubble[PPS_PHASE_COUNT];
    /* The iteration holds fewer ops than its schedule runs (or, with the schedule unknown, it is
     * the last of a run still written or cut short, with fewer ops than the one before): a run
     * that stopped (or is still) in it. Its figures are left out of every total. */
    int partial;
    int n_stages;
    struct pps_stage_stats *stages;
};

/* One direction of the link between two stages, as its messages measured it (links.c). */
struct pps_link_stats {
    int from, to;
    /* The link's figures cannot be believed, and take no part in the prediction: its receives
     * end before their sends start (skew_ns, the worst, > 0: the ranks' clocks disagree beyond
     * their alignment), or one id stands on two messages (dup_ids: ids that are not message
     * ids). */
    double skew_ns;
    int dup_ids;
    long n_msgs;    /* messages matched: a SEND and its RECV, by message id */
    long n_blocked; /* of them, those whose receiver waited for it (a WAIT) */
    /* Transfer time per message, from the send's start to the receive's end. Where the receiver
     * waited, that is the time the message took; where it came late, the message sat waiting
     * and the figure is only an upper bound. latency_ns is the median over the receives that
     * waited (over all, with bounded = 1, when none did); min_ns the smallest of all. */
    double latency_ns;
    double min_ns;
    int bounded;
};

/* What the host gave the stage threads (meta host_*, written by the runtime; host.h). */
struct pps_host_stats {
    int known;            /* some stage has a measured run delay */
    double run_delay_ns;  /* waited, runnable, for a core: summed over stages */
    double wall_ns;       /* the time that covers, summed over stages */
    double contention;    /* run_delay_ns / wall_ns: the share of stage time spent waiting for a
                             core; NaN when unknown */
    double worst;         /* the largest one stage's share */
    int worst_stage;
    int stage_threads;    /* stages on the busiest host */
    int cpus;             /* the cores that host's processes may use, 0 when unknown */
    double *share;        /* n_stages entries: each stage's run delay / its wall time, NaN
                             where unknown (NULL when no stage has one) */
};

/* What the verdict compares: per-iteration windows, or the steady state. */
enum pps_basis {
    PPS_BASIS_ITERATION = 0, /* each iteration's window, an optimizer barrier between them */
    PPS_BASIS_STEADY = 1,    /* iterations back to back (post-validation: they overlap) */
};

/* What the analysis read from a run's spans, where its metadata did not say (infer.c). */
#define PPS_INFERRED_P        0x01 /* p: the stages it has (they must be 0..n-1) */
#define PPS_INFERRED_M        0x02 /* m: the microbatches its ops carry */
#define PPS_INFERRED_V        0x04 /* v: the chunks its ops carry */
#define PPS_INFERRED_ITERS    0x08 /* iterations: no compute span carried one */
#define PPS_INFERRED_SCHEDULE 0x10 /* the schedule: a family, or its observed order ("custom") */

struct pps_report {
    int p, m;       /* from the run's metadata, else inferred; 0 where neither */
    int v;          /* chunks per stage: the run's v, else inferred, else 1 */
    int sched_kind; /* enum pps_sched_kind (named or inferred), -1 if unknown or custom */
    int inferred;   /* PPS_INFERRED_* bits */
    char infer_note[256]; /* why no order could be read, where none could */
    /* A run whose observed order is no family's: that order (one iteration's, the typical
     * one), which the prediction simulates. Empty (actions NULL) otherwise. */
    struct pps_schedule observed;
    int complete;
    int64_t dropped; /* spans dropped by the tracer, summed over metrics */
    /* Spans no figure counts: they lie outside every iteration's window (set-up work, named
     * ranges around the program). Spans with no iteration (iter < 0) inside a window count. */
    size_t n_outside;
    size_t n_no_iter; /* spans with no iteration (iter < 0), wherever they lie */

    /* Iterations that have spans, in increasing order of iter (gaps in numbering skipped), and
     * how many of them are whole (not partial): the totals, the bubble, the steady state and
     * the per-iteration figures count those. */
    int n_iters;
    int n_full;
    /* The iterations the run planned (its meta iters; 0 when it does not say), and those of
     * 0..planned_iters-1 with no span at all: how many, the lowest and the highest (-1: none). */
    int planned_iters;
    int n_missing, missing_first, missing_last;
    struct pps_iter_stats *iters;
    int n_stages;  /* entries of total[] and of each iteration's stages[]: stage numbers 0.. */
    int n_present; /* the stages the run has (present): the bubble and the flags count these */
    struct pps_stage_stats *total; /* per stage, summed over iterations (idle_frac over sum) */
    double total_window_ns;        /* from the first window's start to the last one's end */
    double bubble;                 /* mean of the iterations' bubbles; NaN with no iteration */
    int n_device_stages;           /* present stages with device kernels (KERNEL spans) */
    double device_bubble;          /* mean of the iterations' device bubbles; NaN: none */
    double bubble_spread;          /* their standard deviation; NaN with fewer than two */
    /* The bubble by phase: the mean over the same iterations of the present stages' idle in
     * the phase over (stages * window); the four add up to bubble. NaN with no iteration. */
    double phase_bubble[PPS_PHASE_COUNT];
    /* Iterations 1..N-1 back to back, as the simulator's steady state: their period (last end
     * of iteration N-1 minus last end of iteration 0, over N-1) and 1 - busy / (stages * that
     * time). What post-validated runs, whose iterations overlap, are judged by. NaN with
     * fewer than two iterations. steady_spread: the standard deviation of the same figure per
     * iteration (iteration i's busy over the time from iteration i-1's end to its own), NaN
     * with fewer than three. */
    double steady_period_ns;
    double steady_bubble;
    double steady_spread;
    int postval; /* the run's optimizer was post-validated (meta optimizer=postval) */
    /* The iteration time, one definition everywhere: the steady period where there are two
     * iterations or more, else the one window. */
    double iter_ns;

    double bubble_quoted; /* (p-1)/m; NaN when p or m is unknown */
    double bubble_exact;  /* (p-1)/(v*m+p-1); NaN when p or m is unknown */

    /* Mean measured op durations per stage (n_stages entries), in ns per microbatch through the
     * whole stage (a chunk's op times v): the costs handed to the simulator; 0 where the run had
     * none. A stage with fused BW and no B has tb = mean BW * v and tw = 0 (fused_bw = 1). */
    double *tf_ns, *tb_ns, *tw_ns;
    int fused_bw;
    /* Per stage, the time per op (F, B, W, BW) spent in neither an op nor a wait for data:
     * sending, copying what arrived, the runtime's own steps between ops. It lies on the stage's
     * path like the op itself, so the prediction adds it to each op's cost. Known only for runs
     * that record their waits (WAIT spans): 0 elsewhere, and have_ovh 0. */
    double *ovh_ns;
    int have_ovh;
    /* The time of one message, for the prediction: the links' typical measured transfer (the
     * lower median over links; tcomm_measured = 1) where the run measured its links on a host
     * without contention, else the run's meta tcomm_ns, else 0. */
    double tcomm_ns;
    int tcomm_measured;
    double topt_ns;  /* mean OPT duration over all stages, 0 if none */
    /* The largest coefficient of variation (stddev / mean) of one stage's op durations of one
     * kind (F, B, W or BW, 4 ops or more): how far the mean-cost prediction may be off. */
    double op_cv;
    int op_cv_stage, op_cv_kind;

    int have_prediction;        /* 0 when the schedule is unknown or cannot be generated */
    char prediction_note[256];  /* why there is no prediction, when there is none */
    struct pps_sim_result pred; /* times in ns; zeroed without a prediction */
    /* The prediction on the run's own terms: with an optimizer barrier (sync) every iteration is
     * the simulator's one iteration, so back to back they take its makespan at its bubble;
     * post-validated, the simulator's steady state. NaN without a prediction. */
    double pred_iter_ns;
    double pred_steady_bubble;
    /* The same schedule with every stage at the stages' mean costs: what balance would give,
     * on the verdict's basis; and with free communication (tcomm 0): what the messages cost.
     * NaN without a prediction. */
    double pred_balanced;
    double pred_nocomm;
    double pred_noovh; /* without the per-op overhead (ovh_ns): what it costs; NaN without it */
    /* The same schedule with each link at its measured transfer time (links[]): what links
     * slower than the typical one cost, on the verdict's basis. NaN without links or
     * prediction, and on a contended host (its transfers include the wait for a core). */
    double pred_links;
    int have_pred_comm;              /* that simulation was made: */
    struct pps_sim_result pred_comm; /* its timeline and per-stage idle (zeroed without it) */

    /* The links the run's messages measured, one entry per direction that carried some. */
    int n_links;
    struct pps_link_stats *links;

    struct pps_host_stats host;

    /* Per stage (n_stages entries), what its spans say beyond the figures above: how many it
     * recorded (a stage the run's p counts that recorded nothing is compared with no other), and
     * the stage it waited on longest by its WAIT spans (wait_peer) and by its RECV spans
     * (recv_peer), -1 for none. */
    int64_t *stage_spans;
    int *wait_peer, *recv_peer;

    /* What the verdict compares: the basis (steady for post-validated runs), the measured and
     * predicted bubble on it, the run's own spread on it and the tolerance that comes from it.
     * NaN where there is nothing to compare. */
    int basis; /* enum pps_basis */
    double judged_measured, judged_predicted, judged_spread, tolerance;
};

/*
 * Computes the report for run (which it only reads). A run with no labelled spans gives a report
 * with n_iters = 0 and bubble NaN, not an error. Returns 0, PPS_EINVAL for a NULL run or
 * PPS_ENOMEM; *out is NULL on failure. Free with pps_report_free().
 */
int pps_analysis_report(const struct pps_run *run, struct pps_report **out, struct pps_err *err);
/* Frees rep and everything it holds; pps_report_free(NULL) is a no-op. */
void pps_report_free(struct pps_report *rep);

/*
 * One stage's idle in the iteration window [t0, t1) by phase, into idle_ns (enum pps_phase;
 * schedule.h defines the edges): from the stage's F, B, W and BW spans labelled iter, its first
 * backward's start, last forward's end and last op's end; in each phase, its length less the
 * union of the stage's compute spans (F, B, W, BW, OPT, whatever their label) in it. spans (n of
 * them) are sorted by start and hold at least every span of the stage that reaches into the
 * window (the ones before may be left out). The four add up to the window less that union:
 * the stage's idle_ns, to the nanosecond. The report fills phase_idle_ns with it.
 */
void pps_analysis_phase_split(const struct pps_span *spans, size_t n, int32_t iter, int64_t t0,
                              int64_t t1, double idle_ns[PPS_PHASE_COUNT]);

enum pps_verdict {
    PPS_VERDICT_NONE = 0,     /* nothing measured, or no prediction to compare with */
    PPS_VERDICT_AS_PREDICTED, /* within the tolerance of the prediction */
    PPS_VERDICT_ABOVE,        /* more than the tolerance above */
    PPS_VERDICT_BELOW,        /* more than the tolerance below */
};

/*
 * What the measured bubble says about the run, as one enum pps_verdict and one or two sentences
 * in buf, which name the figures they rest on ("steady" where the basis is the steady state)
 * and the cause: within the tolerance, whether imbalance makes the prediction (which stage, by
 * how much, what balance would give) or the schedule alone does; above it, what the evidence
 * names (slow links, host contention), or that nothing measured explains it. Writes at most len
 * bytes including the NUL (buf may be NULL when len is 0).
 */
int pps_report_verdict(const struct pps_report *rep, char *buf, size_t len);
/* "as_predicted", "above", "below", "none". */
const char *pps_verdict_name(int verdict);

/* The run's schedule as the report names it: the family it names or that its order matches,
 * "custom" for an observed order no family has, NULL when unknown. */
const char *pps_report_schedule_name(const struct pps_run *run, const struct pps_report *rep);
/* The v of the theory (p-1)/(v*m+p-1) beside the run: its chunks where they loop round the
 * stages (interleaved), 1 where they go down and back up (V: the pipe fills once, as 1F1B's). */
int pps_report_theory_v(const struct pps_report *rep);
/* The run's placement (enum pps_placement): its schedule kind's, else the observed order's, else
 * the loop. */
int pps_report_placement(const struct pps_report *rep);
/* The zero-bubble theory's bubble for the run's schedule (pps_zb_theory_idle) with the stages'
 * mean measured op times, no message time and no optimizer step: idle / (m(tF+tB+tW) + idle),
 * an iteration's or (*steady = 1) the steady state's; NaN where the schedule has none, the
 * shape is outside where it holds, or the costs are unknown. */
double pps_report_zb_theory(const struct pps_report *rep, int *steady);

/* "812 ns", "1.23 ms", "45.6 s": a duration with three significant figures, as flags print it. */
void pps_format_ns(double ns, char *buf, size_t len);

/* The stage that computes most against the other stages' mean, and that factor (>= 1 with two
 * present stages or more; -1 and NaN otherwise). Compute is F, B, W and BW over the run. */
int pps_report_heaviest(const struct pps_report *rep, double *factor);

/* ------------------------------------------------------------------------------------------- */
/* Flags: what the measurement says is wrong, each with its evidence (flags.c)                 */
/* ------------------------------------------------------------------------------------------- */

/* A stage whose compute time is this far above the other stages' mean is imbalanced. */
#define PPS_FLAG_IMBALANCE_MARGIN 0.10
/* Stage threads that wait, runnable, for a core this share of their time are held back by
 * their host. */
#define PPS_CONTENTION_MIN 0.03
/* Op durations that vary this much (coefficient of variation) are worth a note where nothing
 * else explains a bubble. */
#define PPS_OP_CV_NOTE 0.05
/* Waits for data beyond the schedule's idle, per op, this large against the stage's mean op
 * time are a communication stall. */
#define PPS_FLAG_STALL_RATIO 0.25

enum pps_flag_kind {
    PPS_FLAG_IMBALANCE = 1, /* a stage computes more than the others */
    PPS_FLAG_COMM_STALL,    /* a stage waits for data about as long as it computes an op */
    PPS_FLAG_BUBBLE_ABOVE,  /* measured bubble above the prediction, and nothing measured says why */
    PPS_FLAG_SLOW_LINK,     /* a link (or every link) takes longer than the prediction assumes */
    PPS_FLAG_CONTENTION,    /* the host left the stage threads waiting for a core */
};

struct pps_flag {
    int kind;       /* enum pps_flag_kind */
    int stage;      /* the stage it is about (SLOW_LINK: the sending one), -1 for the run */
    int peer;       /* COMM_STALL: the stage waited on most; SLOW_LINK: the receiving stage;
                       -1 if unknown or not one */
    double value;   /* IMBALANCE: compute / the other stages' mean; COMM_STALL: stall per op /
                       mean op; BUBBLE_ABOVE: measured - predicted bubble; SLOW_LINK: extra ns
                       per message over the prediction's; CONTENTION: share of stage time */
    char text[512]; /* one line with the evidence */
};

/* Caller-held; zero it (or PPS_FLAG_LIST_INIT) before use, release with pps_flag_list_release. */
struct pps_flag_list {
    struct pps_flag *items;
    size_t n;
};

#define PPS_FLAG_LIST_INIT                                                                         \
    {                                                                                              \
        NULL, 0                                                                                    \
    }

/*
 * Finds the flags of a run from its report (and the run, for its metadata and for whom a stage
 * waited on), each with its evidence, in this order:
 *   imbalance   a present stage's F, B, W and BW time more than PPS_FLAG_IMBALANCE_MARGIN above
 *               the other stages' mean, worst first; the embedding or the LM head is named only
 *               where the run's metadata says which stage holds it (model_embedding_stage,
 *               model_head_stage); the worst says what balanced stages would give;
 *   link        the links whose measured transfer exceeds what the prediction assumes (half the
 *               worst excess or more), when the prediction with the measured links is above the
 *               plain one by more than the tolerance: one flag per link, or one for all of them;
 *   host        the stage threads waited, runnable, for a core PPS_CONTENTION_MIN of their time
 *               or more;
 *   stall       a stage idles longer than the prediction (with the measured links, where there
 *               are any) gives it, and its waits for data (WAIT spans, or RECV where there are
 *               none) cover that extra idle beyond what host contention accounts for: per op, at
 *               least PPS_FLAG_STALL_RATIO of its mean op time;
 *   bubble      the verdict is PPS_VERDICT_ABOVE and no link or host flag explains it.
 * list must be released or fresh; on failure it is empty. 0 or PPS_ENOMEM.
 */
int pps_analysis_flags(const struct pps_run *run, const struct pps_report *rep,
                       struct pps_flag_list *list, struct pps_err *err);
void pps_flag_list_release(struct pps_flag_list *list);
/* "imbalance", "stall", "bubble", "link", "contention"; "?" for a kind out of range. */
const char *pps_flag_kind_name(int kind);

/* ------------------------------------------------------------------------------------------- */
/* Critical path: the chain of ops and transfers that sets each iteration's length (critpath.c) */
/* ------------------------------------------------------------------------------------------- */

/* How a step of the path was reached from the one before it. */
enum pps_critpath_via {
    PPS_CRITPATH_FIRST = 0, /* the path's first op: nothing in the iteration came before it */
    PPS_CRITPATH_STAGE,     /* the previous op on the same stage */
    PPS_CRITPATH_INPUT,     /* the neighbouring stage's op whose output it consumed */
    PPS_CRITPATH_BARRIER,   /* OPT: the last op of some stage (the optimizer step waits for all) */
};

struct pps_critpath_step {
    int stage, chunk, mb, kind; /* the op's; kind is a compute kind (F, B, W, BW, OPT) */
    int64_t start_ns, end_ns;   /* the op's own times */
    /* Its time counted on the path: up to the next step's start (which an op whose end the
     * clocks put after it reaches beyond), its whole duration for the last one. */
    double on_path_ns;
    int via; /* enum pps_critpath_via: how it was reached from the step before */
    /* The gap between the step before's end and this op's start: the part a transfer covers
     * (comm_ns) and the rest (wait_ns). */
    double comm_ns, wait_ns;
    /* INPUT steps of a run that records its messages: the message between the two ops, its SEND
     * on the step before's stage and its RECV on this one (has_send, has_recv where found). */
    int has_send, has_recv;
    int64_t send_start_ns, send_end_ns, recv_start_ns, recv_end_ns;
    /* The receiver waited for it (a WAIT before its RECV): it was in flight from the send's
     * start to the receive's end, all of it transfer. Otherwise only the send and the receive
     * themselves are: the time it sat waiting for the receiver is not. */
    int waited;
};

struct pps_critpath_iter {
    int iter;
    int partial;    /* as the report's iteration: left out of every total */
    int64_t t0, t1; /* the iteration's window */
    double window_ns;
    /* From the path's first op's start to the window's end: what the path explains. It equals
     * the window where the path reaches back to the window's start. */
    double length_ns;
    /* length_ns split: compute by kind (F, B, W, BW, OPT), transfers, and the rest of the gaps
     * between the path's ops (waiting, idle, the runtime's own steps). They add up to
     * length_ns. */
    double kind_ns[PPS_SPAN_KIND_COUNT];
    double comm_ns, wait_ns;
    double *stage_ns; /* compute on the path by stage (n_stages entries) */
    size_t n_steps;
    /* In time order. NULL in a path read from a summary except for its typical iteration
     * (n_steps still counts the steps): the summary keeps that one's steps only. */
    struct pps_critpath_step *steps;
};

struct pps_critpath {
    int n_stages; /* entries of each stage_ns: the report's stages */
    int p, v;     /* the shape the walk used: p stages, v chunks (virtual stage c*p+s) */
    /* The run records its messages (SEND, RECV): a gap is a transfer where a message covers it.
     * Without them, the gap before an INPUT step counts as the transfer, as far as the run
     * says. */
    int messages;
    int n_iters; /* entries of iters: the report's iterations, in its order */
    struct pps_critpath_iter *iters;
    /* Over the whole (not partial) iterations: their sums, and how many there are. */
    int n_full;
    double length_ns, window_ns, comm_ns, wait_ns;
    double kind_ns[PPS_SPAN_KIND_COUNT];
    double *stage_ns;
    int typical; /* index into iters of the whole iteration of median path length; -1: none */
};

/*
 * Walks each iteration's critical path back from the op that ends last in it (ties: the one that
 * started last, then the lowest stage). At each op its predecessor is whichever of these ended
 * latest (ties in this order): the previous op on the same stage; the op on the neighbouring
 * stage whose output it consumed, matched by microbatch and chunk in the virtual stage order
 * c*p+s (an F takes the F of virtual stage k-1, a B or BW the B or BW of k+1; W takes nothing
 * from another stage); for an OPT of a run whose optimizer is not post-validated, the last op of
 * every stage. The walk stops where an op has none in the iteration. rep must be run's report.
 * 0, or PPS_ENOMEM; *out is NULL on failure. Free with pps_critpath_free().
 */
int pps_analysis_critpath(const struct pps_run *run, const struct pps_report *rep,
                          struct pps_critpath **out, struct pps_err *err);
void pps_critpath_free(struct pps_critpath *cp);
/* One step as the chain names it: "F3@s2", "B0c1@s3" (the chunk where v > 1). */
void pps_critpath_step_name(const struct pps_critpath *cp, const struct pps_critpath_step *st,
                            char *buf, size_t len);
/*
 * Iteration it's path as one line, compressed: "F0@s0 -> F0@s1 -> F0..BW7@s2 (16 ops) -> BW7@s1
 * -> BW7@s0": three or more consecutive steps on one stage as their first and last. Writes at
 * most len bytes including the NUL, cut with " ..." where it does not fit.
 */
void pps_critpath_chain(const struct pps_critpath *cp, int it, char *buf, size_t len);
/* "stage", "input", "barrier", "first". */
const char *pps_critpath_via_name(int via);

/* ------------------------------------------------------------------------------------------- */
/* Summaries: a report's measurement kept in the run, so the next report reads no span         */
/* (summary.c; the bytes: summary_codec.h; where they are kept: pps_run_summary_get)            */
/* ------------------------------------------------------------------------------------------- */

/* What the analysis measures, as one number: a summary of another revision is not read (it is
 * made again from the spans). Raise it with any change to a figure the report measures.
 * 2: an order of two chunks a stage that runs only placed in V is found (zb-v, or custom in V),
 * where revision 1 called it no schedule. */
#define PPS_SUMMARY_REVISION 2
/* The name the summary of revision R is kept under: "report-rR". */
#define PPS_SUMMARY_STR_(x) #x
#define PPS_SUMMARY_STR(x)  PPS_SUMMARY_STR_(x)
#define PPS_SUMMARY_NAME    "report-r" PPS_SUMMARY_STR(PPS_SUMMARY_REVISION)

/* rep's measurement and cp (may be NULL) as bytes (*out, malloc'd, *len of them), with run's
 * labels (which iterations its spans carry: pps_summary_pick) where run is not NULL. 0,
 * PPS_ENOMEM. */
int pps_summary_encode(const struct pps_run *run, const struct pps_report *rep,
                       const struct pps_critpath *cp, void **out, size_t *len,
                       struct pps_err *err);
/*
 * The report and critical path (*cp NULL where the summary has none) of the run whose summary
 * buf is: run needs its metadata only (pps_run_load_meta()); the host, the prediction and the
 * verdict are made from it and the measurement, as pps_analysis_report() makes them. Equal to
 * the report from the spans, figure for figure, except the critical path's steps (kept for its
 * typical iteration only). PPS_EFORMAT for bytes that are not a summary of this revision,
 * PPS_ENOMEM.
 */
int pps_summary_decode(const struct pps_run *run, const void *buf, size_t len,
                       struct pps_report **rep, struct pps_critpath **cp, struct pps_err *err);

/* Which iterations of a run to read alone, and where their spans lie (pps_summary_pick). */
struct pps_summary_pick {
    int64_t spans;  /* the run's spans in all */
    int first_iter; /* the first iteration chosen */
    int end_iter;   /* the one after the last chosen; 0 where the last is the run's newest */
    int64_t t0, t1; /* the earliest start and the latest end of a span labelled with them */
    int older;      /* there are labels below first_iter */
    int newer;      /* and above the last chosen */
    int n_iters;    /* the run's highest label + 1 (pps_run.n_iters of the whole run) */
};
/* Each iteration of a run, as its summary measured it: what a view that holds a few of them
 * charts the whole run by (pps_summary_pick's series). */
struct pps_summary_series {
    size_t n;
    int *iter;         /* its label */
    double *window_ns; /* its window */
    double *bubble;    /* its bubble (0..1) */
    /* For a timeline zoomed out past what is held (the view's level of detail): each
     * iteration's window, ns on rank 0's clock, and per stage, at [k * n_stages + s], the
     * report's iters[k].stages[s]: compute_ns, device_ns (busy_ns of KERNEL plus MEMCPY) and
     * kind (the compute kind with the most busy_ns; 0 for none). */
    int n_stages;
    int64_t *t0, *t1;
    double *compute_ns, *device_ns;
    unsigned char *kind;
    /* The whole run: from the earliest window or labelled span to the latest. */
    int64_t run_t0, run_t1;
};
/*
 * From the summary buf of a run: whole iterations whose labelled spans number at most keep (one
 * at least), and where their spans lie. dir 0: the newest, as pps_run_keep_iter() chooses them
 * on the whole run, so that pps_run_load_window(path, t0, ...) then pps_run_drop_before(
 * first_iter) holds what reading the whole run and dropping to first_iter holds; dir -1: those
 * ending at anchor (or the label below it), dir 1: those from anchor on (or the label above
 * it), with one more than the anchor's at least where there is one, whatever keep says. Read [t0, t1] through the index and drop the rest (pps_run_drop_before, _from) to hold
 * them. 0; 1 where the summary has no map of its labels (read the run whole); PPS_EFORMAT,
 * PPS_ENOMEM. Where series is not NULL, on 0 it holds every iteration of the run: the
 * report's iters[].iter, .window_ns and .bubble of the whole run (empty where it cannot: it only
 * charts).
 */
int pps_summary_pick(const void *buf, size_t len, size_t keep, int anchor, int dir,
                     struct pps_summary_pick *out, struct pps_summary_series *series,
                     struct pps_err *err);
/* Frees a series from pps_summary_pick(); it is empty again. */
void pps_summary_series_release(struct pps_summary_series *s);

#endif
