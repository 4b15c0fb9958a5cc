/*
 * emu_int.h - what emu.c and emu_link.c share: the clock they read and the sleep they take.
 */
#ifndef PPS_EMU_INT_H
#define PPS_EMU_INT_H

#include <stdint.h>

/* CLOCK_MONOTONIC in nanoseconds (the tracer's clock, without its test skew). */
int64_t pps__emu_now(void);

/* Sleeps until the absolute time deadline_ns on CLOCK_MONOTONIC (returns at once when it has
 * passed), after cutting the calling thread's timer slack so that it wakes within microseconds.
 * Never spins. */
void pps__emu_sleep_until(int64_t deadline_ns);

#endif
