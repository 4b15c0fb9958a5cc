/*
 * flusher.c - the background thread that moves spans from the threads' ring buffers into the
 * rank's shard, and the queues of metadata and metrics it writes on the way.
 *
 * One drain: note every buffer's head, copy spans out up to those heads into a batch (freeing
 * the slots at once, so the recording threads never wait for SQLite), write the names interned
 * so far, the queued metadata and metrics, then the batch in one transaction; repeat until the
 * noted heads are reached. Noting the heads first bounds the drain even when threads record
 * faster than the disk takes them, so pps_trace_flush() always returns.
 *
 * The store writer is used by this thread alone while the tracer is open; pps_trace_close()
 * takes it over after joining the thread.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "cupti.h"
#include "tracer_core.h"

void pps__fail_locked(struct pps_tracer *t, int code, const char *msg)
{
    if (!t->err_code)
        t->err_code = pps_err_set(&t->err, code < 0 ? code : PPS_EIO, "%s", msg);
}

void pps__fail(struct pps_tracer *t, const struct pps_err *err)
{
    if (pthread_mutex_lock(&t->lock) != 0)
        return;
    pps__fail_locked(t, err->code, err->msg);
    pthread_mutex_unlock(&t->lock);
}

int pps__queue_meta(struct pps_tracer *t, const char *key, const char *value)
{
    struct pps__meta_item it = {strdup(key), strdup(value)};

    if (!it.key || !it.value)
        goto nomem;
    if (t->n_meta_q == t->cap_meta_q) {
        size_t cap = t->cap_meta_q ? 2 * t->cap_meta_q : 16;
        struct pps__meta_item *q = realloc(t->meta_q, cap * sizeof(*q));
        if (!q)
            goto nomem;
        t->meta_q = q;
        t->cap_meta_q = cap;
    }
    t->meta_q[t->n_meta_q++] = it;
    return 0;
nomem:
    free(it.key);
    free(it.value);
    return PPS_ENOMEM;
}

int pps__queue_metric(struct pps_tracer *t, const struct pps_metric *m)
{
    if (t->n_metric_q == t->cap_metric_q) {
        size_t cap = t->cap_metric_q ? 2 * t->cap_metric_q : 64;
        struct pps_metric *q = realloc(t->metric_q, cap * sizeof(*q));
        if (!q)
            return PPS_ENOMEM;
        t->metric_q = q;
        t->cap_metric_q = cap;
    }
    t->metric_q[t->n_metric_q++] = *m;
    return 0;
}

static void meta_items_free(struct pps__meta_item *q, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(q[i].key);
        free(q[i].value);
    }
    free(q);
}

void pps__queues_free(struct pps_tracer *t)
{
    meta_items_free(t->meta_q, t->n_meta_q);
    free(t->metric_q);
    free(t->dev_q);
    t->meta_q = NULL;
    t->metric_q = NULL;
    t->dev_q = NULL;
    t->n_meta_q = t->cap_meta_q = t->n_metric_q = t->cap_metric_q = 0;
    t->n_dev_q = t->cap_dev_q = 0;
}

int pps__injected_full(const struct pps_tracer *t, struct pps_err *err)
{
    if (t->written < t->full_after)
        return 0;
    return pps_err_set(err, PPS_EIO,
                       "database or disk is full (injected: PPSCOPE_TRACE_FULL_AFTER=%llu)",
                       (unsigned long long)t->full_after);
}

/*
 * Names first, in id order, so that a span never reaches the shard before its name: a span
 * with id k was recorded after pps_trace_name() handed out k, which the drain that copied the
 * span out of its buffer sees here.
 */
static void write_names(struct pps_tracer *t)
{
    struct pps_err err = {0};

    for (;;) {
        const char *name = NULL;
        int32_t id = -1;

        if (pthread_mutex_lock(&t->lock) != 0)
            return;
        /* The string never moves (strs may be reallocated, not the strings it points to). */
        if (t->names_written < t->names.n)
            name = t->names.strs[t->names_written];
        pthread_mutex_unlock(&t->lock);
        if (!name)
            return;
        if (pps__injected_full(t, &err) || pps_store_writer_name(t->w, name, &id, &err) != 0) {
            pps__fail(t, &err);
            return; /* tried again at the next drain */
        }
        if (id != (int32_t)t->names_written) {
            pps_err_set(&err, PPS_EIO, "the trace store gave name '%s' id %d, the tracer %zu", name,
                        (int)id, t->names_written);
            pps__fail(t, &err);
        }
        t->names_written++;
    }
}

