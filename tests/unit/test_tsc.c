/*
 * test_tsc.c - TSC stamps turned into CLOCK_MONOTONIC nanoseconds (tracer/tsc.h).
 *
 * The map on made-up points with a known answer: exact on a line, following a change of rate
 * (NTP slewing CLOCK_MONOTONIC), thinned when full and still covering the whole run. Then the
 * tracer for real: spans recorded with begin/end between two clock_gettime() readings, over a
 * couple of seconds with flushes between them, must land within 1 us of those readings once
 * converted. The process's mode comes from PPSCOPE_CLOCK, which tests/tracer.cmake sets: "tsc"
 * for test_tsc, empty (the default) for test_tsc_monotonic (the same checks on the other path).
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "test.h"
#include "test_tracer_fixture.h"
#include "tsc.h"

static int64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* A line through (1000, 5000) at 0.4 ns per tick: every tick between points and beyond them
 * converts to the nanosecond (up to the fixed point's rounding). */
static void test_map_is_exact_on_a_line(void)
{
    struct pps__tsc_map m;

    CHECK_EQ_INT(pps__tsc_map_init(&m, 16), 0);
    for (int i = 0; i < 5; i++)
        CHECK_EQ_INT(pps__tsc_map_add(&m, 1000 + (int64_t)i * 500000000, 5000 + i * 200000000LL),
                     0);
    for (int64_t tick = 0; tick < 3000000000LL; tick += 123456789) {
        int64_t want = 5000 + (tick - 1000) * 2 / 5;
        CHECK(llabs(pps__tsc_map_ns(&m, tick) - want) <= 1);
    }
    CHECK_NEAR(pps__tsc_map_hz(&m), 2.5e9, 1.0);
    pps__tsc_map_release(&m);
}

/* The clock runs 100 ppm fast for the second half: ticks are converted along the segment they
 * fall in, so the kink is followed, not averaged away. */
static void test_map_follows_a_change_of_rate(void)
{
    struct pps__tsc_map m;
    const int64_t step = 1000000000; /* ticks (and ns at first) between points */

    CHECK_EQ_INT(pps__tsc_map_init(&m, 64), 0);
    int64_t ns = 0;
    for (int i = 0; i <= 20; i++) {
        CHECK_EQ_INT(pps__tsc_map_add(&m, (int64_t)i * step, ns), 0);
        ns += i < 10 ? step : step + step / 10000;
    }
    /* 15.5 s of ticks: 10 s at 1 ns per tick, 5.5 s at 1.0001. */
    int64_t tick = 15 * step + step / 2;
    int64_t want = 10 * step + (int64_t)(5.5 * (double)step * 1.0001);
    CHECK(llabs(pps__tsc_map_ns(&m, tick) - want) <= 1);
    CHECK(llabs(pps__tsc_map_ns(&m, 5 * step) - 5 * step) <= 1);
    pps__tsc_map_release(&m);
}

/* Points closer than 10 ms replace the newest; a point that does not move forward is refused. */
static void test_map_keeps_points_apart_and_increasing(void)
{
    struct pps__tsc_map m;

    CHECK_EQ_INT(pps__tsc_map_init(&m, 16), 0);
    CHECK_EQ_INT(pps__tsc_map_add(&m, 100, 1000), 0);
    CHECK_EQ_INT(pps__tsc_map_add(&m, 200, 2000), 0);
    CHECK_EQ_INT(pps__tsc_map_add(&m, 300, 3000), 0); /* within 10 ms of the first: replaces */
    CHECK_EQ_INT((int)m.n, 2);
    CHECK_EQ_INT(m.pts[1].tick, 300);
    CHECK_EQ_INT(pps__tsc_map_add(&m, 300, 4000), -1);
    CHECK_EQ_INT(pps__tsc_map_add(&m, 400, 3000), -1);
    CHECK_EQ_INT((int)m.n, 2);
    CHECK_EQ_INT(pps__tsc_map_ns(&m, 200), 2000);
    pps__tsc_map_release(&m);
}

/* Ten thousand points into a map of 64: it thins, keeps its first and newest points, stays
 * sorted, and converts the whole range within a nanosecond of a clock with a slow drift. */
