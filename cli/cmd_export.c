/*
 * cmd_export.c - `ppscope export RUN --perfetto FILE --svg FILE --csv FILE --openmetrics FILE`:
 * a run, and what the report says about it, in other programs' formats (export/ writes them;
 * docs/export.md says what each holds). Any combination, at least one. Everything the user
 * gave is checked (flags, the run, the SVG's range, files that exist) before the first file is
 * written, and each file is written whole or not at all.
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "analysis.h"
#include "cli.h"
#include "export.h"
#include "pps_text.h"

/* Each option once: the table drives getopt_long and the help, so they cannot drift. format is
 * the export it names (-1 for the others). */
static const struct export_opt {
    const char *name;
    const char *arg; /* NULL: a flag without an argument */
    int val;
    int format;
    const char *help;
} opts[] = {
    {"perfetto", "FILE", 'P', PPS_EXPORT_PERFETTO,
     "Chrome trace JSON, for ui.perfetto.dev and chrome://tracing"},
    {"svg", "FILE", 'S', PPS_EXPORT_SVG, "the timeline as a picture, with the bubble's figures"},
    {"csv", "FILE", 'C', PPS_EXPORT_CSV, "the spans, one row each"},
    {"openmetrics", "FILE", 'O', PPS_EXPORT_OPENMETRICS,
     "bubble, iteration time and idle in the OpenMetrics text format"},
    {"iter", "N", 'i', -1, "SVG: iteration N (default: the first 3 iterations)"},
    {"from", "MS", 'f', -1, "SVG: from MS milliseconds after the run's first span"},
    {"to", "MS", 't', -1, "SVG: to MS milliseconds after the run's first span"},
    {"force", NULL, 'F', -1, "replace files that exist (default: refuse)"},
    {"help", NULL, 'h', -1, "show this help"},
};
#define N_OPTS ((int)(sizeof(opts) / sizeof(opts[0])))

static void usage(FILE *f)
{
    fputs("usage: ppscope export RUN [--perfetto FILE] [--svg FILE] [--csv FILE]\n"
          "                          [--openmetrics FILE] [--iter N | --from MS --to MS] "
          "[--force]\n"
          "\n"
          "Writes a run (a directory of per-rank shards, or a merged file) and its report in\n"
          "other programs' formats: any of them, at least one. Each file is written whole or not\n"
          "at all. docs/export.md says what each holds and how to open it.\n"
          "\n"
          "options:\n",
          f);
    for (int i = 0; i < N_OPTS; i++) {
        char head[32];

        snprintf(head, sizeof(head), "--%s%s%s", opts[i].name, opts[i].arg ? " " : "",
                 opts[i].arg ? opts[i].arg : "");
        fprintf(f, "  %-20s %s\n", head, opts[i].help);
    }
}

static const struct export_opt *opt_of(int val)
{
    for (int i = 0; i < N_OPTS; i++)
        if (opts[i].val == val)
            return &opts[i];
    return NULL;
}

/* The option that names format's file. */
static const char *format_opt(int format)
{
    for (int i = 0; i < N_OPTS; i++)
        if (opts[i].format == format)
            return opts[i].name;
    return "?";
}

struct export_args {
    const char *run;
    const char *out[PPS_EXPORT_FORMAT_COUNT];
    struct pps_svg_range range;
    int force;
};

/* Parses argv into a; 0, -1 for --help (printed), or PPS_EXIT_USAGE (said). */
static int parse(int argc, char **argv, struct export_args *a)
{
    struct option longopts[N_OPTS + 1];
    const struct export_opt *o;
    int c, n_out = 0;
    long n;

    for (int i = 0; i < N_OPTS; i++)
        longopts[i] = (struct option){opts[i].name, opts[i].arg ? required_argument : no_argument,
                                      NULL, opts[i].val};
    longopts[N_OPTS] = (struct option){NULL, 0, NULL, 0};
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
        o = opt_of(c);
        if (c == ':')
            return pps_cli_usage_error("export", "%s needs a value", argv[optind - 1]);
        if (!o)
            return pps_cli_usage_error("export", "unknown option '%s'", argv[optind - 1]);
        if (o->format >= 0) {
            if (a->out[o->format])
                return pps_cli_usage_error("export", "--%s given twice", o->name);
            a->out[o->format] = optarg;
            n_out++;
        } else if (c == 'i') {
            if (pps_parse_int(optarg, 0, 1L << 30, &n))
                return pps_cli_usage_error("export", "--iter takes an iteration number, got '%s'",
                                           optarg);
            a->range.iter = (int)n;
        } else if (c == 'f' || c == 't') {
            double ms;

            if (pps_parse_double(optarg, 0, 1e12, &ms))
                return pps_cli_usage_error("export", "--%s takes milliseconds from 0 up, got '%s'",
                                           o->name, optarg);
            if (c == 'f')
                a->range.from_ms = ms;
            else
                a->range.to_ms = ms;
        } else if (c == 'F') {
            a->force = 1;
        } else {
            usage(stdout);
            return -1;
        }
    }
    if (argc - optind > 1)
        return pps_cli_usage_error("export", "one run at a time: got '%s' and '%s'", argv[optind],
                                   argv[optind + 1]);
    a->run = optind < argc ? argv[optind] : NULL;
    if (!a->run)
        return pps_cli_usage_error("export", "missing RUN (a run directory or a merged file)");
    if (n_out == 0)
        return pps_cli_usage_error("export", "nothing to export: give --perfetto, --svg, --csv "
                                             "or --openmetrics FILE");
    if (!a->out[PPS_EXPORT_SVG] &&
        (a->range.iter >= 0 || !isnan(a->range.from_ms) || !isnan(a->range.to_ms)))
        return pps_cli_usage_error("export", "--iter, --from and --to choose what --svg draws: "
                                             "give --svg FILE too");
    for (int i = 0; i < PPS_EXPORT_FORMAT_COUNT; i++)
        for (int j = i + 1; j < PPS_EXPORT_FORMAT_COUNT; j++)
            if (a->out[i] && a->out[j] && !strcmp(a->out[i], a->out[j]))
                return pps_cli_usage_error("export", "--%s and --%s name one file, '%s'",
                                           format_opt(i), format_opt(j), a->out[i]);
    return 0;
}

