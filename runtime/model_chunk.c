/*
 * model_chunk.c - a chunk of the model as a struct pps_compute: its construction, and the
 * bookkeeping of live microbatches and their activation arenas around the passes. The math is in
 * model_pass.c, the optimizer's side in model_optim.c.
 *
 * A microbatch's activations live in three arenas (model_int.h, struct pps__model_layout):
 * F takes keep and tmp, B gives tmp back and takes grad, W gives keep and grad back (BW does it
 * all). Arenas come from per-kind free lists, which grow to the schedule's worst case during the
 * first iteration; after that, the steady path allocates nothing. act_bytes counts the arenas
 * that live microbatches hold, which is what the schedule's memory model predicts.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model_int.h"

static const struct pps_compute_ops model_ops;

static struct pps__model_chunk *chunk_of(struct pps_compute *c)
{
    return (struct pps__model_chunk *)(void *)c;
}

static const struct pps__model_chunk *chunk_of_const(const struct pps_compute *c)
{
    return (const struct pps__model_chunk *)(const void *)c;
}

/* Ends an op: syncs the context, and when a kernels call failed (which records its reason in
 * the context), reports that reason. Errors of the chunk's own set err where they happen. */
int pps__model_finish(struct pps__model_chunk *c, int rc, struct pps_err *err)
{
    struct pps_err kerr = {0};
    int krc = pps_kernels_sync(c->k, &kerr);
    if (krc < 0) {
        pps_err_set(err, krc, "model vstage %d: %s", c->base.vstage, kerr.msg);
        return rc < 0 ? rc : krc;
    }
    return rc;
}

/* ---- arenas and slots --------------------------------------------------------------------- */

/* An arena of kind from its free list, or a new one; NULL (and 0) for a kind this chunk does not
 * use. Counted in act_bytes. */
static int arena_take(struct pps__model_chunk *c, int kind, void **out)
{
    struct pps__model_pool *pool = &c->pool[kind];
    int rc = 0;

    *out = NULL;
    if (pool->bytes == 0)
        return 0;
    if (pool->n > 0)
        *out = pool->free[--pool->n];
    else
        rc = pps_kernels_mem_alloc(c->k, pool->bytes, out);
    if (rc == 0)
        c->act_bytes += pool->bytes;
    return rc;
}

/* Gives an arena back to its free list (or frees it when the list cannot grow). */
static void arena_give(struct pps__model_chunk *c, int kind, void **arena)
{
    struct pps__model_pool *pool = &c->pool[kind];
    void *p = *arena;

    *arena = NULL;
    if (!p)
        return;
    c->act_bytes -= pool->bytes;
    if (pool->n == pool->cap) {
        int cap = pool->cap ? 2 * pool->cap : 8;
        void **bigger = realloc(pool->free, (size_t)cap * sizeof(*bigger));
        if (!bigger) {
            pps_kernels_mem_free(c->k, p);
            return;
        }
        pool->free = bigger;
        pool->cap = cap;
    }
    pool->free[pool->n++] = p;
}

static struct pps__model_slot *slot_find(struct pps__model_chunk *c, int iter, int mb)
{
    for (int i = 0; i < c->n_slots; i++) {
        struct pps__model_slot *s = &c->slots[i];
        if (s->state != PPS__SLOT_FREE && s->iter == iter && s->mb == mb)
            return s;
    }
    return NULL;
}

/* A free slot for (iter, mb), the slot table growing when all are live. */
static int slot_open(struct pps__model_chunk *c, int iter, int mb, struct pps__model_slot **out,
                     struct pps_err *err)
{
    struct pps__model_slot *s = NULL;

