/*
 * tsc.c - the process's stamp mode and the TSC-to-CLOCK_MONOTONIC map of one tracer (tsc.h).
 */
#include "tsc.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tracer_core.h"

/* 10 ms between kept points: CLOCK_MONOTONIC's rate, which NTP changes, is taken as steady only
 * that long (a 50 ppm change misplaces a tick by 0.5 us at most). */
#define MIN_SPACING_NS 10000000
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
    /* Off unless asked for: spans the caller times with pps_trace_now() (CLOCK_MONOTONIC) and
     * spans stamped with the TSC, converted later, may disagree by the conversion's error (tens
     * of nanoseconds, more on a loaded host) where they meet. docs/tracer.md, Clocks. */
    if (!env || !*env || strcmp(env, "monotonic") == 0)
        return;
    if (strcmp(env, "tsc") == 0) {
        pps__tsc_on = 1;
        return;
    }
    if (strcmp(env, "auto") != 0) {
        /* Not a reason to stop tracing: said in the shard's meta. */
        snprintf(mode_reason, sizeof(mode_reason),
                 "PPSCOPE_CLOCK=%.20s is not tsc, auto or monotonic: monotonic", env);
        return;
    }
    if (!cpu_has_flags(flags, 2)) {
        snprintf(mode_reason, sizeof(mode_reason),
                 "the CPU has no invariant TSC (constant_tsc, nonstop_tsc)");
        return;
    }
    kernel_clocksource(source, sizeof(source));
    if (strcmp(source, "tsc") != 0) {
        snprintf(mode_reason, sizeof(mode_reason), "the kernel's clocksource is %s, not tsc",
                 source[0] ? source : "unknown");
        return;
    }
    pps__tsc_on = 1;
#endif
}

void pps__tsc_mode_init(void)
{
    pthread_once(&mode_once, mode_decide);
}

const char *pps__tsc_mode_reason(void)
{
    return mode_reason;
}

int pps__tsc_map_init(struct pps__tsc_map *m, size_t cap)
{
    m->n = 0;
    m->cap = cap < 4 ? 4 : cap;
    m->pts = calloc(m->cap, sizeof(*m->pts));
    return m->pts ? 0 : -1;
}

void pps__tsc_map_release(struct pps__tsc_map *m)
{
    free(m->pts);
    m->pts = NULL;
    m->n = m->cap = 0;
}

/* The slope of the segment from point i to point i + 1. */
static void set_mult(struct pps__tsc_map *m, size_t i)
{
    const struct pps__tsc_point *p = &m->pts[i], *q = &m->pts[i + 1];
    m->pts[i].mult = (uint64_t)(((unsigned __int128)(q->ns - p->ns) << PPS__TSC_SHIFT) /
                                (unsigned __int128)(q->tick - p->tick));
}

/* Keeps every other point of the older half (the first point always), then the rest. */
static void thin(struct pps__tsc_map *m)
{
    size_t half = m->n / 2, k = 1;

    for (size_t i = 2; i < half; i += 2)
        m->pts[k++] = m->pts[i];
    for (size_t i = half; i < m->n; i++)
        m->pts[k++] = m->pts[i];
    m->n = k;
    for (size_t i = 0; i + 1 < m->n; i++)
        set_mult(m, i);
}

int pps__tsc_map_add(struct pps__tsc_map *m, int64_t tick, int64_t ns)
{
    if (m->n > 0 && (tick <= m->pts[m->n - 1].tick || ns <= m->pts[m->n - 1].ns))
        return -1;
    if (m->n >= 2 && ns - m->pts[m->n - 2].ns < MIN_SPACING_NS) {
        m->pts[m->n - 1] = (struct pps__tsc_point){tick, ns, 0};
        set_mult(m, m->n - 2);
        return 0;
    }
    if (m->n == m->cap)
        thin(m);
    m->pts[m->n++] = (struct pps__tsc_point){tick, ns, 0};
    if (m->n >= 2)
        set_mult(m, m->n - 2);
    return 0;
}

void pps__tsc_map_sample(struct pps__tsc_map *m)
{
    int64_t best = INT64_MAX, tick = 0, ns = 0;

    for (int i = 0; i < SAMPLE_TRIES; i++) {
#if defined(__x86_64__)
        _mm_lfence();
#endif
        int64_t a = pps__rdtsc();
#if defined(__x86_64__)
        _mm_lfence();
#endif
        int64_t n = pps__now();
#if defined(__x86_64__)
        _mm_lfence();
#endif
        int64_t b = pps__rdtsc();
        if (b >= a && b - a < best) {
            best = b - a;
            tick = a + (b - a) / 2;
            ns = n;
        }
    }
    if (best != INT64_MAX)
        pps__tsc_map_add(m, tick, ns);
}

int64_t pps__tsc_map_ns(const struct pps__tsc_map *m, int64_t tick)
{
    size_t lo = 0, hi;
    const struct pps__tsc_point *p;

    if (m->n < 2)
        return m->n ? m->pts[0].ns : 0;
    hi = m->n - 2;
    if (tick >= m->pts[hi].tick) {
        lo = hi; /* the newest segment: where nearly every span falls */
    } else {
        /* The last point at or before tick, within [0, n - 2]. */
        while (lo < hi) {
            size_t mid = lo + (hi - lo + 1) / 2;
            if (m->pts[mid].tick <= tick)
                lo = mid;
            else
                hi = mid - 1;
        }
    }
    p = &m->pts[lo];
    return p->ns + (int64_t)(((__int128)(tick - p->tick) * (__int128)p->mult) >> PPS__TSC_SHIFT);
}

double pps__tsc_map_hz(const struct pps__tsc_map *m)
{
    if (m->n < 2)
        return 0;
    const struct pps__tsc_point *p = &m->pts[0], *q = &m->pts[m->n - 1];
    return (double)(q->tick - p->tick) * 1e9 / (double)(q->ns - p->ns);
}
