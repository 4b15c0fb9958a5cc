/*
 * sched_file.c - a schedule file for `ppscope sim` and `ppscope run`: read whole (a regular
 * file, opened without blocking so that a FIFO is refused rather than waited on), parsed
 * (schedule/text_read.c), validated, and any fault said in the file's terms.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "pps_text.h"
#include "sched_file.h"

/* The file at path whole into *text (NUL-terminated) and *len. */
static int read_whole(const char *path, char **text, size_t *len, struct pps_err *err)
{
    struct stat st;
    size_t cap, got = 0;
    char *buf = NULL;
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC), rc = 0;

    if (fd < 0)
        return pps_err_set(err, errno == ENOENT ? PPS_ENOENT : PPS_EINVAL, "%s: %s", path,
                           strerror(errno));
    if (fstat(fd, &st) != 0) {
        rc = pps_err_set(err, PPS_EIO, "%s: %s", path, strerror(errno));
        goto out;
    }
    if (!S_ISREG(st.st_mode)) {
        rc = pps_err_set(err, PPS_EINVAL, "%s: not a regular file (a schedule is a CSV or a grid)",
                         path);
        goto out;
    }
    if ((uintmax_t)st.st_size > PPS_SCHED_FILE_MAX) {
        rc = pps_err_set(err, PPS_EINVAL, "%s: %ju MiB, more than the %u MiB a schedule may have",
                         path, (uintmax_t)st.st_size >> 20, PPS_SCHED_FILE_MAX >> 20);
        goto out;
    }
    cap = (size_t)st.st_size + 1;
    if (!(buf = malloc(cap + 1))) {
        rc = pps_err_set(err, PPS_ENOMEM, "%s: out of memory reading it", path);
        goto out;
    }
    for (;;) {
        ssize_t n = read(fd, buf + got, cap - got);

        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            rc = pps_err_set(err, PPS_EIO, "%s: %s", path, strerror(errno));
            goto out;
        }
        if (n == 0)
            break;
        got += (size_t)n;
        if (got == cap) { /* it grew while being read */
            rc = pps_err_set(err, PPS_EINVAL, "%s: changed while it was read", path);
            goto out;
        }
    }
    buf[got] = '\0';
    *text = buf;
    *len = got;
    buf = NULL;
out:
    free(buf);
    close(fd);
    return rc;
}

/* Prints "ppscope CMD: PATH: " and text on stderr, each line through pps_text_put (the file's
 * bytes never reach the terminal raw). */
static void say(const char *cmd, const char *path, const char *text)
{
    fprintf(stderr, "ppscope %s: ", cmd);
    pps_text_put(stderr, path);
    fputs(": ", stderr);
    for (const char *s = text; *s;) {
        const char *nl = strchr(s, '\n');
        size_t n = nl ? (size_t)(nl - s) : strlen(s);
        char line[1024];

        if (n >= sizeof(line))
            n = sizeof(line) - 1;
        memcpy(line, s, n);
        line[n] = '\0';
        pps_text_put(stderr, line);
        fputc('\n', stderr);
        s = nl ? nl + 1 : s + strlen(s);
    }
}

int pps_cli_sched_file(const char *cmd, const char *path, int how, struct pps_schedule *out)
{
    int notes = (how & PPS_SCHED_FILE_NOTES) && !(how & PPS_SCHED_FILE_QUIET);
    struct pps_sched_text src = PPS_SCHED_TEXT_INIT;
    struct pps_sched_fault fault;
    struct pps_err err = {0, ""};
    char *text = NULL, *explained = NULL;
    size_t len = 0, need;
    int rc;

    *out = (struct pps_schedule)PPS_SCHEDULE_INIT;
    if ((rc = read_whole(path, &text, &len, &err)))
        return how & PPS_SCHED_FILE_QUIET ? PPS_EXIT_USAGE : pps_cli_fail(cmd, &err);
    rc = pps_schedule_read(out, &src, text, len, PPS_SYNTAX_AUTO, &err);
    free(text);
    if (rc) {
        if (rc == PPS_ENOMEM)
            return pps_cli_fail(cmd, &err);
        if (!(how & PPS_SCHED_FILE_QUIET))
            say(cmd, path, err.msg);
        return PPS_EXIT_USAGE;
    }
    if ((rc = pps_schedule_validate(out, &fault, &err))) {
        need = pps_sched_text_explain(&src, out, &fault, err.msg, NULL, 0);
        if (rc == PPS_ENOMEM || !(explained = malloc(need + 1))) {
            pps_sched_text_release(&src);
            pps_schedule_release(out);
            return pps_cli_fail(cmd, &err);
        }
        pps_sched_text_explain(&src, out, &fault, err.msg, explained, need + 1);
        if (!(how & PPS_SCHED_FILE_QUIET))
            say(cmd, path, explained);
        free(explained);
        pps_sched_text_release(&src);
        pps_schedule_release(out);
        return PPS_EXIT_USAGE;
    }
    if (notes && src.skipped)
        fprintf(stderr,
                "ppscope %s: note: %ld communication cells (SEND_F, RECV_B, ...) left out: "
                "ppscope sends each output as it is made and receives it where it is needed\n",
                cmd, src.skipped);
    if (notes && src.overlapped)
        fprintf(stderr,
                "ppscope %s: note: %ld overlapped pairs (OVERLAP_F_B) run as their actions, one "
                "after the other: ppscope does not overlap them\n",
                cmd, src.overlapped);
    pps_sched_text_release(&src);
    return 0;
}
