/*
 * cmd_run.c - `ppscope run`: runs a pipeline for real (cpu) or emulated (emu), over threads or
 * MPI, traced into a run per schedule, then prints what happened (run_summary.c). The flags
 * become a struct pps_run_config; runtime/run.h does the rest.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "optimizer.h"
#include "run.h"
#include "run_summary.h"
#include "sched_file.h"
#include "schedule.h"

static const char usage_text[] =
    "usage: ppscope run --schedule S[,S...] [-p P] [-m M] [-v V] [--backend cpu|cuda|emu]\n"
    "                   [--out RUN] [options]\n"
    "       ppscope run --schedule-file F [--schedule S[,S...]] [--out RUN] [options]\n"
    "\n"
    "Runs a pipeline-parallel training job and traces every forward, backward, weight-gradient,\n"
    "send, receive, wait and optimizer step into RUN (read it with 'ppscope report RUN').\n"
    "Several schedules (--schedule 1f1b,zb-h1,zb-h2) run one after the other on the same\n"
    "stages, model, data and seed, each into RUN/<schedule>, and are compared at the end.\n"
    "\n"
    "pipeline:\n"
    "  -s, --schedule S        " PPS_SCHED_NAMES ",\n"
    "                          or a comma list (default 1f1b)\n"
    "      --schedule-file F   a schedule of your own, run as 'custom': PyTorch pipelining's\n"
    "                          pipeline-order CSV (a row per rank: 0F0,1I3,2W1,3B0) or\n"
    "                          ppscope's grid ('ppscope sim --csv' and '--grid' write both);\n"
    "                          p, m and v are the file's; with --schedule, run first of them\n"
    "  -p P                    pipeline stages (default 4)\n"
    "  -m M                    microbatches per iteration (default 8)\n"
    "  -v V                    model chunks per stage, interleaved and interleaved-zb only\n"
    "                          (default 2 there)\n"
    "      --backend B         cpu: the real model, real math (default); cuda: the same on\n"
    "                          a GPU (cuBLAS and CUDA kernels; PPS_CUDA_DEVICE picks it);\n"
    "                          emu: an EMULATED device, every op sleeps its modeled time and\n"
    "                          computes nothing\n"
    "      --transport T       threads: every stage a thread of this process (default);\n"
    "                          mpi: one rank per stage under mpirun or srun (the default there);\n"
    "                          nccl: as mpi, one GPU per rank, the messages through NCCL\n"
    "                          (--backend cuda)\n"
    "      --iters N           training iterations (default 20)\n"
    "      --out RUN           the run directory to write; must not exist (or be empty)\n"
    "      --no-trace          trace nothing and write no run (--out not needed)\n"
    "      --no-device-spans   cuda: leave out the device's kernels and copies (CUPTI)\n"
    "      --no-gpu-partition  cuda: the stages share the GPU's SMs (by default each gets its\n"
    "                          own equal share, a green context, as p GPUs would)\n"
    "\n"
    "model (a byte-level language model of residual MLP blocks; docs/model.md):\n"
    "      --layers L          blocks (default 4)\n"
    "      --hidden H          width of the residual stream (default 64)\n"
    "      --microbatch-size B sequences per microbatch (default 4)\n"
    "      --seq-len T         bytes per sequence (default 32)\n"
    "      --partition LIST    blocks per virtual stage, e.g. 3,5,5,3 (default: even)\n"
    "      --data FILE         training text (default: the built-in one, an essay on pipelines)\n"
    "      --seed N            parameters and sampling (default 1)\n"
    "\n"
    "optimizer (AdamW, global gradient-norm clipping, a skipped step on inf/NaN):\n"
    "      --optimizer MODE    sync: a global reduction before every step (the optimizer\n"
    "                          barrier; default); postval: step at once, validate after,\n"
    "                          roll back exactly when the check fails\n"
    "      --clip X            clip the global gradient norm to X (default 1; 0: off)\n"
    "      --lr X              learning rate (default 0.003)\n"
    "      --check-grads       cpu: one iteration, no step; compare every gradient bitwise with\n"
    "                          the same model in one process; exit 0 if equal, 1 if not\n"
    "\n"
    "memory (the schedules that split B from W: zb-h1, zb-h2, zb-v, zb-auto):\n"
    "      --w-budget N        a stage holds at most N pending W's (B done, W not yet): before\n"
    "                          a B that would make N+1, the oldest runs early; the gradients\n"
    "                          stay bitwise the same (default 0: none, the schedule's order)\n"
    "      --act-budget-mib X  the same bound in bytes: a stage's pending W's hold at most\n"
    "                          X MiB, counted with the model's sizes (default 0: none)\n"
    "      --mem-limit K       zb-auto: at most K live microbatches a stage, each from its F\n"
    "                          to its W (default p); built for the emu backend's op and\n"
    "                          message times on emu, for unit costs on cpu and cuda\n"
    "\n"
    "emu backend (times of one microbatch through a whole stage; a chunk's op takes 1/v):\n"
    "      --emu-tf MS         forward (default 2)\n"
    "      --emu-tb MS         input-gradient backward (default 2)\n"
    "      --emu-tw MS         weight-gradient backward (default 2)\n"
    "      --emu-block-ms F,B,W  per-layer costs instead: each block of a chunk costs F, B\n"
    "                          and W ms (a BW takes B+W), so the partition sets each stage's\n"
    "                          time; every op records a span per layer (docs/runtime.md)\n"
    "      --emu-embed-ms F,B,W  with per-layer costs: the embedding's (default 0,0,0)\n"
    "      --emu-head-ms F,B,W   with per-layer costs: the LM head and loss's (default 0,0,0)\n"
    "      --emu-stage-mult L  per-stage multipliers, e.g. 1.2,1,1,1.3 (imbalance)\n"
    "      --emu-slow-stage S:X  inject: stage S's ops take X times longer\n"
    "      --emu-latency-us US   link latency per message (default 10)\n"
    "      --emu-bandwidth-gbps G  link bandwidth in Gbit/s (default 100; 0: unlimited)\n"
    "      --emu-slow-link A-B:US  inject: US more latency between stages A and B\n"
    "\n"
    "testing:\n"
    "      --inject-nonfinite I  make a gradient inf in iteration I (before the check)\n"
    "      --inject-fail S:I   stage S fails at the start of iteration I\n"
    "\n"
    "  --progress / --quiet    progress on stderr (default: when stderr is a terminal)\n"
    "  -h, --help              show this help\n"
    "\n"
    "Example: ppscope run --schedule 1f1b,zb-h1,zb-h2 -p 4 -m 8 --out runs/ab\n"
    "         ppscope run --schedule-file mine.csv --schedule zb-h1 --out runs/mine\n";

enum {
    OPT_BACKEND = 256,
    OPT_TRANSPORT,
    OPT_ITERS,
    OPT_OUT,
    OPT_NO_TRACE,
    OPT_NO_DEVICE_SPANS,
    OPT_NO_GPU_PARTITION,
    OPT_LAYERS,
    OPT_HIDDEN,
    OPT_MBS,
    OPT_SEQ,
    OPT_PARTITION,
    OPT_DATA,
    OPT_SEED,
    OPT_OPTIMIZER,
    OPT_CLIP,
    OPT_LR,
    OPT_CHECK,
    OPT_W_BUDGET,
    OPT_ACT_BUDGET,
    OPT_MEM_LIMIT,
    OPT_EMU_TF,
    OPT_EMU_TB,
    OPT_EMU_TW,
    OPT_EMU_MULT,
    OPT_EMU_BLOCK,
    OPT_EMU_EMBED,
    OPT_EMU_HEAD,
    OPT_EMU_SLOW_STAGE,
    OPT_EMU_LATENCY,
    OPT_EMU_BW,
    OPT_EMU_SLOW_LINK,
    OPT_INJECT_NONFINITE,
    OPT_INJECT_FAIL,
    OPT_PROGRESS,
    OPT_QUIET,
    OPT_SCHEDULE_FILE,
};

/* What parsing keeps beside the config: the multipliers' storage and which flags were given. */
struct run_opts {
    struct pps_run_config cfg;
    double mult[1024];
    int v_given, out_given, emu_flag, p_given, m_given, kinds_given;
    char emu_flag_name[64];
    const char *sched_file;
    struct pps_schedule custom; /* the schedule file's */
};

