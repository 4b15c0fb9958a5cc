/*
 * import_kineto.c - PyTorch profiler (Kineto) Chrome-trace JSON into a ppscope run
 * (docs/import.md): one file per rank, read as a stream (kineto_json.h) in one pass, each event
 * turned into a record or skipped, the records linked when the file ends (kineto_link.c), one
 * shard written per file.
 *
 * What becomes what: "PP:" labels and "Forward i"/"Backward i" (labels.h) F, B, W, BW, SEND and
 * RECV on the rank's stage; "Optimizer.step#..." OPT; the work ranges of gloo and NCCL sends and
 * receives ("gloo:send", "nccl:recv", ...) SEND and RECV; kernels KERNEL, copies and memsets
 * MEMCPY, tied to their launch through the correlation id; every other CPU op, annotation and
 * runtime call a RANGE of its name; "ProfilerStep#N" (and the other step names labels.h knows)
 * sets the iteration of what it contains. Python frames, flows, instants and the profiler's own
 * rows are skipped (counted).
 *
 * Times: Kineto writes ts and dur in microseconds with three decimals, ts counted from
 * baseTimeNanoseconds (a wall-clock time) in releases that write it, else from the Unix epoch.
 * Both are read exactly (the number's text, not a double) to nanoseconds, base added: every rank
 * on one clock, the hosts' wall clocks.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "import_int.h"
#include "pps_config.h"
#include "pps_hash.h"

#if !defined(PPS_HAVE_SIMDJSON) || !defined(PPS_HAVE_ZLIB)

int pps_import_kineto(const char *const *paths, int n, const struct pps_import_opts *o,
                      struct pps_import_stats *st, struct pps_err *err)
{
    (void)paths;
    (void)n;
    (void)o;
    if (st)
        memset(st, 0, sizeof(*st));
    return pps_err_set(err, PPS_EINVAL,
                       "this ppscope was built without simdjson or zlib, which Kineto JSON needs "
                       "(install libsimdjson-dev, zlib1g-dev and g++, then configure again)");
}

#else

#include "kineto_int.h"
#include "storage_int.h"

#define NAME_BYTES  512  /* longer names are cut at a UTF-8 boundary, as the other importers do */
#define MAX_OPEN_B  4096 /* "B" events waiting for their "E" */
#define MAX_TNAMES  4096 /* thread names kept per rank: meta, not spans */
#define WRITE_BATCH 16384

/* ---- numbers ------------------------------------------------------------------------------ */

/*
 * A JSON number of microseconds, as text, to nanoseconds, rounded half away from zero. Exact for
 * the usual forms (digits, a fraction); an exponent goes through strtod. -1 when it is out of
 * +-2^62 ns or not a number.
 */
int pps__kineto_us_to_ns(const char *s, size_t n, int64_t *out)
{
    size_t i = 0;
    int neg = 0;
    uint64_t ip = 0, frac = 0;
    int fd = 0, round_up = 0;

    if (n && s[0] == '-') {
        neg = 1;
        i++;
    }
    if (i == n || s[i] < '0' || s[i] > '9')
        return -1;
    for (; i < n && s[i] >= '0' && s[i] <= '9'; i++) {
        if (ip > (uint64_t)(PPS__TIME_LIMIT / 1000))
            return -1;
        ip = ip * 10 + (uint64_t)(s[i] - '0');
    }
    if (i < n && s[i] == '.') {
        size_t d0 = ++i;
        for (; i < n && s[i] >= '0' && s[i] <= '9'; i++) {
            if (fd < 3)
                frac = frac * 10 + (uint64_t)(s[i] - '0');
            else if (fd == 3)
                round_up = s[i] >= '5';
            fd++;
        }
        if (i == d0)
            return -1;
    }
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        char tmp[64];
        double v;
        if (n >= sizeof(tmp))
            return -1;
        memcpy(tmp, s, n);
        tmp[n] = '\0';
        char *end;

        v = strtod(tmp, &end) * 1000.0;
        if (*end)
            return -1;
        if (!(fabs(v) < (double)PPS__TIME_LIMIT))
            return -1;
        *out = (int64_t)llround(v);
        return 0;
    }
    if (i != n)
        return -1;
    while (fd < 3) {
        frac *= 10;
        fd++;
    }
    uint64_t ns = ip * 1000 + frac + (uint64_t)round_up;
    if (ns > (uint64_t)PPS__TIME_LIMIT)
        return -1;
    *out = neg ? -(int64_t)ns : (int64_t)ns;
    return 0;
}

