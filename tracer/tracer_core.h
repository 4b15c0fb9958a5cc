/*
 * tracer_core.h - what the tracer core's files share (trace.c, buffer.c, flusher.c, names.c,
 * clock.c): the tracer itself, the per-thread ring buffers with their inline producer side, and
 * the flusher's and the name table's entry points. Nothing outside tracer/ includes it.
 *
 * Who touches what:
 *   - a recording thread writes only its own buffer (head, slots, stack, dropped) and reads the
 *     tracer's id, iteration and bufs[] (all fixed or read relaxed);
 *   - the flusher reads every buffer's head (acquire), copies the slots out, and writes tail
 *     (release); it alone uses the store writer while the tracer is open;
 *   - everything else (names, queued meta and metrics, flush requests, the first error) sits
 *     behind t->lock, which no recording call takes.
 *
 * pthread calls are checked where they can fail; unlocking a mutex this thread holds, signalling
 * a condition variable and destroying what open initialised cannot, and are not.
 */
#ifndef PPS_TRACER_CORE_H
#define PPS_TRACER_CORE_H

#include <pthread.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "pps_strtab.h"
#include "storage.h"
#include "tracer_int.h"
#include "tsc.h"

#define PPS__STACK_DEPTH 32    /* begin/end nesting kept per thread */
#define PPS__TLS_SLOTS   4     /* tracers a thread can record into before its cache evicts one */
#define PPS__BATCH_SPANS 16384 /* spans per transaction the flusher writes */

/* An open pps_trace_begin(): what pps_trace_end() needs. kind 0: a begin that was dropped. */
struct pps__frame {
    int64_t start_ns;
    int32_t iter, mb;
    int16_t stage, chunk;
    uint8_t kind;
    uint8_t pushed; /* its device id was pushed to CUPTI (pop it at the end) */
};

/*
 * One thread's single-producer, single-consumer ring of spans. head and tail count spans ever
 * written and ever taken; slot i of the ring holds span number i mod cap. The producer writes the
 * slot, then publishes it with a release store of head; the flusher loads head with acquire,
 * copies, and frees the slots with a release store of tail, which the producer loads with acquire
 * before reusing them. Producer and consumer fields sit on different cache lines.
 */
struct pps__tbuf {
    /* Producer side: written by the owning thread only. */
    alignas(64) _Atomic uint64_t head;
    uint64_t tail_seen;       /* the producer's last look at tail: rereads it only when full */
    size_t wpos;              /* head mod cap */
    _Atomic uint64_t dropped; /* spans this buffer's threads dropped; stored, never incremented
                                 atomically, since only the owner writes it */
    int depth;                /* open begins, including those beyond the stack that were dropped */
    size_t cap;
    struct pps_span *slots;
    struct pps__frame stack[PPS__STACK_DEPTH];

    /* Consumer side: written by the flusher only. */
    alignas(64) _Atomic uint64_t tail;
    size_t rpos; /* tail mod cap */

    /* 1 while a thread records into the buffer; an exiting thread stores 0 (release), and the
     * next thread to register takes it over (compare-exchange, acquire). */
    _Atomic int owned;
};

/* A metadata pair waiting for the flusher. */
struct pps__meta_item {
    char *key, *value;
};

/* A device span (cupti.c, on whichever flusher parses) queued for t's flusher: its name
 * interned, its stage t's rank. */
void pps__trace_device_span(struct pps_tracer *t, const struct pps_span *s, const char *name);
#define PPS__DEV_Q_MAX (1u << 20)
/*
 * For ops timed by their caller (the NVTX injection), with times from pps__stamp(): the op's
 * packed id pushed to CUPTI as it starts (0, nothing pushed, when t traces no device), and the
 * op's span recorded with that id's iteration and corr at its end (ext 0: the current
 * iteration, no corr). The p2p and named ranges of the injection, as pps_trace_p2p() and
 * pps_trace_named() with stamps.
 */
uint64_t pps__trace_dev_push_slot(struct pps_tracer *t, int slot, int kind, int chunk, int mb);
void pps__trace_record_dev(struct pps_tracer *t, int kind, int stage, int chunk, int mb,
                           int64_t start, int64_t end, uint64_t ext);
void pps__trace_p2p_stamped(struct pps_tracer *t, int kind, int stage, int peer, int mb,
                            int64_t bytes, int64_t start, int64_t end);
void pps__trace_named_stamped(struct pps_tracer *t, int kind, int stage, int32_t name_id,
                              int64_t start, int64_t end);

struct pps_tracer {
    /* Read on every span, written (iter) once per iteration: their own cache line. */
    alignas(64) uint64_t id; /* unique in the process, never reused: keys the threads' caches */
    _Atomic int32_t iter;
    struct pps__tbuf **bufs; /* max_threads slots; the first n_bufs are set */
    _Atomic int n_bufs;
    int max_threads;
    size_t buffer_spans;

