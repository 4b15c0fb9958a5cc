/*
 * storage.h - the trace store: ppscope's SQLite schema, the shard writer, the run reader, merge.
 *
 * A run is a directory holding one SQLite shard per rank, "rank-00000.db", "rank-00001.db", ...
 * in WAL mode, so a viewer reads while the rank writes. `ppscope merge` makes one portable file
 * of the same schema; the reader accepts either. The schema is documented in docs/schema.md;
 * PRAGMA application_id marks a ppscope file and PRAGMA user_version is the schema version.
 * Only this module includes sqlite3.h.
 *
 * Times are nanoseconds on the writing rank's monotonic clock. The reader maps them onto rank 0's
 * clock with the offsets the rank stored (meta keys clock_offset_*), interpolated linearly.
 *
 * Threads: a writer, like a loaded run, belongs to one thread at a time (its SQLite connection
 * runs without a mutex, for speed). Any number of writers and readers, in any processes, may work
 * on one run at once.
 */
#ifndef PPS_STORAGE_H
#define PPS_STORAGE_H

#include <stddef.h>
#include <stdint.h>

#include "pps_error.h"

#define PPS_SCHEMA_VERSION 1
#define PPS_APPLICATION_ID 0x50505331 /* "PPS1" */

enum pps_span_kind {
    PPS_SPAN_F = 1,    /* forward */
    PPS_SPAN_B = 2,    /* backward, input gradient */
    PPS_SPAN_W = 3,    /* backward, weight gradient */
    PPS_SPAN_BW = 4,   /* backward, fused */
    PPS_SPAN_SEND = 5, /* p2p send (peer, bytes) */
    PPS_SPAN_RECV = 6, /* p2p receive (peer, bytes) */
    PPS_SPAN_WAIT = 7, /* blocked waiting for data (peer) */
    PPS_SPAN_OPT = 8,  /* optimizer step */
    PPS_SPAN_ROLLBACK = 9,
    PPS_SPAN_KERNEL = 10, /* device kernel (name_id, corr) */
    PPS_SPAN_MEMCPY = 11, /* device copy (bytes, corr) */
    PPS_SPAN_RANGE = 12,  /* a named range that is not a pipeline op (name_id) */
    PPS_SPAN_KIND_COUNT = 13,
};

enum pps_clock {
    PPS_CLOCK_HOST = 0,
    PPS_CLOCK_DEVICE = 1,
};

/* "F", "B", "W", "BW", "SEND", "RECV", "WAIT", "OPT", "ROLLBACK", "KERNEL", "MEMCPY", "RANGE";
 * "?" for a kind out of range. parse returns -1 for an unknown name. */
const char *pps_span_kind_name(int kind);
int pps_span_kind_parse(const char *name);
/* F, B, W, BW and OPT: the work that makes a stage busy. */
int pps_span_kind_is_compute(int kind);

struct pps_span {
    int64_t start_ns, end_ns;
    int64_t bytes;   /* SEND, RECV, MEMCPY; 0 otherwise */
    int64_t corr;    /* correlation between a device span and its host op; 0 for none */
    int32_t iter;    /* iteration, -1 if unknown */
    int32_t mb;      /* microbatch, -1 if none */
    int32_t peer;    /* peer stage for SEND/RECV/WAIT, -1 otherwise */
    int32_t name_id; /* KERNEL/RANGE: id from pps_store_writer_name(), -1 otherwise; after
                        pps_run_load() an index into run->names */
    int16_t stage;
    int16_t chunk;
    uint8_t kind;  /* enum pps_span_kind */
    uint8_t clock; /* enum pps_clock */
    int16_t rank;  /* set by the reader; the writer stores its own rank */
};

/* Per-iteration figures of one stage. NaN for an unknown double, -1 for an unknown integer. */
struct pps_metric {
    int32_t iter;
    int32_t stage;
    double loss;
    double grad_norm;
    int64_t act_bytes; /* peak activation bytes in the iteration */
    int64_t pending_w; /* peak pending W count */
    int64_t dropped;   /* spans the tracer dropped in the iteration */
    int16_t rank;      /* set by the reader */
};

/* ------------------------------------------------------------------------------------------- */
/* Writer: one per rank                                                                        */
/* ------------------------------------------------------------------------------------------- */

struct pps_store_writer;

/*
 * Creates run_dir (and parents) if needed and a new shard for rank (0..32767) in it, WAL mode,
 * schema v1, with meta rank, complete=0, created_unix, ppscope_version and host already set.
 * Fails with PPS_EINVAL if that rank's shard already exists (a run is never overwritten), naming
 * the file. On failure *out is NULL and no shard is left behind.
 */
