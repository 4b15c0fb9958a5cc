/*
 * compute.h - what one model chunk on one stage computes, behind one interface with two
 * implementations: "model" (the real byte-level language model on a kernels/ backend: exact
 * gradients) and "emu" (every op takes its modeled time and computes nothing, so a 16-stage
 * pipeline runs on a laptop and faults of known size can be injected).
 *
 * The executor drives it: for each action of its schedule it receives what the action needs
 * through the transport, calls forward / backward_b / backward_w / backward_bw here, and sends
 * what the action produced. It never looks inside.
 *
 * Buffers. Activations and input gradients travel as act_floats() floats (one microbatch at one
 * stage boundary), in host memory the caller owns: the implementation copies in and out of its
 * device. The first virtual stage takes no input (it reads its microbatch's tokens itself, from
 * the data, by iteration and microbatch); the last produces no output (it computes the loss from
 * the same data's targets), and its backward starts from the loss.
 *
 * State per microbatch. forward(mb) keeps what backward needs; backward_b(mb) computes the input
 * gradient, frees what W does not need and keeps the rest (pending W); backward_w(mb) accumulates
 * the weight gradients and frees the rest; backward_bw(mb) is both, bitwise the same as B then W.
 * Weight gradients accumulate over the microbatches of an iteration, in the order the W's run;
 * every built-in schedule runs them in microbatch order on each chunk, so it accumulates the
 * same sums in the same order as a single-process run (a schedule from a file may not: the
 * gradient check says so, run_grads.c).
 *
 * Errors: 0 or a negative PPS_E... code with a reason in err. A context belongs to one thread.
 */
#ifndef PPS_COMPUTE_H
#define PPS_COMPUTE_H

#include <stddef.h>
#include <stdint.h>

#include "ppscope/trace.h"
#include "pps_error.h"

struct pps_compute;

struct pps_compute_ops {
    const char *name; /* "model", "emu" */

    /* Floats in one activation or input gradient at this chunk's boundaries. */
    size_t (*act_floats)(const struct pps_compute *c);

    int (*forward)(struct pps_compute *c, int iter, int mb, const float *in, float *out,
                   struct pps_err *err);
    /* dy: the gradient of this chunk's output (NULL on the last virtual stage: from the loss);
     * dx: where the gradient of its input goes (NULL on the first virtual stage). */
    int (*backward_b)(struct pps_compute *c, int iter, int mb, const float *dy, float *dx,
                      struct pps_err *err);
    int (*backward_w)(struct pps_compute *c, int iter, int mb, struct pps_err *err);
    int (*backward_bw)(struct pps_compute *c, int iter, int mb, const float *dy, float *dx,
                       struct pps_err *err);

    /* The optimizer's side. zero_grads before an iteration's first W; grad_stats after its last:
     * the sum of squares of every gradient (summed in a fixed order, so it is deterministic) and
     * how many are not finite. step applies AdamW with the gradients scaled by grad_scale (the
     * clipping factor, 1 for none) as optimizer step number step (from 1). */
    int (*zero_grads)(struct pps_compute *c, struct pps_err *err);
    int (*grad_stats)(struct pps_compute *c, double *sumsq, size_t *nonfinite, struct pps_err *err);
    int (*step)(struct pps_compute *c, double grad_scale, long step, struct pps_err *err);
    /* Post-validation: save exactly what step changes (parameters, moments) before it, and put
     * it back bitwise on a failed validation. */
    int (*save_state)(struct pps_compute *c, struct pps_err *err);
    int (*restore_state)(struct pps_compute *c, struct pps_err *err);

    /* The last virtual stage's loss summed over the iteration's microbatches so far (NaN
     * elsewhere); the bytes of activations alive now, and the pending W's. */
    double (*loss_sum)(const struct pps_compute *c);
    size_t (*act_bytes)(const struct pps_compute *c);
    int (*pending_w)(const struct pps_compute *c);

    /* Copies every parameter / gradient out as floats in a fixed order (the gradient check
     * compares them bitwise); n_out receives how many. NULL buffer: only the count. */
    int (*export_params)(struct pps_compute *c, float *buf, size_t *n_out, struct pps_err *err);
    int (*export_grads)(struct pps_compute *c, float *buf, size_t *n_out, struct pps_err *err);

    void (*free)(struct pps_compute *c);
};

struct pps_compute {
    const struct pps_compute_ops *ops;
    int stage;  /* the stage that runs this chunk */
    int chunk;  /* 0 .. v-1 */
    int vstage; /* pps_place_vstage() of stage and chunk: the schedule's placement */
    int first;  /* the first virtual stage (embedding) */
    int last;   /* the last virtual stage (head and loss) */

    /* Per-layer spans (docs/runtime.md): with a tracer, each op records a RANGE span per layer
     * it runs, named by layer_names[0] ("embedding"), [1 + j] ("block B" for the chunk's j-th
     * block) and [n_layer_names - 1] ("head"). Set by the run after the chunk is made
     * (pps__run_chunks_trace); NULL tracer: no spans, and no clock reads for them. */
    struct pps_tracer *tracer;
    int32_t *layer_names;
    int n_layer_names;

    /* What of its device the chunk computes on (pps_kernels_partition): the SMs of its
     * partition (0: the whole device) and in words. Empty for emu. */
    int device_sms;
    char device_part[200];
};

/* Records one layer's span of c's op (idx as layer_names), from t0 to t1 on the tracer's clock. */
static inline void pps_compute_layer_span(const struct pps_compute *c, int idx, int64_t t0,
                                          int64_t t1)
{
    if (c->tracer && idx >= 0 && idx < c->n_layer_names)
        pps_trace_named(c->tracer, PPS_TRACE_RANGE, c->stage, c->layer_names[idx], t0, t1);
}

#endif
