/*
 * report_iters.h - `ppscope report --iterations`: the bubble as a training metric, one row per
 * iteration.
 */
#ifndef PPS_REPORT_ITERS_H
#define PPS_REPORT_ITERS_H

#include <stdio.h>

#include "analysis.h"

/*
 * Prints one row per iteration of rep (in its order, partial ones too, marked): iter, partial,
 * t0_ns, window_ns, iteration_ns (the last compute end of the iteration before, whole, to its
 * own; empty for the first), bubble, bubble by phase, loss (the run's metrics for it, from the
 * highest stage that has one; empty where none has), and each stage's idle_ns (empty for a
 * stage the run does not have). As CSV with a header row, or with json as JSON lines (one
 * object per row; null for the empty fields, idle_ns an array indexed by stage).
 */
void pps_report_print_iterations(FILE *f, const struct pps_run *run, const struct pps_report *rep,
                                 int json);

#endif