/* ---- names -------------------------------------------------------------------------------- */

/* What a name says, read once per distinct name. */
static void classify(const struct pps_label_patterns *rules, const char *name, struct pps__kname *k)
{
    int step;

    memset(k, 0, sizeof(*k));
    pps_label_match(rules, name, &k->op);
    k->step = -1;
    if (k->op.kind >= PPS_SPAN_F && k->op.kind <= PPS_SPAN_OPT) {
        /* "Forward 3" and "Backward 3" have no stage: the single-stage schedules' labels. */
        k->cls =
            k->op.stage < 0 && (!strncmp(name, "Forward ", 8) || !strncmp(name, "Backward ", 9))
                ? PPS__KN_SINGLE
                : PPS__KN_OP;
    } else if (k->op.kind == PPS_LABEL_ITER && k->op.iter >= 0) {
        k->cls = PPS__KN_STEP;
        k->step = k->op.iter;
    } else if (pps_label_step(name, &step)) {
        k->cls = PPS__KN_STEP;
        k->step = step;
    } else if (!strncmp(name, "Optimizer.step#", 15)) {
        k->cls = PPS__KN_OPT;
    } else if (!strcmp(name, "gloo:send") || !strcmp(name, "nccl:send")) {
        k->cls = PPS__KN_COMM_SEND;
    } else if (!strncmp(name, "gloo:recv", 9) || !strcmp(name, "nccl:recv")) {
        k->cls = PPS__KN_COMM_RECV; /* gloo:recv, gloo:recv_anysource */
    } else if (!strcmp(name, "c10d::send")) {
        k->cls = PPS__KN_C10D;
    } else if (!strncmp(name, "c10d::recv", 10)) {
        k->cls = PPS__KN_C10D; /* c10d::recv_, c10d::recv_any_source_ */
    } else if (pps__import_kernel_is_comm(name, &k->nccl_kind)) {
        k->cls = PPS__KN_NCCL; /* a kernel of NCCL's: a send or a receive where its name says */
    }
}

/* The file's id of name[0..n), classified on first sight. */
static int32_t name_id(struct pps__kfile *f, const char *s, size_t n, struct pps_err *err)
{
    char buf[NAME_BYTES];
    int32_t id;

    if (!s || n == 0) {
        s = "(unnamed)";
        n = 9;
    }
    if (n >= sizeof(buf)) {
        n = sizeof(buf) - 1;
        while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
            n--; /* not inside a UTF-8 character */
    }
    memcpy(buf, s, n);
    buf[n] = '\0';
    if (memchr(buf, '\0', n))
        return pps_err_set(err, PPS_EFORMAT, "%s: not a Kineto trace: a name holds a NUL", f->path);
    if ((id = pps_strtab_find(&f->names, buf)) >= 0)
        return id;
    if ((id = pps_strtab_intern(&f->names, buf)) < 0)
        return pps_err_set(err, id == PPS_ENOMEM ? PPS_ENOMEM : PPS_EFORMAT, "%s: %s", f->path,
                           id == PPS_ENOMEM ? "out of memory" : "too many names");
    if (pps_grow((void **)&f->kn, &f->cap_kn, (size_t)id + 1, sizeof(*f->kn)) != 0)
        return pps_err_set(err, PPS_ENOMEM, "%s: out of memory", f->path);
    classify(&f->rules, buf, &f->kn[id]);
    return id;
}