static int usage_error_schedules(const char *list)
{
    return pps_cli_usage_error("run", "unknown schedule in '%s' (" PPS_SCHED_NAMES ")", list);
}

static int parse_schedules(struct run_opts *o, const char *list)
{
    char buf[256];
    struct pps_run_config *c = &o->cfg;

    if (strlen(list) >= sizeof(buf))
        return pps_cli_usage_error("run", "--schedule list too long");
    strcpy(buf, list);
    c->n_kinds = 0;
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        int k = pps_sched_kind_parse(tok);
        if (k < 0)
            return usage_error_schedules(list);
        if (c->n_kinds == PPS_RUN_MAX_SCHEDULES)
            return pps_cli_usage_error("run", "at most %d schedules at once",
                                       PPS_RUN_MAX_SCHEDULES);
        c->kinds[c->n_kinds++] = k;
    }
    if (!c->n_kinds)
        return pps_cli_usage_error("run", "--schedule needs a name");
    return 0;
}

static int parse_mult(struct run_opts *o, const char *list)
{
    const char *s = list;
    int n = 0;

    for (;;) {
        char *end;
        double x = strtod(s, &end);
        if (end == s || !(x > 0 && x <= 1e6) || (*end != ',' && *end != '\0'))
            return pps_cli_usage_error(
                "run", "--emu-stage-mult needs positive numbers separated by commas, got '%s'",
                list);
        if (n == (int)(sizeof(o->mult) / sizeof(o->mult[0])))
            return pps_cli_usage_error("run", "--emu-stage-mult: too many numbers");
        o->mult[n++] = x;
        if (*end == '\0')
            break;
        s = end + 1;
    }
    o->cfg.emu.stage_mult = o->mult;
    o->cfg.emu.n_stage_mult = n;
    return 0;
}

