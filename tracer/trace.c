/*
 * trace.c - the public span API (ppscope/trace.h): opening and closing a tracer, the recording
 * calls of the hot path, iteration marks, names, metadata and metrics.
 *
 * A recording call finds the thread's ring buffer through its thread-local cache, reads the
 * clock, fills the next slot and publishes it: no lock, no allocation, no system call. Anything
 * that cannot be recorded (a full buffer, one thread too many, nesting too deep, a kind or stage
 * the store would refuse) is dropped and counted, never waited for.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cupti.h"
#include "devmap.h"
#include "tracer_core.h"

/* The public kinds are the store's, number for number: spans go to the store unconverted. */
#define SAME_KIND(x) _Static_assert((int)PPS_TRACE_##x == (int)PPS_SPAN_##x, #x " differs")
SAME_KIND(F);
SAME_KIND(B);
SAME_KIND(W);
SAME_KIND(BW);
SAME_KIND(SEND);
SAME_KIND(RECV);
SAME_KIND(WAIT);
SAME_KIND(OPT);
SAME_KIND(ROLLBACK);
SAME_KIND(KERNEL);
SAME_KIND(MEMCPY);
SAME_KIND(RANGE);
_Static_assert((int)PPS_TRACE_RANGE + 1 == (int)PPS_SPAN_KIND_COUNT, "a kind is missing");

#define DEFAULT_BUFFER_SPANS 65536
#define DEFAULT_FLUSH_MS     20
#define DEFAULT_MAX_THREADS  256

void pps_trace_options_init(struct pps_trace_options *o)
{
    if (!o)
        return;
    memset(o, 0, sizeof(*o));
    o->run_dir = NULL;
    o->rank = -1;
    o->world = -1;
    o->buffer_spans = DEFAULT_BUFFER_SPANS;
    o->flush_interval_ms = DEFAULT_FLUSH_MS;
    o->clock_sync = 0;
    o->max_threads = DEFAULT_MAX_THREADS;
}

/* What the store accepts (and the pps_span fields hold): one branch on the hot path. */
static inline int span_ok(int kind, int stage, int chunk)
{
    return (unsigned)(kind - 1) < (unsigned)(PPS_SPAN_KIND_COUNT - 1) &&
           (unsigned)stage <= INT16_MAX && chunk >= -1 && chunk <= INT16_MAX;
}

/* ---- opening and closing --------------------------------------------------------------------- */

static int check_options(const struct pps_trace_options *o, struct pps_err *err)
{
    if (!o->run_dir || !*o->run_dir)
        return pps_err_set(err, PPS_EINVAL, "pps_trace_open: no run directory (options.run_dir)");
    if (o->buffer_spans < 1 || o->buffer_spans > ((size_t)1 << 32))
        return pps_err_set(err, PPS_EINVAL,
                           "pps_trace_open: buffer_spans must be in 1..2^32, got %zu",
                           o->buffer_spans);
    if (o->max_threads < 1)
        return pps_err_set(err, PPS_EINVAL, "pps_trace_open: max_threads must be >= 1, got %d",
                           o->max_threads);
    if (o->rank < -1 || o->world < -1 || o->world == 0)
        return pps_err_set(err, PPS_EINVAL,
                           "pps_trace_open: rank %d / world %d: use -1 for the launcher's, else "
                           "rank >= 0 and world >= 1",
                           o->rank, o->world);
    return 0;
}

/* Rank and world from the options, else the launcher's environment, else 0 and 1 (world stays
 * -1, unknown, for a rank above 0 that only the launcher knows). */
static int resolve_rank(const struct pps_trace_options *o, int *rank, int *world,
                        struct pps_err *err)
{
    *rank = o->rank;
    *world = o->world;
    if (*rank < 0 || *world < 0) {
        int lr = -1, lw = -1;
        if (pps__launcher_rank(&lr, &lw) == 0) {
            if (*rank < 0)
                *rank = lr;
            if (*world < 0)
                *world = lw;
        }
    }
    if (*rank < 0)
        *rank = 0;
    if (*world < 0 && *rank == 0)
        *world = 1;
    if (*world > 0 && *rank >= *world)
        return pps_err_set(err, PPS_EINVAL, "pps_trace_open: rank %d is not below world %d", *rank,
                           *world);
    return 0;
}

