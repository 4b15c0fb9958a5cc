/*
 * analysis_int.h - what the analysis module's files share, and nobody else uses.
 */
#ifndef PPS_ANALYSIS_INT_H
#define PPS_ANALYSIS_INT_H

#include "analysis.h"

/*
 * Fills rep's mean op costs (tf_ns, tb_ns, tw_ns for rep->n_stages stages, fused_bw, topt_ns)
 * from every compute span of run, and tcomm_ns from the run's metadata. Returns 0 or PPS_ENOMEM.
 */
int pps__analysis_costs(const struct pps_run *run, struct pps_report *rep, struct pps_err *err);

/*
 * Simulates the run's schedule with rep's costs into rep->pred and sets have_prediction; when
 * that cannot be done (unknown schedule, missing parameters, a stage with nothing measured),
 * leaves have_prediction 0 and says why in prediction_note. Returns 0, or PPS_ENOMEM only.
 */
int pps__analysis_predict(const struct pps_run *run, struct pps_report *rep, struct pps_err *err);

#endif
