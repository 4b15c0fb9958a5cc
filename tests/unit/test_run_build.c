/*
 * test_run_build.c - storage/run_build.h, the one path from rows to a run that the loader and
 * the follower share: rows given in batches make the run one batch makes, span for span,
 * whatever their order; a batch after a drop starts from what is left; counting keeps nothing.
 */
#include "test.h"
#include "run_build.h"
#include "storage_int.h" /* pps__span_cmp(), pps__metric_cmp() */

#define N_SPANS  6000
#define N_STAGES 3

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* Spans roughly in time order, as a rank writes them, with one in 20 from the past; every
 * (start, end) distinct, so that one order is right. */
static void make_spans(struct pps_span *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        int64_t t = (int64_t)i * 1000 + (int64_t)(next() % 500);
        if (next() % 20 == 0)
            t -= (int64_t)(next() % 200) * 1000;
        memset(&s[i], 0, sizeof(s[i]));
        s[i].stage = (int16_t)(next() % N_STAGES);
        s[i].iter = (int32_t)(i / 500);
        s[i].mb = (int32_t)(i % 8);
        s[i].peer = s[i].name_id = -1;
        s[i].kind = PPS_SPAN_F;
        s[i].start_ns = t * 8 + (int64_t)(i % 8);
        s[i].end_ns = s[i].start_ns + 700;
    }
}

static void make_metrics(struct pps_metric *m, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        memset(&m[i], 0, sizeof(m[i]));
        m[i].iter = (int32_t)(i / N_STAGES);
        m[i].stage = (int32_t)(i % N_STAGES);
        if (i % 9 == 4) /* a rank behind the others */
            m[i].iter -= 2;
        m[i].loss = (double)i;
    }
}

static struct pps_run *new_run(void)
{
    struct pps_run *run = calloc(1, sizeof(*run));
    CHECK(run != NULL);
    return run;
}

/* Builds spans[0..n) and metrics[0..nm) into a new run in batches cut at the given points. */
static struct pps_run *build(const struct pps_span *spans, size_t n, const struct pps_metric *m,
                             size_t nm, const size_t *cuts, size_t n_cuts, int *moved)
{
    struct pps_run *run = new_run();
    struct pps__run_build b;
    size_t from = 0, mfrom = 0;

    pps__run_build_init(&b, run, 0);
    *moved = 0;
    for (size_t c = 0; c <= n_cuts; c++) {
        size_t to = c < n_cuts ? cuts[c] : n, mto = c < n_cuts ? nm * cuts[c] / n : nm;
        int rc;
        pps__run_build_begin(&b);
        CHECK_EQ_INT(pps__run_build_stages(&b, N_STAGES), 0);
        for (size_t i = from; i < to; i++)
            CHECK_EQ_INT(pps__run_build_span(&b, &spans[i]), 0);
        CHECK_EQ_INT(pps__run_build_metrics(&b, m ? m + mfrom : NULL, mto - mfrom), 0);
        rc = pps__run_build_end(&b);
        CHECK(rc == 0 || rc == 1);
        *moved |= rc;
        from = to;
        mfrom = mto;
    }
    pps__run_build_release(&b);
    return run;
}

static void check_same(const struct pps_run *a, const struct pps_run *b)
{
    CHECK_EQ_INT(a->n_stages, b->n_stages);
    CHECK_EQ_INT((long)a->n_spans, (long)b->n_spans);
    CHECK_EQ_INT(a->n_iters, b->n_iters);
    CHECK(a->t_min == b->t_min && a->t_max == b->t_max);
    for (int s = 0; s < a->n_stages; s++) {
        CHECK_EQ_INT((long)a->stages[s].n, (long)b->stages[s].n);
        for (size_t k = 0; k < a->stages[s].n; k++)
            CHECK(memcmp(&a->stages[s].spans[k], &b->stages[s].spans[k], sizeof(struct pps_span)) ==
                  0);
    }
    CHECK_EQ_INT((long)a->n_metrics, (long)b->n_metrics);
    for (size_t k = 0; k < a->n_metrics; k++)
        CHECK(a->metrics[k].iter == b->metrics[k].iter &&
              a->metrics[k].stage == b->metrics[k].stage);
}