static int write_clock_meta(struct pps_store_writer *w, const char *when,
                            const struct pps__clock_sample *s, struct pps_err *err)
{
    char key[64];
    int rc;

    snprintf(key, sizeof(key), "clock_offset_%s_ns", when);
    if ((rc = pps_store_writer_meta_int(w, key, s->offset_ns, err)))
        return rc;
    snprintf(key, sizeof(key), "clock_sync_%s_ns", when);
    if ((rc = pps_store_writer_meta_int(w, key, s->at_ns, err)))
        return rc;
    snprintf(key, sizeof(key), "clock_rtt_%s_ns", when);
    return pps_store_writer_meta_int(w, key, s->rtt_ns, err);
}

/* PPSCOPE_TRACE_FULL_AFTER=N (tracer_core.h): N spans, else UINT64_MAX (off; also when it is
 * not a plain decimal number). */
static uint64_t full_after_env(void)
{
    const char *s = getenv("PPSCOPE_TRACE_FULL_AFTER");
    char *end;
    unsigned long long n;

    if (!s || *s < '0' || *s > '9')
        return UINT64_MAX;
    n = strtoull(s, &end, 10);
    return *end ? UINT64_MAX : (uint64_t)n;
}

/* Meta clock_source: how span times were read (docs/schema.md), and why not the TSC. With the
 * TSC, the process's first tracer gives its line a first segment here, before any span can be
 * stamped. */
static int write_clock_source(struct pps_tracer *t, struct pps_err *err)
{
    const char *note = pps__tsc_mode_reason();
    int rc;

    if (note[0] && (rc = pps_store_writer_meta(t->w, "clock_source_note", note, err)))
        return rc;
    if (!pps__tsc_on)
        return pps_store_writer_meta(t->w, "clock_source", "monotonic", err);
    pps__tsc_calibrate(); /* the first time, about 2 ms */
    if (!pps__tsc_ready())
        return pps_err_set(err, PPS_EIO,
                           "pps_trace_open: the TSC gave no two readings in order in 100 ms: set "
                           "PPSCOPE_CLOCK=monotonic");
    return pps_store_writer_meta(t->w, "clock_source", "tsc", err);
}

/* Frees what pps_trace_open() set up; the writer must already be closed. */
static void tracer_free(struct pps_tracer *t, int sync_init)
{
    int n = atomic_load_explicit(&t->n_bufs, memory_order_relaxed);

    for (int i = 0; i < n; i++)
        pps__tbuf_free(t->bufs[i]);
    free(t->bufs);
    free(t->limits);
    free(t->batch);
    pps_strtab_release(&t->names);
    pps__queues_free(t);
    if (sync_init) {
        pthread_cond_destroy(&t->done);
        pthread_cond_destroy(&t->wake);
        pthread_mutex_destroy(&t->lock);
    }
    free(t);
}

/* The mutex and the two condition variables; the flusher's waits on the monotonic clock. */
static int sync_init(struct pps_tracer *t, struct pps_err *err)
{
    pthread_condattr_t attr;
    int rc;

    if ((rc = pthread_mutex_init(&t->lock, NULL)) != 0)
        goto fail;
    if ((rc = pthread_condattr_init(&attr)) != 0)
        goto fail_lock;
    rc = pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    if (rc == 0)
        rc = pthread_cond_init(&t->wake, &attr);
    pthread_condattr_destroy(&attr);
    if (rc != 0)
        goto fail_lock;
    if ((rc = pthread_cond_init(&t->done, NULL)) != 0)
        goto fail_wake;
    return 0;
fail_wake:
    pthread_cond_destroy(&t->wake);
fail_lock:
    pthread_mutex_destroy(&t->lock);
fail:
    return pps_err_set(err, PPS_EIO, "pps_trace_open: cannot set up the tracer's locks (%s)",
                       strerror(rc));
}

