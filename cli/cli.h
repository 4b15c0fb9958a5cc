/*
 * cli.h - what the `ppscope` subcommands share: their entry points, exit codes, number parsing
 * and a small JSON writer.
 *
 * Exit codes: 0 success, 1 an internal failure (out of memory, I/O the user cannot fix),
 * 2 bad input (flags, files, runs), with a one-line message on stderr.
 */
#ifndef PPS_CLI_H
#define PPS_CLI_H

#include <stdint.h>
#include <stdio.h>

#include "pps_error.h"

#define PPS_EXIT_OK    0
#define PPS_EXIT_FAIL  1
#define PPS_EXIT_USAGE 2

int pps_cmd_sim(int argc, char **argv);
int pps_cmd_report(int argc, char **argv);
int pps_cmd_merge(int argc, char **argv);
int pps_cmd_gather(int argc, char **argv);
int pps_cmd_import(int argc, char **argv);
int pps_cmd_run(int argc, char **argv);
int pps_cmd_view(int argc, char **argv);
int pps_cmd_export(int argc, char **argv);
int pps_cmd_compare(int argc, char **argv);
int pps_cmd_rebalance(int argc, char **argv);

/* Prints "ppscope CMD: message" on stderr and returns the exit code for err's code. The message
 * (and the usage error's) goes through pps_text_put (pps_text.h): a value it quotes from a run
 * file or an argument shows its control bytes as \xNN, on one line. */
int pps_cli_fail(const char *cmd, const struct pps_err *err);
/* Prints "ppscope CMD: <formatted>" and a hint to run --help on stderr; returns PPS_EXIT_USAGE. */
int pps_cli_usage_error(const char *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/*
 * A command's option, once: its name, and what it sets. A switch sets *flag to 1; an option with
 * a value (take non-NULL) hands it to take(value, ctx), which returns 0 or an exit code, having
 * said why on stderr.
 */
struct pps_cli_opt {
    const char *name;
    int *flag;
    int (*take)(const char *value, void *ctx);
    void *ctx;
    char letter; /* its short form (-o), or 0 for none */
};
/*
 * Parses argv's options for cmd from the n entries of opts and --help (-h): returns 0 with optind
 * at the first operand; PPS_CLI_HELP after printing usage on stdout for --help (the command then
 * exits 0); an exit code after one line on stderr for an unknown option or a missing value, or
 * what a take returned.
 */
#define PPS_CLI_HELP (-1)
int pps_cli_options(const char *cmd, int argc, char **argv, const struct pps_cli_opt *opts, int n,
                    const char *usage);

/* Strict number parsing of a whole string: 0 on success, -1 otherwise. */
int pps_parse_int(const char *s, long lo, long hi, long *out);
int pps_parse_double(const char *s, double lo, double hi, double *out);

/* A streaming JSON writer: objects and arrays nest, commas are placed for you. Strings come out
 * valid whatever they hold: control characters as \u00XX (C1 and DEL too), a byte that does not
 * start a valid UTF-8 sequence as U+FFFD. */
struct pps_json {
    FILE *f;
    int depth;
    int need_comma[32];
};

void pps_json_init(struct pps_json *j, FILE *f);
void pps_json_begin_object(struct pps_json *j, const char *key); /* key NULL inside arrays */
void pps_json_end_object(struct pps_json *j);
void pps_json_begin_array(struct pps_json *j, const char *key);
void pps_json_end_array(struct pps_json *j);
void pps_json_string(struct pps_json *j, const char *key, const char *value);
void pps_json_int(struct pps_json *j, const char *key, int64_t value);
/* Doubles print with up to 6 significant digits ("%.6g"); NaN and infinities as null. */
void pps_json_double(struct pps_json *j, const char *key, double value);
void pps_json_bool(struct pps_json *j, const char *key, int value);
void pps_json_null(struct pps_json *j, const char *key);
/* Ends the document with a newline. */
void pps_json_finish(struct pps_json *j);

#endif
