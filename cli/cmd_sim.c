/*
 * cmd_sim.c - `ppscope sim`: the predicted timeline, bubble and memory of one or more schedules
 * under given op costs, as text or JSON, and optionally written as a run in the trace store so
 * every report and viewer works on predictions as on measurements.
 */
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "pps_text.h"
#include "sched_file.h"
#include "sim_from.h"
#include "sim_text.h"
#include "sim_trace.h"

#define MAX_SCHEDULES 8

struct sim_opts {
    int kinds[MAX_SCHEDULES];
    int n_kinds;
    int p, m, v;
    double tf, tb, tw, tcomm, topt, w_mem;
    const char *stage_mult; /* "1.2,1,1,1.3" */
    int json, actions, width, iters;
    double unit_ns;
    const char *trace;
    /* --from RUN: the run's costs, not these; what was said on the command line. */
    const char *from;
    double w_share;
    int kinds_given, p_given, m_given, v_given;
    /* zb-auto's limit of live microbatches a stage; 0: p */
    int mem_limit;
    const char *cost_opt; /* the first option that sets a cost or the trace, for --from */
    /* --schedule-file F: a user's schedule, simulated first; --csv, --grid: the schedule alone,
     * written as PyTorch's pipeline-order CSV or as ppscope's grid */
    const char *sched_file;
    int csv, grid;
};

static void usage(FILE *f)
{
    fprintf(f,
            "usage: ppscope sim --schedule S[,S...] [-p P] [-m M] [-v V] [options]\n"
            "       ppscope sim --schedule-file F [--schedule S[,S...]] [options]\n"
            "\n"
            "Simulates pipeline schedules: each stage runs its actions in order, each action as\n"
            "soon as its stage is free and its inputs have arrived. Prints the predicted\n"
            "timeline, makespan, bubble (idle over the iteration), the steady-state bubble when\n"
            "iterations run back to back without an optimizer barrier, peak activations, and\n"
            "each stage's idle by phase: warm-up (to its first backward), steady (to its last\n"
            "forward), cool-down (to its last op) and the optimizer barrier (docs/analysis.md).\n"
            "\n"
            "  -s, --schedule S    " PPS_SCHED_NAMES ";\n"
            "                      a comma list compares them (default 1f1b)\n"
            "      --schedule-file F  a schedule of your own: PyTorch pipelining's\n"
            "                      pipeline-order CSV (a row per rank: 0F0,1I3,2W1,3B0, empty\n"
            "                      cells idle) or ppscope's grid (what --grid prints); p, m\n"
            "                      and v are the file's; with --schedule, compared with those\n"
            "  -p P                pipeline stages (default 4)\n"
            "  -m M                microbatches per iteration (default 8)\n"
            "  -v V                model chunks per stage, interleaved and interleaved-zb only\n"
            "                      (default 2 there)\n"
            "      --tf T          forward time of one microbatch through a stage (default 1)\n"
            "      --tb T          input-gradient backward time (default 1)\n"
            "      --tw T          weight-gradient backward time (default 1); unsplit\n"
            "                      schedules run B and W fused, taking tb + tw\n"
            "      --tcomm T       latency added to every dependency between stages (default 0)\n"
            "      --topt T        optimizer step time (default 0)\n"
            "      --stage-mult L  per-stage cost multipliers, e.g. 1.3,1,1,1.2 (imbalance)\n"
            "      --w-mem F       share of a microbatch's activations W still needs after B\n"
            "                      (default 0.5)\n"
            "      --mem-limit K   zb-auto: at most K live microbatches a stage, each live from\n"
            "                      its F to its W (ZB-H1 holds p, ZB-H2 2p-1; default p); zb-auto\n"
            "                      is built for the costs given here (or the run's, with --from)\n"
            "      --actions       also print each stage's action list (the grid)\n"
            "      --csv           print only the schedule, as PyTorch's pipeline-order CSV\n"
            "                      (each action in the column of the step it runs in when\n"
            "                      every action takes one step); --schedule-file reads it back\n"
            "      --grid          print only the schedule, as ppscope's grid\n"
            "      --width N       timeline columns (default: terminal width or 100)\n"
            "      --json          print figures as JSON instead of text\n"
            "      --trace DIR     write the prediction as a run (DIR/<schedule> when several)\n"
            "      --iters N       iterations written by --trace (default 1)\n"
            "      --unit-ns N     nanoseconds per time unit in the trace (default 1000000)\n"
            "      --from RUN      what-if: RUN's own measured per-stage costs, per-op overhead,\n"
            "                      message time and optimizer step, replayed under the schedules\n"
            "                      (default: every one that fits) and -p, -m, -v asked (default:\n"
            "                      the run's), ranked by predicted iteration time against the\n"
            "                      run's own schedule predicted from the same costs; with\n"
            "                      --schedule-file, that schedule too (alone, unless --schedule)\n"
            "      --w-share F     with --from: W's share of a fused BW for the schedules that\n"
            "                      split B and W, when the run did not (default 0.5)\n"
            "  -h, --help          show this help\n"
            "\n"
            "Times are in any unit you like; all of them in the same one. With --from they are\n"
            "the run's, and another -m keeps the batch (each microbatch costs m_run/m of the\n"
            "run's); another -p spreads the run's work evenly over the new stages.\n"
            "Example: ppscope sim --from runs/1f1b --schedule zb-h1,zb-h2\n"
            "         ppscope sim --schedule zb-v -p 4 -m 8 --csv > zbv.csv\n"
            "         ppscope sim --schedule-file zbv.csv --schedule zb-h1,1f1b\n");
}

