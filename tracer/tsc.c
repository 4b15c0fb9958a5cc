/*
 * tsc.c - the process's stamp mode, and the one line that turns its TSC ticks into CLOCK_MONOTONIC
 * nanoseconds (tsc.h).
 */
#include "tsc.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tracer_core.h"

#define MIN_SPACING_NS 10000000 /* between calibration samples */
#define SAMPLE_TRIES   5

int pps__tsc_on;

static pthread_once_t mode_once = PTHREAD_ONCE_INIT;
static char mode_reason[96];

/* Whether /proc/cpuinfo's first flags line has every flag in want (space-separated). */
static int cpu_has_flags(const char *const *want, size_t n_want)
{
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[8192];
    int found = 0;

    if (!f)
        return 0;
    while (fgets(line, sizeof(line), f)) {
        if (strncmp(line, "flags", 5) != 0)
            continue;
        found = 1;
        for (size_t i = 0; i < n_want && found; i++) {
            size_t len = strlen(want[i]);
            const char *p = line;
            found = 0;
            while ((p = strstr(p, want[i])) != NULL) {
                if ((p[-1] == ' ' || p[-1] == '\t') &&
                    (p[len] == ' ' || p[len] == '\n' || p[len] == '\0')) {
                    found = 1;
                    break;
                }
                p += len;
            }
        }
        break;
    }
    fclose(f);
    return found;
}

/* The kernel's current clocksource ("tsc", "hpet", "kvm-clock"...), or "" when unknown. */
static void kernel_clocksource(char *buf, size_t len)
{
    FILE *f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "r");

    buf[0] = '\0';
    if (!f)
        return;
    if (fgets(buf, (int)len, f))
        buf[strcspn(buf, "\n")] = '\0';
    fclose(f);
}

static void mode_decide(void)
{
    const char *env = getenv("PPSCOPE_CLOCK");
    static const char *const flags[] = {"constant_tsc", "nonstop_tsc"};
    char source[32];

#if !defined(__x86_64__)
    snprintf(mode_reason, sizeof(mode_reason), "not an x86-64 CPU");
    (void)env;
    (void)flags;
    (void)source;
    (void)cpu_has_flags;
    (void)kernel_clocksource;
    return;
#else
    if (env && strcmp(env, "monotonic") == 0) {
        snprintf(mode_reason, sizeof(mode_reason), "PPSCOPE_CLOCK=monotonic");
        return;
    }
    if (env && strcmp(env, "tsc") == 0) {
        pps__tsc_on = 1;
        return;
    }
    if (env && *env && strcmp(env, "auto") != 0) /* not a reason to stop tracing: said in meta */
        snprintf(mode_reason, sizeof(mode_reason),
                 "PPSCOPE_CLOCK=%.20s is not tsc, auto or monotonic: auto", env);
    if (!cpu_has_flags(flags, 2)) {
        if (!mode_reason[0])
            snprintf(mode_reason, sizeof(mode_reason),
                     "the CPU has no invariant TSC (constant_tsc, nonstop_tsc)");
        return;
    }
    kernel_clocksource(source, sizeof(source));
    if (strcmp(source, "tsc") != 0) {
        if (!mode_reason[0])
            snprintf(mode_reason, sizeof(mode_reason), "the kernel's clocksource is %s, not tsc",
                     source[0] ? source : "unknown");
        return;
    }
    pps__tsc_on = 1;
#endif
}

static void fork_prepare(void);
static void fork_parent(void);
static void fork_child(void);

static void mode_init(void)
{
    mode_decide();
    if (pps__tsc_on)
        pthread_atfork(fork_prepare, fork_parent, fork_child);
}

void pps__tsc_mode_init(void)
{
    pthread_once(&mode_once, mode_init);
}

const char *pps__tsc_mode_reason(void)
{
    return mode_reason;
}

/* ---- the line ---------------------------------------------------------------------------- */

static int64_t along(int64_t tick0, int64_t ns0, uint64_t mult, int64_t tick)
{
    return ns0 + (int64_t)(((__int128)(tick - tick0) * (__int128)mult) >> PPS__TSC_SHIFT);
}

static int64_t seg_eval(const struct pps__tsc_seg *g, int64_t tick)
{
    if (tick < g->tick) /* before the oldest kept: back at the clock's rate */
        return along(g->tick, g->ns, g->rate, tick);
    if (tick <= g->knee_tick)
        return along(g->tick, g->ns, g->mult, tick);
    return along(g->knee_tick, g->knee_ns, g->rate, tick);
}

/* ns per tick over [a, b], in fixed point; 0 when b is not after a in both. */
static uint64_t slope(int64_t tick_a, int64_t ns_a, int64_t tick_b, int64_t ns_b)
{
    if (tick_b <= tick_a || ns_b <= ns_a)
        return 0;
    return (uint64_t)(((unsigned __int128)(ns_b - ns_a) << PPS__TSC_SHIFT) /
                      (unsigned __int128)(tick_b - tick_a));
}

