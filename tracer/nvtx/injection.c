/*
 * injection.c - libppscope_nvtx.so, the NVTX injection: with NVTX_INJECTION64_PATH naming this
 * library, the NVTX stubs in any annotated program load it on their first call and hand it their
 * function tables; it fills them with the hooks of hooks.c, which turn NVTX ranges into ppscope
 * spans. This file is the run's lifecycle and the wiring. docs/nvtx.md is the user's side.
 *
 * - The run opens in InitializeInjectionNvtx2 (every NVTX instance in the process calls it; the
 *   first opens, the others share) and closes in an atexit handler, which first stops the hooks
 *   (an in-flight count, so none is inside the tracer when it closes) and records the ranges
 *   still open as ending at exit. A forked child traces nothing.
 * - Nothing here aborts or blocks the program: problems are one line on stderr, ranges that
 *   cannot be traced are dropped and counted, and the count is one line at exit.
 */
#include "injection_int.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "names.h"
#include "labels.h"
#include "ppscope/trace.h"
#include "tracer_core.h"

#define MAX_NAMES 65536 /* distinct names; ranges with more are dropped */

/* The entry point NVTX looks up by name: the only symbol the library exports (exports.map). */
__attribute__((visibility("default"))) int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get);

enum state { FRESH, OPEN, FAILED };

struct pps__nvtx pps__nvtx = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* Whether the run is open: decided once, by the first NVTX instance, under pps__nvtx.lock. */
static enum state run_state = FRESH;

/* ---- opening and closing the run --------------------------------------------------------- */

static void at_fork_child(void)
{
    /* The child has the parent's tracer but not its flusher, and its shard is the parent's. */
    pps__nvtx.forked = 1;
    atomic_store(&pps__nvtx.closing, 1);
}

static void at_exit(void)
{
    struct pps_err err = {0};
    if (pps__nvtx.forked || !pps__nvtx.t)
        return;
    atomic_store(&pps__nvtx.closing, 1);
    if (pps__nvtx_hooks_quiesce(2000) != 0) {
        /* A thread is stuck inside a hook: closing under it could crash the program. */
        pps_trace_flush(pps__nvtx.t, NULL);
        fprintf(stderr, "ppscope nvtx: a thread was still inside NVTX at exit: the run is "
                        "flushed but not marked complete\n");
        return;
    }

    pps__nvtx_end_open_ranges(pps__stamp());

    unsigned long long dropped = atomic_load(&pps__nvtx.dropped);
    size_t refused = pps__nvtx_names_refused(&pps__nvtx.names);
    if (dropped)
        fprintf(stderr,
                "ppscope nvtx: %llu NVTX ranges not traced (%zu over %d distinct names; the rest "
                "nested deeper than %d, or out of memory)\n",
                dropped, refused, MAX_NAMES, PPS__NVTX_STACK_FRAMES);
    if (pps_trace_close(pps__nvtx.t, &err))
        fprintf(stderr, "ppscope nvtx: %s\n", err.msg);
    pps__nvtx.t = NULL;
}

/* The stage of spans whose name has none: PPSCOPE_STAGE, else the launcher's rank, else 0. */
static int default_stage(void)
{
    const char *env = getenv("PPSCOPE_STAGE");
    int rank = -1, world = -1;
    if (env && *env) {
        char *end;
        long v = strtol(env, &end, 10);
        if (*end == '\0' && v >= 0 && v <= 32767)
            return (int)v;
        fprintf(stderr, "ppscope nvtx: PPSCOPE_STAGE=\"%.40s\" is not a stage: ignored\n", env);
    }
    if (pps__launcher_rank(&rank, &world) == 0 && rank >= 0 && rank <= 32767)
        return rank;
    return 0;
}

/*
 * The device's kernels and copies, through CUPTI (docs/nvtx.md): when the process has CUDA's
 * driver loaded already (a PyTorch job on a GPU), or PPSCOPE_CUPTI=1 asks; never with
 * PPSCOPE_CUPTI=0. Where it cannot, one line says why, and the ranges are traced as before.
 */
static void device_activity(void)
{
    const char *env = getenv("PPSCOPE_CUPTI");
    void *cuda;
    struct pps_err err = {0};

    if (env && strcmp(env, "0") == 0)
        return;
    cuda = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
    if (!cuda && !(env && strcmp(env, "1") == 0))
        return;
    if (cuda)
        dlclose(cuda);
    if (pps_trace_device_activity(pps__nvtx.t, &err) != 0)
        fprintf(stderr, "ppscope nvtx: no device spans: %s\n", err.msg);
}