    for (int i = 0; i < c->n_slots && !s; i++)
        if (c->slots[i].state == PPS__SLOT_FREE)
            s = &c->slots[i];
    if (!s) {
        if (c->n_slots == c->cap_slots) {
            int cap = c->cap_slots ? 2 * c->cap_slots : 8;
            struct pps__model_slot *bigger = realloc(c->slots, (size_t)cap * sizeof(*bigger));
            if (!bigger)
                return pps_err_set(err, PPS_ENOMEM, "model vstage %d: out of memory",
                                   c->base.vstage);
            c->slots = bigger;
            c->cap_slots = cap;
        }
        s = &c->slots[c->n_slots++];
    }
    memset(s, 0, sizeof(*s));
    s->iter = iter;
    s->mb = mb;
    s->state = PPS__SLOT_F;
    *out = s;
    return 0;
}

/* Gives every arena of s back and frees the slot. */
static void slot_close(struct pps__model_chunk *c, struct pps__model_slot *s)
{
    for (int kind = 0; kind < PPS__ARENAS; kind++)
        arena_give(c, kind, &s->arena[kind]);
    s->state = PPS__SLOT_FREE;
}

/* The live slot of (iter, mb) in state want, or PPS_EINVAL saying what is out of order. */
static int slot_expect(struct pps__model_chunk *c, const char *op, int iter, int mb, int want,
                       struct pps__model_slot **out, struct pps_err *err)
{
    static const char *const what[] = {"no forward", "a forward but no backward_b",
                                       "its backward_b done"};
    struct pps__model_slot *s = slot_find(c, iter, mb);
    int state = s ? s->state : PPS__SLOT_FREE;

    if (state != want)
        return pps_err_set(err, PPS_EINVAL,
                           "model vstage %d: %s of iteration %d microbatch %d, which has %s",
                           c->base.vstage, op, iter, mb, what[state]);
    *out = s;
    return 0;
}

/* ---- the passes --------------------------------------------------------------------------- */

static size_t model_act_floats(const struct pps_compute *base)
{
    const struct pps__model_chunk *c = chunk_of_const(base);
    return (size_t)c->rows * c->hidden;
}

static int model_forward(struct pps_compute *base, int iter, int mb, const float *in, float *out,
                         struct pps_err *err)
{
    struct pps__model_chunk *c = chunk_of(base);
    struct pps__model_slot *s = NULL;
    float loss = 0;
    int rc;

    if ((!base->first && !in) || (!base->last && !out))
        return pps_err_set(err, PPS_EINVAL, "model vstage %d: forward needs %s", base->vstage,
                           !in && !base->first ? "an input" : "an output buffer");
    if (slot_find(c, iter, mb))
        return pps_err_set(err, PPS_EINVAL,
                           "model vstage %d: forward of iteration %d microbatch %d twice",
                           base->vstage, iter, mb);
    rc = slot_open(c, iter, mb, &s, err);
    if (rc < 0)
        return rc;
    /* From here on, the slot is held: released on failure at out. */
    rc = arena_take(c, PPS__ARENA_KEEP, &s->arena[PPS__ARENA_KEEP]);
    if (rc == 0)
        rc = arena_take(c, PPS__ARENA_TMP, &s->arena[PPS__ARENA_TMP]);
    if (rc == 0)
        rc = pps__model_pass_forward(c, s, iter, in, out, &loss, err);
    rc = pps__model_finish(c, rc, err);
    if (rc < 0)
        goto out;
    if (base->last) {
        /* A new iteration's first forward starts a new sum. */
        if (!c->loss_started || iter != c->loss_iter)
            c->loss_sum = 0;
        c->loss_started = 1;
        c->loss_iter = iter;
        c->loss_sum += (double)loss;
    }
out:
    if (rc < 0)
        slot_close(c, s);
    return rc;
}

