/*
 * test_model.c - the model behind compute.h's "model" flavour: its spec and partition, the
 * training text and sampler, initialisation independent of the partition, the bookkeeping of
 * live microbatches, the optimizer's side, and the gradients: against finite differences of the
 * loss, and a pipeline run by hand (p = 2..4, v = 1..2, even and uneven partitions, fused and
 * split B/W in zero-bubble orders) bitwise against the single-process reference.
 * test_model_learn.c checks that it learns.
 */
#include <math.h>
#include <stdint.h>
#include <unistd.h>

#include "model_fixture.h"
#include "model_int.h"
#include "test.h"

/* ---- spec and partition ------------------------------------------------------------------- */

static void test_spec_defaults_are_valid(void)
{
    struct pps_model_spec s;
    struct pps_err err = {0};
    pps_model_spec_init(&s);
    CHECK_EQ_INT(pps_model_spec_check(&s, &err), 0);
    CHECK_EQ_INT(s.vocab, 256);
    CHECK(s.data_path == NULL);
    /* Embedding, 4 blocks, final LN and head. */
    CHECK_EQ_INT(pps_model_param_count(&s),
                 256 * 64 + 4 * (2 * 64 + 64 * 256 + 256 + 256 * 64 + 64) + 2 * 64 + 64 * 256);
}

static void test_spec_check_names_the_bad_field(void)
{
    struct pps_model_spec s;
    struct pps_err err = {0};

    pps_model_spec_init(&s);
    s.vocab = 512;
    CHECK_EQ_INT(pps_model_spec_check(&s, &err), PPS_EINVAL);
    CHECK_STR_CONTAINS(err.msg, "vocab");
    pps_model_spec_init(&s);
    s.hidden = 0;
    CHECK_EQ_INT(pps_model_spec_check(&s, &err), PPS_EINVAL);
    CHECK_STR_CONTAINS(err.msg, "hidden");
    pps_model_spec_init(&s);
    s.adamw.beta2 = 1.0f;
    CHECK_EQ_INT(pps_model_spec_check(&s, &err), PPS_EINVAL);
    CHECK_STR_CONTAINS(err.msg, "AdamW");
    pps_model_spec_init(&s);
    s.seq_len = 1 << 20;
    s.micro_batch = 1 << 10;
    CHECK_EQ_INT(pps_model_spec_check(&s, &err), PPS_EINVAL);
}

static void test_partition_even_gives_remainder_to_the_earliest(void)
{
    struct pps_model_spec s = mx_small_spec(10);
    int fb[8];

    CHECK_EQ_INT(pps_model_partition(&s, 4, NULL, fb, NULL), 0);
    CHECK(fb[0] == 0 && fb[1] == 3 && fb[2] == 6 && fb[3] == 8 && fb[4] == 10);
    CHECK_EQ_INT(pps_model_partition(&s, 4, "", fb, NULL), 0);
    CHECK(fb[1] == 3 && fb[4] == 10);
    s.layers = 2; /* more virtual stages than blocks: empty ones at the end */
    CHECK_EQ_INT(pps_model_partition(&s, 4, NULL, fb, NULL), 0);
    CHECK(fb[0] == 0 && fb[1] == 1 && fb[2] == 2 && fb[3] == 2 && fb[4] == 2);
}

static void test_partition_explicit(void)
{
    struct pps_model_spec s = mx_small_spec(16);
    int fb[8];

    CHECK_EQ_INT(pps_model_partition(&s, 4, "3,5,5,3", fb, NULL), 0);
    CHECK(fb[0] == 0 && fb[1] == 3 && fb[2] == 8 && fb[3] == 13 && fb[4] == 16);
    CHECK_EQ_INT(pps_model_partition(&s, 4, " 0, 16 ,0,0", fb, NULL), 0);
    CHECK(fb[1] == 0 && fb[2] == 16 && fb[4] == 16);
}

static void test_partition_rejects_bad_strings(void)
{
    static const struct {
        const char *str, *says;
    } bad[] = {
        {"3,5,5", "3 entries, want one per virtual stage: 4"},
        {"3,5,5,3,0", "5 entries"},
        {"3,5,5,4", "sums to 17 blocks, the model has 16"},
        {"-1,6,6,5", "virtual stage 0 has -1 blocks"},
        {"3,x,5,3", "entry 2 is not a number"},
        {"3,,5,8", "entry 2 is not a number"},
        {"3,5,5,3,", "entry 5 is not a number"},
        {"3;5;5;3", "entry 1 is not a number"},
        {"3.5,5,5,2", "entry 1 is not a number"},
    };
    struct pps_model_spec s = mx_small_spec(16);
    int fb[8];

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct pps_err err = {0};
        CHECK_EQ_INT(pps_model_partition(&s, 4, bad[i].str, fb, &err), PPS_EINVAL);
        CHECK_STR_CONTAINS(err.msg, bad[i].says);
    }
    CHECK_EQ_INT(pps_model_partition(&s, 0, NULL, fb, NULL), PPS_EINVAL);
}

