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

/* stat(2) with the one-line reason: "PATH: no such file or directory" is PPS_ENOENT. */
struct stat;
int pps__stat(const char *path, struct stat *st, struct pps_err *err);

/* "dir/name" in a new string (no doubled slash), NULL when out of memory. */
char *pps__path_join(const char *dir, const char *name);

#endif
