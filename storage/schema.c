/*
 * schema.c - schema v1 of a ppscope trace (docs/schema.md says it for users), the span kinds'
 * names, and the mapping of SQLite failures onto ppscope's error codes.
 */
#include <string.h>

#include "storage_int.h"

/* clang-format off */
static const char *const kind_names[PPS_SPAN_KIND_COUNT] = {
    [PPS_SPAN_F] = "F",
    [PPS_SPAN_B] = "B",
    [PPS_SPAN_W] = "W",
    [PPS_SPAN_BW] = "BW",
    [PPS_SPAN_SEND] = "SEND",
    [PPS_SPAN_RECV] = "RECV",
    [PPS_SPAN_WAIT] = "WAIT",
    [PPS_SPAN_OPT] = "OPT",
    [PPS_SPAN_ROLLBACK] = "ROLLBACK",
    [PPS_SPAN_KERNEL] = "KERNEL",
    [PPS_SPAN_MEMCPY] = "MEMCPY",
    [PPS_SPAN_RANGE] = "RANGE",
};
/* clang-format on */

const char *pps_span_kind_name(int kind)
{
    if (kind <= 0 || kind >= PPS_SPAN_KIND_COUNT)
        return "?";
    return kind_names[kind];
}

int pps_span_kind_parse(const char *name)
{
    if (!name)
        return -1;
    for (int k = 1; k < PPS_SPAN_KIND_COUNT; k++)
        if (!strcmp(name, kind_names[k]))
            return k;
    return -1;
}

int pps_span_kind_is_compute(int kind)
{
    return kind == PPS_SPAN_F || kind == PPS_SPAN_B || kind == PPS_SPAN_W || kind == PPS_SPAN_BW ||
           kind == PPS_SPAN_OPT;
}

/*
 * Schema v1. Every integer column is NOT NULL so that the reader never has to guess; the two
 * doubles of a metric are NULL when unknown (SQLite stores NaN as NULL anyway). meta and names
 * are keyed by rank so that a merged file holds every rank's rows side by side.
 */
/* clang-format off */
static const char schema_sql[] =
    "CREATE TABLE kinds ("
    "  id INTEGER PRIMARY KEY,"
    "  name TEXT NOT NULL UNIQUE,"
    "  compute INTEGER NOT NULL);"
    "CREATE TABLE meta ("
    "  rank INTEGER NOT NULL,"
    "  key TEXT NOT NULL,"
    "  value TEXT NOT NULL,"
    "  PRIMARY KEY (rank, key)) WITHOUT ROWID;"
    "CREATE TABLE names ("
    "  rank INTEGER NOT NULL,"
    "  id INTEGER NOT NULL,"
    "  name TEXT NOT NULL,"
    "  PRIMARY KEY (rank, id)) WITHOUT ROWID;"
    "CREATE TABLE spans ("
    "  kind INTEGER NOT NULL,"
    "  stage INTEGER NOT NULL,"
    "  chunk INTEGER NOT NULL,"
    "  mb INTEGER NOT NULL,"
    "  iter INTEGER NOT NULL,"
    "  start_ns INTEGER NOT NULL,"
    "  end_ns INTEGER NOT NULL,"
    "  peer INTEGER NOT NULL,"
    "  bytes INTEGER NOT NULL,"
    "  name_id INTEGER NOT NULL,"
    "  clock INTEGER NOT NULL,"
    "  corr INTEGER NOT NULL,"
    "  rank INTEGER NOT NULL);"
    PPS__SPANS_INDEX_SQL
    "CREATE TABLE metrics ("
    "  rank INTEGER NOT NULL,"
    "  iter INTEGER NOT NULL,"
    "  stage INTEGER NOT NULL,"
    "  loss REAL,"
    "  grad_norm REAL,"
    "  act_bytes INTEGER NOT NULL,"
    "  pending_w INTEGER NOT NULL,"
    "  dropped INTEGER NOT NULL);";
/* clang-format on */

