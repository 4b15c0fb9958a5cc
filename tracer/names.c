/*
 * names.c - the tracer's table of interned names. Ids are handed out 0, 1, 2, ... in the order
 * names are first seen, which is the order the flusher writes them through
 * pps_store_writer_name(), so the store gives each the same id (the flusher checks it does).
 */
#include <stdlib.h>
#include <string.h>

#include "tracer_core.h"

static uint64_t hash_name(const char *s)
{
    uint64_t h = 1469598103934665603ULL; /* FNV-1a */
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 1099511628211ULL;
    }
    return h;
}

/* The id of name, or -1 with *slot the empty slot where it belongs. n_slots must be > 0. */
static int32_t find(const struct pps_tracer *t, const char *name, size_t *slot)
{
    size_t mask = t->n_slots - 1;
    size_t i = (size_t)hash_name(name) & mask;

    while (t->slots[i] >= 0) {
        if (!strcmp(t->strs[t->slots[i]], name))
            return t->slots[i];
        i = (i + 1) & mask;
    }
    *slot = i;
    return -1;
}

/* Room for one more name: strs grows by doubling, slots stay at most half full. */
static int reserve(struct pps_tracer *t)
{
    if (t->n_strs == t->cap_strs) {
        size_t cap = t->cap_strs ? 2 * t->cap_strs : 64;
        char **strs = realloc(t->strs, cap * sizeof(*strs));
        if (!strs)
            return -1;
        t->strs = strs;
        t->cap_strs = cap;
    }
    if ((t->n_strs + 1) * 2 > t->n_slots) {
        size_t n = t->n_slots ? 2 * t->n_slots : 128;
        int32_t *slots = malloc(n * sizeof(*slots));
        if (!slots)
            return -1;
        for (size_t i = 0; i < n; i++)
            slots[i] = -1;
        for (size_t id = 0; id < t->n_strs; id++) {
            size_t i = (size_t)hash_name(t->strs[id]) & (n - 1);
            while (slots[i] >= 0)
                i = (i + 1) & (n - 1);
            slots[i] = (int32_t)id;
        }
        free(t->slots);
        t->slots = slots;
        t->n_slots = n;
    }
    return 0;
}

int32_t pps__name_intern(struct pps_tracer *t, const char *name)
{
    size_t slot = 0;
    int32_t id;
    char *copy;

    if (t->n_slots && (id = find(t, name, &slot)) >= 0)
        return id;
    if (t->n_strs >= INT32_MAX)
        return PPS_EINVAL;
    if (reserve(t) != 0 || !(copy = strdup(name)))
        return PPS_ENOMEM;
    find(t, name, &slot); /* the table may have grown: find the slot again */
    t->strs[t->n_strs] = copy;
    t->slots[slot] = (int32_t)t->n_strs;
    return (int32_t)t->n_strs++;
}

void pps__names_free(struct pps_tracer *t)
{
    for (size_t i = 0; i < t->n_strs; i++)
        free(t->strs[i]);
    free(t->strs);
    free(t->slots);
    t->strs = NULL;
    t->slots = NULL;
    t->n_strs = t->cap_strs = t->n_slots = 0;
}
