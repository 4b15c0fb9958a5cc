/*
 * file.c - the table of writers, and an export put on disk whole or not at all.
 *
 * A file is written under a temporary name beside it and renamed onto its own when every byte
 * is out: a full disk, a quota or a killed process leaves the old file (or none) and never half
 * of a new one. Without --force the last step is link(), which fails when the name was taken
 * meanwhile, so not even a race replaces a file the user did not give up.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "export_int.h"

typedef int (*writer_fn)(FILE *f, const struct pps_export_input *in, char *what, size_t len,
                         struct pps_err *err);

static const struct {
    const char *name;
    writer_fn fn;
} writers[PPS_EXPORT_FORMAT_COUNT] = {
    [PPS_EXPORT_PERFETTO] = {"Perfetto JSON", pps_export_perfetto},
    [PPS_EXPORT_SVG] = {"SVG", pps_export_svg},
    [PPS_EXPORT_CSV] = {"CSV", pps_export_csv},
    [PPS_EXPORT_OPENMETRICS] = {"OpenMetrics", pps_export_openmetrics},
};

const char *pps_export_format_name(int format)
{
    return format >= 0 && format < PPS_EXPORT_FORMAT_COUNT ? writers[format].name : "?";
}

int pps_export_write(FILE *f, int format, const struct pps_export_input *in, char *what, size_t len,
                     struct pps_err *err)
{
    if (format < 0 || format >= PPS_EXPORT_FORMAT_COUNT)
        return pps_err_set(err, PPS_EINVAL, "unknown export format %d", format);
    if (!f || !in || !in->run || !in->rep)
        return pps_err_set(err, PPS_EINVAL, "an export needs a stream, a run and its report");
    return writers[format].fn(f, in, what, len, err);
}

/* What a file that cannot be created says about the cause: a path the user can fix (no such
 * directory, no permission, a read-only place), or the system. */
static int create_code(int e)
{
    switch (e) {
    case ENOENT:
    case ENOTDIR:
    case EACCES:
    case EPERM:
    case EROFS:
    case EISDIR:
    case ENAMETOOLONG:
    case ELOOP:
        return PPS_EINVAL;
    default:
        return PPS_EIO;
    }
}

/* Puts tmp in path's place: renamed over it with force, else linked where nothing is (and the
 * temporary name removed). Filesystems without hard links get a rename after a check. */
static int install(const char *tmp, const char *path, int force, struct pps_err *err)
{
    struct stat st;

    if (!force) {
        if (link(tmp, path) == 0) {
            unlink(tmp);
            return 0;
        }
        if (errno == EEXIST)
            return pps_err_set(err, PPS_EINVAL, "%s: exists: use --force to replace it", path);
        if (lstat(path, &st) == 0)
            return pps_err_set(err, PPS_EINVAL, "%s: exists: use --force to replace it", path);
    }
    if (rename(tmp, path) != 0)
        return pps_err_set(err, create_code(errno), "%s: %s", path, strerror(errno));
    return 0;
}

int pps_export_file(const char *path, int format, const struct pps_export_input *in, int force,
                    char *what, size_t len, struct pps_err *err)
{
    struct stat st;
    char *tmp = NULL;
    FILE *f = NULL;
    size_t n;
    int fd, rc = 0;

    if (!path || !path[0])
        return pps_err_set(err, PPS_EINVAL, "no file named for the %s export",
                           pps_export_format_name(format));
    if (lstat(path, &st) == 0) {
        if (!force)
            return pps_err_set(err, PPS_EINVAL, "%s: exists: use --force to replace it", path);
        /* A rename over a device, a FIFO or a link would replace it with a file (as root,
         * /dev/null itself): --force replaces files only. */
        if (!S_ISREG(st.st_mode))
            return pps_err_set(err, PPS_EINVAL,
                               "%s: not a regular file: --force replaces only files", path);
    }
    n = strlen(path) + 32;
    tmp = malloc(n);
    if (!tmp)
        return pps_err_set(err, PPS_ENOMEM, "out of memory");
    snprintf(tmp, n, "%s.tmp.%ld", path, (long)getpid());
    fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0) {
        rc = pps_err_set(err, create_code(errno), "%s: cannot write there: %s", path,
                         strerror(errno));
        free(tmp);
        return rc;
    }
    f = fdopen(fd, "w");
    if (!f) {
        rc = pps_err_set(err, PPS_ENOMEM, "%s: %s", path, strerror(errno));
        close(fd);
        goto out;
    }
    errno = 0;
    rc = pps_export_write(f, format, in, what, len, err);
    if (rc == 0)
        rc = pps__export_finish(f, err);
    if (fclose(f) != 0 && rc == 0)
        rc = pps_err_set(err, PPS_EIO, "write failed: %s", strerror(errno));
    f = NULL;
    if (rc == PPS_EIO) {
        /* The writers say what failed; the file is what the user needs to hear about. */
        char why[sizeof(err->msg)];

        snprintf(why, sizeof(why), "%s", err ? err->msg : "write failed");
        pps_err_set(err, PPS_EIO, "%s: %s (nothing written)", path, why);
    }
    if (rc == 0)
        rc = install(tmp, path, force, err);
out:
    if (rc < 0)
        unlink(tmp);
    free(tmp);
    return rc;
}