/* Opens the run. Under pps__nvtx.lock, once. Returns 0, or -1 after one line on stderr. */
static int open_run(void)
{
    struct pps_trace_options o;
    struct pps_err err = {0};
    char fallback[64];
    const char *dir = getenv("PPSCOPE_RUN");
    int rank = -1, world = -1, rc;

    if (!dir || !*dir) {
        snprintf(fallback, sizeof(fallback), "ppscope-run-%ld", (long)getpid());
        dir = fallback;
        if (pps__launcher_rank(&rank, &world) == 0 && world > 1)
            fprintf(stderr,
                    "ppscope nvtx: PPSCOPE_RUN is not set: rank %d writes its own %s; set it to "
                    "one directory for the whole job\n",
                    rank, dir);
    }
    pps_trace_options_init(&o);
    o.run_dir = dir;
    o.rank = -1;
    o.world = -1;
    if (pps_trace_open(&o, &pps__nvtx.t, &err)) {
        fprintf(stderr, "ppscope nvtx: tracing off: %s\n", err.msg);
        pps__nvtx.t = NULL;
        return -1;
    }
    pps_trace_meta(pps__nvtx.t, "source", "nvtx");

    pps__nvtx.stage = default_stage();
    const char *ranges = getenv("PPSCOPE_NVTX_RANGES");
    pps__nvtx.keep_ranges = 1;
    if (ranges && strcmp(ranges, "pipeline") == 0)
        pps__nvtx.keep_ranges = 0;
    else if (ranges && *ranges && strcmp(ranges, "all") != 0)
        fprintf(stderr,
                "ppscope nvtx: PPSCOPE_NVTX_RANGES=\"%.40s\" is neither \"all\" nor "
                "\"pipeline\": keeping all\n",
                ranges);

    pps_label_patterns_init(&pps__nvtx.pat);
    rc = pps_label_patterns_set_torch(&pps__nvtx.pat, getenv("PPSCOPE_NVTX_TORCH_B"),
                                      getenv("PPSCOPE_NVTX_STAGES"),
                                      getenv("PPSCOPE_NVTX_STAGE_ORDER"), &err);
    if (rc)
        fprintf(stderr, "ppscope nvtx: %s\n", err.msg);
    rc = pps_label_patterns_set_regex(&pps__nvtx.pat, getenv("PPSCOPE_NVTX_REGEX"),
                                      getenv("PPSCOPE_NVTX_GROUPS"), getenv("PPSCOPE_NVTX_KIND"),
                                      &err);
    if (rc)
        fprintf(stderr, "ppscope nvtx: %s\n", err.msg);

    if (pps__nvtx_names_init(&pps__nvtx.names, MAX_NAMES, pps__nvtx_fill_name, NULL) != 0) {
        fprintf(stderr, "ppscope nvtx: tracing off: out of memory\n");
        pps_trace_close(pps__nvtx.t, NULL);
        pps__nvtx.t = NULL;
        return -1;
    }
    device_activity();
    pps__nvtx_membarrier_init();
    pps__nvtx.have_key = pthread_key_create(&pps__nvtx.stack_key, pps__nvtx_stack_exit) == 0;
    pthread_atfork(NULL, NULL, at_fork_child);
    if (atexit(at_exit) != 0)
        fprintf(stderr, "ppscope nvtx: cannot register the exit handler: the run will not be "
                        "marked complete\n");
    return 0;
}

/* ---- the entry point ----------------------------------------------------------------------- */

/* Points the calling NVTX instance's entries of one module at our hooks. 0, or -1. */
static int install(const NvtxExportTableCallbacks *cb, NvtxCallbackModule module,
                   const struct pps__nvtx_hook *hooks, size_t n)
{
    NvtxFunctionTable table = NULL;
    unsigned int size = 0;
    if (!cb->GetModuleFunctionTable(module, &table, &size) || !table)
        return -1;
    for (size_t i = 0; i < n; i++)
        if (hooks[i].id < size && table[hooks[i].id])
            *table[hooks[i].id] = hooks[i].fn;
    return 0;
}

int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get)
{
    const NvtxExportTableCallbacks *cb;
    const NvtxExportTableVersionInfo *version;
    enum state state;

    if (!get)
        return 0;
    cb = (const NvtxExportTableCallbacks *)get(NVTX_ETID_CALLBACKS);
    if (!cb ||
        cb->struct_size < offsetof(NvtxExportTableCallbacks, GetModuleFunctionTable) +
                              sizeof(cb->GetModuleFunctionTable) ||
        !cb->GetModuleFunctionTable)
        return 0;

    pthread_mutex_lock(&pps__nvtx.lock);
    if (run_state == FRESH)
        run_state = open_run() == 0 ? OPEN : FAILED;
    state = run_state;
    pthread_mutex_unlock(&pps__nvtx.lock);
    if (state != OPEN || pps__nvtx.forked)
        return 0;

    version = (const NvtxExportTableVersionInfo *)get(NVTX_ETID_VERSIONINFO);
    if (version &&
        version->struct_size >= offsetof(NvtxExportTableVersionInfo, SetInjectionNvtxVersion) +
                                    sizeof(version->SetInjectionNvtxVersion) &&
        version->SetInjectionNvtxVersion)
        version->SetInjectionNvtxVersion(NVTX_VERSION);

    if (install(cb, NVTX_CB_MODULE_CORE, pps__nvtx_core_hooks, pps__nvtx_n_core_hooks))
        return 0;
    /* An NVTX instance older than domains has no CORE2 module: the core hooks still work. */
    install(cb, NVTX_CB_MODULE_CORE2, pps__nvtx_core2_hooks, pps__nvtx_n_core2_hooks);
    return 1;
}
