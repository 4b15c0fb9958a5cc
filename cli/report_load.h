/*
 * report_load.h - a run's report and critical path, from the summary kept in the run where it
 * is of the run as it is now, else from the spans (and then kept for the next time).
 */
#ifndef PPS_REPORT_LOAD_H
#define PPS_REPORT_LOAD_H

#include "analysis.h"

/* How report_load may use the run's summary. */
enum pps_summary_use {
    PPS_SUMMARY_USE = 0, /* read it where it is of the run as it is; else measure and keep it */
    PPS_SUMMARY_READ,    /* read it where it is of the run as it is; keep none (compare, sim) */
    PPS_SUMMARY_NONE,    /* measure the spans; neither read nor write a summary */
};

/*
 * *run (with its spans only where they were read: a report from the summary has the run's
 * metadata alone, pps_run_load_meta()), *rep and *cp of the run at path (*cp NULL with
 * PPS_SUMMARY_READ where the spans were read). A summary is kept only
 * for a run whose writers are done (complete, or gone): one still written changes at once.
 * *from (may be NULL) says where the figures came from, in words, for --verbose. A summary that
 * cannot be read or kept is no error: the report is made from the spans. pps_run_load()'s
 * errors and PPS_ENOMEM; on failure every output is NULL.
 */
int pps_report_load(const char *path, int use, struct pps_run **run, struct pps_report **rep,
                    struct pps_critpath **cp, char *from, size_t from_len, struct pps_err *err);

#endif
