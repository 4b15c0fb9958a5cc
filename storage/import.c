/*
 * import.c - what every importer needs besides its parser: telling formats apart by content, an
 * output run that appears whole or not at all, the importers' shard metadata, progress on stderr,
 * the iteration a time is in, which kernels are communication, and an in-place sort
 * (import_int.h). The parsers are import_nsys.c and import_kineto.c.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "import_int.h"
#include "pps_run_id.h"
#include "storage_int.h"

/* ---- detection ---------------------------------------------------------------------------- */

static const char sqlite_magic[16] = "SQLite format 3";

int pps_import_detect(const char *path, int *format, struct pps_err *err)
{
    unsigned char head[64];
    struct stat st;
    ssize_t n;
    int fd = -1, rc;

    *format = PPS_IMPORT_UNKNOWN;
    if ((rc = pps__stat(path, &st, err)))
        return rc;
    if (S_ISDIR(st.st_mode))
        return pps_err_set(err, PPS_EINVAL,
                           "%s: a directory, not a trace file (give the export's file)", path);
    if (!S_ISREG(st.st_mode))
        return pps_err_set(err, PPS_EINVAL, "%s: not a regular file", path);
    if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
        return pps_err_set(err, errno == ENOENT ? PPS_ENOENT : PPS_EIO, "%s: cannot open (%s)",
                           path, strerror(errno));
    n = read(fd, head, sizeof(head));
    rc = errno;
    close(fd);
    if (n < 0)
        return pps_err_set(err, PPS_EIO, "%s: cannot read (%s)", path, strerror(rc));
    if (n == 0) {
        pps_err_set(err, PPS_EFORMAT, "%s: an empty file", path);
        return 0;
    }
    if ((size_t)n >= sizeof(sqlite_magic) && !memcmp(head, sqlite_magic, sizeof(sqlite_magic))) {
        int is_nsys = 0;
        if ((rc = pps__nsys_probe(path, &is_nsys, err)))
            return rc;
        if (is_nsys)
            *format = PPS_IMPORT_NSYS;
        return 0;
    }
    if (n >= 2 && head[0] == 0x1f && head[1] == 0x8b) {
        *format = PPS_IMPORT_KINETO; /* gzip: a compressed Chrome trace, the only one we know */
        return 0;
    }
    /* JSON: the first character that is not white space (after a UTF-8 byte-order mark). */
    for (ssize_t i = (n >= 3 && head[0] == 0xEF && head[1] == 0xBB && head[2] == 0xBF) ? 3 : 0;
         i < n; i++) {
        unsigned char c = head[i];
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r')
            continue;
        if (c == '{' || c == '[')
            *format = PPS_IMPORT_KINETO;
        break;
    }
    if (*format == PPS_IMPORT_UNKNOWN)
        pps_err_set(err, PPS_EFORMAT,
                    "%s: neither an Nsight Systems SQLite export nor a Kineto/Chrome JSON trace",
                    path);
    return 0;
}

/* ---- the output run ----------------------------------------------------------------------- */

/* 1 if dir holds no entry but . and .., 0 if it holds one, -1 with errno if it cannot be read. */
static int dir_is_empty(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int empty = 1;

    if (!d)
        return -1;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) {
            empty = 0;
            break;
        }
    closedir(d);
    return empty;
}