/* B, or B and W fused: from the slot after F to the slot after B, or closed. */
static int backward(struct pps_compute *base, const char *op, int fused, int iter, int mb,
                    const float *dy, float *dx, struct pps_err *err)
{
    struct pps__model_chunk *c = chunk_of(base);
    struct pps__model_slot *s = NULL;
    int rc;

    if ((!base->last && !dy) || (!base->first && !dx))
        return pps_err_set(err, PPS_EINVAL, "model vstage %d: %s needs %s", base->vstage, op,
                           !dy && !base->last ? "the output's gradient" : "a buffer for dx");
    rc = slot_expect(c, op, iter, mb, PPS__SLOT_F, &s, err);
    if (rc < 0)
        return rc;
    rc = arena_take(c, PPS__ARENA_GRAD, &s->arena[PPS__ARENA_GRAD]);
    if (rc == 0)
        rc = pps__model_pass_backward(c, s, fused, dy, dx);
    rc = pps__model_finish(c, rc, err);
    if (rc < 0) {
        /* The slot keeps what F left; only what this B took is given back. */
        arena_give(c, PPS__ARENA_GRAD, &s->arena[PPS__ARENA_GRAD]);
    } else if (fused) {
        slot_close(c, s);
    } else {
        arena_give(c, PPS__ARENA_TMP, &s->arena[PPS__ARENA_TMP]);
        s->state = PPS__SLOT_B;
        c->pending_w++;
    }
    return rc;
}

static int model_backward_b(struct pps_compute *base, int iter, int mb, const float *dy, float *dx,
                            struct pps_err *err)
{
    return backward(base, "backward_b", 0, iter, mb, dy, dx, err);
}

static int model_backward_bw(struct pps_compute *base, int iter, int mb, const float *dy, float *dx,
                             struct pps_err *err)
{
    return backward(base, "backward_bw", 1, iter, mb, dy, dx, err);
}

static int model_backward_w(struct pps_compute *base, int iter, int mb, struct pps_err *err)
{
    struct pps__model_chunk *c = chunk_of(base);
    struct pps__model_slot *s = NULL;
    int rc = slot_expect(c, "backward_w", iter, mb, PPS__SLOT_B, &s, err);

    if (rc < 0)
        return rc;
    rc = pps__model_finish(c, pps__model_pass_weights(c, s), err);
    if (rc < 0)
        return rc;
    slot_close(c, s);
    c->pending_w--;
    return 0;
}

/* ---- what the executor reads ------------------------------------------------------------ */

static double model_loss_sum(const struct pps_compute *base)
{
    const struct pps__model_chunk *c = chunk_of_const(base);
    if (!base->last)
        return NAN;
    return c->loss_started ? c->loss_sum : 0.0;
}

static size_t model_act_bytes(const struct pps_compute *base)
{
    return chunk_of_const(base)->act_bytes;
}

static int model_pending_w(const struct pps_compute *base)
{
    return chunk_of_const(base)->pending_w;
}

/* ---- lifecycle ---------------------------------------------------------------------------- */

static void model_free(struct pps_compute *base)
{
    struct pps__model_chunk *c = chunk_of(base);

    if (!c)
        return;
    if (c->k) {
        float *bufs[] = {c->params,       c->grads,      c->mom1,       c->mom2,
                         c->saved_params, c->saved_mom1, c->saved_mom2, c->scaled,
                         c->out_buf,      c->dx_buf,     c->loss_buf};
        for (int i = 0; i < c->n_slots; i++)
            for (int kind = 0; kind < PPS__ARENAS; kind++)
                pps_kernels_mem_free(c->k, c->slots[i].arena[kind]);
        for (int kind = 0; kind < PPS__ARENAS; kind++)
            for (int i = 0; i < c->pool[kind].n; i++)
                pps_kernels_mem_free(c->k, c->pool[kind].free[i]);
        for (size_t i = 0; i < sizeof(bufs) / sizeof(bufs[0]); i++)
            pps_kernels_mem_free(c->k, bufs[i]);
        pps_kernels_free(c->k);
    }
    for (int kind = 0; kind < PPS__ARENAS; kind++)
        free(c->pool[kind].free);
    free(c->slots);
    free(c->tensors);
    free(c->host_ids);
    free(c->host_targets);
    free(c);
}

/* Checks p, v, m, stage, chunk and the partition before anything is built. */
static int check_args(const struct pps_model_spec *s, const char *backend, int p, int v,
                      int placement, int m, int stage, int chunk, const int *first_block,
                      const struct pps_model_data *data, struct pps_compute **out,
                      struct pps_err *err)
{
    int rc = pps_model_spec_check(s, err), n_vs, vs;

