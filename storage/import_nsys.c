/*
 * import_nsys.c - Nsight Systems SQLite exports (`nsys export --type sqlite`) into a ppscope run
 * (docs/import.md): NVTX ranges named by the pipeline's labels (labels.h) become F, B, W, BW,
 * SEND, RECV, WAIT and OPT spans, other ranges named ranges, CUDA kernels, copies and memsets
 * device spans attributed to the op range open on the launching thread, NCCL kernels
 * communication. One rank per process, one shard per rank.
 *
 * The export's layout drifts between nsys releases, so nothing is assumed: tables are looked up
 * in sqlite_master (a table that was not traced is absent), columns by name through PRAGMA
 * table_info, the metadata under either of its names (EXPORT_META_DATA, META_DATA_EXPORT). A
 * file that lacks what the import needs gets one line naming what is missing.
 *
 * The file is untrusted: it is opened read-only and immutable, with SQLite's defensive settings
 * and a limit on string lengths; every value is checked for its type and range. Each table is read
 * in one pass in the file's order, and only the spans kept are held in memory (import_model.c):
 * the RUNTIME table, however large, is only joined, never held.
 */
#include <errno.h>
#include <pthread.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdarg.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "import_int.h"
#include "import_model.h"
#include "storage_int.h"

/* NVTX_EVENTS.eventType (ENUM_NSYS_EVENT_TYPE in the exports that carry it). */
enum {
    EV_MARK = 34,
    EV_THREAD_NAME = 39,
    EV_PUSHPOP = 59,
    EV_STARTEND = 60,
    EV_NVTXT_PUSHPOP = 70, /* the same, from NVTXT files */
    EV_NVTXT_STARTEND = 71,
};

/* The longest string a row may hold: the export's are names, far shorter. */
#define STRING_LIMIT (1 << 20)

/* The tables read, by name. */
enum table {
    T_NVTX,
    T_KERNEL,
    T_MEMCPY,
    T_MEMSET,
    T_RUNTIME,
    T_STRINGS,
    T_META_OLD, /* EXPORT_META_DATA (2022 and before) */
    T_META_NEW, /* META_DATA_EXPORT (2023 and later) */
    T_SESSION,
    T_SYSENV,
    N_TABLES,
};

static const char *const table_names[N_TABLES] = {
    "NVTX_EVENTS",
    "CUPTI_ACTIVITY_KIND_KERNEL",
    "CUPTI_ACTIVITY_KIND_MEMCPY",
    "CUPTI_ACTIVITY_KIND_MEMSET",
    "CUPTI_ACTIVITY_KIND_RUNTIME",
    "StringIds",
    "EXPORT_META_DATA",
    "META_DATA_EXPORT",
    "TARGET_INFO_SESSION_START_TIME",
    "TARGET_INFO_SYSTEM_ENV",
};

/* What one file holds, as found. */
struct layout {
    int have[N_TABLES];
    char **cols[N_TABLES]; /* column names of each table present */
    int n_cols[N_TABLES];
    int64_t rows[N_TABLES]; /* max(rowid): the progress estimate */
};

struct file {
    const char *path;
    int index; /* among the files of the import */
    sqlite3 *db;
    sqlite3_stmt *strings; /* StringIds by id, prepared on first use */
    struct layout lay;
    char version[64]; /* EXPORT_PRODUCT_VERSION, "" if the export does not say */
    char schema[64];  /* EXPORT_SCHEMA_VERSION */
    char host[256];   /* TARGET_INFO_SYSTEM_ENV Hostname */
    int has_utc;
    int64_t utc_ns; /* TARGET_INFO_SESSION_START_TIME.utcEpochNs: time 0 of the file's clock */
};

