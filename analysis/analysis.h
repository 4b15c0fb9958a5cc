/*
 * analysis.h - what a loaded run means: per-iteration, per-stage busy time by kind, idle, the
 * measured bubble, the theory beside it, and the simulator's prediction for the run's schedule
 * with the op costs the run measured.
 *
 * Definitions (docs/analysis.md says them for users):
 *   iteration window  [earliest start, latest end] of the spans labelled with that iteration,
 *                     over all stages; spans without an iteration (iter < 0) open no window
 *   busy              time the stage spends in compute spans (F, B, W, BW, OPT) inside the
 *                     window: their union, clipped to the window, whatever their iteration label,
 *                     so overlapping spans are not counted twice
 *   idle              window - busy (waiting, communicating or doing nothing)
 *   bubble            sum of idle over stages / (stages * window); the run's bubble is the mean
 *                     of its iterations' bubbles
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

/* A measured bubble this far above or below the prediction (a fraction: 0.05 = 5 percentage
 * points) is not explained by the schedule and its measured op costs. */
#define PPS_VERDICT_MARGIN 0.05

struct pps_stage_stats {
    int stage;
    /* Time by span kind inside the window (compute and communication), each kind's spans
     * counted as a union; indexed by enum pps_span_kind. */
    double busy_ns[PPS_SPAN_KIND_COUNT];
    long n_ops[PPS_SPAN_KIND_COUNT]; /* spans labelled with the iteration, by kind */
    double compute_ns;               /* union of F, B, W, BW, OPT inside the window */
    double idle_ns;                  /* window - compute */
    double wait_ns;                  /* WAIT spans inside the window (= busy_ns[PPS_SPAN_WAIT]) */
    double idle_frac;                /* idle_ns / window; 0 for an empty window */
};

struct pps_iter_stats {
    int iter;
    int64_t t0, t1; /* the window, ns on rank 0's clock */
    double window_ns;
    double bubble; /* 0 for an empty window */
    int n_stages;
    struct pps_stage_stats *stages;
};

struct pps_report {
    int p, m;       /* from the run's metadata; 0 where absent */
    int v;          /* chunks per stage: the run's v, 1 where absent */
    int sched_kind; /* enum pps_sched_kind, -1 if the run's schedule is unknown */
    int complete;
    int64_t dropped;     /* spans dropped by the tracer, summed over metrics */
    size_t n_unlabelled; /* spans that open no window: no iteration (iter < 0), or a named
                           range or device span, which never stretch one */

    /* Iterations that have spans, in increasing order of iter (gaps in numbering skipped). */
    int n_iters;
    struct pps_iter_stats *iters;
    int n_stages;
    struct pps_stage_stats *total; /* per stage, summed over iterations (idle_frac over sum) */
    double total_window_ns;        /* from the first window's start to the last one's end */
    double bubble;                 /* mean of the iterations' bubbles; NaN with no iteration */
    /* Iterations 1..N-1 back to back, as the simulator's steady state: their period (last end
     * of iteration N-1 minus last end of iteration 0, over N-1) and 1 - busy / (stages *
     * that time). What post-validated runs, whose iterations overlap, are judged by. NaN with
     * fewer than two iterations. */
    double steady_period_ns;
    double steady_bubble;
    int postval; /* the run's optimizer was post-validated (meta optimizer=postval) */

    double bubble_quoted; /* (p-1)/m; NaN when p or m is unknown */
    double bubble_exact;  /* (p-1)/(v*m+p-1); NaN when p or m is unknown */

    /* Mean measured op durations per stage (n_stages entries), in ns per microbatch through the
     * whole stage (a chunk's op times v): the costs handed to the simulator; 0 where the run had
     * none. A stage with fused BW and no B has tb = mean BW * v and tw = 0 (fused_bw = 1). */
    double *tf_ns, *tb_ns, *tw_ns;
    int fused_bw;
    double tcomm_ns; /* meta key tcomm_ns, 0 where absent */
    double topt_ns;  /* mean OPT duration over all stages, 0 if none */

