/*
 * test_kernels_grad.c - every backward call against central finite differences of its forward
 * (which checks the formula) and, where the formula is written out, against a double-precision
 * reference with a tight tolerance (which checks the precision); the B/W split against the fused BW
 * (bitwise), accumulation of weight gradients over calls, and a tiny model (embedding, a residual
 * MLP block, final norm, LM head, cross-entropy) whose gradients, computed with B and W apart as a
 * zero-bubble schedule would, match finite differences of its loss.
 *
 * Finite differences: the objective is a scalar in double, L = sum of r[i] * y[i] over a forward's
 * outputs with fixed random weights r (so dL/dy = r), or the loss itself. Each input is moved by
 * +-h as floats and the difference divided by the actual float step. Small shapes keep it cheap.
 * KX_VERBOSE=1 in the environment prints each check's largest error, to size the tolerances
 * (with h = 1e-2, the truncation error dominates and is 10x or more below them).
 */
#include "kernels_fixture.h"
#include "test.h"

#define FD_H 1e-2f

/* sum of r[i] * y[i] in double, y on the device. */
static double dot_r(struct pps_kernels *k, const float *y, const float *r, size_t n)
{
    float *h = kx_fetch(k, y, n);
    double s = 0;
    for (size_t i = 0; i < n; i++)
        s += (double)r[i] * h[i];
    free(h);
    return s;
}

/*
 * Compares the analytic gradient g (n floats) of f with respect to the host array x against
 * central differences; returns how many elements differ by more than abs_tol + rel_tol * |fd|.
 * f reads x (through its ctx) each time it runs; x is restored afterwards.
 */
static int fd_check(const char *what, double (*f)(void *), void *ctx, float *x, size_t n,
                    const float *g, double abs_tol, double rel_tol)
{
    double *num = calloc(n ? n : 1, sizeof(double));
    int bad;
    for (size_t i = 0; i < n; i++) {
        float x0 = x[i], xp = x0 + FD_H, xm = x0 - FD_H;
        double fp, fm;
        x[i] = xp;
        fp = f(ctx);
        x[i] = xm;
        fm = f(ctx);
        x[i] = x0;
        num[i] = (fp - fm) / ((double)xp - (double)xm);
    }
    bad = kx_compare(what, g, num, n, abs_tol, rel_tol);
    if (getenv("KX_VERBOSE")) {
        double worst = 0, big = 0;
        for (size_t i = 0; i < n; i++) {
            if (fabs(g[i] - num[i]) > worst)
                worst = fabs(g[i] - num[i]);
            if (fabs(num[i]) > big)
                big = fabs(num[i]);
        }
        fprintf(stderr, "  %s: max err %.3g, max |grad| %.3g\n", what, worst, big);
    }
    free(num);
    return bad;
}

/* ---- linear ------------------------------------------------------------------------------- */

struct linear_case {
    struct pps_kernels *k;
    int rows, n_in, n_out;
    float *hx, *hw, *hb, *r;   /* host inputs and the objective's weights */
    float *x, *w, *b, *y, *dy; /* device */
};

static void linear_case_init(struct linear_case *c, int rows, int n_in, int n_out)
{
    c->k = kx_open();
    c->rows = rows, c->n_in = n_in, c->n_out = n_out;
    c->hx = kx_random((size_t)rows * n_in, -1, 1);
    c->hw = kx_random((size_t)n_in * n_out, -1, 1);
    c->hb = kx_random(n_out, -1, 1);
    c->r = kx_random((size_t)rows * n_out, -1, 1);
    c->x = kx_put(c->k, c->hx, (size_t)rows * n_in);
    c->w = kx_put(c->k, c->hw, (size_t)n_in * n_out);
    c->b = kx_put(c->k, c->hb, n_out);
    c->y = kx_alloc(c->k, (size_t)rows * n_out);
    c->dy = kx_put(c->k, c->r, (size_t)rows * n_out);
}

static void linear_case_release(struct linear_case *c)
{
    free(c->hx), free(c->hw), free(c->hb), free(c->r);
    pps_kernels_mem_free(c->k, c->x), pps_kernels_mem_free(c->k, c->w);
    pps_kernels_mem_free(c->k, c->b), pps_kernels_mem_free(c->k, c->y);
    pps_kernels_mem_free(c->k, c->dy);
    kx_close(c->k);
}

static double linear_objective(void *ctx)
{
    struct linear_case *c = ctx;
    kx_set(c->k, c->x, c->hx, (size_t)c->rows * c->n_in);
    kx_set(c->k, c->w, c->hw, (size_t)c->n_in * c->n_out);
    kx_set(c->k, c->b, c->hb, c->n_out);
    pps_kernels_linear_forward(c->k, c->rows, c->n_in, c->n_out, c->x, c->w, c->b, c->y);
    return dot_r(c->k, c->y, c->r, (size_t)c->rows * c->n_out);
}

