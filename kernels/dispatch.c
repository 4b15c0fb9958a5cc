/*
 * dispatch.c - the public calls of kernels.h: check the arguments the same way for every backend,
 * skip empty work, then call the backend's table.
 *
 * A backend never sees a negative size, a NULL operand or n == 0; its functions stay the math.
 */
#include <stdint.h>

#include "kernels_int.h"

/* Fails with "op: what must be >= 0, got v" when v < 0. */
static int need_count(struct pps_kernels *k, const char *op, const char *what, long v)
{
    if (v < 0)
        return pps__kernels_fail(k, PPS_EINVAL, "%s: %s must be >= 0, got %ld", op, what, v);
    return 0;
}

/* Fails with "op: what is NULL" when p is NULL. */
static int need_ptr(struct pps_kernels *k, const char *op, const char *what, const void *p)
{
    if (!p)
        return pps__kernels_fail(k, PPS_EINVAL, "%s: %s is NULL", op, what);
    return 0;
}

/* A pointer argument: its name in messages, and its value. */
struct ptr_arg {
    const char *what;
    const void *p;
};

/* need_ptr() on each of the n arguments in turn: the first NULL one fails. */
static int need_ptrs(struct pps_kernels *k, const char *op, const struct ptr_arg *args, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        int rc = need_ptr(k, op, args[i].what, args[i].p);
        if (rc)
            return rc;
    }
    return 0;
}

/* need_ptrs() on the arguments listed: NEED_PTRS(k, op, {"x", x}, {"y", y}). */
#define NEED_PTRS(k, op, ...)                                                                      \
    need_ptrs((k), (op), (const struct ptr_arg[]){__VA_ARGS__},                                    \
              sizeof((const struct ptr_arg[]){__VA_ARGS__}) / sizeof(struct ptr_arg))

/* Whether the n floats at a overlap the n_b floats at b. */
static int overlaps(const float *a, size_t n_a, const float *b, size_t n_b)
{
    uintptr_t a0 = (uintptr_t)a, a1 = a0 + n_a * sizeof(float);
    uintptr_t b0 = (uintptr_t)b, b1 = b0 + n_b * sizeof(float);
    return n_a && n_b && a0 < b1 && b0 < a1;
}

#define TRY(expr)                                                                                  \
    do {                                                                                           \
        int rc_ = (expr);                                                                          \
        if (rc_ < 0)                                                                               \
            return rc_;                                                                            \
    } while (0)

/* For the check_...() helpers that return 1 when there is work: returns their error, or 0 when
 * the call has nothing to do. */
#define TRY_WORK(expr)                                                                             \
    do {                                                                                           \
        int rc_ = (expr);                                                                          \
        if (rc_ <= 0)                                                                              \
            return rc_;                                                                            \
    } while (0)

/* ---- memory ------------------------------------------------------------------------------- */

int pps_kernels_mem_alloc(struct pps_kernels *k, size_t bytes, void **out)
{
    TRY(need_ptr(k, "mem_alloc", "out", out));
    *out = NULL;
    return k->ops->mem_alloc(k, bytes, out);
}

void pps_kernels_mem_free(struct pps_kernels *k, void *p)
{
    if (p)
        k->ops->mem_free(k, p);
}

static int check_copy(struct pps_kernels *k, const char *op, void *dst, const void *src,
                      size_t bytes)
{
    if (bytes == 0)
        return 0;
    TRY(NEED_PTRS(k, op, {"dst", dst}, {"src", src}));
    return 1;
}

int pps_kernels_copy_in(struct pps_kernels *k, void *dst, const void *src, size_t bytes)
{
    int rc = check_copy(k, "copy_in", dst, src, bytes);
    return rc <= 0 ? rc : k->ops->copy_in(k, dst, src, bytes);
}

int pps_kernels_copy_out(struct pps_kernels *k, void *dst, const void *src, size_t bytes)
{
    int rc = check_copy(k, "copy_out", dst, src, bytes);
    return rc <= 0 ? rc : k->ops->copy_out(k, dst, src, bytes);
}

int pps_kernels_copy(struct pps_kernels *k, void *dst, const void *src, size_t bytes)
{
    int rc = check_copy(k, "copy", dst, src, bytes);
    return rc <= 0 ? rc : k->ops->copy(k, dst, src, bytes);
}

