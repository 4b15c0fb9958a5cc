/*
 * kineto_read.c - a Chrome-trace JSON file as a stream of events (kineto_json.h): zlib reads the
 * file in chunks ahead of the parse (gzip or plain, gzread tells them apart; gz_ahead.h), a small
 * state machine walks the top level ({"key": value, ...}, or a bare array of events), and the
 * "traceEvents" array goes to simdjson a window of whole events at a time.
 *
 * Finding where a window ends without a scan of our own: the window is cut after its last '}'
 * that a ',' follows (whitespace between), and parsed as "[" + events + "]". A cut inside a
 * string, or after a '}' that closes an object nested in an event, leaves a document that cannot
 * be valid (a string or an object left open), so a wrong cut is never taken for a right one:
 * simdjson refuses it, and the window is cut again by a careful scan that follows strings and
 * depth. Nearly always the quick cut is right, and simdjson's own scan does the work.
 *
 * Memory: the window (a chunk and what is left of the one before), grown only for an event or a
 * top-level value bigger than that, up to PPS__KREADER_MAX_ITEM.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#include "gz_ahead.h"
#include "kineto_json.h"

#define CHUNK PPS__GZAHEAD_CHUNK

enum state {
    S_BEGIN,     /* before the first byte that is not whitespace */
    S_KEY_FIRST, /* after '{': a key or '}' */
    S_KEY,       /* after ',': a key */
    S_COLON,     /* after a key */
    S_VALUE,     /* after ':' */
    S_AFTER,     /* after a value: ',' or '}' */
    S_END,       /* after the closing '}' (or ']' of a bare array): whitespace only */
    S_EVENTS,    /* inside traceEvents */
};

enum key { K_OTHER, K_EVENTS, K_DIST, K_BASE, K_HOST };

struct pps__kreader_int {
    struct pps__gzahead *gz;
    int64_t read_total; /* bytes of data read so far */
    struct pps__kjson *kj;
    char *buf;        /* cap + PPS__KJSON_PADDING bytes */
    size_t cap, have; /* buf[0..have) holds data */
    size_t pos;       /* the next byte to look at */
    int eof;
    enum state st;
    enum key key;
    int bare;       /* the file is a bare array of events */
    int saw_events; /* a traceEvents array was there */
};

