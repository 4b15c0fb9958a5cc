/*
 * storage_int.h - what the storage/ files share with each other and with no one else: SQLite
 * error mapping, the schema, opening and checking a trace file, finding a run's shards.
 *
 * This is the one header that includes sqlite3.h; it is not installed and only the .c files of
 * storage/ include it. Names here are pps__ (module-internal).
 */
#ifndef PPS_STORAGE_INT_H
#define PPS_STORAGE_INT_H

#include <sqlite3.h>

#include "pps_grow.h"
#include "progress.h"
#include "storage.h"

/* A shard's file name inside a run directory, from its rank. */
#define PPS__SHARD_FMT "rank-%05d.db"

/* How long a connection waits on a lock (a checkpoint, WAL recovery) before giving up. */
#define PPS__BUSY_TIMEOUT_MS 5000

/*
 * Turns a failed SQLite result code into a PPS_E... code and a one-line reason naming path:
 * a file that is not a database or is corrupt is PPS_EFORMAT, out of memory PPS_ENOMEM, anything
 * else PPS_EIO ("path: what: sqlite's message"). what may be NULL. db may be NULL. Read the
 * message before making another call on db, which would replace it.
 */
int pps__sql_fail(sqlite3 *db, int rc, const char *path, const char *what, struct pps_err *err);

/* Runs SQL with no result rows; on failure, pps__sql_fail(db, rc, path, what, err). */
/* The rank of a shard's file name ("rank-00003.db": 3), or -1 for a name no reader lists. */
int pps__shard_name_rank(const char *name);
int pps__exec(sqlite3 *db, const char *sql, const char *path, const char *what,
              struct pps_err *err);

/*
 * Creates schema v1 in an empty database, in one transaction: the tables, the index, the kinds
 * rows, PRAGMA application_id and user_version. The caller set the journal mode before.
 */
int pps__schema_create(sqlite3 *db, const char *path, struct pps_err *err);

/*
 * Opens path read-only and checks that it is a ppscope trace this build can read: a regular,
 * non-empty SQLite file with ppscope's application_id, a schema version it knows and every table
 * of schema v1, and not shorter than its header says. Works on a shard that a writer holds open
 * (WAL), and one in a directory this user cannot write to: then it is opened immutable, and
 * *immutable (if not NULL) says so. On failure *out is NULL and err says why (see
 * pps_run_load() for the codes).
 */
int pps__trace_open(const char *path, sqlite3 **out, int *immutable, struct pps_err *err);

/*
 * "file:PATH?QUERY", PATH escaped for SQLite's URI parser; NULL when out of memory. Every file is
 * opened through one: SQLite builds that enable URIs by default (Debian's do) would otherwise
 * take a path such as "file:x/rank-00000.db" for the URI of another file.
 */
char *pps__file_uri(const char *path, const char *query);

/* A run directory's shards, sorted by rank. */
struct pps__shards {
    char **paths; /* "dir/rank-00000.db" */
    int *ranks;   /* the rank in each file name */
    size_t n;
};

/*
 * Lists the rank-*.db files of directory dir (not their -wal and -shm companions). No shard is
 * PPS_ENOENT ("dir: no ppscope shards (rank-*.db) in this directory"). Release with
 * pps__shards_release() whatever it returns.
 */
int pps__shards_list(const char *dir, struct pps__shards *shards, struct pps_err *err);
void pps__shards_release(struct pps__shards *shards);

/*
 * The ranks that the shards of one run directory hold (those with meta rows), one bit each. Two
 * shards that claim one rank (a shard copied under another name) would count it twice: the
 * loader and merge both refuse that, through pps__rank_claim().
 */
struct pps__rank_set {
    unsigned char bits[((size_t)INT16_MAX + 1) / 8];
};
/* Marks rank (0..INT16_MAX) as shard's; a rank marked already is PPS_EFORMAT ("shard: its rank
 * N is in another shard of this run too"). Start from a zeroed set. */
int pps__rank_claim(struct pps__rank_set *set, int rank, const char *shard, struct pps_err *err);

/* What pps_run_load() checks of path, in the memory of its meta and names alone: every row is
 * read and checked, and no span is kept (merge checks a run this way before it copies it).
 * progress (may be NULL) is told the spans read so far every 65536. 0, or pps_run_load()'s
 * error; *n_spans (may be NULL): the spans there are. */
int pps__run_check(const char *path, void (*progress)(void *ctx, int64_t spans), void *ctx,
                   struct pps_run_counts *counts, struct pps_err *err);

