/*
 * cmd_view.c - `ppscope view RUN [RUN_B]`: the terminal UI over a run (live or finished) or two
 * (A/B). tui/ does the work; this file reads the command line and picks the mode.
 */
#include <getopt.h>
#include <langinfo.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "cli.h"
#include "tui.h"

static const char usage_text[] =
    "usage: ppscope view [options] RUN [RUN_B]\n"
    "\n"
    "Per-stage timelines of a run (a directory of per-rank shards, or a merged file), live while\n"
    "it is being written, or of two runs one above the other (A/B, aligned by iteration, with a\n"
    "delta table). Beside them: busy time by kind, idle and wait per stage, the bubble against\n"
    "(p-1)/m, (p-1)/(m+p-1) and the simulator's prediction, the verdict, and flags (stage\n"
    "imbalance, slow links, host contention, communication stalls, a bubble nothing measured\n"
    "explains), the same as 'ppscope report' gives. Press ? for the keys.\n"
    "docs/view.md describes the view.\n"
    "\n"
    "options:\n"
    "  --once            print one frame as plain text on stdout and exit\n"
    "  --size COLSxROWS  the --once frame's size (default: the terminal's, else 120x40)\n"
    "  --keys KEYS       with --once: keys to apply first, as if typed: characters and <left>\n"
    "                    <right> <up> <down> <enter> <tab> <esc> <space> <f1> <home> <end>\n"
    "                    <pgup> <pgdn> (e.g. \"++<right>f\")\n"
    "  --ascii           ASCII only (the default where the locale is not UTF-8)\n"
    "  --no-color        no colours (also when NO_COLOR is set)\n"
    "  --delay SECONDS   how often a live run is re-read (default 0.5)\n"
    "  --max-spans N     spans of each run kept in memory (default 2000000, about 200 MB):\n"
    "                    past it, the oldest whole iterations are dropped, and the view says\n"
    "                    which iterations it holds; 0 keeps all. A finished run that\n"
    "                    'ppscope report' has summarised is opened by those iterations\n"
    "                    alone, read through the index (p and n past them, g and\n"
    "                    G, read the others the same way)\n"
    "  --no-summary      read every run whole, summarised or not\n"
    "  -v, --verbose     with --once: say on stderr how each run was read\n"
    "  -h, --help        show this help\n";

static int parse_size(const char *s, int *cols, int *rows)
{
    char buf[32];
    char *x;
    long c, r;

    if (!s || strlen(s) >= sizeof(buf))
        return -1;
    strcpy(buf, s);
    x = strchr(buf, 'x');
    if (!x)
        return -1;
    *x = '\0';
    if (pps_parse_int(buf, 1, 1000, &c) < 0 || pps_parse_int(x + 1, 1, 1000, &r) < 0)
        return -1;
    *cols = (int)c;
    *rows = (int)r;
    return 0;
}

/* The terminal's size for --once, if stdout is one. */
static void terminal_size(int *cols, int *rows)
{
    struct winsize ws;

    if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0 &&
        ws.ws_row > 0) {
        *cols = ws.ws_col;
        *rows = ws.ws_row;
    }
}

enum {
    OPT_ONCE = 256,
    OPT_ASCII,
    OPT_NO_COLOR,
    OPT_SIZE,
    OPT_KEYS,
    OPT_DELAY,
    OPT_MAX_SPANS,
    OPT_NO_SUMMARY,
};

int pps_cmd_view(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"once", no_argument, NULL, OPT_ONCE},
        {"ascii", no_argument, NULL, OPT_ASCII},
        {"no-color", no_argument, NULL, OPT_NO_COLOR},
        {"no-colour", no_argument, NULL, OPT_NO_COLOR},
        {"size", required_argument, NULL, OPT_SIZE},
        {"keys", required_argument, NULL, OPT_KEYS},
        {"delay", required_argument, NULL, OPT_DELAY},
        {"max-spans", required_argument, NULL, OPT_MAX_SPANS},
        {"no-summary", no_argument, NULL, OPT_NO_SUMMARY},
        {"verbose", no_argument, NULL, 'v'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int c;
    const char *paths[2] = {NULL, NULL}, *keys = NULL, *no_color = getenv("NO_COLOR");
    struct pps_tui_opts opts = {0, 1, 0.5, PPS_TUI_MAX_SPANS, 0, NULL};
    long max_spans;
    struct pps_err err = {0, ""};
    int once = 0, cols = 120, rows = 40, size_given = 0, n_paths = 0, verbose = 0, rc;
    const char *codeset;

    if (no_color && no_color[0])
        opts.color = 0;
    setlocale(LC_CTYPE, "");
    codeset = nl_langinfo(CODESET);
    if (!codeset || (strcmp(codeset, "UTF-8") && strcmp(codeset, "utf8")))
        opts.ascii = 1;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":hv", longopts, NULL)) != -1) {
        switch (c) {
        case 'h':
            fputs(usage_text, stdout);
            return PPS_EXIT_OK;
        case 'v':
            verbose = 1;
            break;
        case OPT_NO_SUMMARY:
            opts.no_summary = 1;
            break;
        case OPT_ONCE:
            once = 1;
            break;
        case OPT_ASCII:
            opts.ascii = 1;
            break;
        case OPT_NO_COLOR:
            opts.color = 0;
            break;
        case OPT_SIZE:
            if (parse_size(optarg, &cols, &rows) < 0)
                return pps_cli_usage_error("view", "--size takes COLSxROWS, e.g. 120x40");
            size_given = 1;
            break;
        case OPT_KEYS:
            keys = optarg;
            break;
        case OPT_DELAY:
            if (pps_parse_double(optarg, 0.01, 3600, &opts.delay_s) < 0)
                return pps_cli_usage_error("view", "--delay takes seconds, 0.01 to 3600");
            break;
        case OPT_MAX_SPANS:
            if (pps_parse_int(optarg, 0, 1000000000, &max_spans) < 0 ||
                (max_spans > 0 && max_spans < 1000))
                return pps_cli_usage_error("view",
                                           "--max-spans takes a count of spans, 1000 to 10^9, or 0 "
                                           "(all)");
            opts.max_spans = (size_t)max_spans;
            break;
        case ':':
            return pps_cli_usage_error("view", "%s needs a value", argv[optind - 1]);
        default:
            return pps_cli_usage_error("view", "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (argc - optind > 2)
        return pps_cli_usage_error("view", "at most two runs (A and B): got a third, '%s'",
                                   argv[optind + 2]);
    for (; optind < argc; optind++)
        paths[n_paths++] = argv[optind];
    if (!n_paths)
        return pps_cli_usage_error("view", "missing RUN (a run directory or a merged file)");
    if (keys && !once)
        return pps_cli_usage_error("view", "--keys goes with --once");
    if (verbose && !once)
        return pps_cli_usage_error("view", "--verbose goes with --once");
    if (verbose)
        opts.log = stderr;
    if (once) {
        if (!size_given)
            terminal_size(&cols, &rows);
        rc = pps_tui_once(paths[0], paths[1], &opts, cols, rows, keys, stdout, &err);
        if (rc == 0 && (fflush(stdout) != 0 || ferror(stdout)))
            rc = pps_err_set(&err, PPS_EIO, "could not write the frame to stdout");
    } else {
        rc = pps_tui_interactive(paths[0], paths[1], &opts, &err);
    }
    return rc < 0 ? pps_cli_fail("view", &err) : PPS_EXIT_OK;
}