    /* Written rarely, by any thread. */
    alignas(64) _Atomic uint64_t dropped_threads; /* spans of threads beyond max_threads */
    _Atomic uint64_t dropped_writes; /* spans in batches the store refused (flusher only) */
    /* A metadata row the store refused (a full disk): the shard lacks part of what the run is
     * (its identity, perhaps), so it is not closed as complete (flusher only, then close). */
    int meta_lost;

    int rank, world, clock_sync;
    /* Device activity (cupti.c): the tracer's slot, whose id its ops push around themselves;
     * -1 when off. Set by pps_trace_device_activity() and close, read by every op. */
    _Atomic int dev_slot;
    uint64_t dev_dropped_at_attach; /* CUPTI's process-wide drop count when t attached */
    pid_t pid; /* the process that opened it: a forked child must leave it alone */
    struct pps_store_writer *w;

    /* Under lock. */
    pthread_mutex_t lock;
    pthread_cond_t wake; /* the flusher waits on it */
    pthread_cond_t done; /* pps_trace_flush() waits on it */
    int stop;
    uint64_t flush_req, flush_done;
    int err_code; /* the first error the flusher met, with its reason */
    struct pps_err err;
    struct pps__meta_item *meta_q;
    size_t n_meta_q, cap_meta_q;
    struct pps_metric *metric_q;
    size_t n_metric_q, cap_metric_q;
    /* Device spans routed to t by whichever flusher parsed CUPTI's buffers (cupti.c), written
     * by t's flusher; at most PPS__DEV_Q_MAX, the rest counted in dev_q_dropped. */
    struct pps_span *dev_q;
    size_t n_dev_q, cap_dev_q;
    uint64_t dev_q_dropped;
    /* Names, interned under lock: ids 0, 1, 2, ... in the order names are first seen, which is
     * the order the flusher writes them through pps_store_writer_name(), so the store gives
     * each the same id (the flusher checks it does). */
    struct pps_strtab names;
    /* Iteration marks: the drop total at the last mark, and that mark's iteration. */
    int marked;
    int32_t mark_iter;
    uint64_t dropped_at_mark;
    /* What the flusher did with the spans (pps_trace_stats): those committed, and the iterations
     * of those in batches the store refused (-1 while there are none). */
    uint64_t written;
    int32_t unwritten_first, unwritten_last;
    /* PPSCOPE_TRACE_FULL_AFTER (a testing knob): once this many spans are written, every write
     * fails as on a full disk. UINT64_MAX: off. Fixed at open. */
    uint64_t full_after;

    /* The flusher's own. */
    unsigned interval_ms;
    pthread_t thread;
    int thread_started;
    struct pps_span *batch;
    uint64_t *limits; /* per buffer: the head seen when the drain began */
    size_t names_written;

    struct pps_tracer *next_live; /* the process's list of open tracers (buffer.c) */
};

/* ---- pid.c ------------------------------------------------------------------------------------ */

/* The process's id as last read: 0 before the first read and in a child just forked, -1 where
 * forks cannot be watched (every read asks the kernel then). */
extern _Atomic pid_t pps__pid_copy;
/* getpid(), kept for pps__pid(). */
pid_t pps__pid_read(void);

/* getpid(), without a system call after the first in each process. A child made by fork() reads
 * its own; one made without pthread_atfork()'s handlers (clone(2) or _Fork() called directly)
 * would see its parent's. */
static inline pid_t pps__pid(void)
{
    pid_t p = atomic_load_explicit(&pps__pid_copy, memory_order_relaxed);

    return p > 0 ? p : pps__pid_read();
}

/*
 * True in a child forked after t was opened: the child has no flusher, and t->lock may have been
 * held by a thread that does not exist there. Checked by every call that takes t->lock or waits
 * for the flusher, never on the hot path: in the child, spans from threads already registered
 * land in the child's copy of their buffers and are never written.
 */
static inline int pps__foreign(const struct pps_tracer *t)
{
    return pps__pid() != t->pid;
}

/* pps__trace_dev_push_slot()'s caller: without device activity (nearly always), no call. */
static inline uint64_t pps__trace_dev_push(struct pps_tracer *t, int kind, int chunk, int mb)
{
    int slot = t ? atomic_load_explicit(&t->dev_slot, memory_order_relaxed) : -1;
    return slot < 0 ? 0 : pps__trace_dev_push_slot(t, slot, kind, chunk, mb);
}

/* ---- clock.c --------------------------------------------------------------------------------- */

/* pps_trace_now() for the hot path: inlined into the recording calls. */
static inline int64_t pps__now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec + pps__clock_skew_ns;
}

/* A span's time as the hot path reads it: TSC ticks where the process stamps with the TSC
 * (tsc.h), which the flusher turns into nanoseconds, else pps__now(). pps__stamp_clock() is the
 * clock to put in the span's slot with it. */
static inline int64_t pps__stamp(void)
{
    if (__builtin_expect(pps__tsc_on, 1))
        return pps__rdtsc();
    return pps__now();
}

static inline uint8_t pps__stamp_clock(void)
{
    return pps__tsc_on ? PPS__CLOCK_TICKS : PPS_CLOCK_HOST;
}

