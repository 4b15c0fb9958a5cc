/*
 * idmap.c - the importers' int64 -> int32 map (idmap.h): open addressing, linear probing, the
 * table doubled before it is half full.
 */
#include "idmap.h"

#include <stdlib.h>
#include <string.h>

uint64_t pps__idmap_hash(int64_t key)
{
    uint64_t x = (uint64_t)key + 0x9E3779B97F4A7C15ULL; /* splitmix64 */
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
    return x ^ (x >> 31);
}

void pps__idmap_init(struct pps__idmap *m)
{
    memset(m, 0, sizeof(*m));
}

int32_t pps__idmap_get(const struct pps__idmap *m, int64_t key)
{
    if (!m->cap)
        return -1;
    for (size_t i = pps__idmap_hash(key) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
        if (m->vals[i] < 0)
            return -1;
        if (m->keys[i] == key)
            return m->vals[i];
    }
}

/* Twice the slots (64 at first), every entry hashed into them again; -1 when out of memory. */
static int grow(struct pps__idmap *m)
{
    size_t cap = m->cap ? m->cap * 2 : 64;
    int64_t *keys = malloc(cap * sizeof(*keys));
    int32_t *vals = malloc(cap * sizeof(*vals));

    if (!keys || !vals) {
        free(keys);
        free(vals);
        return -1;
    }
    for (size_t i = 0; i < cap; i++)
        vals[i] = -1;
    for (size_t j = 0; j < m->cap; j++) {
        if (m->vals[j] < 0)
            continue;
        size_t i = pps__idmap_hash(m->keys[j]) & (cap - 1);
        while (vals[i] >= 0)
            i = (i + 1) & (cap - 1);
        keys[i] = m->keys[j];
        vals[i] = m->vals[j];
    }
    free(m->keys);
    free(m->vals);
    m->keys = keys;
    m->vals = vals;
    m->cap = cap;
    return 0;
}

int pps__idmap_put(struct pps__idmap *m, int64_t key, int32_t val)
{
    size_t i;

    if ((m->n + 1) * 2 > m->cap && grow(m) != 0)
        return -1;
    for (i = pps__idmap_hash(key) & (m->cap - 1); m->vals[i] >= 0; i = (i + 1) & (m->cap - 1))
        if (m->keys[i] == key) {
            m->vals[i] = val;
            return 0;
        }
    m->keys[i] = key;
    m->vals[i] = val;
    m->n++;
    return 0;
}

void pps__idmap_release(struct pps__idmap *m)
{
    free(m->keys);
    free(m->vals);
    memset(m, 0, sizeof(*m));
}
