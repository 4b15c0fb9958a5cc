/*
 * files.c - finding a run's shards and opening a trace file read-only, with the checks that turn
 * a wrong, newer or damaged file into a one-line reason instead of garbage or a crash.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "storage_int.h"

static int64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void pps__progress_start(struct pps__progress *p, int on)
{
    p->on = on;
    p->printed = 0;
    p->next_ns = on ? mono_ns() + 1000000000 : 0;
}

int pps__progress_due(struct pps__progress *p)
{
    int64_t t;

    if (!p->on || (t = mono_ns()) < p->next_ns)
        return 0;
    p->next_ns = t + 1000000000;
    p->printed = 1;
    return 1;
}

char *pps__path_join(const char *dir, const char *name)
{
    size_t nd = strlen(dir), nn = strlen(name);
    int slash = nd > 0 && dir[nd - 1] != '/';
    char *p = malloc(nd + (size_t)slash + nn + 1);
    if (!p)
        return NULL;
    memcpy(p, dir, nd);
    if (slash)
        p[nd] = '/';
    memcpy(p + nd + (size_t)slash, name, nn + 1);
    return p;
}

char *pps__file_uri(const char *path, const char *query)
{
    static const char hex[] = "0123456789ABCDEF";
    const unsigned char *p = (const unsigned char *)path;
    char *uri = malloc(strlen(path) * 3 + strlen(query) + 8), *q;

    if (!uri)
        return NULL;
    q = uri + sprintf(uri, "file:");
    /* "file://" would start an authority: leading slashes collapse to one. */
    while (p[0] == '/' && p[1] == '/')
        p++;
    for (; *p; p++) {
        if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
            strchr("/-._~", *p)) {
            *q++ = (char)*p;
        } else {
            *q++ = '%';
            *q++ = hex[*p >> 4];
            *q++ = hex[*p & 15];
        }
    }
    sprintf(q, "?%s", query);
    return uri;
}

/* The size of the write-ahead log beside path; 0 if there is none. */
static int64_t wal_size(const char *path)
{
    struct stat st;
    char *wal = malloc(strlen(path) + 5);
    int64_t size = 0;

    if (!wal)
        return 0;
    sprintf(wal, "%s-wal", path);
    if (stat(wal, &st) == 0)
        size = (int64_t)st.st_size;
    free(wal);
    return size;
}

/* The first column of the first row of sql as an integer (0 if no row). */
static int query_int(sqlite3 *db, const char *sql, const char *path, int64_t *v,
                     struct pps_err *err)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);

    *v = 0;
    if (rc == SQLITE_OK) {
        rc = sqlite3_step(st);
        if (rc == SQLITE_ROW) {
            *v = sqlite3_column_int64(st, 0);
            rc = SQLITE_OK;
        } else if (rc == SQLITE_DONE) {
            rc = SQLITE_OK;
        }
    }
    if (rc != SQLITE_OK)
        rc = pps__sql_fail(db, rc, path, "cannot read", err);
    sqlite3_finalize(st);
    return rc;
}

static const char *const required_tables[] = {"kinds", "meta", "names", "spans", "metrics"};
#define N_REQUIRED (sizeof(required_tables) / sizeof(required_tables[0]))

/* Every table of schema v1 is there (their columns are checked when the reader prepares). */
static int check_tables(sqlite3 *db, const char *path, struct pps_err *err)
{
    sqlite3_stmt *st = NULL;
    int seen[N_REQUIRED] = {0};
    int rc = sqlite3_prepare_v2(db, "SELECT name FROM sqlite_master WHERE type = 'table'", -1, &st,
                                NULL);

    while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *name = (const char *)sqlite3_column_text(st, 0);
        rc = SQLITE_OK;
        for (size_t i = 0; name && i < N_REQUIRED; i++)
            if (!strcmp(name, required_tables[i]))
                seen[i] = 1;
    }
    if (rc != SQLITE_DONE) {
        rc = pps__sql_fail(db, rc, path, "cannot read", err);
        goto out;
    }
    rc = 0;
    for (size_t i = 0; i < N_REQUIRED; i++) {
        if (!seen[i]) {
            rc = pps_err_set(err, PPS_EFORMAT, "%s: not a ppscope trace (no table '%s')", path,
                             required_tables[i]);
            goto out;
        }
    }
