/*
 * idmap.h - the importers' map from an int64 key (a process, a thread, a string or correlation
 * id of the input) to an int32 index (into an array the caller keeps): open addressing with
 * linear probing, at most half full, so that a lookup is a probe or two. import_model.c and the
 * Kineto importer (kineto_*.c) both use it. Names here are pps__ (module-internal).
 *
 *   struct pps__idmap m;
 *   pps__idmap_init(&m);                   // or = {0}: a zeroed map is an empty one
 *   if (pps__idmap_put(&m, key, i) != 0)   // -1: out of memory, m unchanged
 *       ...
 *   int32_t i = pps__idmap_get(&m, key);   // -1: absent
 *   pps__idmap_release(&m);
 *
 * To visit every entry (in no particular order), walk the slots: i in [0, cap) with
 * vals[i] >= 0 holds keys[i] -> vals[i].
 */
#ifndef PPS_IDMAP_H
#define PPS_IDMAP_H

#include <stddef.h>
#include <stdint.h>

struct pps__idmap {
    int64_t *keys;
    int32_t *vals; /* -1: an empty slot */
    size_t cap;    /* slots: 0, or a power of two */
    size_t n;      /* entries */
};

/* An empty map (no memory until the first put). */
void pps__idmap_init(struct pps__idmap *m);
/* Sets key -> val, replacing an earlier value of key. val must be >= 0 (-1 marks an empty slot).
 * 0, or -1 when out of memory (the map is then as it was). */
int pps__idmap_put(struct pps__idmap *m, int64_t key, int32_t val);
/* The value of key, or -1 when it has none. */
int32_t pps__idmap_get(const struct pps__idmap *m, int64_t key);
/* Frees the slots; m is an empty map again. Safe twice. */
void pps__idmap_release(struct pps__idmap *m);

/* The map's hash of a key (splitmix64's finaliser: every bit of the key moves every bit of the
 * hash), for another table of int64 keys that must not cluster on keys a file chose. */
uint64_t pps__idmap_hash(int64_t key);

#endif