/* A new string from a format, or NULL when out of memory (asprintf is not POSIX). */
static char *format(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static char *format(const char *fmt, ...)
{
    va_list ap;
    char *s;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || !(s = malloc((size_t)n + 1)))
        return NULL;
    va_start(ap, fmt);
    vsnprintf(s, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return s;
}

/* ---- opening an untrusted file ------------------------------------------------------------ */

/* A failed SQLite call, with the importer's words (the reader's say "not a ppscope trace"). */
static int sql_fail(sqlite3 *db, int rc, const char *path, const char *what, struct pps_err *err)
{
    if ((rc & 0xff) == SQLITE_NOTADB)
        return pps_err_set(err, PPS_EFORMAT, "%s: not an SQLite database (or a damaged one)", path);
    if ((rc & 0xff) == SQLITE_TOOBIG)
        return pps_err_set(err, PPS_EFORMAT, "%s: a value longer than %d bytes: not an export",
                           path, STRING_LIMIT);
    if ((rc & 0xff) == SQLITE_ERROR || (rc & 0xff) == SQLITE_MISMATCH)
        return pps__sql_fail(db, rc, path, what, err) == PPS_ENOMEM
                   ? PPS_ENOMEM
                   : (err ? (err->code = PPS_EFORMAT) : PPS_EFORMAT);
    return pps__sql_fail(db, rc, path, what, err);
}

/* What a loop of sqlite3_step ended on: 0 at SQLITE_DONE, else the failure, as sql_fail says. */
static int sql_done(sqlite3 *db, int rc, const char *path, const char *what, struct pps_err *err)
{
    return rc == SQLITE_DONE ? 0 : sql_fail(db, rc, path, what, err);
}

/*
 * The length the file's header gives it (the page size, bytes 16-17, times the page count, bytes
 * 28-31, when bytes 92-95 say that count is current), against its size. SQLite itself trusts the
 * size of the file, and finds a cut only where a query reaches a missing page.
 */
static int header_length(const char *path, const struct stat *st, struct pps_err *err)
{
    unsigned char h[100];
    FILE *f = fopen(path, "rb");
    size_t n = f ? fread(h, 1, sizeof(h), f) : 0;

    if (f)
        fclose(f);
    if (n < sizeof(h))
        return 0; /* SQLite says what is wrong with a file this short */
    uint32_t page = (uint32_t)h[16] << 8 | h[17], pages, counter, valid_for;
    if (page == 1)
        page = 65536;
    pages = (uint32_t)h[28] << 24 | (uint32_t)h[29] << 16 | (uint32_t)h[30] << 8 | h[31];
    counter = (uint32_t)h[24] << 24 | (uint32_t)h[25] << 16 | (uint32_t)h[26] << 8 | h[27];
    valid_for = (uint32_t)h[92] << 24 | (uint32_t)h[93] << 16 | (uint32_t)h[94] << 8 | h[95];
    if (page >= 512 && (page & (page - 1)) == 0 && pages > 0 && counter == valid_for &&
        (int64_t)pages * page > (int64_t)st->st_size)
        return pps_err_set(err, PPS_EFORMAT,
                           "%s: truncated (the file has %lld bytes, its header says %lld)", path,
                           (long long)st->st_size, (long long)pages * page);
    return 0;
}

static int open_export(const char *path, sqlite3 **out, struct pps_err *err)
{
    struct stat st;
    sqlite3 *db = NULL;
    char *uri = NULL;
    int rc;

    *out = NULL;
    if ((rc = pps__stat(path, &st, err)))
        return rc;
    if (S_ISDIR(st.st_mode))
        return pps_err_set(err, PPS_EINVAL, "%s: a directory, not an export file", path);
    if (!S_ISREG(st.st_mode))
        return pps_err_set(err, PPS_EINVAL, "%s: not a regular file", path);
    if (st.st_size == 0)
        return pps_err_set(err, PPS_EFORMAT, "%s: an empty file", path);
    /* Immutable: no locks, no -shm, no journal replayed: an export is a finished file. */
    if (!(uri = pps__file_uri(path, "mode=ro&immutable=1")))
        return pps_err_set(err, PPS_ENOMEM, "%s: out of memory", path);
    rc = sqlite3_open_v2(uri, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_URI,
                         NULL);
    free(uri);
    if (rc == SQLITE_OK)
        rc = sqlite3_extended_result_codes(db, 1);
    /* SQLite's advice for databases from untrusted sources. */
    if (rc == SQLITE_OK)
        rc = sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, NULL);
#ifdef SQLITE_DBCONFIG_TRUSTED_SCHEMA
    if (rc == SQLITE_OK)
        rc = sqlite3_db_config(db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, NULL);
#endif
    if (rc != SQLITE_OK) {
        rc = sql_fail(db, rc, path, "cannot open", err);
        goto out;
    }
    sqlite3_limit(db, SQLITE_LIMIT_LENGTH, STRING_LIMIT);
    if ((rc = pps__exec(db, "PRAGMA cell_size_check = ON; PRAGMA query_only = ON", path,
                        "cannot open", err)))
        goto out;
    /* A cut file fails only where a query reaches a missing page: compare with the header. */
    if ((rc = header_length(path, &st, err)))
        goto out;
    *out = db;
    db = NULL;
out:
    sqlite3_close(db);
    return rc;
}

/* ---- the layout --------------------------------------------------------------------------- */

static void layout_release(struct layout *lay)
{
    for (int t = 0; t < N_TABLES; t++) {
        for (int c = 0; c < lay->n_cols[t]; c++)
            free(lay->cols[t][c]);
        free(lay->cols[t]);
    }
    memset(lay, 0, sizeof(*lay));
}

static int has_col(const struct layout *lay, int t, const char *col)
{
    for (int c = 0; lay->have[t] && c < lay->n_cols[t]; c++)
        if (!strcmp(lay->cols[t][c], col))
            return 1;
    return 0;
}

/* The tables of the file that we read, each a real table (a view or a virtual table could run
 * anything the file's author wrote), with its columns. */
static int read_layout(sqlite3 *db, const char *path, struct layout *lay, struct pps_err *err)
{
    sqlite3_stmt *st = NULL;
    char sql[128];
    int rc;

    memset(lay, 0, sizeof(*lay));
    rc = sqlite3_prepare_v2(db, "SELECT name, type, sql FROM sqlite_master", -1, &st, NULL);
    while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *name = (const char *)sqlite3_column_text(st, 0);
        const char *type = (const char *)sqlite3_column_text(st, 1);
        const char *text = (const char *)sqlite3_column_text(st, 2);
        rc = SQLITE_OK;
        for (int t = 0; name && type && t < N_TABLES; t++) {
            if (strcmp(name, table_names[t]) != 0)
                continue;
            if (strcmp(type, "table") != 0 || (text && !strncasecmp(text, "CREATE VIRTUAL", 14))) {
                rc = pps_err_set(err, PPS_EFORMAT, "%s: %s is a %s, not a plain table", path, name,
                                 strcmp(type, "table") ? type : "virtual table");
                goto out;
            }
            lay->have[t] = 1;
        }
    }
    if ((rc = sql_done(db, rc, path, "cannot read its schema", err)))
        goto out;
    sqlite3_finalize(st);
    st = NULL;
    for (int t = 0; t < N_TABLES; t++) {
        size_t cap = 0;
        if (!lay->have[t])
            continue;
        snprintf(sql, sizeof(sql), "SELECT name FROM pragma_table_info('%s')", table_names[t]);
        rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
        while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
            const char *col = (const char *)sqlite3_column_text(st, 0);
            char *copy;
            rc = SQLITE_OK;
            if (!col)
                continue;
            if (pps_grow((void **)&lay->cols[t], &cap, (size_t)lay->n_cols[t] + 1,
                         sizeof(char *)) != 0 ||
                !(copy = strdup(col))) {
                rc = pps_err_set(err, PPS_ENOMEM, "%s: out of memory", path);
                goto out;
            }
            lay->cols[t][lay->n_cols[t]++] = copy;
        }
        if ((rc = sql_done(db, rc, path, "cannot read its schema", err)))
            goto out;
        sqlite3_finalize(st);
        st = NULL;
        /* max(rowid) reads one page: an estimate of the rows for progress, no scan. */
        snprintf(sql, sizeof(sql), "SELECT max(rowid) FROM %s", table_names[t]);
        if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK &&
            sqlite3_step(st) == SQLITE_ROW)
            lay->rows[t] = sqlite3_column_int64(st, 0);
        sqlite3_finalize(st);
        st = NULL;
    }
    rc = 0;
