/*
 * optimizer.h - one stage's side of the optimizer step: AdamW (through compute.h's step) with
 * global gradient-norm clipping and a skipped step on inf/NaN, synchronous or post-validated.
 *
 * The global figures. After a pass of its action list, a stage sums its chunks' grad_stats in
 * chunk order (sum of squares, non-finite count); the transport's allreduce_sum adds the stages'
 * in stage order, so every stage sees bitwise the same global sum. From it: norm = sqrt(sumsq);
 * a non-finite count above 0 (or a non-finite sum) skips the step; otherwise the step scales
 * the gradients by min(1, clip / norm) (clip <= 0: no clipping).
 *
 * Sync: every stage waits for the global sum (the optimizer barrier, traced as a WAIT span with
 * peer -1), then steps with that scale or skips (an OPT span).
 *
 * Post-validation: a stage steps optimistically right after its own pass, with scale 1, after
 * save_state (an OPT span), and starts the global sum without waiting (allreduce_start), so the
 * next iteration's forwards overlap the validation. The sum is collected just before the next
 * pass's first W or BW (pps_optim_before_grads), while the chunks still hold the gradients it was
 * computed from: by then every stage has started the sum (that W needs microbatch 0's backward,
 * which needs its forward through every stage, and a stage starts the sum before its next
 * iteration), so collecting costs no more than the sum's own latency. Validation fails when the
 * step should have been clipped or skipped: the stage restores its chunks exactly (parameters and
 * moments: restore_state; the step count goes back) in a ROLLBACK span, redoes the step clipped
 * with those same gradients or skips it, and the pass under way, which has computed with
 * parameters that did not stand, runs to its end and is run again (*rerun from end_pass). Every
 * stage sees the same sum, so every stage rolls back and reruns the same passes. After N
 * iterations the parameters are bitwise those of sync mode: the same gradients reach the same
 * steps with the same scales, and every pass that counts computed with the same parameters.
 *
 * Errors: 0 or a negative PPS_E... code with a one-line reason in err.
 */
#ifndef PPS_OPTIMIZER_H
#define PPS_OPTIMIZER_H

#include "compute.h"
#include "pps_error.h"
#include "ppscope/trace.h"
#include "transport.h"

enum pps_optim_mode {
    PPS_OPTIM_SYNC = 0,
    PPS_OPTIM_POSTVAL = 1,
};

/* "sync", "postval"; parse returns -1 for anything else. */
const char *pps_optim_mode_name(int mode);
int pps_optim_mode_parse(const char *name);

/* What was decided about one iteration's gradients. */
struct pps_optim_verdict {
    int iter;         /* the iteration decided; -1: none was decided by this call */
    double grad_norm; /* the global norm (inf or NaN when the gradients were not finite) */
    int skipped;      /* not finite: no step */
    int clipped;      /* stepped with the gradients scaled by clip / norm */
    int rolled_back;  /* post-validation: the optimistic step was undone */
};

/* One stage's optimizer; caller-held, set up by pps_optim_init(), nothing to release. */
struct pps_optim {
    int mode;    /* enum pps_optim_mode */
    double clip; /* <= 0: no clipping */
    int stage;
    struct pps_transport *t;
    struct pps_tracer *tracer; /* NULL: not traced */
    struct pps_compute **chunks;
    int v;

    long step;        /* steps that stand (AdamW's step number of the last one) */
    long rollbacks;   /* post-validation steps undone */
    long skips;       /* steps skipped on non-finite gradients */
    long clips;       /* steps clipped */
    int pending;      /* post-validation: 1 a sum in flight, 2 completed, 0 none */
    int pending_iter; /* the iteration it validates */
    double x[2];      /* the sum: sum of squares, non-finite count */
    int invalid;      /* the pass under way computed with a step that was undone */
    int have_verdict; /* verdict is waiting for end_pass */
    struct pps_optim_verdict verdict;
};

void pps_optim_init(struct pps_optim *o, int mode, double clip, int stage, struct pps_transport *t,
                    struct pps_tracer *tracer, struct pps_compute **chunks, int v);

/*
 * Post-validation: call before a pass's first W or BW, before zeroing the gradients. Decides the
 * previous iteration if its validation is in flight (waiting for the sum if it must), rolling its
 * step back and redoing or skipping it when it failed. Sync: does nothing.
 */
int pps_optim_before_grads(struct pps_optim *o, struct pps_err *err);

/*
 * After a pass of iteration iter (the stage's whole action list). Sync: decides iter (*verdict).
 * Post-validation: hands out the decision about iter - 1 made during the pass (or makes it now);
 * when that failed, *rerun is set (run iter's pass again, then call this again) and iter is not
 * stepped; otherwise steps iter optimistically and starts its validation. verdict->iter is -1 when
 * nothing was decided.
 */
int pps_optim_end_pass(struct pps_optim *o, int iter, int *rerun, struct pps_optim_verdict *verdict,
                       struct pps_err *err);

/* Between actions: lets a validation in flight progress (MPI needs the calls). Never blocks. */
int pps_optim_poll(struct pps_optim *o, struct pps_err *err);

/* After the last iteration: decides the one whose validation is still in flight (rolling back
 * and redoing or skipping its step when it failed; nothing is rerun). */
int pps_optim_finish(struct pps_optim *o, struct pps_optim_verdict *verdict, struct pps_err *err);

#endif
