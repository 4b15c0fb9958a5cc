/*
 * cmd_import.c - `ppscope import FILE... -o RUN`: other tools' traces (Nsight Systems SQLite
 * exports, PyTorch profiler / Kineto JSON) into a ppscope run that every other command reads like
 * one ppscope recorded. storage/ does the work (import.h, docs/import.md); this file tells the
 * formats apart, refuses a mix, and says what it wrote in one line, as merge does.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "import.h"
#include "pps_text.h"

static const char usage_text[] =
    "usage: ppscope import [--progress | -q] FILE... -o RUN\n"
    "\n"
    "Imports traces of other tools into RUN, a new run directory (it must not exist, or be\n"
    "empty): one shard per rank, which report, view, merge and export read like a run ppscope\n"
    "recorded. Each FILE is told apart by its content:\n"
    "  - an Nsight Systems SQLite export (nsys export --type sqlite): one rank per process;\n"
    "    give one file per rank, or one file that holds them all\n"
    "  - a PyTorch profiler / Kineto Chrome trace (.json or .json.gz)\n"
    "The files of one import must be of one format. NVTX ranges named like pipeline ops\n"
    "(PyTorch's \"PP:0F3\" labels, ppscope's \"pps:F stage=0 mb=3\") become F, B, W, sends and\n"
    "receives; docs/import.md says what else is kept. Says what it wrote in one line:\n"
    "  ppscope import: wrote RUN: 4 ranks, 12345 spans from 1 Nsight Systems export\n"
    "\n"
    "options:\n"
    "  -o, --output RUN  the run directory to create\n"
    "      --progress    progress on stderr, about once a second (the default on a terminal)\n"
    "  -q, --quiet       print nothing on success, and no progress\n"
    "  -h, --help        show this help\n";

static const char *format_words(int format, int n)
{
    if (format == PPS_IMPORT_NSYS)
        return n == 1 ? "Nsight Systems export" : "Nsight Systems exports";
    return n == 1 ? "Kineto trace" : "Kineto traces";
}

static const char *article(int format)
{
    return format == PPS_IMPORT_NSYS ? "an" : "a";
}

int pps_cmd_import(int argc, char **argv)
{
    enum { OPT_PROGRESS = 256 };
    static const struct option longopts[] = {
        {"output", required_argument, NULL, 'o'},
        {"progress", no_argument, NULL, OPT_PROGRESS},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    struct pps_import_opts o = {0};
    struct pps_import_stats st = {0};
    struct pps_err err = {0};
    const char *out = NULL, *first = NULL;
    int quiet = 0, progress = -1, format = PPS_IMPORT_UNKNOWN, c, n, rc;

    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, "+o:qh", longopts, NULL)) != -1) {
        switch (c) {
        case 'o':
            out = optarg;
            break;
        case OPT_PROGRESS:
            progress = 1;
            break;
        case 'q':
            quiet = 1;
            break;
        case 'h':
            fputs(usage_text, stdout);
            return PPS_EXIT_OK;
        case ':':
            return pps_cli_usage_error("import", "%s needs a value", argv[optind - 1]);
        default:
            return pps_cli_usage_error("import", "unknown option '%s'", argv[optind - 1]);
        }
    }
    /* Options may follow the files too ("import a.sqlite b.sqlite -o run"). */
    const char *files[argc > 0 ? argc : 1];
    n = 0;
    for (int i = optind; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
            if (i + 1 >= argc)
                return pps_cli_usage_error("import", "%s needs a run directory", a);
            out = argv[++i];
        } else if (!strncmp(a, "--output=", 9)) {
            out = a + 9;
        } else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
            quiet = 1;
        } else if (!strcmp(a, "--progress")) {
            progress = 1;
        } else if (!strcmp(a, "--")) {
            for (i++; i < argc; i++)
                files[n++] = argv[i];
        } else if (a[0] == '-' && a[1]) {
            return pps_cli_usage_error("import", "unknown option '%s'", a);
        } else {
            files[n++] = a;
        }
    }
    if (n == 0)
        return pps_cli_usage_error("import", "which files? give one or more traces");
    if (!out || !*out)
        return pps_cli_usage_error("import", "where to? give -o RUN");

    for (int i = 0; i < n; i++) {
        int f = PPS_IMPORT_UNKNOWN;
        if ((rc = pps_import_detect(files[i], &f, &err)) != 0)
            return pps_cli_fail("import", &err);
        if (f == PPS_IMPORT_UNKNOWN) {
            if (!err.msg[0])
                pps_err_set(&err, PPS_EFORMAT, "%s: not a trace ppscope can import", files[i]);
            err.code = PPS_EFORMAT;
            return pps_cli_fail("import", &err);
        }
        if (format != PPS_IMPORT_UNKNOWN && f != format) {
            pps_err_set(&err, PPS_EINVAL,
                        "%s is %s %s but %s is %s %s: import one format at a time", files[i],
                        article(f), format_words(f, 1), first, article(format),
                        format_words(format, 1));
            return pps_cli_fail("import", &err);
        }
        format = f;
        if (!first)
            first = files[i];
        err.msg[0] = '\0';
    }

    o.out_dir = out;
    o.progress = quiet ? 0 : progress >= 0 ? progress : isatty(STDERR_FILENO);
    if (format == PPS_IMPORT_NSYS)
        rc = pps_import_nsys(files, n, &o, &st, &err);
    else
        rc = pps_import_kineto(files, n, &o, &st, &err);
    if (rc != 0)
        return pps_cli_fail("import", &err);
    if (!quiet) {
        fputs("ppscope import: wrote ", stdout);
        pps_text_put(stdout, out);
        printf(": %d rank%s, %lld span%s from %d %s (%lld events read, %lld not kept)\n", st.ranks,
               st.ranks == 1 ? "" : "s", (long long)st.spans, st.spans == 1 ? "" : "s", n,
               format_words(format, n), (long long)st.events_read, (long long)st.skipped);
    }
    return PPS_EXIT_OK;
}