/* ---- text and sampler --------------------------------------------------------------------- */

static void test_data_sampler_is_deterministic_and_the_same_on_any_stage(void)
{
    struct pps_model_spec s = mx_small_spec(2);
    struct pps_model_data *d1 = mx_data(&s), *d2 = mx_data(&s);
    enum { N = 16 }; /* B * T */
    int32_t ids[N], tg[N], ids2[N], tg2[N], other[N];

    CHECK(strcmp(d1->path, PPS_MODEL_BUILTIN_TEXT) == 0);
    CHECK(d1->len > 8000);
    /* The first stage asks for tokens, the last for targets, each from its own copy. */
    CHECK_EQ_INT(pps_model_data_sample(d1, &s, 7, 3, ids, tg, NULL), 0);
    CHECK_EQ_INT(pps_model_data_sample(d2, &s, 7, 3, ids2, NULL, NULL), 0);
    CHECK_EQ_INT(pps_model_data_sample(d2, &s, 7, 3, NULL, tg2, NULL), 0);
    CHECK(memcmp(ids, ids2, sizeof(ids)) == 0);
    CHECK(memcmp(tg, tg2, sizeof(tg)) == 0);
    for (int b = 0; b < s.micro_batch; b++) {
        size_t off = pps_model_data_offset(d1, &s, 7, 3, b);
        CHECK(off + (size_t)s.seq_len + 1 <= d1->len);
        for (int t = 0; t < s.seq_len; t++) {
            CHECK_EQ_INT(ids[b * s.seq_len + t], d1->bytes[off + t]);
            CHECK_EQ_INT(tg[b * s.seq_len + t], d1->bytes[off + t + 1]);
        }
    }
    /* Another microbatch, another iteration, another seed: other text. */
    CHECK_EQ_INT(pps_model_data_sample(d1, &s, 7, 4, other, NULL, NULL), 0);
    CHECK(memcmp(ids, other, sizeof(ids)) != 0);
    CHECK_EQ_INT(pps_model_data_sample(d1, &s, 8, 3, other, NULL, NULL), 0);
    CHECK(memcmp(ids, other, sizeof(ids)) != 0);
    s.seed++;
    CHECK_EQ_INT(pps_model_data_sample(d1, &s, 7, 3, other, NULL, NULL), 0);
    CHECK(memcmp(ids, other, sizeof(ids)) != 0);
    pps_model_data_free(d1);
    pps_model_data_free(d2);
}

/* Regression: the default text was /usr/share/common-licenses/GPL-3, which only Debian has. It is
 * now runtime/model_text.txt compiled in: the same bytes, from any directory, with no file. */
static void test_default_text_is_built_in(void)
{
    struct pps_model_spec s = mx_small_spec(2);
    struct pps_model_data *d = NULL, *f = NULL;
    char cwd[4096], dir[] = "/tmp/pps_model_cwdXXXXXX";

    /* From an empty directory, as an installed ppscope runs from anywhere. */
    CHECK(getcwd(cwd, sizeof(cwd)) != NULL);
    CHECK(mkdtemp(dir) != NULL);
    CHECK_EQ_INT(chdir(dir), 0);
    d = mx_data(&s);
    CHECK_EQ_INT(chdir(cwd), 0);
    rmdir(dir);
    CHECK(strcmp(d->path, PPS_MODEL_BUILTIN_TEXT) == 0);

    /* --data FILE still reads the file: here, the one the built-in text was made from. */
    s.data_path = PPS_TEST_MODEL_TEXT;
    f = mx_data(&s);
    CHECK(strcmp(f->path, PPS_TEST_MODEL_TEXT) == 0);
    CHECK(f->len >= 8000 && f->len <= 20000);
    CHECK_EQ_INT(d->len, f->len);
    CHECK(memcmp(d->bytes, f->bytes, d->len) == 0);
    pps_model_data_free(d);
    pps_model_data_free(f);
}

