/*
 * pps_run_id.h - a run's identity: the id that every shard of one run carries in meta run_id
 * (docs/schema.md), so that a reader tells the shards of one run from those of another copied
 * beside them. The runtime makes one per run (rank 0's, under MPI), `ppscope sim --trace` and the
 * importers one per run they write; merge keeps each rank's.
 *
 * Header only: the runtime, the CLI and storage/ share it without depending on one another.
 */
#ifndef PPS_RUN_ID_H
#define PPS_RUN_ID_H

#include <fcntl.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

/* Hex digits of a run id; a buffer for one holds PPS_RUN_ID_LEN + 1 bytes. */
#define PPS_RUN_ID_LEN 16

/* splitmix64: spreads a weak seed (time, pid) over all 64 bits. */
static inline uint64_t pps__run_id_mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

/* A new run id, 64 random bits as PPS_RUN_ID_LEN hex digits and a NUL, into buf. */
static inline void pps_run_id_new(char *buf)
{
    static const char hex[] = "0123456789abcdef";
    unsigned char raw[8];
    uint64_t v = 0;
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC), got = 0;

    if (fd >= 0) {
        got = read(fd, raw, sizeof(raw)) == (ssize_t)sizeof(raw);
        close(fd);
    }
    if (got) {
        for (int i = 0; i < 8; i++)
            v = v << 8 | raw[i];
    } else {
        /* No random source (a chroot without /dev): only two runs started in one nanosecond by
         * one process could share an id. */
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        v = pps__run_id_mix((uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec) ^
            pps__run_id_mix((uint64_t)getpid() << 32 ^ (uint64_t)(uintptr_t)&ts);
    }
    for (int i = 0; i < PPS_RUN_ID_LEN; i++)
        buf[i] = hex[(v >> (60 - 4 * i)) & 15];
    buf[PPS_RUN_ID_LEN] = '\0';
}

#endif
