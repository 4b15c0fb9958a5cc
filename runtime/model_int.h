/*
 * model_int.h - what the model's files share: the counter-based generator, the parameter
 * tensors and how they are initialised, the layout of a microbatch's activation arenas, and the
 * chunk itself. Only runtime/model_*.c include it; names here are pps__ (module-internal).
 */
#ifndef PPS_MODEL_INT_H
#define PPS_MODEL_INT_H

#include "model.h"

/* ---- counter-based random numbers --------------------------------------------------------- */

/* splitmix64's output function of x (Steele, Lea, Flood): a bijection that mixes every bit. */
static inline uint64_t pps__splitmix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* One draw from a counter (a, b, c, d) in a stream of its own (domain): what the init and the
 * sampler build on, so no draw depends on which others were made before it. */
static inline uint64_t pps__model_draw(uint64_t domain, uint64_t a, uint64_t b, uint64_t c,
                                       uint64_t d)
{
    uint64_t h = pps__splitmix64(domain);
    h = pps__splitmix64(h ^ a);
    h = pps__splitmix64(h ^ b);
    h = pps__splitmix64(h ^ c);
    return pps__splitmix64(h ^ d);
}

/* ---- parameter tensors -------------------------------------------------------------------- */

enum pps__model_init {
    PPS__INIT_UNIFORM, /* uniform in [-bound, bound) */
    PPS__INIT_ONES,
    PPS__INIT_ZEROS,
};

/* Tensors of a block, in export order; then the final ones. */
enum { PPS__BLK_LN_G, PPS__BLK_LN_B, PPS__BLK_W1, PPS__BLK_B1, PPS__BLK_W2, PPS__BLK_B2 };
enum { PPS__BLK_TENSORS = 6 };
enum { PPS__FIN_LN_G, PPS__FIN_LN_B, PPS__FIN_HEAD };

struct pps__model_tensor {
    uint64_t id; /* global: 0 embedding, 1 + 6 * block + t, then 1 + 6 * L + t for the final */
    size_t n;    /* floats */
    size_t off;  /* floats from the start of the chunk's flat buffers (64-byte aligned) */
    int init;    /* enum pps__model_init */
    float bound;
    char name[32]; /* "block 3 w1", for messages */
};

/* Fills t's n values for seed: value i is a function of (seed, t->id, i) only. */
void pps__model_init_values(uint64_t seed, const struct pps__model_tensor *t, float *out);

/*
 * The tensors of a chunk holding blocks [b0, b0 + nb) (and the embedding if first, the final LN
 * and head if last), in export order, with their offsets in a flat buffer of *n_flat floats
 * (each tensor starting on 64 bytes, as every buffer of its own would). tensors has room for
 * 1 + 6 * nb + 3 entries; returns how many.
 */
int pps__model_tensors(const struct pps_model_spec *s, int b0, int nb, int first, int last,
                       struct pps__model_tensor *tensors, size_t *n_flat);

/* ---- activation arenas -------------------------------------------------------------------- */

/*
 * Where a microbatch's activations live: byte offsets into three arenas, each piece on 64 bytes.
 * keep (taken at F, given back at W): what W needs of the forward, and what B needs too;
 * tmp (taken at F, given back at B): what only B needs; grad (taken at B, given back at W): the
 * output gradients that W needs. Per block j the pieces repeat at base + j * stride.
 */
struct pps__model_layout {
    size_t keep, tmp, grad; /* arena sizes in bytes (0: not used) */
    /* keep */
    size_t k_ids;                                          /* first: the token ids */
    size_t k_blk, k_stride, k_x, k_h, k_g, k_mean, k_rstd; /* block input, LN out, GELU out */
    size_t k_xl, k_meanf, k_rstdf, k_z, k_logits; /* last: final LN in / out, logits (-> grads) */
    /* tmp */
    size_t t_blk, t_stride, t_a; /* the GELU's input */
    size_t t_lse, t_targets;     /* last */
    /* grad */
    size_t g_d0;                              /* first: the gradient of the embedding's output */
    size_t g_blk, g_stride, g_dy, g_da, g_dh; /* block output gradient, GELU in / LN out grads */
    size_t g_dz;                              /* last: the final LN's output gradient */
};

void pps__model_layout(const struct pps_model_spec *s, int nb, int first, int last,
                       struct pps__model_layout *l);

/* ---- the chunk ---------------------------------------------------------------------------- */

enum { PPS__ARENA_KEEP, PPS__ARENA_TMP, PPS__ARENA_GRAD, PPS__ARENAS };
enum { PPS__SLOT_FREE, PPS__SLOT_F, PPS__SLOT_B };

