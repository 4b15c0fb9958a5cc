/* util.c - error reporting and strict number parsing for the subcommands. */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>

#include "cli.h"

int pps_cli_fail(const char *cmd, const struct pps_err *err)
{
    fprintf(stderr, "ppscope %s: %s\n", cmd, err->msg[0] ? err->msg : "failed");
    return pps_err_is_input(err->code) ? PPS_EXIT_USAGE : PPS_EXIT_FAIL;
}

int pps_cli_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "ppscope %s: ", cmd);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, " (see 'ppscope %s --help')\n", cmd);
    va_end(ap);
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
