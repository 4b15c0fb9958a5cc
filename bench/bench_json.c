/*
 * bench_json.c - which JSON parser reads PyTorch profiler (Kineto) traces for the importer: the
 * candidates from Debian's archive that a C program can call, each reading the same large Chrome
 * trace in a streaming fashion (1 MiB chunks, never the whole file in memory), each event object
 * parsed, its fields taken (ph, cat, name, pid, tid, ts, dur, args' correlation and External id),
 * and forgotten. Each parser runs in a child process of its own, so its peak RSS is its own.
 *
 *   read     the file read in chunks, nothing parsed: the floor
 *   yajl     libyajl (2.1): SAX callbacks, fed chunk by chunk; numbers taken as their text
 *   json-c   libjson-c (0.16): json_tokener_parse_ex, incremental, one object per event; the
 *            array around the events walked by hand (json-c would build the whole array)
 *   simdjson libsimdjson (3.0, C++, through bench_json_simdjson.cpp): On-Demand over windows of
 *            whole events, found by a string-aware brace scan (its document_stream cannot split
 *            a comma-separated array in 3.0)
 *
 * usage: bench_json FILE.json [PARSER...]   (build and run: bench/bench_json.sh)
 * Prints events/s, MB/s and peak RSS per parser, and each one's rate as a ratio to yajl's.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <json-c/json.h>
#include <yajl/yajl_parse.h>

#include "bench_child.h"
#include "bench_json.h"

#define CHUNK (1 << 20)

/* What every parser adds up, so that none can skip the work and all must agree. */
void bench_event_done(struct bench_sum *s, const struct bench_event *e)
{
    s->events++;
    s->ts_sum += (int64_t)e->ts_us;
    s->name_bytes += e->name_len;
    s->corr_sum += e->corr + e->ext;
    if (e->ph == 'X')
        s->complete++;
}

/* ------------------------------------------------------------------------------------------ */

static int run_read(int fd, struct bench_sum *s)
{
    char *buf = malloc(CHUNK);
    ssize_t n;
    if (!buf)
        return -1;
    while ((n = read(fd, buf, CHUNK)) > 0)
        for (ssize_t i = 0; i < n; i++)
            s->events += buf[i] == '{'; /* touch every byte */
    free(buf);
    return n < 0 ? -1 : 0;
}

/* --- yajl ----------------------------------------------------------------------------------- */

enum yfield { YF_NONE, YF_PH, YF_CAT, YF_NAME, YF_PID, YF_TID, YF_TS, YF_DUR, YF_CORR, YF_EXT };

struct ystate {
    struct bench_sum *sum;
    int depth;      /* maps and arrays open */
    int in_events;  /* depth 2 is the traceEvents array */
    int key_events; /* the last top-level key was "traceEvents" */
    int in_args;    /* depth 4 inside an event's args */
    enum yfield field;
    struct bench_event ev;
};

static double num_text(const char *s, size_t n)
{
    char tmp[64];
    if (n >= sizeof(tmp))
        n = sizeof(tmp) - 1;
    memcpy(tmp, s, n);
    tmp[n] = '\0';
    return strtod(tmp, NULL);
}

static int y_number(void *ctx, const char *s, size_t n)
{
    struct ystate *y = ctx;
    if (!y->in_events)
        return 1;
    switch (y->field) {
    case YF_TS:
        y->ev.ts_us = num_text(s, n);
        break;
    case YF_DUR:
        y->ev.dur_us = num_text(s, n);
        break;
    case YF_PID:
        y->ev.pid = (int64_t)num_text(s, n);
        break;
    case YF_TID:
        y->ev.tid = (int64_t)num_text(s, n);
        break;
    case YF_CORR:
        y->ev.corr = (int64_t)num_text(s, n);
        break;
    case YF_EXT:
        y->ev.ext = (int64_t)num_text(s, n);
        break;
    default:
        break;
    }
    y->field = YF_NONE;
    return 1;
}

static int y_string(void *ctx, const unsigned char *s, size_t n)
{
    struct ystate *y = ctx;
    if (!y->in_events)
        return 1;
    if (y->field == YF_PH)
        y->ev.ph = n ? (char)s[0] : 0;
    else if (y->field == YF_NAME) {
        y->ev.name_len = n < sizeof(y->ev.name) - 1 ? n : sizeof(y->ev.name) - 1;
        memcpy(y->ev.name, s, y->ev.name_len);
    } else if (y->field == YF_CAT) {
        size_t c = n < sizeof(y->ev.cat) - 1 ? n : sizeof(y->ev.cat) - 1;
        memcpy(y->ev.cat, s, c);
        y->ev.cat[c] = '\0';
    }
    y->field = YF_NONE;
    return 1;
}

static int y_other(void *ctx)
{
    ((struct ystate *)ctx)->field = YF_NONE;
    return 1;
}
static int y_bool(void *ctx, int b)
{
    return y_other(ctx);
}