/* ---- events ------------------------------------------------------------------------------- */

enum cat {
    CAT_OTHER, /* cpu_op, user_annotation, none, and what this importer does not know */
    CAT_KERNEL,
    CAT_COPY,      /* gpu_memcpy, gpu_memset */
    CAT_LAUNCH,    /* cuda_runtime, cuda_driver: the host's calls, which carry the correlation */
    CAT_GPU_RANGE, /* gpu_user_annotation: an annotation's time on the device */
    CAT_SKIP,      /* python_function, Trace, flows, overhead */
};

static int str_is(struct pps__kstr s, const char *lit)
{
    size_t n = strlen(lit);
    return s.s && s.n == n && !memcmp(s.s, lit, n);
}

static enum cat cat_of(struct pps__kstr c)
{
    if (!c.s)
        return CAT_OTHER;
    switch (c.s[0]) {
    case 'k':
        return str_is(c, "kernel") ? CAT_KERNEL : CAT_OTHER;
    case 'g':
        if (str_is(c, "gpu_memcpy") || str_is(c, "gpu_memset"))
            return CAT_COPY;
        return str_is(c, "gpu_user_annotation") ? CAT_GPU_RANGE : CAT_OTHER;
    case 'c':
        return str_is(c, "cuda_runtime") || str_is(c, "cuda_driver") ? CAT_LAUNCH : CAT_OTHER;
    case 'p':
        return str_is(c, "python_function") ? CAT_SKIP : CAT_OTHER;
    case 'T':
        return str_is(c, "Trace") ? CAT_SKIP : CAT_OTHER;
    case 'a':
    case 'f':
        return str_is(c, "ac2g") || str_is(c, "fwdbwd") ? CAT_SKIP : CAT_OTHER;
    default:
        return CAT_OTHER;
    }
}

/* The thread of an event: pid and tid, numbers or strings (Kineto's "Spans"), in one key. */
static int thread_of(struct pps__kfile *f, const struct pps__kev *ev, int32_t *out,
                     struct pps_err *err)
{
    uint64_t p = ev->pid_s.s ? pps_fnv1a(ev->pid_s.s, ev->pid_s.n) ^ 1 : (uint64_t)ev->pid << 1;
    uint64_t t = ev->tid_s.s ? pps_fnv1a(ev->tid_s.s, ev->tid_s.n) ^ 1 : (uint64_t)ev->tid << 1;
    int64_t key = (int64_t)(p * 0x9E3779B97F4A7C15ULL ^ t);
    int32_t i;

    /* Events come in runs of one thread: the last one found is the likeliest. */
    if (f->n_threads && key == f->last_thread_key) {
        *out = f->last_thread;
        return 0;
    }
    i = pps__idmap_get(&f->threads, key);

    if (i < 0) {
        if (f->n_threads >= INT32_MAX)
            return pps_err_set(err, PPS_EFORMAT, "%s: too many threads", f->path);
        i = (int32_t)f->n_threads++;
        if (pps__idmap_put(&f->threads, key, i) != 0)
            return pps_err_set(err, PPS_ENOMEM, "%s: out of memory", f->path);
    }
    f->last_thread_key = key;
    f->last_thread = i;
    *out = i;
    return 0;
}

static int bad_event(struct pps__kfile *f, int64_t index, const char *what, struct pps_err *err)
{
    return pps_err_set(err, PPS_EFORMAT, "%s: not a Kineto trace: event %" PRId64 ": %s", f->path,
                       index, what);
}

