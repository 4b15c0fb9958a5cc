/*
 * import.h - other tools' traces into a ppscope run: Nsight Systems SQLite exports
 * (import_nsys.c) and PyTorch profiler / Kineto Chrome-trace JSON (import_kineto.c). The result
 * is an ordinary run directory, one shard per rank (docs/schema.md), with meta source=nsys or
 * source=kineto, rank, world and the file it came from; it carries no schedule, p or m of its
 * own: analysis/ infers them. Nothing downstream knows where a run came from but its source.
 *
 * Input is untrusted: a file that is not what it claims, truncated, corrupted or hostile gets a
 * one-line reason naming it (PPS_EFORMAT, PPS_ENOENT, PPS_EVERSION for an export layout this
 * ppscope does not know, naming what is missing), never a crash, and no run is left behind on
 * failure. Memory is bounded by the spans kept, not by the file. With progress, a line on stderr
 * about once a second after the first second.
 */
#ifndef PPS_IMPORT_H
#define PPS_IMPORT_H

#include <stdint.h>

#include "pps_error.h"

enum pps_import_format {
    PPS_IMPORT_UNKNOWN = 0,
    PPS_IMPORT_NSYS = 1,   /* an SQLite file with Nsight Systems' export tables */
    PPS_IMPORT_KINETO = 2, /* Chrome-trace JSON (.json, or gzip-compressed .json.gz) */
};

struct pps_import_opts {
    const char *out_dir; /* the run to write; must not exist, or be an empty directory */
    int progress;        /* 1: progress on stderr past a second */
};

struct pps_import_stats {
    int ranks;           /* shards written */
    int64_t events_read; /* events (rows, JSON objects) read from the files */
    int64_t spans;       /* spans written */
    int64_t skipped;     /* events that are no span ppscope keeps (with a reason counted in
                            skipped only; bad ones fail the import) */
};

/* What kind of file path is, by its content (not its name): *format is enum pps_import_format.
 * 0, or PPS_ENOENT / PPS_EIO with the reason (PPS_EINVAL for a directory or another file that is
 * not a regular one, PPS_EFORMAT for an SQLite file that SQLite cannot read). An unknown format
 * is 0 with PPS_IMPORT_UNKNOWN, and err (if not NULL) says what the file looked like. */
int pps_import_detect(const char *path, int *format, struct pps_err *err);

/* Imports n files of one format into o->out_dir. st (may be NULL) gets what was done. */
int pps_import_nsys(const char *const *paths, int n, const struct pps_import_opts *o,
                    struct pps_import_stats *st, struct pps_err *err);
int pps_import_kineto(const char *const *paths, int n, const struct pps_import_opts *o,
                      struct pps_import_stats *st, struct pps_err *err);

#endif
