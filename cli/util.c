/* util.c - error reporting and strict number parsing for the subcommands. */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>

#include "cli.h"
#include "pps_text.h"

/* A message quotes what it refuses (a value out of a run file, a path, an argument): it goes
 * to the terminal through pps_text_put, on one line whatever the value holds. */
int pps_cli_fail(const char *cmd, const struct pps_err *err)
{
    fprintf(stderr, "ppscope %s: ", cmd);
    pps_text_put(stderr, err->msg[0] ? err->msg : "failed");
    fputc('\n', stderr);
    return pps_err_is_input(err->code) ? PPS_EXIT_USAGE : PPS_EXIT_FAIL;
}

int pps_cli_usage_error(const char *cmd, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    fprintf(stderr, "ppscope %s: ", cmd);
    pps_text_put(stderr, msg);
    fprintf(stderr, " (see 'ppscope %s --help')\n", cmd);
    return PPS_EXIT_USAGE;
}

int pps_parse_int(const char *s, long lo, long hi, long *out)
{
    char *end;
    if (!s || !*s)
        return -1;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

int pps_parse_double(const char *s, double lo, double hi, double *out)
{
    char *end;
    if (!s || !*s)
        return -1;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || *end || !(v >= lo && v <= hi))
        return -1;
    *out = v;
    return 0;
}