/* The run's shards are of one run (storage.h: pps_run_id_new()): refuses two runs side by side
 * and a rank beyond the run's world, reading run->meta (sorted by rank, key), run->path and
 * run->merged only. The loader, the follower and merge call it once a run's meta is known. */
int pps__run_identity_check(const struct pps_run *run, struct pps_err *err);
/* The same, where the shards are: "RUN: two runs in PLACE: ..." (the check above says "one
 * directory" or "one file"; gather, "these directories"). */
int pps__run_identity_check_in(const struct pps_run *run, const char *place, struct pps_err *err);

/* Whether a shard's writer, process pid_text (meta writer_pid) of writer_host (meta writer_host;
 * NULL: host, meta host), is gone: that host is this one and no such process runs (or it is a
 * zombie). 0 when it may run, or this host cannot tell (another host, no such keys). */
int pps__writer_gone(const char *host, const char *writer_host, const char *pid_text);

/* Frees n meta entries (their keys and values) and the array. */
void pps__meta_release(struct pps_meta_entry *meta, size_t n);

/* stat(2) with the one-line reason: "PATH: no such file or directory" is PPS_ENOENT. */
struct stat;
int pps__stat(const char *path, struct stat *st, struct pps_err *err);

/* mkdir -p: every missing component of dir, then dir must be a directory ("dir: not a
 * directory" is PPS_EINVAL; a component that cannot be created PPS_EIO, or PPS_EINVAL when a
 * file is in the way). The writer makes run directories with it, the importers their parents. */
int pps__make_dirs(const char *dir, struct pps_err *err);

/*
 * Runs sql (no result rows) on a writer's connection. For the importers, which write a shard in
 * bulk into a directory no one reads yet: PRAGMAs that drop the journal and the syncs (a crash
 * loses a shard the importer would remove anyway), and one transaction around many names.
 */
int pps__store_writer_exec(struct pps_store_writer *w, const char *sql, struct pps_err *err);

/* "dir/name" in a new string (no doubled slash), NULL when out of memory. */
char *pps__path_join(const char *dir, const char *name);

/* ---- rows.c and clock_model.c: what the full loader (reader.c) and the follower
 * (incremental.c) share ---- */

/* Strict decimal integer: the whole string, no overflow. 0 or -1. */
int pps__parse_i64(const char *s, int64_t *out);
/* sqlite3_prepare_v2 with the reader's reasons: a missing column is "not a ppscope trace". */
int pps__prepare(sqlite3 *db, const char *sql, const char *path, sqlite3_stmt **st,
                 struct pps_err *err);
/* The one integer a "SELECT count(*) ..." gives, into *n; an error names path. */
int pps__count_rows(sqlite3 *db, const char *path, const char *sql, int64_t *n,
                    struct pps_err *err);
/* The end of a sqlite3_step() loop: 0 when rc is SQLITE_DONE, else pps__sql_fail(db, rc, path,
 * "cannot read", err). */
int pps__step_done(sqlite3 *db, int rc, const char *path, struct pps_err *err);
/*
 * Column col of st's row as an integer in lo..hi. Anything but an INTEGER value (text, a blob,
 * NULL, a real: SQLite's untyped columns hold whatever was put there) or one out of range is
 * PPS_EFORMAT: "PATH: truncated or corrupted (WHERE: NAME is text, not an integer)", WHERE naming
 * the row ("spans row 12"), NAME the column.
 */
int pps__col_int(sqlite3_stmt *st, int col, int64_t lo, int64_t hi, const char *path,
                 const char *where, const char *name, int64_t *out, struct pps_err *err);
/* Column col as text (a TEXT value, never NULL), else PPS_EFORMAT as pps__col_int(). */
int pps__col_text(sqlite3_stmt *st, int col, const char *path, const char *where, const char *name,
                  const char **out, struct pps_err *err);
/* One row of "SELECT rank, key, value FROM meta", every column type- and range-checked. The
 * strings are SQLite's, valid until the next step. */
int pps__meta_row(sqlite3_stmt *st, const char *path, int *rank, const char **key,
                  const char **value, struct pps_err *err);
struct pps__span_bounds;
/* One row of "SELECT rank, id, name FROM names", checked as pps__meta_row(), its rank one the
 * file holds (b, as its spans'). */
int pps__name_row(sqlite3_stmt *st, const char *path, const struct pps__span_bounds *b, int *rank,
                  int32_t *id, const char **name, struct pps_err *err);
