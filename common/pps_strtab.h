/*
 * pps_strtab.h - a table of interned strings: each distinct string gets an id, 0, 1, 2, ... in
 * the order it is first added, and looking one up costs a hash. The tracer interns span names in
 * one and the store's writer another, which must hand out the same ids for the same names.
 *
 * Header-only (static inline) because common/ is: nothing here needs a library of its own.
 *
 *   struct pps_strtab t = {0};            // an empty table; nothing to init
 *   int32_t id = pps_strtab_intern(&t, "gemm");   // >= 0, or PPS_ENOMEM / PPS_EINVAL
 *   pps_strtab_release(&t);               // frees the strings; t is empty again
 *
 * A caller that must do something between choosing an id and keeping the string (the writer
 * stores it first) uses find, reserve and add instead of intern.
 */
#ifndef PPS_STRTAB_H
#define PPS_STRTAB_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pps_error.h"
#include "pps_hash.h"

struct pps_strtab {
    /* strs[id] is the string of id, owned by the table. The strings never move: a pointer into
     * one stays valid until release, even when strs itself is reallocated. */
    char **strs;
    size_t n, cap;
    /* An open-addressing hash table of ids (-1 for an empty slot); n_slots is a power of two at
     * least twice n. */
    int32_t *slots;
    size_t n_slots;
};

static inline uint64_t pps__strtab_hash(const char *s)
{
    return pps_fnv1a_str(s);
}

/* The id of s, or -1 with *slot (if not NULL) the empty slot where it belongs. */
static inline int32_t pps__strtab_probe(const struct pps_strtab *t, const char *s, size_t *slot)
{
    size_t mask, i;

    if (!t->n_slots)
        return -1;
    mask = t->n_slots - 1;
    i = (size_t)pps__strtab_hash(s) & mask;
    while (t->slots[i] >= 0) {
        if (!strcmp(t->strs[t->slots[i]], s))
            return t->slots[i];
        i = (i + 1) & mask;
    }
    if (slot)
        *slot = i;
    return -1;
}

/* The id of s, or -1 when t does not hold it. */
static inline int32_t pps_strtab_find(const struct pps_strtab *t, const char *s)
{
    return pps__strtab_probe(t, s, NULL);
}

/*
 * Room for one more string, so that pps_strtab_add() cannot fail: 0, PPS_ENOMEM, or PPS_EINVAL
 * when t holds INT32_MAX strings already. strs grows by doubling, slots stay at most half full.
 */
static inline int pps_strtab_reserve(struct pps_strtab *t)
{
    if (t->n >= INT32_MAX)
        return PPS_EINVAL;
    if (t->n == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 64;
        char **strs = realloc(t->strs, cap * sizeof(*strs));
        if (!strs)
            return PPS_ENOMEM;
        t->strs = strs;
        t->cap = cap;
    }
    if ((t->n + 1) * 2 > t->n_slots) {
        size_t n = t->n_slots ? 2 * t->n_slots : 128;
        int32_t *slots = malloc(n * sizeof(*slots));
        if (!slots)
            return PPS_ENOMEM;
        for (size_t i = 0; i < n; i++)
            slots[i] = -1;
        for (size_t id = 0; id < t->n; id++) {
            size_t i = (size_t)pps__strtab_hash(t->strs[id]) & (n - 1);
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

/*
 * Adds copy, a heap string that t does not hold yet, after a successful pps_strtab_reserve();
 * t owns it from now on. Returns its id, which is the n before the call.
 */
static inline int32_t pps_strtab_add(struct pps_strtab *t, char *copy)
{
    size_t mask = t->n_slots - 1, i = (size_t)pps__strtab_hash(copy) & mask;

    /* t does not hold copy, so its slot is the first empty one on its probe path: no string
     * needs comparing (reserve made room, so there is one). */
    while (t->slots[i] >= 0)
        i = (i + 1) & mask;
    t->strs[t->n] = copy;
    t->slots[i] = (int32_t)t->n;
    return (int32_t)t->n++;
}

/* The id of s, added (as a copy) if t does not hold it yet: >= 0, or PPS_ENOMEM / PPS_EINVAL. */
static inline int32_t pps_strtab_intern(struct pps_strtab *t, const char *s)
{
    int32_t id = pps_strtab_find(t, s);
    char *copy;
    int rc;

    if (id >= 0)
        return id;
    if ((rc = pps_strtab_reserve(t)) != 0)
        return rc;
    if (!(copy = strdup(s)))
        return PPS_ENOMEM;
    return pps_strtab_add(t, copy);
}

/* Frees every string and the table; t is empty again (all zero). */
static inline void pps_strtab_release(struct pps_strtab *t)
{
    for (size_t i = 0; i < t->n; i++)
        free(t->strs[i]);
    free(t->strs);
    free(t->slots);
    memset(t, 0, sizeof(*t));
}

#endif
