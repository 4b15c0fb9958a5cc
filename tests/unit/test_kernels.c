/*
 * test_kernels.c - the kernels' forward calls against straightforward references (naive loops,
 * double sums), contexts and memory, argument checks, AdamW against hand-computed steps, the
 * gradient norm and the finiteness check on crafted inputs, and determinism under threads.
 * Backward calls are checked against finite differences in test_kernels_grad.c.
 */
#include <float.h>
#include <pthread.h>

#include "kernels_fixture.h"
#include "pps_config.h"
#include "test.h"

/* ---- contexts and memory ------------------------------------------------------------------ */

static void test_new_names_what_the_build_has(void)
{
    struct pps_kernels *k = (struct pps_kernels *)1;
    struct pps_err err = {0};
    const char *backend = getenv("PPS_KERNELS_BACKEND");
    int rc;

    /* The table of backends is the same whichever is under test: checked on the cpu run, so a run
     * on a backend this machine cannot open skips every case (exit 77). */
    if (backend && *backend && strcmp(backend, "cpu") != 0)
        TEST_SKIP("the backends' names are checked on the cpu run");

    CHECK_EQ_INT(pps_kernels_new("tpu", &k, &err), PPS_EINVAL);
    CHECK(k == NULL);
    CHECK_STR_CONTAINS(err.msg, "unknown kernels backend 'tpu'");
    CHECK_STR_CONTAINS(err.msg, "have: cpu");
    CHECK_EQ_INT(pps_kernels_new(NULL, &k, &err), PPS_EINVAL);
    /* A backend this build lacks says so; one it has opens, or says why not on this machine (a
     * cuda build without a GPU or driver). */
    rc = pps_kernels_new("cuda", &k, &err);
    if (rc == 0) {
        CHECK(strcmp(pps_kernels_backend(k), "cuda") == 0);
        pps_kernels_free(k);
    } else {
        CHECK_EQ_INT(rc, PPS_ENOENT);
#if defined(PPS_HAVE_CUDA) && defined(PPS_HAVE_CUBLAS)
        CHECK_STR_CONTAINS(err.msg, "cuda: no ");
#else
        CHECK_STR_CONTAINS(err.msg, "kernels backend 'cuda' is not in this build");
#endif
    }
    CHECK_EQ_INT(pps_kernels_new("cpu", &k, &err), 0);
    CHECK(k != NULL);
    CHECK(strcmp(pps_kernels_backend(k), "cpu") == 0);
    pps_kernels_free(k);
    pps_kernels_free(NULL);
}

/* Contexts that share a device: on cpu each is a plain context on the whole machine; a part
 * outside 0..parts-1 is refused; on cuda (PPS_KERNELS_BACKEND=cuda) each gets its own SMs where
 * the driver can split them, and says so. */
static void test_new_part_shares_or_splits_the_device(void)
{
    const char *name = getenv("PPS_KERNELS_BACKEND");
    struct pps_kernels *k[2] = {NULL, NULL};
    struct pps_err err = {0};
    char what[256];
    int sms[2];

    name = name && *name ? name : "cpu";
    CHECK_EQ_INT(pps_kernels_new_part(name, 2, 2, &k[0], &err), PPS_EINVAL);
    CHECK(k[0] == NULL);
    CHECK_EQ_INT(pps_kernels_new_part(name, -1, 2, &k[0], &err), PPS_EINVAL);
    for (int i = 0; i < 2; i++) {
        int rc = pps_kernels_new_part(name, i, 2, &k[i], &err);
        if (rc == PPS_ENOENT)
            TEST_SKIP(err.msg);
        CHECK_EQ_INT(rc, 0);
        sms[i] = pps_kernels_partition(k[i], what, sizeof(what));
        fprintf(stderr, "  part %d of 2: %s\n", i, what);
        if (strcmp(name, "cpu") == 0) {
            CHECK_EQ_INT(sms[i], 0);
            CHECK(strcmp(what, "the whole device") == 0);
        } else if (sms[i] > 0) {
            CHECK_STR_CONTAINS(what, "SMs (green context");
        } else {
            CHECK_STR_CONTAINS(what, "shared with the other");
        }
    }
    /* Equal partitions: the two stages get the same share. */
    CHECK_EQ_INT(sms[0], sms[1]);
    kx_close(k[0]);
    kx_close(k[1]);
}

static void test_memory_round_trip(void)
{
    struct pps_kernels *k = kx_open();
    float host[37], back[37];
    float *a = kx_alloc(k, 37), *b = kx_alloc(k, 37);
    void *e1 = NULL, *e2 = NULL;

    kx_get(k, back, a, 37);
    for (int i = 0; i < 37; i++) {
        CHECK(back[i] == 0.0f); /* zero-filled */
        host[i] = (float)i - 18.5f;
    }
    kx_set(k, a, host, 37);
    CHECK_EQ_INT(pps_kernels_copy(k, b, a, sizeof(host)), 0);
    kx_get(k, back, b, 37);
    CHECK(kx_same_bits(back, host, 37));
    CHECK_EQ_INT(pps_kernels_zero(k, b + 10, 5 * sizeof(float)), 0);
    kx_get(k, back, b, 37);
    CHECK(back[9] == host[9] && back[10] == 0.0f && back[14] == 0.0f && back[15] == host[15]);

    /* Empty allocations are distinct, usable pointers; empty copies do nothing. */
    CHECK_EQ_INT(pps_kernels_mem_alloc(k, 0, &e1), 0);
    CHECK_EQ_INT(pps_kernels_mem_alloc(k, 0, &e2), 0);
    CHECK(e1 && e2 && e1 != e2);
    CHECK_EQ_INT(pps_kernels_copy_in(k, NULL, NULL, 0), 0);
    CHECK_EQ_INT(pps_kernels_copy_out(k, back, NULL, 1), PPS_EINVAL);

    pps_kernels_mem_free(k, e1);
    pps_kernels_mem_free(k, e2);
    pps_kernels_mem_free(k, NULL);
    pps_kernels_mem_free(k, a);
    pps_kernels_mem_free(k, b);
    CHECK_EQ_INT(pps_kernels_sync(k, NULL), PPS_EINVAL); /* the copy_out above */
    kx_close(k);
}