static int is_ws(char c)
{
    return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

static int fail(struct pps__kreader *r, struct pps_err *err, const char *what)
{
    return pps_err_set(err, PPS_EFORMAT, "%s: not a Kineto trace: %s", r->path, what);
}

/*
 * Reads the next chunk behind what the window holds, keeping the byte before pos (where a
 * window's '[' goes). 1: more data, 0: the end of the file, or a negative PPS_E....
 */
static int fill(struct pps__kreader *r, struct pps_err *err)
{
    struct pps__kreader_int *in = r->in;
    char why[128];
    long n;
    int zerr, sys;

    if (in->eof)
        return 0;
    if (in->pos > 1) {
        size_t keep = in->pos - 1;
        memmove(in->buf, in->buf + keep, in->have - keep);
        in->have -= keep;
        in->pos -= keep;
    }
    if (in->cap - in->have < CHUNK) {
        size_t cap = in->cap * 2;
        char *b;
        if (in->have > PPS__KREADER_MAX_ITEM)
            return pps_err_set(err, PPS_EFORMAT,
                               "%s: not a Kineto trace: an event or value over %u MiB at byte "
                               "%" PRId64,
                               r->path, PPS__KREADER_MAX_ITEM >> 20, in->read_total);
        if (!(b = realloc(in->buf, cap + PPS__KJSON_PADDING)))
            return pps_err_set(err, PPS_ENOMEM, "%s: out of memory", r->path);
        in->buf = b;
        in->cap = cap;
    }
    n = pps__gzahead_read(in->gz, in->buf + in->have, &zerr, &sys, why, sizeof(why));
    if (n < 0) {
        if (zerr == Z_BUF_ERROR || zerr == Z_DATA_ERROR)
            return pps_err_set(err, PPS_EFORMAT, "%s: truncated or corrupted gzip file (%s)",
                               r->path, why);
        return pps_err_set(err, PPS_EIO, "%s: cannot read (%s)", r->path,
                           zerr == Z_ERRNO ? strerror(sys) : why);
    }
    if (n == 0) {
        /* zlib says a gzip stream cut short only here, at what it takes for its end. */
        if (zerr == Z_BUF_ERROR || zerr == Z_DATA_ERROR)
            return pps_err_set(err, PPS_EFORMAT, "%s: truncated or corrupted gzip file", r->path);
        in->eof = 1;
        return 0;
    }
    in->have += (size_t)n;
    in->read_total += n;
    return 1;
}

/* Skips whitespace; 1 with pos at a byte, 0 at the end of the file, or an error. */
static int next_byte(struct pps__kreader *r, struct pps_err *err)
{
    struct pps__kreader_int *in = r->in;
    for (;;) {
        while (in->pos < in->have && is_ws(in->buf[in->pos]))
            in->pos++;
        if (in->pos < in->have)
            return 1;
        int rc = fill(r, err);
        if (rc <= 0)
            return rc;
    }
}

/*
 * Where the JSON value at b[0] ends: 1 with *end (one past it), 0 when b[0..n) holds only its
 * beginning. Follows strings and nesting without checking the grammar: values found this way are
 * skipped, or parsed afterwards.
 */
static int value_end(const char *b, size_t n, size_t *end)
{
    size_t depth = 0;
    int in_str = 0;

    for (size_t i = 0; i < n; i++) {
        char c = b[i];
        if (in_str) {
            if (c == '\\') {
                i++;
            } else if (c == '"') {
                in_str = 0;
                if (depth == 0) {
                    *end = i + 1;
                    return 1;
                }
            }
        } else if (c == '"') {
            in_str = 1;
        } else if (c == '{' || c == '[') {
            depth++;
        } else if (c == '}' || c == ']') {
            if (depth == 0) { /* what ends a number, true, false or null */
                *end = i;
                return 1;
            }
            if (--depth == 0) {
                *end = i + 1;
                return 1;
            }
        } else if (depth == 0 && (is_ws(c) || c == ',')) {
            *end = i;
            return 1;
        }
    }
    return 0;
}

/* The value at pos, whole in the window: 1 with [pos, *end), or an error (0 never). */
static int whole_value(struct pps__kreader *r, size_t *end, struct pps_err *err)
{
    struct pps__kreader_int *in = r->in;
    for (;;) {
        if (value_end(in->buf + in->pos, in->have - in->pos, end)) {
            *end += in->pos;
            return 1;
        }
        int rc = fill(r, err);
        if (rc < 0)
            return rc;
        if (rc == 0) {
            /* A number at the very end of the file ends there (it is still truncated: the
             * object around it never closed, which the caller finds next). */
            *end = in->have;
            return 1;
        }
    }
}

static enum key key_of(const char *s, size_t n)
{
#define IS(lit) (n == sizeof(lit) - 1 && memcmp(s, lit, n) == 0)
    if (IS("traceEvents"))
        return K_EVENTS;
    if (IS("distributedInfo"))
        return K_DIST;
    if (IS("baseTimeNanoseconds"))
        return K_BASE;
    if (IS("host_name"))
        return K_HOST;
#undef IS
    return K_OTHER;
}

/* Strict decimal integer text (an optional '-', digits), no overflow. */
static int parse_int(const char *s, size_t n, int64_t *out)
{
    int neg = n && s[0] == '-';
    uint64_t v = 0;
    size_t i = (size_t)neg;

    if (i == n)
        return -1;
    for (; i < n; i++) {
        if (s[i] < '0' || s[i] > '9' || v > (UINT64_MAX - 9) / 10)
            return -1;
        v = v * 10 + (uint64_t)(s[i] - '0');
    }
    if (v > (uint64_t)INT64_MAX)
        return -1;
    *out = neg ? -(int64_t)v : (int64_t)v;
    return 0;
}

/* A top-level value that is not traceEvents: read what the importer needs, skip the rest. */
static int top_value(struct pps__kreader *r, struct pps_err *err)
{
    struct pps__kreader_int *in = r->in;
    size_t end;
    int rc = whole_value(r, &end, err);
    char *v = in->buf + in->pos, msg[200];
    size_t n = end - in->pos;

    if (rc < 0)
        return rc;
    switch (in->key) {
    case K_DIST:
        if (pps__kjson_dist_info(in->kj, v, n, in->cap + PPS__KJSON_PADDING - in->pos, &r->rank,
                                 &r->world, msg, sizeof(msg)) != 0)
            return fail(r, err, msg);
        if (r->rank < -1 || r->rank > INT16_MAX || r->world < -1 || r->world > INT16_MAX + 1)
            return fail(r, err, "distributedInfo's rank or world_size is out of range");
        break;
    case K_BASE:
        if (parse_int(v, n, &r->base_ns) != 0)
            return fail(r, err, "baseTimeNanoseconds is not an integer");
        break;
    case K_HOST:
        /* A name with escapes is left out rather than unescaped: it is only shown. */
        if (n >= 2 && v[0] == '"' && v[n - 1] == '"' && n - 2 < sizeof(r->host) &&
            !memchr(v + 1, '\\', n - 2)) {
            memcpy(r->host, v + 1, n - 2);
            r->host[n - 2] = '\0';
        }
        break;
    default:
        break;
    }
    in->pos = end;
    return 0;
}

/* After the last '}' that whitespace and a ',' follow in b[0..n): the ','s index, or 0. */
static size_t quick_cut(const char *b, size_t n)
{
    for (size_t i = n; i-- > 1;) {
        size_t j = i;
        if (b[i] != ',')
            continue;
        while (j > 0 && is_ws(b[j - 1]))
            j--;
        if (j > 0 && b[j - 1] == '}')
            return i;
    }
    return 0;
}

/*
 * The careful cut of b[0..n), the events after '[': following strings and depth, the index of
 * the last ',' between two events (*comma), and of the ']' that closes the array (*close), each
 * 0 when there is none (b[0] is an event's first byte, never either). -1 for a '}' or ']' that
 * closes what was never opened.
 */
static int careful_cut(const char *b, size_t n, size_t *comma, size_t *close)
{
    size_t depth = 0;
    int in_str = 0;

    *comma = *close = 0;
    for (size_t i = 0; i < n; i++) {
        char c = b[i];
        if (in_str) {
            if (c == '\\')
                i++;
            else if (c == '"')
                in_str = 0;
        } else if (c == '"') {
            in_str = 1;
        } else if (c == '{' || c == '[') {
            depth++;
        } else if (c == '}' || c == ']') {
            if (depth == 0) {
                if (c == '}')
                    return -1;
                *close = i;
                return 0;
            }
            depth--;
        } else if (c == ',' && depth == 0) {
            *comma = i;
        }
    }
    return 0;
}

/* Parses the window's events b[0..len) (b[-1] and b[len] are ours to overwrite). */
static int parse_window(struct pps__kreader *r, char *b, size_t len, const struct pps__kev **evs,
                        size_t *n, char *msg, size_t msglen)
{
    struct pps__kreader_int *in = r->in;
    b[-1] = '[';
    b[len] = ']';
    return pps__kjson_events(in->kj, b - 1, len + 2,
                             in->cap + PPS__KJSON_PADDING - (size_t)(b - 1 - in->buf), evs, n, msg,
                             msglen);
}

/* Inside traceEvents: 1 with events, 0 when the array closed (st is then S_AFTER or S_END), or
 * an error. */
static int events(struct pps__kreader *r, const struct pps__kev **evs, size_t *n,
                  struct pps_err *err)
{
    struct pps__kreader_int *in = r->in;
    char msg[300];

    for (;;) {
        int rc = next_byte(r, err);
        if (rc < 0)
            return rc;
        if (rc == 0)
            return fail(r, err, "truncated (traceEvents never closed)");
        char *b = in->buf + in->pos;
        size_t avail = in->have - in->pos, comma, close;
        if (*b == ']') {
            in->pos++;
            in->st = in->bare ? S_END : S_AFTER;
            return 0;
        }
        if (*b == ',')
            return fail(r, err, "an empty element in traceEvents");
        comma = quick_cut(b, avail);
        if (comma) {
            char saved = b[comma];
            if (parse_window(r, b, comma, evs, n, msg, sizeof(msg)) == 0) {
                in->pos += comma + 1;
                return 1;
            }
            b[comma] = saved; /* not the place: cut carefully */
        }
        if (careful_cut(b, avail, &comma, &close) != 0)
            return fail(r, err, "unbalanced brackets in traceEvents");
        if (close) {
            size_t len = close;
            /* Some writers leave a ',' after the last event: allow it. */
            while (len > 0 && is_ws(b[len - 1]))
                len--;
            if (len > 0 && b[len - 1] == ',')
                len--;
            if (parse_window(r, b, len, evs, n, msg, sizeof(msg)) != 0)
                goto bad;
            b[close] = ']';
            in->pos += close; /* at the ']', which ends the array on the next call */
            return 1;
        }
        if (comma) {
            if (parse_window(r, b, comma, evs, n, msg, sizeof(msg)) != 0)
                goto bad;
            in->pos += comma + 1;
            return 1;
        }
        /* One event not yet whole in the window: read on. */
        rc = fill(r, err);
        if (rc < 0)
            return rc;
        if (rc == 0)
            return fail(r, err, "truncated (traceEvents never closed)");
    }
bad:
    /* simdjson counts events from the window's start. */
    {
        unsigned long long first = (unsigned long long)r->events;
        size_t idx;
        if (sscanf(msg, "event %zu:", &idx) == 1) {
            char *rest = strchr(msg, ':');
            return pps_err_set(err, PPS_EFORMAT, "%s: not a Kineto trace: event %llu%s", r->path,
                               first + idx, rest ? rest : "");
        }
        return fail(r, err, msg);
    }
}

int pps__kreader_next(struct pps__kreader *r, const struct pps__kev **evs, size_t *n,
                      struct pps_err *err)
{
    struct pps__kreader_int *in = r->in;
    int rc;

    *evs = NULL;
    *n = 0;
    for (;;) {
        if (in->st == S_EVENTS) {
            rc = events(r, evs, n, err);
            if (rc > 0)
                r->events += (int64_t)*n;
            if (rc != 0)
                return rc;
            continue;
        }
        rc = next_byte(r, err);
        if (rc < 0)
            return rc;
        if (rc == 0) {
            if (in->st == S_END && !in->saw_events)
                return fail(r, err, "no traceEvents array");
            if (in->st == S_END)
                return 0;
            return fail(r, err, in->st == S_BEGIN ? "the file is empty" : "truncated");
        }
        char c = in->buf[in->pos];
        switch (in->st) {
        case S_BEGIN:
            /* A UTF-8 byte order mark is allowed before the JSON. */
            if (in->have - in->pos >= 3 && !memcmp(in->buf + in->pos, "\xEF\xBB\xBF", 3)) {
                in->pos += 3;
                continue;
            }
            if (c == '[') {
                in->bare = 1;
                in->saw_events = 1;
                in->st = S_EVENTS;
            } else if (c == '{') {
                in->st = S_KEY_FIRST;
            } else {
                return fail(r, err, "not JSON (it does not start with '{' or '[')");
            }
            in->pos++;
            break;
        case S_KEY_FIRST:
        case S_KEY: {
            size_t end;
            if (c == '}' && in->st == S_KEY_FIRST) {
                in->pos++;
                in->st = S_END;
                break;
            }
            if (c != '"')
                return fail(r, err, "bad JSON (a key was expected)");
            if ((rc = whole_value(r, &end, err)) < 0)
                return rc;
            if (end - in->pos < 2)
                return fail(r, err, "truncated");
            in->key = key_of(in->buf + in->pos + 1, end - in->pos - 2);
            in->pos = end;
            in->st = S_COLON;
            break;
        }
        case S_COLON:
            if (c != ':')
                return fail(r, err, "bad JSON (':' was expected)");
            in->pos++;
            in->st = S_VALUE;
            break;
        case S_VALUE:
            if (in->key == K_EVENTS) {
                if (c != '[')
                    return fail(r, err, "traceEvents is not an array");
                in->pos++;
                in->st = S_EVENTS;
                in->saw_events = 1;
                break;
            }
            if (c == ',' || c == '}' || c == ']' || c == ':')
                return fail(r, err, "bad JSON (a value was expected)");
            if ((rc = top_value(r, err)) < 0)
                return rc;
            in->st = S_AFTER;
            break;
        case S_AFTER:
            if (c == ',')
                in->st = S_KEY;
            else if (c == '}')
                in->st = S_END;
            else
                return fail(r, err, "bad JSON (',' or '}' was expected)");
            in->pos++;
            break;
        case S_END:
            return fail(r, err, "bad JSON (something follows the end)");
        case S_EVENTS:
            break;
        }
    }
}

int pps__kreader_open(const char *path, struct pps__kreader **out, struct pps_err *err)
{
    struct pps__kreader *r = NULL;
    struct stat st;
    int rc = 0;

    *out = NULL;
    if (stat(path, &st) != 0) {
        if (errno == ENOENT || errno == ENOTDIR)
            return pps_err_set(err, PPS_ENOENT, "%s: no such file or directory", path);
        return pps_err_set(err, PPS_EIO, "%s: %s", path, strerror(errno));
    }
    if (!S_ISREG(st.st_mode))
        return pps_err_set(err, PPS_EFORMAT,
                           "%s: not a file (a Kineto trace is a .json or "
                           ".json.gz file)",
                           path);
    if (!(r = calloc(1, sizeof(*r))) || !(r->in = calloc(1, sizeof(*r->in)))) {
        rc = pps_err_set(err, PPS_ENOMEM, "%s: out of memory", path);
        goto out;
    }
    r->path = path;
    r->rank = r->world = -1;
    r->file_bytes = (int64_t)st.st_size;
    r->in->cap = 4 * CHUNK;
    if (!(r->in->buf = malloc(r->in->cap + PPS__KJSON_PADDING)) ||
        !(r->in->kj = pps__kjson_new())) {
        rc = pps_err_set(err, PPS_ENOMEM, "%s: out of memory", path);
        goto out;
    }
    /* The byte before the first one read is where a window's '[' may go. */
    r->in->have = r->in->pos = 1;
    if ((rc = pps__gzahead_open(path, &r->in->gz, err)))
        goto out;
    *out = r;
    r = NULL;
out:
    pps__kreader_close(r);
    return rc;
}

int64_t pps__kreader_offset(const struct pps__kreader *r)
{
    return r->in->gz ? pps__gzahead_offset(r->in->gz) : 0;
}

void pps__kreader_close(struct pps__kreader *r)
{
    if (!r)
        return;
    if (r->in) {
        pps__gzahead_close(r->in->gz);
        pps__kjson_free(r->in->kj);
        free(r->in->buf);
        free(r->in);
    }
    free(r);
}
