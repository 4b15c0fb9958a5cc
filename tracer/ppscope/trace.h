/*
 * ppscope/trace.h - record a pipeline-parallel run into a ppscope trace, from any C or C++
 * program. Link with `pkg-config --libs ppscope-trace` or CMake's `ppscope::trace`.
 *
 *     struct pps_trace_options o;
 *     pps_trace_options_init(&o);
 *     o.run_dir = "runs/today";               // one shard per rank: runs/today/rank-00000.db
 *     struct pps_tracer *t;
 *     struct pps_err err;
 *     if (pps_trace_open(&o, &t, &err)) { fprintf(stderr, "%s\n", err.msg); ... }
 *     pps_trace_meta(t, "schedule", "1f1b");
 *     for (int it = 0; it < iters; it++) {
 *         pps_trace_iteration(t, it);
 *         pps_trace_begin(t, PPS_TRACE_F, stage, 0, mb);
 *         ...forward...
 *         pps_trace_end(t);
 *     }
 *     pps_trace_close(t, &err);
 *
 * Threads: any number of threads may record through one tracer at once. The recording calls
 * (begin, end, record, p2p, named, device) take no lock, allocate nothing after a thread's first
 * span, and make no system call beyond reading the clock: each thread writes into its own ring
 * buffer, and a background flusher drains the buffers into the rank's SQLite shard in batches.
 * When a buffer is full the span is dropped and counted, never waited for; the count is stored
 * with the iteration's metrics and shown by `ppscope report`. Nothing here aborts the program:
 * failures are counted and reported by pps_trace_flush() and pps_trace_close(). The recording
 * calls take NULL for the tracer and then do nothing, so "tracing off" needs no branch.
 *
 * A thread's first span registers it (allocates its buffer, buffer_spans * 56 bytes, and takes a
 * lock once); a thread that exits hands its buffer to the next new thread once the flusher has
 * emptied it. All recording must have stopped when pps_trace_close() is called. In a child
 * forked while a tracer is open, the tracer is the parent's: spans recorded there are lost,
 * flush and close fail at once with PPS_EINVAL, and the child may open a tracer of its own.
 * docs/tracer.md says more: usage, drops, flush, clocks, and the meta keys written.
 *
 * Times are nanoseconds on one monotonic clock per process (pps_trace_now). Threads share it.
 * Across MPI ranks, offsets to rank 0 are measured at open and at close (clock_sync) and stored,
 * and the reader maps every rank onto rank 0's clock.
 */
#ifndef PPSCOPE_TRACE_H
#define PPSCOPE_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include "pps_error.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define PPS_TRACE_API __attribute__((visibility("default")))
#else
#define PPS_TRACE_API
#endif

/* Span kinds: the trace store's numbering (docs/schema.md). */
enum pps_trace_kind {
    PPS_TRACE_F = 1,    /* forward */
    PPS_TRACE_B = 2,    /* backward, input gradient */
    PPS_TRACE_W = 3,    /* backward, weight gradient */
    PPS_TRACE_BW = 4,   /* backward, fused */
    PPS_TRACE_SEND = 5, /* p2p send */
    PPS_TRACE_RECV = 6, /* p2p receive */
    PPS_TRACE_WAIT = 7, /* blocked waiting for data */
    PPS_TRACE_OPT = 8,  /* optimizer step */
    PPS_TRACE_ROLLBACK = 9,
    PPS_TRACE_KERNEL = 10, /* device kernel */
    PPS_TRACE_MEMCPY = 11, /* device copy */
    PPS_TRACE_RANGE = 12,  /* a named range that is not a pipeline op */
};

struct pps_tracer;

struct pps_trace_options {
    const char *run_dir;        /* required: the run directory (created if needed) */
    int rank;                   /* this process's rank; -1: from the launcher's environment */
    int world;                  /* ranks in the run; -1: from the launcher's environment */
    size_t buffer_spans;        /* capacity of each thread's buffer, in spans (default 65536);
                                   1 .. 2^32 */
    unsigned flush_interval_ms; /* how often the flusher drains (default 20); 0: only when
                                   pps_trace_flush() or pps_trace_close() is called */
    int clock_sync;  /* 1: measure clock offsets to rank 0 over MPI at open and close; every rank
                        must then open and close collectively, after MPI_Init. Default 0 */
    int max_threads; /* threads that may record at once (default 256): a thread beyond them
                        has its spans dropped and counted */
};

/* Sets the defaults above. */
PPS_TRACE_API void pps_trace_options_init(struct pps_trace_options *o);