/* The kinds table of an open trace says what ours says (and reads whole: damage there is found
 * too); else PPS_EFORMAT naming path. Both readers run it once per file. */
int pps__kinds_check(sqlite3 *db, const char *path, struct pps_err *err);

/* A (rank, id) name of one file and its index in run->names. */
struct pps__name_ref {
    int rank;
    int32_t id;
    int32_t index;
};
/* Where (rank, id) is or would go in refs[0..n), sorted by (rank, id). */
size_t pps__name_ref_pos(const struct pps__name_ref *refs, size_t n, int rank, int32_t id);
/* The index in run->names of the file's name (rank, id), or -1 when refs lacks it. */
int32_t pps__name_ref_find(const struct pps__name_ref *refs, size_t n, int rank, int32_t id);

/* Appends a copy of one meta row to *meta (n items, capacity *cap); -1 when out of memory, with
 * the row counted in *n all the same, so that releasing n items frees what it holds. */
int pps__meta_push(struct pps_meta_entry **meta, size_t *n, size_t *cap, int rank, const char *key,
                   const char *value);

/* How a rank's host clock maps onto rank 0's (meta keys clock_offset_* and clock_sync_*). */
struct pps__clock {
    int rank;
    int complete;
    int has_offset;
    int linear;
    int64_t o0, o1; /* offsets at the two sync points */
    int64_t t0, t1; /* the sync points, on the rank's clock */
};

/* Records what one meta row (key, value) of ri's rank says about its clock and completeness;
 * have[] marks which clock keys were seen. A clock key that is not a number is PPS_EFORMAT. */
int pps__clock_note(struct pps__clock *ri, int have[4], const char *key, const char *value,
                    const char *path, struct pps_err *err);
/* The offset model from the keys present: linear between two sync points, else constant. */
void pps__clock_finish(struct pps__clock *ri, const int have[4]);
/* Finishes the clock of the last rank in *ranks (have[] from its rows), then appends a zeroed one
 * for rank and clears have[]: the meta rows of a new rank start. -1 when out of memory. */
int pps__clock_next(struct pps__clock **ranks, size_t *n, size_t *cap, int have[4], int rank);
/* t on rank 0's clock: t + offset(t). -1 if that leaves int64. */
int pps__clock_align(const struct pps__clock *ri, int64_t t, int64_t *out);
/* Moves a host-clock span's start and end onto rank 0's clock (nothing without an offset);
 * PPS_EFORMAT when a time leaves +-PPS__TIME_LIMIT. */
int pps__clock_align_span(const struct pps__clock *ri, struct pps_span *s, const char *path,
                          struct pps_err *err);

/* The columns pps__span_row() and pps__metric_row() read, in their order, from column 0; the
 * row's rowid follows them (column 13, column 8), to name the row in a message. */
#define PPS__SPAN_COLS                                                                             \
    "kind, stage, chunk, mb, iter, start_ns, end_ns, peer, bytes, name_id, clock, corr, rank"
/* The spans' one index: the reader's (stage, start_ns) order. The writer creates it with the
 * table; merge builds it once, after the rows (a sort of the table, as a bulk load does). */
#define PPS__SPANS_INDEX     "spans_stage_start"
#define PPS__SPANS_INDEX_SQL "CREATE INDEX " PPS__SPANS_INDEX " ON spans (stage, start_ns);"
#define PPS__METRIC_COLS     "rank, iter, stage, loss, grad_norm, act_bytes, pending_w, dropped"
/* The most a time may be from 0 either way, 2^62 - 1 ns (146 years): the difference of any two
 * such times fits int64, the extreme ones too. */
#define PPS__TIME_LIMIT (((int64_t)1 << 62) - 1)
/* The most microbatches meta m may say: the schedules' own limit (schedule.c MAX_M), so that
 * every figure made from m (p * v * m cells, m + p - 1) fits. */
#define PPS__MAX_M (1 << 20)
/* What a span of one file may hold beside the columns' own bounds, from the file's meta
 * (pps__file_meta_check()): stage and peer below its p, chunk below its v, mb below its m, rank
 * below its world, and in a shard of one rank that rank alone, iter below its iters. Each is the
 * column's own bound
 * where the file does not say. */
