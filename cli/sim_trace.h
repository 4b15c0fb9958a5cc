/* sim_trace.h - a simulated schedule written as a run in the trace store. */
#ifndef PPS_SIM_TRACE_H
#define PPS_SIM_TRACE_H

#include "schedule.h"

/*
 * Writes iters iterations of the simulated timeline res of sched into the run dir (one shard,
 * rank 0, every stage), one time unit = unit_ns nanoseconds, iterations back to back with the
 * optimizer barrier, so that the run's measured bubble is the simulator's. The costs go into the
 * run's metadata (sim_* keys, tcomm_ns) so a report can predict with the same latency. A custom
 * schedule (kind -1) keeps its order (schedule_order) and file (schedule_file, when not NULL).
 */
int pps_sim_write_trace(const char *dir, const struct pps_schedule *sched, const char *file,
                        const struct pps_sim_costs *costs, const struct pps_sim_result *res,
                        int iters, double unit_ns, struct pps_err *err);

#endif
