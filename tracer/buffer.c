/*
 * buffer.c - the per-thread ring buffers: registering a thread on its first span, the thread's
 * cache of (tracer id -> buffer), handing a buffer back when its thread exits, and the flusher's
 * side of the ring. The producer's side is inline in tracer_core.h.
 *
 * A thread finds its buffer through a small thread-local cache keyed by the tracer's id, a
 * number never reused in the process, so a tracer opened at the address of a closed one is not
 * mistaken for it. A thread that exits gives its buffers back (if their tracers are still open),
 * and a new thread takes one over, once the flusher has emptied it, instead of allocating:
 * max_threads bounds the threads recording at once, not the threads a program ever starts.
 */
#include <stdlib.h>
#include <string.h>

#include "tracer_core.h"

_Thread_local struct pps__tls pps__tls __attribute__((tls_model("initial-exec")));

static _Atomic uint64_t last_id;

/* Open tracers. A thread that exits looks its tracers up here before touching their buffers,
 * and pps_trace_close() takes its tracer out before freeing them. */
static pthread_mutex_t live_lock = PTHREAD_MUTEX_INITIALIZER;
static struct pps_tracer *live;

static pthread_once_t key_once = PTHREAD_ONCE_INIT;
static pthread_key_t exit_key;
static int key_ok;

uint64_t pps__tracer_next_id(void)
{
    return atomic_fetch_add_explicit(&last_id, 1, memory_order_relaxed) + 1;
}

int pps__live_add(struct pps_tracer *t, struct pps_err *err)
{
    if (pthread_mutex_lock(&live_lock) != 0)
        return pps_err_set(err, PPS_EIO, "pps_trace_open: cannot lock the list of tracers");
    t->next_live = live;
    live = t;
    pthread_mutex_unlock(&live_lock);
    return 0;
}

void pps__live_remove(struct pps_tracer *t)
{
    /* Cannot fail with a default mutex that this thread does not hold; if it ever did, leaving
     * t listed would let an exiting thread touch freed memory, so wait until it works. */
    while (pthread_mutex_lock(&live_lock) != 0)
        ;
    for (struct pps_tracer **p = &live; *p; p = &(*p)->next_live)
        if (*p == t) {
            *p = t->next_live;
            break;
        }
    pthread_mutex_unlock(&live_lock);
}

/* Under live_lock. */
static int is_live(uint64_t id)
{
    for (struct pps_tracer *t = live; t; t = t->next_live)
        if (t->id == id)
            return 1;
    return 0;
}

/*
 * A thread is exiting: each buffer it holds in a tracer that is still open goes back to the
 * tracer, with an empty begin/end stack, for the next thread to take over. The spans in it stay
 * and are drained as usual.
 */
static void thread_exit(void *arg)
{
    struct pps__tls *tls = arg;

    if (pthread_mutex_lock(&live_lock) != 0)
        return;
    for (int i = 0; i < PPS__TLS_SLOTS; i++) {
        struct pps__tls_entry *e = &tls->e[i];
        if (e->id && e->buf && is_live(e->id)) {
            e->buf->depth = 0;
            atomic_store_explicit(&e->buf->owned, 0, memory_order_release);
        }
        e->id = 0;
        e->buf = NULL;
    }
    tls->exit_hook = 0;
    pthread_mutex_unlock(&live_lock);
}

static void key_create(void)
{
    key_ok = pthread_key_create(&exit_key, thread_exit) == 0;
}

static struct pps__tbuf *tbuf_new(size_t cap)
{
    struct pps__tbuf *b = NULL;
    void *mem = NULL;

    if (cap > SIZE_MAX / sizeof(struct pps_span))
        return NULL;
    if (posix_memalign(&mem, 64, sizeof(*b)) != 0)
        return NULL;
    b = mem;
    memset(b, 0, sizeof(*b));
    b->cap = cap;
    /* Written now, so that the pages are in memory before the hot path writes them: a page
     * fault on the thousandth span would cost more than the span. */
    b->slots = malloc(cap * sizeof(*b->slots));
    if (!b->slots) {
        free(b);
        return NULL;
    }
    memset(b->slots, 0, cap * sizeof(*b->slots));
    atomic_init(&b->head, 0);
    atomic_init(&b->tail, 0);
    atomic_init(&b->dropped, 0);
    atomic_init(&b->owned, 1);
    return b;
}

void pps__tbuf_free(struct pps__tbuf *b)
{
    if (!b)
        return;
    free(b->slots);
    free(b);
}

/* Takes over buffer b if no thread holds it (and, with want_empty, if the flusher has taken
 * every span out of it). */
static int take(struct pps__tbuf *b, int want_empty)
{
    int free_ = 0;

    if (atomic_load_explicit(&b->owned, memory_order_relaxed))
        return 0;
    /* Nobody writes a buffer without an owner, so an empty one stays empty until taken. */
    if (want_empty && atomic_load_explicit(&b->head, memory_order_relaxed) !=
                          atomic_load_explicit(&b->tail, memory_order_acquire))
        return 0;
    return atomic_compare_exchange_strong_explicit(&b->owned, &free_, 1, memory_order_acquire,
                                                   memory_order_relaxed);
}