static void test_linear_backward_matches_finite_differences(void)
{
    struct linear_case c;
    float *dx, *dw, *db, *gx, *gw, *gb;

    linear_case_init(&c, 4, 5, 3);
    dx = kx_alloc(c.k, 20), dw = kx_alloc(c.k, 15), db = kx_alloc(c.k, 3);
    CHECK_EQ_INT(pps_kernels_linear_backward_input(c.k, 4, 5, 3, c.w, c.dy, dx), 0);
    CHECK_EQ_INT(pps_kernels_linear_backward_params(c.k, 4, 5, 3, c.x, c.dy, dw, db), 0);
    gx = kx_fetch(c.k, dx, 20), gw = kx_fetch(c.k, dw, 15), gb = kx_fetch(c.k, db, 3);
    CHECK(fd_check("linear dx", linear_objective, &c, c.hx, 20, gx, 1e-3, 1e-3) == 0);
    CHECK(fd_check("linear dw", linear_objective, &c, c.hw, 15, gw, 1e-3, 1e-3) == 0);
    CHECK(fd_check("linear db", linear_objective, &c, c.hb, 3, gb, 1e-3, 1e-3) == 0);
    free(gx), free(gw), free(gb);
    pps_kernels_mem_free(c.k, dx), pps_kernels_mem_free(c.k, dw), pps_kernels_mem_free(c.k, db);
    linear_case_release(&c);
}

static void test_linear_split_equals_fused_bitwise(void)
{
    struct linear_case c;
    int rows = 13, n_in = 37, n_out = 29;
    size_t nx = (size_t)rows * n_in, nw = (size_t)n_in * n_out;
    float *start_w = kx_random(nw, -1, 1), *start_b = kx_random(n_out, -1, 1);
    float *dx[2], *dw[2], *db[2], *h[2][3];

    linear_case_init(&c, rows, n_in, n_out);
    /* Accumulating onto gradients that are not zero, as from earlier microbatches. */
    for (int i = 0; i < 2; i++) {
        dx[i] = kx_alloc(c.k, nx);
        dw[i] = kx_put(c.k, start_w, nw);
        db[i] = kx_put(c.k, start_b, n_out);
    }
    CHECK_EQ_INT(pps_kernels_linear_backward_input(c.k, rows, n_in, n_out, c.w, c.dy, dx[0]), 0);
    CHECK_EQ_INT(
        pps_kernels_linear_backward_params(c.k, rows, n_in, n_out, c.x, c.dy, dw[0], db[0]), 0);
    CHECK_EQ_INT(
        pps_kernels_linear_backward(c.k, rows, n_in, n_out, c.x, c.w, c.dy, dx[1], dw[1], db[1]),
        0);
    for (int i = 0; i < 2; i++) {
        h[i][0] = kx_fetch(c.k, dx[i], nx);
        h[i][1] = kx_fetch(c.k, dw[i], nw);
        h[i][2] = kx_fetch(c.k, db[i], n_out);
    }
    CHECK(kx_same_bits(h[0][0], h[1][0], nx));
    CHECK(kx_same_bits(h[0][1], h[1][1], nw));
    CHECK(kx_same_bits(h[0][2], h[1][2], n_out));
    for (int i = 0; i < 2; i++) {
        free(h[i][0]), free(h[i][1]), free(h[i][2]);
        pps_kernels_mem_free(c.k, dx[i]), pps_kernels_mem_free(c.k, dw[i]);
        pps_kernels_mem_free(c.k, db[i]);
    }
    free(start_w), free(start_b);
    linear_case_release(&c);
}

/* ---- layer normalization ------------------------------------------------------------------ */

struct ln_case {
    struct pps_kernels *k;
    int rows, cols;
    float *hx, *hg, *hb, *r;
    float *x, *g, *b, *y, *mean, *rstd, *dy;
};

static void ln_case_init(struct ln_case *c, int rows, int cols)
{
    size_t n = (size_t)rows * cols;
    c->k = kx_open();
    c->rows = rows, c->cols = cols;
    c->hx = kx_random(n, -2, 2);
    c->hg = kx_random(cols, 0.5f, 1.5f);
    c->hb = kx_random(cols, -0.5f, 0.5f);
    c->r = kx_random(n, -1, 1);
    c->x = kx_put(c->k, c->hx, n);
    c->g = kx_put(c->k, c->hg, cols);
    c->b = kx_put(c->k, c->hb, cols);
    c->y = kx_alloc(c->k, n);
    c->mean = kx_alloc(c->k, rows);
    c->rstd = kx_alloc(c->k, rows);
    c->dy = kx_put(c->k, c->r, n);
    pps_kernels_layernorm_forward(c->k, rows, cols, 1e-5f, c->x, c->g, c->b, c->y, c->mean,
                                  c->rstd);
}

static void ln_case_release(struct ln_case *c)
{
    free(c->hx), free(c->hg), free(c->hb), free(c->r);
    pps_kernels_mem_free(c->k, c->x), pps_kernels_mem_free(c->k, c->g);
    pps_kernels_mem_free(c->k, c->b), pps_kernels_mem_free(c->k, c->y);
    pps_kernels_mem_free(c->k, c->mean), pps_kernels_mem_free(c->k, c->rstd);
    pps_kernels_mem_free(c->k, c->dy);
    kx_close(c->k);
}

static double ln_objective(void *ctx)
{
    struct ln_case *c = ctx;
    size_t n = (size_t)c->rows * c->cols;
    float *y = kx_alloc(c->k, n), *mean = kx_alloc(c->k, c->rows), *rstd = kx_alloc(c->k, c->rows);
    double l;
    kx_set(c->k, c->x, c->hx, n);
    kx_set(c->k, c->g, c->hg, c->cols);
    kx_set(c->k, c->b, c->hb, c->cols);
    pps_kernels_layernorm_forward(c->k, c->rows, c->cols, 1e-5f, c->x, c->g, c->b, y, mean, rstd);
    l = dot_r(c->k, y, c->r, n);
    pps_kernels_mem_free(c->k, y), pps_kernels_mem_free(c->k, mean);
    pps_kernels_mem_free(c->k, rstd);
    return l;
}