    int have_prediction;        /* 0 when the schedule is unknown or cannot be generated */
    char prediction_note[256];  /* why there is no prediction, when there is none */
    struct pps_sim_result pred; /* times in ns; zeroed without a prediction */
};

/*
 * Computes the report for run (which it only reads). A run with no labelled spans gives a report
 * with n_iters = 0 and bubble NaN, not an error. Returns 0, PPS_EINVAL for a NULL run or
 * PPS_ENOMEM; *out is NULL on failure. Free with pps_report_free().
 */
int pps_analysis_report(const struct pps_run *run, struct pps_report **out, struct pps_err *err);
/* Frees rep and everything it holds; pps_report_free(NULL) is a no-op. */
void pps_report_free(struct pps_report *rep);

enum pps_verdict {
    PPS_VERDICT_NONE = 0,     /* nothing measured, or no prediction to compare with */
    PPS_VERDICT_AS_PREDICTED, /* within PPS_VERDICT_MARGIN of the prediction */
    PPS_VERDICT_ABOVE,        /* more than the margin above: imbalance or communication */
    PPS_VERDICT_BELOW,        /* more than the margin below */
};

/*
 * What the measured bubble says about the run, as one enum pps_verdict and one sentence in buf
 * ("measured bubble is 12.3 pp above the prediction: imbalance or communication, not the
 * schedule"). Writes at most len bytes including the NUL (buf may be NULL when len is 0).
 */
int pps_report_verdict(const struct pps_report *rep, char *buf, size_t len);

/* ------------------------------------------------------------------------------------------- */
/* Flags: what the measurement says is wrong, each with its evidence (flags.c)                 */
/* ------------------------------------------------------------------------------------------- */

/* A stage whose compute time per iteration is this far above the stages' mean is imbalanced. */
#define PPS_FLAG_IMBALANCE_MARGIN 0.10
/* Waits for data beyond the schedule's idle, per op, this large against the stage's mean op
 * time are a communication stall. */
#define PPS_FLAG_STALL_RATIO 0.25

enum pps_flag_kind {
    PPS_FLAG_IMBALANCE = 1, /* a stage computes more than the others */
    PPS_FLAG_COMM_STALL,    /* a stage waits for data about as long as it computes an op */
    PPS_FLAG_BUBBLE_ABOVE,  /* measured bubble far above the prediction */
};

struct pps_flag {
    int kind;       /* enum pps_flag_kind */
    int stage;      /* the stage it is about, -1 for the whole run */
    int peer;       /* COMM_STALL: the stage waited on most, -1 if unknown */
    double value;   /* IMBALANCE: compute / mean; COMM_STALL: stall per op / mean op;
                       BUBBLE_ABOVE: measured - predicted bubble */
    char text[256]; /* one line with the evidence */
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
 * Finds the flags of a run from its report (and the run's WAIT spans, for whom a stage waited
 * on): stage imbalance (a stage's F, B, W and BW time more than PPS_FLAG_IMBALANCE_MARGIN above
 * the mean, saying when that stage holds the embedding (the first) or the LM head (the last)),
 * communication stall (a stage idles longer than the prediction gives it, and its waits for
 * data (WAIT spans, or RECV where there are none) cover that extra idle: per op, at least
 * PPS_FLAG_STALL_RATIO of its mean op time; needs a prediction), bubble above the prediction
 * (the verdict PPS_VERDICT_ABOVE).
 * Imbalance flags come first, worst first, then stalls, then the bubble. list must be released
 * or fresh; on failure it is empty. 0 or PPS_ENOMEM.
 */
int pps_analysis_flags(const struct pps_run *run, const struct pps_report *rep,
                       struct pps_flag_list *list, struct pps_err *err);
void pps_flag_list_release(struct pps_flag_list *list);
/* "imbalance", "stall", "bubble"; "?" for a kind out of range. */
const char *pps_flag_kind_name(int kind);

#endif