out:
    sqlite3_finalize(st);
    return rc;
}

/* The columns a table must have for us to read it; one line naming the first one missing. */
static int need_cols(const struct file *f, int t, const char *const *cols, struct pps_err *err)
{
    for (; *cols; cols++)
        if (!has_col(&f->lay, t, *cols))
            return pps_err_set(err, PPS_EVERSION,
                               "%s: %s has no column '%s': an export layout this ppscope does not "
                               "know (nsys %s)",
                               f->path, table_names[t], *cols, f->version[0] ? f->version : "?");
    return 0;
}

int pps__nsys_probe(const char *path, int *is_nsys, struct pps_err *err)
{
    struct layout lay;
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    int rc, events = 0;

    *is_nsys = 0;
    if ((rc = open_export(path, &db, err)))
        return rc;
    if (sqlite3_prepare_v2(db, "PRAGMA application_id", -1, &st, NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int64(st, 0) == PPS_APPLICATION_ID) {
        pps_err_set(err, PPS_EFORMAT, "%s: a ppscope trace already (nothing to import)", path);
        goto out;
    }
    if ((rc = read_layout(db, path, &lay, err)))
        goto out;
    for (int t = T_NVTX; t <= T_MEMSET; t++)
        events |= lay.have[t];
    *is_nsys = lay.have[T_STRINGS] &&
               (events || lay.have[T_META_OLD] || lay.have[T_META_NEW] || lay.have[T_SESSION]);
    if (!*is_nsys)
        pps_err_set(err, PPS_EFORMAT,
                    "%s: an SQLite file without Nsight Systems' export tables (StringIds, "
                    "NVTX_EVENTS, CUPTI_ACTIVITY_KIND_*)",
                    path);
    layout_release(&lay);
out:
    sqlite3_finalize(st);
    sqlite3_close(db);
    return rc;
}

/* ---- values ------------------------------------------------------------------------------- */

/* Column i as an integer: 0, 1 when NULL (v unchanged), -1 when it holds anything else (text,
 * a fraction, a blob): a value of the wrong type is a damaged or forged file. */
static int col_int(sqlite3_stmt *st, int i, int64_t *v)
{
    switch (sqlite3_column_type(st, i)) {
    case SQLITE_INTEGER:
        *v = sqlite3_column_int64(st, i);
        return 0;
    case SQLITE_NULL:
        return 1;
    default:
        return -1;
    }
}

static int bad_value(const struct file *f, int t, const char *col, int64_t row, struct pps_err *err)
{
    return pps_err_set(err, PPS_EFORMAT, "%s: %s row %lld: %s is not an integer", f->path,
                       table_names[t], (long long)row, col);
}

/* A time of the export: an integer within +-2^62 ns (ppscope's limit on times). */
static int read_time(const struct file *f, sqlite3_stmt *st, int i, int t, const char *col,
                     int64_t row, int64_t *v, int *null, struct pps_err *err)
{
    int r = col_int(st, i, v);
    *null = r == 1;
    if (r < 0)
        return bad_value(f, t, col, row, err);
    if (!*null && (*v > PPS__TIME_LIMIT || *v < -PPS__TIME_LIMIT))
        return pps_err_set(err, PPS_EFORMAT, "%s: %s row %lld: %s %lld is out of range", f->path,
                           table_names[t], (long long)row, col, (long long)*v);
    return 0;
}

/* "col" if the table has it, else "NULL": optional columns read as absent. */
static const char *col_or_null(const struct file *f, int t, const char *col)
{
    return has_col(&f->lay, t, col) ? col : "NULL";
}

/* ---- metadata ----------------------------------------------------------------------------- */

/* Runs sql, a SELECT of two text columns (name, value), calling fn for each row. */
static int read_pairs(struct file *f, const char *sql,
                      void (*fn)(struct file *f, const char *name, const char *value),
                      struct pps_err *err)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(f->db, sql, -1, &st, NULL);

    while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *name = (const char *)sqlite3_column_text(st, 0);
        const char *value = (const char *)sqlite3_column_text(st, 1);
        rc = SQLITE_OK;
        if (name && value)
            fn(f, name, value);
    }
    rc = sql_done(f->db, rc, f->path, "cannot read its metadata", err);
    sqlite3_finalize(st);
    return rc;
}

