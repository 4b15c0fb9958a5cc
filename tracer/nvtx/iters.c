/*
 * iters.c - iterations from repeated forward ops (iters.h). Each (stage, chunk, mb) keeps the
 * last iteration it ran its forward in: one that ran in the current iteration already starts
 * the next. So no set is emptied between iterations, and a forward of a key seen before reads
 * the table and raises two counters, with no lock: a PyTorch forward is a range on the
 * program's hot path (bench/bench_nvtx_hotpath.c).
 */
#include "iters.h"

#include <stdlib.h>
#include <string.h>

/* stage and chunk are 16-bit in the trace store, mb 32-bit: the key is unique, and never 0. */
static uint64_t key_of(int stage, int chunk, int mb)
{
    return ((((uint64_t)(uint16_t)stage << 16) | (uint16_t)chunk) << 32 | (uint32_t)mb) + 1;
}

static size_t slot_of(uint64_t key, size_t cap)
{
    key ^= key >> 33;
    key *= 0xff51afd7ed558ccdull;
    key ^= key >> 33;
    return (size_t)key & (cap - 1);
}

/* key's entry in t, or NULL. */
static struct pps__nvtx_iter_key *find(const struct pps__nvtx_iter_table *t, uint64_t key)
{
    struct pps__nvtx_iter_key *e;

    if (!t)
        return NULL;
    for (size_t k = slot_of(key, t->cap);
         (e = atomic_load_explicit(&t->slots[k], memory_order_acquire)); k = (k + 1) & (t->cap - 1))
        if (e->key == key)
            return e;
    return NULL;
}

/* Puts e in t's first free slot from its own. Under the lock. */
static void place(struct pps__nvtx_iter_table *t, struct pps__nvtx_iter_key *e)
{
    size_t k = slot_of(e->key, t->cap);
    while (atomic_load_explicit(&t->slots[k], memory_order_relaxed))
        k = (k + 1) & (t->cap - 1);
    atomic_store_explicit(&t->slots[k], e, memory_order_release);
}

/* key's entry, added if it is new; NULL out of memory. Under the lock: another thread may have
 * added it meanwhile. A full table is replaced by one twice its size, published whole. */
static struct pps__nvtx_iter_key *add(struct pps__nvtx_iters *it, uint64_t key)
{
    struct pps__nvtx_iter_table *t = atomic_load_explicit(&it->table, memory_order_relaxed);
    struct pps__nvtx_iter_key *e = find(t, key);

    if (e)
        return e;
    if (!t || (it->n + 1) * 2 > t->cap) {
        size_t cap = t ? t->cap * 2 : 64;
        struct pps__nvtx_iter_table *g = calloc(1, sizeof(*g) + cap * sizeof(g->slots[0]));
        if (!g)
            return NULL;
        g->cap = cap;
        g->older = t;
        for (size_t i = 0; t && i < t->cap; i++)
            if ((e = atomic_load_explicit(&t->slots[i], memory_order_relaxed)))
                place(g, e);
        atomic_store_explicit(&it->table, g, memory_order_release);
        t = g;
    }
    if (!(e = malloc(sizeof(*e))))
        return NULL;
    e->key = key;
    atomic_init(&e->last, -1);
    place(t, e);
    it->n++;
    return e;
}

/* e ran in iteration v: its last is v unless a later one is there already. */
static void raise_last(struct pps__nvtx_iter_key *e, int v)
{
    int old = atomic_load_explicit(&e->last, memory_order_relaxed);
    while (old < v && !atomic_compare_exchange_weak(&e->last, &old, v))
        ;
}

int pps__nvtx_iters_forward(struct pps__nvtx_iters *it, int stage, int chunk, int mb)
{
    struct pps__nvtx_iter_key *e;
    uint64_t key;

    if (mb < 0)
        return -1;
    key = key_of(stage, chunk < 0 ? 0 : chunk, mb);
    if (!(e = find(atomic_load_explicit(&it->table, memory_order_acquire), key))) {
        pthread_mutex_lock(&it->lock);
        e = add(it, key);
        pthread_mutex_unlock(&it->lock);
        if (!e)
            return -1;
    }
    for (;;) {
        int cur = atomic_load(&it->iter);
        /* The first forward of all starts iteration 0; one seen in this iteration, the next.
         * A thread that loses the race to start it reads the iteration again. */
        int next = cur < 0 ? 0 : atomic_load(&e->last) == cur ? cur + 1 : -1;
        if (next < 0) {
            raise_last(e, cur);
            return -1;
        }
        if (atomic_compare_exchange_strong(&it->iter, &cur, next)) {
            raise_last(e, next);
            return next;
        }
    }
}

void pps__nvtx_iters_release(struct pps__nvtx_iters *it)
{
    struct pps__nvtx_iter_table *t = atomic_load(&it->table);

    /* Every key is in the newest table; the older ones only hold copies of the pointers. */
    for (size_t i = 0; t && i < t->cap; i++)
        free(atomic_load_explicit(&t->slots[i], memory_order_relaxed));
    while (t) {
        struct pps__nvtx_iter_table *older = t->older;
        free(t);
        t = older;
    }
    pthread_mutex_destroy(&it->lock);
    *it = (struct pps__nvtx_iters)PPS__NVTX_ITERS_INIT;
}