static int y_key(void *ctx, const unsigned char *k, size_t n)
{
    struct ystate *y = ctx;
#define KEY(lit) (n == sizeof(lit) - 1 && memcmp(k, lit, n) == 0)
    if (y->depth == 1) {
        y->key_events = KEY("traceEvents");
        return 1;
    }
    y->field = YF_NONE;
    if (y->depth == 3) {
        if (KEY("ph"))
            y->field = YF_PH;
        else if (KEY("cat"))
            y->field = YF_CAT;
        else if (KEY("name"))
            y->field = YF_NAME;
        else if (KEY("pid"))
            y->field = YF_PID;
        else if (KEY("tid"))
            y->field = YF_TID;
        else if (KEY("ts"))
            y->field = YF_TS;
        else if (KEY("dur"))
            y->field = YF_DUR;
        else if (KEY("args"))
            y->in_args = 1;
    } else if (y->depth == 4 && y->in_args) {
        if (KEY("correlation"))
            y->field = YF_CORR;
        else if (KEY("External id"))
            y->field = YF_EXT;
    }
#undef KEY
    return 1;
}

static int y_start_map(void *ctx)
{
    struct ystate *y = ctx;
    y->depth++;
    if (y->depth == 3 && y->in_events)
        memset(&y->ev, 0, sizeof(y->ev));
    if (y->depth != 4)
        y->in_args = 0;
    y->field = YF_NONE;
    return 1;
}

static int y_end_map(void *ctx)
{
    struct ystate *y = ctx;
    if (y->depth == 3 && y->in_events)
        bench_event_done(y->sum, &y->ev);
    if (y->depth == 4)
        y->in_args = 0;
    y->depth--;
    return 1;
}

static int y_start_array(void *ctx)
{
    struct ystate *y = ctx;
    y->depth++;
    if (y->depth == 2 && y->key_events)
        y->in_events = 1;
    y->field = YF_NONE;
    return 1;
}

static int y_end_array(void *ctx)
{
    struct ystate *y = ctx;
    if (y->depth == 2)
        y->in_events = 0;
    y->depth--;
    return 1;
}

static const yajl_callbacks ycb = {
    y_other,     y_bool, NULL,      NULL,          y_number,    y_string,
    y_start_map, y_key,  y_end_map, y_start_array, y_end_array,
};

static int run_yajl(int fd, struct bench_sum *s)
{
    struct ystate y = {.sum = s};
    unsigned char *buf = malloc(CHUNK);
    yajl_handle h = yajl_alloc(&ycb, NULL, &y);
    ssize_t n;
    int rc = 0;

    if (!buf || !h)
        return -1;
    /* Kineto's names are UTF-8 already; validating them costs without telling more. */
    yajl_config(h, yajl_dont_validate_strings, 1);
    while ((n = read(fd, buf, CHUNK)) > 0)
        if (yajl_parse(h, buf, (size_t)n) != yajl_status_ok) {
            rc = -1;
            break;
        }
    if (rc == 0 && yajl_complete_parse(h) != yajl_status_ok)
        rc = -1;
    if (rc)
        fprintf(stderr, "yajl: parse error\n");
    yajl_free(h);
    free(buf);
    return rc;
}

/* --- json-c --------------------------------------------------------------------------------- */

static void jc_event(struct json_object *o, struct bench_sum *s)
{
    struct bench_event e = {0};
    struct json_object *v, *args;
    if (json_object_object_get_ex(o, "ph", &v))
        e.ph = json_object_get_string(v)[0];
    if (json_object_object_get_ex(o, "cat", &v))
        snprintf(e.cat, sizeof(e.cat), "%s", json_object_get_string(v));
    if (json_object_object_get_ex(o, "name", &v)) {
        const char *n = json_object_get_string(v);
        e.name_len = strlen(n);
        if (e.name_len >= sizeof(e.name))
            e.name_len = sizeof(e.name) - 1;
        memcpy(e.name, n, e.name_len);
    }
    if (json_object_object_get_ex(o, "pid", &v))
        e.pid = json_object_get_int64(v);
    if (json_object_object_get_ex(o, "tid", &v))
        e.tid = json_object_get_int64(v);
    if (json_object_object_get_ex(o, "ts", &v))
        e.ts_us = json_object_get_double(v);
    if (json_object_object_get_ex(o, "dur", &v))
        e.dur_us = json_object_get_double(v);
    if (json_object_object_get_ex(o, "args", &args)) {
        if (json_object_object_get_ex(args, "correlation", &v))
            e.corr = json_object_get_int64(v);
        if (json_object_object_get_ex(args, "External id", &v))
            e.ext = json_object_get_int64(v);
    }
    bench_event_done(s, &e);
}

