/*
 * emu.c - the emu compute: each op sleeps for its modeled time and computes nothing (emu.h).
 *
 * An op sleeps to an absolute deadline (its start + its cost) on CLOCK_MONOTONIC: a thread that
 * sleeps costs no CPU, so 16 stages fit on 2 cores, and with op times of milliseconds and the
 * timer slack cut to 1 ns the wake-up jitter (microseconds) is small against them. The chunk
 * keeps counts, not buffers: microbatches after F, pending W's, and whether a non-finite input
 * gradient came by in this iteration.
 *
 * With per-layer costs (emu.h) an op walks the chunk's layers (F from the embedding up, B and W
 * from the head down), sleeping to each layer's deadline in turn and recording its span there.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef __linux__
#include <sys/prctl.h>
#endif

#include "emu.h"
#include "emu_int.h"

struct pps__emu_chunk {
    struct pps_compute base;
    int64_t tf, tb, tw; /* this chunk's op times, ns */
    /* Per-layer costs: lay_ns[k] {F, B, W} of layer k as compute.h numbers them (0 embedding,
     * 1 + j block j, nb + 1 head; 0 for an end this chunk does not hold); NULL: per-stage mode. */
    int64_t (*lay_ns)[3];
    int n_lay;
    size_t act_floats;
    size_t bytes_f; /* a microbatch's activations after F */
    int live_f;     /* microbatches after F, before B or BW */
    int pending_w;  /* microbatches after B, before W */
    int nonfinite;  /* a non-finite dy reached this chunk since zero_grads */
    double sumsq;   /* its share of the global norm */
};

/* ---- clock and sleep ----------------------------------------------------------------------- */

int64_t pps__emu_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Timer slack is per thread; setting it once per thread is enough. */
static _Thread_local int slack_cut;

void pps__emu_sleep_until(int64_t deadline_ns)
{
    struct timespec ts;

#ifdef __linux__
    if (!slack_cut) {
        (void)prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL); /* best effort: jitter, not error */
        slack_cut = 1;
    }
#endif
    ts.tv_sec = (time_t)(deadline_ns / 1000000000);
    ts.tv_nsec = (long)(deadline_ns % 1000000000);
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
        ;
}

/* ---- config -------------------------------------------------------------------------------- */

void pps_emu_config_init(struct pps_emu_config *c)
{
    memset(c, 0, sizeof(*c));
    c->tf_ns = c->tb_ns = c->tw_ns = 2e6;
    c->slow_stage = -1;
    c->slow_factor = 1;
    c->latency_ns = 10e3;
    c->bandwidth_gbps = 100;
    c->slow_link_a = c->slow_link_b = -1;
}

static int ok_time(double t)
{
    return isfinite(t) && t >= 0 && t <= 3600e9;
}