static void test_sync_reports_first_error_then_forgets(void)
{
    struct pps_kernels *k = kx_open();
    struct pps_err err = {0};
    float *c = kx_alloc(k, 4);

    CHECK_EQ_INT(pps_kernels_gemm(k, 0, 0, -1, 2, 2, 1.0f, c, c, 0.0f, c), PPS_EINVAL);
    CHECK_EQ_INT(pps_kernels_scale(k, 4, 2.0f, NULL), PPS_EINVAL);
    CHECK_EQ_INT(pps_kernels_sync(k, &err), PPS_EINVAL);
    CHECK_STR_CONTAINS(err.msg, "gemm: m must be >= 0, got -1");
    CHECK_EQ_INT(pps_kernels_sync(k, &err), 0);
    pps_kernels_mem_free(k, c);
    kx_close(k);
}

/* ---- GEMM --------------------------------------------------------------------------------- */

/* C = alpha op(A) op(B) + beta C in double, A and B stored as for pps_kernels_gemm. */
static void ref_gemm(int ta, int tb, int m, int n, int kd, double alpha, const float *a,
                     const float *b, double beta, const float *c0, double *c)
{
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++) {
            double s = 0.0;
            for (int p = 0; p < kd; p++) {
                double av = ta ? a[(size_t)p * m + i] : a[(size_t)i * kd + p];
                double bv = tb ? b[(size_t)j * kd + p] : b[(size_t)p * n + j];
                s += av * bv;
            }
            c[(size_t)i * n + j] = alpha * s + (beta == 0.0 ? 0.0 : beta * c0[(size_t)i * n + j]);
        }
}

static void test_gemm_matches_reference_all_transposes(void)
{
    static const int shapes[][3] = {{1, 1, 1}, {3, 5, 7}, {17, 33, 65}, {64, 48, 130}, {2, 70, 9}};
    struct pps_kernels *k = kx_open();

    for (size_t s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++) {
        int m = shapes[s][0], n = shapes[s][1], kd = shapes[s][2];
        for (int t = 0; t < 4; t++) {
            int ta = t & 1, tb = t >> 1;
            float *ha = kx_random((size_t)m * kd, -1, 1), *hb = kx_random((size_t)kd * n, -1, 1);
            float *hc = kx_random((size_t)m * n, -1, 1);
            double *want = calloc((size_t)m * n, sizeof(double));
            float *a = kx_put(k, ha, (size_t)m * kd), *b = kx_put(k, hb, (size_t)kd * n);
            float *c = kx_put(k, hc, (size_t)m * n), *got;

            ref_gemm(ta, tb, m, n, kd, 0.75, ha, hb, -0.5, hc, want);
            CHECK_EQ_INT(pps_kernels_gemm(k, ta, tb, m, n, kd, 0.75f, a, b, -0.5f, c), 0);
            got = kx_fetch(k, c, (size_t)m * n);
            if (kx_compare("gemm", got, want, (size_t)m * n, 1e-5 * kd, 1e-5)) {
                fprintf(stderr, "  shape m=%d n=%d k=%d trans_a=%d trans_b=%d\n", m, n, kd, ta, tb);
                CHECK(0);
            }
            free(ha), free(hb), free(hc), free(want), free(got);
            pps_kernels_mem_free(k, a), pps_kernels_mem_free(k, b), pps_kernels_mem_free(k, c);
        }
    }
    kx_close(k);
}

static void test_gemm_beta_zero_does_not_read_c(void)
{
    struct pps_kernels *k = kx_open();
    float ha[6] = {1, 2, 3, 4, 5, 6}, hb[6] = {1, 0, 0, 1, 1, 1}, hc[4], got[4];
    float *a = kx_put(k, ha, 6), *b = kx_put(k, hb, 6), *c;

    for (int i = 0; i < 4; i++)
        hc[i] = NAN;
    c = kx_put(k, hc, 4);
    /* [1 2 3; 4 5 6] x [1 0; 0 1; 1 1] = [4 5; 10 11] */
    CHECK_EQ_INT(pps_kernels_gemm(k, 0, 0, 2, 2, 3, 1.0f, a, b, 0.0f, c), 0);
    kx_get(k, got, c, 4);
    CHECK(got[0] == 4 && got[1] == 5 && got[2] == 10 && got[3] == 11);
    /* kdim == 0: C = beta * C, nothing else read. */
    CHECK_EQ_INT(pps_kernels_gemm(k, 0, 0, 2, 2, 0, 1.0f, NULL, NULL, 2.0f, c), 0);
    kx_get(k, got, c, 4);
    CHECK(got[0] == 8 && got[1] == 10 && got[2] == 20 && got[3] == 22);
    pps_kernels_mem_free(k, a), pps_kernels_mem_free(k, b), pps_kernels_mem_free(k, c);
    kx_close(k);
}