int pps_kernels_zero(struct pps_kernels *k, void *dst, size_t bytes)
{
    if (bytes == 0)
        return 0;
    TRY(need_ptr(k, "zero", "dst", dst));
    return k->ops->zero(k, dst, bytes);
}

/* ---- dense layers ------------------------------------------------------------------------- */

int pps_kernels_gemm(struct pps_kernels *k, int trans_a, int trans_b, int m, int n, int kdim,
                     float alpha, const float *a, const float *b, float beta, float *c)
{
    size_t na = (size_t)m * (size_t)kdim, nb = (size_t)kdim * (size_t)n, nc = (size_t)m * n;

    TRY(need_count(k, "gemm", "m", m));
    TRY(need_count(k, "gemm", "n", n));
    TRY(need_count(k, "gemm", "kdim", kdim));
    if (nc == 0)
        return 0;
    TRY(need_ptr(k, "gemm", "C", c));
    if (kdim > 0) {
        TRY(NEED_PTRS(k, "gemm", {"A", a}, {"B", b}));
    }
    if (overlaps(c, nc, a, na) || overlaps(c, nc, b, nb))
        return pps__kernels_fail(k, PPS_EINVAL, "gemm: C overlaps %s",
                                 overlaps(c, nc, a, na) ? "A" : "B");
    return k->ops->gemm(k, trans_a != 0, trans_b != 0, m, n, kdim, alpha, a, b, beta, c);
}

/* Checks rows and cols; returns 1 when there is work, 0 when empty, or the error. */
static int check_matrix(struct pps_kernels *k, const char *op, int rows, int cols)
{
    TRY(need_count(k, op, "rows", rows));
    TRY(need_count(k, op, "cols", cols));
    return rows > 0 && cols > 0;
}

int pps_kernels_bias_add(struct pps_kernels *k, int rows, int cols, const float *bias, float *y)
{
    TRY_WORK(check_matrix(k, "bias_add", rows, cols));
    TRY(NEED_PTRS(k, "bias_add", {"bias", bias}, {"y", y}));
    return k->ops->bias_add(k, rows, cols, bias, y);
}

int pps_kernels_bias_grad(struct pps_kernels *k, int rows, int cols, const float *dy, float *dbias)
{
    TRY_WORK(check_matrix(k, "bias_grad", rows, cols));
    TRY(NEED_PTRS(k, "bias_grad", {"dy", dy}, {"dbias", dbias}));
    return k->ops->bias_grad(k, rows, cols, dy, dbias);
}

/* ---- layer normalization ------------------------------------------------------------------ */

/* What every layernorm call checks: the shape and the saved statistics. */
static int check_layernorm(struct pps_kernels *k, const char *op, int rows, int cols,
                           const float *x, const float *mean, const float *rstd)
{
    TRY_WORK(check_matrix(k, op, rows, cols));
    TRY(NEED_PTRS(k, op, {"x", x}, {"mean", mean}, {"rstd", rstd}));
    return 1;
}

int pps_kernels_layernorm_forward(struct pps_kernels *k, int rows, int cols, float eps,
                                  const float *x, const float *gamma, const float *beta, float *y,
                                  float *mean, float *rstd)
{
    TRY_WORK(check_layernorm(k, "layernorm_forward", rows, cols, x, mean, rstd));
    if (!(eps > 0))
        return pps__kernels_fail(k, PPS_EINVAL, "layernorm_forward: eps must be > 0, got %g",
                                 (double)eps);
    TRY(NEED_PTRS(k, "layernorm_forward", {"gamma", gamma}, {"beta", beta}, {"y", y}));
    return k->ops->layernorm_forward(k, rows, cols, eps, x, gamma, beta, y, mean, rstd);
}

int pps_kernels_layernorm_backward_input(struct pps_kernels *k, int rows, int cols, const float *x,
                                         const float *mean, const float *rstd, const float *gamma,
                                         const float *dy, float *dx)
{
    const char *op = "layernorm_backward_input";
    TRY_WORK(check_layernorm(k, op, rows, cols, x, mean, rstd));
    TRY(NEED_PTRS(k, op, {"gamma", gamma}, {"dy", dy}, {"dx", dx}));
    return k->ops->layernorm_backward_input(k, rows, cols, x, mean, rstd, gamma, dy, dx);
}