int pps_emu_config_check(const struct pps_emu_config *c, int p, struct pps_err *err)
{
    if (!ok_time(c->tf_ns) || !ok_time(c->tb_ns) || !ok_time(c->tw_ns))
        return pps_err_set(err, PPS_EINVAL, "emu: op times must be between 0 and an hour");
    for (int op = 0; op < 3; op++)
        if (!ok_time(c->block_ns[op]) || !ok_time(c->embed_ns[op]) || !ok_time(c->head_ns[op]))
            return pps_err_set(err, PPS_EINVAL, "emu: layer times must be between 0 and an hour");
    if (c->stage_mult) {
        if (c->n_stage_mult != p)
            return pps_err_set(err, PPS_EINVAL, "emu: %d stage multipliers for p=%d stages",
                               c->n_stage_mult, p);
        for (int s = 0; s < p; s++)
            if (!(c->stage_mult[s] > 0 && c->stage_mult[s] <= 1e6))
                return pps_err_set(err, PPS_EINVAL,
                                   "emu: stage %d's multiplier must be > 0 and <= 1e6", s);
    }
    if (c->slow_stage >= p || c->slow_stage < -1)
        return pps_err_set(err, PPS_EINVAL, "emu: slow stage %d is not in 0..%d", c->slow_stage,
                           p - 1);
    if (!(c->slow_factor > 0 && c->slow_factor <= 1e6))
        return pps_err_set(err, PPS_EINVAL, "emu: the slow stage's factor must be > 0");
    if (!ok_time(c->latency_ns) || !ok_time(c->slow_link_ns))
        return pps_err_set(err, PPS_EINVAL, "emu: link latencies must be between 0 and an hour");
    if (!(isfinite(c->bandwidth_gbps) && c->bandwidth_gbps >= 0))
        return pps_err_set(err, PPS_EINVAL, "emu: the bandwidth must be >= 0 (0: unlimited)");
    if (c->slow_link_a >= 0 || c->slow_link_b >= 0) {
        if (c->slow_link_a < 0 || c->slow_link_a >= p || c->slow_link_b < 0 || c->slow_link_b >= p)
            return pps_err_set(err, PPS_EINVAL, "emu: slow link %d-%d: stages must be in 0..%d",
                               c->slow_link_a, c->slow_link_b, p - 1);
        if (c->slow_link_a == c->slow_link_b)
            return pps_err_set(err, PPS_EINVAL,
                               "emu: slow link %d-%d joins a stage to itself: no wire there",
                               c->slow_link_a, c->slow_link_b);
    }
    return 0;
}

/* What stage's work is multiplied by: its --emu-stage-scale entry, and the slow factor. */
static double stage_factor(const struct pps_emu_config *c, int stage)
{
    double k = 1;

    if (c->stage_mult && stage >= 0 && stage < c->n_stage_mult)
        k *= c->stage_mult[stage];
    if (stage == c->slow_stage)
        k *= c->slow_factor;
    return k;
}

void pps_emu_stage_costs(const struct pps_emu_config *c, int stage, double *tf, double *tb,
                         double *tw)
{
    double k = stage_factor(c, stage);

    *tf = c->tf_ns * k;
    *tb = c->tb_ns * k;
    *tw = c->tw_ns * k;
}

double pps_emu_link_delay_ns(const struct pps_emu_config *c, int src, int dst, size_t bytes)
{
    double d;

    if (src == dst)
        return 0;
    d = c->latency_ns;
    if (c->bandwidth_gbps > 0)
        d += (double)bytes * 8.0 / c->bandwidth_gbps; /* Gbit/s = bits per ns */
    if ((src == c->slow_link_a && dst == c->slow_link_b) ||
        (src == c->slow_link_b && dst == c->slow_link_a))
        d += c->slow_link_ns;
    return d;
}

/* ---- ops ----------------------------------------------------------------------------------- */

static struct pps__emu_chunk *chunk_of(struct pps_compute *c)
{
    return (struct pps__emu_chunk *)(void *)c;
}

static const struct pps__emu_chunk *chunk_of_const(const struct pps_compute *c)
{
    return (const struct pps__emu_chunk *)(const void *)c;
}

/* Takes the op's modeled time, from now. */
static void take(int64_t ns)
{
    pps__emu_sleep_until(pps__emu_now() + ns);
}

enum { OP_F, OP_B, OP_W, OP_BW };

/* Takes an op of kind op (OP_*) whose per-stage time is ns: that, or its layers' times in turn,
 * each recorded as a span. A layer's deadline is the previous one's plus its cost, so wake-up
 * jitter does not add up over the layers. */
static void take_op(struct pps__emu_chunk *c, int op, int64_t ns)
{
    int64_t deadline, t0;

    if (!c->lay_ns) {
        take(ns);
        return;
    }
    deadline = t0 = pps__emu_now();
    for (int i = 0; i < c->n_lay; i++) {
        int k = op == OP_F ? i : c->n_lay - 1 - i;
        int64_t d = op == OP_BW ? c->lay_ns[k][OP_B] + c->lay_ns[k][OP_W] : c->lay_ns[k][op];
        int64_t t1;

        if ((k == 0 && !c->base.first) || (k == c->n_lay - 1 && !c->base.last))
            continue;
        deadline += d;
        pps__emu_sleep_until(deadline);
        if (c->base.tracer) {
            t1 = pps_trace_now();
            pps_compute_layer_span(&c->base, k, t0, t1);
            t0 = t1;
        }
    }
}

