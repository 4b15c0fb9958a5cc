/*
 * compare.h - two runs side by side (run A, the baseline, and run B): each figure of both, B - A,
 * B / A and whether the difference is beyond the runs' own iteration-to-iteration spread; the
 * flags that appear or disappear; and regression gates ("bubble>+2pp") that a CI job can check.
 * Pure: `ppscope compare` prints what this computes, and the viewer's A/B mode can show the same.
 *
 *   struct pps_compare *cmp = NULL;
 *   if (pps_compare_runs(&a, &b, &cmp, &err) < 0)
 *       ...err.msg says why...
 *   pps_compare_free(cmp);
 *
 * The rule for "beyond the spread" (docs/analysis.md, ## Compare): |B - A| > 2 sqrt(sA^2 + sB^2),
 * where sA and sB are each run's standard deviation of the figure over its whole iterations
 * (after the first, with three or more: the first warms up, as the report's bubble spread).
 */
#ifndef PPS_COMPARE_H
#define PPS_COMPARE_H

#include "analysis.h"

/* How many spreads apart two figures must be to differ beyond noise. */
#define PPS_COMPARE_SIGMAS 2.0

enum pps_cmp_figure {
    PPS_CMP_ITER = 0,      /* iteration time (rep->iter_ns: the steady period), ns */
    PPS_CMP_WINDOW,        /* mean iteration window, ns */
    PPS_CMP_BUBBLE,        /* the report's bubble, a fraction */
    PPS_CMP_STEADY_BUBBLE, /* the report's steady bubble, a fraction */
    PPS_CMP_BUSY,          /* per stage: compute time per iteration (F, B, W, BW, OPT), ns */
    PPS_CMP_IDLE,          /* per stage: idle time per iteration, ns */
    PPS_CMP_WAIT,          /* per stage: WAIT time per iteration, ns */
    PPS_CMP_ACT,           /* peak activation bytes (metrics act_bytes): per stage, or the run's
                              largest stage (stage -1) */
    PPS_CMP_PENDING_W,     /* peak pending W's (metrics pending_w), as act */
    PPS_CMP_FIGURE_COUNT,
};

/* "iter", "window", "bubble", "steady_bubble", "busy", "idle", "wait", "act", "pending_w" (the
 * names --fail-if takes); NULL out of range. */
const char *pps_compare_figure_name(int figure);

/* One figure of both runs. NaN where a run does not have it. */
struct pps_cmp_row {
    int figure; /* enum pps_cmp_figure */
    int stage;  /* -1 for a figure of the whole run */
    double a, b;
    double spread_a, spread_b; /* standard deviation over iterations; NaN with fewer than two */
    double diff;               /* b - a */
    double ratio;              /* b / a; NaN where a is 0 */
    int beyond;                /* 1 beyond the spread, 0 within it, -1 unknown (no spread) */
};

/* A flag of one run that the other does not raise (matched by kind, stage and peer). */
struct pps_cmp_flag {
    int in_b; /* 1: B raises it and A does not (appeared); 0: A only (disappeared) */
    int kind; /* enum pps_flag_kind */
    int stage, peer;
    char text[512];
};

struct pps_compare {
    int p_a, p_b; /* each run's stages (its p, else the stages it has) */
    /* Per-stage figures are compared only between runs with the same stages; otherwise they
     * are left out and the note says why. */
    int per_stage;
    char note[160];
    int n_rows;
    struct pps_cmp_row *rows; /* run-level figures first, then stage by stage */
    int n_flags;
    struct pps_cmp_flag *flags;
    int n_flags_common; /* flags both runs raise */
};

/* One run, loaded and analysed: what pps_compare_runs reads. */
struct pps_compare_side {
    const struct pps_run *run;
    const struct pps_report *rep;
    const struct pps_flag_list *flags;
};

/* Compares b against a. Returns 0 or PPS_ENOMEM (PPS_EINVAL for NULL arguments); *out is NULL
 * on failure. Free with pps_compare_free(). */
int pps_compare_runs(const struct pps_compare_side *a, const struct pps_compare_side *b,
                     struct pps_compare **out, struct pps_err *err);
void pps_compare_free(struct pps_compare *cmp);
/* The row of figure at stage (-1: the run's), or NULL. */
const struct pps_cmp_row *pps_compare_find(const struct pps_compare *cmp, int figure, int stage);

/* ---- regression gates ---------------------------------------------------------------------- */

enum pps_gate_unit {
    PPS_GATE_PCT = 1, /* (B - A) / A, in percent */
    PPS_GATE_PP,      /* B - A in percentage points (bubble figures) */
    PPS_GATE_ABS,     /* B - A in the figure's own unit: ns, bytes, W's */
};

/*
 * A gate: FIGURE[STAGE]>THRESHOLD UNIT, e.g. "bubble>+2pp", "iter>+5%", "idle[2]>+10%",
 * "busy>1ms", "act>+64KiB", "pending_w>1". Without [STAGE], busy, idle and wait take their worst
 * stage, act and pending_w the run's largest stage. Units: % (any figure), pp (bubble,
 * steady_bubble), ns/us/ms/s (iter, window, busy, idle, wait), B/KiB/MiB/GiB (act), none
 * (pending_w).
 */
struct pps_gate {
    int figure;       /* enum pps_cmp_figure */
    int stage;        /* -1: none given */
    int unit;         /* enum pps_gate_unit */
    double threshold; /* in the unit: percent, points, or ns / bytes / W's */
    char text[64];    /* the expression as given (cut to fit) */
};

/* Parses s. 0, or PPS_EINVAL with one line in err saying what is wrong. */
int pps_compare_gate_parse(const char *s, struct pps_gate *g, struct pps_err *err);

/*
 * Checks a gate: 1 when B's change against A exceeds the threshold (a regression), 0 when not;
 * *change gets the change in the gate's unit (the worst stage's, whose number goes to *stage,
 * -1 for a run-level figure). PPS_EINVAL when the figure cannot be judged (a run lacks it, or
 * the runs' stages differ), with the reason in err.
 */
int pps_compare_gate_check(const struct pps_compare *cmp, const struct pps_gate *g, double *change,
                           int *stage, struct pps_err *err);

#endif
