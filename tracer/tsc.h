/*
 * tsc.h - timestamps as TSC ticks on the hot path, nanoseconds in the shard.
 *
 * Where the CPU's time-stamp counter is invariant (it ticks at one rate whatever the core's
 * frequency and power state: /proc/cpuinfo's constant_tsc and nonstop_tsc) and the kernel keeps
 * CLOCK_MONOTONIC with it (clocksource tsc), a span's times are read with rdtsc, which costs
 * about half a clock_gettime() call, and turned into CLOCK_MONOTONIC nanoseconds by the tracer's
 * flusher just before they are written; elsewhere they are CLOCK_MONOTONIC readings from the
 * start. PPSCOPE_CLOCK=monotonic forces the second, PPSCOPE_CLOCK=tsc the first on any x86-64
 * CPU (auto, or unset: as above). The choice is made once per process, before its first span,
 * and never changes.
 *
 * The conversion is one line for the process (struct pps__tsc_line below), calibrated against
 * CLOCK_MONOTONIC by every tracer's flusher as it drains: pps_trace_now() converts its own
 * reading of the TSC by it too, so spans a caller times and spans the tracer stamps lie on one
 * time line, to the nanosecond (for ticks within the last 65536 segments, 11 minutes at one per
 * 10 ms).
 */
#ifndef PPS_TRACER_TSC_H
#define PPS_TRACER_TSC_H

#include <stdatomic.h>
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

/*
 * The line that turns ticks into nanoseconds: continuous, piecewise linear, only ever extended.
 * Each calibration sample (tick, ns) appends a segment that starts a little in the future
 * (PPS__TSC_AHEAD_NS), where the line already is, with the slope that brings it to the clock
 * PPS__TSC_STEER_NS later, and on from there at the clock's rate over the last second or so. A
 * tick is converted by the segment it falls in, which is fixed before any tick can fall in it: a
 * tick converted when it was read (pps_trace_now()) and the same tick converted later by the
 * flusher give the same nanosecond, and a thread's ticks in order convert in order. Its distance
 * from CLOCK_MONOTONIC is the calibration's noise and the rate's change over a second, tens of
 * nanoseconds.
 */
/* Segments kept: 11 minutes at one per 10 ms; an older tick takes the oldest. */
#define PPS__TSC_SEGS     65536
#define PPS__TSC_SAMPLES  256        /* calibration samples kept for the rate */
#define PPS__TSC_AHEAD_NS 1000000    /* a segment starts 1 ms after its sample */
#define PPS__TSC_STEER_NS 50000000   /* and meets the clock 50 ms after its start */
#define PPS__TSC_RATE_NS  1000000000 /* the rate is taken over about a second */

/* A segment runs at mult (steered) from its start to its knee, where it meets the clock, then
 * on at rate (the clock's, as measured): a line with no new sample stays at the clock's rate,
 * not at a steered one. Slopes are ns per tick with PPS__TSC_SHIFT fraction bits. */
struct pps__tsc_seg {
    int64_t tick, ns;           /* where it starts */
    uint64_t mult;              /* from there to the knee */
    int64_t knee_tick, knee_ns; /* where it meets the clock */
    uint64_t rate;              /* after the knee, and before its start */
};

struct pps__tsc_line {
    struct pps__tsc_seg segs[PPS__TSC_SEGS];
    _Atomic uint64_t n_segs; /* appended so far: segment k is segs[k % PPS__TSC_SEGS] */
    int64_t sample_tick[PPS__TSC_SAMPLES], sample_ns[PPS__TSC_SAMPLES];
    uint64_t n_samples;
};

/* Adds a calibration sample (a TSC reading and the clock's at the same moment); now is the
 * TSC as the caller adds it: a sample added so late that its segment would start less than half
 * of PPS__TSC_AHEAD_NS from now is dropped, so that no tick already read falls in a new segment.
 * The first two samples make the first segment (at the first, with their rate); a sample that
 * does not move forward in both is ignored. One writer at a time; readers (pps__tsc_line_ns) any
 * time, from any thread, without a lock. */
void pps__tsc_line_add(struct pps__tsc_line *l, int64_t tick, int64_t ns, int64_t now);
/* tick in nanoseconds, or INT64_MIN while the line has no segment. */
int64_t pps__tsc_line_ns(const struct pps__tsc_line *l, int64_t tick);
/* The clock's rate in ticks per second over the samples kept; 0 with fewer than two. */
double pps__tsc_line_hz(const struct pps__tsc_line *l);

/* The process's line: pps__tsc_calibrate() takes a sample now, at most every 10 ms (any
 * flusher's drain, open and close call it; the first call takes two, 1 ms apart);
 * pps__tsc_ns() converts a tick (by the line, or by pps__now() before its first segment). */
void pps__tsc_calibrate(void);
int64_t pps__tsc_ns(int64_t tick);
/* The TSC now, converted: pps_trace_now()'s. Samples the line itself (if no one else is) when
 * no flusher has for 100 ms, so that it never runs on for long without the clock. */
int64_t pps__tsc_now(void);
double pps__tsc_hz(void);
/* 1 once the process's line has a segment (the TSC gave readings in order). */
int pps__tsc_ready(void);

#endif