/* "A:B" (sep ':') or "A-B" (sep '-') with A an integer in 0..hi and B what rest parses. */
static int split_int(const char *s, char sep, long hi, long *a, const char **rest)
{
    char buf[64];
    const char *at = strchr(s, sep);

    if (!at || (size_t)(at - s) >= sizeof(buf))
        return -1;
    memcpy(buf, s, (size_t)(at - s));
    buf[at - s] = '\0';
    if (pps_parse_int(buf, 0, hi, a))
        return -1;
    *rest = at + 1;
    return 0;
}

static int parse_ms(const char *flag, const char *arg, double *ns)
{
    double ms;

    if (pps_parse_double(arg, 0, 3.6e6, &ms))
        return pps_cli_usage_error("run", "%s needs milliseconds >= 0, got '%s'", flag, arg);
    *ns = ms * 1e6;
    return 0;
}

/* "F,B,W" in milliseconds into ns[3]: a layer's costs, which turn the per-layer mode on. */
static int parse_layer_ms(struct run_opts *o, const char *flag, const char *arg, double *ns)
{
    const char *s = arg;

    for (int k = 0; k < 3; k++) {
        char buf[64];
        size_t len = strcspn(s, ",");
        double ms;

        if (len >= sizeof(buf) || (k < 2 && s[len] != ',') || (k == 2 && s[len] != '\0'))
            return pps_cli_usage_error("run", "%s needs F,B,W in milliseconds, got '%s'", flag,
                                       arg);
        memcpy(buf, s, len);
        buf[len] = '\0';
        if (pps_parse_double(buf, 0, 3.6e6, &ms))
            return pps_cli_usage_error("run", "%s needs F,B,W in milliseconds >= 0, got '%s'", flag,
                                       arg);
        ns[k] = ms * 1e6;
        s += len + (k < 2);
    }
    o->cfg.emu.layer_costs = 1;
    return 0;
}