static void publish(struct pps__tsc_line *l, uint64_t n, struct pps__tsc_seg g)
{
    l->segs[n % PPS__TSC_SEGS] = g;
    atomic_store_explicit(&l->n_segs, n + 1, memory_order_release);
}

void pps__tsc_line_add(struct pps__tsc_line *l, int64_t tick, int64_t ns, int64_t now)
{
    uint64_t n = atomic_load_explicit(&l->n_segs, memory_order_relaxed);
    uint64_t k = l->n_samples, rate;
    int64_t t_old = 0, n_old = 0;

    if (k > 0) {
        uint64_t last = (k - 1) % PPS__TSC_SAMPLES;
        if (tick <= l->sample_tick[last] || ns <= l->sample_ns[last])
            return;
    }
    l->sample_tick[k % PPS__TSC_SAMPLES] = tick;
    l->sample_ns[k % PPS__TSC_SAMPLES] = ns;
    l->n_samples = ++k;
    if (k < 2)
        return;
    /* The rate over about a second: from the newest kept sample at least that far back, else
     * from the oldest kept. */
    {
        uint64_t first = k > PPS__TSC_SAMPLES ? k - PPS__TSC_SAMPLES : 0, j = first;
        for (uint64_t i = first; i + 1 < k; i++)
            if (ns - l->sample_ns[i % PPS__TSC_SAMPLES] >= PPS__TSC_RATE_NS)
                j = i;
        t_old = l->sample_tick[j % PPS__TSC_SAMPLES];
        n_old = l->sample_ns[j % PPS__TSC_SAMPLES];
    }
    if (!(rate = slope(t_old, n_old, tick, ns)))
        return;
    if (n == 0) {
        /* The first segment starts at the first sample, on the clock, at the first rate. */
        publish(l, 0,
                (struct pps__tsc_seg){l->sample_tick[0], l->sample_ns[0], rate, l->sample_tick[0],
                                      l->sample_ns[0], rate});
        return;
    }
    {
        const struct pps__tsc_seg *cur = &l->segs[(n - 1) % PPS__TSC_SEGS];
        int64_t ahead = (int64_t)((((__int128)PPS__TSC_AHEAD_NS) << PPS__TSC_SHIFT) / rate);
        int64_t steer = (int64_t)((((__int128)PPS__TSC_STEER_NS) << PPS__TSC_SHIFT) / rate);
        int64_t start = tick + (ahead > 0 ? ahead : 1), meet = start + (steer > 0 ? steer : 1);
        int64_t at = seg_eval(cur, start); /* where the line is: it stays continuous */
        int64_t want = ns + (int64_t)(((__int128)(meet - tick) * (__int128)rate) >> PPS__TSC_SHIFT);
        uint64_t mult = slope(start, at, meet, want);
        uint64_t lo = rate - rate / 1000, hi = rate + rate / 1000; /* steer by 0.1% at most */

        if (start <= cur->tick || now > start - ahead / 2)
            return; /* too late: a tick already read could fall in it */
        if (mult < lo)
            mult = lo;
        if (mult > hi)
            mult = hi;
        publish(l, n,
                (struct pps__tsc_seg){start, at, mult, meet, along(start, at, mult, meet), rate});
    }
}

int64_t pps__tsc_line_ns(const struct pps__tsc_line *l, int64_t tick)
{
    uint64_t n = atomic_load_explicit(&l->n_segs, memory_order_acquire);
    /* The oldest kept, leaving a margin the writer may be overwriting. */
    uint64_t lo = n > PPS__TSC_SEGS - 16 ? n - (PPS__TSC_SEGS - 16) : 0, hi;

    if (n == 0)
        return INT64_MIN;
    hi = n - 1;
    if (tick >= l->segs[hi % PPS__TSC_SEGS].tick) /* the newest: nearly every tick */
        return seg_eval(&l->segs[hi % PPS__TSC_SEGS], tick);
    /* The last segment at or before tick, within [lo, hi]. */
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo + 1) / 2;
        if (l->segs[mid % PPS__TSC_SEGS].tick <= tick)
            lo = mid;
        else
            hi = mid - 1;
    }
    return seg_eval(&l->segs[lo % PPS__TSC_SEGS], tick);
}

double pps__tsc_line_hz(const struct pps__tsc_line *l)
{
    uint64_t k = l->n_samples;
    uint64_t first = k > PPS__TSC_SAMPLES ? k - PPS__TSC_SAMPLES : 0;

    if (k < 2)
        return 0;
    int64_t dt =
        l->sample_tick[(k - 1) % PPS__TSC_SAMPLES] - l->sample_tick[first % PPS__TSC_SAMPLES];
    int64_t dn = l->sample_ns[(k - 1) % PPS__TSC_SAMPLES] - l->sample_ns[first % PPS__TSC_SAMPLES];
    return dn > 0 ? (double)dt * 1e9 / (double)dn : 0;
}

