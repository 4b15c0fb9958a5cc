/*
 * model_pass.c - the math of a chunk: forward, input-gradient backward (B, or B and W fused) and
 * weight-gradient backward (W) of one microbatch, as kernels calls on the slot's arenas.
 *
 * Bitwise equality with the single-process reference rests on three things kept here:
 *   - every layer makes the same calls, on the same shapes (all B * T rows at once), with the
 *     same operands, whichever chunk holds it: a chunk boundary only adds a copy out and a copy
 *     in, which move bits unchanged;
 *   - each parameter's gradient receives one accumulating call per microbatch, in the order the
 *     W's (or BW's) run, which every schedule keeps in microbatch order on each chunk;
 *   - the fused calls (linear_backward, layernorm_backward) are bitwise their B then W.
 * Which tensors W visits first does not matter: each call adds into a different buffer.
 */
#include <string.h>

#include "model_int.h"

#define TRY(expr)                                                                                  \
    do {                                                                                           \
        int rc_ = (expr);                                                                          \
        if (rc_ < 0)                                                                               \
            return rc_;                                                                            \
    } while (0)

/* Per-layer spans (compute.h): the clock where a layer starts, and, at its end, its span
 * recorded and the clock where the next one starts. Without a tracer, no clock is read. On an
 * asynchronous backend (cuda) the layer's end waits for the device first, so the span is the
 * layer's device time, not the time to queue it (a wait per layer, only when tracing). */
static int64_t layer_start(const struct pps__model_chunk *c)
{
    return c->base.tracer ? pps_trace_now() : 0;
}

static int64_t layer_end(const struct pps__model_chunk *c, int idx, int64_t t0)
{
    int64_t t1;

    if (!c->base.tracer)
        return 0;
    pps_kernels_wait(c->k);
    t1 = pps_trace_now();
    pps_compute_layer_span(&c->base, idx, t0, t1);
    return t1;
}

/* The floats at byte offset off of an arena. */
static float *at(void *arena, size_t off)
{
    return (float *)(void *)((char *)arena + off);
}

static int32_t *ids_at(void *arena, size_t off)
{
    return (int32_t *)(void *)((char *)arena + off);
}

/* A middle chunk without blocks: activations and gradients only pass through. */
static int passes_through(const struct pps__model_chunk *c)
{
    return c->nb == 0 && !c->base.first && !c->base.last;
}

/* What one block j of a slot uses. */
struct blk {
    float *x, *h, *g, *mean, *rstd; /* keep */
    float *a;                       /* tmp */
    float *dy, *da, *dh;            /* grad */
    float *y;                       /* where its output goes */
    float *dx;                      /* where the gradient of its input goes */
};

/* Where the chunk's first layer reads its input: block 0's input, else the final LN's input on
 * the last, else the output buffer (the embedding going straight out). */
static float *chunk_in(struct pps__model_chunk *c, struct pps__model_slot *s)
{
    const struct pps__model_layout *l = &c->lay;
    if (c->nb > 0)
        return at(s->arena[PPS__ARENA_KEEP], l->k_blk + l->k_x);
    return c->base.last ? at(s->arena[PPS__ARENA_KEEP], l->k_xl) : c->out_buf;
}

/* The gradient of the chunk's input: kept for the embedding's W on the first, else on its way
 * out to the previous stage. */
static float *chunk_din(struct pps__model_chunk *c, struct pps__model_slot *s)
{
    return c->base.first ? at(s->arena[PPS__ARENA_GRAD], c->lay.g_d0) : c->dx_buf;
}

static void blk_ptrs(struct pps__model_chunk *c, struct pps__model_slot *s, int j, struct blk *b)
{
    const struct pps__model_layout *l = &c->lay;
    void *keep = s->arena[PPS__ARENA_KEEP], *tmp = s->arena[PPS__ARENA_TMP];
    void *grad = s->arena[PPS__ARENA_GRAD];
    size_t k = l->k_blk + (size_t)j * l->k_stride, t = l->t_blk + (size_t)j * l->t_stride;
    size_t g = l->g_blk + (size_t)j * l->g_stride;

    b->x = at(keep, k + l->k_x);
    b->h = at(keep, k + l->k_h);
    b->g = at(keep, k + l->k_g);
    b->mean = at(keep, k + l->k_mean);
    b->rstd = at(keep, k + l->k_rstd);
    b->a = at(tmp, t + l->t_a);
    /* The grad arena exists only from B on. */
    b->dy = grad ? at(grad, g + l->g_dy) : NULL;
    b->da = grad ? at(grad, g + l->g_da) : NULL;
    b->dh = grad ? at(grad, g + l->g_dh) : NULL;
    if (j + 1 < c->nb)
        b->y = at(keep, k + l->k_stride + l->k_x);
    else
        b->y = c->base.last ? at(keep, l->k_xl) : c->out_buf;
    if (!grad)
        b->dx = NULL;
    else if (j > 0)
        b->dx = at(grad, g - l->g_stride + l->g_dy); /* block j-1's output gradient */
    else
        b->dx = chunk_din(c, s);
}