static int rec_new(struct pps__kfile *f, struct pps__krec **out, struct pps_err *err)
{
    struct pps__krec *r;
    if (f->n_recs >= UINT32_MAX - 1)
        return pps_err_set(err, PPS_EFORMAT, "%s: more than %u spans", f->path, UINT32_MAX - 1);
    if (pps_grow((void **)&f->recs, &f->cap_recs, f->n_recs + 1, sizeof(*f->recs)) != 0)
        return pps_err_set(err, PPS_ENOMEM, "%s: out of memory", f->path);
    r = &f->recs[f->n_recs++];
    memset(r, 0, sizeof(*r));
    r->mb = r->peer = r->iter = -1;
    r->vstage = -1;
    *out = r;
    return 0;
}

/* A span from a complete event (or a B/E pair): its kind and role from its category and name. */
static int add_span(struct pps__kfile *f, const struct pps__kev *ev, enum cat cat, int64_t start,
                    int64_t end, int32_t thread, struct pps_err *err)
{
    struct pps__krec *r = NULL;
    int32_t id = name_id(f, ev->name.s, ev->name.n, err);
    int rc;

    if (id < 0)
        return id;
    if ((rc = rec_new(f, &r, err)))
        return rc;
    const struct pps__kname *k = &f->kn[id];
    r->start = start;
    r->end = end;
    r->thread = thread;
    r->name = id;
    r->kind = PPS_SPAN_RANGE;
    switch (cat) {
    case CAT_KERNEL:
    case CAT_COPY:
        r->kind = cat == CAT_KERNEL ? PPS_SPAN_KERNEL : PPS_SPAN_MEMCPY;
        r->role = PPS__KR_DEVICE;
        r->corr = ev->has & PPS__KEV_CORR ? ev->corr : 0;
        r->bytes = cat == CAT_COPY && (ev->has & PPS__KEV_BYTES) && ev->bytes > 0 ? ev->bytes : 0;
        return 0;
    case CAT_LAUNCH:
        r->corr = ev->has & PPS__KEV_CORR ? ev->corr : 0;
        r->role = r->corr ? PPS__KR_LAUNCH : PPS__KR_NONE;
        return 0;
    case CAT_GPU_RANGE:
        return 0;
    default:
        break;
    }
    switch (k->cls) {
    case PPS__KN_OP:
        r->kind = (uint8_t)k->op.kind;
        r->role = PPS__KR_OP;
        r->vstage = (int16_t)k->op.stage;
        r->mb = k->op.mb;
        r->peer = k->op.peer;
        if (k->op.bytes > 0)
            r->bytes = k->op.bytes;
        if (k->op.stage >= 0 && (rc = pps__kfile_vstage(f, k->op.stage, err)))
            return rc;
        break;
    case PPS__KN_SINGLE:
        r->kind = (uint8_t)k->op.kind;
        r->role = PPS__KR_SINGLE;
        r->mb = k->op.mb;
        break;
    case PPS__KN_OPT:
        r->kind = PPS_SPAN_OPT;
        r->role = PPS__KR_OP;
        break;
    case PPS__KN_STEP:
        if ((rc = pps__kfile_step(f, start, end, k->step, err)))
            return rc;
        break;
    case PPS__KN_COMM_SEND:
    case PPS__KN_COMM_RECV:
        r->kind = k->cls == PPS__KN_COMM_SEND ? PPS_SPAN_SEND : PPS_SPAN_RECV;
        r->role = PPS__KR_COMM;
        break;
    case PPS__KN_C10D:
        r->role = PPS__KR_C10D;
        r->peer = ev->has & PPS__KEV_PEER ? (int32_t)ev->peer : -1;
        break;
    default:
        break;
    }
    return 0;
}

static int time_of(struct pps__kfile *f, struct pps__kstr t, int64_t index, const char *what,
                   int64_t *out, struct pps_err *err)
{
    if (pps__kineto_us_to_ns(t.s, t.n, out) != 0) {
        char msg[64];
        snprintf(msg, sizeof(msg), "%s is out of range", what);
        return bad_event(f, index, msg, err);
    }
    return 0;
}

