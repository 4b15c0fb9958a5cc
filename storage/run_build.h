/*
 * run_build.h - the one place rows become a struct pps_run: spans bucketed per stage and put in
 * order, the run's extents and iteration count, names and metrics appended. The loader
 * (reader.c) feeds it every row of every file in one batch; the live follower (incremental.c)
 * feeds it each poll's new rows as a batch of their own, appended to what the run holds. Both go
 * through the same code, so a run followed to its end is the run loaded whole.
 *
 * A batch runs from pps__run_build_begin() to pps__run_build_end(). Between batches the caller
 * may drop spans from the run (pps_run_drop_before()): the next batch starts from what is left.
 */
#ifndef PPS_RUN_BUILD_H
#define PPS_RUN_BUILD_H

#include "storage.h"

struct pps__run_build {
    struct pps_run *run;
    int count_only;   /* spans are counted (n_spans, n_stages), not kept */
    int64_t max_iter; /* the highest iteration of a span added; -1 for none */

    /* Capacities of the run's arrays, which this struct grows. */
    size_t stages_cap;
    size_t *span_cap; /* per stage */
    size_t names_cap, metrics_cap;

    /* Of the batch under way: each stage's spans before it, in order; the run's before it. */
    size_t *from;
    size_t spans_from, metrics_from;
};

/* Starts building into run, which holds nothing yet (or is empty after pps__run_free_data()). */
void pps__run_build_init(struct pps__run_build *b, struct pps_run *run, int count_only);
/* Frees what b holds, never the run. */
void pps__run_build_release(struct pps__run_build *b);

/* Starts a batch of rows: what the run holds now stays in order ahead of the batch. */
void pps__run_build_begin(struct pps__run_build *b);
/* The run has at least n stages (the metadata's p); PPS_ENOMEM where it cannot grow. */
int pps__run_build_stages(struct pps__run_build *b, size_t n);
/* Appends a span to its stage (stage ≥ 0, checked by the row decoder); PPS_ENOMEM. */
int pps__run_build_span(struct pps__run_build *b, const struct pps_span *s);
/* Appends n names, taking ownership of the strings: the run's names index them from
 * run->n_names on. PPS_ENOMEM (the strings are then still the caller's). */
int pps__run_build_names(struct pps__run_build *b, char **names, size_t n);
/* Appends n metrics rows; PPS_ENOMEM. */
int pps__run_build_metrics(struct pps__run_build *b, const struct pps_metric *m, size_t n);
/*
 * Ends the batch: each stage's new spans sorted and merged into those before, the run's t_min,
 * t_max and n_iters, the metrics in order. 1 when a span held before the batch moved (a reader
 * of the run must start again), 0 when none did, PPS_ENOMEM.
 */
int pps__run_build_end(struct pps__run_build *b);

#endif
