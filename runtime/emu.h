/*
 * emu.h - the emulated device: compute.h's "emu" flavour and a link model for any transport.
 *
 * The emu compute does no math: every op sleeps for its modeled time, to an absolute deadline on
 * CLOCK_MONOTONIC (clock_nanosleep with TIMER_ABSTIME, timer slack cut to the minimum), so that a
 * 16-stage pipeline runs on two cores and faults of known size can be injected. The link model
 * (pps_emu_link_new) wraps a real transport (threads or MPI) and delivers each message between
 * two stages no earlier than its send time plus a latency plus its bytes over a bandwidth. The
 * executor, the transports, the tracer and the storage are the real ones: only the work is fake.
 *
 * Costs. tf_ns, tb_ns and tw_ns are the times of one microbatch through a whole stage, as the
 * simulator takes them (schedule.h); a stage's costs are multiplied by its stage_mult entry and,
 * for the slow stage, by slow_factor; a chunk's op takes the stage's cost / v; a fused BW takes
 * (tb + tw) / v. The optimizer's ops take no time.
 *
 * Per-layer costs (layer_costs = 1). Instead of the stage's costs, a chunk's op takes the sum of
 * its layers' costs, times the stage's multipliers: block_ns for each of its blocks, embed_ns on
 * the first virtual stage, head_ns (LM head and loss) on the last, each a {F, B, W} triple (BW:
 * B + W). So the partition sets each stage's time, as it does for the real model. The op sleeps
 * layer by layer, and with a tracer (compute.h) records each layer's RANGE span, as the model
 * does.
 *
 * What the emu compute reports. Activations are act_floats floats at every boundary (the caller
 * picks the model's B * T * H, so the bytes in the trace are the real model's); a microbatch
 * counts act_bytes_f bytes of activations after its F and half of that while its W is pending,
 * the simulator's w_mem = 0.5. grad_stats gives a sum of squares of 0.25 / (p * v) per chunk (a
 * global norm of 0.5, under the default clip of 1; a smaller --clip clips every step), and a
 * non-finite sum when a non-finite input gradient reached the chunk in this iteration (that is
 * how an injected inf travels: dy[0] non-finite makes dx[0] the same). loss_sum is NaN,
 * export_params and export_grads export nothing, save_state and restore_state do nothing.
 *
 * Errors: 0 or a negative PPS_E... code with a one-line reason in err (which may be NULL).
 */
#ifndef PPS_EMU_H
#define PPS_EMU_H

#include <stddef.h>
#include <stdint.h>

#include "compute.h"
#include "pps_error.h"
#include "schedule.h" /* enum pps_placement */
#include "transport.h"

struct pps_emu_config {
    double tf_ns, tb_ns, tw_ns; /* one microbatch through a whole stage (defaults 2 ms each) */
    const double *stage_mult;   /* n_stage_mult (= p) multipliers, borrowed; NULL: all 1 */
    int n_stage_mult;
    int slow_stage;     /* the stage whose ops take slow_factor times longer; -1: none */
    double slow_factor; /* > 0 */
    int layer_costs;    /* 1: ops cost by the chunk's layers (below), not tf/tb/tw */
    double block_ns[3], embed_ns[3], head_ns[3]; /* {F, B, W} per microbatch of one layer */

    double latency_ns;     /* per message between two stages (default 10 us) */
    double bandwidth_gbps; /* gigabits per second per link; 0: unlimited (default 100) */
    int slow_link_a;       /* the link between stages a and b (both ways) gets */
    int slow_link_b;       /* slow_link_ns more latency; -1: none */
    double slow_link_ns;
};

/* Sets the defaults above: no multipliers, no slow stage, no slow link. */
void pps_emu_config_init(struct pps_emu_config *c);

/* PPS_EINVAL naming the first value out of range for a run of p stages (a negative time, a
 * multiplier count that is not p, a slow stage or link outside 0..p-1, a link from a stage to
 * itself). */
int pps_emu_config_check(const struct pps_emu_config *c, int p, struct pps_err *err);

/* Stage s's costs of one microbatch through the whole stage, multipliers applied (the per-stage
 * mode's; with layer_costs they depend on the partition, and this gives the stage mode's). */
void pps_emu_stage_costs(const struct pps_emu_config *c, int stage, double *tf, double *tb,
                         double *tw);

/* Nanoseconds a message of bytes from stage src to stage dst spends on the link (0 when
 * src == dst: a stage does not send to itself over a wire). */
double pps_emu_link_delay_ns(const struct pps_emu_config *c, int src, int dst, size_t bytes);

/*
 * Creates the emu chunk of the virtual stage (of p * v) that placement (enum pps_placement)
 * gives chunk of stage, holding nb blocks (what
 * layer_costs times; unused without it), in *out, with act_floats floats per activation and
 * act_bytes_f bytes of activations per microbatch after F. The config is copied. *out is freed with
 * (*out)->ops->free(*out); NULL on failure.
 */
int pps_emu_compute_new(const struct pps_emu_config *c, int p, int v, int placement, int stage,
                        int chunk, int nb,
                        size_t act_floats, size_t act_bytes_f, struct pps_compute **out,
                        struct pps_err *err);

/*
 * Wraps inner (taking it: freeing the link frees inner, also on failure here) in the link model:
 * the result behaves as inner does (same stage, p, rules and errors; collectives and abort go
 * straight through) except that a message to another stage is received no earlier than its send
 * time + pps_emu_link_delay_ns(), and poll says 0 until then. Send times are read on the sending
 * process's CLOCK_MONOTONIC, so every stage must run on one machine (threads, or MPI ranks on
 * one host). Each message travels as two of inner's with its tag: an 8-byte header with the send
 * time and length, then the payload. The config is copied. *out is NULL on failure.
 */
int pps_emu_link_new(const struct pps_emu_config *c, struct pps_transport *inner,
                     struct pps_transport **out, struct pps_err *err);

#endif