static void test_layernorm_backward_matches_finite_differences(void)
{
    struct ln_case c;
    float *dx, *dg, *db, *gx, *gg, *gb;

    ln_case_init(&c, 3, 7);
    dx = kx_alloc(c.k, 21), dg = kx_alloc(c.k, 7), db = kx_alloc(c.k, 7);
    CHECK_EQ_INT(
        pps_kernels_layernorm_backward_input(c.k, 3, 7, c.x, c.mean, c.rstd, c.g, c.dy, dx), 0);
    CHECK_EQ_INT(
        pps_kernels_layernorm_backward_params(c.k, 3, 7, c.x, c.mean, c.rstd, c.dy, dg, db), 0);
    gx = kx_fetch(c.k, dx, 21), gg = kx_fetch(c.k, dg, 7), gb = kx_fetch(c.k, db, 7);
    CHECK(fd_check("layernorm dx", ln_objective, &c, c.hx, 21, gx, 2e-3, 1e-2) == 0);
    CHECK(fd_check("layernorm dgamma", ln_objective, &c, c.hg, 7, gg, 1e-3, 1e-3) == 0);
    CHECK(fd_check("layernorm dbeta", ln_objective, &c, c.hb, 7, gb, 1e-3, 1e-3) == 0);
    free(gx), free(gg), free(gb);
    pps_kernels_mem_free(c.k, dx), pps_kernels_mem_free(c.k, dg), pps_kernels_mem_free(c.k, db);
    ln_case_release(&c);
}

static void test_layernorm_split_equals_fused_bitwise(void)
{
    struct ln_case c;
    int rows = 11, cols = 150; /* several blocks of the column sums */
    size_t n = (size_t)rows * cols;
    float *start = kx_random(cols, -1, 1), *dx[2], *dg[2], *db[2], *h[2][3];

    ln_case_init(&c, rows, cols);
    for (int i = 0; i < 2; i++) {
        dx[i] = kx_alloc(c.k, n);
        dg[i] = kx_put(c.k, start, cols);
        db[i] = kx_put(c.k, start, cols);
    }
    CHECK_EQ_INT(pps_kernels_layernorm_backward_input(c.k, rows, cols, c.x, c.mean, c.rstd, c.g,
                                                      c.dy, dx[0]),
                 0);
    CHECK_EQ_INT(pps_kernels_layernorm_backward_params(c.k, rows, cols, c.x, c.mean, c.rstd, c.dy,
                                                       dg[0], db[0]),
                 0);
    CHECK_EQ_INT(pps_kernels_layernorm_backward(c.k, rows, cols, c.x, c.mean, c.rstd, c.g, c.dy,
                                                dx[1], dg[1], db[1]),
                 0);
    for (int i = 0; i < 2; i++) {
        h[i][0] = kx_fetch(c.k, dx[i], n);
        h[i][1] = kx_fetch(c.k, dg[i], cols);
        h[i][2] = kx_fetch(c.k, db[i], cols);
    }
    CHECK(kx_same_bits(h[0][0], h[1][0], n));
    CHECK(kx_same_bits(h[0][1], h[1][1], cols));
    CHECK(kx_same_bits(h[0][2], h[1][2], cols));
    /* The fused call refuses dx == dy, which B alone allows. */
    CHECK_EQ_INT(pps_kernels_layernorm_backward(c.k, rows, cols, c.x, c.mean, c.rstd, c.g, c.dy,
                                                c.dy, dg[1], db[1]),
                 PPS_EINVAL);
    CHECK_EQ_INT(pps_kernels_sync(c.k, NULL), PPS_EINVAL);
    for (int i = 0; i < 2; i++) {
        free(h[i][0]), free(h[i][1]), free(h[i][2]);
        pps_kernels_mem_free(c.k, dx[i]), pps_kernels_mem_free(c.k, dg[i]);
        pps_kernels_mem_free(c.k, db[i]);
    }
    free(start);
    ln_case_release(&c);
}

static void test_layernorm_input_grad_in_place(void)
{
    struct ln_case c;
    size_t n;
    float *dx, *a, *b;

    ln_case_init(&c, 4, 9);
    n = 36;
    dx = kx_alloc(c.k, n);
    pps_kernels_layernorm_backward_input(c.k, 4, 9, c.x, c.mean, c.rstd, c.g, c.dy, dx);
    pps_kernels_layernorm_backward_input(c.k, 4, 9, c.x, c.mean, c.rstd, c.g, c.dy, c.dy);
    a = kx_fetch(c.k, dx, n), b = kx_fetch(c.k, c.dy, n);
    CHECK(kx_same_bits(a, b, n));
    free(a), free(b);
    pps_kernels_mem_free(c.k, dx);
    ln_case_release(&c);
}

/* ---- GELU, cross-entropy, embedding ------------------------------------------------------- */

struct unary_case {
    struct pps_kernels *k;
    size_t n;
    float *hx, *r, *x, *y;
};

static double gelu_objective(void *ctx)
{
    struct unary_case *c = ctx;
    kx_set(c->k, c->x, c->hx, c->n);
    pps_kernels_gelu_forward(c->k, c->n, c->x, c->y);
    return dot_r(c->k, c->y, c->r, c->n);
}