/* Copies a value, cut and made printable: it lands in meta and in messages. */
static void copy_value(char *out, size_t n, const char *value)
{
    size_t k = 0;
    for (; value[k] && k < n - 1; k++)
        out[k] = ((unsigned char)value[k] < 0x20 || value[k] == 0x7f) ? '?' : value[k];
    out[k] = '\0';
}

static void on_export_meta(struct file *f, const char *name, const char *value)
{
    if (!strcmp(name, "EXPORT_PRODUCT_VERSION"))
        copy_value(f->version, sizeof(f->version), value);
    else if (!strcmp(name, "EXPORT_SCHEMA_VERSION"))
        copy_value(f->schema, sizeof(f->schema), value);
}

static void on_sysenv(struct file *f, const char *name, const char *value)
{
    if (!strcmp(name, "Hostname"))
        copy_value(f->host, sizeof(f->host), value);
}

static int read_meta(struct file *f, struct pps_err *err)
{
    static const char *const pair[] = {"name", "value", NULL};
    sqlite3_stmt *st = NULL;
    int rc = 0;

    for (int t = T_META_OLD; t <= T_META_NEW; t++)
        if (f->lay.have[t] && !(rc = need_cols(f, t, pair, err))) {
            char sql[96];
            snprintf(sql, sizeof(sql), "SELECT name, value FROM %s", table_names[t]);
            if ((rc = read_pairs(f, sql, on_export_meta, err)))
                return rc;
        }
    if (rc)
        return rc;
    if (f->lay.have[T_SYSENV] && has_col(&f->lay, T_SYSENV, "name") &&
        has_col(&f->lay, T_SYSENV, "value") &&
        (rc = read_pairs(f, "SELECT name, value FROM TARGET_INFO_SYSTEM_ENV", on_sysenv, err)))
        return rc;
    if (f->lay.have[T_SESSION] && has_col(&f->lay, T_SESSION, "utcEpochNs")) {
        int64_t v;
        rc = sqlite3_prepare_v2(f->db, "SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME", -1,
                                &st, NULL);
        if (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
            rc = SQLITE_DONE;
            if (col_int(st, 0, &v) == 0 && v > 0 && v < PPS__TIME_LIMIT) {
                f->has_utc = 1;
                f->utc_ns = v;
            }
        }
        rc = sql_done(f->db, rc, f->path, "cannot read", err);
        sqlite3_finalize(st);
    }
    return rc;
}

/* ---- strings ------------------------------------------------------------------------------ */

/*
 * Makes StringIds' string id known to the model, reading it on its first use by its primary key:
 * a range or kernel then costs its id, not a join. An id StringIds lacks is PPS_EFORMAT (the
 * caller says where).
 */
static int string_of(struct pps__imodel *m, struct file *f, int64_t id, struct pps_err *err)
{
    const char *text;
    int rc;

    if (pps__imodel_string_known(m, id))
        return 0;
    if (!f->strings && (rc = sqlite3_prepare_v2(f->db, "SELECT value FROM StringIds WHERE id = ?",
                                                -1, &f->strings, NULL)) != SQLITE_OK)
        return sql_fail(f->db, rc, f->path, "cannot read StringIds", err);
    sqlite3_bind_int64(f->strings, 1, id);
    rc = sqlite3_step(f->strings);
    if (rc == SQLITE_ROW && (text = (const char *)sqlite3_column_text(f->strings, 0)))
        rc = pps__imodel_string_add(m, id, text, err);
    else if (rc == SQLITE_ROW || rc == SQLITE_DONE)
        rc = pps_err_set(err, PPS_EFORMAT, "%s: string %lld is not in StringIds", f->path,
                         (long long)id);
    else
        rc = sql_fail(f->db, rc, f->path, "cannot read StringIds", err);
    sqlite3_reset(f->strings);
    return rc;
}

/* string_of for row of table t, whose column col holds the id: an id StringIds lacks is
 * PPS_EFORMAT naming the row. */
static int row_string(struct pps__imodel *m, struct file *f, int t, int64_t row, const char *col,
                      int64_t id, struct pps_err *err)
{
    int rc = string_of(m, f, id, err);

    if (rc == PPS_EFORMAT)
        pps_err_set(err, PPS_EFORMAT, "%s: %s row %lld: %s %lld is not in StringIds", f->path,
                    table_names[t], (long long)row, col, (long long)id);
    return rc;
}

/* ---- reading rows ------------------------------------------------------------------------- */

/* A pass's query, sql over the rows with rowid in [lo, hi] (its two parameters), in *q: SQLite's
 * result code. */
static int rows_prepare(const struct file *f, const char *sql, int64_t lo, int64_t hi,
                        sqlite3_stmt **q)
{
    int rc = sqlite3_prepare_v2(f->db, sql, -1, q, NULL);

    if (rc == SQLITE_OK)
        rc = sqlite3_bind_int64(*q, 1, lo) | sqlite3_bind_int64(*q, 2, hi);
    return rc;
}

/* sqlite3_step over an event table: each row is an event read, which progress counts. */
static int rows_next(const struct pps__imodel *m, sqlite3_stmt *q, struct pps__import_progress *pr,
                     struct pps_import_stats *st)
{
    int rc = sqlite3_step(q);

    if (rc == SQLITE_ROW) {
        st->events_read++;
        pps__import_progress_tick(pr, st->events_read, m->events_total);
    }
    return rc;
}

/* ---- NVTX --------------------------------------------------------------------------------- */

/*
 * nsys's serialized global thread id: the thread id in the low 24 bits, the process id in the
 * next 24, the machine above them (a globalPid is the same with the thread bits zero). The
 * process is all of it but the thread bits, so that two machines' pid 1234 stay two processes.
 */
