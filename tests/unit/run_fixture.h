/*
 * run_fixture.h - what the tests of whole runs (pps_run) share: a run configured as they set it,
 * its stages threads of this process and no progress line.
 */
#ifndef PPS_RUN_FIXTURE_H
#define PPS_RUN_FIXTURE_H

#include "run.h"
#include "schedule.h"

/* `ppscope run`'s defaults, but kind at p stages, m microbatches and iters iterations on backend
 * (PPS_BACKEND_EMU or _CPU), the stages threads of this process (PPS_TRANSPORT_THREADS), quiet. */
static inline void run_config_threads(struct pps_run_config *c, int kind, int backend, int p, int m,
                                      int iters)
{
    pps_run_config_init(c);
    c->kinds[0] = kind;
    c->p = p;
    c->m = m;
    c->iters = iters;
    c->backend = backend;
    c->transport = PPS_TRANSPORT_THREADS;
    c->progress = 0;
}

/*
 * An emu run whose measured bubble a test holds to a prediction: run_config_threads() on emu with
 * ops of 8 ms, not emu's default 2. On a virtual machine a sleep's wake-up comes 0.1 ms late on
 * average and now and then several ms late; what that jitter adds on the critical path (which a
 * prediction from mean costs cannot see) must stay small against the 2 pp the bubble is held to.
 */
static inline void run_config_emu_timed(struct pps_run_config *c, int kind, int p, int m,
                                        int iters)
{
    run_config_threads(c, kind, PPS_BACKEND_EMU, p, m, iters);
    c->emu.tf_ns = c->emu.tb_ns = c->emu.tw_ns = 8e6;
}

#endif