/* Whether path (which exists) is the run's own data: the run when RUN is a file, or a file in
 * RUN's folder (its shards, its summary) when RUN is a folder. --force must not replace either. */
static int in_run(const char *path, const struct stat *out_st, const char *run)
{
    struct stat run_st, dir_st;
    const char *slash = strrchr(path, '/');
    char dir[4096];

    if (stat(run, &run_st) != 0)
        return 0;
    if (!S_ISDIR(run_st.st_mode))
        return out_st->st_dev == run_st.st_dev && out_st->st_ino == run_st.st_ino;
    if (!slash)
        snprintf(dir, sizeof(dir), ".");
    else if (slash == path)
        snprintf(dir, sizeof(dir), "/");
    else
        snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
    return stat(dir, &dir_st) == 0 && dir_st.st_dev == run_st.st_dev &&
           dir_st.st_ino == run_st.st_ino;
}

int pps_cmd_export(int argc, char **argv)
{
    struct export_args a = {.range = PPS_SVG_RANGE_INIT};
    struct pps_run *run = NULL;
    struct pps_report *rep = NULL;
    struct pps_flag_list flags = PPS_FLAG_LIST_INIT;
    struct pps_svg_view view;
    struct pps_export_input in;
    struct pps_err err = {0, ""};
    struct stat st;
    char what[160];
    int rc = parse(argc, argv, &a);

    if (rc)
        return rc < 0 ? PPS_EXIT_OK : rc;
    /* Files that exist are refused before the run is read: a long load then a refusal wastes
     * the user's time. */
    for (int i = 0; i < PPS_EXPORT_FORMAT_COUNT; i++)
        if (a.out[i] && lstat(a.out[i], &st) == 0 && (!a.force || !S_ISREG(st.st_mode))) {
            pps_err_set(&err, PPS_EINVAL,
                        a.force ? "%s: not a regular file: --force replaces only files"
                                : "%s: exists: use --force to replace it",
                        a.out[i]);
            return pps_cli_fail("export", &err);
        } else if (a.out[i] && lstat(a.out[i], &st) == 0 && in_run(a.out[i], &st, a.run)) {
            pps_err_set(&err, PPS_EINVAL,
                        "%s: part of the run being exported (%s): --force does not replace the "
                        "run's own files; write it elsewhere",
                        a.out[i], a.run);
            return pps_cli_fail("export", &err);
        }
    if (pps_run_load(a.run, &run, &err) < 0 || pps_analysis_report(run, &rep, &err) < 0 ||
        pps_analysis_flags(run, rep, &flags, &err) < 0) {
        rc = pps_cli_fail("export", &err);
        goto out;
    }
    in = (struct pps_export_input){run, rep, &flags, NULL};
    if (a.out[PPS_EXPORT_SVG]) {
        if (pps_export_svg_view(run, rep, &a.range, &view, &err) < 0) {
            rc = pps_cli_fail("export", &err);
            goto out;
        }
        in.view = &view;
    }
    for (int i = 0; i < PPS_EXPORT_FORMAT_COUNT; i++) {
        if (!a.out[i])
            continue;
        if (pps_export_file(a.out[i], i, &in, a.force, what, sizeof(what), &err) < 0) {
            rc = pps_cli_fail("export", &err);
            goto out;
        }
        fputs("wrote ", stdout);
        pps_text_put(stdout, a.out[i]);
        printf(": %s, %s\n", pps_export_format_name(i), what);
    }
    rc = PPS_EXIT_OK;
out:
    pps_flag_list_release(&flags);
    pps_report_free(rep);
    pps_run_free(run);
    return rc;
}
