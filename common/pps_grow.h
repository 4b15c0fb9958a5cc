/*
 * pps_grow.h - the one grow-by-doubling helper (git's ALLOC_GROW): an array that must hold need
 * elements of elem bytes, *cap of them allocated, grown to the next power-of-two multiple of 16
 * where it is short. Header-only (static inline) because common/ is.
 */
#ifndef PPS_GROW_H
#define PPS_GROW_H

#include <stdint.h>
#include <stdlib.h>

#include "pps_error.h"

/* Makes *arr hold at least need elements: 0, or PPS_ENOMEM (*arr and *cap left as they were). */
static inline int pps_grow(void **arr, size_t *cap, size_t need, size_t elem)
{
    size_t n = *cap ? *cap : 16;
    void *p;

    if (need <= *cap)
        return 0;
    while (n < need) {
        if (n > SIZE_MAX / 2 / elem)
            return PPS_ENOMEM;
        n *= 2;
    }
    if (!(p = realloc(*arr, n * elem)))
        return PPS_ENOMEM;
    *arr = p;
    *cap = n;
    return 0;
}

#endif
