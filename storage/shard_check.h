/*
 * shard_check.h - SQLite's own check of a finished shard (PRAGMA integrity_check: every page's
 * structure, the order of keys, and every index entry against its row) on a connection and a
 * thread of its own, while the loader reads the same shard: on two cores it costs the load little,
 * on one it costs about half again (docs/schema.md has the figures).
 */
#ifndef PPS_SHARD_CHECK_H
#define PPS_SHARD_CHECK_H

#include "pps_error.h"

struct pps__shard_check;

/* Starts checking path; *out is NULL where no thread could be had (then finish checks at once). */
int pps__shard_check_start(const char *path, struct pps__shard_check **out, struct pps_err *err);

/* Waits for the check of path and frees c: 0, or PPS_EFORMAT "PATH: damaged (SQLite's check:
 * ...)", or the open's error. With c NULL, checks path here and now. */
int pps__shard_check_finish(const char *path, struct pps__shard_check *c, struct pps_err *err);

/* Stops waiting for c's result and frees it (after a failure elsewhere); safe on NULL. */
void pps__shard_check_abandon(struct pps__shard_check *c);

#endif