static void test_gelu_backward_matches_finite_differences(void)
{
    struct unary_case c = {kx_open(), 40, NULL, NULL, NULL, NULL};
    float *dx, *g;

    c.hx = kx_random(c.n, -4, 4), c.r = kx_random(c.n, -1, 1);
    c.x = kx_put(c.k, c.hx, c.n), c.y = kx_alloc(c.k, c.n);
    dx = kx_put(c.k, c.r, c.n);
    /* dx may be dy. */
    CHECK_EQ_INT(pps_kernels_gelu_backward(c.k, c.n, c.x, dx, dx), 0);
    g = kx_fetch(c.k, dx, c.n);
    CHECK(fd_check("gelu dx", gelu_objective, &c, c.hx, c.n, g, 1e-3, 1e-3) == 0);
    free(g), free(c.hx), free(c.r);
    pps_kernels_mem_free(c.k, c.x), pps_kernels_mem_free(c.k, c.y), pps_kernels_mem_free(c.k, dx);
    kx_close(c.k);
}

struct ce_case {
    struct pps_kernels *k;
    int rows, vocab;
    float dloss;
    float *hl, *l, *lse, *loss;
    int32_t *t;
};

static double ce_objective(void *ctx)
{
    struct ce_case *c = ctx;
    float loss;
    kx_set(c->k, c->l, c->hl, (size_t)c->rows * c->vocab);
    pps_kernels_cross_entropy_forward(c->k, c->rows, c->vocab, c->l, c->t, c->lse, c->loss);
    kx_get(c->k, &loss, c->loss, 1);
    return (double)c->dloss * loss;
}

static void test_cross_entropy_backward_matches_finite_differences(void)
{
    struct ce_case c = {kx_open(), 3, 7, 0.7f, NULL, NULL, NULL, NULL, NULL};
    int32_t ht[3] = {2, 6, 2};
    float *dl, *g;

    c.hl = kx_random(21, -2, 2);
    c.l = kx_put(c.k, c.hl, 21), c.lse = kx_alloc(c.k, 3), c.loss = kx_alloc(c.k, 1);
    c.t = kx_put_ids(c.k, ht, 3);
    dl = kx_alloc(c.k, 21);
    ce_objective(&c);
    CHECK_EQ_INT(pps_kernels_cross_entropy_backward(c.k, 3, 7, c.dloss, c.l, c.t, c.lse, dl), 0);
    g = kx_fetch(c.k, dl, 21);
    CHECK(fd_check("cross_entropy dlogits", ce_objective, &c, c.hl, 21, g, 1e-4, 1e-3) == 0);
    /* In place (dlogits is logits) gives the same bits. */
    {
        float *inplace;
        ce_objective(&c);
        pps_kernels_cross_entropy_backward(c.k, 3, 7, c.dloss, c.l, c.t, c.lse, c.l);
        inplace = kx_fetch(c.k, c.l, 21);
        CHECK(kx_same_bits(inplace, g, 21));
        free(inplace);
    }
    free(g), free(c.hl);
    pps_kernels_mem_free(c.k, c.l), pps_kernels_mem_free(c.k, c.lse);
    pps_kernels_mem_free(c.k, c.loss), pps_kernels_mem_free(c.k, c.t);
    pps_kernels_mem_free(c.k, dl);
    kx_close(c.k);
}

struct emb_case {
    struct pps_kernels *k;
    int n, dim, vocab;
    float *ht, *r, *t, *y;
    int32_t *ids;
};

static double emb_objective(void *ctx)
{
    struct emb_case *c = ctx;
    kx_set(c->k, c->t, c->ht, (size_t)c->vocab * c->dim);
    pps_kernels_embedding_forward(c->k, c->n, c->dim, c->vocab, c->ids, c->t, c->y);
    return dot_r(c->k, c->y, c->r, (size_t)c->n * c->dim);
}

static void test_embedding_backward_matches_finite_differences(void)
{
    struct emb_case c = {kx_open(), 6, 4, 5, NULL, NULL, NULL, NULL, NULL};
    int32_t hids[6] = {1, 3, 1, 4, 1, 0}; /* id 1 three times, id 2 never */
    float *dt, *dy, *g;

    c.ht = kx_random(20, -1, 1), c.r = kx_random(24, -1, 1);
    c.t = kx_put(c.k, c.ht, 20), c.y = kx_alloc(c.k, 24), c.ids = kx_put_ids(c.k, hids, 6);
    dt = kx_alloc(c.k, 20), dy = kx_put(c.k, c.r, 24);
    CHECK_EQ_INT(pps_kernels_embedding_backward(c.k, 6, 4, 5, c.ids, dy, dt), 0);
    g = kx_fetch(c.k, dt, 20);
    CHECK(fd_check("embedding dtable", emb_objective, &c, c.ht, 20, g, 1e-4, 1e-4) == 0);
    for (int j = 0; j < 4; j++)
        CHECK(g[2 * 4 + j] == 0.0f);
    free(g), free(c.ht), free(c.r);
    pps_kernels_mem_free(c.k, c.t), pps_kernels_mem_free(c.k, c.y);
    pps_kernels_mem_free(c.k, c.ids), pps_kernels_mem_free(c.k, dt), pps_kernels_mem_free(c.k, dy);
    kx_close(c.k);
}

/* ---- backward calls against double references ------------------------------------------- */