static int thread_name(struct pps__kfile *f, const struct pps__kev *ev, struct pps_err *err)
{
    int32_t id;

    if (!ev->arg_name.s || ev->tid_s.s || !(ev->has & PPS__KEV_TID) || f->n_tnames >= MAX_TNAMES)
        return 0;
    if ((id = name_id(f, ev->arg_name.s, ev->arg_name.n, err)) < 0)
        return id;
    for (size_t i = 0; i < f->n_tnames; i++)
        if (f->tnames[i].tid == ev->tid) {
            f->tnames[i].name = id; /* renamed: the last name counts */
            return 0;
        }
    if (pps_grow((void **)&f->tnames, &f->cap_tnames, f->n_tnames + 1, sizeof(*f->tnames)) != 0)
        return pps_err_set(err, PPS_ENOMEM, "%s: out of memory", f->path);
    f->tnames[f->n_tnames++] = (struct pps__ktname){ev->tid, id};
    return 0;
}

/* One event of the file (index: its place in traceEvents, for messages). */
static int on_event(struct pps__kfile *f, const struct pps__kev *ev, int64_t index,
                    struct pps_err *err)
{
    int64_t start, dur, end;
    int32_t thread = -1;
    enum cat cat;
    char ph;
    int rc;

    if (!ev->ph.s) {
        f->skipped++; /* {} and other objects that are no event */
        return 0;
    }
    ph = ev->ph.n == 1 ? ev->ph.s[0] : '?';
    if (ph == 'M') {
        f->skipped++;
        return str_is(ev->name, "thread_name") ? thread_name(f, ev, err) : 0;
    }
    if (ph != 'X' && ph != 'B' && ph != 'E') {
        f->skipped++; /* instants, flows, counters, samples, objects */
        return 0;
    }
    if (!(ev->has & PPS__KEV_TS))
        return bad_event(f, index, "no ts", err);
    if ((rc = time_of(f, ev->ts, index, "ts", &start, err)))
        return rc;
    if ((rc = thread_of(f, ev, &thread, err)))
        return rc;
    if (ph == 'E') {
        /* The innermost open "B" of the thread; an "E" without one is skipped. */
        for (size_t i = f->n_open; i-- > 0;) {
            struct pps__kopen *o = &f->open[i];
            if (o->thread != thread)
                continue;
            struct pps__krec *r = &f->recs[o->rec];
            if (start < r->start)
                return bad_event(f, index, "an \"E\" before its \"B\"", err);
            r->end = start;
            memmove(o, o + 1, (f->n_open - i - 1) * sizeof(*o));
            f->n_open--;
            if (r->role == PPS__KR_STEP_PENDING) {
                r->role = PPS__KR_NONE;
                if ((rc = pps__kfile_step(f, r->start, r->end, f->kn[r->name].step, err)))
                    return rc;
            }
            return 0;
        }
        f->skipped++;
        return 0;
    }
    cat = cat_of(ev->cat);
    if (cat == CAT_SKIP) {
        f->skipped++;
        return 0;
    }
    if (ph == 'X') {
        if (!(ev->has & PPS__KEV_DUR))
            return bad_event(f, index, "a complete event (\"X\") without dur", err);
        if ((rc = time_of(f, ev->dur, index, "dur", &dur, err)))
            return rc;
        if (dur < 0)
            return bad_event(f, index, "a negative dur", err);
        if (__builtin_add_overflow(start, dur, &end) || end > PPS__TIME_LIMIT)
            return bad_event(f, index, "ts + dur is out of range", err);
        return add_span(f, ev, cat, start, end, thread, err);
    }
    /* "B": a span whose end the matching "E" sets; a step waits for it too. */
    if (f->n_open >= MAX_OPEN_B) {
        f->skipped++;
        return 0;
    }
    size_t before = f->n_steps;
    if ((rc = add_span(f, ev, cat, start, start, thread, err)))
        return rc;
    if (f->n_steps > before) {
        f->n_steps = before; /* added again when it ends */
        f->recs[f->n_recs - 1].role = PPS__KR_STEP_PENDING;
    }
    if (pps_grow((void **)&f->open, &f->cap_open, f->n_open + 1, sizeof(*f->open)) != 0)
        return pps_err_set(err, PPS_ENOMEM, "%s: out of memory", f->path);
    f->open[f->n_open++] = (struct pps__kopen){thread, (uint32_t)(f->n_recs - 1)};
    return 0;
}