static void test_gemm_beta_one_accumulates(void)
{
    struct pps_kernels *k = kx_open();
    int m = 5, n = 4, kd = 6;
    float *ha = kx_random(30, -1, 1), *hb = kx_random(24, -1, 1), *hc = kx_random(20, -1, 1);
    double once[20], want[20];
    float *a = kx_put(k, ha, 30), *b = kx_put(k, hb, 24), *c = kx_put(k, hc, 20), *got;

    ref_gemm(0, 0, m, n, kd, 1.0, ha, hb, 0.0, hc, once);
    for (int i = 0; i < 20; i++)
        want[i] = hc[i] + 2.0 * once[i];
    CHECK_EQ_INT(pps_kernels_gemm(k, 0, 0, m, n, kd, 1.0f, a, b, 1.0f, c), 0);
    CHECK_EQ_INT(pps_kernels_gemm(k, 0, 0, m, n, kd, 1.0f, a, b, 1.0f, c), 0);
    got = kx_fetch(k, c, 20);
    CHECK(kx_compare("C + 2AB", got, want, 20, 1e-5, 1e-5) == 0);
    free(ha), free(hb), free(hc), free(got);
    pps_kernels_mem_free(k, a), pps_kernels_mem_free(k, b), pps_kernels_mem_free(k, c);
    kx_close(k);
}

static void test_gemm_rejects_overlapping_c(void)
{
    struct pps_kernels *k = kx_open();
    struct pps_err err = {0};
    float *buf = kx_alloc(k, 16);

    /* C is the second half of A's storage. */
    CHECK_EQ_INT(pps_kernels_gemm(k, 0, 0, 2, 2, 2, 1.0f, buf + 2, buf + 12, 0.0f, buf + 4),
                 PPS_EINVAL);
    CHECK_EQ_INT(pps_kernels_sync(k, &err), PPS_EINVAL);
    CHECK_STR_CONTAINS(err.msg, "C overlaps A");
    /* Disjoint slices of one allocation are fine. */
    CHECK_EQ_INT(pps_kernels_gemm(k, 0, 0, 2, 2, 2, 1.0f, buf, buf + 4, 0.0f, buf + 8), 0);
    pps_kernels_mem_free(k, buf);
    kx_close(k);
}

/* ---- bias and linear ---------------------------------------------------------------------- */

static void test_bias_add_and_grad(void)
{
    struct pps_kernels *k = kx_open();
    int rows = 9, cols = 70; /* more columns than one block of the column sums */
    float *hy = kx_random((size_t)rows * cols, -1, 1), *hb = kx_random(cols, -1, 1);
    float *hdb = kx_random(cols, -1, 1);
    double want[70 * 9];
    float *y = kx_put(k, hy, (size_t)rows * cols), *b = kx_put(k, hb, cols);
    float *db = kx_put(k, hdb, cols), *got;

    for (int r = 0; r < rows; r++)
        for (int c = 0; c < cols; c++)
            want[r * cols + c] = (double)hy[r * cols + c] + hb[c];
    CHECK_EQ_INT(pps_kernels_bias_add(k, rows, cols, b, y), 0);
    got = kx_fetch(k, y, (size_t)rows * cols);
    CHECK(kx_compare("bias_add", got, want, (size_t)rows * cols, 0, 1e-6) == 0);

    /* dbias += column sums of dy (here dy = the y just computed). */
    for (int c = 0; c < cols; c++) {
        want[c] = hdb[c];
        for (int r = 0; r < rows; r++)
            want[c] += got[r * cols + c];
    }
    CHECK_EQ_INT(pps_kernels_bias_grad(k, rows, cols, y, db), 0);
    free(got);
    got = kx_fetch(k, db, cols);
    CHECK(kx_compare("bias_grad", got, want, cols, 1e-6, 1e-6) == 0);
    free(hy), free(hb), free(hdb), free(got);
    pps_kernels_mem_free(k, y), pps_kernels_mem_free(k, b), pps_kernels_mem_free(k, db);
    kx_close(k);
}

static void test_linear_forward_with_and_without_bias(void)
{
    struct pps_kernels *k = kx_open();
    int rows = 6, n_in = 5, n_out = 7;
    float *hx = kx_random(30, -1, 1), *hw = kx_random(35, -1, 1), *hb = kx_random(7, -1, 1);
    double want[42], nob[42];
    float *x = kx_put(k, hx, 30), *w = kx_put(k, hw, 35), *b = kx_put(k, hb, 7);
    float *y = kx_alloc(k, 42), *got;

    for (int r = 0; r < rows; r++)
        for (int o = 0; o < n_out; o++) {
            double s = 0;
            for (int i = 0; i < n_in; i++)
                s += (double)hx[r * n_in + i] * hw[i * n_out + o];
            nob[r * n_out + o] = s;
            want[r * n_out + o] = s + hb[o];
        }
    CHECK_EQ_INT(pps_kernels_linear_forward(k, rows, n_in, n_out, x, w, b, y), 0);
    got = kx_fetch(k, y, 42);
    CHECK(kx_compare("linear", got, want, 42, 1e-6, 1e-6) == 0);
    free(got);
    CHECK_EQ_INT(pps_kernels_linear_forward(k, rows, n_in, n_out, x, w, NULL, y), 0);
    got = kx_fetch(k, y, 42);
    CHECK(kx_compare("linear without bias", got, nob, 42, 1e-6, 1e-6) == 0);
    free(hx), free(hw), free(hb), free(got);
    pps_kernels_mem_free(k, x), pps_kernels_mem_free(k, w), pps_kernels_mem_free(k, b);
    pps_kernels_mem_free(k, y);
    kx_close(k);
}

/* ---- layer normalization ------------------------------------------------------------------ */

