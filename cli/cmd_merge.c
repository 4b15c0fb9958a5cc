/*
 * cmd_merge.c - `ppscope merge RUN -o FILE`: one portable file from a run's per-rank shards.
 *
 * On success it says what it wrote, on stdout, in one line (as nsys export does): a silent
 * success left the user to check that the file holds every rank. --quiet keeps it silent.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "pps_text.h"
#include "storage.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: ppscope merge [--progress | -q] RUN -o FILE\n"
               "\n"
               "Merges the per-rank shards of run directory RUN (rank-*.db) into FILE, one SQLite\n"
               "file that every ppscope command reads like the directory. Ranks, raw times and\n"
               "clock offsets are kept; FILE must not exist. A run still being written merges\n"
               "what its ranks have flushed. Says what it wrote in one line on stdout:\n"
               "  ppscope merge: wrote FILE: 4 ranks, 12345 spans, 40 metrics rows\n"
               "\n"
               "options:\n"
               "  -o, --output FILE   the merged file to create\n"
               "  --progress          progress on stderr, about once a second (the default on a\n"
               "                      terminal)\n"
               "  -q, --quiet         print nothing on success, and no progress\n"
               "  -h, --help          this help\n");
}

int pps_cmd_merge(int argc, char **argv)
{
    struct pps_err err = {0};
    const char *run = NULL, *out = NULL;
    struct pps_run_counts counts;
    int options = 1, quiet = 0, progress = -1;

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (options && (!strcmp(a, "-h") || !strcmp(a, "--help"))) {
            usage(stdout);
            return PPS_EXIT_OK;
        } else if (options && (!strcmp(a, "-o") || !strcmp(a, "--output"))) {
            if (i + 1 >= argc)
                return pps_cli_usage_error("merge", "%s needs a file name", a);
            out = argv[++i];
        } else if (options && !strncmp(a, "--output=", 9)) {
            out = a + 9;
        } else if (options && (!strcmp(a, "-q") || !strcmp(a, "--quiet"))) {
            quiet = 1;
        } else if (options && !strcmp(a, "--progress")) {
            progress = 1;
        } else if (options && !strcmp(a, "--")) {
            options = 0;
        } else if (options && a[0] == '-' && a[1]) {
            return pps_cli_usage_error("merge", "unknown option '%s'", a);
        } else if (!run) {
            run = a;
        } else {
            return pps_cli_usage_error("merge", "one run at a time ('%s' is one too many)", a);
        }
    }
    if (!run)
        return pps_cli_usage_error("merge", "which run? give its directory");
    if (!out || !*out)
        return pps_cli_usage_error("merge", "where to? give -o FILE");
    if (progress < 0)
        progress = !quiet && isatty(STDERR_FILENO);
    if (pps_run_merge_progress(run, out, progress && !quiet, &err) != 0)
        return pps_cli_fail("merge", &err);
    if (quiet)
        return PPS_EXIT_OK;
    /* The counts are read back from the file written, not from the shards: what the line
     * promises is what a reader of FILE will see (counted as the reader reads, keeping none). */
    if (pps_run_count(out, &counts, &err) != 0) {
        struct pps_err back = {0};
        pps_err_set(&back, err.code, "wrote %s, but cannot read it back: %s", out, err.msg);
        return pps_cli_fail("merge", &back);
    }
    fputs("ppscope merge: wrote ", stdout);
    pps_text_put(stdout, out);
    printf(": %d rank%s, %lld span%s, %lld metrics row%s\n", counts.shards,
           counts.shards == 1 ? "" : "s", (long long)counts.spans, counts.spans == 1 ? "" : "s",
           (long long)counts.metrics, counts.metrics == 1 ? "" : "s");
    return PPS_EXIT_OK;
}
