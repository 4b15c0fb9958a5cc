/*
 * memory.c - what a stage's schedule holds, walked op by op (schedule.h): the one memory model
 * the simulator's peak activations and the report's memory section (analysis/memory.c) share.
 */
#include "schedule.h"

void pps_schedule_stage_memory(const struct pps_schedule *sc, int s, const double *after_f,
                               const double *after_b, double *act_peak, int *pw_peak)
{
    double live = 0;
    int pw = 0;

    *act_peak = 0;
    *pw_peak = 0;
    for (size_t i = 0; i < pps_schedule_len(sc, s); i++) {
        const struct pps_action *a = pps_schedule_at(sc, s, i);
        double f = after_f[a->chunk], b = after_b[a->chunk];

        switch (a->op) {
        case PPS_OP_F:
            live += f;
            break;
        case PPS_OP_B: /* F's activations give way to what its pending W keeps */
            live += b - f;
            pw++;
            break;
        case PPS_OP_W:
            live -= b;
            pw--;
            break;
        default: /* BW */
            live -= f;
            break;
        }
        if (live > *act_peak)
            *act_peak = live;
        if (pw > *pw_peak)
            *pw_peak = pw;
    }
}