int pps__import_out_begin(struct pps__import_out *out, const char *out_dir, struct pps_err *err)
{
    struct stat st;
    char *parent = NULL, *base;
    size_t len;
    mode_t mask;
    int rc = 0;

    memset(out, 0, sizeof(*out));
    pps_run_id_new(out->run_id);
    if (!out_dir || !*out_dir)
        return pps_err_set(err, PPS_EINVAL, "no output run given (-o RUN)");
    if (!(out->dir = strdup(out_dir)))
        goto nomem;
    /* "runs/today/" is "runs/today": the trailing slash would make the temporary name a child. */
    len = strlen(out->dir);
    while (len > 1 && out->dir[len - 1] == '/')
        out->dir[--len] = '\0';
    if (stat(out->dir, &st) == 0) {
        int empty = S_ISDIR(st.st_mode) ? dir_is_empty(out->dir) : 0;
        if (!S_ISDIR(st.st_mode)) {
            rc =
                pps_err_set(err, PPS_EINVAL, "%s: already exists and is not a directory", out->dir);
            goto out;
        }
        if (empty < 0) {
            rc = pps_err_set(err, PPS_EIO, "%s: cannot read (%s)", out->dir, strerror(errno));
            goto out;
        }
        if (!empty) {
            rc = pps_err_set(err, PPS_EINVAL,
                             "%s: already exists and is not empty (ppscope never overwrites a run)",
                             out->dir);
            goto out;
        }
    } else if (errno != ENOENT) {
        rc = pps_err_set(err, PPS_EIO, "%s: %s", out->dir, strerror(errno));
        goto out;
    }

    /* The temporary directory sits beside the run, so that commit is a rename. */
    base = strrchr(out->dir, '/');
    if (base) {
        size_t plen = (size_t)(base - out->dir);
        if (!(parent = strndup(out->dir, plen ? plen : 1)))
            goto nomem;
        base++;
        if ((rc = pps__make_dirs(parent, err)))
            goto out;
    } else {
        base = out->dir;
    }
    if (!(out->tmp = malloc(strlen(out->dir) + 32)))
        goto nomem;
    sprintf(out->tmp, "%.*s.%s.import-XXXXXX", (int)(base - out->dir), out->dir, base);
    if (!mkdtemp(out->tmp)) {
        rc = pps_err_set(err, errno == ENOENT || errno == ENOTDIR ? PPS_EINVAL : PPS_EIO,
                         "%s: cannot create a directory beside it (%s)", out->dir, strerror(errno));
        free(out->tmp);
        out->tmp = NULL;
        goto out;
    }
    /* mkdtemp makes it 0700; a run is as readable as any directory the user makes. */
    mask = umask(0);
    umask(mask);
    chmod(out->tmp, 0777 & ~mask);
    goto out;
nomem:
    rc = pps_err_set(err, PPS_ENOMEM, "%s: out of memory", out_dir);
out:
    free(parent);
    if (rc)
        pps__import_out_release(out);
    return rc;
}

int pps__import_out_commit(struct pps__import_out *out, struct pps_err *err)
{
    if (!out->tmp)
        return pps_err_set(err, PPS_EINVAL, "%s: nothing to commit", out->dir ? out->dir : "?");
    /* rename(2) replaces an empty directory and refuses one that is not. */
    if (rename(out->tmp, out->dir) != 0) {
        if (errno == ENOTEMPTY || errno == EEXIST || errno == ENOTDIR || errno == EISDIR)
            return pps_err_set(err, PPS_EINVAL,
                               "%s: appeared while importing and is not empty: nothing written",
                               out->dir);
        return pps_err_set(err, PPS_EIO, "%s: cannot rename %s to it (%s)", out->dir, out->tmp,
                           strerror(errno));
    }
    out->committed = 1;
    return 0;
}

void pps__import_out_release(struct pps__import_out *out)
{
    if (out->tmp && !out->committed) {
        DIR *d = opendir(out->tmp);
        struct dirent *e;
        if (d) {
            /* Only the importer writes here: shards and their -wal and -shm. */
            while ((e = readdir(d))) {
                char *p;
                if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
                    continue;
                if ((p = pps__path_join(out->tmp, e->d_name))) {
                    unlink(p);
                    free(p);
                }
            }
            closedir(d);
        }
        rmdir(out->tmp);
    }
    free(out->tmp);
    free(out->dir);
    memset(out, 0, sizeof(*out));
}

int pps__import_shard_open(const struct pps__import_out *out, int rank, int world,
                           const char *source, const char *file, struct pps_store_writer **w,
                           struct pps_err *err)
{
    int rc;

    if ((rc = pps_store_writer_open(out->tmp, rank, w, err)))
        return rc;
    /* Nothing reads the shard before the import is committed, and a failed import removes it:
     * no syncs, and no journal (WAL would write every page twice); close brings back WAL. */
    if ((rc = pps__store_writer_exec(*w, "PRAGMA synchronous = OFF", err)) ||
        (rc = pps__store_writer_exec(*w, "PRAGMA journal_mode = OFF", err)) ||
        (rc = pps_store_writer_meta(*w, "source", source, err)) ||
        (rc = pps_store_writer_meta(*w, "run_id", out->run_id, err)) ||
        (rc = pps_store_writer_meta_int(*w, "world", world, err)) ||
        (rc = pps_store_writer_meta(*w, "file", file, err))) {
        pps_store_writer_close(*w, 0, NULL);
        *w = NULL;
    }
    return rc;
}

