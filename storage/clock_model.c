/*
 * clock_model.c - how a rank's host clock maps onto rank 0's: the offsets a rank stored (meta
 * clock_offset_* and clock_sync_*), as a line through the two sync points or one constant, and
 * the times of a span moved along it (storage_int.h: struct pps__clock).
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "storage_int.h"

static const char *const clock_keys[] = {"clock_offset_start_ns", "clock_offset_end_ns",
                                         "clock_sync_start_ns", "clock_sync_end_ns"};

int pps__clock_note(struct pps__clock *ri, int have[4], const char *key, const char *value,
                    const char *path, struct pps_err *err)
{
    int64_t v;

    if (!strcmp(key, "complete")) {
        /* Only the writer sets it, to 0 or 1: anything else is damage, not "still running". */
        if (strcmp(value, "0") != 0 && strcmp(value, "1") != 0)
            return pps_err_set(err, PPS_EFORMAT, "%s: meta complete of rank %d is '%s', not 0 or 1",
                               path, ri->rank, value);
        ri->complete = value[0] == '1';
        return 0;
    }
    for (int k = 0; k < 4; k++) {
        if (strcmp(key, clock_keys[k]) != 0)
            continue;
        if (pps__parse_i64(value, &v) != 0)
            return pps_err_set(err, PPS_EFORMAT,
                               "%s: meta %s of rank %d is '%s', not a number of nanoseconds", path,
                               key, ri->rank, value);
        have[k] = 1;
        *(k == 0 ? &ri->o0 : k == 1 ? &ri->o1 : k == 2 ? &ri->t0 : &ri->t1) = v;
    }
    return 0;
}

void pps__clock_finish(struct pps__clock *ri, const int have[4])
{
    ri->linear = have[0] && have[1] && have[2] && have[3] && ri->t1 != ri->t0;
    ri->has_offset = have[0] || have[1];
    if (!have[0] && have[1])
        ri->o0 = ri->o1; /* only the end offset: use it throughout */
}

int pps__clock_next(struct pps__clock **ranks, size_t *n, size_t *cap, int have[4], int rank)
{
    if (*n)
        pps__clock_finish(&(*ranks)[*n - 1], have);
    if (pps_grow((void **)ranks, cap, *n + 1, sizeof(**ranks)))
        return -1;
    memset(&(*ranks)[*n], 0, sizeof(**ranks));
    (*ranks)[(*n)++].rank = rank;
    memset(have, 0, 4 * sizeof(*have));
    return 0;
}

const struct pps__clock *pps__clock_find(const struct pps__clock *ranks, size_t n, int rank)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (ranks[mid].rank < rank)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && ranks[lo].rank == rank ? &ranks[lo] : NULL;
}

int pps__clock_align(const struct pps__clock *ri, int64_t t, int64_t *out)
{
    int64_t off = ri->o0;

    if (ri->linear) {
        double f = ((double)t - (double)ri->t0) / ((double)ri->t1 - (double)ri->t0);
        double o = (double)ri->o0 + f * ((double)ri->o1 - (double)ri->o0);
        if (!(o > -9.2e18 && o < 9.2e18))
            return -1;
        off = (int64_t)llround(o);
    }
    if ((off > 0 && t > INT64_MAX - off) || (off < 0 && t < INT64_MIN - off))
        return -1;
    *out = t + off;
    return 0;
}

int pps__clock_align_span(const struct pps__clock *ri, struct pps_span *s, const char *path,
                          struct pps_err *err)
{
    int64_t raw = s->start_ns;

    if (ri->has_offset && (pps__clock_align(ri, s->start_ns, &s->start_ns) ||
                           pps__clock_align(ri, s->end_ns, &s->end_ns) ||
                           s->start_ns < -PPS__TIME_LIMIT || s->start_ns > PPS__TIME_LIMIT ||
                           s->end_ns < -PPS__TIME_LIMIT || s->end_ns > PPS__TIME_LIMIT))
        return pps_err_set(err, PPS_EFORMAT,
                           "%s: truncated or corrupted (aligned time %lld out of range)", path,
                           (long long)raw);
    return 0;
}
