/*
 * model.h - the real model behind compute.h's "model" flavour: a byte-level language model that
 * learns, cut into pipeline chunks, computed on a kernels/ backend with exact gradients.
 *
 * The network (docs/model.md): bytes -> embedding (256 x H) -> L residual MLP blocks
 * (x + W2 gelu(W1 LN(x) + b1) + b2, inner width mlp_ratio * H) -> final LN -> LM head (H x 256,
 * no bias) -> softmax cross-entropy against the next byte, averaged over the B * T tokens of a
 * microbatch. There is no attention: each position predicts the next byte from its own byte
 * through the stack, which is enough for a loss that falls fast and for exact gradients to check.
 *
 * Pipeline. Virtual stage vs (0 .. p*v - 1, vs = chunk * p + stage) holds blocks
 * [first_block[vs], first_block[vs+1]); the first virtual stage also holds the embedding, the
 * last the final LN, the head and the loss. A chunk with no blocks is allowed (a middle one just
 * passes activations through). Activations and input gradients at every boundary are B*T*H floats.
 *
 * Determinism. Parameters are drawn from (seed, global tensor id, element index) with a
 * counter-based generator, so a block's parameters are bitwise the same whichever chunk holds it.
 * Training sequences are drawn from (seed, iteration, microbatch, sequence), so the first and the
 * last virtual stage read the same tokens and targets independently, for any schedule. Every
 * layer makes the same kernels calls on the same shapes whichever chunk holds it, so a pipeline's
 * gradients (per chunk, W's in microbatch order) are bitwise those of pps_model_reference().
 *
 * Errors: 0 or a negative PPS_E... code with a one-line reason in err (which may be NULL).
 */
#ifndef PPS_MODEL_H
#define PPS_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "compute.h"
#include "kernels.h"
#include "pps_error.h"
#include "schedule.h" /* enum pps_placement */

/* The path a text loaded without a data_path shows: the built-in text, runtime/model_text.txt (an
 * essay on pipelines, 14 kB of English) compiled into the library, so no file is looked up. */
#define PPS_MODEL_BUILTIN_TEXT "(built-in text)"
/* Bytes: the vocabulary is fixed. */
#define PPS_MODEL_VOCAB 256

struct pps_model_spec {
    int layers;      /* L residual MLP blocks, >= 0 */
    int hidden;      /* H, the width of the residual stream */
    int mlp_ratio;   /* the MLP's inner width is mlp_ratio * H */
    int seq_len;     /* T tokens per sequence */
    int micro_batch; /* B sequences per microbatch */
    int vocab;       /* PPS_MODEL_VOCAB (the only value accepted) */
    float ln_eps;    /* layer normalization's epsilon */
    uint64_t seed;   /* parameters and the sampling of the text */
    /* The training text's file, borrowed (the caller keeps it alive while a pps_model_data is
     * loaded from it); NULL means the built-in text. */
    const char *data_path;
    struct pps_adamw adamw; /* learning rate, betas, eps, weight decay (on every parameter) */
    /* Stages that share one device, each chunk of stage s on its partition s
     * (pps_kernels_new_part: SM partitions on cuda); 0: every chunk on the whole device. Not
     * the model's shape: how it is laid on the hardware. */
    int device_parts;
};

/*
 * Defaults that train in seconds on a laptop: L = 4, H = 64, mlp_ratio 4, T = 32, B = 4,
 * vocab 256, ln_eps 1e-5, seed 1, the built-in text, AdamW lr 3e-3, betas 0.9 and 0.95, eps 1e-8,
 * weight decay 0.01.
 */
void pps_model_spec_init(struct pps_model_spec *s);
/* PPS_EINVAL naming the first field out of range (sizes whose products overflow included). */
int pps_model_spec_check(const struct pps_model_spec *s, struct pps_err *err);

/* Parameters of the whole model (what export_params of all chunks together gives). */
size_t pps_model_param_count(const struct pps_model_spec *s);

/*
 * Blocks per virtual stage. partition is "3,5,5,3" (one count per virtual stage, in virtual
 * stage order, each >= 0, summing to L; spaces around numbers are allowed) or NULL / "" for an
 * even split with the remainder going to the earliest virtual stages (L = 10 on 4: 3,3,2,2).
 * first_block receives n_vstages + 1 offsets: virtual stage vs holds blocks
 * [first_block[vs], first_block[vs+1]). PPS_EINVAL with the reason on a malformed string, a count
 * that is not n_vstages, a negative entry or a sum that is not L.
 */
int pps_model_partition(const struct pps_model_spec *s, int n_vstages, const char *partition,
                        int *first_block, struct pps_err *err);

/* ------------------------------------------------------------------------------------------- */
/* Training text                                                                               */
/* ------------------------------------------------------------------------------------------- */

/* The text, read whole into host memory (the built-in one copied there too); read-only once
 * loaded, so one copy serves every stage thread at once. */