static void check_sorted(const struct pps_run *run)
{
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    size_t total = 0;

    for (int s = 0; s < run->n_stages; s++) {
        const struct pps_stage_spans *st = &run->stages[s];
        for (size_t k = 0; k < st->n; k++) {
            CHECK(k == 0 || pps__span_cmp(&st->spans[k - 1], &st->spans[k]) <= 0);
            lo = st->spans[k].start_ns < lo ? st->spans[k].start_ns : lo;
            hi = st->spans[k].end_ns > hi ? st->spans[k].end_ns : hi;
        }
        total += st->n;
    }
    CHECK_EQ_INT((long)total, (long)run->n_spans);
    CHECK(run->t_min == lo && run->t_max == hi);
    for (size_t k = 1; k < run->n_metrics; k++)
        CHECK(pps__metric_cmp(&run->metrics[k - 1], &run->metrics[k]) <= 0);
}

/* What the follower's polls make is what the loader's one batch makes. */
static void test_batches_make_the_run_one_batch_makes(void)
{
    static struct pps_span spans[N_SPANS];
    static struct pps_metric m[120];
    const size_t cuts[] = {1, 2, 700, 701, 1999, 3000, 3001, 4500, 5990};
    struct pps_run *one, *many;
    int moved_one, moved_many;

    make_spans(spans, N_SPANS);
    make_metrics(m, 120);
    one = build(spans, N_SPANS, m, 120, NULL, 0, &moved_one);
    many = build(spans, N_SPANS, m, 120, cuts, sizeof(cuts) / sizeof(*cuts), &moved_many);
    check_sorted(one);
    check_same(one, many);
    CHECK_EQ_INT(moved_one, 0);  /* nothing was held before the one batch */
    CHECK_EQ_INT(moved_many, 1); /* a span from the past moved those held */
    CHECK_EQ_INT(one->n_iters, (N_SPANS - 1) / 500 + 1);
    pps_run_free(one);
    pps_run_free(many);
}

/* A batch all after what is held moves nothing: the viewer keeps its place. */
static void test_a_batch_in_order_moves_nothing(void)
{
    static struct pps_span spans[1000];
    struct pps_run *run;
    const size_t cuts[] = {500};
    int moved;

    make_spans(spans, 1000);
    for (size_t i = 0; i < 1000; i++) /* in order: no span from the past */
        spans[i].start_ns = (int64_t)i * 10000, spans[i].end_ns = spans[i].start_ns + 700;
    run = build(spans, 1000, NULL, 0, cuts, 1, &moved);
    CHECK_EQ_INT(moved, 0);
    check_sorted(run);
    pps_run_free(run);
}

/* After a view drops its oldest iterations, the next batch goes in among what is left. */
static void test_a_batch_after_a_drop(void)
{
    static struct pps_span spans[N_SPANS];
    struct pps_run *run = new_run();
    struct pps__run_build b;
    size_t half = N_SPANS / 2;

    make_spans(spans, N_SPANS);
    pps__run_build_init(&b, run, 0);
    pps__run_build_begin(&b);
    for (size_t i = 0; i < half; i++)
        CHECK_EQ_INT(pps__run_build_span(&b, &spans[i]), 0);
    CHECK(pps__run_build_end(&b) >= 0);
    pps_run_drop_before(run, 3);
    CHECK(run->n_spans < half);
    check_sorted(run);
    pps__run_build_begin(&b);
    for (size_t i = half; i < N_SPANS; i++)
        CHECK_EQ_INT(pps__run_build_span(&b, &spans[i]), 0);
    CHECK(pps__run_build_end(&b) >= 0);
    check_sorted(run);
    pps__run_build_release(&b);
    pps_run_free(run);
}

/* The check of a run counts its spans and stages and keeps none. */
static void test_counting_keeps_nothing(void)
{
    static struct pps_span spans[500];
    struct pps_run *run = new_run();
    struct pps__run_build b;

    make_spans(spans, 500);
    spans[77].stage = 9;
    pps__run_build_init(&b, run, 1);
    pps__run_build_begin(&b);
    for (size_t i = 0; i < 500; i++)
        CHECK_EQ_INT(pps__run_build_span(&b, &spans[i]), 0);
    CHECK(pps__run_build_end(&b) >= 0);
    CHECK_EQ_INT((long)run->n_spans, 500);
    CHECK_EQ_INT(run->n_stages, 10);
    for (int s = 0; s < run->n_stages; s++)
        CHECK_EQ_INT((long)run->stages[s].n, 0);
    pps__run_build_release(&b);
    pps_run_free(run);
}

static const struct test_case cases[] = {
    TEST(test_batches_make_the_run_one_batch_makes),
    TEST(test_a_batch_in_order_moves_nothing),
    TEST(test_a_batch_after_a_drop),
    TEST(test_counting_keeps_nothing),
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    return test_main(cases, argc, argv);
}
