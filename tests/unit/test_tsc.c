/*
 * test_tsc.c - TSC stamps turned into CLOCK_MONOTONIC nanoseconds (tracer/tsc.h).
 *
 * The line on made-up clocks with a known answer: the clock itself when the clock is a line,
 * following a change of rate (NTP slewing CLOCK_MONOTONIC), a tick converting the same whenever
 * it is converted. Then the
 * tracer for real: spans recorded with begin/end between two clock_gettime() readings, over a
 * couple of seconds with flushes between them, must land within 1 us of those readings once
 * converted. The process's mode comes from PPSCOPE_CLOCK, which tests/tracer.cmake sets: "tsc"
 * for test_tsc, "monotonic" for test_tsc_monotonic (the same checks on the other path).
 */
#include <stdatomic.h>
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

static struct pps__tsc_line *line_new(void)
{
    struct pps__tsc_line *l = calloc(1, sizeof(*l)); /* 1.5 MB: not on the stack */
    CHECK(l != NULL);
    if (!l)
        exit(1);
    return l;
}

/* A clock at exactly 0.4 ns per tick, sampled every 10 ms: the line is the clock, to the ns,
 * between the samples and beyond them. */
static void test_line_is_the_clock_when_the_clock_is_a_line(void)
{
    struct pps__tsc_line *l = line_new();

    CHECK_EQ_INT(pps__tsc_line_ns(l, 123), INT64_MIN);
    for (int64_t i = 0; i < 300; i++)
        pps__tsc_line_add(l, 1000 + i * 25000000, 5000 + i * 10000000, 1000 + i * 25000000);
    int64_t worst = 0;
    for (int64_t tick = 1000; tick < 300LL * 25000000; tick += 123456789) {
        int64_t d = llabs(pps__tsc_line_ns(l, tick) - (5000 + (tick - 1000) * 2 / 5));
        worst = d > worst ? d : worst;
    }
    printf("  a clock that is a line: the line within %lld ns of it\n", (long long)worst);
    CHECK(worst <= 2); /* the rounding of each segment's start, steered away by the next */
    CHECK_NEAR(pps__tsc_line_hz(l), 2.5e9, 1.0);
    free(l);
}

/* The clock runs 100 ppm fast from 2 s on (NTP changing its rate): within a second or two the
 * line follows it to 100 ns, and it never runs backwards on the way. */
static void test_line_follows_a_change_of_rate(void)
{
    struct pps__tsc_line *l = line_new();
    const int64_t step = 10000000; /* ticks (1 ns each at first) between samples */
    int64_t ns = 0, worst = 0, prev = INT64_MIN;

    for (int64_t i = 0; i <= 600; i++) {
        int64_t tick = i * step;
        pps__tsc_line_add(l, tick, ns, tick);
        if (i >= 400) { /* 2 s after the change */
            int64_t d = llabs(pps__tsc_line_ns(l, tick) - ns);
            worst = d > worst ? d : worst;
        }
        for (int64_t t = tick; t < tick + step; t += step / 7) {
            int64_t g = pps__tsc_line_ns(l, t);
            CHECK(g >= prev);
            prev = g;
        }
        ns += i < 200 ? step : step + step / 10000;
    }
    printf("  after a 100 ppm change of rate: the line within %lld ns of the clock\n",
           (long long)worst);
    CHECK(worst <= 100);
    free(l);
}

/* Samples a second apart (a flusher that drains rarely), each 20 ns off the clock either way:
 * past its knee a segment runs at the clock's rate, so the line stays within 100 ns, where a
 * slope steered for 50 ms and kept for a second would run away. */
static void test_line_stays_near_the_clock_with_rare_samples(void)
{
    struct pps__tsc_line *l = line_new();
    const int64_t step = 1000000000;
    int64_t worst = 0;

    for (int64_t i = 0; i < 120; i++) {
        int64_t tick = i * step, ns = tick + (i % 2 ? 20 : -20);
        pps__tsc_line_add(l, tick, ns, tick);
        if (i >= 20) {
            int64_t d = llabs(pps__tsc_line_ns(l, tick + step / 2) - (tick + step / 2));
            worst = d > worst ? d : worst;
        }
    }
    printf("  samples 1 s apart, 20 ns of noise: the line within %lld ns of the clock\n",
           (long long)worst);
    CHECK(worst <= 100);
    free(l);
}