int pps_store_writer_open(const char *run_dir, int rank, struct pps_store_writer **out,
                          struct pps_err *err);
/* Sets a run metadata key (replacing an earlier value). Keys: see docs/schema.md. */
int pps_store_writer_meta(struct pps_store_writer *w, const char *key, const char *value,
                          struct pps_err *err);
int pps_store_writer_meta_int(struct pps_store_writer *w, const char *key, int64_t value,
                              struct pps_err *err);
/* Interns a name (kernel, NVTX range) and returns its id for pps_span.name_id: the same name gets
 * the same id; ids are 0, 1, 2, ... per shard. A new name is written at once. */
int pps_store_writer_name(struct pps_store_writer *w, const char *name, int32_t *id,
                          struct pps_err *err);
/*
 * Appends n spans (or metrics) in one transaction through prepared statements: all of the batch or
 * none of it. span.rank is ignored (the shard's rank is stored). A span with a kind out of range,
 * a negative stage or an unknown clock fails the whole batch with PPS_EINVAL before anything is
 * written. NaN in a metric is stored as NULL and read back as NaN. n == 0 does nothing.
 */
int pps_store_writer_spans(struct pps_store_writer *w, const struct pps_span *spans, size_t n,
                           struct pps_err *err);
int pps_store_writer_metrics(struct pps_store_writer *w, const struct pps_metric *metrics, size_t n,
                             struct pps_err *err);
/*
 * Closes the shard. complete != 0 records meta complete=1: a shard without it (the rank died)
 * still opens, and readers say the run is incomplete. pps_store_writer_close(NULL, ...) is a
 * no-op. Frees w even on error.
 */
int pps_store_writer_close(struct pps_store_writer *w, int complete, struct pps_err *err);

/* ------------------------------------------------------------------------------------------- */
/* Reader                                                                                      */
/* ------------------------------------------------------------------------------------------- */

struct pps_meta_entry {
    int rank;
    char *key;
    char *value;
};

struct pps_stage_spans {
    struct pps_span *spans; /* sorted by start_ns, then end_ns */
    size_t n;
};

struct pps_run {
    char *path;   /* as given */
    int merged;   /* 1: a merged file (or any one file), 0: a run directory */
    int n_shards; /* shards read; for one file, the ranks in it */
    int complete; /* 1 when every shard was closed complete */

    /* From rank 0's metadata (or the first rank's); 0 / NULL where absent. */
    char *schedule;
    int p, m, v;

    struct pps_meta_entry *meta;
    size_t n_meta;

    int n_stages; /* max(p, highest stage seen + 1) */
    struct pps_stage_spans *stages;
    size_t n_spans;
    int n_iters;          /* highest iteration of a span + 1; 0 without spans */
    int64_t t_min, t_max; /* over all spans, after clock alignment; 0 without spans */

    struct pps_metric *metrics; /* sorted by iter, then stage, then rank */
    size_t n_metrics;

    char **names; /* every shard's names; spans' name_id index this after loading */
    size_t n_names;

    /* Iterations below first_iter are not in memory: a view that keeps the newest spans dropped
     * them (pps_run_drop_before()), and n_dropped spans with them. 0 for a run read whole. */
    int first_iter;
    size_t n_dropped;
    /* Iterations at end_iter and after are not in memory either (pps_run_drop_from(): a view
     * paged back to older iterations); 0 for none. */
    int end_iter;

    /* What the files held when read: a hash of every shard's highest span, metric and name row
     * and of the whole metadata. Rows are only appended, so any change to what a reader sees
     * changes it (a summary of the run is valid for one stamp: storage/summary.c). */
    uint64_t stamp;
};

/*
 * Drops from memory the iterations of run below iter: spans labelled with them, metrics rows of
 * them, and spans without an iteration that end before iter's first compute span starts (an
 * instant: that start before it). What is left keeps its order; n_spans, t_min, t_max say what
 * is left, first_iter becomes iter and n_dropped counts what went. No-op for iter below
 * first_iter, or 0 and below; at first_iter it drops again what has come in below it since (a
 * shard read behind the others). For a view of a long run (ppscope view --max-spans): the analysis
 * of what is left is of iterations iter and on, and does not take the dropped ones for missing.
 */
void pps_run_drop_before(struct pps_run *run, int iter);
/*
 * Drops from memory the iterations of run at iter and after, as pps_run_drop_before() drops
 * those before: spans labelled with them, their metrics rows, and spans without an iteration
 * that start after the last end of a compute span labelled before iter (an instant: after or at
 * it). end_iter becomes iter. No-op for iter <= first_iter (it would leave nothing).
 */
