/*
 * names.h - the NVTX injection's cache of distinct range names. Each distinct name is looked at
 * once: the owner's fill callback matches it against the naming rules and interns it with the
 * tracer, and every later range with that name reuses the result. Entries never move and live
 * until the cache is released, so a pointer to one serves as an NVTX registered-string handle.
 */
#ifndef PPS_NVTX_NAMES_H
#define PPS_NVTX_NAMES_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "labels.h"

struct pps__nvtx_name {
    struct pps_label_op op; /* what the name says (labels.h); op.kind -1 when nothing */
    int rule;               /* enum pps_label_rule that took it */
    int32_t name_id;        /* the tracer's id for the name, -1 if none */
    uint64_t hash;
    size_t len;
    char text[]; /* the name, NUL-terminated */
};

/* Called once per new name, under the cache's lock, before anyone else can see the name. */
typedef void (*pps__nvtx_fill_fn)(void *ctx, struct pps__nvtx_name *name);

/* One generation of the table: open addressing, a power of two, at most half full. A grown
 * table replaces it; the old one is kept (readers may still be probing it) until release. */
struct pps__nvtx_name_table {
    size_t cap;
    struct pps__nvtx_name_table *older;
    struct pps__nvtx_name *_Atomic slots[];
};

/*
 * Lookups of a name already there take no lock: they probe the current table with acquire
 * loads. A new name is added under the lock (probed again there), its entry filled before it
 * is published with a release store, so a reader that finds it sees it whole.
 */
struct pps__nvtx_names {
    pthread_mutex_t lock;
    struct pps__nvtx_name_table *_Atomic table;
    size_t n;       /* under lock */
    size_t max;     /* distinct names kept; more are refused */
    size_t refused; /* lookups that got NULL (too many names, out of memory); under lock */
    pps__nvtx_fill_fn fill;
    void *ctx;
};

/* An empty cache of at most max names (>= 1); fill may be NULL. Returns 0 or PPS_ENOMEM. */
int pps__nvtx_names_init(struct pps__nvtx_names *c, size_t max, pps__nvtx_fill_fn fill, void *ctx);
/* Frees every name: pointers from _get are dangling afterwards. */
void pps__nvtx_names_release(struct pps__nvtx_names *c);

/*
 * The entry for text[0..len) (no NUL needed), made and filled on first sight. Thread-safe.
 * NULL when the cache already holds max names or memory ran out (counted in refused).
 */
const struct pps__nvtx_name *pps__nvtx_names_get(struct pps__nvtx_names *c, const char *text,
                                                 size_t len);

/* How many lookups were refused so far. */
size_t pps__nvtx_names_refused(struct pps__nvtx_names *c);

#endif
