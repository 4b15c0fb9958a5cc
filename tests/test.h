/*
 * test.h - the unit-test runner: each case is its own small function, listed in a table; the
 * runner runs each, reports each by name, and exits non-zero if any failed (libuv style).
 *
 *   static void test_something(void) { CHECK(1 + 1 == 2); CHECK_EQ_INT(f(), 3); }
 *   static const struct test_case cases[] = { TEST(test_something), {NULL, NULL} };
 *   int main(int argc, char **argv) { return test_main(cases, argc, argv); }
 *
 * A failed CHECK stops its case, as libuv's ASSERT does: nothing after it runs, so a case never
 * reads results that its failed precondition did not write. It works from any function a case
 * calls. Where a CHECK fails decides how it stops:
 *   - in the case's own thread: the runner records the failure and goes on with the next case;
 *   - outside a case (a main of its own): the program exits 1;
 *   - in another thread, or in a forked child: that process cannot return into the runner, so
 *     a thread aborts the program (the test fails loudly) and a child _exits 1 (its parent sees
 *     the failure in the exit status or the missing answer).
 * `test_failures_++` records a failure and goes on (for loops that report every bad row).
 *
 * `prog NAME...` runs only the named cases; a name that is not a case is a failure. TEST_SKIP(why)
 * stops the case as skipped, also from a helper. A binary whose every case skipped exits 77.
 */
#ifndef PPS_TEST_H
#define PPS_TEST_H

#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct test_case {
    const char *name;
    void (*fn)(void);
};

#define TEST(fn)                                                                                   \
    {                                                                                              \
#fn, fn                                                                                    \
    }

static int test_failures_;
static int test_in_case_;
static jmp_buf test_jmp_;
static pthread_t test_thread_;
static pid_t test_pid_;

/* Ends the running case: 1 failed, 2 skipped. Never returns. */
static inline _Noreturn void test_stop_(int how)
{
    if (how == 1)
        __atomic_add_fetch(&test_failures_, 1, __ATOMIC_RELAXED);
    if (test_in_case_ && getpid() != test_pid_)
        _exit(how == 1 ? 1 : 77);
    if (test_in_case_ && !pthread_equal(pthread_self(), test_thread_)) {
        fprintf(stderr, "  a check failed in a thread of the case: aborting\n");
        abort();
    }
    if (!test_in_case_)
        exit(how == 1 ? 1 : 77);
    longjmp(test_jmp_, how);
}

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "  %s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond);             \
            test_stop_(1);                                                                         \
        }                                                                                          \
    } while (0)

#define CHECK_EQ_INT(a, b)                                                                         \
    do {                                                                                           \
        long long a_ = (long long)(a), b_ = (long long)(b);                                        \
        if (a_ != b_) {                                                                            \
            fprintf(stderr, "  %s:%d: %s == %lld, expected %s == %lld\n", __FILE__, __LINE__, #a,  \
                    a_, #b, b_);                                                                   \
            test_stop_(1);                                                                         \
        }                                                                                          \
    } while (0)

#define CHECK_NEAR(a, b, tol)                                                                      \
    do {                                                                                           \
        double a_ = (double)(a), b_ = (double)(b);                                                 \
        if (!(fabs(a_ - b_) <= (tol))) {                                                           \
            fprintf(stderr, "  %s:%d: %s == %.9g, expected %.9g (tolerance %g)\n", __FILE__,       \
                    __LINE__, #a, a_, b_, (double)(tol));                                          \
            test_stop_(1);                                                                         \
        }                                                                                          \
    } while (0)

#define CHECK_STR_CONTAINS(hay, needle)                                                            \
    do {                                                                                           \
        const char *h_ = (hay), *n_ = (needle);                                                    \
        if (!h_ || !strstr(h_, n_)) {                                                              \
            fprintf(stderr, "  %s:%d: \"%s\" does not contain \"%s\"\n", __FILE__, __LINE__,       \
                    h_ ? h_ : "(null)", n_);                                                       \
            test_stop_(1);                                                                         \
        }                                                                                          \
    } while (0)

#define TEST_SKIP(why)                                                                             \
    do {                                                                                           \
        fprintf(stderr, "  skipped: %s\n", why);                                                   \
        test_stop_(2);                                                                             \
    } while (0)

/* Runs one case; 0 passed, 1 failed, 2 skipped. */
static inline int test_run_one_(const struct test_case *c)
{
    volatile int before = test_failures_;
    int how;

    test_thread_ = pthread_self();
    test_pid_ = getpid();
    test_in_case_ = 1;
    how = setjmp(test_jmp_);
    if (how == 0)
        c->fn();
    test_in_case_ = 0;
    if (how == 1 || test_failures_ != before)
        return 1;
    return how == 2 ? 2 : 0;
}

static inline int test_main(const struct test_case *cases, int argc, char **argv)
{
    int failed = 0, passed = 0, skipped = 0;

    /* Every name asked for must be a case: a typo is not "0 passed". */
    for (int a = 1; a < argc; a++) {
        const struct test_case *c = cases;
        while (c->name && strcmp(argv[a], c->name) != 0)
            c++;
        if (!c->name) {
            printf("FAIL %s: no such case\n", argv[a]);
            failed++;
        }
    }
    for (const struct test_case *c = cases; c->name; c++) {
        int wanted = argc <= 1, how;

        for (int a = 1; a < argc && !wanted; a++)
            wanted = strcmp(argv[a], c->name) == 0;
        if (!wanted)
            continue;
        how = test_run_one_(c);
        printf("%s %s\n", how == 1 ? "FAIL" : how == 2 ? "SKIP" : "ok  ", c->name);
        fflush(stdout);
        if (how == 1)
            failed++;
        else if (how == 2)
            skipped++;
        else
            passed++;
    }
    printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped);
    if (failed)
        return 1;
    return (passed == 0 && skipped > 0) ? 77 : 0;
}

#endif