int pps_trace_open(const struct pps_trace_options *o, struct pps_tracer **out, struct pps_err *err)
{
    struct pps_tracer *t = NULL;
    struct pps__clock_sample sync = {0, 0, 0};
    void *mem = NULL;
    int rank, world, synced = 0, live = 0, rc;

    if (out)
        *out = NULL;
    if (!o || !out) {
        rc = pps_err_set(err, PPS_EINVAL, "pps_trace_open: no options or no place for the tracer");
        goto out;
    }
    if ((rc = check_options(o, err)) || (rc = resolve_rank(o, &rank, &world, err)))
        goto out;
    pps__clock_skew_init();
    pps__tsc_mode_init();

    /* Everything that can fail without leaving a file behind comes before the shard. */
    if (posix_memalign(&mem, 64, sizeof(*t)) != 0) {
        rc = pps_err_set(err, PPS_ENOMEM, "pps_trace_open: out of memory");
        goto out;
    }
    t = memset(mem, 0, sizeof(*t));
    t->id = pps__tracer_next_id();
    atomic_init(&t->iter, -1);
    atomic_init(&t->n_bufs, 0);
    atomic_init(&t->dropped_threads, 0);
    atomic_init(&t->dropped_writes, 0);
    t->max_threads = o->max_threads;
    t->buffer_spans = o->buffer_spans;
    t->rank = rank;
    t->world = world;
    t->clock_sync = o->clock_sync != 0;
    atomic_init(&t->dev_slot, -1);
    t->interval_ms = o->flush_interval_ms;
    t->pid = pps__pid();
    t->unwritten_first = t->unwritten_last = -1;
    t->full_after = full_after_env();
    t->bufs = calloc((size_t)o->max_threads, sizeof(*t->bufs));
    t->limits = calloc((size_t)o->max_threads, sizeof(*t->limits));
    t->batch = malloc(PPS__BATCH_SPANS * sizeof(*t->batch));
    if (!t->bufs || !t->limits || !t->batch) {
        rc = pps_err_set(err, PPS_ENOMEM, "pps_trace_open: out of memory");
        goto out;
    }
    if ((rc = sync_init(t, err)))
        goto out;
    synced = 1;
    /* Collective: every rank measures now, before any of them can fail on its own shard. */
    if (t->clock_sync) {
        struct pps__clock_sample s;
        if ((rc = pps__clock_sync(&s, err)))
            goto out;
        sync = s;
    }

    if ((rc = pps_store_writer_open(o->run_dir, rank, &t->w, err)))
        goto out;
    if ((world > 0 && (rc = pps_store_writer_meta_int(t->w, "world", world, err))) ||
        (rc = pps_store_writer_meta(t->w, "source", "tracer", err)) ||
        (rc = write_clock_source(t, err)) ||
        (t->clock_sync && (rc = write_clock_meta(t->w, "start", &sync, err))))
        goto out;
    if ((rc = pps__live_add(t, err)))
        goto out;
    live = 1;
    if ((rc = pps__flusher_start(t, err)))
        goto out;
    *out = t;
    t = NULL;
out:
    if (t) {
        if (live)
            pps__live_remove(t);
        /* A shard that got this far stays, marked incomplete: the store never deletes one. */
        pps_store_writer_close(t->w, 0, NULL);
        tracer_free(t, synced);
    }
    return rc;
}

/* The drop row of the iteration marked last (or, without marks, of the spans dropped so far,
 * as iteration -1); stage -1 stands for the whole rank. Under t->lock. */