static size_t emu_act_floats(const struct pps_compute *c)
{
    return chunk_of_const(c)->act_floats;
}

static int emu_forward(struct pps_compute *base, int iter, int mb, const float *in, float *out,
                       struct pps_err *err)
{
    struct pps__emu_chunk *c = chunk_of(base);

    take_op(c, OP_F, c->tf);
    /* The first float carries what came in (an injected inf travels on); the rest is left. */
    if (out && c->act_floats > 0)
        out[0] = in && c->act_floats > 0 ? in[0] : 0.0f;
    c->live_f++;
    return 0;
}

/* The B side of B and BW: dy's first float says whether a non-finite gradient came by. */
static void note_dy(struct pps__emu_chunk *c, const float *dy, float *dx)
{
    float v = dy && c->act_floats > 0 ? dy[0] : 0.0f;

    if (!isfinite(v))
        c->nonfinite = 1;
    if (dx && c->act_floats > 0)
        dx[0] = v;
}

static int emu_backward_b(struct pps_compute *base, int iter, int mb, const float *dy, float *dx,
                          struct pps_err *err)
{
    struct pps__emu_chunk *c = chunk_of(base);

    if (c->live_f <= 0)
        return pps_err_set(err, PPS_EINVAL,
                           "emu vstage %d: backward_b of iteration %d microbatch %d before its "
                           "forward",
                           base->vstage, iter, mb);
    take_op(c, OP_B, c->tb);
    note_dy(c, dy, dx);
    c->live_f--;
    c->pending_w++;
    return 0;
}

static int emu_backward_w(struct pps_compute *base, int iter, int mb, struct pps_err *err)
{
    struct pps__emu_chunk *c = chunk_of(base);

    if (c->pending_w <= 0)
        return pps_err_set(err, PPS_EINVAL,
                           "emu vstage %d: backward_w of iteration %d microbatch %d before its B",
                           base->vstage, iter, mb);
    take_op(c, OP_W, c->tw);
    c->pending_w--;
    return 0;
}

static int emu_backward_bw(struct pps_compute *base, int iter, int mb, const float *dy, float *dx,
                           struct pps_err *err)
{
    struct pps__emu_chunk *c = chunk_of(base);

    if (c->live_f <= 0)
        return pps_err_set(err, PPS_EINVAL,
                           "emu vstage %d: backward_bw of iteration %d microbatch %d before its "
                           "forward",
                           base->vstage, iter, mb);
    take_op(c, OP_BW, c->tb + c->tw);
    note_dy(c, dy, dx);
    c->live_f--;
    return 0;
}

static int emu_zero_grads(struct pps_compute *base, struct pps_err *err)
{
    chunk_of(base)->nonfinite = 0;
    return 0;
}

static int emu_grad_stats(struct pps_compute *base, double *sumsq, size_t *nonfinite,
                          struct pps_err *err)
{
    struct pps__emu_chunk *c = chunk_of(base);

    /* 0.25 over all p * v chunks: a global norm of 0.5, under the default clip of 1. */
    *sumsq = c->nonfinite ? INFINITY : c->sumsq;
    *nonfinite = c->nonfinite ? 1 : 0;
    return 0;
}

static int emu_step(struct pps_compute *base, double grad_scale, long step, struct pps_err *err)
{
    if (step < 1)
        return pps_err_set(err, PPS_EINVAL, "emu vstage %d: optimizer step must be >= 1, got %ld",
                           base->vstage, step);
    return 0;
}

static int emu_nothing(struct pps_compute *base, struct pps_err *err)
{
    return 0;
}

static double emu_loss_sum(const struct pps_compute *base)
{
    return NAN;
}

