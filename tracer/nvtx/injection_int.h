/*
 * injection_int.h - what the two halves of libppscope_nvtx.so share and nobody else may use
 * (pps__ names): injection.c opens the run, wires the hooks into NVTX and closes the run at exit;
 * hooks.c holds the hooks, which turn NVTX ranges into spans. They meet in the run's state below
 * and in the few functions hooks.c lends to the run's lifecycle.
 *
 * Every file of the library includes this header before any other NVTX header: it asks for
 * the NVTX declarations without the NVTX implementation, as an injection must.
 */
#ifndef PPS_NVTX_INJECTION_INT_H
#define PPS_NVTX_INJECTION_INT_H

#ifndef NVTX_NO_IMPL
#define NVTX_NO_IMPL
#endif
#include <nvtx3/nvToolsExt.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "names.h"
#include "labels.h"

/* Push/pop nesting kept per thread; deeper pushes are dropped. */
#define PPS__NVTX_STACK_FRAMES 128

/*
 * The run, set up by injection.c when the first NVTX instance initialises the injection, and
 * read by the hooks. Its plain fields are written while the run opens, before any hook is
 * installed; after that only by the fork and exit handlers.
 */
struct pps__nvtx {
    pthread_mutex_t lock; /* opening, iterations, start/end ranges, threads, domains */
    struct pps_tracer *t;
    int stage;       /* the stage of a span whose name has none */
    int keep_ranges; /* 0 with PPSCOPE_NVTX_RANGES=pipeline: only pipeline ops */
    struct pps_label_patterns pat;
    struct pps__nvtx_names names;
    atomic_int closing; /* set by the exit handler, or in a forked child: hooks do nothing */
    int membarrier;     /* 1: the process is registered for MEMBARRIER_CMD_PRIVATE_EXPEDITED */
    int forked;
    atomic_ullong dropped;   /* ranges not traced, reported at exit */
    pthread_key_t stack_key; /* its destructor is pps__nvtx_stack_exit */
    int have_key;
};

extern struct pps__nvtx pps__nvtx;

/* The name cache's fill callback (names.h): a new name's rule, and its id with the tracer. */
void pps__nvtx_fill_name(void *ctx, struct pps__nvtx_name *name);

/* The destructor of stack_key: a thread exits, leaving its push/pop stack behind. */
void pps__nvtx_stack_exit(void *stack);

/* Registers the process for membarrier(2)'s expedited barrier, setting pps__nvtx.membarrier;
 * for open_run, before any hook is installed. */
void pps__nvtx_membarrier_init(void);

/*
 * For the exit handler, once closing is set: waits up to ms milliseconds for every thread to
 * leave the hook it is in (hooks.c: enter() and leave()). 0 when none is inside one, -1 when a
 * thread still is.
 */
int pps__nvtx_hooks_quiesce(int ms);

/*
 * Records every range still open as ending at now, or when its thread exited. For the exit
 * handler, once no hook is running any more; takes lock.
 */
void pps__nvtx_end_open_ranges(int64_t now);

/* One entry of an NVTX module's function table, and the function that serves it. */
struct pps__nvtx_hook {
    unsigned id;
    NvtxFunctionPointer fn;
};

/* The hooks of the core module (NVTX_CB_MODULE_CORE) and of domains (NVTX_CB_MODULE_CORE2). */
extern const struct pps__nvtx_hook pps__nvtx_core_hooks[];
extern const size_t pps__nvtx_n_core_hooks;
extern const struct pps__nvtx_hook pps__nvtx_core2_hooks[];
extern const size_t pps__nvtx_n_core2_hooks;

#endif