static int queue_drop_row(struct pps_tracer *t)
{
    uint64_t total = pps__dropped_total(t);
    struct pps_metric m;

    memset(&m, 0, sizeof(m));
    m.iter = t->marked ? t->mark_iter : -1;
    m.stage = -1;
    m.loss = NAN;
    m.grad_norm = NAN;
    m.act_bytes = -1;
    m.pending_w = -1;
    m.dropped = (int64_t)(total - t->dropped_at_mark);
    t->dropped_at_mark = total;
    /* Iterations get a row even with nothing dropped ("none", not "unknown"); the time before
     * the first mark only when something was. */
    if (!t->marked && m.dropped == 0)
        return 0;
    return pps__queue_metric(t, &m);
}

/* Closes t; complete says whether the shard gets its complete mark (a run that failed does not,
 * and skips the collective clock sync: its peers may be gone). */
static int close_tracer(struct pps_tracer *t, int complete, struct pps_err *err)
{
    struct pps_err e = {0};
    int rc;

    if (!t)
        return 0;
    /* In a child forked after open there is no flusher to stop, and closing the parent's SQLite
     * connection here would checkpoint and remove the log it is still writing. */
    if (pps__foreign(t))
        return pps_err_set(err, PPS_EINVAL,
                           "pps_trace_close: the tracer belongs to process %ld, not to this "
                           "forked child; left alone",
                           (long)t->pid);
    /* Device activity first, while this thread may still record into t: what CUPTI holds is
     * routed to the tracers of its ops, then t's slot is given up. */
    if (atomic_load(&t->dev_slot) >= 0) {
        struct pps__cupti_counts n = pps__cupti_detach(t);
        uint64_t q_dropped = 0;
        atomic_store(&t->dev_slot, -1);
        if (pthread_mutex_lock(&t->lock) == 0) {
            q_dropped = t->dev_q_dropped;
            pthread_mutex_unlock(&t->lock);
        }
        /* CUPTI's drops since t attached (the process's, shared by its tracers), the records
         * no op claimed, and what t's queue could not hold. */
        if (pps_trace_meta_int(t, "device_dropped",
                               (int64_t)(n.dropped - t->dev_dropped_at_attach + q_dropped)) ||
            pps_trace_meta_int(t, "device_unattributed", (int64_t)n.unattributed))
            pps__fail(t, &(struct pps_err){PPS_ENOMEM, "pps_trace_close: out of memory"});
    }
    /* A thread exiting from now on leaves the buffers alone. */
    pps__live_remove(t);
    /* The last drain, on the flusher; after the join this thread owns the writer. */
    pps__flusher_stop(t);

    if (pthread_mutex_lock(&t->lock) == 0) {
        if (queue_drop_row(t) != 0)
            pps__fail_locked(t, PPS_ENOMEM,
                             "pps_trace_close: out of memory, a drop count was lost");
        pthread_mutex_unlock(&t->lock);
    }
    if (t->clock_sync && complete) {
        struct pps__clock_sample s;
        if (pps__clock_sync(&s, &e) != 0 || write_clock_meta(t->w, "end", &s, &e) != 0)
            pps__fail(t, &e);
    }
    /* What the last drain left: the rows queued above, anything queued meanwhile. */
    pps__flusher_drain(t);
    if (pps__tsc_on) {
        double rate = pps__tsc_hz();
        char hz[32];
        snprintf(hz, sizeof(hz), "%.0f", rate);
        if (rate > 0 && pps_store_writer_meta(t->w, "clock_tsc_hz", hz, &e) != 0)
            pps__fail(t, &e);
    }
    /* An injected full disk cannot take the complete mark either, as a real one could not. */
    if (complete && pps__injected_full(t, &e) != 0) {
        pps__fail(t, &e);
        complete = 0;
    }
    /* A shard without all its metadata (lost to a full disk) is not a whole one: marked
     * incomplete, a reader takes what it lacks for a rank that stopped early, not another run. */
    if (t->meta_lost)
        complete = 0;
    if (pps_store_writer_close(t->w, complete, &e) != 0)
        pps__fail(t, &e);
    t->w = NULL;

    rc = t->err_code;
    if (rc && err)
        *err = t->err;
    tracer_free(t, 1);
    return rc;
}