/* The metadata and metrics queued so far, taken out under the lock and written after it. */
static void write_queues(struct pps_tracer *t)
{
    struct pps__meta_item *meta;
    struct pps_metric *metrics;
    size_t n_meta, n_metrics;
    struct pps_err err = {0};

    if (pthread_mutex_lock(&t->lock) != 0)
        return;
    meta = t->meta_q;
    n_meta = t->n_meta_q;
    metrics = t->metric_q;
    n_metrics = t->n_metric_q;
    t->meta_q = NULL;
    t->metric_q = NULL;
    t->n_meta_q = t->cap_meta_q = t->n_metric_q = t->cap_metric_q = 0;
    pthread_mutex_unlock(&t->lock);

    for (size_t i = 0; i < n_meta; i++)
        if (pps__injected_full(t, &err) ||
            pps_store_writer_meta(t->w, meta[i].key, meta[i].value, &err) != 0) {
            pps__fail(t, &err);
            t->meta_lost = 1;
        }
    if (n_metrics && (pps__injected_full(t, &err) ||
                      pps_store_writer_metrics(t->w, metrics, n_metrics, &err) != 0))
        pps__fail(t, &err);
    meta_items_free(meta, n_meta);
    free(metrics);
}

/* A batch the store refused: its spans counted with the drops, its iterations noted (the run
 * says which it lost), the reason kept for close. */
static void batch_lost(struct pps_tracer *t, const struct pps_span *spans, size_t n,
                       const struct pps_err *err)
{
    int32_t lo = -1, hi = -1;

    for (size_t i = 0; i < n; i++) {
        int32_t it = spans[i].iter;
        if (it >= 0 && (lo < 0 || it < lo))
            lo = it;
        if (it > hi)
            hi = it;
    }
    atomic_fetch_add_explicit(&t->dropped_writes, n, memory_order_relaxed);
    if (pthread_mutex_lock(&t->lock) != 0)
        return;
    if (lo >= 0 && (t->unwritten_first < 0 || lo < t->unwritten_first))
        t->unwritten_first = lo;
    if (hi > t->unwritten_last)
        t->unwritten_last = hi;
    pps__fail_locked(t, err->code, err->msg);
    pthread_mutex_unlock(&t->lock);
}

/* n spans into the shard in one transaction, counted as written or as lost. */
static void write_spans(struct pps_tracer *t, const struct pps_span *spans, size_t n)
{
    struct pps_err err = {0};

    if (!n)
        return;
    if (pps__injected_full(t, &err) || pps_store_writer_spans(t->w, spans, n, &err) != 0) {
        batch_lost(t, spans, n, &err);
        return;
    }
    /* Under the lock for pps_trace_stats(); the flusher is the only writer. */
    if (pthread_mutex_lock(&t->lock) == 0) {
        t->written += n;
        pthread_mutex_unlock(&t->lock);
    }
}

/* Spans stamped in TSC ticks into nanoseconds, by the process's line (tsc.h). */
static void convert_ticks(struct pps_span *spans, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        struct pps_span *s = &spans[i];
        if (s->clock != PPS__CLOCK_TICKS)
            continue;
        s->start_ns = pps__tsc_ns(s->start_ns);
        s->end_ns = pps__tsc_ns(s->end_ns);
        /* rdtsc is not ordered as clock_gettime() orders it, and a range that ends on another
         * thread reads another core's TSC: an end a few ticks before its start is 0 ns long,
         * not a negative duration (which readers refuse as damage). */
        if (s->end_ns < s->start_ns)
            s->end_ns = s->start_ns;
        s->clock = PPS_CLOCK_HOST;
    }
}

static void write_batch(struct pps_tracer *t, size_t n)
{
    write_names(t);
    write_queues(t);
    write_spans(t, t->batch, n);
}

/* The device spans routed to t since the last drain (after their names: write_names first). */
static void write_device(struct pps_tracer *t)
{
    struct pps_span *q;
    size_t n;

    if (pthread_mutex_lock(&t->lock) != 0)
        return;
    q = t->dev_q;
    n = t->n_dev_q;
    t->dev_q = NULL;
    t->n_dev_q = t->cap_dev_q = 0;
    pthread_mutex_unlock(&t->lock);
    if (n) {
        write_names(t);
        write_spans(t, q, n);
    }
    free(q);
}

