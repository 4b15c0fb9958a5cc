/*
 * import_model.h - what an importer knows of a trace while it reads it, whatever the format: the
 * processes (one rank each), the spans kept for each, the iterations that step ranges mark, and
 * for each thread the pipeline ops it ran, so that a device span is attributed to the op open on
 * the thread that launched it. A parser feeds it events in one pass per table; the model keeps
 * only spans (56 bytes each; a pipeline op 16 more, a device span waiting for its launch 8 to
 * 24), never the events it drops.
 *
 *   struct pps__imodel m;
 *   pps__imodel_init(&m, "nsys");
 *   for each file:
 *       pps__imodel_file_begin(&m, &info, err);
 *       pps__imodel_host(&m, &ev, err) for each host event (ranges, marks, thread names);
 *       pps__imodel_host_done(&m, err);            // iterations of the host spans, op indexes
 *       pps__imodel_device(&m, &dev, err) for each kernel, copy and memset;
 *       pps__imodel_launch(&m, ...) for each runtime call (CUDA API) that may have launched one;
 *       pps__imodel_file_end(&m);                  // drops the op indexes
 *   pps__imodel_finish(&m, err);                   // ranks, clock offsets
 *   pps__imodel_write(&m, &out, stats, err);       // one shard per rank into out
 *   pps__imodel_release(&m);
 *
 * Keys: a process and a thread are each an int64 key of the parser's choosing, unique within a
 * file (nsys: globalTid >> 24 and globalTid); pid and tid are what meta shows.
 * Only storage/'s importers include this header.
 */
#ifndef PPS_IMPORT_MODEL_H
#define PPS_IMPORT_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "idmap.h"
#include "import_int.h"
#include "labels.h"
#include "pps_strtab.h"

/* pps__host_event.what */
enum {
    PPS__EV_RANGE = 0,       /* a range with a start and (has_end) an end */
    PPS__EV_MARK = 1,        /* an instant: a named range of length 0 */
    PPS__EV_THREAD_NAME = 2, /* the thread's name is text */
};

/* pps__device_event.kind */
enum {
    PPS__DEV_KERNEL = 0,
    PPS__DEV_MEMCPY = 1,
    PPS__DEV_MEMSET = 2, /* stored as MEMCPY spans named "memset" (schema v1 has no kind) */
};

struct pps__host_event {
    int what;
    int64_t start, end; /* ns on the file's clock */
    int has_end;        /* 0: a range that never ended (dropped) */
    int64_t proc, thread;
    int pid, tid;
    const char *text;  /* the name; NULL or "" is "(unnamed)" */
    int64_t string_id; /* >= 0: the file's id of the text, known to the model (text unused) */
    int64_t payload;   /* an integer payload (bytes of a SEND or RECV without bytes=) */
    int has_payload;
};

struct pps__device_event {
    int kind;
    int64_t start, end;
    int64_t bytes; /* copies and memsets */
    int64_t corr;  /* the launch's correlation id (pps__imodel_launch), 0 if none */
    const char *name;
    int64_t string_id; /* >= 0: the file's id of the name, known to the model (name unused) */
    int64_t proc;      /* has_proc 0: the file's process of unknown id */
    int pid;
    int has_proc;
};

/* What a file says of itself, for the meta of its ranks. Strings are copied. */
struct pps__file_info {
    const char *path;
    const char *host; /* the traced machine, "" if the file does not say */
    int has_utc;
    int64_t utc_ns; /* the wall-clock time of the file's time 0: aligns several files */
    struct {
        const char *key, *value; /* more meta (a NULL key ends the list; "" values skipped) */
    } meta[4];
};

/* ---- internals (the parsers only read events_total) ---- */

struct pps__im_name_info {
    struct pps_label_op op; /* what the name says; op.kind -1: not a pipeline op */
    int step;               /* the iteration of a step range ("ProfilerStep#3"), -1 */
    int nccl;               /* a kernel of NCCL's (pps__import_kernel_is_comm): 1, else 0 */
    int nccl_kind;          /* then PPS_SPAN_SEND or _RECV where the name says which, else 0 */
};

struct pps__im_op_ref {
    int64_t start;
    uint32_t span;  /* index in its process's spans */
    int32_t parent; /* the op that was open when this one started (index in the thread), -1 */
};

struct pps__im_thread {
    int64_t key;
    size_t proc;
    struct pps__im_op_ref *ops;
    size_t n_ops, cap_ops;
};

struct pps__im_tname {
    int tid;
    int32_t name;
};