static void test_data_offsets_cover_the_text(void)
{
    struct pps_model_spec s = mx_small_spec(2);
    struct pps_model_data *d = mx_data(&s);
    size_t lo = SIZE_MAX, hi = 0;

    for (int i = 0; i < 2000; i++) {
        size_t off = pps_model_data_offset(d, &s, i, i % 5, i % 2);
        lo = off < lo ? off : lo;
        hi = off > hi ? off : hi;
        CHECK(off <= d->len - (size_t)s.seq_len - 1);
    }
    CHECK(lo < d->len / 50);
    CHECK(hi > d->len - d->len / 50);
    pps_model_data_free(d);
}

static void test_data_missing_or_short_text_fails_clearly(void)
{
    struct pps_model_spec s = mx_small_spec(2);
    struct pps_model_data *d = NULL;
    struct pps_err err = {0};
    char path[] = "/tmp/pps_model_textXXXXXX";
    int fd;

    s.data_path = "/nonexistent/ppscope/text.txt";
    CHECK_EQ_INT(pps_model_data_new(&s, &d, &err), PPS_ENOENT);
    CHECK(d == NULL);
    CHECK_STR_CONTAINS(err.msg, "/nonexistent/ppscope/text.txt");

    fd = mkstemp(path);
    CHECK(fd >= 0);
    CHECK_EQ_INT(write(fd, "12345678", 8), 8); /* T = 8 needs 9 */
    close(fd);
    s.data_path = path;
    CHECK_EQ_INT(pps_model_data_new(&s, &d, &err), PPS_EINVAL);
    CHECK_STR_CONTAINS(err.msg, "need at least seq_len + 1 = 9");
    s.seq_len = 7; /* exactly one sequence: every draw starts at 0 */
    CHECK_EQ_INT(pps_model_data_new(&s, &d, &err), 0);
    CHECK_EQ_INT(d->len, 8);
    CHECK_EQ_INT(pps_model_data_offset(d, &s, 3, 1, 1), 0);
    pps_model_data_free(d);
    unlink(path);
}

/* ---- initialisation ----------------------------------------------------------------------- */

static void test_init_is_independent_of_the_partition(void)
{
    static const struct {
        int p, v;
        const char *partition;
    } cuts[] = {
        {1, 1, NULL}, {3, 1, "1,2,3"}, {3, 1, "3,0,3"}, {2, 2, NULL}, {4, 2, "0,1,0,2,0,0,3,0"}};
    struct pps_model_spec s = mx_small_spec(6);
    struct pps_model_data *d = mx_data(&s);
    float *want = NULL;
    size_t n_want = 0;

    for (size_t i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++) {
        struct mx_pipe pp;
        size_t n;
        float *got;
        mx_pipe_open(&pp, &s, d, cuts[i].p, cuts[i].v, 1, cuts[i].partition);
        got = mx_pipe_export(&pp, 0, &n);
        CHECK_EQ_INT(n, pps_model_param_count(&s));
        if (!want) {
            want = got, n_want = n;
        } else {
            CHECK(n == n_want && memcmp(got, want, n * sizeof(float)) == 0);
            free(got);
        }
        mx_pipe_close(&pp);
    }
    /* LN gammas start at 1, biases at 0, weights within their bounds and not all equal. */
    {
        size_t h = 16, emb = 256 * h;
        CHECK(want[emb] == 1.0f && want[emb + h] == 0.0f);
        CHECK(fabsf(want[emb + 2 * h]) <= 0.25f && want[emb + 2 * h] != want[emb + 2 * h + 1]);
        CHECK(fabsf(want[0]) <= 1.0f && want[0] != want[1]);
    }
    /* Another seed, other parameters. */
    {
        struct mx_pipe pp;
        size_t n;
        float *got;
        s.seed++;
        mx_pipe_open(&pp, &s, d, 1, 1, 1, NULL);
        got = mx_pipe_export(&pp, 0, &n);
        CHECK(memcmp(got, want, n * sizeof(float)) != 0);
        free(got);
        mx_pipe_close(&pp);
    }
    free(want);
    pps_model_data_free(d);
}

/* ---- construction and calls out of order -------------------------------------------------- */

