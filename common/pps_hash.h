/*
 * FNV-1a, 64 bits: the one string hash of ppscope's in-memory tables (none is stored on disk,
 * so that the hash may change between releases).
 */
#ifndef PPS_HASH_H
#define PPS_HASH_H

#include <stddef.h>
#include <stdint.h>

#define PPS_FNV_OFFSET 14695981039346656037ULL
#define PPS_FNV_PRIME  1099511628211ULL

/* The hash of the n bytes at s. */
static inline uint64_t pps_fnv1a(const char *s, size_t n)
{
    uint64_t h = PPS_FNV_OFFSET;

    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)s[i];
        h *= PPS_FNV_PRIME;
    }
    return h;
}

/* The hash of the NUL-terminated s. */
static inline uint64_t pps_fnv1a_str(const char *s)
{
    uint64_t h = PPS_FNV_OFFSET;

    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= PPS_FNV_PRIME;
    }
    return h;
}

#endif