/* ---- the process's line ----------------------------------------------------------------- */

static struct pps__tsc_line line;
static pthread_mutex_t line_lock = PTHREAD_MUTEX_INITIALIZER;
/* For pps__tsc_now(), read without the lock: the newest sample's tick, and the ticks after which
 * the line is stale (100 ms at the first segment's rate; 0 before it: stale at once). */
static _Atomic int64_t last_sample_tick, stale_ticks;

/* A child forked while a flusher held line_lock would find it locked for ever. */
static void fork_prepare(void)
{
    pthread_mutex_lock(&line_lock);
}

static void fork_parent(void)
{
    pthread_mutex_unlock(&line_lock);
}

static void fork_child(void)
{
    pthread_mutex_init(&line_lock, NULL);
}

/* A TSC reading and the clock's at the same moment: the best of a few tries, each between two
 * ordered TSC reads. 0, or -1 when none of them was in order. */
static int sample(int64_t *tick, int64_t *ns)
{
    int64_t best = INT64_MAX;

    for (int i = 0; i < SAMPLE_TRIES; i++) {
#if defined(__x86_64__)
        _mm_lfence();
#endif
        int64_t a = pps__rdtsc();
#if defined(__x86_64__)
        _mm_lfence();
#endif
        int64_t n = pps__now() - pps__clock_skew_ns; /* the line is the raw clock's */
#if defined(__x86_64__)
        _mm_lfence();
#endif
        int64_t b = pps__rdtsc();
        if (b >= a && b - a < best) {
            best = b - a;
            *tick = a + (b - a) / 2;
            *ns = n;
        }
    }
    return best == INT64_MAX ? -1 : 0;
}

/* One sample into the line, under line_lock, at most every MIN_SPACING_NS; while the line has
 * no segment, samples 1 ms apart until it has (the first wants a rate; at most 100 tries). */
static void calibrate_locked(void)
{
    uint64_t k = line.n_samples;
    int64_t tick, ns;

    if (atomic_load_explicit(&line.n_segs, memory_order_relaxed) == 0) {
        for (int i = 0; i < 100 && atomic_load_explicit(&line.n_segs, memory_order_relaxed) == 0;
             i++) {
            if (sample(&tick, &ns) == 0)
                pps__tsc_line_add(&line, tick, ns, pps__rdtsc());
            for (int64_t until = pps__now() + 1000000; pps__now() < until;)
                ;
        }
    } else if (pps__now() - pps__clock_skew_ns - line.sample_ns[(k - 1) % PPS__TSC_SAMPLES] >=
                   MIN_SPACING_NS &&
               sample(&tick, &ns) == 0) {
        pps__tsc_line_add(&line, tick, ns, pps__rdtsc());
    }
    if (line.n_samples == 0 || atomic_load_explicit(&line.n_segs, memory_order_relaxed) == 0)
        return;
    if (!atomic_load_explicit(&stale_ticks, memory_order_relaxed))
        atomic_store_explicit(
            &stale_ticks, (int64_t)((((__int128)100000000) << PPS__TSC_SHIFT) / line.segs[0].rate),
            memory_order_relaxed);
    atomic_store_explicit(&last_sample_tick,
                          line.sample_tick[(line.n_samples - 1) % PPS__TSC_SAMPLES],
                          memory_order_relaxed);
}

void pps__tsc_calibrate(void)
{
    if (!pps__tsc_on)
        return;
    pthread_mutex_lock(&line_lock);
    calibrate_locked();
    pthread_mutex_unlock(&line_lock);
}

int64_t pps__tsc_ns(int64_t tick)
{
    int64_t ns = pps__tsc_line_ns(&line, tick);
    /* The test skew on top, as pps__now() adds it: a skew set at an open moves every time at
     * once, not through the line's steering. */
    return ns == INT64_MIN ? pps__now() : ns + pps__clock_skew_ns;
}

int64_t pps__tsc_now(void)
{
    int64_t tick = pps__rdtsc();

    /* No flusher has sampled for a while (every tracer closed, or none drains): this caller
     * does, if no one else is at it, so the line does not run on from an old rate. */
    if (tick - atomic_load_explicit(&last_sample_tick, memory_order_relaxed) >
            atomic_load_explicit(&stale_ticks, memory_order_relaxed) &&
        pthread_mutex_trylock(&line_lock) == 0) {
        calibrate_locked();
        pthread_mutex_unlock(&line_lock);
        tick = pps__rdtsc();
    }
    return pps__tsc_ns(tick);
}

int pps__tsc_ready(void)
{
    return atomic_load_explicit(&line.n_segs, memory_order_acquire) > 0;
}

double pps__tsc_hz(void)
{
    double hz;

    pthread_mutex_lock(&line_lock);
    hz = pps__tsc_line_hz(&line);
    pthread_mutex_unlock(&line_lock);
    return hz;
}