struct pps__im_proc {
    size_t file;
    int64_t key;
    int pid;
    /* The current file's device spans that wait for their launch: indexes into spans, hashed
     * by their corr (open addressing, UINT32_MAX empty, at most half full). */
    uint32_t *launches;
    size_t cap_launches, n_launches;
    int launch_mix;         /* the hash mixes the ids' bits (a forged file made them collide) */
    struct pps_span *spans; /* stage -1: the rank's default stage; name_id: the model's ids */
    size_t n, cap;
    struct pps__import_iter *iters; /* the step ranges and marks */
    size_t n_iters, cap_iters;
    struct pps__im_tname *tnames;
    size_t n_tnames, cap_tnames;
    int min_stage; /* the lowest stage an op names, -1 */
    int mpi_rank;  /* a thread named "MPI Rank N": N; -1 none; -2 two different ones */
    int rank;
};

struct pps__im_file {
    char *path, *host;
    int has_utc;
    int64_t utc_ns;
    char *meta_key[4], *meta_value[4];
    int64_t offset_ns; /* set by finish: rank 0's file's clock minus this one's */
};

struct pps__imodel {
    const char *source;
    struct pps_label_patterns rules;
    struct pps_strtab names; /* every distinct name: ranges, kernels */
    struct pps__im_name_info *info;
    size_t cap_info;
    struct pps__im_proc *procs;
    size_t n_procs, cap_procs;
    struct pps__im_file *files;
    size_t n_files, cap_files;
    /* The current file's: */
    size_t first_proc;
    struct pps__im_thread *threads;
    size_t n_threads, cap_threads;
    struct pps__idmap proc_map, thread_map; /* keys -> indexes in procs, threads */
    struct pps__idmap string_map;           /* the file's string ids (nsys textId) -> name ids */
    int64_t skipped;      /* events dropped by the model (marks of ops, ranges that never ended) */
    int64_t events_total; /* the parsers' estimate of the events to read, for progress */
};

void pps__imodel_init(struct pps__imodel *m, const char *source);
void pps__imodel_release(struct pps__imodel *m);
int pps__imodel_file_begin(struct pps__imodel *m, const struct pps__file_info *info,
                           struct pps_err *err);
/* An event of the current file. A range ending before it starts is PPS_EFORMAT (the caller adds
 * where). */
int pps__imodel_host(struct pps__imodel *m, const struct pps__host_event *ev, struct pps_err *err);
/*
 * Moves into m what other (a model of its own, begun on the same file) read of the file, as if m
 * had read it after its own: for a table read in parts at once, each part into a model of its
 * own. Host events before pps__imodel_host_done(m); device events (device 1) after it, before
 * the launches. other is left without spans (release it).
 */
int pps__imodel_absorb(struct pps__imodel *m, struct pps__imodel *other, int device,
                       struct pps_err *err);
int pps__imodel_host_done(struct pps__imodel *m, struct pps_err *err);
int pps__imodel_device(struct pps__imodel *m, const struct pps__device_event *ev,
                       struct pps_err *err);
/*
 * A runtime call of the current file that launched the device spans of its process with
 * correlation id corr (after every device event of the file): the first call found for a span
 * attributes it to the op open on the calling thread at start, else dates its iteration from
 * the call. Calls that launched nothing kept return 0 and change nothing.
 */
void pps__imodel_launch(struct pps__imodel *m, int64_t proc, int64_t thread, int64_t start,
                        int64_t corr);
/* Whether any device span waits for its launch (the parser may skip the runtime calls). */
int pps__imodel_launches_pending(const struct pps__imodel *m);
void pps__imodel_file_end(struct pps__imodel *m);
/*
 * The file's string table (nsys's StringIds): the parser reads a string once, on the first event
 * that names it by id, and gives it here; later events give only the id (string_id), so that
 * neither the file nor the model looks at the text again. _known is 1 when id was added.
 */
int pps__imodel_string_known(const struct pps__imodel *m, int64_t id);
int pps__imodel_string_add(struct pps__imodel *m, int64_t id, const char *text,
                           struct pps_err *err);
/* Ranks (from "MPI Rank N" thread names when every process has its own, else in the order of the
 * files and of the pids in each) and the files' clock offsets. No process at all is PPS_EFORMAT. */
int pps__imodel_finish(struct pps__imodel *m, struct pps_err *err);
/* One shard per rank into out->tmp; st gets ranks, spans and skipped added; pr (may be NULL)
 * says how far it got, on the calling thread. */
int pps__imodel_write(struct pps__imodel *m, const struct pps__import_out *out,
                      struct pps__import_progress *pr, struct pps_import_stats *st,
                      struct pps_err *err);

#endif