int pps_trace_close(struct pps_tracer *t, struct pps_err *err)
{
    return close_tracer(t, 1, err);
}

int pps_trace_close_incomplete(struct pps_tracer *t, struct pps_err *err)
{
    return close_tracer(t, 0, err);
}

/* ---- metadata, names, metrics, iterations ------------------------------------------------- */

int pps_trace_meta(struct pps_tracer *t, const char *key, const char *value)
{
    int rc;

    if (!t || !key || !*key || !value || pps__foreign(t))
        return PPS_EINVAL;
    if (pthread_mutex_lock(&t->lock) != 0)
        return PPS_EIO;
    rc = pps__queue_meta(t, key, value);
    pthread_mutex_unlock(&t->lock);
    return rc;
}

int pps_trace_meta_int(struct pps_tracer *t, const char *key, int64_t value)
{
    char buf[32];
    snprintf(buf, sizeof(buf), "%lld", (long long)value);
    return pps_trace_meta(t, key, buf);
}

int32_t pps_trace_name(struct pps_tracer *t, const char *name)
{
    int32_t id;

    if (!t || !name || pps__foreign(t))
        return PPS_EINVAL;
    if (pthread_mutex_lock(&t->lock) != 0)
        return PPS_EIO;
    id = pps_strtab_intern(&t->names, name);
    pthread_mutex_unlock(&t->lock);
    return id;
}

void pps_trace_metric(struct pps_tracer *t, int iter, int stage, double loss, double grad_norm,
                      int64_t act_bytes, int64_t pending_w)
{
    struct pps_metric m;

    if (!t || pps__foreign(t))
        return;
    memset(&m, 0, sizeof(m));
    m.iter = iter;
    m.stage = stage;
    m.loss = loss;
    m.grad_norm = grad_norm;
    m.act_bytes = act_bytes;
    m.pending_w = pending_w;
    m.dropped = -1; /* the tracer's own rows (stage -1) carry the drops */
    if (pthread_mutex_lock(&t->lock) != 0)
        return;
    if (pps__queue_metric(t, &m) != 0)
        pps__fail_locked(t, PPS_ENOMEM, "pps_trace_metric: out of memory, a metric was lost");
    pthread_mutex_unlock(&t->lock);
}

void pps_trace_iteration(struct pps_tracer *t, int iter)
{
    if (!t)
        return;
    if (!pps__foreign(t) && pthread_mutex_lock(&t->lock) == 0) {
        if (queue_drop_row(t) != 0)
            pps__fail_locked(t, PPS_ENOMEM,
                             "pps_trace_iteration: out of memory, a drop count was lost");
        t->marked = 1;
        t->mark_iter = iter;
        pthread_mutex_unlock(&t->lock);
    }
    atomic_store_explicit(&t->iter, iter, memory_order_relaxed);
}

uint64_t pps_trace_dropped(const struct pps_tracer *t)
{
    /* The counters are atomics read with relaxed loads: nothing is written through t. */
    return t ? pps__dropped_total((struct pps_tracer *)t) : 0;
}

void pps_trace_stats(const struct pps_tracer *t, struct pps_trace_stats *out)
{
    /* The lock is taken and given back: the tracer's state is not changed. */
    struct pps_tracer *mt = (struct pps_tracer *)t;

    if (!out)
        return;
    memset(out, 0, sizeof(*out));
    out->unwritten_first_iter = out->unwritten_last_iter = -1;
    if (!t || pps__foreign(t) || pthread_mutex_lock(&mt->lock) != 0)
        return;
    out->written = t->written;
    out->unwritten_first_iter = t->unwritten_first;
    out->unwritten_last_iter = t->unwritten_last;
    pthread_mutex_unlock(&mt->lock);
    out->dropped = pps__dropped_total(mt);
    out->unwritten = atomic_load_explicit(&mt->dropped_writes, memory_order_relaxed);
}

