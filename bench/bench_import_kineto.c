/*
 * bench_import_kineto.c - how fast `ppscope import` reads a large Kineto trace, and in how much
 * memory, against the raw streaming parse of the same file measured in the same run: the parse
 * alone (kineto_read.c's windows through simdjson, each event read and dropped), then the whole
 * import (records, linking, the shard written), each in a child process of its own so that its
 * peak RSS is its own. The file is kineto_gen's (a GPU trace's mix of events, ~280 bytes each),
 * plain and gzip-compressed.
 *
 * Goals (issue 9): at least 1M events/s from Kineto JSON, and under 100 bytes of peak memory per
 * span kept. Prints the figures, the ratios and MISSED for a goal not met; never fails on a goal.
 *
 * usage: bench_import_kineto KINETO_GEN WORKDIR [MEGABYTES]   (default 1000)
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench_child.h"
#include "import.h"
#include "kineto_json.h"
#include "pps_config.h"

struct result {
    int rc;
    double secs;
    long rss_kb;
    int64_t events, spans;
    char msg[sizeof(((struct pps_err *)0)->msg)];
};

static void parse_only(const char *path, struct result *r)
{
    struct pps__kreader *k = NULL;
    struct pps_err err = {0};
    const struct pps__kev *evs;
    size_t n;
    int rc;

    if ((rc = pps__kreader_open(path, &k, &err)) == 0) {
        while ((rc = pps__kreader_next(k, &evs, &n, &err)) > 0)
            ;
        r->events = k->events;
    }
    pps__kreader_close(k);
    r->rc = rc;
    snprintf(r->msg, sizeof(r->msg), "%s", err.msg);
}

static void import(const char *path, const char *run, struct result *r)
{
    struct pps_import_opts o = {run, 0};
    struct pps_import_stats st = {0};
    struct pps_err err = {0};

    r->rc = pps_import_kineto(&path, 1, &o, &st, &err);
    r->events = st.events_read;
    r->spans = st.spans;
    snprintf(r->msg, sizeof(r->msg), "%s", err.msg);
}

/* What one child measures: the parse alone (what 0) or the whole import into run. */
struct job {
    int what;
    const char *path, *run;
};

static void run_job(const void *arg, void *res)
{
    const struct job *j = arg;

    if (j->what == 0)
        parse_only(j->path, res);
    else
        import(j->path, j->run, res);
}

/* Runs one measurement in a child of its own; its figures come back through a pipe. */
static int measure(int what, const char *path, const char *run, struct result *r)
{
    struct job j = {what, path, run};
    struct bench_cost cost = {0, 0};

    memset(r, 0, sizeof(*r));
    if (bench_in_child(run_job, &j, r, sizeof(*r), &cost) != 0)
        r->rc = -1;
    r->secs = cost.secs;
    r->rss_kb = cost.rss_kb;
    return r->rc;
}

static int run_cmd(const char *gen, const char *path, const char *mb)
{
    pid_t pid = fork();
    int status;
    if (pid == 0) {
        if (!freopen("/dev/null", "w", stdout))
            _exit(127);
        execl(gen, gen, path, mb, (char *)NULL);
        _exit(127);
    }
    return pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
                   WEXITSTATUS(status) == 0
               ? 0
               : -1;
}

static void rm_run(const char *run)
{
    char cmd[1200];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", run);
    if (system(cmd) != 0)
        fprintf(stderr, "bench_import_kineto: cannot remove %s\n", run);
}

int main(int argc, char **argv)
{
    const char *mb = argc > 3 ? argv[3] : "1000";
    char path[2][1024], run[1024];
    int missed = 0;

#if !defined(PPS_HAVE_SIMDJSON) || !defined(PPS_HAVE_ZLIB)
    printf("bench_import_kineto: built without simdjson or zlib: nothing to measure\n");
    return 77;
#endif
    if (argc < 3) {
        fprintf(stderr, "usage: bench_import_kineto KINETO_GEN WORKDIR [MEGABYTES]\n");
        return 2;
    }
    mkdir(argv[2], 0777);
    snprintf(path[0], sizeof(path[0]), "%s/kineto-%s.json", argv[2], mb);
    snprintf(path[1], sizeof(path[1]), "%s/kineto-%s.json.gz", argv[2], mb);
    snprintf(run, sizeof(run), "%s/run", argv[2]);
    for (int i = 0; i < 2; i++) {
        struct stat st;
        if (stat(path[i], &st) != 0 && run_cmd(argv[1], path[i], mb) != 0) {
            fprintf(stderr, "bench_import_kineto: %s could not write %s\n", argv[1], path[i]);
            return 1;
        }
    }
    printf("%-8s %-7s %10s %9s %10s %8s %9s %10s %10s\n", "file", "what", "events", "seconds",
           "Mevents/s", "MB/s", "RSS MB", "spans", "B/span");
    for (int i = 0; i < 2; i++) {
        struct result parse, imp;
        struct stat st;
        double mbytes;

        stat(path[i], &st);
        mbytes = (double)st.st_size / 1e6;
        rm_run(run);
        if (measure(0, path[i], NULL, &parse) != 0 || measure(1, path[i], run, &imp) != 0) {
            fprintf(stderr, "bench_import_kineto: %s: %s%s\n", path[i], parse.msg, imp.msg);
            return 1;
        }
        rm_run(run);
        const char *label = i ? "json.gz" : "json";
        double prate = parse.events / parse.secs, irate = imp.events / imp.secs;
        double per_span = imp.rss_kb * 1024.0 / (double)imp.spans;
        printf("%-8s %-7s %10" PRId64 " %9.2f %10.2f %8.0f %9.1f %10s %10s\n", label, "parse",
               parse.events, parse.secs, prate / 1e6, mbytes / parse.secs, parse.rss_kb / 1024.0,
               "-", "-");
        printf("%-8s %-7s %10" PRId64 " %9.2f %10.2f %8.0f %9.1f %10" PRId64 " %10.1f\n", label,
               "import", imp.events, imp.secs, irate / 1e6, mbytes / imp.secs, imp.rss_kb / 1024.0,
               imp.spans, per_span);
        printf("%-8s import / parse: %.2fx the events/s; the import's peak beyond the parse's: "
               "%.1f bytes per span kept\n",
               label, irate / prate, (imp.rss_kb - parse.rss_kb) * 1024.0 / (double)imp.spans);
        if (irate < 1e6) {
            printf("MISSED: %s import at %.2fM events/s, the goal is 1M\n", label, irate / 1e6);
            missed++;
        }
        if (per_span >= 100) {
            printf("MISSED: %s import peak %.1f bytes per span, the goal is under 100\n", label,
                   per_span);
            missed++;
        }
    }
    printf("%d goal%s missed\n", missed, missed == 1 ? "" : "s");
    return 0;
}