int pps_kernels_layernorm_backward_params(struct pps_kernels *k, int rows, int cols, const float *x,
                                          const float *mean, const float *rstd, const float *dy,
                                          float *dgamma, float *dbeta)
{
    const char *op = "layernorm_backward_params";
    TRY_WORK(check_layernorm(k, op, rows, cols, x, mean, rstd));
    TRY(NEED_PTRS(k, op, {"dy", dy}, {"dgamma", dgamma}, {"dbeta", dbeta}));
    return k->ops->layernorm_backward_params(k, rows, cols, x, mean, rstd, dy, dgamma, dbeta);
}

int pps_kernels_layernorm_backward(struct pps_kernels *k, int rows, int cols, const float *x,
                                   const float *mean, const float *rstd, const float *gamma,
                                   const float *dy, float *dx, float *dgamma, float *dbeta)
{
    const char *op = "layernorm_backward";
    TRY_WORK(check_layernorm(k, op, rows, cols, x, mean, rstd));
    TRY(NEED_PTRS(k, op, {"gamma", gamma}, {"dy", dy}, {"dx", dx}, {"dgamma", dgamma},
                  {"dbeta", dbeta}));
    if (dx == dy)
        return pps__kernels_fail(k, PPS_EINVAL, "%s: dx is dy (W reads dy after B)", op);
    return k->ops->layernorm_backward(k, rows, cols, x, mean, rstd, gamma, dy, dx, dgamma, dbeta);
}

/* ---- activations and elementwise ---------------------------------------------------------- */

int pps_kernels_gelu_forward(struct pps_kernels *k, size_t n, const float *x, float *y)
{
    if (n == 0)
        return 0;
    TRY(NEED_PTRS(k, "gelu_forward", {"x", x}, {"y", y}));
    return k->ops->gelu_forward(k, n, x, y);
}

int pps_kernels_gelu_backward(struct pps_kernels *k, size_t n, const float *x, const float *dy,
                              float *dx)
{
    if (n == 0)
        return 0;
    TRY(NEED_PTRS(k, "gelu_backward", {"x", x}, {"dy", dy}, {"dx", dx}));
    return k->ops->gelu_backward(k, n, x, dy, dx);
}

int pps_kernels_add(struct pps_kernels *k, size_t n, const float *a, const float *b, float *y)
{
    if (n == 0)
        return 0;
    TRY(NEED_PTRS(k, "add", {"a", a}, {"b", b}, {"y", y}));
    return k->ops->add(k, n, a, b, y);
}

int pps_kernels_scale(struct pps_kernels *k, size_t n, float alpha, float *x)
{
    if (n == 0)
        return 0;
    TRY(need_ptr(k, "scale", "x", x));
    return k->ops->scale(k, n, alpha, x);
}

/* ---- embedding and loss ------------------------------------------------------------------- */

/* Checks an embedding call's shape; returns 1 when there is work, 0 when empty, or the error. */
static int check_embedding(struct pps_kernels *k, const char *op, int n, int dim, int vocab,
                           const int32_t *ids)
{
    TRY(need_count(k, op, "n", n));
    TRY(need_count(k, op, "dim", dim));
    TRY(need_count(k, op, "vocab", vocab));
    if (n == 0 || dim == 0)
        return 0;
    if (vocab == 0)
        return pps__kernels_fail(k, PPS_EINVAL, "%s: %d ids into an empty vocabulary", op, n);
    TRY(need_ptr(k, op, "ids", ids));
    return 1;
}

int pps_kernels_embedding_forward(struct pps_kernels *k, int n, int dim, int vocab,
                                  const int32_t *ids, const float *table, float *y)
{
    TRY_WORK(check_embedding(k, "embedding_forward", n, dim, vocab, ids));
    TRY(NEED_PTRS(k, "embedding_forward", {"table", table}, {"y", y}));
    return k->ops->embedding_forward(k, n, dim, vocab, ids, table, y);
}

