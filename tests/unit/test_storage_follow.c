/*
 * test_storage_follow.c - the follower (pps_run_follow_*): polled while two ranks write, it
 * ends, once the writers close, with the run pps_run_load() gives of the finished files, span
 * for span; also when read in small chunks, from a merged file, with spans out of order, a shard
 * that appears late and a clock offset that changes at the end.
 */
#include <math.h>
#include <pthread.h>
#include <time.h>

#include "test.h"
#include "unit/storage_fixture.h"

#define BATCHES   60
#define PER_BATCH 200

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000};
    nanosleep(&ts, NULL);
}

struct writer_arg {
    const char *dir;
    int pause_ms; /* between batches */
    volatile int done;
    int failed;
};

/* Batch b of rank r: spans on stage r, mostly after the last batch; every 7th has one that
 * starts before it (out of order), and KERNEL spans with names interned along the way. */
static int write_batch(struct pps_store_writer *w, int r, int b)
{
    struct pps_span s[PER_BATCH];
    struct pps_metric m;
    struct pps_err err = {0, ""};

    for (int i = 0; i < PER_BATCH; i++) {
        int64_t t = 1000000 + (int64_t)(b * PER_BATCH + i) * 1000;
        memset(&s[i], 0, sizeof(s[i]));
        s[i].kind = (uint8_t)(1 + i % 8);
        s[i].stage = (int16_t)r;
        s[i].mb = i % 8; /* below the run's m */
        s[i].iter = b / 10;
        s[i].peer = -1;
        s[i].name_id = -1;
        s[i].start_ns = t;
        s[i].end_ns = t + 800;
        if (i % 50 == 0) {
            char name[32];
            snprintf(name, sizeof(name), "kernel_%d_%d", r, (b * 7 + i) % 13);
            s[i].kind = PPS_SPAN_KERNEL;
            if (pps_store_writer_name(w, name, &s[i].name_id, &err) < 0)
                return -1;
        }
    }
    if (b % 7 == 3)
        s[PER_BATCH - 1].start_ns = 1000000 + (int64_t)(b - 2) * PER_BATCH * 1000 + 333;
    m = (struct pps_metric){b, r, 1.0 / (b + 1), NAN, 1000 * b, -1, 0, 0};
    if (pps_store_writer_spans(w, s, PER_BATCH, &err) < 0 ||
        pps_store_writer_metrics(w, &m, 1, &err) < 0)
        return -1;
    return 0;
}

static void *writer_main(void *p)
{
    struct writer_arg *a = p;
    struct pps_store_writer *w[2] = {NULL, NULL};
    struct pps_err err = {0, ""};

    if (pps_store_writer_open(a->dir, 0, &w[0], &err) < 0 ||
        pps_store_writer_meta(w[0], "schedule", "1f1b", &err) < 0 ||
        pps_store_writer_meta_int(w[0], "p", 2, &err) < 0 ||
        pps_store_writer_meta_int(w[0], "m", 8, &err) < 0)
        goto fail;
    for (int b = 0; b < BATCHES; b++) {
        if (b == BATCHES / 4) { /* rank 1 starts late, with a constant clock offset */
            if (pps_store_writer_open(a->dir, 1, &w[1], &err) < 0 ||
                pps_store_writer_meta_int(w[1], "clock_offset_start_ns", 250, &err) < 0)
                goto fail;
        }
        for (int r = 0; r < 2; r++)
            if (w[r] && write_batch(w[r], r, b) < 0)
                goto fail;
        if (a->pause_ms)
            sleep_ms(a->pause_ms);
    }
    /* At the end rank 1 learns its drift: every span it wrote moves (linear offset). */
    if (pps_store_writer_meta_int(w[1], "clock_offset_end_ns", 900, &err) < 0 ||
        pps_store_writer_meta_int(w[1], "clock_sync_start_ns", 1000000, &err) < 0 ||
        pps_store_writer_meta_int(w[1], "clock_sync_end_ns", 9000000, &err) < 0)
        goto fail;
    pps_store_writer_close(w[0], 1, &err);
    pps_store_writer_close(w[1], 1, &err);
    a->done = 1;
    return NULL;
fail:
    fprintf(stderr, "writer: %s\n", err.msg);
    pps_store_writer_close(w[0], 0, NULL);
    pps_store_writer_close(w[1], 0, NULL);
    a->failed = 1;
    a->done = 1;
    return NULL;
}