out:
    sqlite3_finalize(st);
    return rc;
}

/*
 * SQLite opens a cut file lazily and only fails on a query that reaches a missing page, so a
 * file shorter than its header says is caught here, for the price of two pragmas. A shard with a
 * live write-ahead log legitimately keeps pages there, not in the file, and is not checked. The
 * log is looked at after the pragmas and the file's size after the log: a writer that closes its
 * shard meanwhile has copied the log's pages into the file before it removes the log, so a shard
 * whose close the check straddles is not taken for a cut one.
 */
static int check_length(sqlite3 *db, const char *path, struct pps_err *err)
{
    int64_t pages, page_size;
    struct stat st;
    int rc;

    if ((rc = query_int(db, "PRAGMA page_count", path, &pages, err)) ||
        (rc = query_int(db, "PRAGMA page_size", path, &page_size, err)))
        return rc;
    if (wal_size(path) > 0 || stat(path, &st) != 0)
        return 0;
    if (pages > 0 && page_size > 0 && pages > (int64_t)st.st_size / page_size)
        return pps_err_set(err, PPS_EFORMAT,
                           "%s: truncated or corrupted (the file has %lld bytes, its header says "
                           "%lld)",
                           path, (long long)st.st_size, (long long)(pages * page_size));
    return 0;
}

/* Opens path read-only; immutable: without locks and without a -shm (a file no one writes). */
static int open_readonly(const char *path, int immutable, sqlite3 **db)
{
    char *uri = pps__file_uri(path, immutable ? "mode=ro&immutable=1" : "mode=ro");
    int rc;

    *db = NULL;
    if (!uri)
        return SQLITE_NOMEM;
    rc = sqlite3_open_v2(uri, db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_URI,
                         NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_extended_result_codes(*db, 1);
    if (rc == SQLITE_OK)
        rc = sqlite3_busy_timeout(*db, PPS__BUSY_TIMEOUT_MS);
    free(uri);
    return rc;
}

/* The first column of PRAGMA application_id, returning SQLite's own result code. */
static int probe(sqlite3 *db, int64_t *app_id)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(db, "PRAGMA application_id", -1, &st, NULL);

    *app_id = 0;
    if (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        *app_id = sqlite3_column_int64(st, 0);
        rc = SQLITE_OK;
    }
    sqlite3_finalize(st);
    return rc;
}

/* Whether path with suffix appended ("-journal") exists. */
static int side_exists(const char *path, const char *suffix)
{
    struct stat st;
    char *side = malloc(strlen(path) + strlen(suffix) + 1);
    int found;

    if (!side)
        return 1; /* the careful answer: open the file as a live one */
    sprintf(side, "%s%s", path, suffix);
    found = lstat(side, &st) == 0;
    free(side);
    return found;
}

/* The journal the file's SQLite header names: 1 rollback, 2 WAL, 0 neither or no header (not
 * SQLite, or too short: the checks that follow say which). */
static int header_journal(const char *path)
{
    unsigned char h[20];
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    ssize_t n;

    if (fd < 0)
        return 0;
    n = read(fd, h, sizeof(h));
    close(fd);
    if (n != (ssize_t)sizeof(h) || memcmp(h, "SQLite format 3", 16) != 0 || h[18] != h[19])
        return 0;
    return h[18] == 1 || h[18] == 2 ? h[18] : 0;
}

