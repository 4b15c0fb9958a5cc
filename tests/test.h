/*
 * test.h - the unit-test runner: each case is its own small function, listed in a table; the
 * runner runs each, reports each by name, and exits non-zero if any failed (libuv style).
 *
 *   static void test_something(void) { CHECK(1 + 1 == 2); CHECK_EQ_INT(f(), 3); }
 *   static const struct test_case cases[] = { TEST(test_something), {NULL, NULL} };
 *   int main(int argc, char **argv) { return test_main(cases, argc, argv); }
 *
 * `prog NAME` runs only the case NAME. A case that must skip calls TEST_SKIP(why).
 */
#ifndef PPS_TEST_H
#define PPS_TEST_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct test_case {
    const char *name;
    void (*fn)(void);
};

#define TEST(fn)                                                                                   \
    {                                                                                              \
#fn, fn                                                                                    \
    }

static int test_failures_;
static int test_skipped_;

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "  %s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond);             \
            test_failures_++;                                                                      \
        }                                                                                          \
    } while (0)

#define CHECK_EQ_INT(a, b)                                                                         \
    do {                                                                                           \
        long long a_ = (long long)(a), b_ = (long long)(b);                                        \
        if (a_ != b_) {                                                                            \
            fprintf(stderr, "  %s:%d: %s == %lld, expected %s == %lld\n", __FILE__, __LINE__, #a,  \
                    a_, #b, b_);                                                                   \
            test_failures_++;                                                                      \
        }                                                                                          \
    } while (0)

#define CHECK_NEAR(a, b, tol)                                                                      \
    do {                                                                                           \
        double a_ = (double)(a), b_ = (double)(b);                                                 \
        if (!(fabs(a_ - b_) <= (tol))) {                                                           \
            fprintf(stderr, "  %s:%d: %s == %.9g, expected %.9g (tolerance %g)\n", __FILE__,       \
                    __LINE__, #a, a_, b_, (double)(tol));                                          \
            test_failures_++;                                                                      \
        }                                                                                          \
    } while (0)

#define CHECK_STR_CONTAINS(hay, needle)                                                            \
    do {                                                                                           \
        const char *h_ = (hay), *n_ = (needle);                                                    \
        if (!h_ || !strstr(h_, n_)) {                                                              \
            fprintf(stderr, "  %s:%d: \"%s\" does not contain \"%s\"\n", __FILE__, __LINE__,       \
                    h_ ? h_ : "(null)", n_);                                                       \
            test_failures_++;                                                                      \
        }                                                                                          \
    } while (0)

#define TEST_SKIP(why)                                                                             \
    do {                                                                                           \
        fprintf(stderr, "  skipped: %s\n", why);                                                   \
        test_skipped_++;                                                                           \
        return;                                                                                    \
    } while (0)

static inline int test_main(const struct test_case *cases, int argc, char **argv)
{
    int failed = 0, passed = 0, skipped = 0;
    for (const struct test_case *c = cases; c->name; c++) {
        if (argc > 1 && strcmp(argv[1], c->name) != 0)
            continue;
        int before = test_failures_, skipped_before = test_skipped_;
        c->fn();
        if (test_failures_ != before) {
            printf("FAIL %s\n", c->name);
            failed++;
        } else if (test_skipped_ != skipped_before) {
            printf("SKIP %s\n", c->name);
            skipped++;
        } else {
            printf("ok   %s\n", c->name);
            passed++;
        }
    }
    printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped);
    if (failed)
        return 1;
    return (passed == 0 && skipped > 0) ? 77 : 0;
}

#endif
