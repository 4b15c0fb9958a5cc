/*
 * cupti.c - CUPTI's Activity API, loaded at run time, feeding devmap.c; cupti.h says what it
 * does and why it is loaded rather than linked.
 */
#include "cupti.h"

#include <stdatomic.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "devmap.h"
#include "pps_dl.h"
#include "pps_config.h"
#include "tracer_core.h"

#ifndef PPS_HAVE_CUPTI

int pps__cupti_attach(struct pps_tracer *t, int *slot, uint64_t *dropped, struct pps_err *err)
{
    *slot = -1;
    *dropped = 0;
    return pps_err_set(err, PPS_ENOENT, "device activity: this build has no CUPTI");
}
struct pps__cupti_counts pps__cupti_detach(struct pps_tracer *t)
{
    struct pps__cupti_counts n = {0, 0};
    return n;
}
void pps__cupti_poll(struct pps_tracer *t)
{
}
void pps__cupti_push(uint64_t ext)
{
}
void pps__cupti_pop(void)
{
}

#else

#include <cupti_activity.h>
#include <cupti_result.h>

#ifndef PPS_CUPTI_SONAME
#define PPS_CUPTI_SONAME "libcupti.so"
#endif

/* CUPTI's buffers: 8 MiB each (its guide suggests a few MiB), 8-byte aligned. */
#define BUF_BYTES (8u << 20)

/* The calls made, looked up by name (PPS_DL_FIND checks each pointer's type against
 * cupti_activity.h). */
struct cupti_fns {
    void *lib;
    CUptiResult (*Enable)(CUpti_ActivityKind);
    CUptiResult (*Disable)(CUpti_ActivityKind);
    CUptiResult (*RegisterCallbacks)(CUpti_BuffersCallbackRequestFunc,
                                     CUpti_BuffersCallbackCompleteFunc);
    CUptiResult (*RegisterTimestampCallback)(CUpti_TimestampCallbackFunc);
    CUptiResult (*GetNextRecord)(uint8_t *, size_t, CUpti_Activity **);
    CUptiResult (*GetNumDroppedRecords)(CUcontext, uint32_t, size_t *);
    CUptiResult (*FlushAll)(uint32_t);
    CUptiResult (*PushExternalCorrelationId)(CUpti_ExternalCorrelationKind, uint64_t);
    CUptiResult (*PopExternalCorrelationId)(CUpti_ExternalCorrelationKind, uint64_t *);
    CUptiResult (*GetResultString)(CUptiResult, const char **);
};

/* A buffer CUPTI handed back, waiting for a flusher. */
struct done_buf {
    uint8_t *buf;
    size_t valid;
    struct done_buf *next;
};

/* The process's CUPTI: under lock, except fns (set once, before enabled) and the queue (under
 * qlock: CUPTI's thread appends to it). */
static struct {
    pthread_mutex_t lock;  /* attach, detach, slots, and parsing (one flusher at a time) */
    pthread_mutex_t qlock; /* the queue of handed-back buffers, and dropped */
    struct cupti_fns fns;
    int loaded;
    _Atomic int enabled; /* read without the lock around every op (push, pop) */
    struct pps_tracer *slots[PPS__DEVOP_SLOTS];
    int n_attached, next_slot; /* slots are given round-robin: a closed one is reused last */
    uint64_t unattributed;     /* records no live tracer's op claimed */
    struct pps__devmap *map;
    struct done_buf *head, *tail;
    uint64_t dropped;
    int64_t last_flush_ns;
} cu = {.lock = PTHREAD_MUTEX_INITIALIZER, .qlock = PTHREAD_MUTEX_INITIALIZER};

/* The external correlation records come with API records only (cupti_activity.h: "generated
 * ... before an API activity record"), so the runtime's and the driver's calls are traced too;
 * their records are read past. */
static const CUpti_ActivityKind kinds[] = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
                                           CUPTI_ACTIVITY_KIND_MEMCPY,
                                           CUPTI_ACTIVITY_KIND_MEMSET,
                                           CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION,
                                           CUPTI_ACTIVITY_KIND_RUNTIME,
                                           CUPTI_ACTIVITY_KIND_DRIVER};

/* Ours among the external correlation kinds: CUSTOM2, since PyTorch's profiler pushes CUSTOM0
 * and CUSTOM1 in the same process. */
#define EXT_KIND  CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2

