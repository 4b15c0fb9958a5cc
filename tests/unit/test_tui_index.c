/*
 * test_tui_index.c - the timeline index against brute force: covered time per kind over random
 * ranges, column summaries, visible spans and picking, per chunk for interleaved runs.
 */
#include "test.h"
#include "test_tui_fixture.h"
#include "tui_core.h"

static uint64_t rng_state = 88172645463325252ull;

static uint64_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static int64_t rnd_range(int64_t lo, int64_t hi)
{
    return lo + (int64_t)(rnd() % (uint64_t)(hi - lo));
}

static int is_device(int kind)
{
    return kind == PPS_SPAN_KERNEL || kind == PPS_SPAN_MEMCPY;
}

/* Time kind covers on stage (chunk: -1 any) in [a, b), summed span by span: on the stage's
 * device row (device) its kernels and copies only, on its host lanes the rest. */
static int64_t brute_busy(const struct pps_run *run, int stage, int chunk, int device, int kind,
                          int64_t a, int64_t b)
{
    int64_t sum = 0;

    if (device != is_device(kind))
        return 0;
    for (size_t i = 0; i < run->stages[stage].n; i++) {
        const struct pps_span *s = &run->stages[stage].spans[i];
        int64_t lo = s->start_ns > a ? s->start_ns : a, hi = s->end_ns < b ? s->end_ns : b;
        if (s->kind == kind && (device || chunk < 0 || s->chunk == chunk) && hi > lo)
            sum += hi - lo;
    }
    return sum;
}

/*
 * A run whose stages each hold, per kind, a sequence of non-overlapping spans with random gaps
 * (kinds overlap each other freely, as WAIT and RECV may).
 */
static struct pps_run *random_run(int p, int chunks, int per_kind)
{
    static const int kinds[] = {PPS_SPAN_F,    PPS_SPAN_B,    PPS_SPAN_W,
                                PPS_SPAN_WAIT, PPS_SPAN_SEND, PPS_SPAN_KERNEL};
    struct pps_run *run = fx_run_new(p);

    run->v = chunks;
    for (int s = 0; s < p; s++)
        for (int c = 0; c < chunks; c++)
            for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
                int64_t t = rnd_range(0, 1000);
                for (int i = 0; i < per_kind; i++) {
                    int64_t len = rnd_range(1, 500);
                    struct pps_span *sp = fx_add(run, s, kinds[k], t, t + len);
                    sp->chunk = (int16_t)c;
                    sp->mb = i;
                    t += len + rnd_range(0, 300);
                }
            }
    fx_sort(run);
    return run;
}

static void test_index_busy_matches_brute_force(void)
{
    for (int chunks = 1; chunks <= 2; chunks++) {
        struct pps_run *run = random_run(3, chunks, 300);
        struct pps_tui_index *ix = NULL;

        CHECK(pps_tui_index_build(run, &ix, NULL) == 0);
        /* Every stage has kernels: its chunks' lanes, then its device row. */
        CHECK_EQ_INT(pps_tui_index_lanes(ix), 3 * (chunks + 1));
        CHECK_EQ_INT(pps_tui_index_chunked(ix), chunks > 1);
        for (int lane = 0; lane < 3 * (chunks + 1); lane++) {
            int stage, chunk;
            pps_tui_index_lane_id(ix, lane, &stage, &chunk);
            CHECK_EQ_INT(stage, lane / (chunks + 1));
            CHECK_EQ_INT(pps_tui_index_lane_device(ix, lane), lane % (chunks + 1) == chunks);
        }
        for (int q = 0; q < 3000; q++) {
            int lane = (int)rnd_range(0, 3 * (chunks + 1)), stage, chunk;
            int kind = (int)rnd_range(1, PPS_SPAN_KIND_COUNT);
            int64_t a = rnd_range(-500, run->t_max + 500), b = a + rnd_range(1, 40000);

            pps_tui_index_lane_id(ix, lane, &stage, &chunk);
            CHECK_EQ_INT(pps_tui_index_busy(ix, lane, kind, a, b),
                         brute_busy(run, stage, chunks > 1 ? chunk : -1,
                                    pps_tui_index_lane_device(ix, lane), kind, a, b));
        }
        pps_tui_index_free(ix);
        pps_run_free(run);
    }
}

