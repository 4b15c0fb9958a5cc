/*
 * test_nvtx_iters.c - iterations inferred from repeated forward ops (tracer/nvtx/iters.c), over
 * the orders real schedules run their forwards in.
 */
#include <pthread.h>

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

/* Threads of one process that run their stages' forwards at once, meeting at the end of each
 * iteration, as a program's stage threads do: each iteration is started once, by one of them,
 * none is lost to a race and none is started twice, though no forward takes a lock. */
#define RACE_THREADS 8
#define RACE_ITERS   20000
#define RACE_MBS     2

struct racer {
    struct pps__nvtx_iters *it;
    pthread_barrier_t *barrier;
    int stage;
    int started[RACE_ITERS]; /* how often this thread started each iteration */
    int wrong;               /* a start of an iteration other than the next */
};

static void *race(void *arg)
{
    struct racer *r = arg;
    for (int iter = 0; iter < RACE_ITERS; iter++) {
        for (int mb = 0; mb < RACE_MBS; mb++) {
            int got = pps__nvtx_iters_forward(r->it, r->stage, 0, mb);
            if (got == iter)
                r->started[iter]++;
            else if (got != -1)
                r->wrong++;
        }
        pthread_barrier_wait(r->barrier);
    }
    return NULL;
}

static void test_threads_at_once_start_each_iteration_once(void)
{
    struct pps__nvtx_iters it = PPS__NVTX_ITERS_INIT;
    static struct racer r[RACE_THREADS]; /* big: not on the stack */
    pthread_t th[RACE_THREADS];
    pthread_barrier_t barrier;
    int ran = 0;

    CHECK(pthread_barrier_init(&barrier, NULL, RACE_THREADS) == 0);
    for (int i = 0; i < RACE_THREADS; i++) {
        r[i] = (struct racer){.it = &it, .barrier = &barrier, .stage = i};
        ran += pthread_create(&th[i], NULL, race, &r[i]) == 0;
    }
    CHECK_EQ_INT(ran, RACE_THREADS);
    for (int i = 0; i < ran; i++)
        pthread_join(th[i], NULL);
    for (int iter = 0; iter < RACE_ITERS; iter++) {
        int starts = 0;
        for (int i = 0; i < RACE_THREADS; i++)
            starts += r[i].started[iter];
        if (starts != 1) {
            fprintf(stderr, "  iteration %d started %d times\n", iter, starts);
            CHECK(0);
            break;
        }
    }
    for (int i = 0; i < RACE_THREADS; i++)
        CHECK_EQ_INT(r[i].wrong, 0);
    CHECK_EQ_INT(it.iter, RACE_ITERS - 1);
    pthread_barrier_destroy(&barrier);
    pps__nvtx_iters_release(&it);
}

static const struct test_case cases[] = {
    TEST(test_one_stage_gpipe_and_1f1b),
    TEST(test_interleaved_chunks_are_distinct),
    TEST(test_forwards_without_a_microbatch_say_nothing),
    TEST(test_many_microbatches_grow_the_set),
    TEST(test_threads_at_once_start_each_iteration_once),
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    return test_main(cases, argc, argv);
}