/* A sample added too late (its segment would start almost at once) is dropped. */
static void test_a_late_sample_is_dropped(void)
{
    struct pps__tsc_line *l = line_new();

    for (int64_t i = 0; i < 10; i++)
        pps__tsc_line_add(l, i * 10000000, i * 10000000, i * 10000000);
    uint64_t n = atomic_load(&l->n_segs);
    /* 0.9 ms after its sample: its segment would start 0.1 ms from now. */
    pps__tsc_line_add(l, 100000000, 100000000, 100000000 + 900000);
    CHECK_EQ_INT((int)atomic_load(&l->n_segs), (int)n);
    free(l);
}

/* A tick converted now converts the same later, however many samples come after it: a segment
 * starts ahead of its sample, so no tick read before it can fall in it. */
static void test_a_tick_converts_the_same_later(void)
{
    struct pps__tsc_line *l = line_new();
    enum { N = 200 };
    int64_t ticks[N], first[N], ns = 0;

    for (int64_t i = 0; i < N; i++) {
        int64_t tick = i * 10000000;
        pps__tsc_line_add(l, tick, ns, tick);
        ticks[i] = tick + 3000000; /* read 3 ms after the sample: on the line as it is now */
        first[i] = pps__tsc_line_ns(l, ticks[i]);
        ns += 10000000 + (i % 3) * 1000; /* a clock with some noise of its own */
    }
    for (int i = 1; i < N; i++)
        CHECK_EQ_INT(pps__tsc_line_ns(l, ticks[i]), first[i]);
    free(l);
}

/* A sample that does not move forward in both tick and time is left out. */
static void test_line_ignores_samples_out_of_order(void)
{
    struct pps__tsc_line *l = line_new();

    pps__tsc_line_add(l, 100, 1000, 100);
    pps__tsc_line_add(l, 200, 2000, 200);
    uint64_t n = atomic_load(&l->n_segs);
    pps__tsc_line_add(l, 150, 3000, 150);
    pps__tsc_line_add(l, 300, 1500, 300);
    CHECK_EQ_INT((int)atomic_load(&l->n_segs), (int)n);
    CHECK_EQ_INT((int)l->n_samples, 2);
    free(l);
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
    if (want && strcmp(want, "monotonic") == 0)
        CHECK_EQ_INT(pps__tsc_on, 0);
    pps_run_free(run);
    tmpdir_free(dir);
}

/* A wait timed with pps_trace_now() and recorded, then an op with begin/end, again and again:
 * in the shard every wait ends before its op starts, whichever clock each was read by. */
static void test_timed_and_stamped_spans_keep_their_order(void)
{
    char *dir = tmpdir_new();
    struct pps_trace_options o = opts(dir, 1 << 16, 5);
    struct pps_tracer *t = open_ok(&o);
    enum { N = 20000 };
    int bad = 0, pairs = 0;

    for (int i = 0; i < N; i++) {
        int64_t a = pps_trace_now(), b = pps_trace_now();
        pps_trace_p2p(t, PPS_TRACE_WAIT, 0, 1, i, 0, a, b);
        pps_trace_begin(t, PPS_TRACE_F, 0, 0, i);
        pps_trace_end(t);
    }
    close_ok(t);
    struct pps_run *run = load_ok(dir);
    if (run) {
        static int64_t wait_end[N], f_start[N];
        const struct pps_stage_spans *st = &run->stages[0];
        for (size_t k = 0; k < st->n; k++) {
            const struct pps_span *s = &st->spans[k];
            if (s->mb < 0 || s->mb >= N)
                continue;
            if (s->kind == PPS_SPAN_WAIT)
                wait_end[s->mb] = s->end_ns;
            else if (s->kind == PPS_SPAN_F)
                f_start[s->mb] = s->start_ns, pairs++;
        }
        for (int i = 0; i < N; i++)
            bad += f_start[i] < wait_end[i];
        CHECK_EQ_INT(pairs, N);
        CHECK_EQ_INT(bad, 0);
    }
    pps_run_free(run);
    tmpdir_free(dir);
}

int main(int argc, char **argv)
{
    static const struct test_case cases[] = {
        TEST(test_line_is_the_clock_when_the_clock_is_a_line),
        TEST(test_line_follows_a_change_of_rate),
        TEST(test_a_tick_converts_the_same_later),
        TEST(test_line_stays_near_the_clock_with_rare_samples),
        TEST(test_a_late_sample_is_dropped),
        TEST(test_line_ignores_samples_out_of_order),
        TEST(test_timed_and_stamped_spans_keep_their_order),
        TEST(test_spans_agree_with_clock_monotonic),
        {NULL, NULL},
    };
    return test_main(cases, argc, argv);
}