static void test_map_thins_and_covers_the_run(void)
{
    struct pps__tsc_map m;
    const int64_t step = 150000000; /* 150 ms */

    CHECK_EQ_INT(pps__tsc_map_init(&m, 64), 0);
    for (int64_t i = 0; i < 10000; i++) {
        int64_t tick = i * step;
        CHECK_EQ_INT(pps__tsc_map_add(&m, tick, tick + tick / 1000000), 0);
    }
    CHECK(m.n <= 64 && m.n >= 32);
    CHECK_EQ_INT(m.pts[0].tick, 0);
    CHECK_EQ_INT(m.pts[m.n - 1].tick, 9999 * step);
    for (size_t i = 0; i + 1 < m.n; i++)
        CHECK(m.pts[i].tick < m.pts[i + 1].tick);
    for (int64_t tick = 0; tick < 9999 * step; tick += 7777777777LL)
        CHECK(llabs(pps__tsc_map_ns(&m, tick) - (tick + tick / 1000000)) <= 2);
    pps__tsc_map_release(&m);
}

/* The tracer for real, in the mode PPSCOPE_CLOCK chose: each span lies within 1 us of the
 * clock_gettime() readings around it, and the shard says how it was timed. */
static void test_spans_agree_with_clock_monotonic(void)
{
    const char *want = getenv("PPSCOPE_CLOCK");
    char *dir = tmpdir_new();
    struct pps_trace_options o = opts(dir, 1 << 16, 5);
    struct pps_tracer *t = open_ok(&o);
    enum { N = 20000 };
    static int64_t before[N], after[N];
    int64_t worst_lo = 0, worst_hi = 0;

    if (want && strcmp(want, "tsc") == 0 && !pps__tsc_on) {
        close_ok(t);
        tmpdir_free(dir);
        TEST_SKIP("PPSCOPE_CLOCK=tsc, but this CPU has no TSC");
    }
    for (int i = 0; i < N; i++) {
        before[i] = mono_ns();
        pps_trace_begin(t, PPS_TRACE_F, 0, 0, i);
        pps_trace_end(t);
        after[i] = mono_ns();
        if (i % 2000 == 1999) { /* a few seconds in all, through several calibration points */
            struct timespec nap = {0, 150000000};
            nanosleep(&nap, NULL);
        }
    }
    CHECK_EQ_INT(pps_trace_dropped(t), 0);
    close_ok(t);

    struct pps_run *run = load_ok(dir);
    if (run) {
        const struct pps_stage_spans *b = &run->stages[0];
        int seen = 0;
        CHECK_EQ_INT((int)b->n, N);
        for (size_t k = 0; k < b->n; k++) {
            const struct pps_span *s = &b->spans[k];
            if (s->mb < 0 || s->mb >= N)
                continue;
            seen++;
            int64_t lo = s->start_ns - before[s->mb], hi = after[s->mb] - s->end_ns;
            worst_lo = lo < worst_lo ? lo : worst_lo;
            worst_hi = hi < worst_hi ? hi : worst_hi;
            CHECK(s->start_ns <= s->end_ns);
        }
        CHECK_EQ_INT(seen, N);
        printf("  worst: a span started %lld ns before, ended %lld ns after its readings\n",
               (long long)-worst_lo, (long long)-worst_hi);
        CHECK(worst_lo >= -1000);
        CHECK(worst_hi >= -1000);
        const char *src = pps_run_meta(run, "clock_source");
        CHECK(src != NULL);
        if (src)
            CHECK_STR_CONTAINS(src, pps__tsc_on ? "tsc" : "monotonic");
        if (pps__tsc_on) {
            const char *hz = pps_run_meta(run, "clock_tsc_hz");
            CHECK(hz != NULL && atof(hz) > 1e8);
        }
    }
    /* The TSC is not the default (tracer/tsc.h): unset, empty or monotonic is the clock. */
    if (!want || !*want || strcmp(want, "monotonic") == 0)
        CHECK_EQ_INT(pps__tsc_on, 0);
    pps_run_free(run);
    tmpdir_free(dir);
}

int main(int argc, char **argv)
{
    static const struct test_case cases[] = {
        TEST(test_map_is_exact_on_a_line),
        TEST(test_map_follows_a_change_of_rate),
        TEST(test_map_keeps_points_apart_and_increasing),
        TEST(test_map_thins_and_covers_the_run),
        TEST(test_spans_agree_with_clock_monotonic),
        {NULL, NULL},
    };
    return test_main(cases, argc, argv);
}
