/*
 * names.c - the NVTX injection's name cache (names.h): a string hash set under one mutex, with
 * entries allocated one by one so that they never move.
 */
#include "names.h"

#include <stdlib.h>
#include <string.h>

#include "pps_hash.h"

#define INITIAL_SLOTS 256


int pps__nvtx_names_init(struct pps__nvtx_names *c, size_t max, pps__nvtx_fill_fn fill, void *ctx)
{
    memset(c, 0, sizeof(*c));
    c->slots = calloc(INITIAL_SLOTS, sizeof(*c->slots));
    if (!c->slots)
        return PPS_ENOMEM;
    if (pthread_mutex_init(&c->lock, NULL) != 0) {
        free(c->slots);
        c->slots = NULL;
        return PPS_ENOMEM;
    }
    c->cap = INITIAL_SLOTS;
    c->max = max ? max : 1;
    c->fill = fill;
    c->ctx = ctx;
    return 0;
}

void pps__nvtx_names_release(struct pps__nvtx_names *c)
{
    if (!c->slots)
        return;
    for (size_t i = 0; i < c->cap; i++)
        free(c->slots[i]);
    free(c->slots);
    c->slots = NULL;
    c->cap = c->n = 0;
    pthread_mutex_destroy(&c->lock);
}

/* Doubles the table; 0, or PPS_ENOMEM leaving it as it was. Under the lock. */
static int grow(struct pps__nvtx_names *c)
{
    size_t cap = c->cap * 2;
    struct pps__nvtx_name **slots = calloc(cap, sizeof(*slots));
    if (!slots)
        return PPS_ENOMEM;
    for (size_t i = 0; i < c->cap; i++) {
        struct pps__nvtx_name *e = c->slots[i];
        if (!e)
            continue;
        size_t k = (size_t)e->hash & (cap - 1);
        while (slots[k])
            k = (k + 1) & (cap - 1);
        slots[k] = e;
    }
    free(c->slots);
    c->slots = slots;
    c->cap = cap;
    return 0;
}

const struct pps__nvtx_name *pps__nvtx_names_get(struct pps__nvtx_names *c, const char *text,
                                                 size_t len)
{
    uint64_t h = pps_fnv1a(text, len);
    struct pps__nvtx_name *found = NULL;

    pthread_mutex_lock(&c->lock);
    size_t k = (size_t)h & (c->cap - 1);
    for (struct pps__nvtx_name *e; (e = c->slots[k]); k = (k + 1) & (c->cap - 1)) {
        if (e->hash == h && e->len == len && memcmp(e->text, text, len) == 0) {
            found = e;
            goto out;
        }
    }
    /* Keep one slot empty, so that the probe above always ends, even after a failed grow. */
    if (c->n >= c->max || c->n + 1 >= c->cap)
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
    c->slots[k] = found;
    c->n++;
    /* Grow after inserting, so that k above stayed valid; a failed grow only costs speed. */
    if (c->n * 2 > c->cap)
        grow(c);
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