struct pps__span_bounds {
    int64_t stage_max, chunk_max, mb_max, peer_max, rank_min, rank_max, iter_max;
    int stage_is_rank; /* a `ppscope run` shard (meta source ppscope): each span's stage is its rank
                        */
    /* The longest span of the file's rows (meta span_max_ns, the largest over its ranks), known
     * when every rank of the file says it: no row lasts longer, and a window's reader looks
     * back by it (pps_run_load_window()). */
    int span_max_known;
    int64_t span_max_ns;
    /* Each spans column's range, in PPS__SPAN_COLS order: the schema's, narrowed by the above;
     * filled once per file, read for every row. */
    int64_t col_lo[13], col_hi[13];
};
/* One row into *s, every column range-checked (PPS_EFORMAT naming path otherwise): a start or
 * end beyond +-PPS__TIME_LIMIT, or an end more than that before its start, is corrupted. Times
 * are raw and name_id is the file's (rank, id) id: the caller aligns and maps them. */
int pps__span_row(sqlite3_stmt *st, const char *path, const struct pps__span_bounds *b,
                  struct pps_span *s, struct pps_err *err);
/* One file's meta rows: each p, m, v, iters and world (of any rank) a count in its bounds (p <=
 * 32768, m <= PPS__MAX_M, v <= 32767, world <= 32768), else PPS_EFORMAT naming path, the key and
 * the rank. *b: the bounds of the file's spans, by the values of its lowest rank that has each. */
int pps__file_meta_check(const struct pps_meta_entry *meta, size_t n, const char *path,
                         struct pps__span_bounds *b, struct pps_err *err);
/* ---- a time window's rows (window.c) ---- */

/* Whether an aligned span meets the window [t0, t1): it starts before t1 and ends after t0; an
 * instant (end == start), when t0 <= start < t1. */
int pps__span_in_window(const struct pps_span *s, int64_t t0, int64_t t1);
/* The raw starts [*lo, *hi) of every row of a file (its ranks' clocks ranks[0..n)) that may meet
 * the aligned window [t0, t1), span_max_ns the longest of its spans: 0, or -1 where a clock
 * drifts too far (more than 0.1 %) to take the window back to it (read the whole file then). */
int pps__window_raw_range(const struct pps__clock *ranks, size_t n, int64_t t0, int64_t t1,
                          int64_t span_max_ns, int64_t *lo, int64_t *hi);
/* Steps, stage by stage through the (stage, start_ns) index, every spans row (PPS__SPAN_COLS,
 * rowid) that starts in [lo, hi), handing each to row(); its error or SQLite's stops it. */
int pps__window_rows(sqlite3 *db, const char *path, int64_t lo, int64_t hi,
                     int (*row)(void *ctx, sqlite3_stmt *st, struct pps_err *err), void *ctx,
                     struct pps_err *err);

/* The entry of rank in ranks[0..n), sorted by rank, or NULL. */
const struct pps__clock *pps__clock_find(const struct pps__clock *ranks, size_t n, int rank);
struct pps__index_tally;
/* A spans row as the run holds it: pps__span_row(), then its name_id made the run's index
 * through refs (-1 when refs lacks it), and a host-clock span moved onto rank 0's clock by its
 * rank's entry in ranks (pps__clock_find(); *ri keeps the last one found, NULL at first). The
 * row as stored (stage, start_ns, rowid) goes into *tally where it is not NULL (shard_check.h). */
int pps__span_read(sqlite3_stmt *st, const char *path, const struct pps__span_bounds *b,
                   const struct pps__name_ref *refs, size_t n_refs, const struct pps__clock *ranks,
                   size_t n_ranks, const struct pps__clock **ri, struct pps_span *s,
                   struct pps__index_tally *tally, struct pps_err *err);
/* One metrics row into *m, checked as spans are (by b: its rank, iteration and stage), its counts
 * -1 (unknown) or more. */
int pps__metric_row(sqlite3_stmt *st, const char *path, const struct pps__span_bounds *b,
                    struct pps_metric *m, struct pps_err *err);

/* The orders of a loaded run: spans by start, end, then every field (ties the same whatever the
 * input); metrics by iteration, stage, rank; meta by rank, key. For qsort. */
int pps__span_cmp(const void *a, const void *b);
int pps__metric_cmp(const void *a, const void *b);
int pps__meta_cmp(const void *a, const void *b);
/* run->p, m, v and schedule from its (sorted) meta; a p, m or v that is not a count is
 * PPS_EFORMAT. */
int pps__run_meta_counts(struct pps_run *run, struct pps_err *err);
/* Frees what run holds but its path (schedule, meta, spans, metrics, names), leaving the fields
 * as they were: the caller frees run or clears them. */
void pps__run_free_data(struct pps_run *run);

#endif
