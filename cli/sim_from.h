/* sim_from.h - `ppscope sim --from RUN`: other schedules and shapes on a run's measured costs
 * (analysis/whatif.h), ranked by predicted iteration time against the run's own. */
#ifndef PPS_SIM_FROM_H
#define PPS_SIM_FROM_H

struct pps_sim_from_opts {
    const char *run;  /* the run's path */
    const int *kinds; /* the schedules asked; n_kinds 0: every one that fits */
    int n_kinds;
    int p, m, v; /* 0: the run's own (v: 2 for interleaved where the run's is 1) */
    double w_share;
    int mem_limit; /* zb-auto's limit of live microbatches a stage; 0: p */
    /* A schedule of the user's (--schedule-file), replayed first, of its own p, m and v; NULL
     * for none. With it and no kinds, only it. */
    const struct pps_schedule *custom;
    const char *custom_file;
    int json;
};

/* Prints the what-if table (or JSON) on stdout; returns the process's exit code. */
int pps_sim_from(const struct pps_sim_from_opts *o);

#endif