/* Each column's kind is the kind covering most of it, its cover the ops' share (x255). */
static void test_index_columns_match_brute_force(void)
{
    struct pps_run *run = random_run(2, 1, 400);
    struct pps_tui_index *ix = NULL;
    struct pps_tui_col cols[700];

    CHECK(pps_tui_index_build(run, &ix, NULL) == 0);
    for (int q = 0; q < 40; q++) {
        int n = (int)rnd_range(1, 700), lane = (int)rnd_range(0, 4), stage, chunk, dev;
        int64_t t0 = rnd_range(-1000, run->t_max), t1 = t0 + rnd_range(n, run->t_max + 2000);

        pps_tui_index_columns(ix, lane, t0, t1, n, cols);
        pps_tui_index_lane_id(ix, lane, &stage, &chunk);
        dev = pps_tui_index_lane_device(ix, lane);
        for (int j = 0; j < n; j++) {
            int64_t a = t0 + (int64_t)((__int128)(t1 - t0) * j / n);
            int64_t b = t0 + (int64_t)((__int128)(t1 - t0) * (j + 1) / n);
            int64_t best = 0, sum = 0;
            int best_kind = 0;

            if (n > 512)
                continue; /* sliced: edges differ by rounding; the slices are checked below */
            /* Work first, then WAIT, then the rest: the first class that covers anything. */
            for (int cls = 0; cls < 3 && !best_kind; cls++) {
                sum = 0;
                for (int k = 1; k < PPS_SPAN_KIND_COUNT; k++) {
                    int kc = k == PPS_SPAN_WAIT ? 1 : k <= PPS_SPAN_ROLLBACK ? 0 : 2;
                    int64_t t = kc == cls ? brute_busy(run, stage, -1, dev, k, a, b) : 0;
                    sum += t;
                    if (t > best) {
                        best = t;
                        best_kind = k;
                    }
                }
            }
            CHECK_EQ_INT(cols[j].kind, best_kind);
            if (best_kind && b > a) {
                int64_t c = sum * 255 / (b - a);
                CHECK_EQ_INT(cols[j].cover, c > 255 ? 255 : c < 1 ? 1 : c);
            } else {
                CHECK_EQ_INT(cols[j].cover, 0);
            }
        }
    }
    /* Wide screens: the same kinds as two halves drawn on their own. */
    {
        struct pps_tui_col wide[1000], half[512];
        int64_t t0 = 0, t1 = run->t_max, mid = t0 + (t1 - t0) * 512 / 1000;

        pps_tui_index_columns(ix, 0, t0, t1, 1000, wide);
        pps_tui_index_columns(ix, 0, t0, mid, 512, half);
        CHECK(memcmp(wide, half, 512 * sizeof(*wide)) == 0);
    }
    pps_tui_index_free(ix);
    pps_run_free(run);
}

