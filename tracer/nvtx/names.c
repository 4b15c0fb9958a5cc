/*
 * names.c - the NVTX injection's name cache (names.h): a string hash set whose lookups take no
 * lock, with entries allocated one by one so that they never move.
 */
#include "names.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "pps_hash.h"

#define INITIAL_SLOTS 256

static struct pps__nvtx_name_table *table_new(size_t cap)
{
    struct pps__nvtx_name_table *t = calloc(1, sizeof(*t) + cap * sizeof(t->slots[0]));
    if (t)
        t->cap = cap;
    return t;
}

int pps__nvtx_names_init(struct pps__nvtx_names *c, size_t max, pps__nvtx_fill_fn fill, void *ctx)
{
    struct pps__nvtx_name_table *t;

    memset(c, 0, sizeof(*c));
    if (!(t = table_new(INITIAL_SLOTS)))
        return PPS_ENOMEM;
    if (pthread_mutex_init(&c->lock, NULL) != 0) {
        free(t);
        return PPS_ENOMEM;
    }
    atomic_init(&c->table, t);
    c->max = max ? max : 1;
    c->fill = fill;
    c->ctx = ctx;
    return 0;
}

void pps__nvtx_names_release(struct pps__nvtx_names *c)
{
    struct pps__nvtx_name_table *t = atomic_load(&c->table);

    if (!t)
        return;
    /* Every entry is in the newest table; the older ones only hold copies of the pointers. */
    for (size_t i = 0; i < t->cap; i++)
        free(atomic_load_explicit(&t->slots[i], memory_order_relaxed));
    while (t) {
        struct pps__nvtx_name_table *older = t->older;
        free(t);
        t = older;
    }
    atomic_store(&c->table, NULL);
    c->n = 0;
    pthread_mutex_destroy(&c->lock);
}

/* Doubles the table, publishing the new one; 0, or PPS_ENOMEM leaving it as it was. Under the
 * lock. */
static int grow(struct pps__nvtx_names *c, struct pps__nvtx_name_table *t)
{
    size_t cap = t->cap * 2;
    struct pps__nvtx_name_table *g = table_new(cap);

    if (!g)
        return PPS_ENOMEM;
    for (size_t i = 0; i < t->cap; i++) {
        struct pps__nvtx_name *e = atomic_load_explicit(&t->slots[i], memory_order_relaxed);
        if (!e)
            continue;
        size_t k = (size_t)e->hash & (cap - 1);
        while (atomic_load_explicit(&g->slots[k], memory_order_relaxed))
            k = (k + 1) & (cap - 1);
        atomic_store_explicit(&g->slots[k], e, memory_order_relaxed);
    }
    g->older = t;
    atomic_store_explicit(&c->table, g, memory_order_release);
    return 0;
}

/* The entry for (text, len, h) in t, or NULL; *slot: where the probe ended (an empty slot). */
static struct pps__nvtx_name *probe(struct pps__nvtx_name_table *t, const char *text, size_t len,
                                    uint64_t h, size_t *slot)
{
    size_t k = (size_t)h & (t->cap - 1);
    struct pps__nvtx_name *e;

    for (; (e = atomic_load_explicit(&t->slots[k], memory_order_acquire));
         k = (k + 1) & (t->cap - 1))
        if (e->hash == h && e->len == len && memcmp(e->text, text, len) == 0)
            return e;
    *slot = k;
    return NULL;
}

const struct pps__nvtx_name *pps__nvtx_names_get(struct pps__nvtx_names *c, const char *text,
                                                 size_t len)
{
    uint64_t h = pps_hash_bytes(text, len);
    struct pps__nvtx_name_table *t = atomic_load_explicit(&c->table, memory_order_acquire);
    struct pps__nvtx_name *found;
    size_t k;

    if ((found = probe(t, text, len, h, &k)))
        return found;

    pthread_mutex_lock(&c->lock);
    /* Another thread may have added it, or grown the table, meanwhile. */
    t = atomic_load_explicit(&c->table, memory_order_relaxed);
    if ((found = probe(t, text, len, h, &k)))
        goto out;
    /* Keep one slot empty, so that every probe ends, even after a failed grow. */
    if (c->n >= c->max || c->n + 1 >= t->cap)
        goto refuse;
    found = malloc(sizeof(*found) + len + 1);
    if (!found)
        goto refuse;
    memset(found, 0, sizeof(*found));
    found->hash = h;
    found->len = len;
    memcpy(found->text, text, len);
    found->text[len] = '\0';
    found->rule = PPS_LABEL_NONE;
    found->op.kind = -1;
    found->name_id = -1;
    if (c->fill)
        c->fill(c->ctx, found);
    atomic_store_explicit(&t->slots[k], found, memory_order_release);
    c->n++;
    /* Grow after inserting; a failed grow only costs speed. */
    if (c->n * 2 > t->cap)
        grow(c, t);
    goto out;
refuse:
    c->refused++;
out:
    pthread_mutex_unlock(&c->lock);
    return found;
}

size_t pps__nvtx_names_refused(struct pps__nvtx_names *c)
{
    pthread_mutex_lock(&c->lock);
    size_t n = c->refused;
    pthread_mutex_unlock(&c->lock);
    return n;
}