static void test_new_rejects_bad_arguments(void)
{
    struct pps_model_spec s = mx_small_spec(4);
    struct pps_model_data *d = mx_data(&s);
    struct pps_compute *c = NULL;
    struct pps_err err = {0};
    int fb[3] = {0, 2, 4}, bad[3] = {0, 3, 2};

    CHECK_EQ_INT(pps_model_compute_new(&s, "cpu", 2, 1, PPS_PLACE_LOOP, 4, 2, 0, fb, d, &c, &err), PPS_EINVAL);
    CHECK_STR_CONTAINS(err.msg, "out of range");
    CHECK_EQ_INT(pps_model_compute_new(&s, "cpu", 2, 1, PPS_PLACE_LOOP, 0, 0, 0, fb, d, &c, &err), PPS_EINVAL);
    CHECK_STR_CONTAINS(err.msg, "microbatches");
    CHECK_EQ_INT(pps_model_compute_new(&s, "cpu", 2, 1, PPS_PLACE_LOOP, 4, 0, 0, bad, d, &c, &err), PPS_EINVAL);
    CHECK_EQ_INT(pps_model_compute_new(&s, "cpu", 2, 1, PPS_PLACE_LOOP, 4, 0, 0, fb, NULL, &c, &err), PPS_EINVAL);
    CHECK_EQ_INT(pps_model_compute_new(&s, "tpu", 2, 1, PPS_PLACE_LOOP, 4, 0, 0, fb, d, &c, &err), PPS_EINVAL);
    CHECK_STR_CONTAINS(err.msg, "tpu");
    CHECK(c == NULL);
    /* A middle chunk needs no text. */
    {
        int fb3[4] = {0, 1, 2, 4};
        CHECK_EQ_INT(pps_model_compute_new(&s, "cpu", 3, 1, PPS_PLACE_LOOP, 4, 1, 0, fb3, NULL, &c, &err), 0);
        CHECK(c && !c->first && !c->last && c->vstage == 1 && strcmp(c->ops->name, "model") == 0);
        CHECK(isnan(c->ops->loss_sum(c)));
        c->ops->free(c);
    }
    pps_model_data_free(d);
}

static void test_calls_out_of_order_fail_with_a_reason(void)
{
    struct pps_model_spec s = mx_small_spec(2);
    struct pps_model_data *d = mx_data(&s);
    struct mx_pipe pp;
    struct pps_compute *c;
    struct pps_err err = {0};

    mx_pipe_open(&pp, &s, d, 2, 1, 2, NULL);
    c = pp.chunk[0];
    CHECK_EQ_INT(c->ops->backward_b(c, 0, 0, pp.grad[1][0], NULL, &err), PPS_EINVAL);
    CHECK_STR_CONTAINS(err.msg, "backward_b of iteration 0 microbatch 0, which has no forward");
    CHECK_EQ_INT(c->ops->forward(c, 0, 0, NULL, pp.act[0][0], &err), 0);
    CHECK_EQ_INT(c->ops->forward(c, 0, 0, NULL, pp.act[0][0], &err), PPS_EINVAL);
    CHECK_STR_CONTAINS(err.msg, "twice");
    CHECK_EQ_INT(c->ops->backward_w(c, 0, 0, &err), PPS_EINVAL);
    CHECK_STR_CONTAINS(err.msg, "a forward but no backward_b");
    CHECK_EQ_INT(c->ops->forward(c, 0, 1, NULL, NULL, &err), PPS_EINVAL);
    CHECK_STR_CONTAINS(err.msg, "output buffer");
    /* The last stage needs its input. */
    CHECK_EQ_INT(pp.chunk[1]->ops->forward(pp.chunk[1], 0, 0, NULL, NULL, &err), PPS_EINVAL);
    CHECK_EQ_INT(c->ops->restore_state(c, &err), PPS_EINVAL);
    CHECK_STR_CONTAINS(err.msg, "without save_state");
    CHECK_EQ_INT(c->ops->step(c, 1.0, 0, &err), PPS_EINVAL);
    mx_pipe_close(&pp); /* with a microbatch still live: freed all the same */
    pps_model_data_free(d);
}

/* ---- memory accounting -------------------------------------------------------------------- */