int pps_trace_flush(struct pps_tracer *t, struct pps_err *err)
{
    uint64_t mine;
    int rc;

    if (!t)
        return pps_err_set(err, PPS_EINVAL, "pps_trace_flush: no tracer");
    if (pps__foreign(t)) /* no flusher in a forked child: waiting would never end */
        return pps_err_set(err, PPS_EINVAL,
                           "pps_trace_flush: the tracer belongs to process %ld, not to this "
                           "forked child",
                           (long)t->pid);
    if ((rc = pthread_mutex_lock(&t->lock)) != 0)
        return pps_err_set(err, PPS_EIO, "pps_trace_flush: cannot lock (%s)", strerror(rc));
    mine = ++t->flush_req;
    pthread_cond_signal(&t->wake);
    while (t->flush_done < mine)
        if ((rc = pthread_cond_wait(&t->done, &t->lock)) != 0)
            break;
    if (rc != 0)
        pps_err_set(err, PPS_EIO, "pps_trace_flush: cannot wait (%s)", strerror(rc));
    else if ((rc = t->err_code) != 0 && err)
        *err = t->err;
    pthread_mutex_unlock(&t->lock);
    return rc ? (rc < 0 ? rc : PPS_EIO) : 0;
}

/* ---- the hot path ------------------------------------------------------------------------- */

void pps_trace_begin(struct pps_tracer *t, int kind, int stage, int chunk, int mb)
{
    struct pps__tbuf *b;
    struct pps__frame *f;

    if (!t)
        return;
    if (!(b = pps__tbuf_get(t))) {
        pps__drop(t, NULL);
        return;
    }
    if (b->depth >= PPS__STACK_DEPTH) {
        b->depth++; /* the matching end is ignored */
        pps__drop(t, b);
        return;
    }
    f = &b->stack[b->depth++];
    f->pushed = 0;
    if (!span_ok(kind, stage, chunk)) {
        f->kind = 0;
        pps__drop(t, b);
        return;
    }
    f->kind = (uint8_t)kind;
    f->stage = (int16_t)stage;
    f->chunk = (int16_t)chunk;
    f->mb = mb;
    f->iter = atomic_load_explicit(&t->iter, memory_order_relaxed);
    {
        int slot = atomic_load_explicit(&t->dev_slot, memory_order_relaxed);
        f->pushed = slot >= 0;
        if (f->pushed)
            pps__cupti_push(pps__devop_pack(slot, kind, chunk, mb, f->iter));
    }
    f->start_ns = pps__stamp();
}

int pps_trace_thread_init(struct pps_tracer *t)
{
    if (!t)
        return 0;
    return pps__tbuf_get(t) ? 0 : PPS_ENOMEM;
}

void pps_trace_end(struct pps_tracer *t)
{
    int64_t now = pps__stamp(); /* the span ends when end is called, not after the bookkeeping */
    struct pps__tbuf *b;
    struct pps__frame *f;
    struct pps_span *s;

    if (!t || !(b = pps__tbuf_get(t)) || b->depth == 0)
        return;
    if (--b->depth >= PPS__STACK_DEPTH)
        return;
    f = &b->stack[b->depth];
    if (f->kind && f->pushed)
        pps__cupti_pop();
    if (!f->kind || !(s = pps__tbuf_slot(b)))
        return;
    s->start_ns = f->start_ns;
    s->end_ns = now;
    s->bytes = 0;
    /* With device activity on, the op's id, which its kernels and copies carry too. */
    s->corr =
        f->pushed ? pps__devop_corr(pps__devop_pack(0, f->kind, f->chunk, f->mb, f->iter)) : 0;
    s->iter = f->iter;
    s->mb = f->mb;
    s->peer = -1;
    s->name_id = -1;
    s->stage = f->stage;
    s->chunk = f->chunk;
    s->kind = f->kind;
    s->clock = pps__stamp_clock();
    s->rank = 0;
    pps__tbuf_publish(b);
}