static const char *result_text(CUptiResult r)
{
    const char *s = NULL;
    if (cu.fns.GetResultString && cu.fns.GetResultString(r, &s) == CUPTI_SUCCESS && s)
        return s;
    return "CUPTI error";
}

static uint64_t CUPTIAPI host_clock(void)
{
    return (uint64_t)pps_trace_now();
}

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
    *buffer = aligned_alloc(8, BUF_BYTES);
    *size = *buffer ? BUF_BYTES : 0;
    *max_records = 0; /* as many as fit */
}

/* On CUPTI's thread: queued for a flusher, nothing else. */
static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size,
                                      size_t valid)
{
    struct done_buf *d = malloc(sizeof(*d));
    size_t dropped = 0;

    if (cu.fns.GetNumDroppedRecords(ctx, stream, &dropped) != CUPTI_SUCCESS)
        dropped = 0;
    pthread_mutex_lock(&cu.qlock);
    cu.dropped += dropped;
    if (!d || !valid) {
        cu.dropped += d ? 0 : 1; /* a buffer we could not keep: at least one record lost */
        pthread_mutex_unlock(&cu.qlock);
        free(d);
        free(buffer);
        return;
    }
    d->buf = buffer;
    d->valid = valid;
    d->next = NULL;
    if (cu.tail)
        cu.tail->next = d;
    else
        cu.head = d;
    cu.tail = d;
    pthread_mutex_unlock(&cu.qlock);
}

static int load(struct pps_err *err)
{
    const char *missing = NULL;
    /* The build's major release only: records of another CUPTI have other layouts. By name
     * (the loader's path, LD_LIBRARY_PATH), then in the toolkit the build found it in. */
    static const char *const sonames[] = {
        PPS_CUPTI_SONAME,
#ifdef PPS_CUPTI_DIR
        PPS_CUPTI_DIR "/" PPS_CUPTI_SONAME,
#endif
    };

    if (cu.loaded)
        return 0;
    for (size_t i = 0; i < sizeof(sonames) / sizeof(sonames[0]) && !cu.fns.lib; i++)
        cu.fns.lib = dlopen(sonames[i], RTLD_NOW | RTLD_LOCAL);
    if (!cu.fns.lib) {
        const char *e = dlerror();
        return pps_err_set(err, PPS_ENOENT, "device activity: cannot load CUPTI (%s%s): %s",
                           PPS_CUPTI_SONAME,
#ifdef PPS_CUPTI_DIR
                           ", nor from " PPS_CUPTI_DIR,
#else
                           "",
#endif
                           e ? e : "not found");
    }
    PPS_DL_FIND(cu.fns.lib, cu.fns.Enable, cuptiActivityEnable, &missing);
    PPS_DL_FIND(cu.fns.lib, cu.fns.Disable, cuptiActivityDisable, &missing);
    PPS_DL_FIND(cu.fns.lib, cu.fns.RegisterCallbacks, cuptiActivityRegisterCallbacks, &missing);
    PPS_DL_FIND(cu.fns.lib, cu.fns.RegisterTimestampCallback,
                cuptiActivityRegisterTimestampCallback, &missing);
    PPS_DL_FIND(cu.fns.lib, cu.fns.GetNextRecord, cuptiActivityGetNextRecord, &missing);
    PPS_DL_FIND(cu.fns.lib, cu.fns.GetNumDroppedRecords, cuptiActivityGetNumDroppedRecords,
                &missing);
    PPS_DL_FIND(cu.fns.lib, cu.fns.FlushAll, cuptiActivityFlushAll, &missing);
    PPS_DL_FIND(cu.fns.lib, cu.fns.PushExternalCorrelationId,
                cuptiActivityPushExternalCorrelationId, &missing);
    PPS_DL_FIND(cu.fns.lib, cu.fns.PopExternalCorrelationId, cuptiActivityPopExternalCorrelationId,
                &missing);
    PPS_DL_FIND(cu.fns.lib, cu.fns.GetResultString, cuptiGetResultString, &missing);
    if (missing) {
        dlclose(cu.fns.lib);
        memset(&cu.fns, 0, sizeof(cu.fns));
        return pps_err_set(err, PPS_ENOENT, "device activity: the CUPTI loaded (%s) has no %s",
                           PPS_CUPTI_SONAME, missing);
    }
    cu.loaded = 1;
    return 0;
}

/* Timestamps on the host clock first (before any activity is enabled, as CUPTI requires), then
 * the buffers, then the kinds. */
