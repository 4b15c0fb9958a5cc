/*
 * cupti.h - device spans from CUPTI's Activity API, for the tracers of this process that ask
 * (pps_trace_device_activity): kernels, copies and memsets, each as a span of the op that
 * launched it (devmap.h says how), on the host clock.
 *
 * CUPTI is loaded at run time (dlopen of the toolkit's libcupti), never linked: the tracer goes
 * into programs without CUDA. It is process-wide: the first tracer that asks loads and enables
 * it, and takes a slot (0..126) that its ops' external correlation ids carry; the last one to
 * close disables it. Buffers: CUPTI asks for them and hands them back full on its own thread
 * (the callbacks below only allocate and queue); the tracers' flushers parse them, never a
 * training thread, and route each span to its tracer's slot. Records CUPTI could not keep (its
 * buffers full) are counted, and the count goes into each shard's meta at close.
 *
 * Not installed; tracer/ only. Without PPS_HAVE_CUPTI every call says so (PPS_ENOENT).
 */
#ifndef PPS_TRACER_CUPTI_H
#define PPS_TRACER_CUPTI_H

#include <stdint.h>

#include "pps_error.h"

struct pps_tracer;

/* Loads and enables CUPTI for t (once per process), and gives t its slot in *slot, and CUPTI's
 * drop count so far in *dropped. PPS_ENOENT when this build has no CUPTI, libcupti cannot be
 * loaded or CUPTI cannot trace here (no GPU). */
int pps__cupti_attach(struct pps_tracer *t, int *slot, uint64_t *dropped, struct pps_err *err);

struct pps__cupti_counts {
    uint64_t dropped;      /* records CUPTI dropped over the process's life so far */
    uint64_t unattributed; /* t's share of records no op of a live tracer claimed (see below) */
};
/* At t's close, before its last drain: everything CUPTI holds is flushed and routed (t's share
 * into t's device queue), then t gives up its slot; the last tracer disables CUPTI. Records
 * whose call ran outside every op (the gradient norm between ops, say), or whose tracer has
 * closed, belong to no stage anyone can name: they are counted, not written. */
struct pps__cupti_counts pps__cupti_detach(struct pps_tracer *t);
/* On a flusher, at the start of its drain: the buffers CUPTI has handed back, parsed and routed
 * to the tracers of their ops (at most one flusher at a time parses; the others go on). Asks
 * CUPTI to hand back what it holds at most every PPS__CUPTI_FLUSH_MS. */
void pps__cupti_poll(struct pps_tracer *t);
/* Around an op of t: its external correlation id pushed (the packed op, devmap.h) and popped. */
void pps__cupti_push(uint64_t ext);
void pps__cupti_pop(void);

#define PPS__CUPTI_FLUSH_MS 100

#endif
