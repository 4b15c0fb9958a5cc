/*
 * iters.h - iterations inferred from the forward ops of a program that does not mark them (a
 * PyTorch pipeline's "PP:" labels carry no iteration). In one process, each (stage, chunk,
 * microbatch) runs its forward once per iteration: the first forward that repeats one already
 * seen in the current iteration starts the next. The first forward of all starts iteration 0.
 * Two ways in: pps__nvtx_iters_join(), for any thread at any time with no lock, takes the
 * forwards that join the current iteration (all but one an iteration, once each key is known);
 * every other forward goes through pps__nvtx_iters_forward(), whose calls the caller serialises
 * (one lock around them all).
 */
#ifndef PPS_NVTX_ITERS_H
#define PPS_NVTX_ITERS_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

/* A (stage, chunk, mb) seen, and the last iteration it ran its forward in. */
struct pps__nvtx_iter_key {
    uint64_t key; /* (stage, chunk, mb) + 1 */
    _Atomic int last;
};

/* Open addressing over pointers to the keys (which never move); a grown table keeps the older
 * one, which a reader may still be probing, until the set is released. */
struct pps__nvtx_iter_table {
    size_t cap;
    struct pps__nvtx_iter_table *older;
    struct pps__nvtx_iter_key *_Atomic slots[];
};

struct pps__nvtx_iters {
    struct pps__nvtx_iter_table *_Atomic table; /* NULL before the first forward */
    size_t n;                                   /* keys (pps__nvtx_iters_forward()'s) */
    _Atomic int iter; /* the current iteration, -1 before the first forward */
};

#define PPS__NVTX_ITERS_INIT                                                                       \
    {                                                                                              \
        NULL, 0, -1                                                                                \
    }

/* pps__nvtx_iters_join()'s answer for a forward it cannot take alone. */
#define PPS__NVTX_ITERS_SERIAL (-2)

/*
 * A forward op starts, on any thread: -1 where it joins the current iteration (its key is
 * known and has not run in it), taken; else PPS__NVTX_ITERS_SERIAL, and the caller passes it
 * to pps__nvtx_iters_forward() under its lock (a new key, one that repeats, the first forward
 * of all, or another forward of the same key racing it). Never starts an iteration.
 */
int pps__nvtx_iters_join(struct pps__nvtx_iters *it, int stage, int chunk, int mb);

/*
 * Feeds the start of a forward op; the caller serialises these calls (joins may run meanwhile).
 * Returns the iteration it begins (>= 0) when it starts one, else -1 (also when mb < 0: a
 * forward without a microbatch says nothing, and when memory runs out: the iteration is then
 * not advanced). Alone, on one thread, it is the whole of the inference.
 */
int pps__nvtx_iters_forward(struct pps__nvtx_iters *it, int stage, int chunk, int mb);

/* Frees the set, with no caller inside it; the struct is PPS__NVTX_ITERS_INIT again. */
void pps__nvtx_iters_release(struct pps__nvtx_iters *it);

#endif