/* ---- forward ------------------------------------------------------------------------------ */

static int block_forward(struct pps__model_chunk *c, int j, const struct blk *b)
{
    struct pps_kernels *k = c->k;
    int n = c->rows, h = c->hidden, f = c->inner;
    float *p_ln_g = pps__model_param(c, pps__model_blk_tensor(c, j, PPS__BLK_LN_G));
    float *p_ln_b = pps__model_param(c, pps__model_blk_tensor(c, j, PPS__BLK_LN_B));
    float *p_w1 = pps__model_param(c, pps__model_blk_tensor(c, j, PPS__BLK_W1));
    float *p_b1 = pps__model_param(c, pps__model_blk_tensor(c, j, PPS__BLK_B1));
    float *p_w2 = pps__model_param(c, pps__model_blk_tensor(c, j, PPS__BLK_W2));
    float *p_b2 = pps__model_param(c, pps__model_blk_tensor(c, j, PPS__BLK_B2));

    TRY(pps_kernels_layernorm_forward(k, n, h, c->spec.ln_eps, b->x, p_ln_g, p_ln_b, b->h, b->mean,
                                      b->rstd));
    TRY(pps_kernels_linear_forward(k, n, h, f, b->h, p_w1, p_b1, b->a));
    TRY(pps_kernels_gelu_forward(k, (size_t)n * f, b->a, b->g));
    TRY(pps_kernels_linear_forward(k, n, f, h, b->g, p_w2, p_b2, b->y));
    /* The residual: y = x + mlp(x). */
    return pps_kernels_add(k, (size_t)n * h, b->x, b->y, b->y);
}

int pps__model_pass_forward(struct pps__model_chunk *c, struct pps__model_slot *s, int iter,
                            const float *in, float *out, float *loss, struct pps_err *err)
{
    struct pps_kernels *k = c->k;
    const struct pps__model_layout *l = &c->lay;
    void *keep = s->arena[PPS__ARENA_KEEP], *tmp = s->arena[PPS__ARENA_TMP];
    int n = c->rows, h = c->hidden, v = c->vocab;
    size_t act = (size_t)n * h * sizeof(float);
    float *x0;
    int64_t t;
    int rc;

    if (passes_through(c)) {
        memcpy(out, in, act);
        return 0;
    }

    /* Tokens and targets of this microbatch, drawn here and on the other end alike. */
    if (c->base.first || c->base.last) {
        rc = pps_model_data_sample(c->data, &c->spec, iter, s->mb,
                                   c->base.first ? c->host_ids : NULL,
                                   c->base.last ? c->host_targets : NULL, err);
        if (rc < 0)
            return rc;
    }

    x0 = chunk_in(c, s);
    if (c->base.first) {
        int32_t *ids = ids_at(keep, l->k_ids);
        t = layer_start(c);
        TRY(pps_kernels_copy_in(k, ids, c->host_ids, (size_t)n * sizeof(int32_t)));
        TRY(pps_kernels_embedding_forward(k, n, h, v, ids, c->params + c->tensors[0].off, x0));
        t = layer_end(c, 0, t);
    } else {
        TRY(pps_kernels_copy_in(k, x0, in, act));
        t = layer_start(c);
    }

    for (int j = 0; j < c->nb; j++) {
        struct blk b;
        blk_ptrs(c, s, j, &b);
        TRY(block_forward(c, j, &b));
        t = layer_end(c, 1 + j, t);
    }

    if (c->base.last) {
        float *xl = at(keep, l->k_xl), *z = at(keep, l->k_z), *logits = at(keep, l->k_logits);
        int32_t *targets = ids_at(tmp, l->t_targets);
        TRY(pps_kernels_layernorm_forward(k, n, h, c->spec.ln_eps, xl,
                                          pps__model_param(c, pps__model_fin_tensor(c, 0)),
                                          pps__model_param(c, pps__model_fin_tensor(c, 1)), z,
                                          at(keep, l->k_meanf), at(keep, l->k_rstdf)));
        TRY(pps_kernels_linear_forward(
            k, n, h, v, z, pps__model_param(c, pps__model_fin_tensor(c, 2)), NULL, logits));
        TRY(pps_kernels_copy_in(k, targets, c->host_targets, (size_t)n * sizeof(int32_t)));
        TRY(pps_kernels_cross_entropy_forward(k, n, v, logits, targets, at(tmp, l->t_lse),
                                              c->loss_buf));
        (void)layer_end(c, c->nb + 1, t);
        return pps_kernels_copy_out(k, loss, c->loss_buf, sizeof(float));
    }
    return pps_kernels_copy_out(k, out, c->out_buf, act);
}

