/*
 * pps_error.h - error codes and the error context every module reports through.
 *
 * Fallible functions return 0 or a negative PPS_E... code; when they take a struct pps_err *,
 * they also leave a one-line, human-readable reason in it ("trace.db: schema version 7 is newer
 * than this ppscope (1)"). A NULL struct pps_err * is allowed and means "no message wanted".
 */
#ifndef PPS_ERROR_H
#define PPS_ERROR_H

#include <stdarg.h>
#include <stdio.h>

enum {
    PPS_OK = 0,
    PPS_EINVAL = -1,    /* bad argument or parameter combination (user input) */
    PPS_ENOMEM = -2,    /* out of memory */
    PPS_EIO = -3,       /* the operating system or SQLite failed to read or write */
    PPS_EFORMAT = -4,   /* not a ppscope trace, truncated or corrupted */
    PPS_EVERSION = -5,  /* written by a newer ppscope */
    PPS_ENOENT = -6,    /* no such file or directory, or an empty run */
    PPS_ESCHEDULE = -7, /* an action list that breaks a rule (counts, order, deadlock) */
    PPS_EPEER = -8,     /* a peer (another stage or rank) died or left */
};

struct pps_err {
    int code;
    char msg[512];
};

/* Records code and a printf-style reason in err (if not NULL); returns code, so callers write
 * `return pps_err_set(err, PPS_EINVAL, "p must be >= 1, got %d", p);`. */
static inline int pps_err_set(struct pps_err *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static inline int pps_err_set(struct pps_err *err, int code, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        err->code = code;
        vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
        va_end(ap);
    }
    return code;
}

/* Whether an error was caused by what the user gave us (exit code 2 in the CLI). */
static inline int pps_err_is_input(int code)
{
    return code == PPS_EINVAL || code == PPS_EFORMAT || code == PPS_EVERSION ||
           code == PPS_ENOENT || code == PPS_ESCHEDULE;
}

#endif