static int stages_sorted(const struct pps_run *run)
{
    for (int s = 0; s < run->n_stages; s++)
        for (size_t i = 1; i < run->stages[s].n; i++)
            if (run->stages[s].spans[i - 1].start_ns > run->stages[s].spans[i].start_ns)
                return 0;
    return 1;
}

static int str_eq(const char *a, const char *b)
{
    return (!a && !b) || (a && b && !strcmp(a, b));
}

/* a (followed) is b (loaded): every figure, span for span, names compared by their text. */
static void check_same_run(const struct pps_run *a, const struct pps_run *b)
{
    CHECK_EQ_INT(a->merged, b->merged);
    CHECK_EQ_INT(a->n_shards, b->n_shards);
    CHECK_EQ_INT(a->complete, b->complete);
    CHECK(str_eq(a->schedule, b->schedule));
    CHECK_EQ_INT(a->p, b->p);
    CHECK_EQ_INT(a->m, b->m);
    CHECK_EQ_INT(a->v, b->v);
    CHECK_EQ_INT(a->n_stages, b->n_stages);
    CHECK_EQ_INT((long)a->n_spans, (long)b->n_spans);
    CHECK_EQ_INT(a->n_iters, b->n_iters);
    CHECK(a->t_min == b->t_min);
    CHECK(a->t_max == b->t_max);
    CHECK_EQ_INT((long)a->n_names, (long)b->n_names);
    CHECK_EQ_INT((long)a->n_meta, (long)b->n_meta);
    for (size_t i = 0; i < a->n_meta && i < b->n_meta; i++) {
        CHECK_EQ_INT(a->meta[i].rank, b->meta[i].rank);
        CHECK(!strcmp(a->meta[i].key, b->meta[i].key));
        CHECK(!strcmp(a->meta[i].value, b->meta[i].value));
    }
    for (int s = 0; s < a->n_stages && s < b->n_stages; s++) {
        long bad = 0;
        CHECK_EQ_INT((long)a->stages[s].n, (long)b->stages[s].n);
        for (size_t i = 0; i < a->stages[s].n && i < b->stages[s].n; i++) {
            struct pps_span x = a->stages[s].spans[i], y = b->stages[s].spans[i];
            bad += !str_eq(pps_run_span_name(a, &x), pps_run_span_name(b, &y));
            x.name_id = y.name_id = 0;
            bad += memcmp(&x, &y, sizeof(x)) != 0;
        }
        CHECK_EQ_INT(bad, 0);
    }
    CHECK_EQ_INT((long)a->n_metrics, (long)b->n_metrics);
    for (size_t i = 0; i < a->n_metrics && i < b->n_metrics; i++) {
        const struct pps_metric *x = &a->metrics[i], *y = &b->metrics[i];
        CHECK(x->iter == y->iter && x->stage == y->stage && x->rank == y->rank &&
              x->act_bytes == y->act_bytes &&
              (x->loss == y->loss || (isnan(x->loss) && isnan(y->loss))));
    }
}

/* Writes the run in a thread while polling it; returns the finished directory. */
static char *follow_while_writing(int pause_ms, int *polls, int *rebuilt)
{
    char *dir = tmpdir_new();
    struct writer_arg a = {dir, pause_ms, 0, 0};
    struct pps_run_follow *f = NULL;
    struct pps_run *run = NULL;
    struct pps_err err = {0, ""};
    pthread_t th;
    size_t last = 0;
    int waits = 0;

    *polls = *rebuilt = 0;
    CHECK(pthread_create(&th, NULL, writer_main, &a) == 0);
    while (!a.done || *polls == 0) {
        size_t n_new;
        int rc;

        if (!f && pps_run_follow_open(dir, &f, &err) < 0) {
            sleep_ms(2);
            continue;
        }
        rc = pps_run_follow_poll(f, &run, &n_new, &err);
        /* no shard yet, or rank 0 is still creating it; but not forever (a refusal would be) */
        if (rc < 0 && *polls == 0 && ++waits < 5000) {
            sleep_ms(2);
            continue;
        }
        CHECK(rc >= 0);
        if (rc < 0) {
            fprintf(stderr, "poll: %s\n", err.msg);
            break;
        }
        *rebuilt += rc == 1 && *polls > 0;
        CHECK(stages_sorted(run));
        CHECK(rc == 1 || run->n_spans == last + n_new);
        last = run->n_spans;
        (*polls)++;
        sleep_ms(3);
    }
    pthread_join(th, NULL);
    CHECK(!a.failed);
    if (f) {
        struct pps_run *full = NULL;
        CHECK(pps_run_follow_poll(f, &run, NULL, &err) >= 0);
        CHECK_EQ_INT(pps_run_load(dir, &full, &err), 0);
        if (full && run) {
            CHECK_EQ_INT((long)full->n_spans, 2L * BATCHES * PER_BATCH - BATCHES / 4 * PER_BATCH);
            CHECK(run->complete);
            check_same_run(run, full);
        }
        pps_run_free(full);
    }
    pps_run_follow_free(f);
    pps_run_free(run);
    return dir;
}

