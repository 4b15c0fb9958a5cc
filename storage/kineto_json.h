/*
 * kineto_json.h - reading a PyTorch profiler (Kineto) Chrome-trace JSON file as a stream of
 * events, for import_kineto.c: the file (plain or gzip) is read in chunks, the top-level object
 * walked by hand, and the "traceEvents" array handed to simdjson's On-Demand parser a window of
 * whole events at a time (kineto_json.cpp), so memory never grows with the file. docs/import.md
 * says why simdjson, with the measurements.
 *
 *   struct pps__kreader *r;
 *   pps__kreader_open(path, &r, err);
 *   while ((rc = pps__kreader_next(r, &evs, &n, err)) > 0)
 *       ...evs[0..n) valid until the next call...
 *   r->rank, r->world, r->base_ns: what the top level said (-1 where it did not)
 *   pps__kreader_close(r);
 *
 * Everything a file can do wrong is PPS_EFORMAT (or PPS_EIO, PPS_ENOENT) with one line that
 * names the file; nothing recurses, so no input can overflow a stack.
 */
#ifndef PPS_KINETO_JSON_H
#define PPS_KINETO_JSON_H

#include <stddef.h>
#include <stdint.h>

#include "pps_error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A string of an event: s points into the parser's buffers (valid until the next window), not
 * NUL-terminated; s == NULL when the field is absent. */
struct pps__kstr {
    const char *s;
    size_t n;
};

/* Field bits of struct pps__kev.has. */
#define PPS__KEV_TS    0x001
#define PPS__KEV_DUR   0x002
#define PPS__KEV_PID   0x004 /* pid (or pid_s for a string pid) */
#define PPS__KEV_TID   0x008
#define PPS__KEV_CORR  0x010 /* args.correlation */
#define PPS__KEV_EXT   0x020 /* args["External id"] */
#define PPS__KEV_PEER  0x040 /* args["Concrete Inputs"][2], an integer: c10d send/recv's peer */
#define PPS__KEV_BYTES 0x080 /* args.bytes */

/* One event object: the fields the importer reads, all else skipped. Times are the JSON
 * numbers' text (microseconds), converted by the importer exactly to nanoseconds. */
struct pps__kev {
    unsigned has;
    struct pps__kstr ph, cat, name;
    struct pps__kstr ts, dur;      /* number text */
    int64_t pid, tid;              /* numeric ids */
    struct pps__kstr pid_s, tid_s; /* string ids (Kineto's "Spans", "PyTorch Profiler") */
    int64_t corr, ext, peer, bytes;
    struct pps__kstr arg_name; /* args.name: the name a metadata event gives */
};

/* --- kineto_json.cpp: simdjson behind C ------------------------------------------------------ */

struct pps__kjson;

/* A parser, or NULL when out of memory. */
struct pps__kjson *pps__kjson_new(void);
void pps__kjson_free(struct pps__kjson *k);
/*
 * Parses doc[0..len) as a JSON array of event objects (cap bytes are readable from doc, at least
 * len + PPS__KJSON_PADDING). 0 with the events in *evs[0..*n), valid until the next call; -1 with
 * a reason in msg (what is wrong, and the index of the event it is in when it is one's) when doc
 * is not such an array: bad JSON, an element that is not an object, a field of the wrong type
 * (ph, cat, name not strings; ts, dur not numbers; pid, tid neither; args not an object; the
 * ids in args not integers), nesting deeper than 64.
 */
int pps__kjson_events(struct pps__kjson *k, const char *doc, size_t len, size_t cap,
                      const struct pps__kev **evs, size_t *n, char *msg, size_t msglen);
/* Parses doc[0..len) as distributedInfo, an object: *rank and *world from its "rank" and
 * "world_size" (-1 where absent). 0, or -1 with a reason in msg (not an object, not integers). */
int pps__kjson_dist_info(struct pps__kjson *k, const char *doc, size_t len, size_t cap,
                         int64_t *rank, int64_t *world, char *msg, size_t msglen);

/* What simdjson needs readable past a document's end. */
#define PPS__KJSON_PADDING 64

/* --- kineto_read.c: the file, its top level, the windows ------------------------------------- */

/* An event bigger than this is not a profiler's: the file is refused rather than buffered. */
#define PPS__KREADER_MAX_ITEM (64u << 20)

struct pps__kreader {
    const char *path;
    int64_t rank, world;         /* distributedInfo's rank and world_size; -1 where absent */
    int64_t base_ns;             /* baseTimeNanoseconds; 0 where absent */
    char host[256];              /* host_name, "" where absent */
    int64_t events;              /* events handed out so far */
    int64_t file_bytes;          /* the file's size on disk */
    struct pps__kreader_int *in; /* the rest: kineto_read.c's */
};

/* Opens path (plain or gzip-compressed JSON). A missing path is PPS_ENOENT, a directory or other
 * non-file PPS_EFORMAT. On failure *out is NULL. */
int pps__kreader_open(const char *path, struct pps__kreader **out, struct pps_err *err);
/*
 * The next events of traceEvents: 1 with *evs[0..*n) (n >= 1), valid until the next call; 0 at
 * the end of a well-formed file (the whole top level read: rank, world and base_ns set); or a
 * negative PPS_E... with the reason.
 */
int pps__kreader_next(struct pps__kreader *r, const struct pps__kev **evs, size_t *n,
                      struct pps_err *err);
/* Bytes of the file read so far (compressed bytes for a gzip file), for progress. */
int64_t pps__kreader_offset(const struct pps__kreader *r);
/* NULL is a no-op. */
void pps__kreader_close(struct pps__kreader *r);

#ifdef __cplusplus
}
#endif

#endif