/* 1 when the file has a meta table whose every complete row (there is one at least) says 1. */
static int all_complete(sqlite3 *db)
{
    sqlite3_stmt *st = NULL;
    int yes = 0;

    if (sqlite3_prepare_v2(db,
                           "SELECT count(*), total(value = '1') FROM meta WHERE key = 'complete'",
                           -1, &st, NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
        yes = sqlite3_column_int64(st, 0) > 0 &&
              (double)sqlite3_column_int64(st, 0) == sqlite3_column_double(st, 1);
    sqlite3_finalize(st);
    return yes;
}

/*
 * A finished shard is opened immutable: SQLite then creates nothing beside it (no -wal, no
 * -shm), takes no locks, and reads it from read-only media alike. A shard is finished when no
 * writer can still add to it, which its own header and its companions say:
 *   - rollback mode (journal_mode=DELETE): the writer leaves WAL when it closes the shard, and a
 *     merged file never has it; without a -journal beside it (a transaction in progress, or a
 *     crash's hot journal, which SQLite must see) it is all in the file;
 *   - WAL mode with no log, or an empty one, and complete=1 on every rank: a shard that a viewer
 *     held open while its writer closed it (which keeps it in WAL), or a shard of an older
 *     ppscope. A live shard's log is never empty once its schema is written, and complete=1 is
 *     written only by the close.
 * *db is the immutable connection, or NULL when the shard may be live (or did not open: the
 * ordinary open that follows says why).
 */
static void open_finished(const char *path, sqlite3 **db)
{
    int journal = header_journal(path), rc;
    int64_t app_id;

    *db = NULL;
    if (!((journal == 1 && !side_exists(path, "-journal")) ||
          (journal == 2 && wal_size(path) == 0)))
        return;
    rc = open_readonly(path, 1, db);
    if (rc == SQLITE_OK)
        rc = probe(*db, &app_id);
    if (rc != SQLITE_OK || (journal == 2 && !all_complete(*db))) {
        sqlite3_close(*db);
        *db = NULL;
    }
}

/*
 * The reason a path given to a reader could not be reached or read, from errno e. What the user
 * can fix by giving another path (none there, a loop of symbolic links, no permission to read
 * it, a name too long) is bad input (PPS_ENOENT, PPS_EINVAL: exit 2); only what the system failed
 * at (EIO, out of memory or descriptors) is PPS_EIO.
 */
static int path_fail(const char *path, int e, struct pps_err *err)
{
    switch (e) {
    case ENOENT:
    case ENOTDIR:
        return pps_err_set(err, PPS_ENOENT, "%s: no such file or directory", path);
    case ELOOP:
        return pps_err_set(err, PPS_EINVAL, "%s: cannot read (a loop of symbolic links)", path);
    case EACCES:
    case EPERM:
    case ENAMETOOLONG:
        return pps_err_set(err, PPS_EINVAL, "%s: cannot read (%s)", path, strerror(e));
    default:
        return pps_err_set(err, PPS_EIO, "%s: %s", path, strerror(e));
    }
}

/* SQLite says only "unable to open database file" when it may not read the file: ask first. */
static int check_readable(const char *path, struct pps_err *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);

    if (fd < 0)
        return path_fail(path, errno, err);
    close(fd);
    return 0;
}

int pps__trace_open(const char *path, sqlite3 **out, int *immutable, struct pps_err *err)
{
    sqlite3 *db = NULL;
    struct stat st;
    int64_t app_id, version;
    int rc;

    *out = NULL;
    if (immutable)
        *immutable = 0;
    if ((rc = pps__stat(path, &st, err)))
        goto out;
    /* SQLite would block on a FIFO and fail obscurely on a directory. */
    if (!S_ISREG(st.st_mode)) {
        rc = pps_err_set(err, PPS_EFORMAT, "%s: not a ppscope trace (not a regular file)", path);
        goto out;
    }
    if (st.st_size == 0) {
        rc = pps_err_set(err, PPS_EFORMAT, "%s: not a ppscope trace (an empty file)", path);
        goto out;
    }
    if ((rc = check_readable(path, err)))
        goto out;
    open_finished(path, &db);
    if (db) {
        if (immutable)
            *immutable = 1;
        rc = probe(db, &app_id);
    } else {
        rc = open_readonly(path, 0, &db);
        if (rc == SQLITE_OK)
            rc = probe(db, &app_id);
    }
    /*
     * A WAL shard needs a -shm file beside it, which SQLite creates when it is missing; where
     * this user cannot create files (a colleague's run, a read-only copy) that fails. No -shm
     * means no one is writing the shard, and with no log all of it is in the file: read it as
     * immutable. With a log, its pages would go unread: say so instead.
     */
    if ((rc & 0xff) == SQLITE_READONLY || (rc & 0xff) == SQLITE_CANTOPEN) {
        /* A hot journal: a write was cut short, and the file holds half of it until SQLite rolls
         * it back, which takes write access. Read as it is, the half would become figures. */
        if (side_exists(path, "-journal")) {
            rc = pps_err_set(err, PPS_EINVAL,
                             "%s: a write to it was cut short (%s-journal holds what it "
                             "overwrote); open it once with write access (sqlite3 %s 'pragma "
                             "quick_check') to roll it back, then read it",
                             path, path, path);
            goto out;
        }
        if (wal_size(path) > 0) {
            rc = pps_err_set(err, PPS_EINVAL,
                             "%s: cannot read its write-ahead log (%s-wal) without write access "
                             "to the directory; copy the run somewhere writable",
                             path, path);
            goto out;
        }
        sqlite3_close(db);
        rc = open_readonly(path, 1, &db);
        if (rc == SQLITE_OK)
            rc = probe(db, &app_id);
        if (rc == SQLITE_OK && immutable)
            *immutable = 1;
    }
    if (rc != SQLITE_OK) {
        rc = pps__sql_fail(db, rc, path, "cannot open", err);
        goto out;
    }
    if (app_id != PPS_APPLICATION_ID) {
        rc = pps_err_set(err, PPS_EFORMAT,
                         "%s: not a ppscope trace (an SQLite database of another program)", path);
        goto out;
    }
    if ((rc = query_int(db, "PRAGMA user_version", path, &version, err)))
        goto out;
    if (version > PPS_SCHEMA_VERSION) {
        rc = pps_err_set(err, PPS_EVERSION,
                         "%s: schema version %lld is newer than this ppscope (%d)", path,
                         (long long)version, PPS_SCHEMA_VERSION);
        goto out;
    }
    if (version < 1) {
        rc = pps_err_set(err, PPS_EFORMAT, "%s: not a ppscope trace (schema version %lld)", path,
                         (long long)version);
        goto out;
    }
    if ((rc = check_tables(db, path, err)) || (rc = check_length(db, path, err)))
        goto out;
    *out = db;
    db = NULL;
out:
    sqlite3_close(db);
    return rc;
}

/* Whether name starts "rank-<digits>.db". */
static int rank_from_name_prefix(const char *name)
{
    size_t digits = strncmp(name, "rank-", 5) ? 0 : strspn(name + 5, "0123456789");
    return digits > 0 && !strncmp(name + 5 + digits, ".db", 3);
}

static int rank_from_name(const char *name)
{
    const char *p = name + 5;
    long rank = 0;
    int digits = 0;

    if (strncmp(name, "rank-", 5) != 0)
        return -1;
    for (; *p >= '0' && *p <= '9' && digits < 9; p++, digits++)
        rank = rank * 10 + (*p - '0');
    if (digits == 0 || strcmp(p, ".db") != 0)
        return -1;
    return (int)rank;
}

int pps__shard_name_rank(const char *name)
{
    return name ? rank_from_name(name) : -1;
}

/* Whether name is a shard that a writer is creating (".rank-00000.db.<pid>-<n>.new", writer.c),
 * which appears as rank-N.db once it holds its schema and first meta. */
static int is_creation_name(const char *name)
{
    size_t n = strlen(name);
    return name[0] == '.' && rank_from_name_prefix(name + 1) && n > 4 &&
           !strcmp(name + n - 4, ".new");
}

struct shard_entry {
    int rank;
    char *path;
};

static int shard_cmp(const void *a, const void *b)
{
    const struct shard_entry *x = a, *y = b;
    if (x->rank != y->rank)
        return x->rank < y->rank ? -1 : 1;
    return strcmp(x->path, y->path);
}

int pps__rank_claim(struct pps__rank_set *set, int rank, const char *shard, struct pps_err *err)
{
    unsigned bit = 1u << (rank % 8);

    if (rank < 0 || rank > INT16_MAX)
        return pps_err_set(err, PPS_EFORMAT, "%s: truncated or corrupted (rank %d out of range)",
                           shard, rank);
    if (set->bits[rank / 8] & bit)
        return pps_err_set(err, PPS_EFORMAT, "%s: its rank %d is in another shard of this run too",
                           shard, rank);
    set->bits[rank / 8] |= (unsigned char)bit;
    return 0;
}

int pps__shards_list(const char *dir, struct pps__shards *shards, struct pps_err *err)
{
    struct shard_entry *found = NULL;
    size_t n = 0, cap = 0;
    DIR *d = NULL;
    struct dirent *de;
    int rc = 0, creating = 0;

    memset(shards, 0, sizeof(*shards));
    if (!(d = opendir(dir))) {
        if (errno == ENOTDIR)
            rc = pps_err_set(err, PPS_EINVAL, "%s: not a directory", dir);
        else
            rc = path_fail(dir, errno, err);
        goto out;
    }
    errno = 0;
    while ((de = readdir(d))) {
        int rank = rank_from_name(de->d_name);
        if (rank < 0) {
            creating |= is_creation_name(de->d_name);
            continue;
        }
        if (n == cap) {
            size_t ncap = cap ? 2 * cap : 16;
            struct shard_entry *grown = realloc(found, ncap * sizeof(*found));
            if (!grown) {
                rc = pps_err_set(err, PPS_ENOMEM, "%s: out of memory", dir);
                goto out;
            }
            found = grown;
            cap = ncap;
        }
        if (!(found[n].path = pps__path_join(dir, de->d_name))) {
            rc = pps_err_set(err, PPS_ENOMEM, "%s: out of memory", dir);
            goto out;
        }
        found[n++].rank = rank;
        errno = 0;
    }
    if (errno) {
        rc = pps_err_set(err, PPS_EIO, "%s: %s", dir, strerror(errno));
        goto out;
    }
    if (n == 0 && creating) {
        rc = pps_err_set(err, PPS_ENOENT, "%s: its shards are being created (not ready yet)", dir);
        goto out;
    }
    if (n == 0) {
        rc = pps_err_set(err, PPS_ENOENT, "%s: no ppscope shards (rank-*.db) in this directory",
                         dir);
        goto out;
    }
    qsort(found, n, sizeof(*found), shard_cmp);
    shards->paths = calloc(n, sizeof(*shards->paths));
    shards->ranks = calloc(n, sizeof(*shards->ranks));
    if (!shards->paths || !shards->ranks) {
        rc = pps_err_set(err, PPS_ENOMEM, "%s: out of memory", dir);
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        shards->paths[i] = found[i].path;
        shards->ranks[i] = found[i].rank;
        found[i].path = NULL;
    }
    shards->n = n;
out:
    for (size_t i = 0; i < n; i++)
        free(found[i].path);
    free(found);
    if (d)
        closedir(d);
    return rc;
}

void pps__shards_release(struct pps__shards *shards)
{
    for (size_t i = 0; i < shards->n; i++)
        free(shards->paths[i]);
    free(shards->paths);
    free(shards->ranks);
    memset(shards, 0, sizeof(*shards));
}

int pps__stat(const char *path, struct stat *st, struct pps_err *err)
{
    if (stat(path, st) == 0)
        return 0;
    return path_fail(path, errno, err);
}