static void thread_of(int64_t gtid, int64_t *proc, int *pid, int64_t *thread, int *tid)
{
    uint64_t g = (uint64_t)gtid;
    *proc = (int64_t)(g >> 24);
    *pid = (int)((g >> 24) & 0xFFFFFF);
    *thread = gtid;
    *tid = (int)(g & 0xFFFFFF);
}

/* The checks of NVTX_EVENTS' layout: the columns a pass needs. */
static int nvtx_layout(const struct file *f, struct pps_err *err)
{
    static const char *const required[] = {"start", "end", "eventType", "globalTid", NULL};
    int rc;

    if ((rc = need_cols(f, T_NVTX, required, err)))
        return rc;
    if (!has_col(&f->lay, T_NVTX, "text") && !has_col(&f->lay, T_NVTX, "textId"))
        return pps_err_set(err, PPS_EVERSION,
                           "%s: NVTX_EVENTS has neither 'text' nor 'textId': an export layout "
                           "this ppscope does not know (nsys %s)",
                           f->path, f->version[0] ? f->version : "?");
    if (has_col(&f->lay, T_NVTX, "textId") && !f->lay.have[T_STRINGS])
        return pps_err_set(err, PPS_EVERSION,
                           "%s: NVTX_EVENTS names strings by textId but the export has no "
                           "StringIds table",
                           f->path);
    return 0;
}

/*
 * One pass over the rows of NVTX_EVENTS with rowid in [lo, hi], in the file's order (nsys writes
 * it by start time). Only the event types the import keeps are stepped through; a registered
 * string is read from StringIds once (string_of), not joined to every row. Messages name rows
 * by rowid.
 */
static int read_nvtx(struct pps__imodel *m, struct file *f, const void *arg, int64_t lo, int64_t hi,
                     struct pps__import_progress *pr, struct pps_import_stats *st,
                     struct pps_err *err)
{
    const int t = T_NVTX;
    sqlite3_stmt *q = NULL;
    char *sql = NULL;
    int rc;

    (void)arg;
    /* The payload: the first integer member of its union that is set. Columns: 0 rowid,
     * 1 start, 2 end, 3 eventType, 4 globalTid, 5 text, 6 endGlobalTid, 7 payload, 8 textId. */
    if (!(sql = format("SELECT rowid, start, end, eventType, globalTid, %s, %s, "
                       "coalesce(%s, %s, %s, %s), %s FROM NVTX_EVENTS "
                       "WHERE eventType IN (%d, %d, %d, %d, %d, %d) AND rowid BETWEEN ? AND ?",
                       col_or_null(f, t, "text"), col_or_null(f, t, "endGlobalTid"),
                       col_or_null(f, t, "uint64Value"), col_or_null(f, t, "int64Value"),
                       col_or_null(f, t, "uint32Value"), col_or_null(f, t, "int32Value"),
                       col_or_null(f, t, "textId"), EV_MARK, EV_THREAD_NAME, EV_PUSHPOP,
                       EV_STARTEND, EV_NVTXT_PUSHPOP, EV_NVTXT_STARTEND)))
        return pps_err_set(err, PPS_ENOMEM, "%s: out of memory", f->path);
    rc = rows_prepare(f, sql, lo, hi, &q);
    while (rc == SQLITE_OK && (rc = rows_next(m, q, pr, st)) == SQLITE_ROW) {
        struct pps__host_event ev;
        int64_t row = sqlite3_column_int64(q, 0), type = 0, gtid = 0, v;
        int null_end, null_start, r;
        const char *text;

        rc = SQLITE_OK;
        memset(&ev, 0, sizeof(ev));
        if ((rc = read_time(f, q, 1, t, "start", row, &ev.start, &null_start, err)) ||
            (rc = read_time(f, q, 2, t, "end", row, &ev.end, &null_end, err)))
            goto out;
        if (col_int(q, 3, &type) != 0 || (r = col_int(q, 4, &gtid)) < 0) {
            rc = bad_value(f, t, col_int(q, 3, &v) ? "eventType" : "globalTid", row, err);
            goto out;
        }
        if (r == 1 || null_start) { /* no thread or no time: nothing to place */
            st->skipped++;
            continue;
        }
        thread_of(gtid, &ev.proc, &ev.pid, &ev.thread, &ev.tid);
        /* A start/end range may end on another thread; it stays the starting thread's. */
        if (col_int(q, 6, &v) < 0) {
            rc = bad_value(f, t, "endGlobalTid", row, err);
            goto out;
        }
        if ((r = col_int(q, 7, &ev.payload)) < 0) {
            rc = bad_value(f, t, "payload", row, err);
            goto out;
        }
        ev.has_payload = r == 0;
        text = (const char *)sqlite3_column_text(q, 5);
        if ((r = col_int(q, 8, &v)) < 0) {
            rc = bad_value(f, t, "textId", row, err);
            goto out;
        }
        /* A registered string: read once per id, not once per range. */
        ev.string_id = -1;
        if (!text && r == 0) {
            if ((rc = row_string(m, f, t, row, "textId", v, err)))
                goto out;
            ev.string_id = v;
        }
        ev.text = text;
        ev.has_end = !null_end;
        ev.what = type == EV_MARK          ? PPS__EV_MARK
                  : type == EV_THREAD_NAME ? PPS__EV_THREAD_NAME
                                           : PPS__EV_RANGE;
        if ((rc = pps__imodel_host(m, &ev, err))) {
            if (rc == PPS_EFORMAT && err) {
                char why[sizeof(err->msg)];
                snprintf(why, sizeof(why), "%s", err->msg);
                pps_err_set(err, PPS_EFORMAT, "%s: NVTX_EVENTS row %lld: %s", f->path,
                            (long long)row, why);
            }
            goto out;
        }
    }
    rc = sql_done(f->db, rc, f->path, "cannot read NVTX_EVENTS", err);
out:
    sqlite3_finalize(q);
    free(sql);
    return rc;
}