/* ---- buffer.c -------------------------------------------------------------------------------- */

/* A thread's view of the tracers it records into: (tracer id, its buffer or NULL if refused). */
struct pps__tls_entry {
    uint64_t id;
    struct pps__tbuf *buf;
};
struct pps__tls {
    struct pps__tls_entry e[PPS__TLS_SLOTS];
    int exit_hook; /* 1 once the thread-exit destructor is armed */
};

/* Initial-exec: one %fs-relative load even inside libppscope_trace.so, and the block is small
 * enough for the static TLS reserve when the NVTX injection library is dlopen'ed. */
extern _Thread_local struct pps__tls pps__tls __attribute__((tls_model("initial-exec")));

/* A unique tracer id (never 0), and the process's list of open tracers, which lets a thread that
 * exits hand its buffers back only to tracers that are still open. */
uint64_t pps__tracer_next_id(void);
int pps__live_add(struct pps_tracer *t, struct pps_err *err);
void pps__live_remove(struct pps_tracer *t);

/* The calling thread's buffer for t, registering the thread on its first span (allocates, takes
 * t->lock); NULL when max_threads threads already hold one (the caller drops the span). */
struct pps__tbuf *pps__tbuf_register(struct pps_tracer *t);

static inline struct pps__tbuf *pps__tbuf_get(struct pps_tracer *t)
{
    if (__builtin_expect(pps__tls.e[0].id == t->id, 1))
        return pps__tls.e[0].buf;
    return pps__tbuf_register(t);
}

/* Frees a buffer (the tracer is closing: nobody records any more). */
void pps__tbuf_free(struct pps__tbuf *b);

/* Counts one dropped span against the calling thread (b may be NULL: a refused thread). */
static inline void pps__drop(struct pps_tracer *t, struct pps__tbuf *b)
{
    if (b)
        atomic_store_explicit(&b->dropped,
                              atomic_load_explicit(&b->dropped, memory_order_relaxed) + 1,
                              memory_order_relaxed);
    else
        atomic_fetch_add_explicit(&t->dropped_threads, 1, memory_order_relaxed);
}

/* The slot the next span goes in, or NULL if the ring is full (the span is then dropped and
 * counted). Fill it, then pps__tbuf_publish(). */
static inline struct pps_span *pps__tbuf_slot(struct pps__tbuf *b)
{
    uint64_t h = atomic_load_explicit(&b->head, memory_order_relaxed);
    if (__builtin_expect(h - b->tail_seen >= b->cap, 0)) {
        b->tail_seen = atomic_load_explicit(&b->tail, memory_order_acquire);
        if (h - b->tail_seen >= b->cap) {
            pps__drop(NULL, b);
            return NULL;
        }
    }
    return &b->slots[b->wpos];
}

static inline void pps__tbuf_publish(struct pps__tbuf *b)
{
    uint64_t h = atomic_load_explicit(&b->head, memory_order_relaxed);
    if (++b->wpos == b->cap)
        b->wpos = 0;
    atomic_store_explicit(&b->head, h + 1, memory_order_release);
}

/* Flusher side: copies up to room spans, taking none past limit (a head value), out of b into
 * out, frees their slots, and returns how many it copied. */
size_t pps__tbuf_drain(struct pps__tbuf *b, uint64_t limit, struct pps_span *out, size_t room);

/* Spans dropped so far by every thread of t, plus those the store refused. */
uint64_t pps__dropped_total(struct pps_tracer *t);

/* ---- flusher.c ------------------------------------------------------------------------------- */

/* Starts the background thread (signals blocked in it). */
int pps__flusher_start(struct pps_tracer *t, struct pps_err *err);
/* Asks the flusher for a last drain, and joins it. */
void pps__flusher_stop(struct pps_tracer *t);
/* Drains everything now on the calling thread (the flusher must not be running). Spans
 * stamped in TSC ticks leave it in nanoseconds (tsc.h). */
void pps__flusher_drain(struct pps_tracer *t);
/* Records the first error met (a later one is dropped: the first explains); pps__fail() takes
 * t->lock, pps__fail_locked() is for a caller that holds it. */
void pps__fail(struct pps_tracer *t, const struct pps_err *err);
void pps__fail_locked(struct pps_tracer *t, int code, const char *msg);
/* Queue a metadata pair (copied) or a metric row for the flusher; the caller holds t->lock.
 * Return 0 or PPS_ENOMEM. */
int pps__queue_meta(struct pps_tracer *t, const char *key, const char *value);
int pps__queue_metric(struct pps_tracer *t, const struct pps_metric *m);
void pps__queues_free(struct pps_tracer *t);
/* The full disk PPSCOPE_TRACE_FULL_AFTER injects: once that many spans are written, every write
 * of the shard fails with SQLite's words for a full disk (tests on machines where a small file
 * system cannot be mounted). 0, or PPS_EIO with the reason in err. The flusher's, or close's
 * after the join. */
int pps__injected_full(const struct pps_tracer *t, struct pps_err *err);

#endif