static int parse_emu(struct run_opts *o, int c, const char *flag, const char *arg)
{
    struct pps_emu_config *e = &o->cfg.emu;
    const char *rest;
    long a, b;
    double x;

    o->emu_flag = 1;
    snprintf(o->emu_flag_name, sizeof(o->emu_flag_name), "%s", flag);
    switch (c) {
    case OPT_EMU_TF:
        return parse_ms(flag, arg, &e->tf_ns);
    case OPT_EMU_TB:
        return parse_ms(flag, arg, &e->tb_ns);
    case OPT_EMU_TW:
        return parse_ms(flag, arg, &e->tw_ns);
    case OPT_EMU_MULT:
        return parse_mult(o, arg);
    case OPT_EMU_BLOCK:
        return parse_layer_ms(o, flag, arg, e->block_ns);
    case OPT_EMU_EMBED:
        return parse_layer_ms(o, flag, arg, e->embed_ns);
    case OPT_EMU_HEAD:
        return parse_layer_ms(o, flag, arg, e->head_ns);
    case OPT_EMU_SLOW_STAGE:
        if (split_int(arg, ':', 1 << 20, &a, &rest) || pps_parse_double(rest, 1e-6, 1e6, &x))
            return pps_cli_usage_error("run",
                                       "--emu-slow-stage needs STAGE:FACTOR, e.g. 2:1.5, "
                                       "got '%s'",
                                       arg);
        e->slow_stage = (int)a;
        e->slow_factor = x;
        return 0;
    case OPT_EMU_LATENCY:
        if (pps_parse_double(arg, 0, 3.6e9, &x))
            return pps_cli_usage_error("run",
                                       "--emu-latency-us needs microseconds >= 0, got "
                                       "'%s'",
                                       arg);
        e->latency_ns = x * 1e3;
        return 0;
    case OPT_EMU_BW:
        if (pps_parse_double(arg, 0, 1e9, &e->bandwidth_gbps))
            return pps_cli_usage_error("run",
                                       "--emu-bandwidth-gbps needs a number >= 0, got "
                                       "'%s'",
                                       arg);
        return 0;
    case OPT_EMU_SLOW_LINK: {
        const char *us;
        if (split_int(arg, '-', 1 << 20, &a, &rest) || split_int(rest, ':', 1 << 20, &b, &us) ||
            pps_parse_double(us, 0, 3.6e9, &x))
            return pps_cli_usage_error("run",
                                       "--emu-slow-link needs A-B:MICROSECONDS, e.g. "
                                       "1-2:500, got '%s'",
                                       arg);
        e->slow_link_a = (int)a;
        e->slow_link_b = (int)b;
        e->slow_link_ns = x * 1e3;
        return 0;
    }
    }
    return pps_cli_usage_error("run", "unknown emu option %s", flag);
}

static int parse_count(const char *flag, const char *arg, long lo, long hi, int *out)
{
    long n;

    if (pps_parse_int(arg, lo, hi, &n))
        return pps_cli_usage_error("run", "%s needs an integer in %ld..%ld, got '%s'", flag, lo, hi,
                                   arg);
    *out = (int)n;
    return 0;
}

static int parse_other(struct run_opts *o, int c, const char *flag, const char *arg)
{
    struct pps_run_config *cfg = &o->cfg;
    const char *rest;
    long a, n;
    double x;

    switch (c) {
    case OPT_BACKEND:
        if (!strcmp(arg, "cpu") || !strcmp(arg, "emu") || !strcmp(arg, "cuda")) {
            cfg->backend = !strcmp(arg, "emu")    ? PPS_BACKEND_EMU
                           : !strcmp(arg, "cuda") ? PPS_BACKEND_CUDA
                                                  : PPS_BACKEND_CPU;
            return 0;
        }
        return pps_cli_usage_error("run", "--backend is cpu, cuda or emu, got '%s'", arg);
    case OPT_TRANSPORT:
        if (!strcmp(arg, "threads") || !strcmp(arg, "mpi") || !strcmp(arg, "nccl")) {
            cfg->transport = !strcmp(arg, "mpi")    ? PPS_TRANSPORT_MPI
                             : !strcmp(arg, "nccl") ? PPS_TRANSPORT_NCCL
                                                    : PPS_TRANSPORT_THREADS;
            return 0;
        }
        return pps_cli_usage_error("run", "--transport is threads, mpi or nccl, got '%s'", arg);
    case OPT_OPTIMIZER:
        if ((cfg->optim_mode = pps_optim_mode_parse(arg)) >= 0)
            return 0;
        return pps_cli_usage_error("run", "--optimizer is sync or postval, got '%s'", arg);
    case OPT_CLIP:
        if (pps_parse_double(arg, 0, 1e30, &cfg->clip))
            return pps_cli_usage_error("run", "--clip needs a number >= 0, got '%s'", arg);
        return 0;
    case OPT_LR:
        if (pps_parse_double(arg, 0, 1e6, &x))
            return pps_cli_usage_error("run", "--lr needs a number >= 0, got '%s'", arg);
        cfg->model.adamw.lr = (float)x;
        return 0;
    case OPT_ACT_BUDGET:
        if (pps_parse_double(arg, 0, 1e9, &cfg->act_budget_mib))
            return pps_cli_usage_error("run", "--act-budget-mib needs MiB >= 0, got '%s'", arg);
        return 0;
    case OPT_SEED:
        if (pps_parse_int(arg, 0, 0x7fffffffL, &n))
            return pps_cli_usage_error("run", "--seed needs an integer >= 0, got '%s'", arg);
        cfg->model.seed = (uint64_t)n;
        return 0;
    case OPT_INJECT_FAIL:
        if (split_int(arg, ':', 1 << 20, &a, &rest) || pps_parse_int(rest, 0, 1 << 30, &n))
            return pps_cli_usage_error("run", "--inject-fail needs STAGE:ITERATION, got '%s'", arg);
        cfg->fail_stage = (int)a;
        cfg->fail_iter = (int)n;
        return 0;
    }
    return pps_cli_usage_error("run", "unknown option %s", flag);
}

