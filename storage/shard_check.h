/*
 * shard_check.h - SQLite's own check of a finished shard, on a connection and a thread of its
 * own while the loader reads the same shard.
 *
 * What it checks is what PRAGMA integrity_check checks (every page's structure, the order of
 * keys, and every index entry against its row), split so that no part costs more than a scan:
 * PRAGMA quick_check for the structure of every page; integrity_check of the small tables with
 * an index (kinds); and the spans index against the table by tally, not by lookup. The check's
 * thread reads the index through, (stage, start_ns, rowid) of every entry, each in key order
 * after the one before (quick_check does not look at an index's order: two of its pages
 * swapped pass it), and the loader hands finish the same three of every row it read from the
 * table: equal counts and equal sums of a mix of the three (struct pps__index_tally) mean the
 * same entries, where integrity_check looks every row up in the index, a random read each, ten
 * times the cost of the scan on a run of ten million spans (docs/schema.md has the figures).
 */
#ifndef PPS_SHARD_CHECK_H
#define PPS_SHARD_CHECK_H

#include <stdint.h>

#include "pps_error.h"

struct pps__shard_check;

/* Rows counted and a sum (mod 2^64) of a mix of each row's (stage, start_ns, rowid): what the
 * spans index holds, from its entries or from the table's rows. n is -1 for a file without the
 * index (nothing to compare). */
struct pps__index_tally {
    int64_t n;
    uint64_t sum;
};

/* splitmix64's finaliser: every input bit moves about half the output bits. */
static inline uint64_t pps__mix64(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

/* Adds one row (or index entry) to t. */
static inline void pps__index_tally_add(struct pps__index_tally *t, int64_t stage, int64_t start_ns,
                                        int64_t rowid)
{
    uint64_t h = pps__mix64((uint64_t)rowid);

    h = pps__mix64(h ^ (uint64_t)start_ns);
    t->sum += pps__mix64(h ^ ((uint64_t)stage * 0x9e3779b97f4a7c15ULL));
    t->n++;
}

/* Starts checking path; *out is NULL where no thread could be had (then finish checks at once). */
int pps__shard_check_start(const char *path, struct pps__shard_check **out, struct pps_err *err);

/* Waits for the check of path and frees c: 0, or PPS_EFORMAT "PATH: damaged (SQLite's check:
 * ...)" or "PATH: damaged (the spans index does not match the table: ...)" where the index's
 * tally is not table's (every row of the spans table, as the loader read it), or the open's
 * error. With c NULL, checks path here and now. */
int pps__shard_check_finish(const char *path, struct pps__shard_check *c,
                            const struct pps__index_tally *table, struct pps_err *err);

/* Stops waiting for c's result and frees it (after a failure elsewhere); safe on NULL. */
void pps__shard_check_abandon(struct pps__shard_check *c);

#endif
