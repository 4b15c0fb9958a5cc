/*
 * model_init.c - the model's parameter tensors and their initial values.
 *
 * Every value is a function of (seed, the tensor's global id, the element's index) alone, drawn
 * with a counter-based generator: no state runs from one tensor to the next, so a block's
 * parameters are bitwise the same whichever chunk, stage or partition holds it.
 *
 *   embedding      uniform in [-1, 1)
 *   w1, w2, head   uniform in [-1/sqrt(fan_in), 1/sqrt(fan_in)) (PyTorch's Linear bound)
 *   b1, b2         0
 *   LN gamma, beta 1, 0
 */
#include <math.h>
#include <stdio.h>

#include "model_int.h"

/* The init's stream of draws, apart from the sampler's. */
#define DOMAIN_INIT 0x696e6974706172ull /* "initpar" */

void pps__model_init_values(uint64_t seed, const struct pps__model_tensor *t, float *out)
{
    for (size_t i = 0; i < t->n; i++) {
        switch (t->init) {
        case PPS__INIT_ONES:
            out[i] = 1.0f;
            break;
        case PPS__INIT_ZEROS:
            out[i] = 0.0f;
            break;
        default: {
            /* 53 random bits to a double in [0, 1), to [-1, 1), scaled; one rounding to float. */
            uint64_t r = pps__model_draw(DOMAIN_INIT, seed, t->id, i, 0);
            double u = (double)(r >> 11) * 0x1.0p-53;
            out[i] = (float)((2.0 * u - 1.0) * (double)t->bound);
            break;
        }
        }
    }
}

/* Appends a tensor at the end of the flat buffer (on 16 floats, 64 bytes). */
static void add(struct pps__model_tensor *tensors, int *n, size_t *n_flat, uint64_t id,
                size_t count, int init, float bound, const char *name)
{
    struct pps__model_tensor *t = &tensors[(*n)++];
    t->id = id;
    t->n = count;
    t->off = *n_flat;
    t->init = init;
    t->bound = bound;
    snprintf(t->name, sizeof(t->name), "%s", name);
    *n_flat += (count + 15) / 16 * 16;
}

int pps__model_tensors(const struct pps_model_spec *s, int b0, int nb, int first, int last,
                       struct pps__model_tensor *tensors, size_t *n_flat)
{
    size_t h = (size_t)s->hidden, inner = (size_t)s->mlp_ratio * h, v = PPS_MODEL_VOCAB;
    float b_in = (float)(1.0 / sqrt((double)h)), b_inner = (float)(1.0 / sqrt((double)inner));
    uint64_t fin = 1 + (uint64_t)PPS__BLK_TENSORS * (uint64_t)s->layers;
    char name[32];
    int n = 0;

    *n_flat = 0;
    if (first)
        add(tensors, &n, n_flat, 0, v * h, PPS__INIT_UNIFORM, 1.0f, "embedding");
    for (int j = 0; j < nb; j++) {
        int b = b0 + j;
        uint64_t id = 1 + (uint64_t)PPS__BLK_TENSORS * (uint64_t)b;
        snprintf(name, sizeof(name), "block %d ln gamma", b);
        add(tensors, &n, n_flat, id + PPS__BLK_LN_G, h, PPS__INIT_ONES, 0, name);
        snprintf(name, sizeof(name), "block %d ln beta", b);
        add(tensors, &n, n_flat, id + PPS__BLK_LN_B, h, PPS__INIT_ZEROS, 0, name);
        snprintf(name, sizeof(name), "block %d w1", b);
        add(tensors, &n, n_flat, id + PPS__BLK_W1, h * inner, PPS__INIT_UNIFORM, b_in, name);
        snprintf(name, sizeof(name), "block %d b1", b);
        add(tensors, &n, n_flat, id + PPS__BLK_B1, inner, PPS__INIT_ZEROS, 0, name);
        snprintf(name, sizeof(name), "block %d w2", b);
        add(tensors, &n, n_flat, id + PPS__BLK_W2, inner * h, PPS__INIT_UNIFORM, b_inner, name);
        snprintf(name, sizeof(name), "block %d b2", b);
        add(tensors, &n, n_flat, id + PPS__BLK_B2, h, PPS__INIT_ZEROS, 0, name);
    }
    if (last) {
        add(tensors, &n, n_flat, fin + PPS__FIN_LN_G, h, PPS__INIT_ONES, 0, "final ln gamma");
        add(tensors, &n, n_flat, fin + PPS__FIN_LN_B, h, PPS__INIT_ZEROS, 0, "final ln beta");
        add(tensors, &n, n_flat, fin + PPS__FIN_HEAD, h * v, PPS__INIT_UNIFORM, b_in, "head");
    }
    return n;
}