static int parse_kinds(struct sim_opts *o, const char *list)
{
    char buf[256];
    if (strlen(list) >= sizeof(buf))
        return pps_cli_usage_error("sim", "--schedule list too long");
    strcpy(buf, list);
    o->n_kinds = 0;
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        int k = pps_sched_kind_parse(tok);
        if (k < 0)
            return pps_cli_usage_error("sim", "unknown schedule '%s' (" PPS_SCHED_NAMES ")", tok);
        if (o->n_kinds == MAX_SCHEDULES)
            return pps_cli_usage_error("sim", "at most %d schedules at once", MAX_SCHEDULES);
        o->kinds[o->n_kinds++] = k;
    }
    if (!o->n_kinds)
        return pps_cli_usage_error("sim", "--schedule needs a name");
    return 0;
}

static int default_width(void)
{
    const char *cols = getenv("COLUMNS");
    long w;
    if (cols && !pps_parse_int(cols, 20, 10000, &w))
        return (int)w - 10;
    return 100;
}

enum {
    OPT_TF = 256,
    OPT_TB,
    OPT_TW,
    OPT_TCOMM,
    OPT_TOPT,
    OPT_MULT,
    OPT_WMEM,
    OPT_ACTIONS,
    OPT_WIDTH,
    OPT_JSON,
    OPT_TRACE,
    OPT_ITERS,
    OPT_UNIT,
    OPT_FROM,
    OPT_WSHARE,
    OPT_MEMLIMIT,
    OPT_SCHEDFILE,
    OPT_CSV,
    OPT_GRID
};

/* The schedules o asks for: the file's, and those named (1f1b where nothing is). */
static int n_schedules(const struct sim_opts *o)
{
    return (o->sched_file != NULL) + (o->kinds_given ? o->n_kinds : !o->sched_file);
}

