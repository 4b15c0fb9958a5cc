/*
 * model_spec.c - the model's shapes: its defaults and their checks, the partition of blocks over
 * virtual stages, and the layout of a microbatch's activations on a chunk.
 */
#include <ctype.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "model_int.h"

void pps_model_spec_init(struct pps_model_spec *s)
{
    memset(s, 0, sizeof(*s));
    s->layers = 4;
    s->hidden = 64;
    s->mlp_ratio = 4;
    s->seq_len = 32;
    s->micro_batch = 4;
    s->vocab = PPS_MODEL_VOCAB;
    s->ln_eps = 1e-5f;
    s->seed = 1;
    s->data_path = NULL;
    s->adamw.lr = 3e-3f;
    s->adamw.beta1 = 0.9f;
    s->adamw.beta2 = 0.95f;
    s->adamw.eps = 1e-8f;
    s->adamw.weight_decay = 0.01f;
}

/* Bounds that keep every product of sizes (rows * columns of the largest activation, a
 * tensor's floats) far inside int, which the kernels take for shapes. */
#define MAX_ROWS  (1 << 22)
#define MAX_WIDTH (1 << 16)

int pps_model_spec_check(const struct pps_model_spec *s, struct pps_err *err)
{
    if (!s)
        return pps_err_set(err, PPS_EINVAL, "model: no spec");
    if (s->layers < 0 || s->layers > 100000)
        return pps_err_set(err, PPS_EINVAL, "model: layers must be in 0..100000, got %d",
                           s->layers);
    if (s->hidden < 1 || s->hidden > MAX_WIDTH)
        return pps_err_set(err, PPS_EINVAL, "model: hidden must be in 1..%d, got %d", MAX_WIDTH,
                           s->hidden);
    if (s->mlp_ratio < 1 || (long)s->mlp_ratio * s->hidden > MAX_WIDTH)
        return pps_err_set(err, PPS_EINVAL,
                           "model: mlp_ratio must be >= 1 with mlp_ratio * hidden <= %d, got %d",
                           MAX_WIDTH, s->mlp_ratio);
    if (s->seq_len < 1 || s->micro_batch < 1 || (long)s->seq_len * s->micro_batch > MAX_ROWS)
        return pps_err_set(err, PPS_EINVAL,
                           "model: seq_len and micro_batch must be >= 1 with seq_len * micro_batch"
                           " <= %d, got %d and %d",
                           MAX_ROWS, s->seq_len, s->micro_batch);
    if ((long long)s->seq_len * s->micro_batch * s->mlp_ratio * s->hidden > INT_MAX ||
        (long long)s->seq_len * s->micro_batch * PPS_MODEL_VOCAB > INT_MAX)
        return pps_err_set(err, PPS_EINVAL,
                           "model: a microbatch's activations (seq_len * micro_batch * width) "
                           "must stay under 2^31 floats");
    if (s->vocab != PPS_MODEL_VOCAB)
        return pps_err_set(err, PPS_EINVAL, "model: vocab must be %d (bytes), got %d",
                           PPS_MODEL_VOCAB, s->vocab);
    if (!(s->ln_eps > 0))
        return pps_err_set(err, PPS_EINVAL, "model: ln_eps must be > 0, got %g", (double)s->ln_eps);
    if (!(s->adamw.lr >= 0) || !(s->adamw.beta1 >= 0 && s->adamw.beta1 < 1) ||
        !(s->adamw.beta2 >= 0 && s->adamw.beta2 < 1) || !(s->adamw.eps > 0) ||
        !(s->adamw.weight_decay >= 0))
        return pps_err_set(err, PPS_EINVAL,
                           "model: AdamW needs lr >= 0, betas in [0, 1), eps > 0, weight decay "
                           ">= 0; got lr %g, betas %g %g, eps %g, weight decay %g",
                           (double)s->adamw.lr, (double)s->adamw.beta1, (double)s->adamw.beta2,
                           (double)s->adamw.eps, (double)s->adamw.weight_decay);
    return 0;
}

size_t pps_model_param_count(const struct pps_model_spec *s)
{
    size_t h = (size_t)s->hidden, inner = (size_t)s->mlp_ratio * h, v = PPS_MODEL_VOCAB;
    size_t block = 2 * h + h * inner + inner + inner * h + h;
    return v * h + (size_t)s->layers * block + 2 * h + h * v;
}

/* ---- partition ---------------------------------------------------------------------------- */

/* Parses "3, 5,5 ,3" into counts (room for cap); returns how many, or -1 with the reason. */
static int parse_counts(const char *str, long *counts, int cap, struct pps_err *err)
{
    const char *p = str;
    int n = 0;

    for (;;) {
        long v = 0;
        int neg = 0, digits = 0;
        while (*p == ' ')
            p++;
        if (*p == '-')
            neg = 1, p++;
        while (isdigit((unsigned char)*p)) {
            if (v < 1000000000L)
                v = v * 10 + (*p - '0');
            digits++, p++;
        }
        while (*p == ' ')
            p++;
        if (!digits || (*p != ',' && *p != '\0')) {
            pps_err_set(err, PPS_EINVAL,
                        "partition \"%s\": entry %d is not a number (want counts of blocks per "
                        "virtual stage, like \"3,5,5,3\")",
                        str, n + 1);
            return -1;
        }
        if (n < cap)
            counts[n] = neg ? -v : v;
        n++;
        if (*p == '\0')
            return n;
        p++;
    }
}