void pps_run_drop_from(struct pps_run *run, int iter);
/* The iteration to keep from: the lowest of the newest whole iterations whose labelled spans
 * number at most keep (the newest one at least), or run->first_iter when the run holds at most
 * keep spans in all; -1 out of memory. It depends on the newest iterations alone. */
int pps_run_keep_iter(const struct pps_run *run, size_t keep);

/*
 * Loads a run: a directory of shards or a merged file (or a single shard file: merged = 1 and
 * n_shards = the ranks in it). Shards are opened read-only, each read in one snapshot, also while
 * a rank is writing it. Host-clock spans of a rank whose meta has clock_offset_start_ns (and
 * optionally clock_offset_end_ns, clock_sync_start_ns, clock_sync_end_ns) are moved onto rank 0's
 * clock: t + offset(t), offset linear through the two sync points (extrapolated beyond them),
 * constant with one offset; device-clock spans are left as written. Every loaded span has a known
 * kind (1 .. PPS_SPAN_KIND_COUNT - 1), a clock of enum pps_clock and a stage below n_stages, so
 * arrays indexed by them are safe; a file with others is PPS_EFORMAT. Every time, raw and
 * aligned, is within +-2^62 ns, so the difference of any two fits int64.
 *
 * Bad input gets a one-line reason naming the file: missing (PPS_ENOENT), an empty directory
 * (PPS_ENOENT), not a ppscope trace or truncated/corrupted, meta p/m/v that is not a count, or
 * two shards of a directory holding one rank (PPS_EFORMAT), a newer schema (PPS_EVERSION).
 * Never crashes on bad files. On failure *out is NULL.
 */
int pps_run_load(const char *path, struct pps_run **out, struct pps_err *err);

/*
 * The part of a run that meets the time window [t0, t1) on rank 0's clock (ns, as the loaded
 * spans' times): every span that starts before t1 and ends after t0 (an instant: t0 <= start <
 * t1), with the run's meta, names and metrics whole. The spans are exactly those of
 * pps_run_load() that meet the window, in the same order, read through the spans' (stage,
 * start_ns) index: the cost is the window's rows, not the run's. n_spans, t_min, t_max and
 * n_iters are the window's, and n_stages is the run's p, else the stages of the window's spans.
 * Each row read is checked as pps_run_load() checks it; rows the window does not read are not:
 * SQLite's check of a whole finished shard is not made (it reads every page), and damage that
 * moves a row's start away from the window, or makes it longer than the file says any span is,
 * hides it. A file without meta span_max_ns (written before it), or with a clock that drifts
 * more than 0.1 % against rank 0's, is read whole and filtered. PPS_EINVAL when t1 <= t0;
 * otherwise pps_run_load()'s errors.
 */
int pps_run_load_window(const char *path, int64_t t0, int64_t t1, struct pps_run **out,
                        struct pps_err *err);

/*
 * The run without its spans: meta, names and metrics whole, the stamp, n_shards, complete, p, m,
 * v and schedule as pps_run_load() gives them; n_spans 0 and n_stages the run's p (0 without
 * it). Reads no span row: its cost does not grow with the spans. pps_run_load()'s errors,
 * except those only a span row can cause.
 */
int pps_run_load_meta(const char *path, struct pps_run **out, struct pps_err *err);

/*
 * A summary of the run at path: bytes a reader made from it (analysis/summary.c), kept under
 * name for one stamp of the run (pps_run.stamp), beside its files: ppscope.summary in a run
 * directory, FILE.summary beside one file (docs/schema.md). get: 1 with *data (malloc'd, *len
 * bytes) where a summary of that name and stamp is kept, 0 where none is (no file, another
 * stamp), PPS_EFORMAT for a file that is not a summary or is damaged. put replaces the one kept
 * under name; it never writes into a file that is not a ppscope summary (PPS_EFORMAT), and
 * fails as SQLite does on a run where it cannot write (a read-only directory).
 */
int pps_run_summary_get(const char *path, const char *name, uint64_t stamp, void **data,
                        size_t *len, struct pps_err *err);
int pps_run_summary_put(const char *path, const char *name, uint64_t stamp, const void *data,
                        size_t len, struct pps_err *err);

/* What a run holds, counted as pps_run_load() reads it, in memory that does not grow with the
 * run: every row is read and checked as the loader does, and none is kept. */
