/*
 * report_critpath.h - the critical path section of `ppscope report` (text and --json): each
 * iteration's path as analysis/critpath.c walks it, printed from the report's figures alone.
 */
#ifndef PPS_REPORT_CRITPATH_H
#define PPS_REPORT_CRITPATH_H

#include <stdio.h>

#include "analysis.h"
#include "cli.h"

/* The section as text: the path's length against the window, the shares by stage and by kind,
 * the typical iteration's chain. Prints nothing where cp has no whole iteration with a path. */
void pps_report_critpath_text(FILE *f, const struct pps_report *rep, const struct pps_critpath *cp);
/* "critical_path": an object, or null where there is no path. */
void pps_report_critpath_json(struct pps_json *j, const struct pps_report *rep,
                              const struct pps_critpath *cp);

#endif