static int parse_args(struct sim_opts *o, int argc, char **argv)
{
    static const struct option longopts[] = {
        {"schedule", required_argument, NULL, 's'},
        {"tf", required_argument, NULL, OPT_TF},
        {"tb", required_argument, NULL, OPT_TB},
        {"tw", required_argument, NULL, OPT_TW},
        {"tcomm", required_argument, NULL, OPT_TCOMM},
        {"topt", required_argument, NULL, OPT_TOPT},
        {"stage-mult", required_argument, NULL, OPT_MULT},
        {"w-mem", required_argument, NULL, OPT_WMEM},
        {"actions", no_argument, NULL, OPT_ACTIONS},
        {"width", required_argument, NULL, OPT_WIDTH},
        {"json", no_argument, NULL, OPT_JSON},
        {"trace", required_argument, NULL, OPT_TRACE},
        {"iters", required_argument, NULL, OPT_ITERS},
        {"unit-ns", required_argument, NULL, OPT_UNIT},
        {"from", required_argument, NULL, OPT_FROM},
        {"w-share", required_argument, NULL, OPT_WSHARE},
        {"mem-limit", required_argument, NULL, OPT_MEMLIMIT},
        {"schedule-file", required_argument, NULL, OPT_SCHEDFILE},
        {"csv", no_argument, NULL, OPT_CSV},
        {"grid", no_argument, NULL, OPT_GRID},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int v_given = 0, c, rc;
    long n;
    double *dst;
    opterr = 0;
    optind = 1;
    int li = -1;
    while ((c = getopt_long(argc, argv, ":s:p:m:v:h", longopts, &li)) != -1) {
        if (!o->cost_opt && c >= OPT_TF && c <= OPT_UNIT && c != OPT_JSON && li >= 0)
            o->cost_opt = longopts[li].name;
        li = -1;
        switch (c) {
        case 's':
            if ((rc = parse_kinds(o, optarg)))
                return rc;
            o->kinds_given = 1;
            break;
        case OPT_FROM:
            o->from = optarg;
            break;
        case OPT_SCHEDFILE:
            o->sched_file = optarg;
            break;
        case OPT_CSV:
            o->csv = 1;
            break;
        case OPT_GRID:
            o->grid = 1;
            break;
        case OPT_WSHARE:
            if (pps_parse_double(optarg, 0, 1, &o->w_share))
                return pps_cli_usage_error("sim", "--w-share needs a number in [0, 1], got '%s'",
                                           optarg);
            break;
        case OPT_MEMLIMIT:
            if (pps_parse_int(optarg, PPS_ZB_AUTO_MIN_LIMIT, 1 << 20, &n))
                return pps_cli_usage_error("sim",
                                           "--mem-limit needs an integer >= %d (live microbatches "
                                           "a stage, F to W; %d is the least any schedule runs "
                                           "in), got '%s'",
                                           PPS_ZB_AUTO_MIN_LIMIT, PPS_ZB_AUTO_MIN_LIMIT, optarg);
            o->mem_limit = (int)n;
            break;
        case 'p':
        case 'm':
        case 'v':
            if (pps_parse_int(optarg, 1, 1 << 20, &n))
                return pps_cli_usage_error("sim", "-%c needs a positive integer, got '%s'", c,
                                           optarg);
            *(c == 'p' ? &o->p : c == 'm' ? &o->m : &o->v) = (int)n;
            v_given |= c == 'v';
            o->p_given |= c == 'p';
            o->m_given |= c == 'm';
            break;
        case OPT_TF:
        case OPT_TB:
        case OPT_TW:
        case OPT_TCOMM:
        case OPT_TOPT:
        case OPT_UNIT:
            dst = c == OPT_TF      ? &o->tf
                  : c == OPT_TB    ? &o->tb
                  : c == OPT_TW    ? &o->tw
                  : c == OPT_TCOMM ? &o->tcomm
                  : c == OPT_TOPT  ? &o->topt
                                   : &o->unit_ns;
            if (pps_parse_double(optarg, 0, 1e12, dst))
                return pps_cli_usage_error("sim", "--%s needs a number from 0 to 1e12, got '%s'",
                                           c == OPT_TF      ? "tf"
                                           : c == OPT_TB    ? "tb"
                                           : c == OPT_TW    ? "tw"
                                           : c == OPT_TCOMM ? "tcomm"
                                           : c == OPT_TOPT  ? "topt"
                                                            : "unit-ns",
                                           optarg);
            break;
        case OPT_WMEM:
            if (pps_parse_double(optarg, 0, 1, &o->w_mem))
                return pps_cli_usage_error("sim", "--w-mem needs a number in [0, 1], got '%s'",
                                           optarg);
            break;
        case OPT_MULT:
            o->stage_mult = optarg;
            break;
        case OPT_ACTIONS:
            o->actions = 1;
            break;
        case OPT_WIDTH:
            if (pps_parse_int(optarg, 10, 100000, &n))
                return pps_cli_usage_error("sim", "--width needs an integer >= 10, got '%s'",
                                           optarg);
            o->width = (int)n;
            break;
        case OPT_JSON:
            o->json = 1;
            break;
        case OPT_TRACE:
            o->trace = optarg;
            break;
        case OPT_ITERS:
            if (pps_parse_int(optarg, 1, 100000, &n))
                return pps_cli_usage_error("sim", "--iters needs an integer >= 1, got '%s'",
                                           optarg);
            o->iters = (int)n;
            break;
        case 'h':
            usage(stdout);
            return -1;
        case ':':
            return pps_cli_usage_error("sim", "%s needs a value", argv[optind - 1]);
        default:
            return pps_cli_usage_error("sim", "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind < argc)
        return pps_cli_usage_error("sim", "unexpected argument '%s'", argv[optind]);
    o->v_given = v_given;
    if (o->csv + o->grid + o->json > 1)
        return pps_cli_usage_error("sim", "--csv, --grid and --json: one output at a time");
    if ((o->csv || o->grid) && (o->trace || o->from || o->actions))
        return pps_cli_usage_error("sim", "--%s prints the schedule alone: not with --%s",
                                   o->csv ? "csv" : "grid",
                                   o->trace  ? "trace"
                                   : o->from ? "from"
                                             : "actions");
    if ((o->csv || o->grid) && n_schedules(o) > 1)
        return pps_cli_usage_error("sim", "--%s prints one schedule: name one",
                                   o->csv ? "csv" : "grid");
    if (o->from && o->cost_opt)
        return pps_cli_usage_error("sim", "--%s and --from: with --from the costs are the run's",
                                   o->cost_opt);
    if (o->mem_limit && !(o->from && !o->kinds_given)) {
        int any = 0;

        for (int k = 0; k < o->n_kinds; k++)
            any |= o->kinds[k] == PPS_SCHED_ZB_AUTO;
        if (!any)
            return pps_cli_usage_error("sim", "--mem-limit is zb-auto's: add it to --schedule");
    }
    if (!v_given)
        for (int k = 0; k < o->n_kinds; k++)
            if (o->kinds[k] == PPS_SCHED_INTERLEAVED || o->kinds[k] == PPS_SCHED_INTERLEAVED_ZB)
                o->v = 2;
    if (o->unit_ns <= 0)
        return pps_cli_usage_error("sim", "--unit-ns must be > 0");
    return 0;
}

/* Costs for o's stage count, multipliers applied. */
static int make_costs(const struct sim_opts *o, struct pps_sim_costs *c)
{
    if (pps_sim_costs_init(c, o->p, o->tf, o->tb, o->tw))
        return PPS_ENOMEM;
    c->tcomm = o->tcomm;
    c->topt = o->topt;
    c->w_mem = o->w_mem;
    if (!o->stage_mult)
        return 0;
    const char *s = o->stage_mult;
    for (int k = 0; k < o->p; k++) {
        char *end;
        double x = strtod(s, &end);
        if (end == s || !(x > 0 && x < 1e6) || (*end != ',' && *end != '\0') ||
            (*end == '\0' && k != o->p - 1)) {
            pps_sim_costs_release(c);
            return pps_cli_usage_error("sim",
                                       "--stage-mult needs %d positive numbers separated by "
                                       "commas, got '%s'",
                                       o->p, o->stage_mult);
        }
        c->tf[k] *= x;
        c->tb[k] *= x;
        c->tw[k] *= x;
        s = *end ? end + 1 : end;
    }
    if (*s) {
        pps_sim_costs_release(c);
        return pps_cli_usage_error("sim", "--stage-mult has more than p=%d numbers", o->p);
    }
    return 0;
}

struct sim_case {
    int kind, v; /* kind -1: the schedule file's */
    struct pps_schedule sched;
    struct pps_sim_result res;
};

/* The case's name as printed: its kind's, or "custom (FILE)". */
static void case_name(const struct sim_opts *o, const struct sim_case *sc, char *buf, size_t len)
{
    if (sc->kind < 0 && o->sched_file)
        snprintf(buf, len, "custom (%s)", o->sched_file);
    else
        snprintf(buf, len, "%s", pps_sched_kind_name(sc->kind));
}

/* The schedule file's schedule into o's shape: p, m and v are the file's, and -p, -m, -v that say
 * otherwise are refused. 0 or an exit code, said. */
static int load_file(struct sim_opts *o, struct pps_schedule *sched)
{
    int rc = pps_cli_sched_file("sim", o->sched_file, o->json ? 0 : PPS_SCHED_FILE_NOTES, sched);

    if (rc)
        return rc;
    if ((o->p_given && o->p != sched->p) || (o->m_given && o->m != sched->m) ||
        (o->v_given && o->v != sched->v && !o->kinds_given)) {
        rc = pps_cli_usage_error("sim", "%s holds p=%d, m=%d, v=%d: -p, -m and -v may only say so",
                                 o->sched_file, sched->p, sched->m, sched->v);
        pps_schedule_release(sched);
        return rc;
    }
    o->p = sched->p;
    o->m = sched->m;
    return 0;
}

/* The one schedule, alone, as --csv or --grid asks. */
static int print_schedule(const struct sim_opts *o, const struct pps_schedule *sched)
{
    size_t need =
        o->csv ? pps_schedule_write_csv(sched, NULL, 0) : pps_schedule_write_grid(sched, NULL, 0);
    char *buf = malloc(need + 1);

    if (!buf) {
        fprintf(stderr, "ppscope sim: out of memory\n");
        return PPS_EXIT_FAIL;
    }
    if (o->csv)
        pps_schedule_write_csv(sched, buf, need + 1);
    else
        pps_schedule_write_grid(sched, buf, need + 1);
    fputs(buf, stdout);
    free(buf);
    return 0;
}

/* The v of the theory (p-1)/(v*m+p-1): the chunks where they loop round the stages, 1 in V
 * (pps_report_theory_v()'s rule). */
static int theory_v(const struct sim_case *sc)
{
    return sc->sched.placement == PPS_PLACE_V ? 1 : sc->v;
}

/* The stages' idle in phase ph over (p * makespan): the four add up to the bubble. */
static double phase_bubble(const struct pps_sim_result *r, int ph)
{
    double idle = 0;

    for (int s = 0; s < r->p; s++)
        idle += r->phase_idle[(size_t)s * PPS_PHASE_COUNT + (size_t)ph];
    return r->makespan > 0 ? idle / (r->p * r->makespan) : 0.0;
}

/* The zero-bubble theory's idle per stage (pps_zb_theory_idle), where it holds: the same costs
 * on every stage and no message time; else NaN. */
static double zb_theory_idle(const struct sim_opts *o, const struct sim_case *sc, int *steady)
{
    if (o->stage_mult || o->tcomm != 0)
        return NAN;
    return pps_zb_theory_idle(sc->kind, sc->sched.p, sc->sched.m, sc->v, o->tf, o->tb, o->tw,
                              steady);
}

static void json_case(struct pps_json *j, const struct sim_opts *o, const struct sim_case *sc,
                      const struct pps_sim_costs *c)
{
    int p = sc->sched.p;
    pps_json_string(j, "schedule", pps_sched_kind_name(sc->kind));
    if (sc->kind < 0)
        pps_json_string(j, "schedule_file", o->sched_file);
    pps_json_int(j, "p", p);
    pps_json_int(j, "m", sc->sched.m);
    pps_json_int(j, "v", sc->v);
    pps_json_begin_object(j, "costs");
    pps_json_double(j, "tf", o->tf);
    pps_json_double(j, "tb", o->tb);
    pps_json_double(j, "tw", o->tw);
    pps_json_double(j, "tcomm", c->tcomm);
    pps_json_double(j, "topt", c->topt);
    pps_json_double(j, "w_mem", c->w_mem);
    pps_json_end_object(j);
    pps_json_double(j, "makespan", sc->res.makespan);
    pps_json_double(j, "bubble", sc->res.bubble);
    pps_json_double(j, "steady_period", sc->res.steady_period);
    pps_json_double(j, "steady_bubble", sc->res.steady_bubble);
    pps_json_double(j, "bubble_quoted", pps_bubble_quoted(p, sc->sched.m));
    pps_json_double(j, "bubble_exact", pps_bubble_exact(p, sc->sched.m, theory_v(sc)));
    pps_json_double(j, "zero_bubble_theory_idle", zb_theory_idle(o, sc, NULL));
    if (sc->kind == PPS_SCHED_ZB_AUTO) {
        pps_json_int(j, "mem_limit", o->mem_limit ? o->mem_limit : p);
        pps_json_int(j, "live_peak", pps_schedule_live_peak(&sc->sched));
    }
    pps_json_begin_array(j, "peak_activations");
    for (int s = 0; s < p; s++)
        pps_json_double(j, NULL, sc->res.peak_act[s]);
    pps_json_end_array(j);
    pps_json_begin_array(j, "stages");
    for (int s = 0; s < p; s++) {
        pps_json_begin_object(j, NULL);
        pps_json_int(j, "stage", s);
        pps_json_double(j, "busy", sc->res.busy[s]);
        pps_json_double(j, "idle", sc->res.idle[s]);
        pps_json_double(j, "idle_frac",
                        sc->res.makespan > 0 ? sc->res.idle[s] / sc->res.makespan : 0);
        pps_json_double(j, "peak_activations", sc->res.peak_act[s]);
        pps_json_begin_object(j, "phase_idle");
        for (int ph = 0; ph < PPS_PHASE_COUNT; ph++)
            pps_json_double(j, pps_phase_name(ph),
                            sc->res.phase_idle[(size_t)s * PPS_PHASE_COUNT + (size_t)ph]);
        pps_json_end_object(j);
        pps_json_end_object(j);
    }
    pps_json_end_array(j);
    pps_json_begin_object(j, "phase_bubble");
    for (int ph = 0; ph < PPS_PHASE_COUNT; ph++)
        pps_json_double(j, pps_phase_name(ph), phase_bubble(&sc->res, ph));
    pps_json_end_object(j);
}

/* DeepSeek-V3's Table 2 for DualPipeV beside what this simulator's F-then-BW pairs give
 * (schedule.h, pps_zb_theory_idle): PP = 2p chunks, each op a chunk's, half a stage's cost. */
static void dualpipev_theory(FILE *f, const struct sim_opts *o, const struct sim_case *sc,
                             double idle)
{
    int p = sc->sched.p;
    double F = o->tf / 2, B = (o->tb + o->tw) / 2, W = o->tw / 2;

    fprintf(f,
            "DeepSeek-V3 Table 2: (PP/2-1)(F&B+B-3W) = %g idle per stage for PP = %d chunks "
            "(F=%g B=%g W=%g, F&B = F+B: no overlap), at PP+1 = %d chunk activations (%g "
            "microbatches through a stage)\n",
            (p - 1) * (F + B + B - 3 * W), 2 * p, F, B, W, 2 * p + 1, p + 0.5);
    fprintf(f,
            "  here F then BW: the forward's activation leaves before the backward, %s = %g "
            "idle per stage\n",
            pps_zb_theory_formula(sc->kind), idle);
}

static void zb_theory(FILE *f, const struct sim_opts *o, const struct sim_case *sc)
{
    int p = sc->sched.p, steady = 0;
    double idle = zb_theory_idle(o, sc, &steady);

    if (isnan(idle))
        return;
    if (sc->kind == PPS_SCHED_ZB_V)
        fprintf(f,
                "zero-bubble theory: zb-v idles 0 in the steady state (tF = tB = tW, m >= "
                "2p-1), at 1F1B's peak activations (%d microbatches through a stage)\n",
                p);
    else if (sc->kind == PPS_SCHED_DUALPIPEV)
        dualpipev_theory(f, o, sc, idle);
    else
        fprintf(f, "zero-bubble theory: %s = %g idle per stage%s\n",
                pps_zb_theory_formula(sc->kind), idle, steady ? " in the steady state" : "");
}

static void text_case(FILE *f, const struct sim_opts *o, const struct sim_case *sc)
{
    const struct pps_sim_result *r = &sc->res;
    int p = sc->sched.p, m = sc->sched.m;
    char name[512];

    case_name(o, sc, name, sizeof(name));
    pps_text_put(f, name);
    fprintf(f, "  p=%d m=%d v=%d%s  tF=%g tB=%g tW=%g tcomm=%g topt=%g\n", p, m, sc->v,
            sc->sched.placement == PPS_PLACE_V ? " (placed in V)" : "", o->tf, o->tb, o->tw,
            o->tcomm, o->topt);
    pps_sim_text_timeline(f, &sc->sched, r, o->width, o->topt);
    if (o->actions) {
        size_t need = pps_schedule_write_grid(&sc->sched, NULL, 0);
        char *buf = malloc(need + 1);
        if (buf) {
            pps_schedule_write_grid(&sc->sched, buf, need + 1);
            fprintf(f, "actions:\n%s", buf);
            free(buf);
        }
    }
    fprintf(f, "makespan %g   bubble %.1f%%   steady-state bubble %.1f%% (period %g)\n",
            r->makespan, 100 * r->bubble, 100 * r->steady_bubble, r->steady_period);
    fprintf(f, "theory: (p-1)/m = %.1f%%   (p-1)/(%sm+p-1) = %.1f%%\n",
            100 * pps_bubble_quoted(p, m), theory_v(sc) > 1 ? "v*" : "",
            100 * pps_bubble_exact(p, m, theory_v(sc)));
    zb_theory(f, o, sc);
    if (sc->kind == PPS_SCHED_ZB_AUTO)
        fprintf(f,
                "zb-auto: built for these costs, at most %d live microbatches a stage (F to W); "
                "it holds %d\n",
                o->mem_limit ? o->mem_limit : p, pps_schedule_live_peak(&sc->sched));
    fprintf(f, "stage      busy      idle   idle%%  peak act\n");
    for (int s = 0; s < p; s++)
        fprintf(f, "%5d %9g %9g %6.1f%% %9g\n", s, r->busy[s], r->idle[s],
                r->makespan > 0 ? 100 * r->idle[s] / r->makespan : 0.0, r->peak_act[s]);
    /* The idle column split where the stage's first backward starts, its last forward ends and
     * its last op ends (schedule.h): the four add up to it. */
    fprintf(f, "idle by phase   warm-up    steady cool-down   barrier\n");
    for (int s = 0; s < p; s++) {
        const double *ph = &r->phase_idle[(size_t)s * PPS_PHASE_COUNT];
        fprintf(f, "%5d         %9g %9g %9g %9g\n", s, ph[PPS_PHASE_WARMUP], ph[PPS_PHASE_STEADY],
                ph[PPS_PHASE_COOLDOWN], ph[PPS_PHASE_BARRIER]);
    }
    fprintf(f, "bubble        ");
    for (int k = 0; k < PPS_PHASE_COUNT; k++)
        fprintf(f, " %8.1f%%", 100 * phase_bubble(r, k));
    fputc('\n', f);
    fputc('\n', f);
}

static double max_peak(const struct pps_sim_result *r, int p)
{
    double x = 0;
    for (int s = 0; s < p; s++)
        if (r->peak_act[s] > x)
            x = r->peak_act[s];
    return x;
}

static double mean_idle(const struct pps_sim_result *r, int p)
{
    double x = 0;
    for (int s = 0; s < p; s++)
        x += r->idle[s];
    return x / p;
}

/* One row per schedule; idle time per stage is compared with the first schedule's, the way the
 * zero-bubble figures are quoted (ZB-H1 idles a third of 1F1B's time). */
static void text_compare(FILE *f, const struct sim_case *cases, int n)
{
    double base = mean_idle(&cases[0].res, cases[0].sched.p);
    fprintf(f, "schedule      makespan   bubble  idle/stage  vs %-6s  steady  peak act\n",
            pps_sched_kind_name(cases[0].kind));
    for (int k = 0; k < n; k++) {
        const struct pps_sim_result *r = &cases[k].res;
        double idle = mean_idle(r, cases[k].sched.p);
        char ratio[16] = "-";
        if (base > 0)
            snprintf(ratio, sizeof(ratio), "%.2fx", idle / base);
        fprintf(f, "%-12s %9g %7.1f%% %11g %10s %6.1f%% %9g\n", pps_sched_kind_name(cases[k].kind),
                r->makespan, 100 * r->bubble, idle, ratio, 100 * r->steady_bubble,
                max_peak(r, cases[k].sched.p));
    }
}

int pps_cmd_sim(int argc, char **argv)
{
    struct sim_opts o = {.kinds = {PPS_SCHED_1F1B},
                         .n_kinds = 1,
                         .p = 4,
                         .m = 8,
                         .v = 1,
                         .tf = 1,
                         .tb = 1,
                         .tw = 1,
                         .w_mem = 0.5,
                         .width = default_width(),
                         .iters = 1,
                         .unit_ns = 1e6,
                         .w_share = 0.5};
    struct sim_case cases[MAX_SCHEDULES + 1]; /* the file's and those named */
    struct pps_sim_costs costs = {0};
    struct pps_err err = {0};
    int rc = parse_args(&o, argc, argv), n = 0, exit_code = PPS_EXIT_OK;

    if (rc)
        return rc < 0 ? PPS_EXIT_OK : rc;
    if (o.from) {
        struct pps_sim_from_opts fo = {.run = o.from,
                                       .kinds = o.kinds,
                                       .n_kinds = o.kinds_given ? o.n_kinds : 0,
                                       .p = o.p_given ? o.p : 0,
                                       .m = o.m_given ? o.m : 0,
                                       .v = o.v_given ? o.v : 0,
                                       .w_share = o.w_share,
                                       .mem_limit = o.mem_limit,
                                       .json = o.json,
                                       .custom_file = o.sched_file};
        struct pps_schedule custom = PPS_SCHEDULE_INIT;

        /* A schedule file's, of its own shape: -p, -m and -v ask the named schedules'. */
        if (o.sched_file && (rc = pps_cli_sched_file("sim", o.sched_file,
                                                     o.json ? 0 : PPS_SCHED_FILE_NOTES, &custom)))
            return rc;
        fo.custom = o.sched_file ? &custom : NULL;
        rc = pps_sim_from(&fo);
        pps_schedule_release(&custom);
        return rc;
    }
    memset(cases, 0, sizeof(cases));
    if (o.sched_file) {
        /* The user's schedule first: the comparison is against it. */
        if ((rc = load_file(&o, &cases[0].sched)))
            return rc;
        cases[0].kind = -1;
        cases[0].v = cases[0].sched.v;
        n = 1;
    }
    if ((rc = make_costs(&o, &costs))) {
        exit_code = rc == PPS_ENOMEM ? PPS_EXIT_FAIL : rc;
        goto out;
    }
    if (n && !(o.csv || o.grid) && pps_simulate(&cases[0].sched, &costs, &cases[0].res, &err))
        goto fail;
    for (int i = 0; i < (o.kinds_given || !o.sched_file ? o.n_kinds : 0); i++, n++) {
        struct sim_case *sc = &cases[n];
        sc->kind = o.kinds[i];
        sc->v = pps_sched_kind_v(sc->kind, o.v);
        if (o.v_given && o.v != sc->v && o.n_kinds == 1) {
            if (pps_sched_kind_placement(sc->kind) == PPS_PLACE_V)
                pps_err_set(&err, PPS_EINVAL,
                            "%s runs two chunks per stage (down the stages and back up); "
                            "-v %d does not apply",
                            pps_sched_kind_name(sc->kind), o.v);
            else
                pps_err_set(&err, PPS_EINVAL,
                            "%s runs one chunk per stage; -v applies to "
                            "interleaved and interleaved-zb only",
                            pps_sched_kind_name(sc->kind));
            goto fail;
        }
        if (o.v_given && o.v != sc->v)
            fprintf(stderr,
                    "ppscope sim: note: %s runs %d chunk%s a stage (-v %d applies to "
                    "interleaved and interleaved-zb only)\n",
                    pps_sched_kind_name(sc->kind), sc->v, sc->v == 1 ? "" : "s", o.v);
        struct pps_schedule init = PPS_SCHEDULE_INIT;
        sc->sched = init;
        if (sc->kind == PPS_SCHED_ZB_AUTO)
            rc = pps_schedule_auto(&sc->sched, &costs, o.m, o.mem_limit ? o.mem_limit : o.p, &err);
        else
            rc = pps_schedule_generate(&sc->sched, sc->kind, o.p, o.m, sc->v, &err);
        if (rc || (!(o.csv || o.grid) && pps_simulate(&sc->sched, &costs, &sc->res, &err))) {
            n++;
            goto fail;
        }
    }
    if (o.csv || o.grid) {
        exit_code = print_schedule(&o, &cases[0].sched);
        goto flush;
    }
    if (o.trace) {
        for (int k = 0; k < n; k++) {
            char dir[4096];
            if (n == 1)
                snprintf(dir, sizeof(dir), "%s", o.trace);
            else
                snprintf(dir, sizeof(dir), "%s/%s", o.trace, pps_sched_kind_name(cases[k].kind));
            if (pps_sim_write_trace(dir, &cases[k].sched, cases[k].kind < 0 ? o.sched_file : NULL,
                                    &costs, &cases[k].res, o.iters, o.unit_ns, &err))
                goto fail;
            if (!o.json) {
                fputs("ppscope sim: wrote ", stderr);
                pps_text_put(stderr, dir);
                fputc('\n', stderr);
            }
        }
    }
    if (o.json) {
        struct pps_json j;
        pps_json_init(&j, stdout);
        pps_json_begin_object(&j, NULL);
        if (n == 1) {
            json_case(&j, &o, &cases[0], &costs);
        } else {
            pps_json_begin_array(&j, "schedules");
            for (int k = 0; k < n; k++) {
                pps_json_begin_object(&j, NULL);
                json_case(&j, &o, &cases[k], &costs);
                pps_json_end_object(&j);
            }
            pps_json_end_array(&j);
        }
        pps_json_end_object(&j);
        pps_json_finish(&j);
    } else {
        for (int k = 0; k < n; k++)
            text_case(stdout, &o, &cases[k]);
        if (n > 1)
            text_compare(stdout, cases, n);
    }
flush:
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "ppscope sim: could not write the output\n");
        exit_code = PPS_EXIT_FAIL;
    }
    goto out;
fail:
    exit_code = pps_cli_fail("sim", &err);
out:
    for (int k = 0; k < n; k++) {
        pps_schedule_release(&cases[k].sched);
        pps_sim_result_release(&cases[k].res);
    }
    pps_sim_costs_release(&costs);
    return exit_code;
}