static void test_layernorm_forward_matches_reference(void)
{
    struct pps_kernels *k = kx_open();
    int rows = 5, cols = 67;
    size_t n = (size_t)rows * cols;
    float *hx = kx_random(n, -2, 3), *hg = kx_random(cols, 0.5f, 1.5f);
    float *hb = kx_random(cols, -0.5f, 0.5f);
    double *want = calloc(n, sizeof(double)), wmean[5], wrstd[5];
    float *x = kx_put(k, hx, n), *g = kx_put(k, hg, cols), *b = kx_put(k, hb, cols);
    float *y = kx_alloc(k, n), *mean = kx_alloc(k, rows), *rstd = kx_alloc(k, rows), *got;

    /* A large offset on one row: the variance must come from deviations, not cancel. */
    for (int c = 0; c < cols; c++)
        hx[c] += 100.0f;
    kx_set(k, x, hx, n);
    for (int r = 0; r < rows; r++) {
        double mu = 0, var = 0;
        for (int c = 0; c < cols; c++)
            mu += hx[r * cols + c];
        mu /= cols;
        for (int c = 0; c < cols; c++)
            var += (hx[r * cols + c] - mu) * (hx[r * cols + c] - mu);
        var /= cols;
        wmean[r] = mu;
        wrstd[r] = 1.0 / sqrt(var + 1e-5);
        for (int c = 0; c < cols; c++)
            want[r * cols + c] = (hx[r * cols + c] - mu) * wrstd[r] * hg[c] + hb[c];
    }
    CHECK_EQ_INT(pps_kernels_layernorm_forward(k, rows, cols, 1e-5f, x, g, b, y, mean, rstd), 0);
    got = kx_fetch(k, y, n);
    CHECK(kx_compare("layernorm y", got, want, n, 1e-5, 1e-5) == 0);
    free(got);
    got = kx_fetch(k, mean, rows);
    CHECK(kx_compare("layernorm mean", got, wmean, rows, 1e-6, 1e-6) == 0);
    free(got);
    got = kx_fetch(k, rstd, rows);
    CHECK(kx_compare("layernorm rstd", got, wrstd, rows, 0, 1e-6) == 0);
    free(got);

    /* In place (y is x) gives the same bits. */
    {
        float *out = kx_fetch(k, y, n), *inplace;
        CHECK_EQ_INT(pps_kernels_layernorm_forward(k, rows, cols, 1e-5f, x, g, b, x, mean, rstd),
                     0);
        inplace = kx_fetch(k, x, n);
        CHECK(kx_same_bits(out, inplace, n));
        free(out), free(inplace);
    }
    CHECK_EQ_INT(pps_kernels_layernorm_forward(k, rows, cols, 0.0f, x, g, b, y, mean, rstd),
                 PPS_EINVAL);
    CHECK_EQ_INT(pps_kernels_sync(k, NULL), PPS_EINVAL);
    free(hx), free(hg), free(hb), free(want);
    pps_kernels_mem_free(k, x), pps_kernels_mem_free(k, g), pps_kernels_mem_free(k, b);
    pps_kernels_mem_free(k, y), pps_kernels_mem_free(k, mean), pps_kernels_mem_free(k, rstd);
    kx_close(k);
}

/* ---- activations and elementwise ---------------------------------------------------------- */