/*
 * Creates the run directory and this rank's shard, and starts the flusher. Fails (PPS_EINVAL)
 * if the shard already exists: a run is never overwritten. With -1 for rank or world they come
 * from the launcher's environment (Open MPI, PMI, Slurm, torchrun), else 0 and 1 (a rank above
 * 0 whose world size no one gives leaves world unknown). Writes meta world, source=tracer and,
 * with clock_sync, clock_offset_start_ns, clock_sync_start_ns and clock_rtt_start_ns. Bad options
 * fail with PPS_EINVAL and a reason before anything is created. On failure *out is NULL.
 */
PPS_TRACE_API int pps_trace_open(const struct pps_trace_options *o, struct pps_tracer **out,
                                 struct pps_err *err);

/* Run metadata (schedule, p, m, v, model, partition, device, backend...: docs/schema.md).
 * Thread-safe; not for the hot path. Queued (key and value are copied) and written by the
 * flusher at its next drain; a later value of a key replaces an earlier one. Returns 0, or
 * PPS_EINVAL (no tracer, no or empty key, no value), PPS_ENOMEM. */
PPS_TRACE_API int pps_trace_meta(struct pps_tracer *t, const char *key, const char *value);
PPS_TRACE_API int pps_trace_meta_int(struct pps_tracer *t, const char *key, int64_t value);

/* The process's clock, in nanoseconds (CLOCK_MONOTONIC). */
PPS_TRACE_API int64_t pps_trace_now(void);

/*
 * Sets the calling thread up to record into t now: takes its buffer (an allocation, touched
 * once), which a thread's first span would otherwise do inside the first op it measures. Call
 * it at the start of each recording thread. Returns 0, or PPS_ENOMEM when the thread was refused
 * a buffer (too many threads, out of memory): its spans will be dropped and counted.
 */
PPS_TRACE_API int pps_trace_thread_init(struct pps_tracer *t);

/*
 * Marks the start of iteration iter: spans begun from now on carry it, and the spans dropped
 * since the previous mark are stored as that iteration's dropped count (a metrics row with stage
 * -1, the whole rank; pps_trace_close() stores the last iteration's; drops before the first mark
 * get a row of iteration -1 if there are any). Call it from one thread; not for the hot path.
 */
PPS_TRACE_API void pps_trace_iteration(struct pps_tracer *t, int iter);

/*
 * begin/end: a span around the work between them, on the calling thread, nested up to 32 deep
 * (deeper begins are dropped and counted; an end without a begin is ignored). chunk and mb may
 * be -1 when they do not apply. A span whose kind is not a pps_trace_kind, or whose stage is not
 * in 0..32767 or chunk in -1..32767, is dropped and counted (the store would refuse it).
 */
PPS_TRACE_API void pps_trace_begin(struct pps_tracer *t, int kind, int stage, int chunk, int mb);
PPS_TRACE_API void pps_trace_end(struct pps_tracer *t);

/* A span the caller timed with pps_trace_now(); it carries the current iteration. */
PPS_TRACE_API void pps_trace_record(struct pps_tracer *t, int kind, int stage, int chunk, int mb,
                                    int64_t start_ns, int64_t end_ns);

/* A communication span (PPS_TRACE_SEND, RECV or WAIT) with its peer stage and bytes. */
PPS_TRACE_API void pps_trace_p2p(struct pps_tracer *t, int kind, int stage, int peer, int mb,
                                 int64_t bytes, int64_t start_ns, int64_t end_ns);

/*
 * The same, with the message's id: a number > 0 that the sender's SEND and the receiver's RECV
 * (and WAIT) of one message carry alike, and no other message of the run between those two
 * stages does. The reader then times each transfer, from the start of the send on one rank to
 * the end of the receive on the other (on aligned clocks), per link and direction. Stored in the
 * span's corr column; 0 or less stores none, as pps_trace_p2p().
 */
PPS_TRACE_API void pps_trace_p2p_msg(struct pps_tracer *t, int kind, int stage, int peer, int mb,
                                     int64_t bytes, int64_t start_ns, int64_t end_ns,
                                     int64_t msg_id);

/*
 * Names: a range or kernel name interned once (takes a lock: not for the hot path), then used
 * by id. Returns the id (>= 0), or a negative PPS_E... code.
 */
PPS_TRACE_API int32_t pps_trace_name(struct pps_tracer *t, const char *name);

/* A named span on the host clock (PPS_TRACE_RANGE, or a pipeline kind that carries a name),
 * with the current iteration; name_id < 0 stores no name. */
