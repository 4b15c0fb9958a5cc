/*
 * memory.h - memory against the model: each stage's measured peak activation bytes and peak
 * pending W's (the runtime's metrics rows, the highest over the run's iterations) beside what
 * the schedule should hold, walked op by op as the runtime measures it.
 *
 * The model (the simulator's, w_mem 0.5, and the emu backend's): F of chunk c adds the bytes a
 * microbatch leaves after its forward through that chunk (meta act_bytes_f of the stage: one
 * value per chunk, written by the runtime); B frees half of them and leaves a W pending; W frees
 * the other half; a fused BW frees them all. The peaks are taken after each op, as the runtime
 * samples its own. On emu the model is the emulation's, so the two agree exactly; on cpu the
 * measured bytes are the model's real buffers, which the comparison shows.
 */
#ifndef PPS_MEMORY_H
#define PPS_MEMORY_H

#include "analysis.h"

struct pps_memory_stage {
    int stage;
    int64_t act_peak; /* measured peak activation bytes; -1 where no metrics row says */
    int64_t pw_peak;  /* measured peak pending W's; -1 where unknown */
    double pred_act;  /* predicted peak bytes; NaN where the stage's act_bytes_f is unknown */
    int pred_pw;      /* predicted peak pending W's; -1 without a schedule */
};

struct pps_memory {
    int n_stages;
    struct pps_memory_stage *stages;
    int have_measured;  /* some stage has a measured peak */
    int have_predicted; /* the schedule was generated (its pending W's are known) */
    char note[160];     /* why there is no prediction, or "" */
};

/* Fills mem (zeroed or released) for run and its report. 0 or PPS_ENOMEM. */
int pps_analysis_memory(const struct pps_run *run, const struct pps_report *rep,
                        struct pps_memory *mem, struct pps_err *err);
void pps_memory_release(struct pps_memory *mem);

#endif