static void test_index_idle_and_edges(void)
{
    struct pps_run *run = fx_run_new(1);
    struct pps_tui_index *ix = NULL;
    struct pps_tui_col cols[10];

    fx_add(run, 0, PPS_SPAN_F, 100, 200);
    fx_add(run, 0, PPS_SPAN_B, 200, 400);
    fx_add(run, 0, PPS_SPAN_WAIT, 500, 600);
    fx_sort(run);
    CHECK(pps_tui_index_build(run, &ix, NULL) == 0);
    /* [0,100) idle, [100,200) F, [200,400) B, [400,500) idle, [500,600) WAIT, then idle. */
    pps_tui_index_columns(ix, 0, 0, 1000, 10, cols);
    CHECK_EQ_INT(cols[0].kind, 0);
    CHECK_EQ_INT(cols[1].kind, PPS_SPAN_F);
    CHECK_EQ_INT(cols[1].cover, 255);
    CHECK_EQ_INT(cols[2].kind, PPS_SPAN_B);
    CHECK_EQ_INT(cols[3].kind, PPS_SPAN_B);
    CHECK_EQ_INT(cols[4].kind, 0);
    CHECK_EQ_INT(cols[5].kind, PPS_SPAN_WAIT);
    CHECK_EQ_INT(cols[9].kind, 0);
    /* Half a column covered. */
    pps_tui_index_columns(ix, 0, 150, 350, 1, cols);
    CHECK_EQ_INT(cols[0].kind, PPS_SPAN_B);
    CHECK_EQ_INT(cols[0].cover, 255);
    pps_tui_index_columns(ix, 0, 0, 200, 1, cols);
    CHECK_EQ_INT(cols[0].kind, PPS_SPAN_F);
    CHECK_EQ_INT(cols[0].cover, 127);
    /* Degenerate requests draw nothing and do not crash. */
    pps_tui_index_columns(ix, 0, 500, 500, 3, cols);
    CHECK_EQ_INT(cols[0].kind, 0);
    pps_tui_index_columns(ix, 7, 0, 500, 3, cols);
    CHECK_EQ_INT(cols[1].kind, 0);
    CHECK_EQ_INT(pps_tui_index_busy(ix, 0, PPS_SPAN_B, 300, 1000), 100);
    CHECK_EQ_INT(pps_tui_index_busy(ix, 0, PPS_SPAN_B, 1000, 300), 0);
    CHECK_EQ_INT(pps_tui_index_busy(ix, 0, 99, 0, 1000), 0);
    pps_tui_index_free(ix);
    pps_run_free(run);
}

static void test_index_visible_and_pick(void)
{
    struct pps_run *run = fx_run_new(1);
    struct pps_tui_index *ix = NULL;
    const struct pps_span *s;
    size_t first, count, pos;

    for (int i = 0; i < 10; i++)
        fx_add(run, 0, PPS_SPAN_F, i * 100, i * 100 + 50)->mb = i;
    fx_add(run, 0, PPS_SPAN_RANGE, 0, 1000)->mb = -1; /* an enclosing range */
    fx_sort(run);
    CHECK(pps_tui_index_build(run, &ix, NULL) == 0);
    /* [120, 330): ops 2 and 3 (1 ends at 150 > 120: it reaches in), the range too. */
    pps_tui_index_visible(ix, 0, 120, 330, 100, &first, &count);
    CHECK_EQ_INT(count, 4);
    CHECK_EQ_INT(pps_tui_index_span(ix, 0, first)->kind, PPS_SPAN_RANGE);
    CHECK_EQ_INT(pps_tui_index_span(ix, 0, first + 1)->mb, 1);
    /* Capped: max + 1 means more than max. */
    pps_tui_index_visible(ix, 0, 0, 1000, 3, &first, &count);
    CHECK_EQ_INT(count, 4);
    /* Picking prefers an op over the range around it, then the nearest. */
    s = pps_tui_index_pick(ix, 0, 420, 0, &pos);
    CHECK(s && s->kind == PPS_SPAN_F && s->mb == 4);
    s = pps_tui_index_pick(ix, 0, 470, 30, &pos);
    CHECK(s && s->kind == PPS_SPAN_F && s->mb == 4);
    s = pps_tui_index_pick(ix, 0, 470, 0, &pos);
    CHECK(s && s->kind == PPS_SPAN_RANGE);
    CHECK(pps_tui_index_pick(ix, 0, 5000, 10, &pos) == NULL);
    pps_tui_index_free(ix);
    pps_run_free(run);
}

/* A run with no spans and no stages still indexes. */
static void test_index_empty_run(void)
{
    struct pps_run *run = fx_run_new(0);
    struct pps_tui_index *ix = NULL;
    struct pps_tui_col col;

    CHECK(pps_tui_index_build(run, &ix, NULL) == 0);
    CHECK_EQ_INT(pps_tui_index_lanes(ix), 0);
    pps_tui_index_columns(ix, 0, 0, 10, 1, &col);
    CHECK_EQ_INT(col.kind, 0);
    pps_tui_index_free(ix);
    pps_run_free(run);
}

static const struct test_case cases[] = {
    TEST(test_index_busy_matches_brute_force),
    TEST(test_index_columns_match_brute_force),
    TEST(test_index_idle_and_edges),
    TEST(test_index_visible_and_pick),
    TEST(test_index_empty_run),
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    return test_main(cases, argc, argv);
}