static void test_layernorm_backward_matches_reference(void)
{
    struct ln_case c;
    int rows = 5, cols = 70;
    size_t n = (size_t)rows * cols;
    float *hmean, *hrstd, *dx, *dg, *db, *got;
    double *wdx = calloc(n, sizeof(double)), wdg[70] = {0}, wdb[70] = {0};

    ln_case_init(&c, rows, cols);
    hmean = kx_fetch(c.k, c.mean, rows), hrstd = kx_fetch(c.k, c.rstd, rows);
    for (int r = 0; r < rows; r++) {
        double mg = 0, mgx = 0;
        for (int j = 0; j < cols; j++) {
            double xhat = ((double)c.hx[r * cols + j] - hmean[r]) * hrstd[r];
            double g = (double)c.r[r * cols + j] * c.hg[j];
            mg += g / cols, mgx += g * xhat / cols;
            wdg[j] += c.r[r * cols + j] * xhat;
            wdb[j] += c.r[r * cols + j];
        }
        for (int j = 0; j < cols; j++) {
            double xhat = ((double)c.hx[r * cols + j] - hmean[r]) * hrstd[r];
            double g = (double)c.r[r * cols + j] * c.hg[j];
            wdx[r * cols + j] = hrstd[r] * (g - mg - xhat * mgx);
        }
    }
    dx = kx_alloc(c.k, n), dg = kx_alloc(c.k, cols), db = kx_alloc(c.k, cols);
    CHECK_EQ_INT(
        pps_kernels_layernorm_backward(c.k, rows, cols, c.x, c.mean, c.rstd, c.g, c.dy, dx, dg, db),
        0);
    got = kx_fetch(c.k, dx, n);
    CHECK(kx_compare("layernorm dx", got, wdx, n, 1e-6, 1e-5) == 0);
    free(got);
    got = kx_fetch(c.k, dg, cols);
    CHECK(kx_compare("layernorm dgamma", got, wdg, cols, 1e-6, 1e-6) == 0);
    free(got);
    got = kx_fetch(c.k, db, cols);
    CHECK(kx_compare("layernorm dbeta", got, wdb, cols, 1e-6, 1e-6) == 0);
    free(got), free(hmean), free(hrstd), free(wdx);
    pps_kernels_mem_free(c.k, dx), pps_kernels_mem_free(c.k, dg), pps_kernels_mem_free(c.k, db);
    ln_case_release(&c);
}

static void test_gelu_and_cross_entropy_backward_match_reference(void)
{
    struct pps_kernels *k = kx_open();
    enum { N = 50, R = 3, V = 9 };
    int32_t ht[R] = {8, 0, 4};
    float *hx = kx_random(N, -5, 5), *hdy = kx_random(N, -1, 1), *hl = kx_random(R * V, -4, 4);
    float *x = kx_put(k, hx, N), *dy = kx_put(k, hdy, N), *dx = kx_alloc(k, N);
    float *l = kx_put(k, hl, R * V), *lse = kx_alloc(k, R), *loss = kx_alloc(k, 1);
    float *dl = kx_alloc(k, R * V), *got;
    int32_t *t = kx_put_ids(k, ht, R);
    double want[R * V > N ? R * V : N];

    /* GELU: dy * d/dx of x/2 (1 + tanh(s (x + c x^3))), in double. */
    for (int i = 0; i < N; i++) {
        double v = hx[i], s = 0.7978845608028654, th = tanh(s * (v + 0.044715 * v * v * v));
        double d = 0.5 * (1 + th) + 0.5 * v * (1 - th * th) * s * (1 + 3 * 0.044715 * v * v);
        want[i] = hdy[i] * d;
    }
    CHECK_EQ_INT(pps_kernels_gelu_backward(k, N, x, dy, dx), 0);
    got = kx_fetch(k, dx, N);
    CHECK(kx_compare("gelu dx", got, want, N, 1e-6, 1e-5) == 0);
    free(got);

    /* Cross-entropy: dloss / rows * (softmax - onehot), in double. */
    for (int r = 0; r < R; r++) {
        double z = 0;
        for (int j = 0; j < V; j++)
            z += exp(hl[r * V + j]);
        for (int j = 0; j < V; j++)
            want[r * V + j] = 0.3 / R * (exp(hl[r * V + j]) / z - (j == ht[r]));
    }
    CHECK_EQ_INT(pps_kernels_cross_entropy_forward(k, R, V, l, t, lse, loss), 0);
    CHECK_EQ_INT(pps_kernels_cross_entropy_backward(k, R, V, 0.3f, l, t, lse, dl), 0);
    got = kx_fetch(k, dl, R * V);
    CHECK(kx_compare("cross_entropy dlogits", got, want, R * V, 1e-7, 1e-5) == 0);
    free(got), free(hx), free(hdy), free(hl);
    pps_kernels_mem_free(k, x), pps_kernels_mem_free(k, dy), pps_kernels_mem_free(k, dx);
    pps_kernels_mem_free(k, l), pps_kernels_mem_free(k, lse), pps_kernels_mem_free(k, loss);
    pps_kernels_mem_free(k, dl), pps_kernels_mem_free(k, t);
    kx_close(k);
}

/* ---- accumulation over microbatches ------------------------------------------------------- */

