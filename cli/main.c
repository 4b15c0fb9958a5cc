/* main.c - the `ppscope` command: dispatches to its subcommands, git style. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "pps_config.h"
#include "pps_text.h"

struct command {
    const char *name;
    int (*fn)(int argc, char **argv);
    const char *summary;
};

static const struct command commands[] = {
    {"run", pps_cmd_run, "run a pipeline (cpu, cuda, or an emulated device) and trace it"},
    {"sim", pps_cmd_sim, "simulate a schedule: predicted timeline, bubble, memory"},
    {"report", pps_cmd_report, "per-stage busy/idle and the bubble of a run, beside the theory"},
    {"merge", pps_cmd_merge, "merge a run's per-rank shards into one portable file"},
    {"gather", pps_cmd_gather,
     "copy the shards each host writes into one run, as they are written"},
    {"import", pps_cmd_import, "Nsight Systems or Kineto traces into a run, to view and report"},
    {"view", pps_cmd_view, "per-stage timelines, live or post-mortem, bubble and flags; A/B"},
    {"export", pps_cmd_export, "a run as Perfetto JSON, SVG, CSV or OpenMetrics"},
    {"compare", pps_cmd_compare, "two runs side by side: B - A, beyond noise, --fail-if gates"},
    {"rebalance", pps_cmd_rebalance, "the --partition that minimises the predicted iteration time"},
    {NULL, NULL, NULL},
};

static void usage(FILE *f)
{
    fprintf(f,
            "usage: ppscope [--version] [--help] <command> [<args>]\n\n"
            "ppscope profiles pipeline-parallel training: schedules, bubbles and their causes.\n\n"
            "commands:\n");
    for (const struct command *c = commands; c->name; c++)
        fprintf(f, "  %-9s %s\n", c->name, c->summary);
    fprintf(f, "\n'ppscope <command> --help' explains a command.\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return PPS_EXIT_USAGE;
    }
    const char *name = argv[1];
    if (!strcmp(name, "--help") || !strcmp(name, "-h") || !strcmp(name, "help")) {
        usage(stdout);
        return PPS_EXIT_OK;
    }
    if (!strcmp(name, "--version")) {
        printf("ppscope %s\n", PPS_VERSION);
        return PPS_EXIT_OK;
    }
    for (const struct command *c = commands; c->name; c++)
        if (!strcmp(name, c->name))
            return c->fn(argc - 1, argv + 1);
    fputs("ppscope: '", stderr);
    pps_text_put(stderr, name);
    fputs("' is not a ppscope command (see 'ppscope --help')\n", stderr);
    return PPS_EXIT_USAGE;
}