    if (rc < 0)
        return rc;
    if (!backend || !first_block || !out)
        return pps_err_set(err, PPS_EINVAL, "model: need a backend, a partition and an output");
    if (p < 1 || v < 1 || p > 1 << 16 || v > 1 << 16 || (long)p * v > 1 << 20)
        return pps_err_set(err, PPS_EINVAL, "model: p and v must be >= 1, got %d and %d", p, v);
    if (m < 1)
        return pps_err_set(err, PPS_EINVAL, "model: m (microbatches) must be >= 1, got %d", m);
    if (stage < 0 || stage >= p || chunk < 0 || chunk >= v)
        return pps_err_set(err, PPS_EINVAL,
                           "model: stage %d, chunk %d out of range for p = %d, v = %d", stage,
                           chunk, p, v);
    if (placement != PPS_PLACE_LOOP && (placement != PPS_PLACE_V || v != 2))
        return pps_err_set(err, PPS_EINVAL, "model: placement %s with v = %d",
                           pps_placement_name(placement), v);
    n_vs = p * v;
    if (first_block[0] != 0 || first_block[n_vs] != s->layers)
        return pps_err_set(err, PPS_EINVAL,
                           "model: the partition must start at block 0 and end at %d, got %d..%d",
                           s->layers, first_block[0], first_block[n_vs]);
    for (int i = 0; i < n_vs; i++)
        if (first_block[i + 1] < first_block[i])
            return pps_err_set(err, PPS_EINVAL,
                               "model: the partition goes backwards at virtual stage %d", i);
    vs = pps_place_vstage(placement, p, stage, chunk);
    if (!data && (vs == 0 || vs == n_vs - 1))
        return pps_err_set(err, PPS_EINVAL,
                           "model: the first and last virtual stages need the training text");
    if (data && data->len < (size_t)s->seq_len + 1)
        return pps_err_set(err, PPS_EINVAL, "%s: %zu bytes of text, need seq_len + 1 = %d",
                           data->path, data->len, s->seq_len + 1);
    return 0;
}

/* Allocates the parameters, gradients and moments, and fills the parameters. */
static int init_params(struct pps__model_chunk *c, struct pps_err *err)
{
    size_t bytes = c->n_flat * sizeof(float), biggest = 0;
    float *host = NULL;
    int rc;

    rc = pps_kernels_mem_alloc(c->k, bytes, (void **)&c->params);
    if (rc == 0)
        rc = pps_kernels_mem_alloc(c->k, bytes, (void **)&c->grads);
    if (rc == 0)
        rc = pps_kernels_mem_alloc(c->k, bytes, (void **)&c->mom1);
    if (rc == 0)
        rc = pps_kernels_mem_alloc(c->k, bytes, (void **)&c->mom2);
    if (rc < 0)
        goto out;
    for (int i = 0; i < c->n_tensors; i++)
        if (c->tensors[i].n > biggest)
            biggest = c->tensors[i].n;
    host = malloc((biggest ? biggest : 1) * sizeof(float));
    if (!host) {
        rc = pps_err_set(err, PPS_ENOMEM, "model vstage %d: out of memory", c->base.vstage);
        goto out;
    }
    for (int i = 0; i < c->n_tensors && rc == 0; i++) {
        pps__model_init_values(c->spec.seed, &c->tensors[i], host);
        rc = pps_kernels_copy_in(c->k, pps__model_param(c, i), host,
                                 c->tensors[i].n * sizeof(float));
    }
out:
    free(host);
    return rc;
}

int pps_model_compute_new(const struct pps_model_spec *s, const char *backend, int p, int v,
                          int placement, int m, int stage, int chunk, const int *first_block,
                          const struct pps_model_data *data, struct pps_compute **out,
                          struct pps_err *err)
{
    struct pps__model_chunk *c = NULL;
    size_t act;
    int rc, vs;

    if (out)
        *out = NULL;
    rc = check_args(s, backend, p, v, placement, m, stage, chunk, first_block, data, out, err);
    if (rc < 0)
        return rc;