/* 1: --help was printed; 0: parsed; else the exit code of a usage error. */
static int parse_args(struct run_opts *o, int argc, char **argv)
{
    static const struct option longopts[] = {
        {"schedule", required_argument, NULL, 's'},
        {"schedule-file", required_argument, NULL, OPT_SCHEDULE_FILE},
        {"backend", required_argument, NULL, OPT_BACKEND},
        {"transport", required_argument, NULL, OPT_TRANSPORT},
        {"iters", required_argument, NULL, OPT_ITERS},
        {"out", required_argument, NULL, OPT_OUT},
        {"no-trace", no_argument, NULL, OPT_NO_TRACE},
        {"no-device-spans", no_argument, NULL, OPT_NO_DEVICE_SPANS},
        {"no-gpu-partition", no_argument, NULL, OPT_NO_GPU_PARTITION},
        {"layers", required_argument, NULL, OPT_LAYERS},
        {"hidden", required_argument, NULL, OPT_HIDDEN},
        {"microbatch-size", required_argument, NULL, OPT_MBS},
        {"seq-len", required_argument, NULL, OPT_SEQ},
        {"partition", required_argument, NULL, OPT_PARTITION},
        {"data", required_argument, NULL, OPT_DATA},
        {"seed", required_argument, NULL, OPT_SEED},
        {"optimizer", required_argument, NULL, OPT_OPTIMIZER},
        {"clip", required_argument, NULL, OPT_CLIP},
        {"lr", required_argument, NULL, OPT_LR},
        {"check-grads", no_argument, NULL, OPT_CHECK},
        {"w-budget", required_argument, NULL, OPT_W_BUDGET},
        {"mem-limit", required_argument, NULL, OPT_MEM_LIMIT},
        {"act-budget-mib", required_argument, NULL, OPT_ACT_BUDGET},
        {"emu-tf", required_argument, NULL, OPT_EMU_TF},
        {"emu-tb", required_argument, NULL, OPT_EMU_TB},
        {"emu-tw", required_argument, NULL, OPT_EMU_TW},
        {"emu-stage-mult", required_argument, NULL, OPT_EMU_MULT},
        {"emu-block-ms", required_argument, NULL, OPT_EMU_BLOCK},
        {"emu-embed-ms", required_argument, NULL, OPT_EMU_EMBED},
        {"emu-head-ms", required_argument, NULL, OPT_EMU_HEAD},
        {"emu-slow-stage", required_argument, NULL, OPT_EMU_SLOW_STAGE},
        {"emu-latency-us", required_argument, NULL, OPT_EMU_LATENCY},
        {"emu-bandwidth-gbps", required_argument, NULL, OPT_EMU_BW},
        {"emu-slow-link", required_argument, NULL, OPT_EMU_SLOW_LINK},
        {"inject-nonfinite", required_argument, NULL, OPT_INJECT_NONFINITE},
        {"inject-fail", required_argument, NULL, OPT_INJECT_FAIL},
        {"progress", no_argument, NULL, OPT_PROGRESS},
        {"quiet", no_argument, NULL, OPT_QUIET},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    struct pps_run_config *cfg = &o->cfg;
    char flag[64];
    int c, rc = 0, li;

    opterr = 0;
    optind = 1;
    while (!rc && (li = -1, c = getopt_long(argc, argv, ":s:p:m:v:h", longopts, &li)) != -1) {
        /* The flag as the user wrote it, for messages (argv[optind - 1] may be its value). */
        if (li >= 0)
            snprintf(flag, sizeof(flag), "--%s", longopts[li].name);
        else
            snprintf(flag, sizeof(flag), "%s", argv[optind - 1]);
        switch (c) {
        case 's':
            rc = parse_schedules(o, optarg);
            o->kinds_given = 1;
            break;
        case OPT_SCHEDULE_FILE:
            o->sched_file = optarg;
            break;
        case 'p':
            rc = parse_count("-p", optarg, 1, 1024, &cfg->p);
            o->p_given = 1;
            break;
        case 'm':
            rc = parse_count("-m", optarg, 1, 1 << 16, &cfg->m);
            o->m_given = 1;
            break;
        case 'v':
            rc = parse_count("-v", optarg, 1, 64, &cfg->v);
            o->v_given = 1;
            break;
        case OPT_ITERS:
            rc = parse_count("--iters", optarg, 1, 1 << 30, &cfg->iters);
            break;
        case OPT_LAYERS:
            rc = parse_count("--layers", optarg, 0, 100000, &cfg->model.layers);
            break;
        case OPT_HIDDEN:
            rc = parse_count("--hidden", optarg, 1, 65536, &cfg->model.hidden);
            break;
        case OPT_MBS:
            rc = parse_count("--microbatch-size", optarg, 1, 1 << 20, &cfg->model.micro_batch);
            break;
        case OPT_SEQ:
            rc = parse_count("--seq-len", optarg, 1, 1 << 20, &cfg->model.seq_len);
            break;
        case OPT_W_BUDGET:
            rc = parse_count("--w-budget", optarg, 0, 1 << 20, &cfg->w_budget);
            break;
        case OPT_MEM_LIMIT:
            /* 1 is the least any schedule runs in: one microbatch's F, B and W at a time. */
            rc =
                parse_count("--mem-limit", optarg, PPS_ZB_AUTO_MIN_LIMIT, 1 << 20, &cfg->mem_limit);
            break;
        case OPT_INJECT_NONFINITE:
            rc = parse_count("--inject-nonfinite", optarg, 0, 1 << 30, &cfg->inject_nonfinite_iter);
            break;
        case OPT_OUT:
            cfg->out = optarg;
            o->out_given = 1;
            break;
        case OPT_NO_TRACE:
            cfg->trace = 0;
            break;
        case OPT_NO_DEVICE_SPANS:
            cfg->device_spans = 0;
            break;
        case OPT_NO_GPU_PARTITION:
            cfg->gpu_partition = 0;
            break;
        case OPT_PARTITION:
            cfg->partition = optarg;
            break;
        case OPT_DATA:
            cfg->model.data_path = optarg;
            break;
        case OPT_CHECK:
            cfg->check_grads = 1;
            break;
        case OPT_PROGRESS:
            cfg->progress = 1;
            break;
        case OPT_QUIET:
            cfg->progress = 0;
            break;
        case OPT_EMU_TF:
        case OPT_EMU_TB:
        case OPT_EMU_TW:
        case OPT_EMU_MULT:
        case OPT_EMU_BLOCK:
        case OPT_EMU_EMBED:
        case OPT_EMU_HEAD:
        case OPT_EMU_SLOW_STAGE:
        case OPT_EMU_LATENCY:
        case OPT_EMU_BW:
        case OPT_EMU_SLOW_LINK:
            rc = parse_emu(o, c, flag, optarg);
            break;
        case 'h':
            fputs(usage_text, stdout);
            return 1;
        case ':':
            rc = pps_cli_usage_error("run", "%s needs a value", flag);
            break;
        case '?':
            rc = pps_cli_usage_error("run", "unknown option '%s'", flag);
            break;
        default:
            rc = parse_other(o, c, flag, optarg);
            break;
        }
    }
    if (!rc && optind < argc)
        rc = pps_cli_usage_error("run", "unexpected argument '%s'", argv[optind]);
    return rc;
}

/*
 * --schedule-file: the file's schedule runs as "custom", first; p and m are the file's (-p, -m
 * and -v may only repeat them). Under MPI each rank reads the file, and the first says what is
 * wrong with it. 0 or the exit code, said.
 */
static int load_schedule_file(struct run_opts *o)
{
    struct pps_run_config *c = &o->cfg;
    int how = pps_run_launched_rank() > 0 ? PPS_SCHED_FILE_QUIET : PPS_SCHED_FILE_NOTES;
    int rc = pps_cli_sched_file("run", o->sched_file, how, &o->custom);

    if (rc)
        return rc;
    if ((o->p_given && c->p != o->custom.p) || (o->m_given && c->m != o->custom.m) ||
        (o->v_given && !o->kinds_given && c->v != o->custom.v))
        return pps_cli_usage_error("run",
                                   "%s holds p=%d, m=%d, v=%d: -p, -m and -v may only say so",
                                   o->sched_file, o->custom.p, o->custom.m, o->custom.v);
    if (o->kinds_given && c->n_kinds == PPS_RUN_MAX_SCHEDULES)
        return pps_cli_usage_error("run", "at most %d schedules at once, the file's with them",
                                   PPS_RUN_MAX_SCHEDULES);
    if (!o->kinds_given)
        c->n_kinds = 0;
    memmove(c->kinds + 1, c->kinds, (size_t)c->n_kinds * sizeof(c->kinds[0]));
    c->kinds[0] = PPS_RUN_CUSTOM;
    c->n_kinds++;
    c->p = o->custom.p;
    c->m = o->custom.m;
    c->custom = &o->custom;
    c->custom_file = o->sched_file;
    return 0;
}

/* The combinations the runtime's own check does not see, because they are about flags. */
static int check_flags(const struct run_opts *o)
{
    const struct pps_run_config *c = &o->cfg;

    if (o->emu_flag && c->backend != PPS_BACKEND_EMU)
        return pps_cli_usage_error("run", "%s applies to --backend emu only", o->emu_flag_name);
    if (!c->device_spans && c->backend != PPS_BACKEND_CUDA)
        return pps_cli_usage_error("run", "--no-device-spans applies to --backend cuda only");
    if (!c->gpu_partition && c->backend != PPS_BACKEND_CUDA)
        return pps_cli_usage_error("run", "--no-gpu-partition applies to --backend cuda only");
    if (!o->out_given && c->trace && !c->check_grads)
        return pps_cli_usage_error("run", "--out RUN is required (or --no-trace)");
    if (o->out_given && !c->trace)
        return pps_cli_usage_error("run", "--out and --no-trace contradict each other");
    if (c->mem_limit) {
        int any = 0;

        for (int k = 0; k < c->n_kinds; k++)
            any |= c->kinds[k] == PPS_SCHED_ZB_AUTO;
        if (!any)
            return pps_cli_usage_error("run", "--mem-limit is zb-auto's: add it to --schedule");
    }
    if (c->check_grads && o->cfg.inject_nonfinite_iter >= 0)
        return pps_cli_usage_error("run", "--check-grads runs no optimizer: --inject-nonfinite "
                                          "has nothing to check");
    return 0;
}

int pps_cmd_run(int argc, char **argv)
{
    struct run_opts *o = calloc(1, sizeof(*o));
    struct pps_run_result res;
    struct pps_err err = {0, ""};
    int rc, code;

    if (!o) {
        fprintf(stderr, "ppscope run: out of memory\n");
        return PPS_EXIT_FAIL;
    }
    memset(&res, 0, sizeof(res));
    pps_run_config_init(&o->cfg);
    o->cfg.progress = isatty(STDERR_FILENO);
    o->cfg.warn_cores = 1;
    rc = parse_args(o, argc, argv);
    if (rc) {
        code = rc == 1 ? PPS_EXIT_OK : rc;
        goto out;
    }
    if (o->sched_file && (code = load_schedule_file(o)))
        goto out;
    if ((code = check_flags(o)))
        goto out;
    rc = pps_run(&o->cfg, &res, &err);
    if (rc) {
        /* Under MPI every rank gets the same error: one of them says it. */
        code = res.rank <= 0 ? pps_cli_fail("run", &err)
                             : (pps_err_is_input(err.code) ? PPS_EXIT_USAGE : PPS_EXIT_FAIL);
        goto out;
    }
    code = pps_run_summary_print(stdout, &o->cfg, &res);
out:
    pps_run_result_release(&res);
    pps_schedule_release(&o->custom);
    free(o);
    return code;
}
