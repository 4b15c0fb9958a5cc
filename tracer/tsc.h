/*
 * tsc.h - timestamps as TSC ticks on the hot path, nanoseconds in the shard.
 *
 * With PPSCOPE_CLOCK=auto, where the CPU's time-stamp counter is invariant (it ticks at one rate
 * whatever the core's frequency and power state: /proc/cpuinfo's constant_tsc and nonstop_tsc)
 * and the kernel keeps CLOCK_MONOTONIC with it (clocksource tsc), or with PPSCOPE_CLOCK=tsc on
 * any x86-64 CPU, a span's times are read with rdtsc, which costs about half a clock_gettime()
 * call, and turned into CLOCK_MONOTONIC nanoseconds by the tracer's flusher just before they are
 * written. By default (unset, or monotonic) they are CLOCK_MONOTONIC readings from the start:
 * spans a caller times with pps_trace_now() and stamped spans would otherwise disagree by the
 * conversion's error where they meet. The choice is made once per process, before its first
 * span, and never changes.
 *
 * The conversion is a map of calibration points, each a TSC reading paired with a
 * CLOCK_MONOTONIC reading taken between two TSC readings close together (the best of several):
 * at open, at every drain of the flusher, at close. A tick is converted by interpolating
 * between the two points around it, so its error is that of the points, a few tens of
 * nanoseconds, and CLOCK_MONOTONIC's own rate corrections (NTP slews it) are followed from
 * point to point. Points are kept 10 ms apart or more, 4096 at most: when full, the older half
 * is thinned to every other point, so the map always covers the whole run, more coarsely in the
 * past (only a span open for minutes starts there).
 *
 * Nothing here takes a lock: a map belongs to one tracer's flusher (or its close after the join).
 */
#ifndef PPS_TRACER_TSC_H
#define PPS_TRACER_TSC_H

#include <stddef.h>
#include <stdint.h>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

/* A span slot's clock while its times are TSC ticks (never stored: the flusher converts them
 * and sets PPS_CLOCK_HOST). */
#define PPS__CLOCK_TICKS 0x80

/* 1 when the process stamps spans with the TSC. Written once, by pps__tsc_mode_init(), before
 * the first tracer opens; read without synchronisation on the hot path. */
extern int pps__tsc_on;

/* Decides the process's mode (once; later calls do nothing), from PPSCOPE_CLOCK and the CPU. */
void pps__tsc_mode_init(void);

/* Why the process does not stamp with the TSC ("the CPU has no invariant TSC ...", "the kernel's
 * clocksource is hpet, not tsc", "PPSCOPE_CLOCK=monotonic"), or that PPSCOPE_CLOCK held
 * something else; "" otherwise. The tracer writes it as meta clock_source_note. */
const char *pps__tsc_mode_reason(void);

static inline int64_t pps__rdtsc(void)
{
#if defined(__x86_64__)
    return (int64_t)__rdtsc();
#else
    return 0;
#endif
}

#define PPS__TSC_SHIFT 40

struct pps__tsc_point {
    int64_t tick, ns;
    /* The slope of the segment to the next point, ns per tick in fixed point with
     * PPS__TSC_SHIFT fraction bits: a rounding error of 1 ns per 10^12 ticks (minutes of a
     * multi-GHz TSC), and room for any TSC faster than 1 Hz. */
    uint64_t mult;
};

struct pps__tsc_map {
    struct pps__tsc_point *pts; /* by tick, ascending; cap entries */
    size_t n, cap;
};

/* An empty map with room for cap points (at least 4; PPS__TSC_POINTS in use); -1 when out of
 * memory. */
#define PPS__TSC_POINTS 4096
int pps__tsc_map_init(struct pps__tsc_map *m, size_t cap);
void pps__tsc_map_release(struct pps__tsc_map *m);

/* Adds a calibration point (tick, ns): replaces the newest one while it is within 100 ms of the
 * one before, thins the older half when full. A point not later than the newest in both tick
 * and ns is ignored (returns -1): the map stays increasing. */
int pps__tsc_map_add(struct pps__tsc_map *m, int64_t tick, int64_t ns);

/* Takes a calibration point now against pps_trace_now()'s clock (its test skew included) and
 * adds it. */
void pps__tsc_map_sample(struct pps__tsc_map *m);

/* A tick in nanoseconds: interpolated between the points around it, extrapolated along the
 * first or last segment outside them. The map needs two points or more. */
int64_t pps__tsc_map_ns(const struct pps__tsc_map *m, int64_t tick);

/* Ticks per second over the whole map (its first and last points); 0 with fewer than two. */
double pps__tsc_map_hz(const struct pps__tsc_map *m);

#endif