struct pps_run_counts {
    int64_t spans, metrics;
    int shards; /* as pps_run.n_shards */
};
/* pps_run_load()'s checks and errors; *out is set on success. */
int pps_run_count(const char *path, struct pps_run_counts *out, struct pps_err *err);
/* Frees every pointer in run, each on its own (stages[i].spans, meta keys and values, names[i]),
 * so a run built by hand with malloc, as tests do, is freed by it too. NULL is a no-op. */
void pps_run_free(struct pps_run *run);
/* Rank 0's value of key (or the lowest rank that has it); NULL if none. */
const char *pps_run_meta(const struct pps_run *run, const char *key);
/* Where the run came from, in words, from its meta source: "ppscope run", "ppscope sim", "NVTX
 * injection", "the tracer API", "Nsight Systems", "the PyTorch profiler"; "another tool" for a
 * source this ppscope does not know, "unknown" without one. */
const char *pps_run_source(const struct pps_run *run);
/* The name of a span with a name_id, or NULL. */
const char *pps_run_span_name(const struct pps_run *run, const struct pps_span *span);

/*
 * Which shards make one run. Every shard of a run written by this ppscope carries one run id
 * (meta run_id, common/pps_run_id.h: the runtime, `sim --trace` and the importers write it;
 * merge keeps it). Loading refuses shards of two runs side by side, those whose run id, source,
 * backend, schedule, p, m, v, world or iters differ (where both have the key), and a rank at or
 * beyond the run's world:
 * PPS_EFORMAT, "RUN: two runs in one directory: rank-00000.db is 1f1b p=4 m=4 (ppscope, run
 * ...), rank-00002.db is gpipe p=4 m=4 (...) (their schedule differs)". Runs without a run id
 * are compared by the other keys, as before.
 */
/* The ranks of the run's world (meta world) that no shard holds, ascending: the first max into
 * ranks (may be NULL); returns how many there are. 0 for a run without world. */
int pps_run_missing_ranks(const struct pps_run *run, int *ranks, int max);
/* The missing ranks as text, "1, 2" (the first 8, then ", ... (N in all)"), into buf; returns
 * how many are missing (0: buf is ""). */
int pps_run_missing_text(const struct pps_run *run, char *buf, size_t len);
/* 1 when the run is incomplete and no rank that has not closed its shard has a writer left: each
 * says (meta host, writer_pid) it was written on this host by a process that no longer exists
 * (a killed run). 0 when one may still be written, or a rank cannot tell (another host, a shard
 * of an older ppscope): the view's header says [NO WRITER] instead of [LIVE] for the first. */
int pps_run_writers_gone(const struct pps_run *run);
/* 1 when nothing more will be written to the run: complete, or its writers gone. */
int pps_run_finished(const struct pps_run *run);

/*
 * Merges a run directory into one file (which must not exist: PPS_EINVAL) in rollback-journal
 * mode, holding every shard's rows unchanged: ranks, raw times and the clock offsets, so that
 * pps_run_load() of the file gives the same run as of the directory. Every shard is checked
 * first; bad input fails as pps_run_load() does, and no output is left behind on any failure.
 * A shard being written contributes what it had committed.
 */
int pps_run_merge(const char *run_dir, const char *out_file, struct pps_err *err);
/* The same, with progress on stderr when progress != 0: from the first second on, about once a
 * second, the spans checked, then those copied of all. */
int pps_run_merge_progress(const char *run_dir, const char *out_file, int progress,
                           struct pps_err *err);

/* ------------------------------------------------------------------------------------------- */
/* Gathering a run written on several hosts                                                    */
/* ------------------------------------------------------------------------------------------- */

/*
 * A job whose ranks run on several hosts writes its shards where each host can keep a WAL
 * database (storage local to it: SQLite's WAL mode does not work across hosts); a gather copies
 * those directories' shards into one run directory as they are written, for the viewer, report
 * and merge to read as one run (docs/cluster.md). Each step copies what the sources' writers
 * committed since the last one, every row checked as pps_run_load() checks it and written
 * unchanged (ranks, raw times, clock offsets); a source shard closed complete, once copied to
 * its end, has its copy closed complete; one whose writer is gone (meta host is this host and
 * its writer_pid no longer exists) keeps what was copied, incomplete. Sources are only read.
 */
struct pps_gather;

struct pps_gather_stats {
    int shards;             /* source shards found so far */
    int complete;           /* copied to the end of a shard closed complete */
    int gone;               /* copied to the end of a shard whose writer is gone */
    int64_t spans, metrics; /* rows copied */
    int world;              /* the job's ranks, from the shards' meta world; 0 when unknown */
    int unseen;             /* sources that do not exist yet */
};