/* ---- one file ----------------------------------------------------------------------------- */

static void kfile_release(struct pps__kfile *f)
{
    free(f->recs);
    free(f->kn);
    free(f->open);
    free(f->steps);
    free(f->tnames);
    free(f->vstages);
    pps__idmap_release(&f->threads);
    pps_strtab_release(&f->names);
    pps_label_patterns_release(&f->rules);
    memset(f, 0, sizeof(*f));
}

static int read_file(struct pps__kfile *f, const struct pps_import_opts *o,
                     struct pps_import_stats *st, struct pps_err *err)
{
    struct pps__kreader *r = NULL;
    struct pps__import_progress pr;
    const struct pps__kev *evs;
    size_t n;
    int rc;

    if ((rc = pps__kreader_open(f->path, &r, err)))
        return rc;
    pps__import_progress_init(&pr, o->progress, f->path);
    while ((rc = pps__kreader_next(r, &evs, &n, err)) > 0) {
        int64_t first = r->events - (int64_t)n;
        /* The whole file's events, estimated from how far into the file the reader is (once a
         * window: it costs a system call). */
        int64_t off = pps__kreader_offset(r);
        int64_t total =
            off > 0 ? (int64_t)((double)r->events * (double)r->file_bytes / (double)off) : 0;
        for (size_t i = 0; i < n && rc >= 0; i++) {
            rc = on_event(f, &evs[i], first + (int64_t)i, err);
            pps__import_progress_tick(&pr, first + (int64_t)i, total);
        }
        if (rc < 0)
            break;
    }
    st->events_read += r->events;
    if (rc == 0 && r->events == 0)
        rc = pps_err_set(err, PPS_EFORMAT, "%s: nothing to import: traceEvents is empty", f->path);
    if (rc == 0) {
        pps__import_progress_done(&pr, r->events);
        f->rank = r->rank;
        f->world = r->world;
        f->base_ns = r->base_ns;
        snprintf(f->host, sizeof(f->host), "%s", r->host);
        /* "B" events still open when the file ends: ranges that never ended. */
        for (size_t i = 0; i < f->n_open; i++)
            f->recs[f->open[i].rec].kind = 0;
        f->skipped += (int64_t)f->n_open;
        f->n_open = 0;
    }
    pps__kreader_close(r);
    return rc;
}

/* The shard of one file: its rank's spans, names and meta. */
static int write_file(struct pps__kfile *f, const struct pps__import_out *out,
                      struct pps_import_stats *st, struct pps_err *err)
{
    struct pps_store_writer *w = NULL;
    struct pps_span *batch = NULL;
    int32_t *map = NULL;
    size_t nb = 0;
    char key[64];
    int rc;