static void test_act_bytes_count_live_microbatches(void)
{
    struct pps_model_spec s = mx_small_spec(5);
    struct pps_model_data *d = mx_data(&s);
    struct pps_err err = {0};
    struct mx_pipe pp;
    int m = 3;

    mx_pipe_open(&pp, &s, d, 3, 1, m, "2,0,3");
    for (int mb = 0; mb < m; mb++)
        for (int vs = 0; vs < 3; vs++) {
            struct pps_compute *c = pp.chunk[vs];
            CHECK_EQ_INT(c->ops->forward(c, 0, mb, vs ? pp.act[vs - 1][mb] : NULL,
                                         vs < 2 ? pp.act[vs][mb] : NULL, &err),
                         0);
        }
    for (int vs = 0; vs < 3; vs++) {
        struct pps_compute *c = pp.chunk[vs];
        int nb = pp.first_block[vs + 1] - pp.first_block[vs];
        size_t after_f, after_b;
        pps_model_act_bytes(&s, nb, c->first, c->last, &after_f, &after_b);
        CHECK_EQ_INT(c->ops->act_bytes(c), m * after_f);
        CHECK_EQ_INT(c->ops->pending_w(c), 0);
        if (vs == 1)
            CHECK_EQ_INT(after_f, 0); /* passes through: holds nothing */
        else
            CHECK(after_f > 0 && after_b > 0);
    }
    for (int mb = 0; mb < m; mb++)
        for (int vs = 2; vs >= 0; vs--) {
            struct pps_compute *c = pp.chunk[vs];
            CHECK_EQ_INT(c->ops->backward_b(c, 0, mb, vs < 2 ? pp.grad[vs + 1][mb] : NULL,
                                            vs ? pp.grad[vs][mb] : NULL, &err),
                         0);
        }
    for (int vs = 0; vs < 3; vs++) {
        struct pps_compute *c = pp.chunk[vs];
        int nb = pp.first_block[vs + 1] - pp.first_block[vs];
        size_t after_b;
        pps_model_act_bytes(&s, nb, c->first, c->last, NULL, &after_b);
        CHECK_EQ_INT(c->ops->act_bytes(c), m * after_b);
        CHECK_EQ_INT(c->ops->pending_w(c), m);
        for (int mb = 0; mb < m; mb++) {
            CHECK_EQ_INT(c->ops->backward_w(c, 0, mb, &err), 0);
            CHECK_EQ_INT(c->ops->act_bytes(c), (size_t)(m - 1 - mb) * after_b);
            CHECK_EQ_INT(c->ops->pending_w(c), m - 1 - mb);
        }
    }
    mx_pipe_close(&pp);
    pps_model_data_free(d);
}

/* ---- gradients: the pipeline against the reference ---------------------------------------- */

/* An uneven cut of L blocks over n virtual stages, empty ones included: block i goes to virtual
 * stage (3i + 1) mod n. */
static void uneven_partition(int layers, int n, char *buf, size_t len)
{
    int counts[64] = {0};
    size_t used = 0;
    for (int i = 0; i < layers; i++)
        counts[(3 * i + 1) % n]++;
    for (int i = 0; i < n; i++)
        used += (size_t)snprintf(buf + used, len - used, "%s%d", i ? "," : "", counts[i]);
}

static void test_pipeline_gradients_equal_the_reference_bitwise(void)
{
    static const char *const order_name[] = {"fused BW", "all B then W", "zero-bubble B/W"};
    struct pps_model_spec s = mx_small_spec(5);
    struct pps_model_data *d = mx_data(&s);
    struct pps_err err = {0};
    int iter = 3, runs = 0;

    for (int m = 3; m <= 4; m++) {
        float *want = NULL;
        size_t n_want = 0;
        double want_loss = 0;
        CHECK_EQ_INT(pps_model_reference(&s, "cpu", m, iter, &want, &n_want, &want_loss, &err), 0);
        CHECK_EQ_INT(n_want, pps_model_param_count(&s));
        CHECK(want_loss > 4.5 && want_loss < 6.5); /* about ln 256 = 5.55 at the start */
        for (int p = 2; p <= 4; p++)
            for (int v = 1; v <= 2; v++)
                for (int cut = 0; cut < 2; cut++)
                    for (int order = MX_FUSED; order <= MX_ZB; order++) {
                        char partition[256];
                        struct mx_pipe pp;
                        float *got;
                        size_t n;
                        double loss;
                        if (m == 3 && (v == 2 || cut == 1))
                            continue; /* m = 3 only checks 1/m that is not a power of two */
                        uneven_partition(s.layers, p * v, partition, sizeof(partition));
                        mx_pipe_open(&pp, &s, d, p, v, m, cut ? partition : NULL);
                        mx_pipe_iteration(&pp, iter, order);
                        got = mx_pipe_export(&pp, 1, &n);
                        loss = pp.chunk[pp.n - 1]->ops->loss_sum(pp.chunk[pp.n - 1]) / m;
                        if (n != n_want || memcmp(got, want, n * sizeof(float)) != 0 ||
                            memcmp(&loss, &want_loss, sizeof(loss)) != 0) {
                            fprintf(stderr, "  p=%d v=%d m=%d partition %s, %s: differs\n", p, v, m,
                                    cut ? partition : "even", order_name[order]);
                            CHECK(0);
                        }
                        for (int vs = 0; vs < pp.n; vs++) {
                            CHECK_EQ_INT(pp.chunk[vs]->ops->act_bytes(pp.chunk[vs]), 0);
                            CHECK_EQ_INT(pp.chunk[vs]->ops->pending_w(pp.chunk[vs]), 0);
                        }
                        free(got);
                        mx_pipe_close(&pp);
                        runs++;
                    }
        free(want);
    }
    CHECK_EQ_INT(runs, 3 * 2 * 2 * 3 + 3 * 3);
    pps_model_data_free(d);
}