int pps__import_shard_close(struct pps_store_writer *w, struct pps_err *err)
{
    int rc = pps__store_writer_exec(w, "PRAGMA journal_mode = WAL", err);
    int crc = pps_store_writer_close(w, rc == 0, rc ? NULL : err);
    return rc ? rc : crc;
}

/* ---- progress ----------------------------------------------------------------------------- */

void pps__import_progress_init(struct pps__import_progress *p, int on, const char *what)
{
    memset(p, 0, sizeof(*p));
    pps__progress_start(&p->when, on);
    p->what = what;
}

void pps__import_progress_tick(struct pps__import_progress *p, int64_t done, int64_t total)
{
    if (!p->when.on || (++p->calls & 4095) != 0 || !pps__progress_due(&p->when))
        return;
    if (total > 0 && done <= total)
        fprintf(stderr, "ppscope import: %s: %lld events (%d%%)\n", p->what, (long long)done,
                (int)(100 * (double)done / (double)total));
    else
        fprintf(stderr, "ppscope import: %s: %lld events\n", p->what, (long long)done);
}

void pps__import_progress_writing(struct pps__import_progress *p, int64_t written, int64_t total)
{
    if (!pps__progress_due(&p->when))
        return;
    fprintf(stderr, "ppscope import: %s: %lld of %lld spans written\n", p->what, (long long)written,
            (long long)total);
}

void pps__import_progress_done(struct pps__import_progress *p, int64_t done)
{
    if (p->when.printed)
        fprintf(stderr, "ppscope import: %s: %lld events, done\n", p->what, (long long)done);
}

/* ---- iterations --------------------------------------------------------------------------- */

int pps__import_iter_cmp(const void *a, const void *b)
{
    const struct pps__import_iter *x = a, *y = b;
    return (x->start > y->start) - (x->start < y->start);
}

int32_t pps__import_iter_at(const struct pps__import_iter *v, size_t n, int64_t t)
{
    size_t lo = 0, hi = n;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (v[mid].start <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0)
        return -1;
    const struct pps__import_iter *k = &v[lo - 1];
    return t < k->end || k->end == INT64_MAX ? k->iter : -1;
}

/* ---- names -------------------------------------------------------------------------------- */

int pps__import_has_word(const char *s, const char *w)
{
    size_t n = strlen(w);
    for (; *s; s++)
        if (!strncasecmp(s, w, n))
            return 1;
    return 0;
}

int pps__import_kernel_is_comm(const char *name, int *kind)
{
    int send, recv;

    *kind = 0;
    if (!pps__import_has_word(name, "nccl"))
        return 0;
    send = pps__import_has_word(name, "send");
    recv = pps__import_has_word(name, "recv");
    if (send != recv)
        *kind = send ? PPS_SPAN_SEND : PPS_SPAN_RECV;
    return 1;
}

/* ---- helpers ------------------------------------------------------------------------------ */

/* Swaps two items of size bytes, through a small buffer. */
static void swap_items(unsigned char *a, unsigned char *b, size_t size)
{
    unsigned char t[64];
    while (size) {
        size_t k = size < sizeof(t) ? size : sizeof(t);
        memcpy(t, a, k);
        memcpy(a, b, k);
        memcpy(b, t, k);
        a += k;
        b += k;
        size -= k;
    }
}

static void sift_down(unsigned char *a, size_t root, size_t n, size_t size,
                      int (*cmp)(const void *, const void *))
{
    for (;;) {
        size_t child = 2 * root + 1;
        if (child >= n)
            return;
        if (child + 1 < n && cmp(a + child * size, a + (child + 1) * size) < 0)
            child++;
        if (cmp(a + root * size, a + child * size) >= 0)
            return;
        swap_items(a + root * size, a + child * size, size);
        root = child;
    }
}

void pps__sort_inplace(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
    unsigned char *a = base;
    size_t i;

    if (n < 2)
        return;
    /* Already sorted is the common case (exports come in time order): one pass to see it. */
    for (i = 1; i < n && cmp(a + (i - 1) * size, a + i * size) <= 0; i++)
        ;
    if (i == n)
        return;
    for (i = n / 2; i-- > 0;)
        sift_down(a, i, n, size, cmp);
    for (i = n - 1; i > 0; i--) {
        swap_items(a, a + i * size, size);
        sift_down(a, 0, i, size, cmp);
    }
}