int pps_kernels_embedding_backward(struct pps_kernels *k, int n, int dim, int vocab,
                                   const int32_t *ids, const float *dy, float *dtable)
{
    TRY_WORK(check_embedding(k, "embedding_backward", n, dim, vocab, ids));
    TRY(NEED_PTRS(k, "embedding_backward", {"dy", dy}, {"dtable", dtable}));
    return k->ops->embedding_backward(k, n, dim, vocab, ids, dy, dtable);
}

/* Checks a cross-entropy call's shape (rows >= 1: a mean over no tokens is undefined). */
static int check_cross_entropy(struct pps_kernels *k, const char *op, int rows, int vocab,
                               const float *logits, const int32_t *targets, const float *lse)
{
    if (rows < 1)
        return pps__kernels_fail(k, PPS_EINVAL, "%s: rows must be >= 1, got %d", op, rows);
    if (vocab < 1)
        return pps__kernels_fail(k, PPS_EINVAL, "%s: vocab must be >= 1, got %d", op, vocab);
    TRY(NEED_PTRS(k, op, {"logits", logits}, {"targets", targets}, {"lse", lse}));
    return 0;
}

int pps_kernels_cross_entropy_forward(struct pps_kernels *k, int rows, int vocab,
                                      const float *logits, const int32_t *targets, float *lse,
                                      float *loss)
{
    TRY(check_cross_entropy(k, "cross_entropy_forward", rows, vocab, logits, targets, lse));
    TRY(need_ptr(k, "cross_entropy_forward", "loss", loss));
    return k->ops->cross_entropy_forward(k, rows, vocab, logits, targets, lse, loss);
}

int pps_kernels_cross_entropy_backward(struct pps_kernels *k, int rows, int vocab, float dloss,
                                       const float *logits, const int32_t *targets,
                                       const float *lse, float *dlogits)
{
    TRY(check_cross_entropy(k, "cross_entropy_backward", rows, vocab, logits, targets, lse));
    TRY(need_ptr(k, "cross_entropy_backward", "dlogits", dlogits));
    return k->ops->cross_entropy_backward(k, rows, vocab, dloss, logits, targets, lse, dlogits);
}

/* ---- optimizer and gradient checks -------------------------------------------------------- */

int pps_kernels_adamw(struct pps_kernels *k, size_t n, const struct pps_adamw *hp, long step,
                      const float *grad, float *param, float *m, float *v)
{
    TRY(need_ptr(k, "adamw", "hyperparameters", hp));
    if (step < 1)
        return pps__kernels_fail(k, PPS_EINVAL, "adamw: step counts from 1, got %ld", step);
    /* Written so that NaN fails every test. */
    if (!(hp->lr >= 0) || !(hp->eps > 0) || !(hp->weight_decay >= 0) ||
        !(hp->beta1 >= 0 && hp->beta1 < 1) || !(hp->beta2 >= 0 && hp->beta2 < 1))
        return pps__kernels_fail(k, PPS_EINVAL,
                                 "adamw: need lr >= 0, eps > 0, weight_decay >= 0, betas in "
                                 "[0, 1); got lr %g, eps %g, weight_decay %g, betas %g, %g",
                                 (double)hp->lr, (double)hp->eps, (double)hp->weight_decay,
                                 (double)hp->beta1, (double)hp->beta2);
    if (n == 0)
        return 0;
    TRY(NEED_PTRS(k, "adamw", {"grad", grad}, {"param", param}, {"m", m}, {"v", v}));
    return k->ops->adamw(k, n, hp, step, grad, param, m, v);
}

int pps_kernels_sumsq(struct pps_kernels *k, size_t n, const float *x, double *out)
{
    TRY(need_ptr(k, "sumsq", "out", out));
    *out = 0;
    if (n == 0)
        return 0;
    TRY(need_ptr(k, "sumsq", "x", x));
    return k->ops->sumsq(k, n, x, out);
}

int pps_kernels_nonfinite(struct pps_kernels *k, size_t n, const float *x, size_t *out)
{
    TRY(need_ptr(k, "nonfinite", "out", out));
    *out = 0;
    if (n == 0)
        return 0;
    TRY(need_ptr(k, "nonfinite", "x", x));
    return k->ops->nonfinite(k, n, x, out);
}