/* A second iteration on the same chunks: zero_grads restarts the sums, loss_sum restarts. */
static void test_second_iteration_equals_its_reference(void)
{
    struct pps_model_spec s = mx_small_spec(3);
    struct pps_model_data *d = mx_data(&s);
    struct pps_err err = {0};
    struct mx_pipe pp;
    float *want, *got;
    size_t n_want, n;
    double want_loss, loss;

    mx_pipe_open(&pp, &s, d, 2, 1, 2, NULL);
    mx_pipe_iteration(&pp, 0, MX_ZB);
    mx_pipe_iteration(&pp, 1, MX_ALL_B_FIRST);
    CHECK_EQ_INT(pps_model_reference(&s, "cpu", 2, 1, &want, &n_want, &want_loss, &err), 0);
    got = mx_pipe_export(&pp, 1, &n);
    loss = pp.chunk[1]->ops->loss_sum(pp.chunk[1]) / 2;
    CHECK(n == n_want && memcmp(got, want, n * sizeof(float)) == 0);
    CHECK(memcmp(&loss, &want_loss, sizeof(loss)) == 0);
    free(got), free(want);
    mx_pipe_close(&pp);
    pps_model_data_free(d);
}

/* ---- gradients: against finite differences of the loss ------------------------------------ */

/* The iteration's mean loss over m microbatches at the chunk's current parameters. */
static double mean_loss(struct pps_compute *c, int m, int *iter)
{
    struct pps_err err = {0};
    (*iter)++;
    for (int mb = 0; mb < m; mb++) {
        if (c->ops->forward(c, *iter, mb, NULL, NULL, &err) < 0 ||
            c->ops->backward_bw(c, *iter, mb, NULL, NULL, &err) < 0)
            mx_die("mean_loss", &err);
    }
    return c->ops->loss_sum(c) / m;
}

static void test_gradients_match_finite_differences(void)
{
    struct pps_model_spec s = mx_small_spec(2);
    struct pps_model_data *d;
    struct pps_compute *c = NULL;
    struct pps__model_chunk *mc;
    struct pps_err err = {0};
    int fb[2] = {0, 2}, m = 2, iter = 0, bad = 0, checked = 0;
    float *grads;
    size_t n, pos = 0;
    double worst = 0;

    /* A tiny model, so the float loss moves by much more than its rounding, on a text of
     * exactly one sequence: every iteration then draws the same tokens, and each evaluation of
     * the loss (a fresh iteration number, since the chunk keeps microbatches by iteration) sees
     * the same data. */
    s.hidden = 4, s.seq_len = 6, s.micro_batch = 2, s.mlp_ratio = 2;
    {
        static const char text[] = "abracadabra";
        char path[] = "/tmp/pps_model_fdXXXXXX";
        int fd = mkstemp(path);
        CHECK(fd >= 0);
        CHECK_EQ_INT(write(fd, text, 7), 7); /* T + 1 = 7 bytes: a single sequence */
        close(fd);
        s.data_path = path;
        d = mx_data(&s);
        unlink(path);
        s.data_path = NULL;
    }
    CHECK_EQ_INT(pps_model_compute_new(&s, "cpu", 1, 1, PPS_PLACE_LOOP, m, 0, 0, fb, d, &c, &err), 0);
    mc = (struct pps__model_chunk *)(void *)c;
    CHECK_EQ_INT(c->ops->zero_grads(c, &err), 0);
    mean_loss(c, m, &iter);
    CHECK_EQ_INT(c->ops->export_grads(c, NULL, &n, &err), 0);
    grads = malloc(n * sizeof(float));
    CHECK_EQ_INT(c->ops->export_grads(c, grads, &n, &err), 0);

    /* Up to 12 elements of every tensor, spread over it. */
    for (int t = 0; t < mc->n_tensors; t++) {
        const struct pps__model_tensor *tt = &mc->tensors[t];
        size_t step = tt->n > 12 ? tt->n / 12 : 1;
        for (size_t i = 0; i < tt->n; i += step) {
            float *dev = mc->params + tt->off + i, x0, xp, xm;
            double fp, fm, fd, g = grads[pos + i], tol;
            pps_kernels_copy_out(mc->k, &x0, dev, sizeof(float));
            xp = x0 + 1e-2f, xm = x0 - 1e-2f;
            pps_kernels_copy_in(mc->k, dev, &xp, sizeof(float));
            fp = mean_loss(c, m, &iter);
            pps_kernels_copy_in(mc->k, dev, &xm, sizeof(float));
            fm = mean_loss(c, m, &iter);
            pps_kernels_copy_in(mc->k, dev, &x0, sizeof(float));
            fd = (fp - fm) / ((double)xp - (double)xm);
            tol = 2e-3 + 2e-2 * fabs(fd);
            if (fabs(fd - g) > worst)
                worst = fabs(fd - g);
            if (!(fabs(fd - g) <= tol)) {
                if (bad++ < 5)
                    fprintf(stderr, "  %s[%zu]: gradient %.6g, finite difference %.6g\n", tt->name,
                            i, g, fd);
            }
            checked++;
        }
        pos += tt->n;
    }
    if (getenv("KX_VERBOSE"))
        fprintf(stderr, "  %d elements, max error %.3g\n", checked, worst);
    CHECK_EQ_INT(bad, 0);
    CHECK(checked > 80);
    free(grads);
    c->ops->free(c);
    pps_model_data_free(d);
}

