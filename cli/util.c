/* util.c - error reporting and strict number parsing for the subcommands. */
#include <errno.h>
#include <getopt.h>
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

int pps_cli_options(const char *cmd, int argc, char **argv, const struct pps_cli_opt *opts, int n,
                    const char *usage)
{
    struct option longopts[33];
    char shorts[2 + 31 * 2 + 1] = ":h";
    size_t ns = 2;
    int c;

    if (n > 31)
        n = 31;
    for (int i = 0; i < n; i++) {
        longopts[i] = (struct option){opts[i].name, opts[i].take ? required_argument : no_argument,
                                      NULL, 256 + i};
        if (opts[i].letter) {
            shorts[ns++] = opts[i].letter;
            if (opts[i].take)
                shorts[ns++] = ':';
        }
    }
    shorts[ns] = '\0';
    longopts[n] = (struct option){"help", no_argument, NULL, 'h'};
    longopts[n + 1] = (struct option){NULL, 0, NULL, 0};
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, shorts, longopts, NULL)) != -1) {
        const struct pps_cli_opt *o = c >= 256 && c < 256 + n ? &opts[c - 256] : NULL;
        int rc;

        for (int i = 0; i < n && !o && c > 0 && c < 256 && c != 'h'; i++)
            if (opts[i].letter == c)
                o = &opts[i];
        if (c == 'h') {
            fputs(usage, stdout);
            return PPS_CLI_HELP;
        }
        if (c == ':')
            return pps_cli_usage_error(cmd, "option '%s' needs a value", argv[optind - 1]);
        if (!o)
            return pps_cli_usage_error(cmd, "unknown option '%s'", argv[optind - 1]);
        if (!o->take)
            *o->flag = 1;
        else if ((rc = o->take(optarg, o->ctx)) != 0)
            return rc;
    }
    return 0;
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
