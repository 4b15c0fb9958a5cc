/*
 * The string hashes of ppscope's in-memory tables: FNV-1a, 64 bits, and pps_hash_bytes(),
 * which takes eight bytes a step for the lookups on a hot path (the NVTX injection's names) and
 * may change between releases. FNV-1a is a fixed function: what is kept on disk (a run's stamp,
 * a summary's check: docs/schema.md) uses it alone.
 */
#ifndef PPS_HASH_H
#define PPS_HASH_H

#include <stddef.h>
#include <stdint.h>

#define PPS_FNV_OFFSET 14695981039346656037ULL
#define PPS_FNV_PRIME  1099511628211ULL

/* FNV-1a continued from h (PPS_FNV_OFFSET to begin) over the n bytes at p. */
static inline uint64_t pps_fnv1a_more(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = (const unsigned char *)p;

    for (size_t i = 0; i < n; i++) {
        h ^= b[i];
        h *= PPS_FNV_PRIME;
    }
    return h;
}

/* The hash of the n bytes at s. */
static inline uint64_t pps_fnv1a(const char *s, size_t n)
{
    return pps_fnv1a_more(PPS_FNV_OFFSET, s, n);
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

/* A 64-bit hash of the n bytes at s, a word at a time: each step mixes eight bytes with one
 * multiply, the last is a full avalanche (splitmix64's finaliser), so that every bit, the low
 * ones a table indexes by too, depends on every byte. */
static inline uint64_t pps_hash_bytes(const char *s, size_t n)
{
    uint64_t h = (uint64_t)n * 0x9e3779b97f4a7c15ULL;
    const unsigned char *p = (const unsigned char *)s;

    for (; n >= 8; p += 8, n -= 8) {
        uint64_t w = (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 |
                     (uint64_t)p[3] << 24 | (uint64_t)p[4] << 32 | (uint64_t)p[5] << 40 |
                     (uint64_t)p[6] << 48 | (uint64_t)p[7] << 56;
        h = (h ^ w) * 0xbf58476d1ce4e5b9ULL;
        h ^= h >> 31;
    }
    if (n) {
        uint64_t w = 0;
        for (size_t i = 0; i < n; i++)
            w |= (uint64_t)p[i] << (8 * i);
        h = (h ^ w) * 0x94d049bb133111ebULL;
    }
    h ^= h >> 30;
    h *= 0xbf58476d1ce4e5b9ULL;
    h ^= h >> 27;
    h *= 0x94d049bb133111ebULL;
    h ^= h >> 31;
    return h;
}

#endif