static size_t emu_act_bytes(const struct pps_compute *base)
{
    const struct pps__emu_chunk *c = chunk_of_const(base);

    return (size_t)c->live_f * c->bytes_f + (size_t)c->pending_w * (c->bytes_f / 2);
}

static int emu_pending_w(const struct pps_compute *base)
{
    return chunk_of_const(base)->pending_w;
}

static int emu_export(struct pps_compute *base, float *buf, size_t *n_out, struct pps_err *err)
{
    *n_out = 0;
    return 0;
}

static void emu_free(struct pps_compute *base)
{
    if (base)
        free(chunk_of(base)->lay_ns);
    free(base);
}

static const struct pps_compute_ops emu_ops = {
    .name = "emu",
    .act_floats = emu_act_floats,
    .forward = emu_forward,
    .backward_b = emu_backward_b,
    .backward_w = emu_backward_w,
    .backward_bw = emu_backward_bw,
    .zero_grads = emu_zero_grads,
    .grad_stats = emu_grad_stats,
    .step = emu_step,
    .save_state = emu_nothing,
    .restore_state = emu_nothing,
    .loss_sum = emu_loss_sum,
    .act_bytes = emu_act_bytes,
    .pending_w = emu_pending_w,
    .export_params = emu_export,
    .export_grads = emu_export,
    .free = emu_free,
};

int pps_emu_compute_new(const struct pps_emu_config *cfg, int p, int v, int placement, int stage,
                        int chunk, int nb, size_t act_floats, size_t act_bytes_f, struct pps_compute **out,
                        struct pps_err *err)
{
    struct pps__emu_chunk *c;
    double tf, tb, tw;

    if (!out)
        return pps_err_set(err, PPS_EINVAL, "emu: nowhere to put the chunk");
    *out = NULL;
    if (p < 1 || v < 1 || stage < 0 || stage >= p || chunk < 0 || chunk >= v ||
        (placement != PPS_PLACE_LOOP && (placement != PPS_PLACE_V || v != 2)))
        return pps_err_set(err, PPS_EINVAL, "emu: no chunk %d of stage %d with p=%d, v=%d (%s)",
                           chunk, stage, p, v, pps_placement_name(placement));
    if (nb < 0 || nb > 1 << 20)
        return pps_err_set(err, PPS_EINVAL, "emu: %d blocks in a chunk", nb);
    c = calloc(1, sizeof(*c));
    if (!c)
        return pps_err_set(err, PPS_ENOMEM, "emu: out of memory");
    pps_emu_stage_costs(cfg, stage, &tf, &tb, &tw);
    c->base.ops = &emu_ops;
    c->base.stage = stage;
    c->base.chunk = chunk;
    c->base.vstage = pps_place_vstage(placement, p, stage, chunk);
    c->base.first = c->base.vstage == 0;
    c->base.last = c->base.vstage == p * v - 1;
    c->tf = (int64_t)llround(tf / v);
    c->tb = (int64_t)llround(tb / v);
    c->tw = (int64_t)llround(tw / v);
    c->act_floats = act_floats;
    c->bytes_f = act_bytes_f;
    c->sumsq = 0.25 / (p * v);
    if (cfg->layer_costs) {
        double k = stage_factor(cfg, stage);

        c->n_lay = nb + 2;
        c->lay_ns = calloc((size_t)c->n_lay, sizeof(*c->lay_ns));
        if (!c->lay_ns) {
            free(c);
            return pps_err_set(err, PPS_ENOMEM, "emu: out of memory");
        }
        for (int i = 0; i < c->n_lay; i++) {
            const double *ns = i == 0              ? cfg->embed_ns
                               : i == c->n_lay - 1 ? cfg->head_ns
                                                   : cfg->block_ns;
            for (int op = 0; op < 3; op++)
                c->lay_ns[i][op] = (int64_t)llround(ns[op] * k);
        }
    }
    *out = &c->base;
    return 0;
}
