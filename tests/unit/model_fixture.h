/*
 * model_fixture.h - what the model tests share: small specs, the text, building every chunk of a
 * pipeline, and running an iteration through them by hand in one thread (activations and
 * gradients passed with memcpy, as a transport would), in the orders schedules use.
 * Include after test.h.
 */
#ifndef PPS_MODEL_FIXTURE_H
#define PPS_MODEL_FIXTURE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"
#include "test.h"

static inline void mx_die(const char *what, const struct pps_err *err)
{
    fprintf(stderr, "%s: %s\n", what, err ? err->msg : "failed");
    exit(1);
}

/* A model small enough for valgrind: L blocks of width 16, 2 sequences of 8 bytes. */
static inline struct pps_model_spec mx_small_spec(int layers)
{
    struct pps_model_spec s;
    pps_model_spec_init(&s);
    s.layers = layers;
    s.hidden = 16;
    s.seq_len = 8;
    s.micro_batch = 2;
    s.seed = 42;
    return s;
}

static inline struct pps_model_data *mx_data(const struct pps_model_spec *s)
{
    struct pps_model_data *d = NULL;
    struct pps_err err = {0};
    /* The default text is built in: failing to load it is a failure, never a skip. */
    if (pps_model_data_new(s, &d, &err) < 0)
        mx_die("pps_model_data_new", &err);
    return d;
}

/* The p * v chunks of a pipeline, indexed by virtual stage. */
struct mx_pipe {
    int p, v, m, n;
    int first_block[64];
    struct pps_compute *chunk[64];
    float *act[64][16];  /* act[vs][mb]: the output of vs (the input of vs + 1) */
    float *grad[64][16]; /* grad[vs][mb]: the input gradient of vs (the output's of vs - 1) */
};

static inline void mx_pipe_open(struct mx_pipe *pp, const struct pps_model_spec *s,
                                const struct pps_model_data *d, int p, int v, int m,
                                const char *partition)
{
    struct pps_err err = {0};
    memset(pp, 0, sizeof(*pp));
    pp->p = p, pp->v = v, pp->m = m, pp->n = p * v;
    if (pps_model_partition(s, pp->n, partition, pp->first_block, &err) < 0)
        mx_die("pps_model_partition", &err);
    for (int vs = 0; vs < pp->n; vs++) {
        if (pps_model_compute_new(s, "cpu", p, v, PPS_PLACE_LOOP, m, vs % p, vs / p, pp->first_block, d,
                                  &pp->chunk[vs], &err) < 0)
            mx_die("pps_model_compute_new", &err);
        for (int mb = 0; mb < m; mb++) {
            size_t n = pp->chunk[vs]->ops->act_floats(pp->chunk[vs]);
            pp->act[vs][mb] = calloc(n, sizeof(float));
            pp->grad[vs][mb] = calloc(n, sizeof(float));
        }
    }
}

static inline void mx_pipe_close(struct mx_pipe *pp)
{
    for (int vs = 0; vs < pp->n; vs++) {
        pp->chunk[vs]->ops->free(pp->chunk[vs]);
        for (int mb = 0; mb < pp->m; mb++)
            free(pp->act[vs][mb]), free(pp->grad[vs][mb]);
    }
}

enum mx_order {
    MX_FUSED,       /* BW per microbatch (GPipe, 1F1B) */
    MX_ALL_B_FIRST, /* every B, then every W (the most W's pending) */
    MX_ZB,          /* W of microbatch mb - 1 right after B of mb, as ZB-H1 fills its bubbles */
};

static inline void mx_w(struct mx_pipe *pp, int vs, int iter, int mb)
{
    struct pps_err err = {0};
    struct pps_compute *c = pp->chunk[vs];
    if (c->ops->backward_w(c, iter, mb, &err) < 0)
        mx_die("backward_w", &err);
}

/* One iteration: zero the gradients, every forward (microbatch by microbatch, stage by stage),
 * then the backwards in the given order; W's run in microbatch order on each chunk. */
static inline void mx_pipe_iteration(struct mx_pipe *pp, int iter, enum mx_order order)
{
    struct pps_err err = {0};
    int n = pp->n;

    for (int vs = 0; vs < n; vs++)
        if (pp->chunk[vs]->ops->zero_grads(pp->chunk[vs], &err) < 0)
            mx_die("zero_grads", &err);
    for (int mb = 0; mb < pp->m; mb++)
        for (int vs = 0; vs < n; vs++) {
            struct pps_compute *c = pp->chunk[vs];
            const float *in = vs > 0 ? pp->act[vs - 1][mb] : NULL;
            float *out = vs < n - 1 ? pp->act[vs][mb] : NULL;
            if (c->ops->forward(c, iter, mb, in, out, &err) < 0)
                mx_die("forward", &err);
        }
    for (int mb = 0; mb < pp->m; mb++)
        for (int vs = n - 1; vs >= 0; vs--) {
            struct pps_compute *c = pp->chunk[vs];
            const float *dy = vs < n - 1 ? pp->grad[vs + 1][mb] : NULL;
            float *dx = vs > 0 ? pp->grad[vs][mb] : NULL;
            int rc = order == MX_FUSED ? c->ops->backward_bw(c, iter, mb, dy, dx, &err)
                                       : c->ops->backward_b(c, iter, mb, dy, dx, &err);
            if (rc < 0)
                mx_die("backward", &err);
            if (order == MX_ZB && mb > 0)
                mx_w(pp, vs, iter, mb - 1);
        }
    if (order == MX_ZB)
        for (int vs = 0; vs < n; vs++)
            mx_w(pp, vs, iter, pp->m - 1);
    if (order == MX_ALL_B_FIRST)
        for (int vs = 0; vs < n; vs++)
            for (int mb = 0; mb < pp->m; mb++)
                mx_w(pp, vs, iter, mb);
}

/* Every chunk's export (grads or params) concatenated in virtual-stage order; malloc'd. */
static inline float *mx_pipe_export(struct mx_pipe *pp, int grads, size_t *n_out)
{
    struct pps_err err = {0};
    size_t total = 0, pos = 0, n;
    float *buf;

    for (int vs = 0; vs < pp->n; vs++) {
        struct pps_compute *c = pp->chunk[vs];
        if ((grads ? c->ops->export_grads(c, NULL, &n, &err)
                   : c->ops->export_params(c, NULL, &n, &err)) < 0)
            mx_die("export", &err);
        total += n;
    }
    buf = malloc((total ? total : 1) * sizeof(float));
    for (int vs = 0; vs < pp->n; vs++) {
        struct pps_compute *c = pp->chunk[vs];
        if ((grads ? c->ops->export_grads(c, buf + pos, &n, &err)
                   : c->ops->export_params(c, buf + pos, &n, &err)) < 0)
            mx_die("export", &err);
        pos += n;
    }
    *n_out = total;
    return buf;
}

#endif