/* A pass over the rows of a table with rowid in [lo, hi]: read_nvtx, read_device. */
typedef int (*pass_fn)(struct pps__imodel *m, struct file *f, const void *arg, int64_t lo,
                       int64_t hi, struct pps__import_progress *pr, struct pps_import_stats *st,
                       struct pps_err *err);

/* The second half of a table, read on a thread of its own into a model of its own. */
struct half {
    struct pps__imodel m;
    struct file f; /* the same file, its own connection */
    pass_fn pass;
    const void *arg;
    int64_t lo, hi;
    struct pps_import_stats st;
    struct pps_err err;
    int rc;
};

static void *read_half(void *arg)
{
    struct half *h = arg;
    struct pps__import_progress quiet;

    pps__import_progress_init(&quiet, 0, h->f.path);
    h->rc = h->pass(&h->m, &h->f, h->arg, h->lo, h->hi, &quiet, &h->st, &h->err);
    return NULL;
}

/* Rows from which a table is read in two halves at once, where there are two cores. */
#define HALVES_FROM 262144

/*
 * One table by pass: on two cores or more a large one (NVTX_EVENTS, the kernels) is read in two
 * halves by rowid at once, the second on a connection of its own into a model of its own, which
 * the model then absorbs, in the file's order. device: the pass makes device spans.
 */
static int read_table(struct pps__imodel *m, struct file *f, const struct pps__file_info *info,
                      int t, pass_fn pass, const void *arg, int device,
                      struct pps__import_progress *pr, struct pps_import_stats *st,
                      struct pps_err *err)
{
    struct half h;
    sqlite3_stmt *q = NULL;
    pthread_t thread;
    char sql[160];
    int64_t lo = INT64_MIN, hi = INT64_MAX;
    int rc, two = 0;

    /* Two subqueries: each of min and max alone is one seek, the two together a scan. */
    snprintf(sql, sizeof(sql), "SELECT (SELECT min(rowid) FROM %s), (SELECT max(rowid) FROM %s)",
             table_names[t], table_names[t]);
    if (f->lay.rows[t] >= HALVES_FROM && sysconf(_SC_NPROCESSORS_ONLN) >= 2 &&
        sqlite3_prepare_v2(f->db, sql, -1, &q, NULL) == SQLITE_OK &&
        sqlite3_step(q) == SQLITE_ROW && sqlite3_column_type(q, 0) == SQLITE_INTEGER &&
        sqlite3_column_type(q, 1) == SQLITE_INTEGER) {
        lo = sqlite3_column_int64(q, 0);
        hi = sqlite3_column_int64(q, 1);
        two = hi - lo >= HALVES_FROM;
    }
    sqlite3_finalize(q);
    if (!two)
        return pass(m, f, arg, INT64_MIN, INT64_MAX, pr, st, err);

    memset(&h, 0, sizeof(h));
    h.f = *f;
    h.f.db = NULL;
    h.f.strings = NULL;
    h.pass = pass;
    h.arg = arg;
    h.lo = lo + (hi - lo) / 2 + 1;
    h.hi = hi;
    pps__imodel_init(&h.m, m->source);
    if ((rc = open_export(f->path, &h.f.db, err)) || (rc = pps__imodel_file_begin(&h.m, info, err)))
        goto out;
    if (pthread_create(&thread, NULL, read_half, &h) != 0) {
        rc = pass(m, f, arg, INT64_MIN, INT64_MAX, pr, st, err);
        goto out;
    }
    rc = pass(m, f, arg, INT64_MIN, h.lo - 1, pr, st, err);
    pthread_join(thread, NULL);
    st->events_read += h.st.events_read;
    st->skipped += h.st.skipped;
    if (!rc && h.rc) {
        rc = h.rc;
        if (err)
            *err = h.err;
    }
    if (!rc)
        rc = pps__imodel_absorb(m, &h.m, device, err);
out:
    sqlite3_finalize(h.f.strings);
    sqlite3_close(h.f.db);
    pps__imodel_release(&h.m);
    return rc;
}

/* ---- CUDA: kernels, copies, memsets ------------------------------------------------------- */

/* What a device table is called and how its rows become spans. */
struct device_table {
    int t;
    int kind; /* PPS__DEV_KERNEL, _MEMCPY, _MEMSET */
};

/* The name of a copy by its copyKind (CUDA's enum CUpti_ActivityMemcpyKind). */
static const char *copy_name(int64_t kind)
{
    static const char *const names[] = {
        "memcpy ?",    "memcpy HtoD", "memcpy DtoH", "memcpy HtoA", "memcpy AtoH", "memcpy AtoA",
        "memcpy AtoD", "memcpy DtoA", "memcpy DtoD", "memcpy HtoH", "memcpy PtoP",
    };
    return kind >= 0 && kind < (int64_t)(sizeof(names) / sizeof(names[0])) ? names[kind] : names[0];
}

/*
 * The device rows of one table. Each waits in the model for the runtime call that launched it
 * (read_runtime): the RUNTIME table is read once, in its order, never joined (SQLite's join
 * would build an index of all of it) nor held. A kernel's name comes from StringIds by its
 * primary key.
 */