/* The common path of every call that records a finished span: the thread's buffer and a slot
 * in it, or NULL after counting the drop. */
static inline struct pps_span *slot_for(struct pps_tracer *t, int kind, int stage, int chunk,
                                        struct pps__tbuf **b)
{
    if (!(*b = pps__tbuf_get(t))) {
        pps__drop(t, NULL);
        return NULL;
    }
    if (!span_ok(kind, stage, chunk)) {
        pps__drop(t, *b);
        return NULL;
    }
    return pps__tbuf_slot(*b);
}

static inline void fill(struct pps_span *s, int kind, int stage, int chunk, int32_t iter,
                        int32_t mb, int64_t start_ns, int64_t end_ns)
{
    s->start_ns = start_ns;
    s->end_ns = end_ns;
    s->bytes = 0;
    s->corr = 0;
    s->iter = iter;
    s->mb = mb;
    s->peer = -1;
    s->name_id = -1;
    s->stage = (int16_t)stage;
    s->chunk = (int16_t)chunk;
    s->kind = (uint8_t)kind;
    s->clock = PPS_CLOCK_HOST;
    s->rank = 0;
}

void pps_trace_record(struct pps_tracer *t, int kind, int stage, int chunk, int mb,
                      int64_t start_ns, int64_t end_ns)
{
    struct pps__tbuf *b;
    struct pps_span *s;

    if (!t || !(s = slot_for(t, kind, stage, chunk, &b)))
        return;
    fill(s, kind, stage, chunk, atomic_load_explicit(&t->iter, memory_order_relaxed), mb, start_ns,
         end_ns);
    pps__tbuf_publish(b);
}

uint64_t pps__trace_dev_push_slot(struct pps_tracer *t, int slot, int kind, int chunk, int mb)
{
    uint64_t ext = pps__devop_pack(slot, kind, chunk, mb,
                                   atomic_load_explicit(&t->iter, memory_order_relaxed));

    pps__cupti_push(ext);
    return ext;
}

void pps__trace_record_dev(struct pps_tracer *t, int kind, int stage, int chunk, int mb,
                           int64_t start, int64_t end, uint64_t ext)
{
    struct pps__tbuf *b;
    struct pps_span *s;
    int slot, k, c, m, iter;

    if (!t || !(s = slot_for(t, kind, stage, chunk, &b)))
        return;
    if (!ext || pps__devop_unpack(ext, &slot, &k, &c, &m, &iter) != 0) {
        fill(s, kind, stage, chunk, atomic_load_explicit(&t->iter, memory_order_relaxed), mb, start,
             end);
    } else {
        fill(s, kind, stage, chunk, iter, mb, start, end);
        s->corr = pps__devop_corr(ext);
    }
    s->clock = pps__stamp_clock();
    pps__tbuf_publish(b);
}

static void p2p_span(struct pps_tracer *t, int kind, int stage, int peer, int mb, int64_t bytes,
                     int64_t start, int64_t end, int64_t msg_id, uint8_t clock)
{
    struct pps__tbuf *b;
    struct pps_span *s;

    if (!t || !(s = slot_for(t, kind, stage, -1, &b)))
        return;
    fill(s, kind, stage, -1, atomic_load_explicit(&t->iter, memory_order_relaxed), mb, start, end);
    s->peer = peer;
    s->bytes = bytes;
    s->corr = msg_id > 0 ? msg_id : 0;
    s->clock = clock;
    pps__tbuf_publish(b);
}

void pps_trace_p2p_msg(struct pps_tracer *t, int kind, int stage, int peer, int mb, int64_t bytes,
                       int64_t start_ns, int64_t end_ns, int64_t msg_id)
{
    p2p_span(t, kind, stage, peer, mb, bytes, start_ns, end_ns, msg_id, PPS_CLOCK_HOST);
}

