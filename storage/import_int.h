/*
 * import_int.h - what the importers (import_nsys.c, import_kineto.c) share through import.c, and
 * no one outside storage/ sees: the output run that appears whole or not at all, a shard with the
 * importers' metadata, progress on stderr, the iteration a time is in, the rule that makes a
 * kernel communication, and an in-place sort.
 *
 * The output run: an importer writes every shard into a hidden directory beside the run it was
 * asked for, and renames it into place at the end, so a failed import (bad input, a full disk, a
 * crash) never leaves a half-written run under the user's name:
 *
 *   struct pps__import_out out;
 *   if ((rc = pps__import_out_begin(&out, o->out_dir, err)))       // checks out_dir, makes tmp
 *       return rc;
 *   ... pps__import_shard_open(&out, rank, world, "nsys", path, &w, err) for each rank ...
 *   ... pps__import_shard_close(w, err) each ...
 *   rc = pps__import_out_commit(&out, err);                         // rename tmp -> out_dir
 *   pps__import_out_release(&out);   // always: removes tmp and what is in it unless committed
 *
 * Names here are pps__ (module-internal). Nothing here includes sqlite3.h.
 */
#ifndef PPS_IMPORT_INT_H
#define PPS_IMPORT_INT_H

#include <stddef.h>
#include <stdint.h>

#include "import.h"
#include "progress.h"
#include "storage.h"

/* ---- the output run ----------------------------------------------------------------------- */

struct pps__import_out {
    char *dir; /* the run asked for (out_dir, as given) */
    char *tmp; /* where the shards are written: "<parent>/.<name>.import-XXXXXX" */
    int committed;
    char run_id[17]; /* meta run_id of every shard of this import (pps_run_id.h) */
};

/*
 * Checks that out_dir does not exist or is an empty directory (anything else is PPS_EINVAL,
 * "RUN: already exists and is not empty (ppscope never overwrites a run)"), creates its parent
 * directories if needed and a new empty temporary directory beside it, on the same file system,
 * so that commit is one rename. On failure nothing is left (but parents it created) and out is
 * released.
 */
int pps__import_out_begin(struct pps__import_out *out, const char *out_dir, struct pps_err *err);
/* Renames the temporary directory to out_dir (replacing it if it is still an empty directory).
 * A directory that someone filled meanwhile is PPS_EINVAL, and the import is not committed. */
int pps__import_out_commit(struct pps__import_out *out, struct pps_err *err);
/* Unless committed, removes the temporary directory and the files in it (shards and their -wal
 * and -shm); frees out's strings. Safe on a zeroed struct, and twice. */
void pps__import_out_release(struct pps__import_out *out);

/*
 * Opens rank's shard in out->tmp (pps_store_writer_open) and sets the meta every imported shard
 * carries: source (e.g. "nsys"), world, and file (the input path, as given). The caller closes
 * it with pps__import_shard_close(w, err) once its spans are written.
 */
int pps__import_shard_open(const struct pps__import_out *out, int rank, int world,
                           const char *source, const char *file, struct pps_store_writer **w,
                           struct pps_err *err);
/*
 * A shard opens without syncs or a journal (nothing reads it before the commit, and a failed
 * import removes it); pps__import_shard_close() puts it back in WAL mode, as every shard is, and
 * closes it complete (it frees w on error too). Close a shard that failed with
 * pps_store_writer_close(w, 0, NULL).
 */
int pps__import_shard_close(struct pps_store_writer *w, struct pps_err *err);

/* ---- progress ----------------------------------------------------------------------------- */

/*
 * Progress on stderr: nothing during the first second, then one line about once a second,
 * "ppscope import: FILE: 1234567 events (42%)" (the percentage only when total > 0). tick is
 * cheap: call it every few thousand events; it looks at the clock only every 4096th call.
 */
struct pps__import_progress {
    struct pps__progress when;
    const char *what; /* the file, for the line */
    unsigned calls;
};

void pps__import_progress_init(struct pps__import_progress *p, int on, const char *what);
void pps__import_progress_tick(struct pps__import_progress *p, int64_t done, int64_t total);
/* A last line ("... done") when any line was printed, so the count on screen is the final one. */
void pps__import_progress_done(struct pps__import_progress *p, int64_t done);
/* The same for the shards written, "ppscope import: RUN: 123456 of 999999 spans written": it
 * looks at the clock on every call (call it per batch of spans). */
void pps__import_progress_writing(struct pps__import_progress *p, int64_t written, int64_t total);

/* ---- detection (import_nsys.c) ----------------------------------------------------------- */

/* Whether path, an SQLite file, holds Nsight Systems' export tables: *is_nsys 1 or 0 (with the
 * reason in err: "an SQLite file without Nsight Systems' tables", "a ppscope trace already").
 * A file SQLite cannot read (corrupt, truncated, locked) is PPS_EFORMAT or PPS_EIO. */
int pps__nsys_probe(const char *path, int *is_nsys, struct pps_err *err);

/* ---- iterations --------------------------------------------------------------------------- */

/* A step range ("ProfilerStep#3", "pps:iter=3"): what starts in [start, end) is in iter. */
struct pps__import_iter {
    int64_t start, end; /* end INT64_MAX: until the next one starts */
    int32_t iter;
};

/* Orders step ranges by start (for pps__sort_inplace). */
int pps__import_iter_cmp(const void *a, const void *b);
/* The iteration at t of n step ranges sorted by start: the last one's to start at or before t,
 * if it still lasts; -1 before the first and between ranges. */
int32_t pps__import_iter_at(const struct pps__import_iter *v, size_t n, int64_t t);

/* ---- names -------------------------------------------------------------------------------- */

/* Whether s holds w anywhere, ignoring ASCII case: 1 or 0. */
int pps__import_has_word(const char *s, const char *w);
/*
 * The importers' one rule for kernels that communicate: NCCL's, a kernel whose name holds "nccl"
 * (in any case). Returns 1 for one, with *kind PPS_SPAN_SEND or PPS_SPAN_RECV where its name says
 * which ("send" or "recv", not both), else 0 (a collective, or a fused send-receive, which
 * schema v1 has no kind for); 0 for any other name, with *kind 0. What launched the kernel may
 * say better (an op's SEND or RECV): the importers look there first.
 */
int pps__import_kernel_is_comm(const char *name, int *kind);

/* ---- helpers ------------------------------------------------------------------------------ */

/*
 * Sorts n items of size bytes in place (heapsort): no memory beyond the array, unlike glibc's
 * qsort, whose merge sort allocates a copy of the array, which would double an importer's peak
 * for the arrays of spans it keeps. Not stable.
 */
void pps__sort_inplace(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *));

#endif