/* ---- the optimizer's side ----------------------------------------------------------------- */

static void test_grad_stats_sum_every_gradient(void)
{
    struct pps_model_spec s = mx_small_spec(3);
    struct pps_model_data *d = mx_data(&s);
    struct pps_err err = {0};
    struct mx_pipe pp;
    double total = 0, want = 0, again;
    size_t n;
    float *g;

    mx_pipe_open(&pp, &s, d, 2, 1, 2, "1,2");
    mx_pipe_iteration(&pp, 0, MX_FUSED);
    for (int vs = 0; vs < 2; vs++) {
        double sq = -1;
        size_t nf = 1;
        CHECK_EQ_INT(pp.chunk[vs]->ops->grad_stats(pp.chunk[vs], &sq, &nf, &err), 0);
        CHECK_EQ_INT(nf, 0);
        total += sq;
    }
    g = mx_pipe_export(&pp, 1, &n);
    for (size_t i = 0; i < n; i++)
        want += (double)g[i] * g[i];
    CHECK(total > 0);
    CHECK_NEAR(total, want, 1e-9 * want);
    /* Deterministic: the same bits when asked again. */
    {
        double first, second;
        CHECK_EQ_INT(pp.chunk[1]->ops->grad_stats(pp.chunk[1], &first, NULL, &err), 0);
        CHECK_EQ_INT(pp.chunk[1]->ops->grad_stats(pp.chunk[1], &second, NULL, &err), 0);
        CHECK(memcmp(&first, &second, sizeof(first)) == 0);
    }
    /* A non-finite gradient is counted (planted through the chunk's device buffer). */
    {
        struct pps__model_chunk *mc = (struct pps__model_chunk *)(void *)pp.chunk[0];
        float inf = INFINITY;
        size_t nf = 0;
        pps_kernels_copy_in(mc->k, mc->grads + mc->tensors[1].off, &inf, sizeof(float));
        CHECK_EQ_INT(pp.chunk[0]->ops->grad_stats(pp.chunk[0], &again, &nf, &err), 0);
        CHECK_EQ_INT(nf, 1);
        CHECK(isinf(again));
    }
    free(g);
    mx_pipe_close(&pp);
    pps_model_data_free(d);
}