static void test_weight_grads_accumulate_over_calls(void)
{
    struct pps_kernels *k = kx_open();
    enum { R = 6, I = 5, O = 4, V = 3 };
    float *hx = kx_random(R * I, -1, 1), *hd1 = kx_random(R * O, -1, 1);
    float *hd2 = kx_random(R * O, -1, 1);
    float *x = kx_put(k, hx, R * I), *d1 = kx_put(k, hd1, R * O), *d2 = kx_put(k, hd2, R * O);
    float *dw = kx_alloc(k, I * O), *db = kx_alloc(k, O), *once = kx_alloc(k, I * O);
    float *dg = kx_alloc(k, O), *dbeta = kx_alloc(k, O), *dt = kx_alloc(k, V * O);
    float *mean = kx_alloc(k, R), *rstd = kx_alloc(k, R), *y = kx_alloc(k, R * O);
    float *gw, *gb, *g1, *gt;
    int32_t hids[R] = {0, 2, 2, 1, 0, 2}, *ids = kx_put_ids(k, hids, R);
    double ww[I * O] = {0}, wb[O] = {0}, wt[V * O] = {0};

    /* Linear: dw and db after two microbatches are the sums of both contributions. */
    for (int m = 0; m < 2; m++) {
        const float *hd = m ? hd2 : hd1;
        for (int r = 0; r < R; r++)
            for (int o = 0; o < O; o++) {
                for (int i = 0; i < I; i++)
                    ww[i * O + o] += (double)hx[r * I + i] * hd[r * O + o];
                wb[o] += hd[r * O + o];
                wt[hids[r] * O + o] += hd[r * O + o];
            }
        CHECK_EQ_INT(pps_kernels_linear_backward_params(k, R, I, O, x, m ? d2 : d1, dw, db), 0);
        CHECK_EQ_INT(pps_kernels_embedding_backward(k, R, O, V, ids, m ? d2 : d1, dt), 0);
    }
    gw = kx_fetch(k, dw, I * O), gb = kx_fetch(k, db, O), gt = kx_fetch(k, dt, V * O);
    CHECK(kx_compare("dw over two calls", gw, ww, I * O, 1e-5, 1e-5) == 0);
    CHECK(kx_compare("db over two calls", gb, wb, O, 1e-5, 1e-5) == 0);
    CHECK(kx_compare("dtable over two calls", gt, wt, V * O, 1e-5, 1e-5) == 0);

    /* One call into zeros gives its contribution exactly (0 + x == x). */
    CHECK_EQ_INT(pps_kernels_linear_backward_params(k, R, I, O, x, d1, once, NULL), 0);
    g1 = kx_fetch(k, once, I * O);
    for (int i = 0; i < I * O; i++)
        ww[i] = 0;
    for (int r = 0; r < R; r++)
        for (int o = 0; o < O; o++)
            for (int i = 0; i < I; i++)
                ww[i * O + o] += (double)hx[r * I + i] * hd1[r * O + o];
    CHECK(kx_compare("dw one call", g1, ww, I * O, 1e-5, 1e-5) == 0);

    /* Layernorm: dgamma, dbeta over two calls, as the sum of two single calls. */
    {
        float *ln_x = kx_put(k, hd1, R * O), *gamma = kx_put(k, hd2, O), *beta = kx_put(k, hd1, O);
        float *g2 = kx_alloc(k, O), *b2 = kx_alloc(k, O), s1[O], s2[O], t1[O], t2[O];
        double wg[O], wbeta[O];
        pps_kernels_layernorm_forward(k, R, O, 1e-5f, ln_x, gamma, beta, y, mean, rstd);
        pps_kernels_layernorm_backward_params(k, R, O, ln_x, mean, rstd, d1, g2, b2);
        kx_get(k, s1, g2, O), kx_get(k, t1, b2, O);
        pps_kernels_zero(k, g2, O * sizeof(float)), pps_kernels_zero(k, b2, O * sizeof(float));
        pps_kernels_layernorm_backward_params(k, R, O, ln_x, mean, rstd, d2, g2, b2);
        kx_get(k, s2, g2, O), kx_get(k, t2, b2, O);
        pps_kernels_layernorm_backward_params(k, R, O, ln_x, mean, rstd, d1, dg, dbeta);
        pps_kernels_layernorm_backward_params(k, R, O, ln_x, mean, rstd, d2, dg, dbeta);
        for (int o = 0; o < O; o++)
            wg[o] = (double)s1[o] + s2[o], wbeta[o] = (double)t1[o] + t2[o];
        free(gb);
        gb = kx_fetch(k, dg, O);
        CHECK(kx_compare("dgamma over two calls", gb, wg, O, 1e-6, 1e-6) == 0);
        free(gb);
        gb = kx_fetch(k, dbeta, O);
        CHECK(kx_compare("dbeta over two calls", gb, wbeta, O, 1e-6, 1e-6) == 0);
        pps_kernels_mem_free(k, ln_x), pps_kernels_mem_free(k, gamma);
        pps_kernels_mem_free(k, beta), pps_kernels_mem_free(k, g2), pps_kernels_mem_free(k, b2);
    }

    free(hx), free(hd1), free(hd2), free(gw), free(gb), free(g1), free(gt);
    pps_kernels_mem_free(k, x), pps_kernels_mem_free(k, d1), pps_kernels_mem_free(k, d2);
    pps_kernels_mem_free(k, dw), pps_kernels_mem_free(k, db), pps_kernels_mem_free(k, once);
    pps_kernels_mem_free(k, dg), pps_kernels_mem_free(k, dbeta), pps_kernels_mem_free(k, dt);
    pps_kernels_mem_free(k, mean), pps_kernels_mem_free(k, rstd), pps_kernels_mem_free(k, y);
    pps_kernels_mem_free(k, ids);
    kx_close(k);
}

