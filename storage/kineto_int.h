/*
 * kineto_int.h - what the Kineto importer's two halves share: import_kineto.c turns each event
 * into a record as it streams by, kineto_link.c links the records when the file has ended (ops
 * to their communication, kernels to their launches, spans to their iterations, PyTorch's
 * virtual stages to ranks and chunks) and makes the spans the shard gets.
 *
 * A record is 64 bytes: with the names and the maps, an import holds under 100 bytes per span it
 * keeps, whatever the size of the file. Names here are pps__ (module-internal).
 */
#ifndef PPS_KINETO_INT_H
#define PPS_KINETO_INT_H

#include <stddef.h>
#include <stdint.h>

#include "idmap.h"
#include "import_int.h"
#include "kineto_json.h"
#include "labels.h"
#include "pps_strtab.h"
#include "storage.h"

/* What a name is (struct pps__kname.cls). */
enum {
    PPS__KN_RANGE = 0, /* nothing but a name */
    PPS__KN_OP,        /* a pipeline op of a multi-stage label ("PP:1F3", "pps:F stage=1") */
    PPS__KN_SINGLE,    /* "Forward 3", "Backward 3": a single-stage schedule's op */
    PPS__KN_OPT,       /* "Optimizer.step#SGD.step" */
    PPS__KN_STEP,      /* "ProfilerStep#7", "pps:iter=7": an iteration */
    PPS__KN_COMM_SEND, /* "gloo:send", "nccl:send": the send's work, from post to completion */
    PPS__KN_COMM_RECV,
    PPS__KN_C10D, /* c10d::send, c10d::recv_: the call, whose arguments name the peer */
    PPS__KN_NCCL, /* an NCCL kernel */
};

struct pps__kname {
    struct pps_label_op op;
    int step; /* PPS__KN_STEP: the iteration */
    int cls;
    int nccl_kind; /* PPS__KN_NCCL: SEND or RECV where the name says which, else 0 */
};

/* What a record does in the linking (struct pps__krec.role). */
enum {
    PPS__KR_NONE = 0,
    PPS__KR_OP,     /* a labelled op: F, B, W, BW, SEND, RECV, OPT */
    PPS__KR_SINGLE, /* a single-stage schedule's F or BW */
    PPS__KR_COMM,   /* a gloo/NCCL work range: merged into its op, or a SEND/RECV of its own */
    PPS__KR_C10D,   /* a c10d send/recv call (peer: the rank its arguments name) */
    PPS__KR_LAUNCH, /* a runtime call with a correlation id */
    PPS__KR_DEVICE, /* a kernel, copy or memset */
    PPS__KR_STEP_PENDING, /* a step's "B" whose "E" has not come */
};

#define PPS__KF_PEER_RANK 0x01 /* peer is a rank, not a virtual stage */

struct pps__krec {
    int64_t start, end; /* ns since the trace's base */
    int64_t corr;       /* correlation id (launches, device spans), 0 */
    int64_t bytes;
    int32_t name; /* the file's name id */
    int32_t thread;
    int32_t mb, peer, iter; /* -1: none */
    int16_t vstage;         /* PyTorch's virtual stage from the label, -1 */
    uint8_t kind;           /* enum pps_span_kind; 0: dropped */
    uint8_t role;
    uint8_t flags;
};

struct pps__kopen {
    int32_t thread;
    uint32_t rec;
};

struct pps__ktname {
    int64_t tid;
    int32_t name;
};

/* How PyTorch's virtual stages lie on the ranks (struct pps__kfile.layout). */
enum {
    PPS__KL_AS_IS = 0, /* the labels' stages are the stages (one rank, or no pattern fits) */
    PPS__KL_LOOP,      /* stage s on rank s mod p, chunk s / p (interleaved, looped BFS) */
    PPS__KL_V,         /* stage s on rank s (s < p) or 2p-1-s: ZBV, DualPipeV */
};

/* One file, one rank: what the import holds of it. */
struct pps__kfile {
    const char *path;
    int64_t rank, world, base_ns; /* rank -1: the file did not say */
    char host[256];
    struct pps_label_patterns rules;
    struct pps_strtab names;
    struct pps__kname *kn;
    size_t cap_kn;
    struct pps__krec *recs;
    size_t n_recs, cap_recs;
    struct pps__idmap threads; /* thread keys -> thread indexes */
    size_t n_threads;
    int64_t last_thread_key; /* the last thread looked up, and its index */
    int32_t last_thread;
    struct pps__kopen *open; /* "B" events waiting for their "E" */
    size_t n_open, cap_open;
    struct pps__import_iter *steps;
    size_t n_steps, cap_steps;
    struct pps__ktname *tnames;
    size_t n_tnames, cap_tnames;
    int32_t *vstages; /* the virtual stages the labels name, sorted, distinct */
    size_t n_vstages, cap_vstages;
    int layout, p;
    int16_t stage; /* the rank's stage: of spans that are no labelled op */
    char layout_note[64];
    int64_t skipped;
};

/* kineto_link.c */
int pps__kfile_vstage(struct pps__kfile *f, int vstage, struct pps_err *err);
int pps__kfile_step(struct pps__kfile *f, int64_t start, int64_t end, int iter,
                    struct pps_err *err);
/* Links the records once the file is read: see the file's comment. */
int pps__kfile_link(struct pps__kfile *f, struct pps_err *err);
/* The span of a record (name_id the file's id, or -1), times with the base added. */
int pps__kfile_span(const struct pps__kfile *f, const struct pps__krec *r, struct pps_span *s,
                    struct pps_err *err);

/* import_kineto.c: a JSON number of microseconds, as text, to nanoseconds (exact for
 * "123.456"); -1 when it is not one or out of +-2^62 ns. */
int pps__kineto_us_to_ns(const char *s, size_t n, int64_t *out);

#endif