static void test_save_restore_is_bitwise(void)
{
    struct pps_model_spec s = mx_small_spec(2);
    struct pps_model_data *d = mx_data(&s);
    struct pps_err err = {0};
    struct mx_pipe pp;
    float *p0, *p1, *p2, *p3, *g0, *g1;
    size_t n;

    mx_pipe_open(&pp, &s, d, 2, 1, 2, NULL);
    /* A first step, so the moments are not zero. */
    mx_pipe_iteration(&pp, 0, MX_FUSED);
    for (int vs = 0; vs < 2; vs++)
        CHECK_EQ_INT(pp.chunk[vs]->ops->step(pp.chunk[vs], 1.0, 1, &err), 0);
    mx_pipe_iteration(&pp, 1, MX_ZB);
    p0 = mx_pipe_export(&pp, 0, &n);
    g0 = mx_pipe_export(&pp, 1, &n);
    for (int vs = 0; vs < 2; vs++) {
        CHECK_EQ_INT(pp.chunk[vs]->ops->save_state(pp.chunk[vs], &err), 0);
        CHECK_EQ_INT(pp.chunk[vs]->ops->step(pp.chunk[vs], 0.5, 2, &err), 0);
    }
    p1 = mx_pipe_export(&pp, 0, &n);
    g1 = mx_pipe_export(&pp, 1, &n);
    CHECK(memcmp(p0, p1, n * sizeof(float)) != 0);
    CHECK(memcmp(g0, g1, n * sizeof(float)) == 0); /* step scales a copy */
    /* Rolled back: the parameters as before; redone: the same step again, moments included. */
    for (int vs = 0; vs < 2; vs++)
        CHECK_EQ_INT(pp.chunk[vs]->ops->restore_state(pp.chunk[vs], &err), 0);
    p2 = mx_pipe_export(&pp, 0, &n);
    CHECK(memcmp(p0, p2, n * sizeof(float)) == 0);
    for (int vs = 0; vs < 2; vs++)
        CHECK_EQ_INT(pp.chunk[vs]->ops->step(pp.chunk[vs], 0.5, 2, &err), 0);
    p3 = mx_pipe_export(&pp, 0, &n);
    CHECK(memcmp(p1, p3, n * sizeof(float)) == 0);
    /* And a step with another scale differs. */
    for (int vs = 0; vs < 2; vs++) {
        CHECK_EQ_INT(pp.chunk[vs]->ops->restore_state(pp.chunk[vs], &err), 0);
        CHECK_EQ_INT(pp.chunk[vs]->ops->step(pp.chunk[vs], 1.0, 2, &err), 0);
    }
    free(p2);
    p2 = mx_pipe_export(&pp, 0, &n);
    CHECK(memcmp(p1, p2, n * sizeof(float)) != 0);
    free(p0), free(p1), free(p2), free(p3), free(g0), free(g1);
    mx_pipe_close(&pp);
    pps_model_data_free(d);
}

static void test_loss_sum_restarts_each_iteration(void)
{
    struct pps_model_spec s = mx_small_spec(1);
    struct pps_model_data *d = mx_data(&s);
    struct pps_err err = {0};
    struct mx_pipe pp;
    double one, two;

    mx_pipe_open(&pp, &s, d, 1, 1, 2, NULL);
    CHECK(pp.chunk[0]->ops->loss_sum(pp.chunk[0]) == 0.0);
    CHECK_EQ_INT(pp.chunk[0]->ops->forward(pp.chunk[0], 5, 0, NULL, NULL, &err), 0);
    one = pp.chunk[0]->ops->loss_sum(pp.chunk[0]);
    CHECK_EQ_INT(pp.chunk[0]->ops->forward(pp.chunk[0], 5, 1, NULL, NULL, &err), 0);
    two = pp.chunk[0]->ops->loss_sum(pp.chunk[0]);
    CHECK(one > 0 && two > one);
    CHECK_EQ_INT(pp.chunk[0]->ops->forward(pp.chunk[0], 6, 0, NULL, NULL, &err), 0);
    CHECK(pp.chunk[0]->ops->loss_sum(pp.chunk[0]) < two);
    mx_pipe_close(&pp);
    pps_model_data_free(d);
}

static const struct test_case cases[] = {
    TEST(test_spec_defaults_are_valid),
    TEST(test_spec_check_names_the_bad_field),
    TEST(test_partition_even_gives_remainder_to_the_earliest),
    TEST(test_partition_explicit),
    TEST(test_partition_rejects_bad_strings),
    TEST(test_data_sampler_is_deterministic_and_the_same_on_any_stage),
    TEST(test_default_text_is_built_in),
    TEST(test_data_offsets_cover_the_text),
    TEST(test_data_missing_or_short_text_fails_clearly),
    TEST(test_init_is_independent_of_the_partition),
    TEST(test_new_rejects_bad_arguments),
    TEST(test_calls_out_of_order_fail_with_a_reason),
    TEST(test_act_bytes_count_live_microbatches),
    TEST(test_pipeline_gradients_equal_the_reference_bitwise),
    TEST(test_second_iteration_equals_its_reference),
    TEST(test_gradients_match_finite_differences),
    TEST(test_grad_stats_sum_every_gradient),
    TEST(test_save_restore_is_bitwise),
    TEST(test_loss_sum_restarts_each_iteration),
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    return test_main(cases, argc, argv);
}