static int read_device(struct pps__imodel *m, struct file *f, const void *arg, int64_t lo,
                       int64_t hi, struct pps__import_progress *pr, struct pps_import_stats *st,
                       struct pps_err *err)
{
    const struct device_table *dt = arg;
    static const char *const required[] = {"start", "end", NULL};
    const int t = dt->t;
    const struct layout *lay = &f->lay;
    sqlite3_stmt *q = NULL;
    char *sql = NULL, name_sql[160] = "NULL, NULL";
    int rc, name_cols = 0;

    if (!lay->have[t])
        return 0;
    if ((rc = need_cols(f, t, required, err)))
        return rc;
    if (dt->kind == PPS__DEV_KERNEL && lay->have[T_STRINGS]) {
        /* The short name reads best ("gemm_kernel"); exports without it have the full one. */
        const char *col = has_col(lay, t, "shortName")       ? "shortName"
                          : has_col(lay, t, "demangledName") ? "demangledName"
                          : has_col(lay, t, "mangledName")   ? "mangledName"
                                                             : NULL;
        if (col) {
            snprintf(name_sql, sizeof(name_sql), "NULL, d.%s", col);
            name_cols = 1;
        }
    }
    /* Columns: 0 rowid, 1 start, 2 end, 3 name, 4 name id, 5 globalPid, 6 bytes, 7 copyKind,
     * 8 correlationId. */
    if (!(sql = format("SELECT d.rowid, d.start, d.end, %s, %s, %s, %s, %s FROM %s d "
                       "WHERE d.rowid BETWEEN ? AND ?",
                       name_sql, has_col(lay, t, "globalPid") ? "d.globalPid" : "NULL",
                       has_col(lay, t, "bytes") ? "d.bytes" : "NULL",
                       has_col(lay, t, "copyKind") ? "d.copyKind" : "NULL",
                       has_col(lay, t, "correlationId") ? "d.correlationId" : "NULL",
                       table_names[t])))
        return pps_err_set(err, PPS_ENOMEM, "%s: out of memory", f->path);
    rc = rows_prepare(f, sql, lo, hi, &q);
    while (rc == SQLITE_OK && (rc = rows_next(m, q, pr, st)) == SQLITE_ROW) {
        struct pps__device_event ev;
        int64_t v = 0, gpid = 0, row = sqlite3_column_int64(q, 0);
        int null_start, null_end, r;

        rc = SQLITE_OK;
        memset(&ev, 0, sizeof(ev));
        ev.kind = dt->kind;
        if ((rc = read_time(f, q, 1, t, "start", row, &ev.start, &null_start, err)) ||
            (rc = read_time(f, q, 2, t, "end", row, &ev.end, &null_end, err)))
            goto out;
        if (null_start || null_end) {
            st->skipped++;
            continue;
        }
        if (ev.end < ev.start) {
            rc = pps_err_set(err, PPS_EFORMAT, "%s: %s row %lld ends before it starts", f->path,
                             table_names[t], (long long)row);
            goto out;
        }
        ev.string_id = -1;
        if (name_cols && (r = col_int(q, 4, &v)) < 0) {
            rc = bad_value(f, t, "its name id", row, err);
            goto out;
        }
        if (name_cols && r == 0) {
            if ((rc = row_string(m, f, t, row, "name id", v, err)))
                goto out;
            ev.string_id = v;
        }
        if ((r = col_int(q, 5, &gpid)) < 0) {
            rc = bad_value(f, t, "globalPid", row, err);
            goto out;
        }
        if (r == 0) {
            int64_t thread;
            int tid;
            thread_of(gpid, &ev.proc, &ev.pid, &thread, &tid);
            ev.has_proc = 1;
        }
        if ((r = col_int(q, 6, &ev.bytes)) < 0) {
            rc = bad_value(f, t, "bytes", row, err);
            goto out;
        }
        if (r == 1 || ev.bytes < 0)
            ev.bytes = 0;
        if ((r = col_int(q, 7, &v)) < 0) {
            rc = bad_value(f, t, "copyKind", row, err);
            goto out;
        }
        if (dt->kind == PPS__DEV_MEMCPY)
            ev.name = copy_name(r == 0 ? v : 0);
        else if (dt->kind == PPS__DEV_MEMSET)
            ev.name = "memset";
        if (dt->kind != PPS__DEV_KERNEL)
            ev.string_id = -1;
        if ((r = col_int(q, 8, &ev.corr)) < 0) {
            rc = bad_value(f, t, "correlationId", row, err);
            goto out;
        }
        if (r == 1)
            ev.corr = 0;
        if ((rc = pps__imodel_device(m, &ev, err)))
            goto out;
    }
    rc = sql_done(f->db, rc, f->path, "cannot read", err);
out:
    sqlite3_finalize(q);
    free(sql);
    return rc;
}

/* The CUDA API calls, each offered to the device spans of its process that wait for their
 * launch (correlation ids are per process: one file may hold several). */
static int read_runtime(struct pps__imodel *m, struct file *f, struct pps__import_progress *pr,
                        struct pps_import_stats *st, struct pps_err *err)
{
    static const char *const required[] = {"start", "globalTid", "correlationId", NULL};
    const int t = T_RUNTIME;
    sqlite3_stmt *q = NULL;
    int64_t row = 0;
    int rc;