/* ---- backward ----------------------------------------------------------------------------- */

/* B of block j (with its W calls when fused): from b->dy to b->dx, keeping da and dh. */
static int block_backward(struct pps__model_chunk *c, int j, int fused, const struct blk *b)
{
    struct pps_kernels *k = c->k;
    int n = c->rows, h = c->hidden, f = c->inner;
    int t_ln_g = pps__model_blk_tensor(c, j, PPS__BLK_LN_G);
    int t_w1 = pps__model_blk_tensor(c, j, PPS__BLK_W1);
    int t_w2 = pps__model_blk_tensor(c, j, PPS__BLK_W2);

    /* W2: the gradient of the GELU's output, into da. */
    if (fused)
        TRY(pps_kernels_linear_backward(
            k, n, f, h, b->g, pps__model_param(c, t_w2), b->dy, b->da, pps__model_grad(c, t_w2),
            pps__model_grad(c, pps__model_blk_tensor(c, j, PPS__BLK_B2))));
    else
        TRY(pps_kernels_linear_backward_input(k, n, f, h, pps__model_param(c, t_w2), b->dy, b->da));
    /* GELU, in place: da becomes the gradient of its input, W1's output gradient. */
    TRY(pps_kernels_gelu_backward(k, (size_t)n * f, b->a, b->da, b->da));
    /* W1: the gradient of LN's output, into dh. */
    if (fused)
        TRY(pps_kernels_linear_backward(
            k, n, h, f, b->h, pps__model_param(c, t_w1), b->da, b->dh, pps__model_grad(c, t_w1),
            pps__model_grad(c, pps__model_blk_tensor(c, j, PPS__BLK_B1))));
    else
        TRY(pps_kernels_linear_backward_input(k, n, h, f, pps__model_param(c, t_w1), b->da, b->dh));
    /* LN: its input gradient into dx, then the residual's other path added. */
    if (fused)
        TRY(pps_kernels_layernorm_backward(
            k, n, h, b->x, b->mean, b->rstd, pps__model_param(c, t_ln_g), b->dh, b->dx,
            pps__model_grad(c, t_ln_g),
            pps__model_grad(c, pps__model_blk_tensor(c, j, PPS__BLK_LN_B))));
    else
        TRY(pps_kernels_layernorm_backward_input(k, n, h, b->x, b->mean, b->rstd,
                                                 pps__model_param(c, t_ln_g), b->dh, b->dx));
    return pps_kernels_add(k, (size_t)n * h, b->dy, b->dx, b->dx);
}

/* The loss, the head and the final LN (with their W calls when fused), down to top: the
 * gradient of the chunk's last activation. */
static int head_backward(struct pps__model_chunk *c, struct pps__model_slot *s, int fused,
                         float *top)
{
    struct pps_kernels *k = c->k;
    const struct pps__model_layout *l = &c->lay;
    void *keep = s->arena[PPS__ARENA_KEEP], *tmp = s->arena[PPS__ARENA_TMP];
    float *logits = at(keep, l->k_logits), *dz = at(s->arena[PPS__ARENA_GRAD], l->g_dz);
    float *xl = at(keep, l->k_xl), *meanf = at(keep, l->k_meanf), *rstdf = at(keep, l->k_rstdf);
    int n = c->rows, h = c->hidden, v = c->vocab;
    int t_g = pps__model_fin_tensor(c, PPS__FIN_LN_G),
        t_b = pps__model_fin_tensor(c, PPS__FIN_LN_B);
    int t_head = pps__model_fin_tensor(c, PPS__FIN_HEAD);

    /* The logits become their gradient in place: the head's dy, which W needs. */
    TRY(pps_kernels_cross_entropy_backward(k, n, v, c->dloss, logits, ids_at(tmp, l->t_targets),
                                           at(tmp, l->t_lse), logits));
    if (fused) {
        TRY(pps_kernels_linear_backward(k, n, h, v, at(keep, l->k_z), pps__model_param(c, t_head),
                                        logits, dz, pps__model_grad(c, t_head), NULL));
        return pps_kernels_layernorm_backward(k, n, h, xl, meanf, rstdf, pps__model_param(c, t_g),
                                              dz, top, pps__model_grad(c, t_g),
                                              pps__model_grad(c, t_b));
    }
    TRY(pps_kernels_linear_backward_input(k, n, h, v, pps__model_param(c, t_head), logits, dz));
    return pps_kernels_layernorm_backward_input(k, n, h, xl, meanf, rstdf, pps__model_param(c, t_g),
                                                dz, top);
}