static int enable(struct pps_err *err)
{
    CUptiResult r;
    size_t i = 0;

    if (cu.enabled)
        return 0;
    if (!cu.map && !(cu.map = pps__devmap_new()))
        return pps_err_set(err, PPS_ENOMEM, "device activity: out of memory");
    if ((r = cu.fns.RegisterTimestampCallback(host_clock)) != CUPTI_SUCCESS)
        return pps_err_set(err, PPS_ENOENT,
                           "device activity: CUPTI cannot trace here: %s "
                           "(cuptiActivityRegisterTimestampCallback)",
                           result_text(r));
    if ((r = cu.fns.RegisterCallbacks(buffer_requested, buffer_completed)) != CUPTI_SUCCESS)
        return pps_err_set(err, PPS_ENOENT,
                           "device activity: CUPTI cannot trace here: %s "
                           "(cuptiActivityRegisterCallbacks)",
                           result_text(r));
    for (; i < sizeof(kinds) / sizeof(kinds[0]); i++)
        if ((r = cu.fns.Enable(kinds[i])) != CUPTI_SUCCESS)
            break;
    if (i < sizeof(kinds) / sizeof(kinds[0])) {
        while (i-- > 0)
            cu.fns.Disable(kinds[i]);
        return pps_err_set(err, PPS_ENOENT,
                           "device activity: CUPTI cannot trace here: %s (cuptiActivityEnable)",
                           result_text(r));
    }
    cu.enabled = 1;
    return 0;
}

int pps__cupti_attach(struct pps_tracer *t, int *slot, uint64_t *dropped, struct pps_err *err)
{
    int rc, s = PPS__DEVOP_SLOTS;

    *slot = -1;
    pthread_mutex_lock(&cu.lock);
    if ((rc = load(err)) == 0 && (rc = enable(err)) == 0) {
        for (int k = 0; k < PPS__DEVOP_SLOTS; k++)
            if (!cu.slots[(cu.next_slot + k) % PPS__DEVOP_SLOTS]) {
                s = (cu.next_slot + k) % PPS__DEVOP_SLOTS;
                cu.next_slot = (s + 1) % PPS__DEVOP_SLOTS;
                break;
            }
        if (s == PPS__DEVOP_SLOTS) {
            rc =
                pps_err_set(err, PPS_EINVAL, "device activity: more than %d tracers in one process",
                            PPS__DEVOP_SLOTS);
        } else {
            cu.slots[s] = t;
            cu.n_attached++;
            *slot = s;
        }
    }
    pthread_mutex_unlock(&cu.lock);
    pthread_mutex_lock(&cu.qlock);
    *dropped = cu.dropped;
    pthread_mutex_unlock(&cu.qlock);
    return rc;
}

/* Where the map's spans go: the device queue of the tracer of the op's slot. A record of no
 * op, or of a tracer that has closed, is counted. Under cu.lock. */
static void route_span(void *ctx, int slot, const struct pps_span *span, const char *name)
{
    struct pps_tracer *t = slot >= 0 && slot < PPS__DEVOP_SLOTS ? cu.slots[slot] : NULL;
    (void)ctx;
    if (t)
        pps__trace_device_span(t, span, name);
    else
        cu.unattributed++;
}

/* A record's call and times, the fields every kind of device record has under these names. */
#define TAKE_TIMES(rec, r)                                                                         \
    ((rec).corr = (r)->correlationId, (rec).start_ns = (int64_t)(r)->start,                        \
     (rec).end_ns = (int64_t)(r)->end)

