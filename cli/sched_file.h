/* sched_file.h - `--schedule-file F` of `ppscope sim` and `ppscope run`: a user's schedule read
 * from a file (PyTorch's pipeline-order CSV or ppscope's grid, schedule.h) and validated. */
#ifndef PPS_SCHED_FILE_H
#define PPS_SCHED_FILE_H

#include "schedule.h"

/* The most a schedule file may hold: a 16-stage, 64-microbatch CSV is about 30 KiB. */
#define PPS_SCHED_FILE_MAX (64u << 20)

/* What pps_cli_sched_file says on stderr: also what it read differently from the file (the
 * communication cells left out, the overlapped pairs run in order); nothing at all (an MPI rank
 * other than the first: rank 0 says it). */
#define PPS_SCHED_FILE_NOTES 1
#define PPS_SCHED_FILE_QUIET 2

/*
 * Reads the schedule in the file at path into out (fresh; kind -1, "custom") and validates it.
 * Returns 0, or the exit code after saying why on stderr: "ppscope CMD: PATH: line 2, rank 1,
 * step 4: 1I3 comes before the microbatch's forward", then the rows around the cell
 * with it marked. how: PPS_SCHED_FILE_* (0: the errors only).
 */
int pps_cli_sched_file(const char *cmd, const char *path, int how, struct pps_schedule *out);

#endif
