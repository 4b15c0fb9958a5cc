/*
 * bench_json.h - what bench_json.c and its C++ part (bench_json_simdjson.cpp) share: the fields
 * every parser takes from an event, and the sums that show they all read the same events.
 */
#ifndef PPS_BENCH_JSON_H
#define PPS_BENCH_JSON_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct bench_event {
    char ph;
    char cat[32];
    char name[256];
    size_t name_len;
    double ts_us, dur_us;
    int64_t pid, tid, corr, ext;
};

struct bench_sum {
    int64_t events, complete, ts_sum, name_bytes, corr_sum;
};

void bench_event_done(struct bench_sum *s, const struct bench_event *e);
/* Reads fd to its end with simdjson; 0 or -1. */
int bench_run_simdjson(int fd, struct bench_sum *s);
int bench_run_simdjson_dom(int fd, struct bench_sum *s);

#ifdef __cplusplus
}
#endif

#endif