int pps_model_partition(const struct pps_model_spec *s, int n_vstages, const char *partition,
                        int *first_block, struct pps_err *err)
{
    long *counts = NULL, sum = 0;
    int rc = 0, n;

    if (!s || !first_block || n_vstages < 1)
        return pps_err_set(err, PPS_EINVAL,
                           "partition: need a spec, an output and >= 1 virtual "
                           "stage, got %d",
                           n_vstages);
    if (s->layers < 0)
        return pps_err_set(err, PPS_EINVAL, "partition: layers must be >= 0, got %d", s->layers);

    if (!partition || !*partition) {
        int base = s->layers / n_vstages, extra = s->layers % n_vstages;
        first_block[0] = 0;
        for (int i = 0; i < n_vstages; i++)
            first_block[i + 1] = first_block[i] + base + (i < extra ? 1 : 0);
        return 0;
    }

    counts = malloc((size_t)n_vstages * sizeof(*counts));
    if (!counts)
        return pps_err_set(err, PPS_ENOMEM, "partition: out of memory");
    n = parse_counts(partition, counts, n_vstages, err);
    if (n < 0) {
        rc = PPS_EINVAL;
        goto out;
    }
    if (n != n_vstages) {
        rc = pps_err_set(err, PPS_EINVAL,
                         "partition \"%s\" has %d entries, want one per virtual stage: %d",
                         partition, n, n_vstages);
        goto out;
    }
    for (int i = 0; i < n; i++) {
        if (counts[i] < 0) {
            rc = pps_err_set(err, PPS_EINVAL,
                             "partition \"%s\": virtual stage %d has %ld blocks, must be >= 0",
                             partition, i, counts[i]);
            goto out;
        }
        sum += counts[i];
    }
    if (sum != s->layers) {
        rc = pps_err_set(err, PPS_EINVAL, "partition \"%s\" sums to %ld blocks, the model has %d",
                         partition, sum, s->layers);
        goto out;
    }
    first_block[0] = 0;
    for (int i = 0; i < n; i++)
        first_block[i + 1] = first_block[i] + (int)counts[i];
out:
    free(counts);
    return rc;
}

/* ---- activation layout -------------------------------------------------------------------- */

/* Reserves bytes at the end of an arena of *size bytes, on 64 bytes; returns its offset. */
static size_t take(size_t *size, size_t bytes)
{
    size_t off = *size;
    *size += (bytes + 63) / 64 * 64;
    return off;
}

void pps__model_layout(const struct pps_model_spec *s, int nb, int first, int last,
                       struct pps__model_layout *l)
{
    size_t rows = (size_t)s->seq_len * s->micro_batch, f = sizeof(float);
    size_t act = rows * s->hidden * f, wide = rows * s->hidden * s->mlp_ratio * f;
    size_t vec = rows * f, logits = rows * PPS_MODEL_VOCAB * f, ids = rows * sizeof(int32_t);
    size_t blk;

    memset(l, 0, sizeof(*l));

    /* keep: the block's input (LN's x for B and W), LN's output (W1's x for W), the GELU's output
     * (W2's x for W), LN's statistics (B and W); on the last, the final LN's input and
     * statistics, its output (the head's x for W) and the logits, which B turns into their
     * gradient in place (the head's dy for W). */
    if (first)
        l->k_ids = take(&l->keep, ids);
    blk = 0;
    l->k_x = take(&blk, act);
    l->k_h = take(&blk, act);
    l->k_g = take(&blk, wide);
    l->k_mean = take(&blk, vec);
    l->k_rstd = take(&blk, vec);
    l->k_stride = blk;
    l->k_blk = take(&l->keep, blk * (size_t)nb);
    if (last) {
        l->k_xl = take(&l->keep, act);
        l->k_meanf = take(&l->keep, vec);
        l->k_rstdf = take(&l->keep, vec);
        l->k_z = take(&l->keep, act);
        l->k_logits = take(&l->keep, logits);
    }

    /* tmp: the GELU's input (its backward), the loss's logsumexp and targets. */
    blk = 0;
    l->t_a = take(&blk, wide);
    l->t_stride = blk;
    l->t_blk = take(&l->tmp, blk * (size_t)nb);
    if (last) {
        l->t_lse = take(&l->tmp, vec);
        l->t_targets = take(&l->tmp, ids);
    }

    /* grad: per block its output gradient (W2's dy), the GELU's input gradient (W1's dy) and
     * LN's output gradient (LN's dy); the embedding's output gradient on the first; the final
     * LN's output gradient on the last. A middle chunk's input gradient only passes through. */
    if (first)
        l->g_d0 = take(&l->grad, act);
    blk = 0;
    l->g_dy = take(&blk, act);
    l->g_da = take(&blk, wide);
    l->g_dh = take(&blk, act);
    l->g_stride = blk;
    l->g_blk = take(&l->grad, blk * (size_t)nb);
    if (last)
        l->g_dz = take(&l->grad, act);
}

void pps_model_act_bytes(const struct pps_model_spec *s, int n_blocks, int first, int last,
                         size_t *after_f, size_t *after_b)
{
    struct pps__model_layout l;
    pps__model_layout(s, n_blocks, first, last, &l);
    if (after_f)
        *after_f = l.keep + l.tmp;
    if (after_b)
        *after_b = l.keep + l.grad;
}