/*
 * A buffer for a thread new to t: an empty one given back by an exited thread, else a new one
 * while fewer than max_threads exist, else one given back that still holds spans the flusher has
 * not taken (sharing what room is left beats dropping everything); NULL if none. Taking an empty
 * one first keeps a thread's room independent of which threads ran before it.
 */
static struct pps__tbuf *claim(struct pps_tracer *t)
{
    struct pps__tbuf *b = NULL;
    int n;

    if (pthread_mutex_lock(&t->lock) != 0)
        return NULL;
    n = atomic_load_explicit(&t->n_bufs, memory_order_relaxed); /* only written under lock */
    for (int i = 0; i < n; i++)
        if (take(t->bufs[i], 1)) {
            b = t->bufs[i];
            goto out;
        }
    if (n < t->max_threads && (b = tbuf_new(t->buffer_spans))) {
        t->bufs[n] = b;
        atomic_store_explicit(&t->n_bufs, n + 1, memory_order_release);
        goto out;
    }
    for (int i = 0; i < n; i++)
        if (take(t->bufs[i], 0)) {
            b = t->bufs[i];
            goto out;
        }
out:
    pthread_mutex_unlock(&t->lock);
    return b;
}

/* Puts (id, b) first in the thread's cache. Entries of closed tracers go first (looked up when
 * look is set); failing those, the last entry falls out (its buffer then stays held until its
 * tracer closes). */
static void cache_put(struct pps__tls *tls, uint64_t id, struct pps__tbuf *b, int look)
{
    int hole = PPS__TLS_SLOTS - 1;

    if (look && pthread_mutex_lock(&live_lock) == 0) {
        for (int i = 0; i < PPS__TLS_SLOTS; i++)
            if (!tls->e[i].id || !is_live(tls->e[i].id)) {
                hole = i;
                break;
            }
        pthread_mutex_unlock(&live_lock);
    }
    memmove(&tls->e[1], &tls->e[0], (size_t)hole * sizeof(tls->e[0]));
    tls->e[0].id = id;
    tls->e[0].buf = b;
}

struct pps__tbuf *pps__tbuf_register(struct pps_tracer *t)
{
    struct pps__tls *tls = &pps__tls;
    struct pps__tbuf *b;

    for (int i = 1; i < PPS__TLS_SLOTS; i++)
        if (tls->e[i].id == t->id) {
            struct pps__tls_entry hit = tls->e[i];
            tls->e[i] = tls->e[0];
            tls->e[0] = hit;
            return hit.buf;
        }
    /* A refused thread is cached too (buf NULL), so its later spans are dropped without
     * coming back here. In a forked child, live_lock may be held by a thread that is not
     * there: the cache is not tidied. */
    if (pps__foreign(t)) {
        cache_put(tls, t->id, NULL, 0);
        return NULL;
    }
    b = claim(t);
    cache_put(tls, t->id, b, 1);
    if (b && !tls->exit_hook) {
        /* Without the hook the thread's buffer stays held until the tracer closes: a cost, not
         * an error, so a failure here is not reported. */
        if (pthread_once(&key_once, key_create) == 0 && key_ok &&
            pthread_setspecific(exit_key, tls) == 0)
            tls->exit_hook = 1;
    }
    return b;
}

size_t pps__tbuf_drain(struct pps__tbuf *b, uint64_t limit, struct pps_span *out, size_t room)
{
    uint64_t tail = atomic_load_explicit(&b->tail, memory_order_relaxed);
    uint64_t head = atomic_load_explicit(&b->head, memory_order_acquire);
    size_t n, first;

    if (head > limit)
        head = limit;
    if (head <= tail)
        return 0;
    n = head - tail < room ? (size_t)(head - tail) : room;
    first = b->cap - b->rpos < n ? b->cap - b->rpos : n;
    memcpy(out, &b->slots[b->rpos], first * sizeof(*out));
    memcpy(out + first, b->slots, (n - first) * sizeof(*out));
    b->rpos += n;
    if (b->rpos >= b->cap)
        b->rpos -= b->cap;
    atomic_store_explicit(&b->tail, tail + n, memory_order_release);
    return n;
}

uint64_t pps__dropped_total(struct pps_tracer *t)
{
    int n = atomic_load_explicit(&t->n_bufs, memory_order_acquire);
    uint64_t sum = atomic_load_explicit(&t->dropped_threads, memory_order_relaxed) +
                   atomic_load_explicit(&t->dropped_writes, memory_order_relaxed);

    for (int i = 0; i < n; i++)
        sum += atomic_load_explicit(&t->bufs[i]->dropped, memory_order_relaxed);
    return sum;
}
