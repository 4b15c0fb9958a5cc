/*
 * test_nvtx_iters.c - iterations inferred from repeated forward ops (tracer/nvtx/iters.c), over
 * the orders real schedules run their forwards in.
 */
#include "iters.h"
#include "test.h"

/* Feeds forwards (stage, chunk, mb) and checks what each returns. */
struct fwd {
    int stage, chunk, mb, want;
};

static void feed(struct pps__nvtx_iters *it, const struct fwd *f, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        int got = pps__nvtx_iters_forward(it, f[i].stage, f[i].chunk, f[i].mb);
        if (got != f[i].want) {
            fprintf(stderr, "  forward %zu (stage %d chunk %d mb %d): %d, expected %d\n", i,
                    f[i].stage, f[i].chunk, f[i].mb, got, f[i].want);
            CHECK(0);
        }
    }
}

static void test_one_stage_gpipe_and_1f1b(void)
{
    struct pps__nvtx_iters it = PPS__NVTX_ITERS_INIT;
    /* Iteration 0: mb 0..3; the first forward of all starts it. Iteration 1 on mb 0 again. */
    static const struct fwd f[] = {
        {1, 0, 0, 0},  {1, 0, 1, -1}, {1, 0, 2, -1}, {1, 0, 3, -1}, {1, 0, 0, 1},
        {1, 0, 1, -1}, {1, 0, 2, -1}, {1, 0, 3, -1}, {1, 0, 0, 2},
    };
    feed(&it, f, sizeof(f) / sizeof(f[0]));
    CHECK_EQ_INT(it.iter, 2);
    pps__nvtx_iters_release(&it);
    CHECK_EQ_INT(it.iter, -1);
}

static void test_interleaved_chunks_are_distinct(void)
{
    struct pps__nvtx_iters it = PPS__NVTX_ITERS_INIT;
    /* Two chunks: microbatch 0 runs twice per iteration, once per chunk. */
    static const struct fwd f[] = {
        {0, 0, 0, 0}, {0, 0, 1, -1}, {0, 1, 0, -1}, {0, 1, 1, -1},
        {0, 0, 0, 1}, {0, 1, 0, -1}, {0, 0, 1, -1}, {0, 1, 1, -1},
    };
    feed(&it, f, sizeof(f) / sizeof(f[0]));
    pps__nvtx_iters_release(&it);
}

static void test_forwards_without_a_microbatch_say_nothing(void)
{
    struct pps__nvtx_iters it = PPS__NVTX_ITERS_INIT;
    static const struct fwd f[] = {
        {0, 0, -1, -1}, {0, 0, 0, 0}, {0, 0, -1, -1}, {0, 0, -1, -1}, {0, 0, 0, 1},
    };
    feed(&it, f, sizeof(f) / sizeof(f[0]));
    pps__nvtx_iters_release(&it);
}

static void test_many_microbatches_grow_the_set(void)
{
    struct pps__nvtx_iters it = PPS__NVTX_ITERS_INIT;
    for (int iter = 0; iter < 3; iter++) {
        for (int mb = 0; mb < 5000; mb++) {
            int got = pps__nvtx_iters_forward(&it, 3, 0, mb);
            if (got != (mb == 0 ? iter : -1)) {
                fprintf(stderr, "  iteration %d mb %d: %d\n", iter, mb, got);
                CHECK(0);
                iter = 3;
                break;
            }
        }
    }
    CHECK_EQ_INT(it.iter, 2);
    /* Keys keep stage, chunk and mb apart: these are all distinct. */
    CHECK_EQ_INT(pps__nvtx_iters_forward(&it, 2, 0, 0), -1);
    CHECK_EQ_INT(pps__nvtx_iters_forward(&it, 3, 1, 0), -1);
    CHECK_EQ_INT(pps__nvtx_iters_forward(&it, 0, 3, 0), -1);
    CHECK_EQ_INT(pps__nvtx_iters_forward(&it, 3, 0, 65536), -1);
    pps__nvtx_iters_release(&it);
}

static const struct test_case cases[] = {
    TEST(test_one_stage_gpipe_and_1f1b),
    TEST(test_interleaved_chunks_are_distinct),
    TEST(test_forwards_without_a_microbatch_say_nothing),
    TEST(test_many_microbatches_grow_the_set),
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    return test_main(cases, argc, argv);
}
