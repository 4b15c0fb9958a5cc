/*
 * cmd_gather.c - `ppscope gather SRC... -o RUN`: the shards that a job's hosts write into
 * directories of their own, copied into one run as they are written (storage.h, pps_gather_*),
 * for `ppscope view RUN` to follow the whole job. docs/cluster.md says where it fits.
 *
 * Runs until every shard found is closed complete or its writer is gone, or until interrupted
 * (Ctrl-C: the copies so far stay, incomplete). Progress on stderr, a line rewritten in place on
 * a terminal; what it wrote in one line on stdout at the end, as merge says.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "pps_text.h"
#include "storage.h"

static volatile sig_atomic_t stop_signal;
static struct pps_gather *volatile gathering; /* for the handler to stop the step it is in */

static void on_signal(int sig)
{
    stop_signal = sig;
    if (gathering)
        pps_gather_stop(gathering);
}

static const char usage[] =
    "usage: ppscope gather [-q] [--interval SECONDS] SRC... -o RUN\n"
    "\n"
    "Copies the per-rank shards of the run directories SRC (one per host: each host's\n"
    "ranks write their shards into a directory on storage local to it) into one new run\n"
    "directory RUN as they are written, so that 'ppscope view RUN' follows the whole job\n"
    "live, and report and merge read it as one run. Rows are copied unchanged and checked\n"
    "as every reader checks them; the sources are only read. Runs until every shard is\n"
    "closed complete or its writer is gone (killed; only a writer on this host can be\n"
    "seen gone), every SRC has appeared and the shards are as many as the job's ranks;\n"
    "a SRC that does not exist yet is waited for, as are shards that appear in it later.\n"
    "Ctrl-C stops it, keeping what was copied (incomplete). docs/cluster.md describes a\n"
    "job on many hosts.\n"
    "\n"
    "options:\n"
    "  -o, --output RUN      the run directory to create (must not exist)\n"
    "  --interval SECONDS    how often the sources are read (default 0.5)\n"
    "  -q, --quiet           no progress, and nothing on stdout on success\n"
    "  -h, --help            this help\n";

static void progress(const struct pps_gather_stats *st, int tty, int last)
{
    char of[32] = "";

    if (st->world > 0)
        snprintf(of, sizeof(of), " of %d", st->world);
    fprintf(stderr, "%sppscope gather: %d%s rank%s (%d complete, %d writer%s gone), %lld spans",
            tty ? "\r" : "", st->shards, of, st->shards == 1 && !of[0] ? "" : "s", st->complete,
            st->gone, st->gone == 1 ? "" : "s", (long long)st->spans);
    if (st->unseen)
        fprintf(stderr, ", %d source%s not there yet", st->unseen, st->unseen == 1 ? "" : "s");
    fputs(tty && !last ? "  " : "\n", stderr);
    fflush(stderr);
}

/* --output and --interval: their values into ctx. */
static int take_out(const char *value, void *ctx)
{
    *(const char **)ctx = value;
    return 0;
}

static int take_interval(const char *value, void *ctx)
{
    char *end;
    double v = strtod(value, &end);

    if (end == value || *end || !(v >= 0.01 && v <= 60))
        return pps_cli_usage_error("gather", "--interval needs seconds, 0.01 to 60");
    *(double *)ctx = v;
    return 0;
}

static void nap(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    nanosleep(&ts, NULL); /* a signal ends it early: the loop then stops */
}

int pps_cmd_gather(int argc, char **argv)
{
    struct pps_err err = {0};
    struct pps_gather *g = NULL;
    struct pps_gather_stats st = {0};
    const char *out = NULL;
    int quiet = 0, rc, ret = PPS_EXIT_OK;
    double interval = 0.5, shown = 0;
    int tty = isatty(STDERR_FILENO);
    const struct pps_cli_opt opts[] = {
        {"output", NULL, take_out, &out, 'o'},
        {"interval", NULL, take_interval, &interval, 0},
        {"quiet", &quiet, NULL, NULL, 'q'},
    };
    const char *const *srcs;
    int n_srcs;

    if ((rc = pps_cli_options("gather", argc, argv, opts, 3, usage)) != 0)
        return rc == PPS_CLI_HELP ? PPS_EXIT_OK : rc;
    srcs = (const char *const *)argv + optind;
    n_srcs = argc - optind;
    if (!n_srcs) {
        ret = pps_cli_usage_error("gather", "which runs? give each host's run directory");
        goto done;
    }
    if (!out || !*out) {
        ret = pps_cli_usage_error("gather", "where to? give -o RUN");
        goto done;
    }
    if (pps_gather_open(srcs, n_srcs, out, &g, &err) != 0) {
        ret = pps_cli_fail("gather", &err);
        goto done;
    }
    gathering = g;
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    for (;;) {
        rc = pps_gather_step(g, &st, &err);
        if (rc < 0) {
            struct pps_err said = err;
            struct stat sb;
            if (!quiet && tty)
                fputc('\n', stderr);
            pps_gather_free(g); /* removes out where nothing was copied */
            g = NULL;
            /* What was copied before stays, a run of its own: say so on the one line. */
            if (stat(out, &sb) == 0)
                pps_err_set(&said, err.code, "%.380s (%.80s keeps what was copied, incomplete)",
                            err.msg, out);
            ret = pps_cli_fail("gather", &said);
            goto done;
        }
        if (rc == 0 || stop_signal) /* done, even when a signal came after the last row */
            break;
        shown += interval;
        if (!quiet && (tty || shown >= 10)) {
            progress(&st, tty, 0);
            shown = 0;
        }
        nap(interval);
    }
    if (!quiet && tty)
        progress(&st, tty, 1); /* ends the line rewritten in place */
    if (rc != 0) {
        int left = st.shards - st.complete - st.gone;
        if (left > 0)
            fprintf(stderr, "ppscope gather: stopped: %d rank%s copied in part, left incomplete\n",
                    left, left == 1 ? "" : "s");
        else
            fprintf(stderr,
                    "ppscope gather: stopped: the %d rank%s found copied whole, while waiting "
                    "for %s\n",
                    st.shards, st.shards == 1 ? "" : "s",
                    st.unseen ? "a source not there yet" : "more of the job's ranks");
        ret = 128 + (int)stop_signal;
    } else if (!quiet) {
        fputs("ppscope gather: wrote ", stdout);
        pps_text_put(stdout, out);
        printf(": %d rank%s, %lld span%s, %lld metrics row%s", st.shards, st.shards == 1 ? "" : "s",
               (long long)st.spans, st.spans == 1 ? "" : "s", (long long)st.metrics,
               st.metrics == 1 ? "" : "s");
        if (st.gone)
            printf(" (%d whose writer is gone: incomplete)", st.gone);
        putchar('\n');
    }
done:
    gathering = NULL;
    pps_gather_free(g);
    return ret;
}