void pps__flusher_drain(struct pps_tracer *t)
{
    int n, i = 0;

    /* Device activity CUPTI handed back, parsed and routed to the tracers' device queues (by
     * this flusher or another's), then this tracer's queue written. */
    if (atomic_load_explicit(&t->dev_slot, memory_order_relaxed) >= 0)
        pps__cupti_poll(t);
    write_device(t);
    n = atomic_load_explicit(&t->n_bufs, memory_order_acquire);

    for (int k = 0; k < n; k++)
        t->limits[k] = atomic_load_explicit(&t->bufs[k]->head, memory_order_acquire);
    pps__tsc_calibrate(); /* at most one sample per 10 ms, whichever flusher takes it */
    for (;;) {
        size_t got = 0;

        while (i < n && got < PPS__BATCH_SPANS) {
            size_t room = PPS__BATCH_SPANS - got;
            size_t k = pps__tbuf_drain(t->bufs[i], t->limits[i], t->batch + got, room);
            got += k;
            if (k < room)
                i++; /* buffer i is drained up to its limit */
        }
        convert_ticks(t->batch, got);
        write_batch(t, got);
        if (i >= n)
            break;
    }
}

/* Waits for the next drain: flush_interval_ms, a flush request, or close. Under t->lock. */
static void wait_for_work(struct pps_tracer *t)
{
    struct timespec until;
    int timed = t->interval_ms > 0 && clock_gettime(CLOCK_MONOTONIC, &until) == 0;

    if (timed) {
        until.tv_sec += t->interval_ms / 1000;
        until.tv_nsec += (long)(t->interval_ms % 1000) * 1000000;
        if (until.tv_nsec >= 1000000000) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000;
        }
    }
    while (!t->stop && t->flush_req == t->flush_done) {
        int rc = timed ? pthread_cond_timedwait(&t->wake, &t->lock, &until)
                       : pthread_cond_wait(&t->wake, &t->lock);
        if (rc == ETIMEDOUT)
            break;
        if (rc != 0 && rc != EINTR) {
            /* Cannot wait: drain now rather than spin or stop draining. */
            pps__fail_locked(t, PPS_EIO, "trace flusher: cannot wait on its condition variable");
            break;
        }
    }
}

static void *flusher_main(void *arg)
{
    struct pps_tracer *t = arg;

    for (;;) {
        uint64_t target;
        int stop;

        if (pthread_mutex_lock(&t->lock) != 0)
            break;
        wait_for_work(t);
        target = t->flush_req;
        stop = t->stop;
        pthread_mutex_unlock(&t->lock);

        pps__flusher_drain(t);

        if (pthread_mutex_lock(&t->lock) != 0)
            break;
        t->flush_done = target;
        pthread_cond_broadcast(&t->done);
        pthread_mutex_unlock(&t->lock);
        if (stop)
            break;
    }
    return NULL;
}

int pps__flusher_start(struct pps_tracer *t, struct pps_err *err)
{
    sigset_t all, old;
    int rc;

    /* The job's signals are the job's: the flusher takes none of them. */
    sigfillset(&all);
    if ((rc = pthread_sigmask(SIG_SETMASK, &all, &old)) != 0)
        return pps_err_set(err, PPS_EIO, "pps_trace_open: cannot block signals (%s)", strerror(rc));
    rc = pthread_create(&t->thread, NULL, flusher_main, t);
    pthread_sigmask(SIG_SETMASK, &old, NULL); /* restores what succeeded above */
    if (rc != 0)
        return pps_err_set(err, PPS_EIO, "pps_trace_open: cannot start the flusher thread (%s)",
                           strerror(rc));
    t->thread_started = 1;
    return 0;
}

void pps__flusher_stop(struct pps_tracer *t)
{
    if (!t->thread_started)
        return;
    if (pthread_mutex_lock(&t->lock) == 0) {
        t->stop = 1;
        pthread_cond_signal(&t->wake);
        pthread_mutex_unlock(&t->lock);
    }
    pthread_join(t->thread, NULL); /* cannot fail: the thread is ours and joinable */
    t->thread_started = 0;
}
