/*
 * run_summary.h - what `ppscope run` prints when the run is over: the gradient check's verdict,
 * or each schedule's iteration time, measured and predicted bubble and peak activation memory,
 * read back from the runs it wrote (storage/ and analysis/), side by side for an A/B.
 */
#ifndef PPS_RUN_SUMMARY_H
#define PPS_RUN_SUMMARY_H

#include <stdio.h>

#include "run.h"

/* Prints on f (only on rank 0 of an MPI job) and returns the exit code: 1 when a gradient check
 * found a difference or a run could not be read back, else 0. */
int pps_run_summary_print(FILE *f, const struct pps_run_config *c, const struct pps_run_result *r);

#endif
