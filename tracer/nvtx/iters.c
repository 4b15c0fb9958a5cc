/*
 * iters.c - iterations from repeated forward ops (iters.h). Each (stage, chunk, mb) keeps the
 * last iteration it ran its forward in: one that ran in the current iteration already starts
 * the next. So no set is emptied between iterations, and a forward that joins the current
 * iteration (all but one an iteration) claims its key with one compare-and-swap, with no lock:
 * a PyTorch forward is a range on the program's hot path (bench/bench_nvtx_hotpath.c).
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

/* Puts e in t's first free slot from its own. Serialised by the caller. */
static void place(struct pps__nvtx_iter_table *t, struct pps__nvtx_iter_key *e)
{
    size_t k = slot_of(e->key, t->cap);
    while (atomic_load_explicit(&t->slots[k], memory_order_relaxed))
        k = (k + 1) & (t->cap - 1);
    atomic_store_explicit(&t->slots[k], e, memory_order_release);
}

/* key's entry, added if it is new; NULL out of memory. A full table is replaced by one twice its
 * size, published whole (readers may still probe the older one). Serialised by the caller. */
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

int pps__nvtx_iters_join(struct pps__nvtx_iters *it, int stage, int chunk, int mb)
{
    struct pps__nvtx_iter_key *e;
    int cur, last;

    if (mb < 0)
        return -1;
    e = find(atomic_load_explicit(&it->table, memory_order_acquire),
             key_of(stage, chunk < 0 ? 0 : chunk, mb));
    if (!e)
        return PPS__NVTX_ITERS_SERIAL;
    /* Its last below the current iteration: it joins it, if no other forward of it claims it
     * first. The serial path claims a key before it starts an iteration with it, so a key
     * that starts one is never below the iteration it starts here. */
    cur = atomic_load(&it->iter);
    last = atomic_load(&e->last);
    if (cur >= 0 && last < cur && atomic_compare_exchange_strong(&e->last, &last, cur))
        return -1;
    return PPS__NVTX_ITERS_SERIAL;
}

int pps__nvtx_iters_forward(struct pps__nvtx_iters *it, int stage, int chunk, int mb)
{
    struct pps__nvtx_iter_key *e;

    if (mb < 0)
        return -1;
    if (!(e = add(it, key_of(stage, chunk < 0 ? 0 : chunk, mb))))
        return -1;
    for (;;) {
        int cur = atomic_load(&it->iter), last = atomic_load(&e->last);
        /* The first forward of all starts iteration 0; one seen in this iteration, the next. */
        int in = cur < 0 ? 0 : last == cur ? cur + 1 : cur;
        /* The key first (a join on another thread loses to it), then the iteration. Only this
         * path moves the iteration: no one else changes it meanwhile. */
        if (!atomic_compare_exchange_strong(&e->last, &last, in))
            continue; /* a join took the key meanwhile: decide again */
        if (in == cur)
            return -1;
        atomic_store(&it->iter, in);
        return in;
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
    *it = (struct pps__nvtx_iters)PPS__NVTX_ITERS_INIT;
}