    /* Without it (or its columns) nothing says who launched what: kept, unattributed. */
    if (!f->lay.have[t] || !pps__imodel_launches_pending(m) || need_cols(f, t, required, NULL))
        return 0;
    rc = sqlite3_prepare_v2(
        f->db, "SELECT start, globalTid, correlationId FROM CUPTI_ACTIVITY_KIND_RUNTIME", -1, &q,
        NULL);
    while (rc == SQLITE_OK && (rc = rows_next(m, q, pr, st)) == SQLITE_ROW) {
        int64_t start = 0, gtid = 0, corr = 0, proc, thread;
        int null, pid, tid;

        rc = SQLITE_OK;
        row++;
        st->skipped++; /* a call is no span of its own */
        if ((rc = read_time(f, q, 0, t, "start", row, &start, &null, err)))
            goto out;
        if (col_int(q, 1, &gtid) < 0 || col_int(q, 2, &corr) < 0) {
            rc =
                bad_value(f, t, col_int(q, 1, &gtid) < 0 ? "globalTid" : "correlationId", row, err);
            goto out;
        }
        if (null || sqlite3_column_type(q, 1) == SQLITE_NULL || corr == 0)
            continue;
        thread_of(gtid, &proc, &pid, &thread, &tid);
        pps__imodel_launch(m, proc, thread, start, corr);
    }
    rc = sql_done(f->db, rc, f->path, "cannot read CUPTI_ACTIVITY_KIND_RUNTIME", err);
out:
    sqlite3_finalize(q);
    return rc;
}

/* ---- one file ----------------------------------------------------------------------------- */

static int import_file(struct pps__imodel *m, struct file *f, struct pps__import_progress *pr,
                       struct pps_import_stats *st, struct pps_err *err)
{
    static const struct device_table devices[] = {
        {T_KERNEL, PPS__DEV_KERNEL},
        {T_MEMCPY, PPS__DEV_MEMCPY},
        {T_MEMSET, PPS__DEV_MEMSET},
    };
    struct pps__file_info info;
    int rc, any = 0;

    if ((rc = open_export(f->path, &f->db, err)) ||
        (rc = read_layout(f->db, f->path, &f->lay, err)))
        return rc;
    if (!f->lay.have[T_STRINGS] && !f->lay.have[T_NVTX] && !f->lay.have[T_KERNEL])
        return pps_err_set(err, PPS_EFORMAT,
                           "%s: not an Nsight Systems export (no StringIds, NVTX_EVENTS or "
                           "CUPTI_ACTIVITY_KIND_* tables)",
                           f->path);
    if ((rc = read_meta(f, err)))
        return rc;
    for (int t = T_NVTX; t <= T_MEMSET; t++)
        any |= f->lay.have[t];
    if (!any)
        return pps_err_set(err, PPS_EFORMAT,
                           "%s: no NVTX or CUDA tables in this export (profile with "
                           "--trace=nvtx,cuda)",
                           f->path);
    memset(&info, 0, sizeof(info));
    info.path = f->path;
    info.host = f->host;
    info.has_utc = f->has_utc;
    info.utc_ns = f->utc_ns;
    info.meta[0].key = "nsys_version";
    info.meta[0].value = f->version;
    info.meta[1].key = "nsys_schema";
    info.meta[1].value = f->schema;
    if ((rc = pps__imodel_file_begin(m, &info, err)))
        return rc;
    for (int t = T_NVTX; t <= T_RUNTIME; t++)
        m->events_total += f->lay.rows[t] > 0 ? f->lay.rows[t] : 0;
    pr->what = f->path;
    if (f->lay.have[T_NVTX] &&
        ((rc = nvtx_layout(f, err)) ||
         (rc = read_table(m, f, &info, T_NVTX, read_nvtx, NULL, 0, pr, st, err))))
        return rc;
    if ((rc = pps__imodel_host_done(m, err)))
        return rc;
    for (size_t i = 0; i < sizeof(devices) / sizeof(devices[0]); i++)
        if (f->lay.have[devices[i].t] &&
            (rc = read_table(m, f, &info, devices[i].t, read_device, &devices[i], 1, pr, st, err)))
            return rc;
    if ((rc = read_runtime(m, f, pr, st, err)))
        return rc;

    pps__imodel_file_end(m);
    return 0;
}

int pps_import_nsys(const char *const *paths, int n, const struct pps_import_opts *o,
                    struct pps_import_stats *st, struct pps_err *err)
{
    struct pps_import_stats local;
    struct pps__import_out out = {0};
    struct pps__import_progress pr;
    struct pps__imodel m;
    int rc;

    if (!st)
        st = &local;
    memset(st, 0, sizeof(*st));
    if (!paths || n <= 0 || !o)
        return pps_err_set(err, PPS_EINVAL, "pps_import_nsys: no files to import");
    pps__imodel_init(&m, "nsys");
    pps__import_progress_init(&pr, o->progress, paths[0]);
    /* Every input is read before the output exists: a bad file leaves nothing behind. */
    for (int i = 0; i < n; i++) {
        struct file f;
        memset(&f, 0, sizeof(f));
        f.path = paths[i];
        f.index = i;
        rc = import_file(&m, &f, &pr, st, err);
        sqlite3_finalize(f.strings);
        sqlite3_close(f.db);
        layout_release(&f.lay);
        if (rc)
            goto out;
    }
    pr.what = o->out_dir;
    if ((rc = pps__imodel_finish(&m, err)) || (rc = pps__import_out_begin(&out, o->out_dir, err)) ||
        (rc = pps__imodel_write(&m, &out, &pr, st, err)) ||
        (rc = pps__import_out_commit(&out, err)))
        goto out;
    pps__import_progress_done(&pr, st->events_read);
out:
    pps__import_out_release(&out);
    pps__imodel_release(&m);
    return rc;
}
