/* sim_text.h - text renderings of a simulated schedule, for `ppscope sim`. */
#ifndef PPS_SIM_TEXT_H
#define PPS_SIM_TEXT_H

#include <stdio.h>

#include "schedule.h"

/* Prints a time ruler and one row per stage, at most width columns of timeline; the last topt
 * of the iteration is the optimizer step. */
int pps_sim_text_timeline(FILE *f, const struct pps_schedule *sc, const struct pps_sim_result *r,
                          int width, double topt);

#endif
