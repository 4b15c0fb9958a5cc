/*
 * devmap.h - device activity records (CUPTI's kernels, copies and memsets) turned into spans of
 * the ops that launched them. Pure: no CUPTI here (cupti.c feeds it), so it is tested on any
 * machine with records made up by the test.
 *
 * How a record finds its op. Around each op the runtime pushes an external correlation id that
 * packs the op itself: which tracer of the process recorded it (a slot), the span kind, chunk,
 * microbatch and iteration (pps__devop_pack). CUPTI writes one EXTERNAL_CORRELATION record per
 * API call made under it, giving that call's correlation id; a kernel or copy record carries the
 * correlation id of the call that launched it. The map keeps the recent (correlation id, op)
 * pairs in a ring indexed by correlation id (CUPTI numbers calls in order, so a ring of the last
 * PPS__DEVMAP_RING calls holds every one whose work can still be in flight); a record whose
 * call has not been seen yet waits, and is emitted unattributed (slot -1) once it has waited
 * PPS__DEVMAP_PATIENCE_NS.
 *
 * The spans: KERNEL (named) or MEMCPY (bytes; a memset is a MEMCPY named "memset", as the
 * importers write it), times as CUPTI gave them (on the host clock: cupti.c registers
 * pps_trace_now() as CUPTI's timestamp source), chunk, microbatch and iteration the op's, and
 * corr the op's packed id without the slot: the same value the host span of the op carries, so
 * that a reader pairs every device span with its op (docs/schema.md).
 */
#ifndef PPS_TRACER_DEVMAP_H
#define PPS_TRACER_DEVMAP_H

#include <stddef.h>
#include <stdint.h>

#include "storage.h"

/* Correlation ids remembered; pending records kept at most; how long one waits for its call
 * (three of cupti.c's flush periods: CUPTI hands back a buffer only when asked or full). */
#define PPS__DEVMAP_RING        (1 << 18)
#define PPS__DEVMAP_PENDING     4096
#define PPS__DEVMAP_PATIENCE_NS INT64_C(300000000)
/* Tracer slots a process can have (the packing's 7 bits). */
#define PPS__DEVOP_SLOTS 127

/*
 * The external correlation id of an op: bit 63 set, slot (0..126) in 7 bits, kind (0..15) in 4,
 * chunk (-1..254) in 8, microbatch (-1..2^20-2) in 20, iteration (-1..2^24-2) in 24. A value
 * out of range packs as -1 (chunk, microbatch, iteration) or 0 (kind). Never 0.
 */
uint64_t pps__devop_pack(int slot, int kind, int chunk, int mb, int iter);
/* The inverse; returns 0, or -1 when ext is not a packed op (bit 63 clear). */
int pps__devop_unpack(uint64_t ext, int *slot, int *kind, int *chunk, int *mb, int *iter);
/* The span corr of an op: its packed id without bit 63 and the slot. */
int64_t pps__devop_corr(uint64_t ext);

enum pps__devrec_type {
    PPS__DEVREC_EXTERNAL, /* corr is a call's correlation id, ext the op pushed around it */
    PPS__DEVREC_KERNEL,
    PPS__DEVREC_MEMCPY,
    PPS__DEVREC_MEMSET,
};

/* One record, as cupti.c reads it from CUPTI's buffer. */
struct pps__devrec {
    int type;      /* enum pps__devrec_type */
    uint32_t corr; /* the launching call's correlation id */
    uint64_t ext;  /* PPS__DEVREC_EXTERNAL: the op's packed id */
    int64_t start_ns, end_ns;
    int64_t bytes;    /* MEMCPY, MEMSET */
    const char *name; /* KERNEL: its name (copied by the map where a record waits) */
    const char *copy; /* MEMCPY: "memcpy HtoD", "memcpy DtoD", ...; may be NULL */
};

/* What the map emits: a span for the tracer in slot (-1: no op was known, the record's call ran
 * outside every op), and its name (KERNEL, or the copy's) for the tracer to intern. */
typedef void (*pps__devmap_emit)(void *ctx, int slot, const struct pps_span *span,
                                 const char *name);

struct pps__devmap_pending {
    struct pps__devrec rec;
    char *name;       /* the map's copy of rec.name / rec.copy */
    int64_t since_ns; /* when it began to wait (the clock of the first drain_end it met) */
};

struct pps__devmap {
    uint32_t ring_corr[PPS__DEVMAP_RING];
    uint64_t ring_ext[PPS__DEVMAP_RING]; /* 0: empty */
    struct pps__devmap_pending *pending;
    size_t n_pending;
    uint64_t unattributed; /* records written without their op */
    uint64_t lost;         /* records with no room to wait (more than PPS__DEVMAP_PENDING) */
};

/* A new, empty map (NULL when out of memory). */
struct pps__devmap *pps__devmap_new(void);
void pps__devmap_free(struct pps__devmap *m);
/* One record: an external correlation is remembered; a kernel, copy or memset is emitted now
 * when its call is known, else kept to wait. */
void pps__devmap_record(struct pps__devmap *m, const struct pps__devrec *r, pps__devmap_emit emit,
                        void *ctx);
/* The end of a drain, at now_ns: waiting records whose call is now known are emitted; those that
 * have waited PPS__DEVMAP_PATIENCE_NS since the first drain that saw them wait (or all, with
 * force: the tracer is closing) are emitted unattributed. */
void pps__devmap_drain_end(struct pps__devmap *m, int64_t now_ns, int force, pps__devmap_emit emit,
                           void *ctx);

#endif
