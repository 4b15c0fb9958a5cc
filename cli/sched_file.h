/* sched_file.h - `--schedule-file F` of `ppscope sim` and `ppscope run`: a user's schedule read
 * from a file (PyTorch's pipeline-order CSV or ppscope's grid, schedule.h) and validated. */
#ifndef PPS_SCHED_FILE_H
#define PPS_SCHED_FILE_H

#include "schedule.h"

/* The most a schedule file may hold: a 16-stage, 64-microbatch CSV is about 30 KiB. */
#define PPS_SCHED_FILE_MAX (64u << 20)

/*
 * Reads the schedule in the file at path into out (fresh; kind -1, "custom") and validates it.
 * Returns 0, or the exit code after saying why on stderr: "ppscope CMD: PATH: line 2, rank 1,
 * step 4: 1I3 comes before the microbatch's F on this stage", then the rows around the cell with
 * it marked. With notes, also says on stderr what was read differently from the file (the
 * communication cells left out, the overlapped pairs run in order).
 */
int pps_cli_sched_file(const char *cmd, const char *path, int notes, struct pps_schedule *out);

#endif