    c = calloc(1, sizeof(*c));
    if (!c)
        return pps_err_set(err, PPS_ENOMEM, "model: out of memory");
    vs = pps_place_vstage(placement, p, stage, chunk);
    c->base.ops = &model_ops;
    c->base.stage = stage;
    c->base.chunk = chunk;
    c->base.vstage = vs;
    c->base.first = vs == 0;
    c->base.last = vs == p * v - 1;
    c->spec = *s;
    c->spec.data_path = NULL; /* borrowed by the caller; the chunk reads data instead */
    c->data = data;
    c->m = m;
    c->dloss = 1.0f / (float)m;
    c->b0 = first_block[vs];
    c->nb = first_block[vs + 1] - first_block[vs];
    c->rows = s->seq_len * s->micro_batch;
    c->hidden = s->hidden;
    c->inner = s->hidden * s->mlp_ratio;
    c->vocab = PPS_MODEL_VOCAB;
    act = (size_t)c->rows * c->hidden * sizeof(float);

    rc = pps_kernels_new_part(backend, stage, s->device_parts >= 2 ? s->device_parts : 1, &c->k,
                              err);
    if (rc < 0)
        goto out;
    c->base.device_sms =
        pps_kernels_partition(c->k, c->base.device_part, sizeof(c->base.device_part));

    c->tensors = calloc(1 + (size_t)PPS__BLK_TENSORS * c->nb + 3, sizeof(*c->tensors));
    if (!c->tensors) {
        rc = pps_err_set(err, PPS_ENOMEM, "model: out of memory");
        goto out;
    }
    c->n_tensors =
        pps__model_tensors(s, c->b0, c->nb, c->base.first, c->base.last, c->tensors, &c->n_flat);
    for (int i = 0; i < c->n_tensors; i++)
        c->n_params += c->tensors[i].n;
    rc = init_params(c, err);
    if (rc < 0)
        goto out;

    pps__model_layout(s, c->nb, c->base.first, c->base.last, &c->lay);
    c->pool[PPS__ARENA_KEEP].bytes = c->lay.keep;
    c->pool[PPS__ARENA_TMP].bytes = c->lay.tmp;
    c->pool[PPS__ARENA_GRAD].bytes = c->lay.grad;
    if (!c->base.last)
        rc = pps_kernels_mem_alloc(c->k, act, (void **)&c->out_buf);
    if (rc == 0 && !c->base.first)
        rc = pps_kernels_mem_alloc(c->k, act, (void **)&c->dx_buf);
    if (rc == 0 && c->base.last)
        rc = pps_kernels_mem_alloc(c->k, sizeof(float), (void **)&c->loss_buf);
    if (rc < 0)
        goto out;
    if (c->base.first)
        c->host_ids = malloc((size_t)c->rows * sizeof(int32_t));
    if (c->base.last)
        c->host_targets = malloc((size_t)c->rows * sizeof(int32_t));
    if ((c->base.first && !c->host_ids) || (c->base.last && !c->host_targets)) {
        rc = pps_err_set(err, PPS_ENOMEM, "model: out of memory");
        goto out;
    }
out:
    if (rc < 0 && c && c->k)
        rc = pps__model_finish(c, rc, err);
    if (rc < 0) {
        model_free(&c->base);
        return rc;
    }
    *out = &c->base;
    return 0;
}

static const struct pps_compute_ops model_ops = {
    .name = "model",
    .act_floats = model_act_floats,
    .forward = model_forward,
    .backward_b = model_backward_b,
    .backward_w = model_backward_w,
    .backward_bw = model_backward_bw,
    .zero_grads = pps__model_zero_grads,
    .grad_stats = pps__model_grad_stats,
    .step = pps__model_step,
    .save_state = pps__model_save_state,
    .restore_state = pps__model_restore_state,
    .loss_sum = model_loss_sum,
    .act_bytes = model_act_bytes,
    .pending_w = model_pending_w,
    .export_params = pps__model_export_params,
    .export_grads = pps__model_export_grads,
    .free = model_free,
};
