/*
 * test_nvtx_names.c - the NVTX injection's name cache (tracer/nvtx/names.c): one entry per
 * distinct name, filled once, stable across growth, refused past its limit, and the same entry
 * for every thread that asks at once.
 */
#include <pthread.h>

#include "names.h"
#include "test.h"

static int fills;

static void count_fill(void *ctx, struct pps__nvtx_name *n)
{
    (void)ctx;
    fills++;
    n->name_id = (int32_t)n->len; /* something the test can see */
}

static void test_one_entry_per_distinct_name(void)
{
    struct pps__nvtx_names c;
    fills = 0;
    CHECK_EQ_INT(pps__nvtx_names_init(&c, 100, count_fill, NULL), 0);
    const struct pps__nvtx_name *a = pps__nvtx_names_get(&c, "data loading", 12);
    const struct pps__nvtx_name *b = pps__nvtx_names_get(&c, "data loading!", 12);
    const struct pps__nvtx_name *d = pps__nvtx_names_get(&c, "data", 4);
    CHECK(a != NULL && a == b);
    CHECK(d != NULL && d != a);
    CHECK_EQ_INT(fills, 2);
    CHECK(strcmp(a->text, "data loading") == 0);
    CHECK_EQ_INT(a->name_id, 12);
    CHECK_EQ_INT(d->len, 4);
    /* The empty name is a name too. */
    CHECK(pps__nvtx_names_get(&c, "", 0) != NULL);
    CHECK_EQ_INT(fills, 3);
    pps__nvtx_names_release(&c);
}

static void test_defaults_before_fill(void)
{
    struct pps__nvtx_names c;
    CHECK_EQ_INT(pps__nvtx_names_init(&c, 10, NULL, NULL), 0);
    const struct pps__nvtx_name *n = pps__nvtx_names_get(&c, "x", 1);
    CHECK(n != NULL);
    CHECK_EQ_INT(n->rule, PPS_LABEL_NONE);
    CHECK_EQ_INT(n->op.kind, -1);
    CHECK_EQ_INT(n->name_id, -1);
    pps__nvtx_names_release(&c);
}

static void test_entries_survive_growth(void)
{
    struct pps__nvtx_names c;
    const struct pps__nvtx_name *first[3000];
    char buf[32];
    CHECK_EQ_INT(pps__nvtx_names_init(&c, 100000, NULL, NULL), 0);
    for (int i = 0; i < 3000; i++) {
        int len = snprintf(buf, sizeof(buf), "PP:%dF%d", i % 8, i);
        first[i] = pps__nvtx_names_get(&c, buf, (size_t)len);
        CHECK(first[i] != NULL);
    }
    for (int i = 0; i < 3000; i++) {
        int len = snprintf(buf, sizeof(buf), "PP:%dF%d", i % 8, i);
        if (pps__nvtx_names_get(&c, buf, (size_t)len) != first[i]) {
            CHECK(0);
            break;
        }
    }
    CHECK_EQ_INT(c.n, 3000);
    CHECK_EQ_INT(pps__nvtx_names_refused(&c), 0);
    pps__nvtx_names_release(&c);
}

static void test_refuses_past_its_limit(void)
{
    struct pps__nvtx_names c;
    CHECK_EQ_INT(pps__nvtx_names_init(&c, 2, NULL, NULL), 0);
    CHECK(pps__nvtx_names_get(&c, "a", 1) != NULL);
    CHECK(pps__nvtx_names_get(&c, "b", 1) != NULL);
    CHECK(pps__nvtx_names_get(&c, "c", 1) == NULL);
    CHECK(pps__nvtx_names_get(&c, "d", 1) == NULL);
    CHECK(pps__nvtx_names_get(&c, "a", 1) != NULL); /* known names still resolve */
    CHECK_EQ_INT(pps__nvtx_names_refused(&c), 2);
    pps__nvtx_names_release(&c);
}

#define THREADS    8
#define PER_THREAD 500

static struct pps__nvtx_names shared;
static const struct pps__nvtx_name *seen[THREADS][PER_THREAD];

static void *lookup_all(void *arg)
{
    int t = (int)(intptr_t)arg;
    char buf[32];
    for (int i = 0; i < PER_THREAD; i++) {
        int len = snprintf(buf, sizeof(buf), "range %d", (i * 7 + t) % PER_THREAD);
        seen[t][(i * 7 + t) % PER_THREAD] = pps__nvtx_names_get(&shared, buf, (size_t)len);
    }
    return NULL;
}

static void test_threads_agree_on_entries(void)
{
    pthread_t th[THREADS];
    fills = 0;
    CHECK_EQ_INT(pps__nvtx_names_init(&shared, 100000, count_fill, NULL), 0);
    for (int t = 0; t < THREADS; t++)
        CHECK_EQ_INT(pthread_create(&th[t], NULL, lookup_all, (void *)(intptr_t)t), 0);
    for (int t = 0; t < THREADS; t++)
        pthread_join(th[t], NULL);
    CHECK_EQ_INT(fills, PER_THREAD);
    for (int i = 0; i < PER_THREAD; i++)
        for (int t = 1; t < THREADS; t++)
            if (seen[t][i] != seen[0][i] || !seen[0][i]) {
                fprintf(stderr, "  name %d: threads 0 and %d got different entries\n", i, t);
                CHECK(0);
                i = PER_THREAD;
                break;
            }
    pps__nvtx_names_release(&shared);
}

static const struct test_case cases[] = {
    TEST(test_one_entry_per_distinct_name), TEST(test_defaults_before_fill),
    TEST(test_entries_survive_growth),      TEST(test_refuses_past_its_limit),
    TEST(test_threads_agree_on_entries),    {NULL, NULL},
};

int main(int argc, char **argv)
{
    return test_main(cases, argc, argv);
}
