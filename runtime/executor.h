/*
 * executor.h - one pipeline stage's loop: it walks the stage's action list from schedule/ for
 * each iteration, moves activations and gradients through a transport, computes through its
 * chunks (compute.h), steps the optimizer (optimizer.h), and traces all of it.
 *
 * For each iteration: pps_trace_iteration, then each action of the stage's list, in order, with
 * every chunk's gradients zeroed just before the first W or BW (after the optimizer has settled
 * the previous iteration: optimizer.h); then the optimizer. Virtual stage k = chunk * p + stage;
 * its neighbours k - 1 and k + 1 live on stages (k - 1) % p and (k + 1) % p (the same stage when
 * p = 1).
 *   F   receive the activation from virtual stage k - 1 (unless k = 0), forward, send the output
 *       to k + 1 (unless k is the last virtual stage)
 *   B   receive the output gradient from k + 1 (unless last), backward_b, send the input gradient
 *   BW  to k - 1 (unless first); BW the same with backward_bw
 *   W   backward_w
 * then the optimizer. Messages are tagged (kind, pass, microbatch, the virtual stage they are
 * for), where pass counts the passes over the list: one per iteration, plus one for each pass
 * that post-validation runs again.
 *
 * Spans (the stage's tracer; NULL: not traced): F, B, W, BW with stage, chunk and microbatch;
 * RECV (peer, bytes) around each receive that did not block, or else a WAIT (peer) for the time
 * it blocked, then a RECV at its end; SEND (peer, bytes) around each send; the SEND and the
 * RECV and WAIT of one message carry the same message id (pps_trace_p2p_msg), made from its tag;
 * OPT, ROLLBACK and the optimizer barrier's WAIT (peer -1) from optimizer.c. After each
 * iteration, meta host_cpu_ns, host_run_delay_ns (where the kernel keeps it), host_wall_ns and
 * host_iters: what the stage thread got from the host so far (host.h). Metrics, once an
 * iteration is decided:
 * loss (the stage holding the last virtual stage: the mean over microbatches; NaN elsewhere),
 * the global gradient norm, the peak activation bytes and the peak pending W's of the stage.
 *
 * The W budget. With w_budget = N > 0 the stage never holds more than N pending W's (B done, W
 * not yet), summed over its chunks, after any action: only a B adds one, so before a B that would
 * make N + 1 the stage first runs pending W's early, oldest first (the W whose B ran first, which
 * on its chunk is the next W in microbatch order), each a normal W span, until N - 1 are left,
 * and skips each of them when its own place in the list comes. A chunk's W's and fused BW's thus
 * still accumulate in the order of its list, so the gradients stay bitwise those of the schedule
 * without the budget. This needs each chunk's W's (and BW's) to come in the order of its B's (and
 * BW's), which every generated schedule does; a hand-made list that does not is PPS_ESCHEDULE.
 * Schedules without split B's (gpipe, 1f1b, interleaved) hold no pending W: a budget changes
 * nothing there.
 *
 * Failure. When anything fails on this stage (a transport, a chunk, the optimizer, an injected
 * failure), the stage flushes its tracer, then calls the transport's abort with the reason, so
 * that every other stage stops with PPS_EPEER "stage S failed: REASON" (under MPI the abort ends
 * the job and does not return), and returns the error.
 */
#ifndef PPS_EXECUTOR_H
#define PPS_EXECUTOR_H

#include <stdint.h>

#include "compute.h"
#include "optimizer.h"
#include "ppscope/trace.h"
#include "schedule.h"
#include "transport.h"

struct pps_exec_config {
    const struct pps_schedule *sched; /* validated */
    int stage;
    struct pps_transport *t;     /* this stage's endpoint (t->stage == stage) */
    struct pps_tracer *tracer;   /* this stage's tracer, NULL: not traced */
    struct pps_compute **chunks; /* sched->v of them: chunks[c] is pps_schedule_vstage(sched, stage, c) */
    int iters;

    int optim_mode; /* enum pps_optim_mode */
    double clip;    /* global gradient-norm clip, <= 0: none */
    int no_step;    /* 1: passes only, no optimizer (the gradient check) */
    int w_budget;   /* the most pending W's the stage may hold (above); 0: unbounded */

    /* Testing. inject_nonfinite_iter >= 0: in every pass of that iteration, the output gradient
     * that reaches virtual stage p*v - 2 for microbatch 0 is made +inf before its backward (the
     * stage holding it does it; needs p*v >= 2). fail_iter >= 0: this stage fails at the start of
     * that iteration, with "injected failure at iteration N". */
    int inject_nonfinite_iter;
    int fail_iter;

    /* Called by the stage holding the last virtual stage after each iteration's last pass, with
     * its mean loss (NaN on the emu backend); NULL: not called. */
    void (*on_iter)(void *arg, int iter, double loss);
    void *arg;
};

/* Sets every field to its default: optimizer sync, clip 1, no W budget, no injection, nothing
 * else. */
void pps_exec_config_init(struct pps_exec_config *c);

struct pps_exec_result {
    double loss;        /* the last iteration's mean loss (NaN off the last virtual stage) */
    long steps;         /* optimizer steps that stand */
    long skips, clips;  /* steps skipped (non-finite) and clipped */
    long rollbacks;     /* post-validation: optimistic steps undone */
    long reruns;        /* post-validation: passes run again */
    int64_t t_start_ns; /* the first action's start and the last optimizer step's end, on */
    int64_t t_end_ns;   /* pps_trace_now()'s clock */
};

/* Runs the stage's iterations. 0, or the first error (after the abort described above). */
int pps_executor_run(const struct pps_exec_config *cfg, struct pps_exec_result *res,
                     struct pps_err *err);

#endif