static void test_follow_while_writing_equals_load(void)
{
    int polls, rebuilt;
    char *dir = follow_while_writing(2, &polls, &rebuilt);

    CHECK(polls > 3); /* it did see the run grow */
    tmpdir_free(dir);
}

/* Fetching in chunks of a few rows gives the same run, and reports its progress. */
static void test_follow_in_chunks_equals_load(void)
{
    int polls, rebuilt;
    char *dir = follow_while_writing(0, &polls, &rebuilt);
    struct pps_run_follow *f = NULL;
    struct pps_run *run = NULL, *full = NULL;
    struct pps_err err = {0, ""};
    int64_t read, total;
    int rc, rounds = 0;

    CHECK_EQ_INT(pps_run_follow_open(dir, &f, &err), 0);
    do {
        rc = pps_run_follow_fetch(f, 333, NULL, &err);
        CHECK(rc >= 0);
        CHECK(pps_run_follow_apply(f, &run, NULL, &err) >= 0);
        CHECK(stages_sorted(run));
        rounds++;
    } while (rc == 1 && rounds < 100000);
    CHECK(rounds > 10);
    pps_run_follow_progress(f, &read, &total);
    CHECK_EQ_INT((long)read, (long)run->n_spans);
    CHECK_EQ_INT((long)total, (long)run->n_spans);
    CHECK_EQ_INT(pps_run_load(dir, &full, &err), 0);
    if (full)
        check_same_run(run, full);
    pps_run_free(full);
    pps_run_free(run);
    pps_run_follow_free(f);
    tmpdir_free(dir);
}

/* A merged file is followed like a directory. */
static void test_follow_merged_file(void)
{
    int polls, rebuilt;
    char *dir = follow_while_writing(0, &polls, &rebuilt), path[1024];
    struct pps_run_follow *f = NULL;
    struct pps_run *run = NULL, *full = NULL;
    struct pps_err err = {0, ""};

    snprintf(path, sizeof(path), "%s.merged.db", dir);
    CHECK_EQ_INT(pps_run_merge(dir, path, &err), 0);
    CHECK_EQ_INT(pps_run_follow_open(path, &f, &err), 0);
    CHECK(pps_run_follow_poll(f, &run, NULL, &err) >= 0);
    CHECK_EQ_INT(pps_run_load(path, &full, &err), 0);
    if (run && full)
        check_same_run(run, full);
    /* Nothing new: a second poll adds nothing and moves nothing. */
    {
        size_t n_new = 99;
        CHECK_EQ_INT(pps_run_follow_poll(f, &run, &n_new, &err), 0);
        CHECK_EQ_INT((long)n_new, 0);
    }
    pps_run_free(full);
    pps_run_free(run);
    pps_run_follow_free(f);
    unlink(path);
    tmpdir_free(dir);
}

static void test_follow_bad_path(void)
{
    struct pps_run_follow *f = (struct pps_run_follow *)1;
    struct pps_err err = {0, ""};

    CHECK_EQ_INT(pps_run_follow_open("/nonexistent/pps-run", &f, &err), PPS_ENOENT);
    CHECK(f == NULL);
    CHECK_STR_CONTAINS(err.msg, "/nonexistent/pps-run");
    pps_run_follow_free(NULL);
}

static const struct test_case cases[] = {
    TEST(test_follow_while_writing_equals_load),
    TEST(test_follow_in_chunks_equals_load),
    TEST(test_follow_merged_file),
    TEST(test_follow_bad_path),
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    return test_main(cases, argc, argv);
}