/* Starts gathering the n_srcs run directories srcs into dest, which must not exist (it is
 * created; PPS_EINVAL naming it otherwise). A source that is not a directory is PPS_EINVAL; one
 * that does not exist yet, or holds no shard yet, is waited for (its ranks may not have
 * started). Nothing is copied yet. *out NULL on failure. */
int pps_gather_open(const char *const *srcs, int n_srcs, const char *dest, struct pps_gather **out,
                    struct pps_err *err);
/*
 * One step: new shards found, new rows copied. Returns 1 while there is more to come: a shard
 * still being written, a source not there yet, fewer shards than the job's world; 0 once every
 * shard is closed complete or its writer is gone (only a writer on this host can be seen gone)
 * and all of it is copied; or a negative PPS_E... as pps_run_load() for a bad shard (two runs'
 * shards, two sources holding one rank, a damaged row; PPS_EINVAL for a source that is the
 * destination or is named twice) or PPS_EIO for the destination. What was copied before an
 * error stays. *stats (may be NULL) says where it stands.
 */
int pps_gather_step(struct pps_gather *g, struct pps_gather_stats *stats, struct pps_err *err);
/* Makes the step in progress (or the next) end at its next batch, leaving the rest uncopied:
 * async-signal-safe, for a SIGINT handler. */
void pps_gather_stop(struct pps_gather *g);
/* Closes every copy not finished, incomplete (what was copied stays), and frees g; dest is
 * removed when nothing was copied into it. NULL: no-op. */
void pps_gather_free(struct pps_gather *g);

/* ------------------------------------------------------------------------------------------- */
/* Following a run as it is written                                                            */
/* ------------------------------------------------------------------------------------------- */

/*
 * A follower reads a run (directory or one file) a little at a time: each fetch reads only the
 * rows committed since the last one (spans and metrics after the last rowid read; meta and names
 * again, which are small), and apply appends them to a run that this follower alone fills. The
 * run is then what pps_run_load() gives of the same rows: spans per stage on rank 0's clock and
 * sorted (a span that starts before a stage's last one is merged in), metrics sorted, meta,
 * p/m/v/schedule, n_stages, n_iters, t_min/t_max, complete and n_shards; only the order of
 * run->names may differ (spans' name_id index it all the same). Shards that appear later are
 * picked up. Each file keeps one read-only connection, inside a read transaction only while a
 * fetch reads it: the writer is never blocked. When a rank's clock offsets change after its
 * spans were read (clock_offset_end_ns is written at the end), the next fetch reads every file
 * again and the next apply rebuilds the run (it returns 1).
 *
 * fetch does the reading (the slow half) and apply the copying: a viewer may fetch on a thread of
 * its own and apply on the thread that owns the run, as long as the two never run at once on one
 * follower. The checks are those of pps_run_load() for each row; the whole-file checks it makes
 * (index against table) are not repeated.
 */
struct pps_run_follow;

/* Starts following path (nothing is read yet). Bad paths fail as pps_run_load(); *out is NULL
 * then. */
int pps_run_follow_open(const char *path, struct pps_run_follow **out, struct pps_err *err);
/* Closes the connections and frees what was fetched and not applied. NULL is a no-op. */
void pps_run_follow_free(struct pps_run_follow *f);
/*
 * Reads the new rows into f: at most about max_rows spans (shared among the files; 0: all).
 * Returns 1 when it stopped at max_rows (more may be there), 0 when it read everything there
 * was, or a negative PPS_E... as pps_run_load() (what was fetched before stays). *n_fetched (may
 * be NULL) is the number of spans read.
 */
int pps_run_follow_fetch(struct pps_run_follow *f, size_t max_rows, size_t *n_fetched,
                         struct pps_err *err);
/*
 * Moves what was fetched into *run, creating it when *run is NULL (free it with pps_run_free(),
 * after or before the follower). Returns 0 when every span already in the run kept its position
 * within its stage (the new ones went to the ends), 1 when spans moved (a merge, or a rebuild),
 * or a negative PPS_E... (PPS_ENOMEM; a bad meta p/m/v is PPS_EFORMAT). *n_new (may be NULL):
 * spans added.
 */
int pps_run_follow_apply(struct pps_run_follow *f, struct pps_run **run, size_t *n_new,
                         struct pps_err *err);
/* fetch everything new, then apply: returns what apply returns. */
int pps_run_follow_poll(struct pps_run_follow *f, struct pps_run **run, size_t *n_new,
                        struct pps_err *err);
/* Spans read so far, and the spans the files held at the last fetch (for "loading... N%"). */
void pps_run_follow_progress(const struct pps_run_follow *f, int64_t *read, int64_t *total);

#endif
