/*
 * clock.c - the process's trace clock: CLOCK_MONOTONIC in nanoseconds (a vDSO read, no system
 * call), plus the skew a test may ask for through PPSCOPE_CLOCK_SKEW_NS to fake a rank whose
 * clock is off by a known amount.
 */
#include <errno.h>
#include <stdlib.h>

#include "tracer_core.h"

int64_t pps__clock_skew_ns;

void pps__clock_skew_init(void)
{
    const char *s = getenv("PPSCOPE_CLOCK_SKEW_NS");
    int64_t skew = 0;

    if (s && *s) {
        char *end;
        long long v;

        errno = 0;
        v = strtoll(s, &end, 10);
        if (errno == 0 && *end == '\0')
            skew = (int64_t)v;
    }
    /* Spans may be recording into another open tracer: only a change is written, so opening a
     * second tracer with the same environment touches nothing they read. */
    if (skew != pps__clock_skew_ns)
        pps__clock_skew_ns = skew;
}

int64_t pps_trace_now(void)
{
    /* With the TSC, the reading is converted by the line the tracer converts its stamps by
     * (tsc.h): both kinds of span lie on one time line. */
    if (pps__tsc_on)
        return pps__tsc_now();
    return pps__now();
}
