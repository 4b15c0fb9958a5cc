/*
 * tracer_int.h - what the tracer/ files share and nobody else may use (pps__ names).
 *
 * The pieces that live in separate files and meet here: the process clock and its test skew
 * (clock.c), the launcher's rank and world size (launcher_env.c), and the MPI clock-offset
 * exchange (clock_sync.c).
 */
#ifndef PPS_TRACER_INT_H
#define PPS_TRACER_INT_H

#include <stdint.h>

#include "ppscope/trace.h"

/*
 * Added to every pps_trace_now() reading: 0, unless the environment variable
 * PPSCOPE_CLOCK_SKEW_NS sets it when a tracer opens (a testing knob that fakes a rank whose
 * clock is off by a known amount). Read without synchronisation on the hot path: it is written
 * once, before any span is recorded.
 */
extern int64_t pps__clock_skew_ns;

/* Reads PPSCOPE_CLOCK_SKEW_NS into pps__clock_skew_ns (0 when unset or not a number). */
void pps__clock_skew_init(void);

/*
 * The rank and world size the launcher gave this process, from the first of: Open MPI
 * (OMPI_COMM_WORLD_RANK/SIZE), PMI/PMIx (PMI_RANK/PMI_SIZE, PMIX_RANK), torchrun (RANK/WORLD_SIZE
 * with TORCHELASTIC_RUN_ID set: before Slurm, which srun also sets under torchrun), Slurm
 * (SLURM_PROCID/SLURM_NTASKS), then RANK/WORLD_SIZE alone. Returns 0 and sets both when one is
 * found (world stays -1 if only the rank is known), -1 when none is, leaving both untouched.
 * Parsing is strict: a value is decimal digits only and fits in an int; a rank variable that is
 * anything else does not count (the next launcher is tried), and neither does a size that is not
 * above the rank (world -1). A size is never taken from another launcher than the rank.
 */
int pps__launcher_rank(int *rank, int *world);

/* One clock-offset measurement: rank 0's clock = this process's clock + offset_ns, measured at
 * at_ns (this process's clock) with round trip rtt_ns (the error bound is rtt_ns / 2). Rank 0's
 * own sample is offset 0, rtt 0, at the time its exchanges ended. */
struct pps__clock_sample {
    int64_t offset_ns;
    int64_t rtt_ns;
    int64_t at_ns;
};

/*
 * Measures this rank's clock offset to rank 0 by ping-pong over MPI, keeping the exchange with
 * the smallest round trip of several (32 per rank; rank 0 serves the ranks one after another),
 * with pps_trace_now() as the clock. Collective over MPI_COMM_WORLD: every rank calls it, from a
 * thread allowed to call MPI (the main thread unless MPI runs at MPI_THREAD_SERIALIZED or more).
 * Its messages travel on a private duplicate of MPI_COMM_WORLD, freed before returning, so they
 * never match the program's receives. Rank 0 gets offset 0.
 *
 * Returns PPS_EINVAL with a reason when built without MPI, when no MPI library is loaded in this
 * process (the tracer finds the program's MPI at run time and links none), when MPI is not
 * initialised or already finalised, or on a thread MPI does not allow; PPS_EIO with MPI's reason
 * when an MPI call fails
 * (the duplicate returns errors instead of aborting the job). *out is set only on success. A rank
 * that fails or does not call it leaves the others waiting, as in any MPI collective.
 */
int pps__clock_sync(struct pps__clock_sample *out, struct pps_err *err);

#endif