static double ref_gelu(double x)
{
    return 0.5 * x * (1.0 + tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
}

static void test_gelu_forward_tanh_approximation(void)
{
    struct pps_kernels *k = kx_open();
    float hx[64], got[64];
    double want[64];
    float *x, *y = kx_alloc(k, 64);

    for (int i = 0; i < 64; i++) {
        hx[i] = -8.0f + 16.0f * i / 63.0f;
        want[i] = ref_gelu(hx[i]);
    }
    hx[0] = 0.0f, want[0] = 0.0;
    hx[1] = 1.0f, want[1] = 0.8411919906082768; /* the tanh form, not erf's 0.8413447 */
    x = kx_put(k, hx, 64);
    CHECK_EQ_INT(pps_kernels_gelu_forward(k, 64, x, y), 0);
    kx_get(k, got, y, 64);
    CHECK(kx_compare("gelu", got, want, 64, 1e-6, 1e-6) == 0);
    CHECK(got[0] == 0.0f);
    pps_kernels_mem_free(k, x), pps_kernels_mem_free(k, y);
    kx_close(k);
}

static void test_add_and_scale(void)
{
    struct pps_kernels *k = kx_open();
    float ha[5] = {1, 2, 3, 4, 5}, hb[5] = {0.5f, -2, 0, 1e-3f, 10}, got[5];
    float *a = kx_put(k, ha, 5), *b = kx_put(k, hb, 5);

    CHECK_EQ_INT(pps_kernels_add(k, 5, a, b, a), 0); /* y may be a */
    kx_get(k, got, a, 5);
    for (int i = 0; i < 5; i++)
        CHECK(got[i] == ha[i] + hb[i]);
    CHECK_EQ_INT(pps_kernels_scale(k, 5, -0.25f, a), 0);
    kx_get(k, got, a, 5);
    for (int i = 0; i < 5; i++)
        CHECK(got[i] == (ha[i] + hb[i]) * -0.25f);
    pps_kernels_mem_free(k, a), pps_kernels_mem_free(k, b);
    kx_close(k);
}

/* ---- embedding and loss ------------------------------------------------------------------- */

static void test_embedding_forward_gathers_rows(void)
{
    struct pps_kernels *k = kx_open();
    struct pps_err err = {0};
    int vocab = 7, dim = 3, n = 5;
    int32_t hids[5] = {6, 0, 3, 3, 1}, bad[3] = {1, 2, 300};
    float *ht = kx_random(21, -1, 1), got[15];
    float *t = kx_put(k, ht, 21), *y = kx_alloc(k, 15);
    int32_t *ids = kx_put_ids(k, hids, 5), *bids = kx_put_ids(k, bad, 3);

    CHECK_EQ_INT(pps_kernels_embedding_forward(k, n, dim, vocab, ids, t, y), 0);
    kx_get(k, got, y, 15);
    for (int i = 0; i < n; i++)
        CHECK(kx_same_bits(got + i * dim, ht + hids[i] * dim, dim));

    CHECK_EQ_INT(pps_kernels_embedding_forward(k, 3, dim, vocab, bids, t, y), kx_data_error(k));
    CHECK_EQ_INT(pps_kernels_sync(k, &err), PPS_EINVAL);
    CHECK_STR_CONTAINS(err.msg, "id 300 at position 2 is outside 0..6");
    bad[2] = -1;
    kx_set_ids(k, bids, bad, 3);
    CHECK_EQ_INT(pps_kernels_embedding_backward(k, 3, dim, vocab, bids, y, t), kx_data_error(k));
    CHECK_EQ_INT(pps_kernels_sync(k, &err), PPS_EINVAL);
    CHECK_STR_CONTAINS(err.msg, "id -1");
    free(ht);
    pps_kernels_mem_free(k, t), pps_kernels_mem_free(k, y);
    pps_kernels_mem_free(k, ids), pps_kernels_mem_free(k, bids);
    kx_close(k);
}

static void test_cross_entropy_forward_matches_reference(void)
{
    struct pps_kernels *k = kx_open();
    struct pps_err err = {0};
    int rows = 4, vocab = 11;
    int32_t ht[4] = {0, 10, 5, 5};
    float *hl = kx_random(44, -3, 3), got_loss, got_lse[4];
    double want_lse[4], want_loss = 0;
    float *l = kx_put(k, hl, 44), *lse = kx_alloc(k, 4), *loss = kx_alloc(k, 1);
    int32_t *t = kx_put_ids(k, ht, 4);

    for (int r = 0; r < rows; r++) {
        double s = 0;
        for (int c = 0; c < vocab; c++)
            s += exp(hl[r * vocab + c]);
        want_lse[r] = log(s);
        want_loss += (want_lse[r] - hl[r * vocab + ht[r]]) / rows;
    }
    CHECK_EQ_INT(pps_kernels_cross_entropy_forward(k, rows, vocab, l, t, lse, loss), 0);
    kx_get(k, &got_loss, loss, 1);
    kx_get(k, got_lse, lse, 4);
    CHECK_NEAR(got_loss, want_loss, 1e-6 * fabs(want_loss) + 1e-7);
    CHECK(kx_compare("lse", got_lse, want_lse, 4, 1e-6, 1e-6) == 0);

    /* Equal logits: the loss is log(vocab), also when they are huge (no overflow). */
    for (int i = 0; i < 44; i++)
        hl[i] = 3e4f;
    kx_set(k, l, hl, 44);
    CHECK_EQ_INT(pps_kernels_cross_entropy_forward(k, rows, vocab, l, t, lse, loss), 0);
    kx_get(k, &got_loss, loss, 1);
    CHECK_NEAR(got_loss, log(11.0), 1e-6);

    ht[1] = 11;
    kx_set_ids(k, t, ht, 4);
    CHECK_EQ_INT(pps_kernels_cross_entropy_forward(k, rows, vocab, l, t, lse, loss),
                 kx_data_error(k));
    CHECK_EQ_INT(pps_kernels_sync(k, &err), PPS_EINVAL);
    CHECK_STR_CONTAINS(err.msg, "target 11 at row 1 is outside 0..10");
    CHECK_EQ_INT(pps_kernels_cross_entropy_forward(k, 0, vocab, l, t, lse, loss), PPS_EINVAL);
    CHECK_EQ_INT(pps_kernels_sync(k, &err), PPS_EINVAL);
    CHECK_STR_CONTAINS(err.msg, "rows must be >= 1");
    free(hl);
    pps_kernels_mem_free(k, l), pps_kernels_mem_free(k, lse), pps_kernels_mem_free(k, loss);
    pps_kernels_mem_free(k, t);
    kx_close(k);
}

/* ---- optimizer ---------------------------------------------------------------------------- */

static void test_adamw_first_step_by_hand(void)
{
    struct pps_kernels *k = kx_open();
    struct pps_adamw hp = {
        .lr = 0.1f, .beta1 = 0.9f, .beta2 = 0.999f, .eps = 1e-8f, .weight_decay = 0.01f};
    float hp0[3] = {1.0f, -2.0f, 0.5f}, hg[3] = {0.5f, -0.25f, 0.0f}, p1[3], m1[3], v1[3];
    float *p = kx_put(k, hp0, 3), *g = kx_put(k, hg, 3), *m = kx_alloc(k, 3), *v = kx_alloc(k, 3);

    /*
     * Step 1 from zero moments: m = 0.1 g, v = 0.001 g^2; bias-corrected they are g and g^2, so
     * the update is lr * g / (|g| + eps), about lr * sign(g). Without the corrections it would
     * be lr * 0.1 g / (sqrt(0.001) |g|), three times larger.
     *   p = 1:    1 * (1 - 0.001) - 0.1 * 0.5 / (0.5 + 1e-8)     = 0.899
     *   p = -2:  -2 * (1 - 0.001) + 0.1 * 0.25 / (0.25 + 1e-8)   = -1.898
     *   p = 0.5: 0.5 * (1 - 0.001) - 0 (zero gradient: no NaN)   = 0.4995
     */
    CHECK_EQ_INT(pps_kernels_adamw(k, 3, &hp, 1, g, p, m, v), 0);
    kx_get(k, p1, p, 3);
    kx_get(k, m1, m, 3);
    kx_get(k, v1, v, 3);
    CHECK_NEAR(p1[0], 0.899, 1e-6);
    CHECK_NEAR(p1[1], -1.898, 1e-6);
    CHECK_NEAR(p1[2], 0.4995, 1e-7);
    /* The moments themselves, with the betas as the floats they are (0.999f is not 0.999). */
    CHECK_NEAR(m1[0], (1 - (double)0.9f) * 0.5, 1e-9);
    CHECK_NEAR(v1[0], (1 - (double)0.999f) * 0.25, 1e-11);
    CHECK(m1[2] == 0.0f && v1[2] == 0.0f);
    pps_kernels_mem_free(k, p), pps_kernels_mem_free(k, g);
    pps_kernels_mem_free(k, m), pps_kernels_mem_free(k, v);
    kx_close(k);
}

static void test_adamw_later_steps_match_reference(void)
{
    struct pps_kernels *k = kx_open();
    struct pps_adamw hp = {
        .lr = 3e-3f, .beta1 = 0.8f, .beta2 = 0.95f, .eps = 1e-6f, .weight_decay = 0.1f};
    enum { N = 21 };
    double rp[N], rm[N] = {0}, rv[N] = {0};
    float *hp0 = kx_random(N, -1, 1), got[N];
    float *p = kx_put(k, hp0, N), *g = kx_alloc(k, N), *m = kx_alloc(k, N), *v = kx_alloc(k, N);

    for (int i = 0; i < N; i++)
        rp[i] = hp0[i];
    for (long step = 1; step <= 5; step++) {
        float *hg = kx_random(N, -2, 2);
        double bc1 = 1 - pow(0.8f, step), bc2 = 1 - pow(0.95f, step);
        kx_set(k, g, hg, N);
        CHECK_EQ_INT(pps_kernels_adamw(k, N, &hp, step, g, p, m, v), 0);
        for (int i = 0; i < N; i++) {
            rp[i] *= 1 - (double)hp.lr * hp.weight_decay;
            rm[i] = (double)hp.beta1 * rm[i] + (1 - (double)hp.beta1) * hg[i];
            rv[i] = (double)hp.beta2 * rv[i] + (1 - (double)hp.beta2) * hg[i] * hg[i];
            rp[i] -= hp.lr * (rm[i] / bc1) / (sqrt(rv[i] / bc2) + hp.eps);
        }
        free(hg);
    }
    kx_get(k, got, p, N);
    CHECK(kx_compare("adamw param", got, rp, N, 1e-6, 1e-6) == 0);
    free(hp0);
    pps_kernels_mem_free(k, p), pps_kernels_mem_free(k, g);
    pps_kernels_mem_free(k, m), pps_kernels_mem_free(k, v);
    kx_close(k);
}

static void test_adamw_rejects_bad_hyperparameters(void)
{
    struct pps_kernels *k = kx_open();
    struct pps_err err = {0};
    struct pps_adamw ok = {.lr = 1e-3f, .beta1 = 0.9f, .beta2 = 0.999f, .eps = 1e-8f};
    struct pps_adamw hp = ok;
    float *b = kx_alloc(k, 4);

    CHECK_EQ_INT(pps_kernels_adamw(k, 4, &ok, 0, b, b + 1, b + 2, b + 3), PPS_EINVAL);
    CHECK_EQ_INT(pps_kernels_sync(k, &err), PPS_EINVAL);
    CHECK_STR_CONTAINS(err.msg, "step counts from 1, got 0");
    hp.beta1 = 1.0f;
    CHECK_EQ_INT(pps_kernels_adamw(k, 1, &hp, 1, b, b + 1, b + 2, b + 3), PPS_EINVAL);
    hp = ok, hp.lr = NAN;
    CHECK_EQ_INT(pps_kernels_adamw(k, 1, &hp, 1, b, b + 1, b + 2, b + 3), PPS_EINVAL);
    hp = ok, hp.eps = 0.0f;
    CHECK_EQ_INT(pps_kernels_adamw(k, 1, &hp, 1, b, b + 1, b + 2, b + 3), PPS_EINVAL);
    CHECK_EQ_INT(pps_kernels_sync(k, &err), PPS_EINVAL);
    CHECK_STR_CONTAINS(err.msg, "betas in [0, 1)");
    pps_kernels_mem_free(k, b);
    kx_close(k);
}

/* ---- gradient norm and finiteness --------------------------------------------------------- */

/* sumsq of n host floats through the device. */
static double sumsq_of(struct pps_kernels *k, const float *h, size_t n)
{
    float *d = kx_put(k, h, n);
    double out = -1;
    CHECK_EQ_INT(pps_kernels_sumsq(k, n, d, &out), 0);
    pps_kernels_mem_free(k, d);
    return out;
}

static void test_sumsq_on_crafted_inputs(void)
{
    struct pps_kernels *k = kx_open();
    float h[1000];
    double out = -1;

    CHECK(sumsq_of(k, (const float[]){3, 4}, 2) == 25.0);
    for (int i = 0; i < 1000; i++)
        h[i] = (float)(i + 1);
    CHECK(sumsq_of(k, h, 1000) == 333833500.0); /* exact in double */
    CHECK(sumsq_of(k, h, 13) == 819.0);         /* not a multiple of the 8 partial sums */
    /* Summed in double: FLT_MAX squared does not overflow. */
    CHECK(sumsq_of(k, (const float[]){FLT_MAX, FLT_MAX}, 2) == 2.0 * FLT_MAX * (double)FLT_MAX);
    CHECK(isinf(sumsq_of(k, (const float[]){1, INFINITY, 2}, 3)));
    CHECK(isinf(sumsq_of(k, (const float[]){-INFINITY}, 1)));
    CHECK(isnan(sumsq_of(k, (const float[]){1, NAN, 2}, 3)));
    CHECK_EQ_INT(pps_kernels_sumsq(k, 0, NULL, &out), 0);
    CHECK(out == 0.0);
    kx_close(k);
}

static size_t nonfinite_of(struct pps_kernels *k, const float *h, size_t n)
{
    float *d = kx_put(k, h, n);
    size_t out = 12345;
    CHECK_EQ_INT(pps_kernels_nonfinite(k, n, d, &out), 0);
    pps_kernels_mem_free(k, d);
    return out;
}

static void test_nonfinite_counts_inf_and_nan(void)
{
    struct pps_kernels *k = kx_open();
    float h[300];

    CHECK_EQ_INT(nonfinite_of(k,
                              (const float[]){1, INFINITY, -INFINITY, NAN, 0, FLT_MAX, -0.0f,
                                              FLT_MIN / 4, -FLT_MAX},
                              9),
                 3);
    for (int i = 0; i < 300; i++)
        h[i] = (float)i;
    CHECK_EQ_INT(nonfinite_of(k, h, 300), 0);
    h[299] = -NAN;
    CHECK_EQ_INT(nonfinite_of(k, h, 300), 1);
    h[0] = -INFINITY;
    CHECK_EQ_INT(nonfinite_of(k, h, 300), 2);
    CHECK_EQ_INT(nonfinite_of(k, h, 0), 0);
    kx_close(k);
}

/* ---- empty work and determinism ----------------------------------------------------------- */

static void test_empty_work_is_a_no_op(void)
{
    struct pps_kernels *k = kx_open();

    CHECK_EQ_INT(pps_kernels_gemm(k, 0, 0, 0, 5, 5, 1.0f, NULL, NULL, 0.0f, NULL), 0);
    CHECK_EQ_INT(pps_kernels_bias_grad(k, 0, 5, NULL, NULL), 0);
    CHECK_EQ_INT(pps_kernels_layernorm_forward(k, 0, 8, 1e-5f, NULL, NULL, NULL, NULL, NULL, NULL),
                 0);
    CHECK_EQ_INT(pps_kernels_gelu_forward(k, 0, NULL, NULL), 0);
    CHECK_EQ_INT(pps_kernels_embedding_backward(k, 0, 4, 10, NULL, NULL, NULL), 0);
    CHECK_EQ_INT(pps_kernels_add(k, 0, NULL, NULL, NULL), 0);
    CHECK_EQ_INT(pps_kernels_sync(k, NULL), 0);
    kx_close(k);
}

/* What one thread of the determinism test does: the products of a linear layer's F, B and W. */
struct gemm_job {
    const float *hx, *hw, *hdy;
    int rows, n_in, n_out, reps;
    float *y, *dx, *dw; /* host results, rows x n_out, rows x n_in, n_in x n_out */
    int same;           /* every repetition gave the bits of the first */
};

static void *gemm_job_run(void *arg)
{
    struct gemm_job *j = arg;
    struct pps_kernels *k = kx_open();
    size_t nx = (size_t)j->rows * j->n_in, nw = (size_t)j->n_in * j->n_out;
    size_t ny = (size_t)j->rows * j->n_out;
    float *x = kx_put(k, j->hx, nx), *w = kx_put(k, j->hw, nw), *dy = kx_put(k, j->hdy, ny);
    float *y = kx_alloc(k, ny), *dx = kx_alloc(k, nx), *dw = kx_alloc(k, nw);
    float *ty = kx_host(ny), *tdx = kx_host(nx), *tdw = kx_host(nw);

    j->same = 1;
    for (int rep = 0; rep < j->reps; rep++) {
        pps_kernels_zero(k, dw, nw * sizeof(float));
        pps_kernels_linear_forward(k, j->rows, j->n_in, j->n_out, x, w, NULL, y);
        pps_kernels_linear_backward(k, j->rows, j->n_in, j->n_out, x, w, dy, dx, dw, NULL);
        kx_get(k, rep ? ty : j->y, y, ny);
        kx_get(k, rep ? tdx : j->dx, dx, nx);
        kx_get(k, rep ? tdw : j->dw, dw, nw);
        if (rep && !(kx_same_bits(ty, j->y, ny) && kx_same_bits(tdx, j->dx, nx) &&
                     kx_same_bits(tdw, j->dw, nw)))
            j->same = 0;
    }
    free(ty), free(tdx), free(tdw);
    pps_kernels_mem_free(k, x), pps_kernels_mem_free(k, w), pps_kernels_mem_free(k, dy);
    pps_kernels_mem_free(k, y), pps_kernels_mem_free(k, dx), pps_kernels_mem_free(k, dw);
    kx_close(k);
    return NULL;
}

static void test_gemm_bitwise_same_from_concurrent_threads(void)
{
    enum { T = 4 };
    int rows = 96, n_in = 160, n_out = 136;
    float *hx = kx_random((size_t)rows * n_in, -1, 1), *hw = kx_random((size_t)n_in * n_out, -1, 1);
    float *hdy = kx_random((size_t)rows * n_out, -1, 1);
    struct gemm_job one, jobs[T];
    pthread_t th[T];

    /* One call alone, then T threads at once, each repeating it on its own context. */
    one = (struct gemm_job){hx, hw, hdy, rows, n_in, n_out, 1, NULL, NULL, NULL, 0};
    one.y = kx_host((size_t)rows * n_out), one.dx = kx_host((size_t)rows * n_in);
    one.dw = kx_host((size_t)n_in * n_out);
    gemm_job_run(&one);
    for (int t = 0; t < T; t++) {
        jobs[t] = one;
        jobs[t].reps = 3;
        jobs[t].y = kx_host((size_t)rows * n_out), jobs[t].dx = kx_host((size_t)rows * n_in);
        jobs[t].dw = kx_host((size_t)n_in * n_out);
        CHECK_EQ_INT(pthread_create(&th[t], NULL, gemm_job_run, &jobs[t]), 0);
    }
    for (int t = 0; t < T; t++) {
        pthread_join(th[t], NULL);
        CHECK(jobs[t].same);
        CHECK(kx_same_bits(jobs[t].y, one.y, (size_t)rows * n_out));
        CHECK(kx_same_bits(jobs[t].dx, one.dx, (size_t)rows * n_in));
        CHECK(kx_same_bits(jobs[t].dw, one.dw, (size_t)n_in * n_out));
        free(jobs[t].y), free(jobs[t].dx), free(jobs[t].dw);
    }
    free(one.y), free(one.dx), free(one.dw);
    free(hx), free(hw), free(hdy);
}

/*
 * A runtime slices weights out of one flat buffer, at float offsets that differ between a
 * pipeline stage and a single process holding every layer: the bits must not depend on where in
 * memory an operand starts.
 */
static void test_results_do_not_depend_on_alignment(void)
{
    static const int shapes[][3] = {{1, 40, 33}, {40, 1, 33}, {37, 29, 1}, {45, 31, 70}};
    struct pps_kernels *k = kx_open();
    /* Offsets in floats: any on cpu; on cuda multiples of 16 bytes, the alignment kernels.h
     * promises equal bits for (cuBLAS picks its kernel by the operands' alignment). */
    const int step = kx_align_floats(k);

    for (size_t s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++) {
        int m = shapes[s][0], n = shapes[s][1], kd = shapes[s][2];
        size_t na = (size_t)m * kd, nb = (size_t)kd * n, nc = (size_t)m * n;
        float *ha = kx_random(na, -1, 1), *hb = kx_random(nb, -1, 1), *hc = kx_random(nc, -1, 1);
        float *a = kx_alloc(k, na + 16), *b = kx_alloc(k, nb + 16), *c = kx_alloc(k, nc + 16);
        float *first[3] = {NULL, NULL, NULL};

        for (int i_off = 0; i_off < 4; i_off++) {
            int off = i_off * step, boff = (3 - i_off) * step;
            float *got[3];
            double sq;
            kx_set(k, a + off, ha, na);
            kx_set(k, b + boff, hb, nb);
            kx_set(k, c + off, hc, nc);
            pps_kernels_gemm(k, s & 1, s >> 1 & 1, m, n, kd, 1.0f, a + off, b + boff, 1.0f,
                             c + off);
            got[0] = kx_fetch(k, c + off, nc);
            /* Column sums, and a sum of squares, over the same misaligned data. */
            kx_set(k, c + off, hc, kd);
            pps_kernels_bias_grad(k, m, kd, a + off, c + off);
            got[1] = kx_fetch(k, c + off, kd);
            pps_kernels_sumsq(k, na, a + off, &sq);
            got[2] = kx_host(2);
            memcpy(got[2], &sq, sizeof(sq));
            for (int i = 0; i < 3; i++) {
                if (!first[i])
                    first[i] = got[i];
                else {
                    CHECK(kx_same_bits(got[i], first[i], i == 0 ? nc : i == 1 ? (size_t)kd : 2));
                    free(got[i]);
                }
            }
        }
        for (int i = 0; i < 3; i++)
            free(first[i]);
        free(ha), free(hb), free(hc);
        pps_kernels_mem_free(k, a), pps_kernels_mem_free(k, b), pps_kernels_mem_free(k, c);
    }
    kx_close(k);
}

static const struct test_case cases[] = {
    TEST(test_new_names_what_the_build_has),
    TEST(test_new_part_shares_or_splits_the_device),
    TEST(test_memory_round_trip),
    TEST(test_sync_reports_first_error_then_forgets),
    TEST(test_gemm_matches_reference_all_transposes),
    TEST(test_gemm_beta_zero_does_not_read_c),
    TEST(test_gemm_beta_one_accumulates),
    TEST(test_gemm_rejects_overlapping_c),
    TEST(test_bias_add_and_grad),
    TEST(test_linear_forward_with_and_without_bias),
    TEST(test_layernorm_forward_matches_reference),
    TEST(test_gelu_forward_tanh_approximation),
    TEST(test_add_and_scale),
    TEST(test_embedding_forward_gathers_rows),
    TEST(test_cross_entropy_forward_matches_reference),
    TEST(test_adamw_first_step_by_hand),
    TEST(test_adamw_later_steps_match_reference),
    TEST(test_adamw_rejects_bad_hyperparameters),
    TEST(test_sumsq_on_crafted_inputs),
    TEST(test_nonfinite_counts_inf_and_nan),
    TEST(test_empty_work_is_a_no_op),
    TEST(test_results_do_not_depend_on_alignment),
    TEST(test_gemm_bitwise_same_from_concurrent_threads),
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    kx_backend_or_skip_all(NULL);
    return test_main(cases, argc, argv);
}