/* ---- a tiny model, end to end ------------------------------------------------------------- */

/*
 * Tokens -> embedding -> x0; h = LN1(x0); u = h W1 + c1; a = gelu(u); v = a W2 + c2;
 * x1 = x0 + v; hf = LNf(x1); logits = hf Wh; loss = CE(logits, targets). All parameters live in
 * one flat buffer (and their gradients in another), sliced by offset, as a runtime keeps them.
 */
enum { TM_T = 4, TM_V = 5, TM_D = 6, TM_H = 8 };
enum {
    TM_E = 0,
    TM_G1 = TM_E + TM_V * TM_D,
    TM_B1 = TM_G1 + TM_D,
    TM_W1 = TM_B1 + TM_D,
    TM_C1 = TM_W1 + TM_D * TM_H,
    TM_W2 = TM_C1 + TM_H,
    TM_C2 = TM_W2 + TM_H * TM_D,
    TM_GF = TM_C2 + TM_D,
    TM_BF = TM_GF + TM_D,
    TM_WH = TM_BF + TM_D,
    TM_NPARAM = TM_WH + TM_D * TM_V,
};

struct tiny_model {
    struct pps_kernels *k;
    float hp[TM_NPARAM];
    float *p, *g; /* device parameters and gradients */
    int32_t *ids, *targets;
    /* activations kept by F for B and W */
    float *x0, *h, *m1, *r1, *u, *a, *x1, *hf, *mf, *rf, *logits, *lse, *loss;
    /* gradients of activations, kept by B for W */
    float *dlogits, *dhf, *dx1, *da, *du, *dh, *dx0, *tmp;
};

static void tiny_init(struct tiny_model *t)
{
    static const int32_t ids[TM_T] = {1, 4, 1, 0}, targets[TM_T] = {4, 1, 0, 3};
    struct pps_kernels *k = kx_open();
    t->k = k;
    for (int i = 0; i < TM_NPARAM; i++)
        t->hp[i] = kx_uniform(-0.8f, 0.8f);
    for (int i = 0; i < TM_D; i++)
        t->hp[TM_G1 + i] += 1.0f, t->hp[TM_GF + i] += 1.0f;
    t->p = kx_put(k, t->hp, TM_NPARAM);
    t->g = kx_alloc(k, TM_NPARAM);
    t->ids = kx_put_ids(k, ids, TM_T), t->targets = kx_put_ids(k, targets, TM_T);
    t->x0 = kx_alloc(k, TM_T * TM_D), t->h = kx_alloc(k, TM_T * TM_D);
    t->m1 = kx_alloc(k, TM_T), t->r1 = kx_alloc(k, TM_T);
    t->u = kx_alloc(k, TM_T * TM_H), t->a = kx_alloc(k, TM_T * TM_H);
    t->x1 = kx_alloc(k, TM_T * TM_D), t->hf = kx_alloc(k, TM_T * TM_D);
    t->mf = kx_alloc(k, TM_T), t->rf = kx_alloc(k, TM_T);
    t->logits = kx_alloc(k, TM_T * TM_V), t->lse = kx_alloc(k, TM_T), t->loss = kx_alloc(k, 1);
    t->dlogits = kx_alloc(k, TM_T * TM_V), t->dhf = kx_alloc(k, TM_T * TM_D);
    t->dx1 = kx_alloc(k, TM_T * TM_D), t->da = kx_alloc(k, TM_T * TM_H);
    t->du = kx_alloc(k, TM_T * TM_H), t->dh = kx_alloc(k, TM_T * TM_D);
    t->dx0 = kx_alloc(k, TM_T * TM_D), t->tmp = kx_alloc(k, TM_T * TM_D);
}

static void tiny_release(struct tiny_model *t)
{
    float *bufs[] = {t->p,   t->g,   t->x0, t->h,  t->m1,     t->r1,  t->u,    t->a,
                     t->x1,  t->hf,  t->mf, t->rf, t->logits, t->lse, t->loss, t->dlogits,
                     t->dhf, t->dx1, t->da, t->du, t->dh,     t->dx0, t->tmp};
    for (size_t i = 0; i < sizeof(bufs) / sizeof(bufs[0]); i++)
        pps_kernels_mem_free(t->k, bufs[i]);
    pps_kernels_mem_free(t->k, t->ids), pps_kernels_mem_free(t->k, t->targets);
    kx_close(t->k);
}

