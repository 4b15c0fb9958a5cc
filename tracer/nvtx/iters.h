/*
 * iters.h - iterations inferred from the forward ops of a program that does not mark them (a
 * PyTorch pipeline's "PP:" labels carry no iteration). In one process, each (stage, chunk,
 * microbatch) runs its forward once per iteration: the first forward that repeats one already
 * seen in the current iteration starts the next. The first forward of all starts iteration 0.
 * Safe for threads calling at once: a forward takes a lock only for a (stage, chunk, microbatch)
 * it has never seen; the rest read a table that never moves under them and raise counters.
 */
#ifndef PPS_NVTX_ITERS_H
#define PPS_NVTX_ITERS_H

#include <pthread.h>
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
    pthread_mutex_t lock;                       /* adding a key */
    size_t n;                                   /* keys, under the lock */
    _Atomic int iter; /* the current iteration, -1 before the first forward */
};

#define PPS__NVTX_ITERS_INIT                                                                       \
    {                                                                                              \
        NULL, PTHREAD_MUTEX_INITIALIZER, 0, -1                                                     \
    }

/*
 * Feeds the start of a forward op. Returns the iteration it begins (>= 0) when it starts one,
 * else -1 (also when mb < 0: a forward without a microbatch says nothing, and when memory runs
 * out: the iteration is then not advanced).
 */
int pps__nvtx_iters_forward(struct pps__nvtx_iters *it, int stage, int chunk, int mb);

/* Frees the set, with no caller inside it; the struct is PPS__NVTX_ITERS_INIT again. */
void pps__nvtx_iters_release(struct pps__nvtx_iters *it);

#endif
