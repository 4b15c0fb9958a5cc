/*
 * iters.h - iterations inferred from the forward ops of a program that does not mark them (a
 * PyTorch pipeline's "PP:" labels carry no iteration). In one process, each (stage, chunk,
 * microbatch) runs its forward once per iteration: the first forward that repeats one already
 * seen in the current iteration starts the next. The first forward of all starts iteration 0.
 * Pure; the caller serialises access.
 */
#ifndef PPS_NVTX_ITERS_H
#define PPS_NVTX_ITERS_H

#include <stddef.h>
#include <stdint.h>

struct pps__nvtx_iters {
    uint64_t *keys; /* open addressing over (stage, chunk, mb) + 1; 0 is an empty slot */
    size_t cap;
    size_t n;
    int iter; /* the current iteration, -1 before the first forward */
};

#define PPS__NVTX_ITERS_INIT                                                                       \
    {                                                                                              \
        NULL, 0, 0, -1                                                                             \
    }

/*
 * Feeds the start of a forward op. Returns the iteration it begins (>= 0) when it starts one,
 * else -1 (also when mb < 0: a forward without a microbatch says nothing, and when memory runs
 * out: the iteration is then not advanced).
 */
int pps__nvtx_iters_forward(struct pps__nvtx_iters *it, int stage, int chunk, int mb);

/* Frees the set; the struct is PPS__NVTX_ITERS_INIT again. */
void pps__nvtx_iters_release(struct pps__nvtx_iters *it);

#endif