static int run_jsonc(int fd, struct bench_sum *s)
{
    char *buf = malloc(CHUNK);
    struct json_tokener *tok = json_tokener_new();
    /* 0: looking for "traceEvents" and its '[', 1: between events, 2: inside one, 3: done */
    int state = 0, rc = 0;
    size_t matched = 0;
    static const char key[] = "\"traceEvents\"";
    ssize_t n;

    if (!buf || !tok)
        return -1;
    while (rc == 0 && state != 3 && (n = read(fd, buf, CHUNK)) > 0) {
        size_t i = 0;
        while (i < (size_t)n && state != 3) {
            if (state == 0) {
                /* A textual search stands in for the top-level walk the importer would do. */
                if (matched < sizeof(key) - 1) {
                    matched = buf[i] == key[matched] ? matched + 1 : (buf[i] == '"');
                } else if (buf[i] == '[') {
                    state = 1;
                }
                i++;
            } else if (state == 1) {
                char c = buf[i];
                if (c == ']') {
                    state = 3;
                } else if (c == '{') {
                    state = 2;
                    continue;
                }
                i++;
            } else {
                struct json_object *o = json_tokener_parse_ex(tok, buf + i, (int)(n - i));
                enum json_tokener_error je = json_tokener_get_error(tok);
                if (o) {
                    i += json_tokener_get_parse_end(tok);
                    jc_event(o, s);
                    json_object_put(o);
                    json_tokener_reset(tok);
                    state = 1;
                } else if (je == json_tokener_continue) {
                    i = (size_t)n;
                } else {
                    fprintf(stderr, "json-c: %s\n", json_tokener_error_desc(je));
                    rc = -1;
                    break;
                }
            }
        }
    }
    json_tokener_free(tok);
    free(buf);
    return rc;
}

/* ------------------------------------------------------------------------------------------ */

struct result {
    int rc;
    double secs;
    long maxrss_kb;
    struct bench_sum sum;
};

/* What one child measures: the parser name on the file at path. */
struct job {
    const char *name, *path;
};

static void run_job(const void *arg, void *res)
{
    const struct job *j = arg;
    struct result *me = res;
    int fd = open(j->path, O_RDONLY);

    if (fd < 0)
        me->rc = -1;
    else if (!strcmp(j->name, "read"))
        me->rc = run_read(fd, &me->sum);
    else if (!strcmp(j->name, "yajl"))
        me->rc = run_yajl(fd, &me->sum);
    else if (!strcmp(j->name, "json-c"))
        me->rc = run_jsonc(fd, &me->sum);
#ifdef BENCH_SIMDJSON
    else if (!strcmp(j->name, "simdjson"))
        me->rc = bench_run_simdjson(fd, &me->sum);
    else if (!strcmp(j->name, "simd-dom"))
        me->rc = bench_run_simdjson_dom(fd, &me->sum);
#endif
    else
        me->rc = -2;
    if (fd >= 0)
        close(fd);
}

static int run_one(const char *name, const char *path, struct result *r)
{
    struct job j = {name, path};
    struct bench_cost cost = {0, 0};

    memset(r, 0, sizeof(*r));
    if (bench_in_child(run_job, &j, r, sizeof(*r), &cost) != 0)
        r->rc = -1;
    r->secs = cost.secs;
    r->maxrss_kb = cost.rss_kb;
    return r->rc;
}

int main(int argc, char **argv)
{
    static const char *const all[] = {"read", "yajl", "json-c", "simdjson", "simd-dom"};
    const char *const *names = all;
    int n_names = sizeof(all) / sizeof(all[0]);
    struct result res[8];
    double yajl_rate = 0;
    struct stat st;

    if (argc < 2) {
        fprintf(stderr, "usage: bench_json FILE.json [PARSER...]\n");
        return 2;
    }
    if (stat(argv[1], &st) != 0) {
        fprintf(stderr, "%s: %s\n", argv[1], strerror(errno));
        return 2;
    }
    if (argc > 2) {
        names = (const char *const *)argv + 2;
        n_names = argc - 2 > 8 ? 8 : argc - 2;
    }
    printf("file: %s, %.1f MB\n", argv[1], st.st_size / 1e6);
    printf("%-9s %12s %10s %10s %10s %9s\n", "parser", "events", "Mevents/s", "MB/s", "RSS MB",
           "vs yajl");
    for (int i = 0; i < n_names; i++) {
        struct result *r = &res[i];
        if (run_one(names[i], argv[1], r) != 0) {
            printf("%-9s failed (%d)\n", names[i], r->rc);
            continue;
        }
        double ev_rate = r->sum.events / r->secs;
        if (!strcmp(names[i], "yajl"))
            yajl_rate = ev_rate;
        printf("%-9s %12" PRId64 " %10.2f %10.0f %10.1f", names[i], r->sum.events, ev_rate / 1e6,
               st.st_size / 1e6 / r->secs, r->maxrss_kb / 1024.0);
        if (yajl_rate > 0 && strcmp(names[i], "read") != 0)
            printf(" %8.2fx", ev_rate / yajl_rate);
        printf("   (sum %" PRId64 " %" PRId64 " %" PRId64 ")\n", r->sum.ts_sum, r->sum.name_bytes,
               r->sum.corr_sum);
    }
    return 0;
}