struct pps_model_data {
    unsigned char *bytes;
    size_t len;
    char path[1024]; /* the file, or PPS_MODEL_BUILTIN_TEXT */
};

/*
 * Loads the file s->data_path into *out, or when it is NULL a copy of the built-in text (path
 * PPS_MODEL_BUILTIN_TEXT; it never fails to be there). PPS_ENOENT when the file is missing or
 * unreadable, PPS_EINVAL when it is not a regular file, is over 256 MiB or is shorter than T + 1
 * bytes (a sequence and its last target), each naming the file. On failure *out is NULL.
 */
int pps_model_data_new(const struct pps_model_spec *s, struct pps_model_data **out,
                       struct pps_err *err);
/* NULL is a no-op. */
void pps_model_data_free(struct pps_model_data *d);

/*
 * Where sequence seq (0 .. B-1) of microbatch mb of iteration iter starts in the text: a
 * counter-based draw (splitmix64 of seed, iter, mb, seq), uniform over 0 .. len - T - 1, so any
 * stage computes it alone, in any order. The text must hold at least T + 1 bytes (as
 * pps_model_data_new() checks for s->seq_len).
 */
size_t pps_model_data_offset(const struct pps_model_data *d, const struct pps_model_spec *s,
                             int iter, int mb, int seq);
/*
 * The microbatch's B sequences of T tokens (ids) and their next bytes (targets), row by row:
 * ids[b*T + t] = text[off_b + t], targets[b*T + t] = text[off_b + t + 1]. Either may be NULL.
 * PPS_EINVAL when the text is shorter than T + 1 bytes.
 */
int pps_model_data_sample(const struct pps_model_data *d, const struct pps_model_spec *s, int iter,
                          int mb, int32_t *ids, int32_t *targets, struct pps_err *err);

/* ------------------------------------------------------------------------------------------- */
/* Chunks                                                                                      */
/* ------------------------------------------------------------------------------------------- */

/*
 * Creates the chunk of the virtual stage that placement (enum pps_placement) gives chunk of
 * stage as a struct pps_compute (ops name
 * "model"), on its own kernels context of backend ("cpu"), with its parameters initialised from
 * s->seed, its gradients and moments zeroed. m is the number of microbatches per iteration: the
 * loss's backward starts from dloss = 1/m, so the gradients are those of the iteration's mean
 * loss. first_block is pps_model_partition()'s output for p * v virtual stages. data (borrowed,
 * must outlive the chunk) is read by the first and last virtual stages. *out is freed with
 * (*out)->ops->free(*out); NULL on failure.
 *
 * Memory: each live microbatch holds up to three arenas (what F keeps for B and W, what only B
 * needs, what B keeps for W), taken from per-chunk free lists that grow to the schedule's worst
 * case during the first iteration and are reused after; act_bytes() counts the arenas held by
 * live microbatches. See pps_model_act_bytes() for the sizes.
 *
 * What the chunk adds to compute.h: loss_sum() restarts from 0 at the first forward of a new
 * iteration; step() leaves the gradients as they were (the scaled copy is a scratch buffer), so
 * a step can be restored and redone; export order is per parameter tensor: embedding, then each
 * block (ln gamma, ln beta, w1, b1, w2, b2), then the final ln gamma, beta and the head, with
 * w1 stored H x inner, w2 inner x H, head H x 256, row-major.
 */
int pps_model_compute_new(const struct pps_model_spec *s, const char *backend, int p, int v,
                          int placement, int m, int stage, int chunk, const int *first_block,
                          const struct pps_model_data *data, struct pps_compute **out,
                          struct pps_err *err);

/*
 * Bytes of activations one microbatch holds on a chunk with n_blocks blocks (first: it holds the
 * embedding, last: the head and loss): after its forward (*after_f) and after its B, while its W
 * is pending (*after_b). These are exactly what act_bytes() counts, so a memory budget in bytes
 * turns into a bound on live microbatches and pending W's. Either pointer may be NULL.
 */
void pps_model_act_bytes(const struct pps_model_spec *s, int n_blocks, int first, int last,
                         size_t *after_f, size_t *after_b);

/*
 * The single-process baseline of the gradient check: the whole model as one chunk (first and
 * last at once) on backend, at the initial parameters, over microbatches 0 .. m-1 of iteration
 * iter, each a forward then a fused backward, accumulating in microbatch order. *grads (malloc'd,
 * the caller frees it) receives the *n gradients in export order, *loss the iteration's mean loss
 * (the microbatches' losses summed in order in double, over m). The export_grads of a pipeline's
 * chunks concatenated in virtual-stage order are bitwise equal to *grads, and its loss_sum() / m
 * to *loss, whatever the partition and the schedule (each chunk running its W's in microbatch
 * order). The text is loaded from s->data_path (the built-in text when NULL).
 */
int pps_model_reference(const struct pps_model_spec *s, const char *backend, int m, int iter,
                        float **grads, size_t *n, double *loss, struct pps_err *err);

#endif
