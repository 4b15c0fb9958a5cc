/*
 * test_nvtx_iters.c - iterations inferred from repeated forward ops (tracer/nvtx/iters.c), over
 * the orders real schedules run their forwards in.
 */
#include <pthread.h>
#include <string.h>

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

/* Threads of one process that run forwards at once, as hooks.c feeds them: a join without a
 * lock, the rest under one. */
static pthread_mutex_t race_lock = PTHREAD_MUTEX_INITIALIZER;

static int fed(struct pps__nvtx_iters *it, int stage, int chunk, int mb)
{
    int got = pps__nvtx_iters_join(it, stage, chunk, mb);

    if (got != PPS__NVTX_ITERS_SERIAL)
        return got;
    pthread_mutex_lock(&race_lock);
    got = pps__nvtx_iters_forward(it, stage, chunk, mb);
    pthread_mutex_unlock(&race_lock);
    return got;
}

/* Each thread its stage's forwards, meeting at the end of each iteration, as a program's stage
 * threads do; or (same_key) every thread the forward of one key, again and again, so that each
 * forward but the first of all repeats it. */
#define RACE_THREADS 8
#define RACE_ITERS   20000
#define RACE_MBS     2

struct racer {
    struct pps__nvtx_iters *it;
    pthread_barrier_t *barrier;
    int stage, same_key;
    int started[RACE_ITERS]; /* how often this thread started each iteration */
    int n_started, wrong;    /* starts in all; starts of an iteration other than the next */
};

static void *race(void *arg)
{
    struct racer *r = arg;
    for (int iter = 0; iter < RACE_ITERS; iter++) {
        for (int mb = 0; mb < RACE_MBS; mb++) {
            int got = r->same_key ? fed(r->it, 0, 0, 0) : fed(r->it, r->stage, 0, mb);
            if (got >= 0)
                r->n_started++;
            if (got == iter && !r->same_key)
                r->started[iter]++;
            else if (got != -1 && !r->same_key)
                r->wrong++;
        }
        if (!r->same_key)
            pthread_barrier_wait(r->barrier);
    }
    return NULL;
}

static void run_racers(struct racer *r, int same_key, struct pps__nvtx_iters *it)
{
    pthread_t th[RACE_THREADS];
    pthread_barrier_t barrier;
    int ran = 0;

    CHECK(pthread_barrier_init(&barrier, NULL, RACE_THREADS) == 0);
    for (int i = 0; i < RACE_THREADS; i++) {
        memset(&r[i], 0, sizeof(r[i]));
        r[i].it = it;
        r[i].barrier = &barrier;
        r[i].stage = i;
        r[i].same_key = same_key;
        ran += pthread_create(&th[i], NULL, race, &r[i]) == 0;
    }
    CHECK_EQ_INT(ran, RACE_THREADS);
    for (int i = 0; i < ran; i++)
        pthread_join(th[i], NULL);
    pthread_barrier_destroy(&barrier);
}

static void test_threads_at_once_start_each_iteration_once(void)
{
    struct pps__nvtx_iters it = PPS__NVTX_ITERS_INIT;
    static struct racer r[RACE_THREADS]; /* big: not on the stack */

    run_racers(r, 0, &it);
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
    pps__nvtx_iters_release(&it);
}

/* One key's forward on every thread at once: each is a repeat of the one before (whichever
 * thread ran it), so each starts an iteration, none lost to a race (the reviewer's case: two
 * threads that both read the key's last iteration below the current one). */
static void test_one_key_on_threads_at_once_starts_every_time(void)
{
    struct pps__nvtx_iters it = PPS__NVTX_ITERS_INIT;
    static struct racer r[RACE_THREADS];
    int started = 0;

    run_racers(r, 1, &it);
    for (int i = 0; i < RACE_THREADS; i++)
        started += r[i].n_started;
    CHECK_EQ_INT(started, RACE_THREADS * RACE_ITERS * RACE_MBS);
    CHECK_EQ_INT(it.iter, RACE_THREADS * RACE_ITERS * RACE_MBS - 1);
    pps__nvtx_iters_release(&it);
}

/* A join alone never starts an iteration, and never takes a key it does not know. */
static void test_join_alone(void)
{
    struct pps__nvtx_iters it = PPS__NVTX_ITERS_INIT;

    CHECK_EQ_INT(pps__nvtx_iters_join(&it, 0, 0, 0), PPS__NVTX_ITERS_SERIAL); /* the first */
    CHECK_EQ_INT(pps__nvtx_iters_forward(&it, 0, 0, 0), 0);
    CHECK_EQ_INT(pps__nvtx_iters_join(&it, 0, 0, 0), PPS__NVTX_ITERS_SERIAL); /* a repeat */
    CHECK_EQ_INT(pps__nvtx_iters_join(&it, 0, 0, 1), PPS__NVTX_ITERS_SERIAL); /* unknown */
    CHECK_EQ_INT(pps__nvtx_iters_forward(&it, 0, 0, 1), -1);
    CHECK_EQ_INT(pps__nvtx_iters_forward(&it, 0, 0, 0), 1);
    CHECK_EQ_INT(pps__nvtx_iters_join(&it, 0, 0, 1), -1); /* known, not yet in iteration 1 */
    CHECK_EQ_INT(pps__nvtx_iters_join(&it, 0, 0, 1), PPS__NVTX_ITERS_SERIAL); /* now it is */
    CHECK_EQ_INT(pps__nvtx_iters_join(&it, 0, 0, -1), -1); /* no microbatch: nothing */
    CHECK_EQ_INT(it.iter, 1);
    pps__nvtx_iters_release(&it);
}

static const struct test_case cases[] = {
    TEST(test_one_stage_gpipe_and_1f1b),
    TEST(test_interleaved_chunks_are_distinct),
    TEST(test_forwards_without_a_microbatch_say_nothing),
    TEST(test_many_microbatches_grow_the_set),
    TEST(test_threads_at_once_start_each_iteration_once),
    TEST(test_one_key_on_threads_at_once_starts_every_time),
    TEST(test_join_alone),
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    return test_main(cases, argc, argv);
}