    if (!(batch = malloc(WRITE_BATCH * sizeof(*batch))) ||
        !(map = malloc((f->names.n ? f->names.n : 1) * sizeof(*map)))) {
        rc = pps_err_set(err, PPS_ENOMEM, "%s: out of memory", f->path);
        goto out;
    }
    for (size_t i = 0; i < f->names.n; i++)
        map[i] = -1;
    if ((rc = pps__import_shard_open(out, f->rank, f->world, "kineto", f->path, &w, err)) ||
        (rc = pps_store_writer_meta_int(w, "rank", f->rank, err)) ||
        (rc = pps_store_writer_meta(w, "host", f->host[0] ? f->host : "unknown", err)) ||
        (rc = pps_store_writer_meta_int(w, "kineto_base_ns", f->base_ns, err)))
        goto out;
    if (f->layout_note[0] && (rc = pps_store_writer_meta(w, "kineto_stages", f->layout_note, err)))
        goto out;
    for (size_t i = 0; i < f->n_tnames; i++) {
        snprintf(key, sizeof(key), "thread_name.%" PRId64, f->tnames[i].tid);
        if ((rc = pps_store_writer_meta(w, key, f->names.strs[f->tnames[i].name], err)))
            goto out;
    }
    for (size_t i = 0; i < f->n_recs; i++) {
        struct pps_span *s = &batch[nb];
        if (!f->recs[i].kind)
            continue;
        if ((rc = pps__kfile_span(f, &f->recs[i], s, err)))
            goto out;
        if (s->name_id >= 0) {
            int32_t g = s->name_id;
            if (map[g] < 0 && (rc = pps_store_writer_name(w, f->names.strs[g], &map[g], err)))
                goto out;
            s->name_id = map[g];
        }
        if (++nb == WRITE_BATCH) {
            if ((rc = pps_store_writer_spans(w, batch, nb, err)))
                goto out;
            st->spans += (int64_t)nb;
            nb = 0;
        }
    }
    if ((rc = pps_store_writer_spans(w, batch, nb, err)))
        goto out;
    st->spans += (int64_t)nb;
    rc = pps__import_shard_close(w, err);
    w = NULL;
    if (!rc)
        st->ranks++;
out:
    pps_store_writer_close(w, 0, NULL);
    free(batch);
    free(map);
    return rc;
}

int pps_import_kineto(const char *const *paths, int n, const struct pps_import_opts *o,
                      struct pps_import_stats *st, struct pps_err *err)
{
    struct pps_import_stats local;
    struct pps__import_out out = {0};
    struct pps__kfile f;
    unsigned char *seen = NULL;
    int rc = 0, began = 0;

    memset(&f, 0, sizeof(f));
    if (!st)
        st = &local;
    memset(st, 0, sizeof(*st));
    if (!paths || n <= 0 || !o || !o->out_dir)
        return pps_err_set(err, PPS_EINVAL, "pps_import_kineto: no files to import");
    if (n > INT16_MAX + 1)
        return pps_err_set(err, PPS_EINVAL, "%d files: at most %d ranks", n, INT16_MAX + 1);
    if (!(seen = calloc((size_t)INT16_MAX + 1, sizeof(*seen))))
        return pps_err_set(err, PPS_ENOMEM, "out of memory");
    /* One file at a time, read then written: memory holds one file's spans. The run appears
     * only when every file is in (import_int.h), so a bad file leaves nothing behind. */
    for (int i = 0; i < n; i++) {
        pps_label_patterns_init(&f.rules);
        f.path = paths[i];
        if ((rc = read_file(&f, o, st, err)))
            goto out;
        if (f.rank < 0)
            f.rank = i;
        /* Without distributedInfo the world is the files given; a rank beyond it widens it. */
        if (f.world < 0)
            f.world = n;
        if (f.world <= f.rank)
            f.world = f.rank + 1;
        if (seen[f.rank]) {
            rc = pps_err_set(err, PPS_EFORMAT, "%s: a second file of rank %d (%s)", f.path,
                             (int)f.rank, "each rank's trace is given once");
            goto out;
        }
        seen[f.rank] = 1;
        if ((rc = pps__kfile_link(&f, err)))
            goto out;
        if (!began) {
            if ((rc = pps__import_out_begin(&out, o->out_dir, err)))
                goto out;
            began = 1;
        }
        if ((rc = write_file(&f, &out, st, err)))
            goto out;
        st->skipped += f.skipped;
        kfile_release(&f);
    }
    rc = pps__import_out_commit(&out, err);
out:
    kfile_release(&f);
    pps__import_out_release(&out);
    free(seen);
    return rc;
}

#endif