/* One live microbatch. */
struct pps__model_slot {
    int iter, mb, state;
    void *arena[PPS__ARENAS];
};

/* Arenas of one size that no microbatch holds now, ready for the next. */
struct pps__model_pool {
    size_t bytes;
    void **free;
    int n, cap;
};

struct pps__model_chunk {
    struct pps_compute base; /* first: the chunk is its struct pps_compute */
    struct pps_model_spec spec;
    const struct pps_model_data *data;
    struct pps_kernels *k;
    int m;
    float dloss; /* 1/m */
    int b0, nb;  /* blocks [b0, b0 + nb) */
    int rows, hidden, inner, vocab;
    struct pps__model_layout lay;

    struct pps__model_tensor *tensors;
    int n_tensors;
    size_t n_flat;                       /* floats in each flat buffer, padding included */
    size_t n_params;                     /* floats exported */
    float *params, *grads, *mom1, *mom2; /* device, n_flat each */
    float *saved_params, *saved_mom1, *saved_mom2; /* device, from the first save_state */
    float *scaled;                                 /* device, grads * grad_scale for step */

    struct pps__model_slot *slots;
    int n_slots, cap_slots;
    struct pps__model_pool pool[PPS__ARENAS];
    size_t act_bytes;
    int pending_w;

    /* Per-chunk workspace, not per microbatch: the output on its way out, the input gradient on
     * its way out, the loss of the last forward; host staging of tokens. */
    float *out_buf, *dx_buf, *loss_buf;
    int32_t *host_ids, *host_targets;

    double loss_sum;
    int loss_iter, loss_started;
};

/* The device pointer of a block's or the final layers' tensor, parameter or gradient. */
static inline float *pps__model_param(struct pps__model_chunk *c, int idx)
{
    return c->params + c->tensors[idx].off;
}
static inline float *pps__model_grad(struct pps__model_chunk *c, int idx)
{
    return c->grads + c->tensors[idx].off;
}
/* Index of tensor t of the chunk's block j, of final tensor t. */
static inline int pps__model_blk_tensor(const struct pps__model_chunk *c, int j, int t)
{
    return (c->base.first ? 1 : 0) + PPS__BLK_TENSORS * j + t;
}
static inline int pps__model_fin_tensor(const struct pps__model_chunk *c, int t)
{
    return (c->base.first ? 1 : 0) + PPS__BLK_TENSORS * c->nb + t;
}

/*
 * The passes (model_pass.c), on a slot whose arenas are in place: F fills keep and tmp and
 * writes the output (the last adds its loss to *loss); B fills grad from dy (from the loss on
 * the last) and writes dx; with fused, B also makes every W call through the fused kernels
 * (linear_backward, layernorm_backward) and the embedding's; W makes the W calls. Each returns
 * the first kernels error, unreported (the caller syncs for the reason).
 */
int pps__model_pass_forward(struct pps__model_chunk *c, struct pps__model_slot *s, int iter,
                            const float *in, float *out, float *loss, struct pps_err *err);
int pps__model_pass_backward(struct pps__model_chunk *c, struct pps__model_slot *s, int fused,
                             const float *dy, float *dx);
int pps__model_pass_weights(struct pps__model_chunk *c, struct pps__model_slot *s);

/* Ends an op (model_chunk.c): syncs the context and, when a kernels call failed, reports its
 * reason in err; returns rc, or the kernels error when rc was 0. */
int pps__model_finish(struct pps__model_chunk *c, int rc, struct pps_err *err);

/* The optimizer's side (model_optim.c): compute.h's zero_grads, grad_stats, step, save_state,
 * restore_state, export_params and export_grads for a model chunk. */
int pps__model_zero_grads(struct pps_compute *base, struct pps_err *err);
int pps__model_grad_stats(struct pps_compute *base, double *sumsq, size_t *nonfinite,
                          struct pps_err *err);
int pps__model_step(struct pps_compute *base, double grad_scale, long step, struct pps_err *err);
int pps__model_save_state(struct pps_compute *base, struct pps_err *err);
int pps__model_restore_state(struct pps_compute *base, struct pps_err *err);
int pps__model_export_params(struct pps_compute *base, float *buf, size_t *n_out,
                             struct pps_err *err);
int pps__model_export_grads(struct pps_compute *base, float *buf, size_t *n_out,
                            struct pps_err *err);

/* ---- the built-in text --------------------------------------------------------------------- */

/* runtime/model_text.txt, compiled in by cmake/PpsEmbed.cmake (model_text.c in the build tree):
 * pps__model_text_len bytes, then a NUL that is not counted. */
extern const unsigned char pps__model_text[];
extern const size_t pps__model_text_len;

#endif
