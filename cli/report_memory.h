/* report_memory.h - the report's memory section: measured peaks beside the schedule's
 * (analysis/memory.h), as text and as JSON. */
#ifndef PPS_REPORT_MEMORY_H
#define PPS_REPORT_MEMORY_H

#include <stdio.h>

#include "cli.h"
#include "memory.h"

/* Nothing when no stage measured its memory. */
void pps_report_memory_text(FILE *f, const struct pps_memory *mem);
/* "memory": {...}, or null when no stage measured its memory. */
void pps_report_memory_json(struct pps_json *j, const struct pps_memory *mem);

#endif