/* The kernel, copy or memset of one record, into the map. */
static void take_record(const CUpti_Activity *a)
{
    static const char *const copy_names[] = {
        "memcpy",      "memcpy HtoD", "memcpy DtoH", "memcpy HtoA", "memcpy AtoH", "memcpy AtoA",
        "memcpy AtoD", "memcpy DtoA", "memcpy DtoD", "memcpy HtoH", "memcpy PtoP"};
    struct pps__devrec rec;

    memset(&rec, 0, sizeof(rec));
    switch (a->kind) {
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
        const CUpti_ActivityExternalCorrelation *e = (const void *)a;
        if (e->externalKind != EXT_KIND)
            return;
        rec.type = PPS__DEVREC_EXTERNAL;
        rec.corr = e->correlationId;
        rec.ext = e->externalId;
        break;
    }
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
        const CUpti_ActivityKernel10 *k = (const void *)a;
        rec.type = PPS__DEVREC_KERNEL;
        TAKE_TIMES(rec, k);
        rec.name = k->name;
        break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
        const CUpti_ActivityMemcpy6 *m = (const void *)a;
        rec.type = PPS__DEVREC_MEMCPY;
        TAKE_TIMES(rec, m);
        rec.bytes = (int64_t)m->bytes;
        rec.copy = m->copyKind < sizeof(copy_names) / sizeof(copy_names[0])
                       ? copy_names[m->copyKind]
                       : "memcpy";
        break;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
        const CUpti_ActivityMemset4 *m = (const void *)a;
        rec.type = PPS__DEVREC_MEMSET;
        TAKE_TIMES(rec, m);
        rec.bytes = (int64_t)m->bytes;
        break;
    }
    default:
        return;
    }
    /* Unfinished at a forced flush (or never timed): 0 for a time, which no span may have. */
    if (rec.type != PPS__DEVREC_EXTERNAL && (rec.start_ns <= 0 || rec.end_ns <= 0)) {
        cu.unattributed++;
        return;
    }
    pps__devmap_record(cu.map, &rec, route_span, NULL);
}

/* What is queued, parsed (under cu.lock; a record waiting for its call waits
 * PPS__DEVMAP_PATIENCE_NS, three of CUPTI's flushes, unless force), or only freed (CUPTI
 * disabled: no tracer to give it to). */
static void empty_queue(int parse, int force)
{
    struct done_buf *d;

    pthread_mutex_lock(&cu.qlock);
    d = cu.head;
    cu.head = cu.tail = NULL;
    pthread_mutex_unlock(&cu.qlock);
    while (d) {
        struct done_buf *next = d->next;
        CUpti_Activity *a = NULL;
        while (parse && cu.fns.GetNextRecord(d->buf, d->valid, &a) == CUPTI_SUCCESS)
            take_record(a);
        free(d->buf);
        free(d);
        d = next;
    }
    if (parse)
        pps__devmap_drain_end(cu.map, pps_trace_now(), force, route_span, NULL);
}

void pps__cupti_poll(struct pps_tracer *t)
{
    int64_t now;

    if (!atomic_load_explicit(&cu.enabled, memory_order_acquire) ||
        pthread_mutex_trylock(&cu.lock) != 0)
        return; /* another flusher parses now: its spans reach us through our buffers */
    now = pps_trace_now();
    if (cu.enabled && now - cu.last_flush_ns >= (int64_t)PPS__CUPTI_FLUSH_MS * 1000000) {
        cu.last_flush_ns = now;
        cu.fns.FlushAll(0); /* hands back what CUPTI holds, through buffer_completed */
    }
    if (cu.enabled)
        empty_queue(1, 0);
    pthread_mutex_unlock(&cu.lock);
}

struct pps__cupti_counts pps__cupti_detach(struct pps_tracer *t)
{
    struct pps__cupti_counts n;

    pthread_mutex_lock(&cu.lock);
    if (cu.enabled) {
        /* Everything CUPTI holds, now: this tracer's ops' spans go to its buffers. */
        cu.fns.FlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
        empty_queue(1, cu.n_attached == 1);
    }
    for (int s = 0; s < PPS__DEVOP_SLOTS; s++)
        if (cu.slots[s] == t) {
            cu.slots[s] = NULL;
            cu.n_attached--;
        }
    if (cu.enabled && cu.n_attached == 0) {
        for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
            cu.fns.Disable(kinds[i]);
        cu.enabled = 0;
        empty_queue(0, 0);
        pps__devmap_free(cu.map);
        cu.map = NULL;
    }
    n.unattributed = cu.unattributed;
    cu.unattributed = 0;
    pthread_mutex_unlock(&cu.lock);
    pthread_mutex_lock(&cu.qlock);
    n.dropped = cu.dropped;
    pthread_mutex_unlock(&cu.qlock);
    return n;
}

void pps__cupti_push(uint64_t ext)
{
    if (atomic_load_explicit(&cu.enabled, memory_order_acquire))
        cu.fns.PushExternalCorrelationId(EXT_KIND, ext);
}

void pps__cupti_pop(void)
{
    uint64_t last = 0;
    if (atomic_load_explicit(&cu.enabled, memory_order_acquire))
        cu.fns.PopExternalCorrelationId(EXT_KIND, &last);
}

#endif