void pps__trace_p2p_stamped(struct pps_tracer *t, int kind, int stage, int peer, int mb,
                            int64_t bytes, int64_t start, int64_t end)
{
    p2p_span(t, kind, stage, peer, mb, bytes, start, end, 0, pps__stamp_clock());
}

void pps_trace_p2p(struct pps_tracer *t, int kind, int stage, int peer, int mb, int64_t bytes,
                   int64_t start_ns, int64_t end_ns)
{
    pps_trace_p2p_msg(t, kind, stage, peer, mb, bytes, start_ns, end_ns, 0);
}

static void named_span(struct pps_tracer *t, int kind, int stage, int32_t name_id, int64_t start,
                       int64_t end, uint8_t clock)
{
    struct pps__tbuf *b;
    struct pps_span *s;

    if (!t || !(s = slot_for(t, kind, stage, -1, &b)))
        return;
    fill(s, kind, stage, -1, atomic_load_explicit(&t->iter, memory_order_relaxed), -1, start, end);
    s->name_id = name_id >= 0 ? name_id : -1;
    s->clock = clock;
    pps__tbuf_publish(b);
}

void pps_trace_named(struct pps_tracer *t, int kind, int stage, int32_t name_id, int64_t start_ns,
                     int64_t end_ns)
{
    named_span(t, kind, stage, name_id, start_ns, end_ns, PPS_CLOCK_HOST);
}

void pps__trace_named_stamped(struct pps_tracer *t, int kind, int stage, int32_t name_id,
                              int64_t start, int64_t end)
{
    named_span(t, kind, stage, name_id, start, end, pps__stamp_clock());
}

void pps__trace_device_span(struct pps_tracer *t, const struct pps_span *d, const char *name)
{
    int stage = t->rank >= 0 && t->rank < INT16_MAX ? t->rank : 0;
    int32_t id = name ? pps_trace_name(t, name) : -1;
    struct pps_span s = *d;

    s.stage = (int16_t)stage;
    s.name_id = id >= 0 ? id : -1;
    s.peer = -1;
    s.rank = 0;
    if (pthread_mutex_lock(&t->lock) != 0)
        return;
    if (t->n_dev_q == t->cap_dev_q) {
        size_t cap = t->cap_dev_q ? 2 * t->cap_dev_q : 1024;
        struct pps_span *q = cap <= PPS__DEV_Q_MAX ? realloc(t->dev_q, cap * sizeof(*q)) : NULL;
        if (!q) {
            t->dev_q_dropped++;
            pthread_mutex_unlock(&t->lock);
            return;
        }
        t->dev_q = q;
        t->cap_dev_q = cap;
    }
    t->dev_q[t->n_dev_q++] = s;
    pthread_mutex_unlock(&t->lock);
}

int pps_trace_device_activity(struct pps_tracer *t, struct pps_err *err)
{
    int slot = -1, rc;

    if (!t)
        return pps_err_set(err, PPS_EINVAL, "pps_trace_device_activity: no tracer");
    if (atomic_load(&t->dev_slot) >= 0)
        return 0;
    if ((rc = pps__cupti_attach(t, &slot, &t->dev_dropped_at_attach, err)) < 0)
        return rc;
    atomic_store(&t->dev_slot, slot);
    return pps_trace_meta(t, "device_activity", "cupti");
}

void pps_trace_device(struct pps_tracer *t, int kind, int stage, int32_t name_id, int64_t start_ns,
                      int64_t end_ns, int64_t corr, int64_t bytes)
{
    struct pps__tbuf *b;
    struct pps_span *s;

    if (!t || !(s = slot_for(t, kind, stage, -1, &b)))
        return;
    /* Device activity is often delivered an iteration or more after it ran: its iteration is
     * left unknown rather than guessed from the host's current one. */
    fill(s, kind, stage, -1, -1, -1, start_ns, end_ns);
    s->name_id = name_id >= 0 ? name_id : -1;
    s->corr = corr;
    s->bytes = bytes;
    s->clock = PPS_CLOCK_DEVICE;
    pps__tbuf_publish(b);
}