PPS_TRACE_API void pps_trace_named(struct pps_tracer *t, int kind, int stage, int32_t name_id,
                                   int64_t start_ns, int64_t end_ns);

/*
 * A device-side span (PPS_TRACE_KERNEL, MEMCPY) on the device clock, with corr, the correlation
 * id of the host op that launched it (CUPTI's correlationId). The device clock's offset to
 * pps_trace_now() is stored as meta device_clock_offset_ns by whoever measures it. Device
 * activity often arrives an iteration late, so the span's iteration is stored as unknown (-1).
 */
PPS_TRACE_API void pps_trace_device(struct pps_tracer *t, int kind, int stage, int32_t name_id,
                                    int64_t start_ns, int64_t end_ns, int64_t corr, int64_t bytes);

/*
 * Records the device's activity as spans of the ops that launched it: CUPTI (loaded now, from
 * the CUDA toolkit's libcupti) hands back every kernel, copy and memset; each becomes a KERNEL
 * or MEMCPY span on t's rank, on the host clock, with the chunk, microbatch and iteration of the
 * op (pps_trace_begin/end) that was open on the launching thread, and corr the op's id, which
 * the op's own span carries too (docs/schema.md). Parsed on the flusher, never on the thread
 * that launched the work; records CUPTI dropped go into meta device_dropped at close. Call once,
 * after open and before the ops to trace; several tracers of one process may each call it.
 * Returns 0, or PPS_ENOENT (no CUPTI in this build, libcupti not found, or no GPU to trace) with
 * the reason; the tracer goes on without device spans.
 */
PPS_TRACE_API int pps_trace_device_activity(struct pps_tracer *t, struct pps_err *err);

/* Per-iteration figures of a stage; NaN / -1 for what is unknown. Not for the hot path: queued
 * and written by the flusher (its dropped column is -1: the tracer's own rows carry the drops). */
PPS_TRACE_API void pps_trace_metric(struct pps_tracer *t, int iter, int stage, double loss,
                                    double grad_norm, int64_t act_bytes, int64_t pending_w);

/* Spans dropped so far (full buffers, too many threads, nesting too deep, invalid kind or stage,
 * batches the store failed to write). */
PPS_TRACE_API uint64_t pps_trace_dropped(const struct pps_tracer *t);

/* What became of the spans recorded into a tracer (pps_trace_stats). */
struct pps_trace_stats {
    uint64_t written;   /* committed to the shard */
    uint64_t dropped;   /* not kept, for any reason: pps_trace_dropped() */
    uint64_t unwritten; /* of those, the spans of batches the store failed to write (a full
                           disk): nothing in the shard counts them when it cannot be written */
    int32_t unwritten_first_iter, unwritten_last_iter; /* the lowest and highest iteration of
                                                          those spans; -1 when none */
};

/*
 * Fills *out with what the tracer did with its spans so far. After pps_trace_flush(), with every
 * thread stopped recording, the figures are final: close writes no more spans (it writes the
 * drop rows and the complete mark, and a failure there is close's error). A NULL tracer, or one
 * of another process (a forked child), gives zeros and -1.
 */
PPS_TRACE_API void pps_trace_stats(const struct pps_tracer *t, struct pps_trace_stats *out);

/*
 * Drains every buffer into the shard now and waits until everything recorded before the call
 * (and the queued names, meta and metrics) is committed: a reader then sees it, and a crash no
 * longer loses it. Any thread may call it, several at once. Returns 0, or the first error the
 * flusher met since open (sticky, with its reason); PPS_EINVAL in a forked child.
 */
PPS_TRACE_API int pps_trace_flush(struct pps_tracer *t, struct pps_err *err);

/*
 * Stops the flusher after a last drain, measures the closing clock offset (clock_sync), marks
 * the shard complete and frees t. Returns the first error the flusher met, if any (with its
 * reason), after doing all of that anyway. pps_trace_close(NULL, ...) is a no-op. With
 * clock_sync it is collective, like open. Every thread must have stopped recording into t.
 */
PPS_TRACE_API int pps_trace_close(struct pps_tracer *t, struct pps_err *err);

/*
 * Closes t as pps_trace_close() does (the last drain, the flusher stopped, the shard closed, t
 * freed), but leaves the shard without its complete mark, so readers say the run is incomplete,
 * and measures no closing clock offset (that is collective, and a failed run's peers may be
 * gone). For a run that failed. NULL is a no-op.
 */
PPS_TRACE_API int pps_trace_close_incomplete(struct pps_tracer *t, struct pps_err *err);

#ifdef __cplusplus
}
#endif

#endif