/* The embedding's W: its table's gradient from the tokens and their output gradient. */
static int embedding_weights(struct pps__model_chunk *c, struct pps__model_slot *s)
{
    return pps_kernels_embedding_backward(
        c->k, c->rows, c->hidden, c->vocab, ids_at(s->arena[PPS__ARENA_KEEP], c->lay.k_ids),
        at(s->arena[PPS__ARENA_GRAD], c->lay.g_d0), c->grads + c->tensors[0].off);
}

int pps__model_pass_backward(struct pps__model_chunk *c, struct pps__model_slot *s, int fused,
                             const float *dy, float *dx)
{
    size_t act = (size_t)c->rows * c->hidden * sizeof(float);
    float *top;
    int64_t t;

    if (passes_through(c)) {
        memcpy(dx, dy, act);
        return 0;
    }

    /* The gradient of the chunk's output: the last block's dy, or, without blocks, that of the
     * chunk's input. */
    if (c->nb > 0) {
        struct blk b;
        blk_ptrs(c, s, c->nb - 1, &b);
        top = b.dy;
    } else {
        top = chunk_din(c, s);
    }
    if (c->base.last) {
        t = layer_start(c);
        TRY(head_backward(c, s, fused, top));
        t = layer_end(c, c->nb + 1, t);
    } else {
        TRY(pps_kernels_copy_in(c->k, top, dy, act));
        t = layer_start(c);
    }

    for (int j = c->nb - 1; j >= 0; j--) {
        struct blk b;
        blk_ptrs(c, s, j, &b);
        TRY(block_backward(c, j, fused, &b));
        t = layer_end(c, 1 + j, t);
    }

    /* The embedding's B is nothing (its input is tokens); fused, it does its W. */
    if (c->base.first && fused) {
        TRY(embedding_weights(c, s));
        (void)layer_end(c, 0, t);
    }
    if (c->base.first)
        return 0;
    return pps_kernels_copy_out(c->k, dx, c->dx_buf, act);
}

int pps__model_pass_weights(struct pps__model_chunk *c, struct pps__model_slot *s)
{
    struct pps_kernels *k = c->k;
    const struct pps__model_layout *l = &c->lay;
    void *keep = s->arena[PPS__ARENA_KEEP], *grad = s->arena[PPS__ARENA_GRAD];
    int n = c->rows, h = c->hidden, f = c->inner, v = c->vocab;
    int64_t t;

    if (passes_through(c))
        return 0;

    /* The same order as the fused backward, though any order gives the same bits. */
    t = layer_start(c);
    if (c->base.last) {
        int t_g = pps__model_fin_tensor(c, PPS__FIN_LN_G);
        int t_head = pps__model_fin_tensor(c, PPS__FIN_HEAD);
        TRY(pps_kernels_linear_backward_params(k, n, h, v, at(keep, l->k_z), at(keep, l->k_logits),
                                               pps__model_grad(c, t_head), NULL));
        TRY(pps_kernels_layernorm_backward_params(
            k, n, h, at(keep, l->k_xl), at(keep, l->k_meanf), at(keep, l->k_rstdf),
            at(grad, l->g_dz), pps__model_grad(c, t_g),
            pps__model_grad(c, pps__model_fin_tensor(c, PPS__FIN_LN_B))));
        t = layer_end(c, c->nb + 1, t);
    }
    for (int j = c->nb - 1; j >= 0; j--) {
        struct blk b;
        blk_ptrs(c, s, j, &b);
        TRY(pps_kernels_linear_backward_params(
            k, n, f, h, b.g, b.dy, pps__model_grad(c, pps__model_blk_tensor(c, j, PPS__BLK_W2)),
            pps__model_grad(c, pps__model_blk_tensor(c, j, PPS__BLK_B2))));
        TRY(pps_kernels_linear_backward_params(
            k, n, h, f, b.h, b.da, pps__model_grad(c, pps__model_blk_tensor(c, j, PPS__BLK_W1)),
            pps__model_grad(c, pps__model_blk_tensor(c, j, PPS__BLK_B1))));
        TRY(pps_kernels_layernorm_backward_params(
            k, n, h, b.x, b.mean, b.rstd, b.dh,
            pps__model_grad(c, pps__model_blk_tensor(c, j, PPS__BLK_LN_G)),
            pps__model_grad(c, pps__model_blk_tensor(c, j, PPS__BLK_LN_B))));
        t = layer_end(c, 1 + j, t);
    }
    if (c->base.first) {
        TRY(embedding_weights(c, s));
        (void)layer_end(c, 0, t);
    }
    return 0;
}