/* F through the whole model; returns the loss. */
static double tiny_forward(void *ctx)
{
    struct tiny_model *t = ctx;
    struct pps_kernels *k = t->k;
    float *p = t->p, loss;

    kx_set(k, p, t->hp, TM_NPARAM);
    pps_kernels_embedding_forward(k, TM_T, TM_D, TM_V, t->ids, p + TM_E, t->x0);
    pps_kernels_layernorm_forward(k, TM_T, TM_D, 1e-5f, t->x0, p + TM_G1, p + TM_B1, t->h, t->m1,
                                  t->r1);
    pps_kernels_linear_forward(k, TM_T, TM_D, TM_H, t->h, p + TM_W1, p + TM_C1, t->u);
    pps_kernels_gelu_forward(k, TM_T * TM_H, t->u, t->a);
    pps_kernels_linear_forward(k, TM_T, TM_H, TM_D, t->a, p + TM_W2, p + TM_C2, t->x1);
    pps_kernels_add(k, TM_T * TM_D, t->x0, t->x1, t->x1);
    pps_kernels_layernorm_forward(k, TM_T, TM_D, 1e-5f, t->x1, p + TM_GF, p + TM_BF, t->hf, t->mf,
                                  t->rf);
    pps_kernels_linear_forward(k, TM_T, TM_D, TM_V, t->hf, p + TM_WH, NULL, t->logits);
    pps_kernels_cross_entropy_forward(k, TM_T, TM_V, t->logits, t->targets, t->lse, t->loss);
    kx_get(k, &loss, t->loss, 1);
    return loss;
}

/* Every B first (down to the embedding), then every W, as a zero-bubble schedule splits them. */
static void tiny_backward_split(struct tiny_model *t)
{
    struct pps_kernels *k = t->k;
    const float *p = t->p;
    float *g = t->g;

    /* B */
    pps_kernels_cross_entropy_backward(k, TM_T, TM_V, 1.0f, t->logits, t->targets, t->lse,
                                       t->dlogits);
    pps_kernels_linear_backward_input(k, TM_T, TM_D, TM_V, p + TM_WH, t->dlogits, t->dhf);
    pps_kernels_layernorm_backward_input(k, TM_T, TM_D, t->x1, t->mf, t->rf, p + TM_GF, t->dhf,
                                         t->dx1);
    pps_kernels_linear_backward_input(k, TM_T, TM_H, TM_D, p + TM_W2, t->dx1, t->da);
    pps_kernels_gelu_backward(k, TM_T * TM_H, t->u, t->da, t->du);
    pps_kernels_linear_backward_input(k, TM_T, TM_D, TM_H, p + TM_W1, t->du, t->dh);
    pps_kernels_layernorm_backward_input(k, TM_T, TM_D, t->x0, t->m1, t->r1, p + TM_G1, t->dh,
                                         t->tmp);
    pps_kernels_add(k, TM_T * TM_D, t->dx1, t->tmp, t->dx0); /* the residual's two paths */

    /* W, from what F kept and the output gradients B kept */
    pps_kernels_linear_backward_params(k, TM_T, TM_D, TM_V, t->hf, t->dlogits, g + TM_WH, NULL);
    pps_kernels_layernorm_backward_params(k, TM_T, TM_D, t->x1, t->mf, t->rf, t->dhf, g + TM_GF,
                                          g + TM_BF);
    pps_kernels_linear_backward_params(k, TM_T, TM_H, TM_D, t->a, t->dx1, g + TM_W2, g + TM_C2);
    pps_kernels_linear_backward_params(k, TM_T, TM_D, TM_H, t->h, t->du, g + TM_W1, g + TM_C1);
    pps_kernels_layernorm_backward_params(k, TM_T, TM_D, t->x0, t->m1, t->r1, t->dh, g + TM_G1,
                                          g + TM_B1);
    pps_kernels_embedding_backward(k, TM_T, TM_D, TM_V, t->ids, t->dx0, g + TM_E);
}

static void test_tiny_model_gradients_match_finite_differences(void)
{
    static const struct {
        const char *name;
        int off, n;
    } params[] = {
        {"embedding", TM_E, TM_V * TM_D},
        {"ln1 gamma", TM_G1, TM_D},
        {"ln1 beta", TM_B1, TM_D},
        {"w1", TM_W1, TM_D * TM_H},
        {"c1", TM_C1, TM_H},
        {"w2", TM_W2, TM_H * TM_D},
        {"c2", TM_C2, TM_D},
        {"lnf gamma", TM_GF, TM_D},
        {"lnf beta", TM_BF, TM_D},
        {"head", TM_WH, TM_D * TM_V},
    };
    struct tiny_model t;
    float *grad;
    double loss;

    tiny_init(&t);
    loss = tiny_forward(&t);
    CHECK(loss > 0 && isfinite(loss));
    tiny_backward_split(&t);
    grad = kx_fetch(t.k, t.g, TM_NPARAM);
    for (size_t i = 0; i < sizeof(params) / sizeof(params[0]); i++)
        CHECK(fd_check(params[i].name, tiny_forward, &t, t.hp + params[i].off, params[i].n,
                       grad + params[i].off, 2e-3, 1e-2) == 0);
    free(grad);
    tiny_release(&t);
}

static const struct test_case cases[] = {
    TEST(test_linear_backward_matches_finite_differences),
    TEST(test_linear_split_equals_fused_bitwise),
    TEST(test_layernorm_backward_matches_finite_differences),
    TEST(test_layernorm_split_equals_fused_bitwise),
    TEST(test_layernorm_input_grad_in_place),
    TEST(test_gelu_backward_matches_finite_differences),
    TEST(test_cross_entropy_backward_matches_finite_differences),
    TEST(test_embedding_backward_matches_finite_differences),
    TEST(test_layernorm_backward_matches_reference),
    TEST(test_gelu_and_cross_entropy_backward_match_reference),
    TEST(test_weight_grads_accumulate_over_calls),
    TEST(test_tiny_model_gradients_match_finite_differences),
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    kx_backend_or_skip_all(NULL);
    return test_main(cases, argc, argv);
}
