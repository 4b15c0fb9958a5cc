/*
 * iters.c - iterations from repeated forward ops (iters.h): a set of the (stage, chunk, mb)
 * forwards of the current iteration, emptied when one repeats.
 */
#include "iters.h"

#include <stdlib.h>
#include <string.h>

/* stage and chunk are 16-bit in the trace store, mb 32-bit: the key is unique, and never 0. */
static uint64_t key_of(int stage, int chunk, int mb)
{
    return ((((uint64_t)(uint16_t)stage << 16) | (uint16_t)chunk) << 32 | (uint32_t)mb) + 1;
}

static size_t slot_of(uint64_t key, size_t cap)
{
    key ^= key >> 33;
    key *= 0xff51afd7ed558ccdull;
    key ^= key >> 33;
    return (size_t)key & (cap - 1);
}

/* Adds key (not present) to the set, growing it; 0, or -1 out of memory. */
static int add(struct pps__nvtx_iters *it, uint64_t key)
{
    if ((it->n + 1) * 2 > it->cap) {
        size_t cap = it->cap ? it->cap * 2 : 64;
        uint64_t *keys = calloc(cap, sizeof(*keys));
        if (!keys)
            return -1;
        for (size_t i = 0; i < it->cap; i++) {
            if (!it->keys[i])
                continue;
            size_t k = slot_of(it->keys[i], cap);
            while (keys[k])
                k = (k + 1) & (cap - 1);
            keys[k] = it->keys[i];
        }
        free(it->keys);
        it->keys = keys;
        it->cap = cap;
    }
    size_t k = slot_of(key, it->cap);
    while (it->keys[k])
        k = (k + 1) & (it->cap - 1);
    it->keys[k] = key;
    it->n++;
    return 0;
}

static int contains(const struct pps__nvtx_iters *it, uint64_t key)
{
    if (!it->cap)
        return 0;
    for (size_t k = slot_of(key, it->cap); it->keys[k]; k = (k + 1) & (it->cap - 1))
        if (it->keys[k] == key)
            return 1;
    return 0;
}

int pps__nvtx_iters_forward(struct pps__nvtx_iters *it, int stage, int chunk, int mb)
{
    uint64_t key;
    int started = -1;
    if (mb < 0)
        return -1;
    key = key_of(stage, chunk < 0 ? 0 : chunk, mb);
    if (it->iter < 0) {
        started = 0;
    } else if (contains(it, key)) {
        memset(it->keys, 0, it->cap * sizeof(*it->keys));
        it->n = 0;
        started = it->iter + 1;
    }
    if (add(it, key) != 0)
        return -1;
    if (started >= 0)
        it->iter = started;
    return started;
}

void pps__nvtx_iters_release(struct pps__nvtx_iters *it)
{
    free(it->keys);
    *it = (struct pps__nvtx_iters)PPS__NVTX_ITERS_INIT;
}
