/*
 * progress.h - progress on stderr, for the storage commands that run long (import, merge):
 * nothing during the first second, then a line about once a second. Each caller prints its own
 * line; this says when one is due. Implemented in files.c.
 */
#ifndef PPS_STORAGE_PROGRESS_H
#define PPS_STORAGE_PROGRESS_H

#include <stdint.h>

struct pps__progress {
    int on, printed;
    int64_t next_ns;
};

/* Notes when the work began; on 0: no line is ever due. */
void pps__progress_start(struct pps__progress *p, int on);
/* Whether a line is due now: if so, counts it as printed and sets when the next one is. */
int pps__progress_due(struct pps__progress *p);

#endif