int pps__sql_fail(sqlite3 *db, int rc, const char *path, const char *what, struct pps_err *err)
{
    const char *why = db ? sqlite3_errmsg(db) : NULL;
    const char *sep = what ? ": " : "";
    int code;

    if (!why || !*why)
        why = sqlite3_errstr(rc);
    if (!what)
        what = "";
    if ((rc & 0xff) == SQLITE_NOMEM)
        code = pps_err_set(err, PPS_ENOMEM, "%s: %s%sout of memory", path, what, sep);
    else if ((rc & 0xff) == SQLITE_NOTADB)
        code =
            pps_err_set(err, PPS_EFORMAT, "%s: not a ppscope trace (not an SQLite database)", path);
    else if ((rc & 0xff) == SQLITE_CORRUPT || rc == SQLITE_IOERR_SHORT_READ) /* short: cut */
        code = pps_err_set(err, PPS_EFORMAT, "%s: truncated or corrupted (%s)", path, why);
    /* A damaged header's schema format number (byte 44) is SQLITE_ERROR, not CORRUPT; a file in
     * UTF-16, which merge cannot attach beside UTF-8 ones, is a file from elsewhere. Both are
     * the input's fault, not the system's: SQLite's words for them are stable. */
    else if ((rc & 0xff) == SQLITE_ERROR && !strcmp(why, "unsupported file format"))
        code = pps_err_set(err, PPS_EFORMAT, "%s: truncated or corrupted (%s)", path, why);
    else if ((rc & 0xff) == SQLITE_ERROR && strstr(why, "same text encoding"))
        code = pps_err_set(err, PPS_EFORMAT, "%s: not a ppscope trace (%s: ppscope writes UTF-8)",
                           path, why);
    else
        code = pps_err_set(err, PPS_EIO, "%s: %s%s%s", path, what, sep, why);
    /* SQLite quotes the file's own bytes in some messages ("near ...: syntax error" from a
     * damaged schema): keep the reason on one printable line. */
    for (char *c = err ? err->msg : NULL; c && *c; c++)
        if ((unsigned char)*c < 0x20 || *c == 0x7f)
            *c = '?';
    return code;
}

int pps__exec(sqlite3 *db, const char *sql, const char *path, const char *what, struct pps_err *err)
{
    int rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
    if (rc != SQLITE_OK)
        return pps__sql_fail(db, rc, path, what, err);
    return 0;
}

int pps__schema_create(sqlite3 *db, const char *path, struct pps_err *err)
{
    sqlite3_stmt *kind = NULL;
    char pragmas[128];
    int began = 0;
    int rc;

    rc = pps__exec(db, "BEGIN IMMEDIATE", path, "cannot create the schema", err);
    if (rc)
        goto out;
    began = 1;
    rc = pps__exec(db, schema_sql, path, "cannot create the schema", err);
    if (rc)
        goto out;
    rc = sqlite3_prepare_v2(db, "INSERT INTO kinds (id, name, compute) VALUES (?, ?, ?)", -1, &kind,
                            NULL);
    if (rc != SQLITE_OK) {
        rc = pps__sql_fail(db, rc, path, "cannot create the schema", err);
        goto out;
    }
    for (int k = 1; k < PPS_SPAN_KIND_COUNT; k++) {
        rc = sqlite3_bind_int(kind, 1, k);
        if (rc == SQLITE_OK)
            rc = sqlite3_bind_text(kind, 2, kind_names[k], -1, SQLITE_STATIC);
        if (rc == SQLITE_OK)
            rc = sqlite3_bind_int(kind, 3, pps_span_kind_is_compute(k));
        if (rc == SQLITE_OK && (rc = sqlite3_step(kind)) == SQLITE_DONE)
            rc = sqlite3_reset(kind);
        if (rc != SQLITE_OK) {
            rc = pps__sql_fail(db, rc, path, "cannot create the schema", err);
            goto out;
        }
    }
    /* Both pragmas take a literal, not a parameter; the values are ours, not the user's. */
    snprintf(pragmas, sizeof(pragmas), "PRAGMA application_id = %d; PRAGMA user_version = %d;",
             PPS_APPLICATION_ID, PPS_SCHEMA_VERSION);
    rc = pps__exec(db, pragmas, path, "cannot create the schema", err);
    if (rc)
        goto out;
    rc = pps__exec(db, "COMMIT", path, "cannot create the schema", err);
    if (rc)
        goto out;
    began = 0;
out:
    sqlite3_finalize(kind);
    if (began)
        sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL); /* best effort; rc says what failed */
    return rc;
}
