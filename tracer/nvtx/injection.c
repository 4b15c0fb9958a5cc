/*
 * injection.c - libppscope_nvtx.so, the NVTX injection: with NVTX_INJECTION64_PATH naming this
 * library, the NVTX stubs in any annotated program load it on their first call and hand it their
 * function tables; it fills them with the hooks below, which turn NVTX ranges into ppscope spans
 * through the tracer's public API (ppscope/trace.h). docs/nvtx.md is the user's side.
 *
 * - Push/pop ranges live on a per-thread stack (frames tagged with their domain, so that each
 *   domain pops its own); start/end ranges live in one table under a lock, since they may end
 *   on another thread. A range becomes a span when it ends: a pipeline op when its name matches
 *   a naming rule (patterns.h), else a named RANGE span.
 * - Each distinct name is matched and interned once (names.h); a registered string's handle is
 *   the cached entry itself, so a REGISTERED message costs no lookup.
 * - Iterations come from names that mark them ("pps:iter=3"), else are inferred from repeated
 *   forwards (iters.h); either way through pps_trace_iteration, when the range starts.
 * - The run opens in InitializeInjectionNvtx2 (every NVTX instance in the process calls it; the
 *   first opens, the others share) and closes in an atexit handler, which first stops the hooks
 *   (an in-flight count, so none is inside the tracer when it closes) and records the ranges
 *   still open as ending at exit. A forked child traces nothing.
 * - Nothing here aborts or blocks the program: problems are one line on stderr, ranges that
 *   cannot be traced are dropped and counted, and the count is one line at exit.
 */
#define NVTX_NO_IMPL
#include <nvtx3/nvToolsExt.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "iters.h"
#include "names.h"
#include "patterns.h"
#include "ppscope/trace.h"
#include "tracer_int.h"

#define NAME_BYTES      512     /* longer names are cut (at a UTF-8 boundary) */
#define STACK_FRAMES    128     /* push/pop nesting kept per thread; deeper pushes are dropped */
#define MAX_NAMES       65536   /* distinct names; ranges with more are dropped */
#define MAX_OPEN_RANGES 1048576 /* start/end ranges open at once */
#define UNNAMED         "(unnamed)"

/* The entry point NVTX looks up by name: the only symbol the library exports (exports.map). */
__attribute__((visibility("default"))) int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get);

enum state { FRESH, OPEN, FAILED };

struct frame {
    int64_t start_ns;
    const struct pps__nvtx_name *name; /* NULL: not traced (counted when it ends) */
    const void *domain;                /* NULL for the core API and the default domain */
    int64_t bytes;                     /* from the event's payload, -1 if none */
};

struct thread_stack {
    struct frame frames[STACK_FRAMES];
    int depth;         /* frames in use */
    int lost;          /* pushes beyond STACK_FRAMES, popped before the frames are */
    int64_t exited_ns; /* when the thread exited with frames open; 0 while it runs */
    struct thread_stack *next;
};

struct open_range {
    int64_t start_ns;
    const struct pps__nvtx_name *name;
    int64_t bytes;
    uint32_t gen; /* bumped on reuse, so that a stale id ends nothing */
    int in_use;
    int32_t next_free;
};

struct domain {
    struct domain *next;
    char name[];
};

static struct {
    pthread_mutex_t lock; /* opening, iterations, start/end ranges, threads, domains */
    enum state state;
    struct pps_tracer *t;
    int stage;       /* the stage of a span whose name has none */
    int keep_ranges; /* 0 with PPSCOPE_NVTX_RANGES=pipeline: only pipeline ops */
    struct pps__nvtx_patterns pat;
    struct pps__nvtx_names names;
    atomic_int active;  /* hooks between enter() and leave() */
    atomic_int closing; /* set by the exit handler, or in a forked child: hooks do nothing */
    int forked;
    atomic_int iter;                 /* the highest iteration marked so far */
    atomic_int explicit_iters;       /* 1 once a name marked an iteration: no more inference */
    struct pps__nvtx_iters inferred; /* under lock */
    atomic_ullong dropped;
    struct open_range *ranges;
    int32_t n_ranges, cap_ranges, free_head;
    struct thread_stack *threads;
    pthread_key_t stack_key;
    int have_key;
    struct domain *domains;
} g = {.lock = PTHREAD_MUTEX_INITIALIZER,
       .state = FRESH,
       .iter = -1,
       .free_head = -1,
       .inferred = PPS__NVTX_ITERS_INIT};

static _Thread_local struct thread_stack *tls_stack;
static _Thread_local int tls_warm; /* 1 once this thread's tracer buffer is set up */

/* ---- entering and leaving the tracer ---------------------------------------------------- */

/*
 * Every hook that may touch the tracer runs between enter() and leave(). The exit handler sets
 * closing, then waits for active to drain: with sequentially consistent atomics on both sides,
 * a hook either sees closing and backs out, or is counted and waited for.
 */
static int enter(void)
{
    /* Checked first as well, so that threads calling NVTX in a loop do not keep the count from
     * ever reading zero once closing is set. */
    if (atomic_load_explicit(&g.closing, memory_order_relaxed))
        return 0;
    atomic_fetch_add(&g.active, 1);
    if (atomic_load(&g.closing)) {
        atomic_fetch_sub(&g.active, 1);
        return 0;
    }
    if (!tls_warm) {
        /* Pays for the thread's buffer here, before the hook reads the clock, instead of inside
         * the program's first range. */
        tls_warm = 1;
        pps_trace_thread_init(g.t);
    }
    return 1;
}

static void leave(void)
{
    atomic_fetch_sub(&g.active, 1);
}

static void drop(void)
{
    atomic_fetch_add(&g.dropped, 1);
}

/* ---- names ------------------------------------------------------------------------------ */

/* Fills a name seen for the first time (under the cache's lock): its rule, and its id. */
static void fill_name(void *ctx, struct pps__nvtx_name *n)
{
    (void)ctx;
    n->rule = pps__nvtx_match(&g.pat, n->text, &n->op);
    if ((n->rule == PPS__NVTX_NONE || n->op.kind == PPS__NVTX_ITER) && g.keep_ranges) {
        int32_t id = pps_trace_name(g.t, n->text);
        n->name_id = id >= 0 ? id : -1;
    }
}

static const struct pps__nvtx_name *name_of_ascii(const char *s)
{
    char buf[NAME_BYTES];
    size_t len = pps__nvtx_clean_name(s, buf, sizeof(buf));
    if (len == 0)
        return pps__nvtx_names_get(&g.names, UNNAMED, strlen(UNNAMED));
    return pps__nvtx_names_get(&g.names, buf, len);
}

static const struct pps__nvtx_name *name_of_wide(const wchar_t *ws)
{
    char buf[NAME_BYTES];
    pps__nvtx_utf8_from_wide(ws, buf, sizeof(buf));
    return name_of_ascii(buf);
}

/* The name of an event, and the payload as a byte count (-1 when it is not an integer). */
static const struct pps__nvtx_name *name_of_event(const nvtxEventAttributes_t *a, int64_t *bytes)
{
    *bytes = -1;
    if (!a || a->size < offsetof(nvtxEventAttributes_t, message) + sizeof(a->message))
        return name_of_ascii(NULL);
    switch (a->payloadType) {
    case NVTX_PAYLOAD_TYPE_UNSIGNED_INT64:
        *bytes = a->payload.ullValue <= INT64_MAX ? (int64_t)a->payload.ullValue : -1;
        break;
    case NVTX_PAYLOAD_TYPE_INT64:
        *bytes = a->payload.llValue;
        break;
    case NVTX_PAYLOAD_TYPE_UNSIGNED_INT32:
        *bytes = a->payload.uiValue;
        break;
    case NVTX_PAYLOAD_TYPE_INT32:
        *bytes = a->payload.iValue;
        break;
    default:
        break;
    }
    if (*bytes < 0)
        *bytes = -1;
    switch (a->messageType) {
    case NVTX_MESSAGE_TYPE_ASCII:
        return name_of_ascii(a->message.ascii);
    case NVTX_MESSAGE_TYPE_UNICODE:
        return name_of_wide(a->message.unicode);
    case NVTX_MESSAGE_TYPE_REGISTERED:
        /* Our own handle: nvtxDomainRegisterString* returned a cache entry. */
        if (a->message.registered)
            return (const struct pps__nvtx_name *)(const void *)a->message.registered;
        return name_of_ascii(NULL);
    default:
        return name_of_ascii(NULL);
    }
}

/* ---- spans ------------------------------------------------------------------------------ */

/* Moves the run to iteration iter if it is past the last one marked. Under g.lock. */
static void mark_iter_locked(int iter)
{
    if (iter > atomic_load(&g.iter)) {
        pps_trace_iteration(g.t, iter);
        atomic_store(&g.iter, iter);
    }
}

/*
 * A range starts: an iteration its name marks takes effect at once. Without such names, a
 * forward that repeats one of the current iteration starts the next (iters.h).
 */
static void on_start(const struct pps__nvtx_name *n)
{
    if (!n)
        return;
    if (n->op.iter >= 0) {
        atomic_store(&g.explicit_iters, 1);
        if (n->op.iter > atomic_load(&g.iter)) {
            pthread_mutex_lock(&g.lock);
            mark_iter_locked(n->op.iter);
            pthread_mutex_unlock(&g.lock);
        }
    } else if (n->op.kind == PPS_TRACE_F && !atomic_load(&g.explicit_iters)) {
        int stage = n->op.stage >= 0 ? n->op.stage : g.stage;
        pthread_mutex_lock(&g.lock);
        int iter = pps__nvtx_iters_forward(&g.inferred, stage, n->op.chunk, n->op.mb);
        if (iter >= 0 && !atomic_load(&g.explicit_iters))
            mark_iter_locked(iter);
        pthread_mutex_unlock(&g.lock);
    }
}

/* Records a finished range: a pipeline op if its name says so, else a named range. */
static void record(const struct pps__nvtx_name *n, int64_t start, int64_t end, int64_t bytes)
{
    if (!n) {
        drop();
        return;
    }
    const struct pps__nvtx_op *op = &n->op;
    int stage = op->stage >= 0 ? op->stage : g.stage;
    int chunk = op->chunk >= 0 ? op->chunk : 0;
    switch (op->kind) {
    case PPS_TRACE_SEND:
    case PPS_TRACE_RECV:
    case PPS_TRACE_WAIT:
        /* Bytes from the name, else from the event's payload (a wait moves none). */
        if (op->bytes >= 0)
            bytes = op->bytes;
        else if (bytes < 0 || op->kind == PPS_TRACE_WAIT)
            bytes = 0;
        pps_trace_p2p(g.t, op->kind, stage, op->peer, op->mb, bytes, start, end);
        return;
    case PPS_TRACE_F:
    case PPS_TRACE_B:
    case PPS_TRACE_W:
    case PPS_TRACE_BW:
    case PPS_TRACE_OPT:
        pps_trace_record(g.t, op->kind, stage, chunk, op->mb, start, end);
        return;
    default: /* not a pipeline op, or an iteration marker: a named range */
        if (!g.keep_ranges)
            return;
        if (n->name_id < 0) {
            drop();
            return;
        }
        pps_trace_named(g.t, PPS_TRACE_RANGE, stage, n->name_id, start, end);
    }
}

/* ---- push/pop: per-thread stacks --------------------------------------------------------- */

/* A thread exits: its stack goes, unless ranges are still open on it (the exit handler records
 * those, ending when the thread did). */
static void stack_exit(void *p)
{
    struct thread_stack *s = p;
    tls_stack = NULL;
    if (g.forked)
        return; /* the lock may have been held by a thread that the fork left behind */
    pthread_mutex_lock(&g.lock);
    if (s->depth > 0) {
        s->exited_ns = pps_trace_now();
    } else {
        for (struct thread_stack **pp = &g.threads; *pp; pp = &(*pp)->next) {
            if (*pp == s) {
                *pp = s->next;
                free(s);
                break;
            }
        }
    }
    pthread_mutex_unlock(&g.lock);
}

static struct thread_stack *get_stack(void)
{
    struct thread_stack *s = tls_stack;
    if (s)
        return s;
    s = calloc(1, sizeof(*s));
    if (!s)
        return NULL;
    pthread_mutex_lock(&g.lock);
    s->next = g.threads;
    g.threads = s;
    pthread_mutex_unlock(&g.lock);
    if (g.have_key)
        pthread_setspecific(g.stack_key, s);
    tls_stack = s;
    return s;
}

/* Returns the new range's nesting level (0-based), or -1 when it is not traced. */
static int push(const void *domain, const struct pps__nvtx_name *n, int64_t bytes, int64_t now)
{
    struct thread_stack *s = get_stack();
    if (!s) {
        drop();
        return -1;
    }
    on_start(n);
    if (s->depth == STACK_FRAMES) {
        s->lost++;
        drop();
        return s->depth + s->lost - 1;
    }
    struct frame *f = &s->frames[s->depth++];
    f->start_ns = now;
    f->name = n;
    f->domain = domain;
    f->bytes = bytes;
    return s->depth + s->lost - 1;
}

/* Ends the innermost range of domain on this thread; returns its level, or -1 if none. */
static int pop(const void *domain, int64_t now)
{
    struct thread_stack *s = tls_stack;
    if (!s)
        return -1;
    if (s->lost > 0) {
        s->lost--;
        return s->depth + s->lost;
    }
    int i = s->depth - 1;
    while (i >= 0 && s->frames[i].domain != domain)
        i--;
    if (i < 0)
        return -1;
    struct frame f = s->frames[i];
    memmove(&s->frames[i], &s->frames[i + 1], sizeof(f) * (size_t)(s->depth - 1 - i));
    s->depth--;
    record(f.name, f.start_ns, now, f.bytes);
    return i;
}

/* ---- start/end: one table, any thread ---------------------------------------------------- */

/* Returns the range's id, or 0 (never a valid id) when it is not traced. */
static nvtxRangeId_t start_range(const struct pps__nvtx_name *n, int64_t bytes, int64_t now)
{
    nvtxRangeId_t id = 0;
    on_start(n);
    pthread_mutex_lock(&g.lock);
    if (g.free_head < 0) {
        if (g.n_ranges == g.cap_ranges) {
            int32_t cap = g.cap_ranges ? g.cap_ranges * 2 : 256;
            struct open_range *r =
                cap <= MAX_OPEN_RANGES ? realloc(g.ranges, sizeof(*r) * (size_t)cap) : NULL;
            if (!r)
                goto out;
            g.ranges = r;
            g.cap_ranges = cap;
        }
        g.ranges[g.n_ranges] = (struct open_range){.next_free = -1};
        g.free_head = g.n_ranges++;
    }
    int32_t k = g.free_head;
    struct open_range *r = &g.ranges[k];
    g.free_head = r->next_free;
    r->in_use = 1;
    r->gen++;
    r->start_ns = now;
    r->name = n;
    r->bytes = bytes;
    id = ((nvtxRangeId_t)r->gen << 32) | (nvtxRangeId_t)(k + 1);
out:
    pthread_mutex_unlock(&g.lock);
    if (!id)
        drop();
    return id;
}

static void end_range(nvtxRangeId_t id, int64_t now)
{
    int64_t k = (int64_t)(id & 0xffffffffu) - 1;
    uint32_t gen = (uint32_t)(id >> 32);
    struct open_range r = {0};
    pthread_mutex_lock(&g.lock);
    if (k >= 0 && k < g.n_ranges && g.ranges[k].in_use && g.ranges[k].gen == gen) {
        r = g.ranges[k];
        g.ranges[k].in_use = 0;
        g.ranges[k].next_free = g.free_head;
        g.free_head = (int32_t)k;
    }
    pthread_mutex_unlock(&g.lock);
    if (r.in_use)
        record(r.name, r.start_ns, now, r.bytes);
}

/* A mark has no length: an iteration marker moves the iteration, a pipeline op is ignored, and
 * anything else is a named range of length 0. */
static void mark(const struct pps__nvtx_name *n, int64_t now)
{
    if (n && n->op.kind >= 0 && n->op.kind != PPS__NVTX_ITER)
        return;
    on_start(n);
    record(n, now, now, -1);
}

/* ---- the hooks: core ---------------------------------------------------------------------- */

static void NVTX_API hook_mark_ex(const nvtxEventAttributes_t *a)
{
    int64_t bytes;
    if (!enter())
        return;
    int64_t now = pps_trace_now();
    mark(name_of_event(a, &bytes), now);
    leave();
}

static void NVTX_API hook_mark_a(const char *msg)
{
    if (!enter())
        return;
    int64_t now = pps_trace_now();
    mark(name_of_ascii(msg), now);
    leave();
}

static void NVTX_API hook_mark_w(const wchar_t *msg)
{
    if (!enter())
        return;
    int64_t now = pps_trace_now();
    mark(name_of_wide(msg), now);
    leave();
}

static nvtxRangeId_t NVTX_API hook_start_ex(const nvtxEventAttributes_t *a)
{
    int64_t bytes;
    if (!enter())
        return 0;
    int64_t now = pps_trace_now();
    const struct pps__nvtx_name *n = name_of_event(a, &bytes);
    nvtxRangeId_t id = start_range(n, bytes, now);
    leave();
    return id;
}

static nvtxRangeId_t NVTX_API hook_start_a(const char *msg)
{
    if (!enter())
        return 0;
    int64_t now = pps_trace_now();
    nvtxRangeId_t id = start_range(name_of_ascii(msg), -1, now);
    leave();
    return id;
}

static nvtxRangeId_t NVTX_API hook_start_w(const wchar_t *msg)
{
    if (!enter())
        return 0;
    int64_t now = pps_trace_now();
    nvtxRangeId_t id = start_range(name_of_wide(msg), -1, now);
    leave();
    return id;
}

static void NVTX_API hook_end(nvtxRangeId_t id)
{
    if (!enter())
        return;
    int64_t now = pps_trace_now();
    end_range(id, now);
    leave();
}

static int NVTX_API hook_push_ex(const nvtxEventAttributes_t *a)
{
    int64_t bytes;
    if (!enter())
        return -1;
    int64_t now = pps_trace_now();
    const struct pps__nvtx_name *n = name_of_event(a, &bytes);
    int level = push(NULL, n, bytes, now);
    leave();
    return level;
}

static int NVTX_API hook_push_a(const char *msg)
{
    if (!enter())
        return -1;
    int64_t now = pps_trace_now();
    int level = push(NULL, name_of_ascii(msg), -1, now);
    leave();
    return level;
}

static int NVTX_API hook_push_w(const wchar_t *msg)
{
    if (!enter())
        return -1;
    int64_t now = pps_trace_now();
    int level = push(NULL, name_of_wide(msg), -1, now);
    leave();
    return level;
}

static int NVTX_API hook_pop(void)
{
    if (!enter())
        return -1;
    int64_t now = pps_trace_now();
    int level = pop(NULL, now);
    leave();
    return level;
}

/* Thread names go into the run's metadata, as thread_name.<os thread id>. */
static void name_thread(uint32_t tid, const char *name)
{
    char key[48];
    snprintf(key, sizeof(key), "thread_name.%u", (unsigned)tid);
    pps_trace_meta(g.t, key, name ? name : "");
}

static void NVTX_API hook_name_thread_a(uint32_t tid, const char *name)
{
    if (!enter())
        return;
    name_thread(tid, name);
    leave();
}

static void NVTX_API hook_name_thread_w(uint32_t tid, const wchar_t *name)
{
    char buf[NAME_BYTES];
    if (!enter())
        return;
    pps__nvtx_utf8_from_wide(name, buf, sizeof(buf));
    name_thread(tid, buf);
    leave();
}

/* ---- the hooks: domains ------------------------------------------------------------------ */

/* A domain is only an identity (push/pop pair within one); one handle per distinct name. */
static nvtxDomainHandle_t domain_create(const char *name)
{
    static struct domain forked_domain;
    struct domain *d;
    size_t len;
    if (g.forked)
        return (nvtxDomainHandle_t)(void *)&forked_domain; /* no lock after a fork */
    if (!name)
        name = "";
    len = strlen(name);
    pthread_mutex_lock(&g.lock);
    for (d = g.domains; d; d = d->next)
        if (strcmp(d->name, name) == 0)
            goto out;
    d = malloc(sizeof(*d) + len + 1);
    if (d) {
        memcpy(d->name, name, len + 1);
        d->next = g.domains;
        g.domains = d;
    }
out:
    pthread_mutex_unlock(&g.lock);
    return (nvtxDomainHandle_t)(void *)d;
}

static nvtxDomainHandle_t NVTX_API hook_domain_create_a(const char *name)
{
    return domain_create(name);
}

static nvtxDomainHandle_t NVTX_API hook_domain_create_w(const wchar_t *name)
{
    char buf[NAME_BYTES];
    pps__nvtx_utf8_from_wide(name, buf, sizeof(buf));
    return domain_create(buf);
}

/* Handles stay valid to the end: ranges may still be open in the domain. */
static void NVTX_API hook_domain_destroy(nvtxDomainHandle_t domain)
{
    (void)domain;
}

static nvtxStringHandle_t NVTX_API hook_register_a(nvtxDomainHandle_t domain, const char *s)
{
    (void)domain;
    if (!enter())
        return NULL;
    const struct pps__nvtx_name *n = name_of_ascii(s);
    leave();
    return (nvtxStringHandle_t)(uintptr_t)n;
}

static nvtxStringHandle_t NVTX_API hook_register_w(nvtxDomainHandle_t domain, const wchar_t *s)
{
    (void)domain;
    if (!enter())
        return NULL;
    const struct pps__nvtx_name *n = name_of_wide(s);
    leave();
    return (nvtxStringHandle_t)(uintptr_t)n;
}

static void NVTX_API hook_domain_mark_ex(nvtxDomainHandle_t domain, const nvtxEventAttributes_t *a)
{
    (void)domain;
    hook_mark_ex(a);
}

static nvtxRangeId_t NVTX_API hook_domain_start_ex(nvtxDomainHandle_t domain,
                                                   const nvtxEventAttributes_t *a)
{
    (void)domain;
    return hook_start_ex(a);
}

static void NVTX_API hook_domain_end(nvtxDomainHandle_t domain, nvtxRangeId_t id)
{
    (void)domain;
    hook_end(id);
}

static int NVTX_API hook_domain_push_ex(nvtxDomainHandle_t domain, const nvtxEventAttributes_t *a)
{
    int64_t bytes;
    if (!enter())
        return -1;
    int64_t now = pps_trace_now();
    const struct pps__nvtx_name *n = name_of_event(a, &bytes);
    int level = push((const void *)domain, n, bytes, now);
    leave();
    return level;
}

static int NVTX_API hook_domain_pop(nvtxDomainHandle_t domain)
{
    if (!enter())
        return -1;
    int64_t now = pps_trace_now();
    int level = pop((const void *)domain, now);
    leave();
    return level;
}

/* ---- opening and closing the run --------------------------------------------------------- */

static void at_fork_child(void)
{
    /* The child has the parent's tracer but not its flusher, and its shard is the parent's. */
    g.forked = 1;
    atomic_store(&g.closing, 1);
}

static void at_exit(void)
{
    struct pps_err err = {0};
    if (g.forked || !g.t)
        return;
    atomic_store(&g.closing, 1);
    for (int i = 0; i < 2000 && atomic_load(&g.active) > 0; i++) {
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
    if (atomic_load(&g.active) > 0) {
        /* A thread is stuck inside a hook: closing under it could crash the program. */
        pps_trace_flush(g.t, NULL);
        fprintf(stderr, "ppscope nvtx: a thread was still inside NVTX at exit: the run is "
                        "flushed but not marked complete\n");
        return;
    }

    /* Ranges still open end now (or when their thread exited). */
    int64_t now = pps_trace_now();
    pthread_mutex_lock(&g.lock);
    for (int32_t k = 0; k < g.n_ranges; k++)
        if (g.ranges[k].in_use)
            record(g.ranges[k].name, g.ranges[k].start_ns, now, g.ranges[k].bytes);
    for (struct thread_stack *s = g.threads; s; s = s->next)
        for (int i = s->depth - 1; i >= 0; i--)
            record(s->frames[i].name, s->frames[i].start_ns, s->exited_ns ? s->exited_ns : now,
                   s->frames[i].bytes);
    pthread_mutex_unlock(&g.lock);

    unsigned long long dropped = atomic_load(&g.dropped);
    size_t refused = pps__nvtx_names_refused(&g.names);
    if (dropped)
        fprintf(stderr,
                "ppscope nvtx: %llu NVTX ranges not traced (%zu over %d distinct names; the rest "
                "nested deeper than %d, or out of memory)\n",
                dropped, refused, MAX_NAMES, STACK_FRAMES);
    if (pps_trace_close(g.t, &err))
        fprintf(stderr, "ppscope nvtx: %s\n", err.msg);
    g.t = NULL;
}

/* The stage of spans whose name has none: PPSCOPE_STAGE, else the launcher's rank, else 0. */
static int default_stage(void)
{
    const char *env = getenv("PPSCOPE_STAGE");
    int rank = -1, world = -1;
    if (env && *env) {
        char *end;
        long v = strtol(env, &end, 10);
        if (*end == '\0' && v >= 0 && v <= 32767)
            return (int)v;
        fprintf(stderr, "ppscope nvtx: PPSCOPE_STAGE=\"%.40s\" is not a stage: ignored\n", env);
    }
    if (pps__launcher_rank(&rank, &world) == 0 && rank >= 0 && rank <= 32767)
        return rank;
    return 0;
}

/* Opens the run. Under g.lock, once. Returns 0, or -1 after one line on stderr. */
static int open_run(void)
{
    struct pps_trace_options o;
    struct pps_err err = {0};
    char fallback[64];
    const char *dir = getenv("PPSCOPE_RUN");
    int rank = -1, world = -1, rc;

    if (!dir || !*dir) {
        snprintf(fallback, sizeof(fallback), "ppscope-run-%ld", (long)getpid());
        dir = fallback;
        if (pps__launcher_rank(&rank, &world) == 0 && world > 1)
            fprintf(stderr,
                    "ppscope nvtx: PPSCOPE_RUN is not set: rank %d writes its own %s; set it to "
                    "one directory for the whole job\n",
                    rank, dir);
    }
    pps_trace_options_init(&o);
    o.run_dir = dir;
    o.rank = -1;
    o.world = -1;
    if (pps_trace_open(&o, &g.t, &err)) {
        fprintf(stderr, "ppscope nvtx: tracing off: %s\n", err.msg);
        g.t = NULL;
        return -1;
    }
    pps_trace_meta(g.t, "source", "nvtx");

    g.stage = default_stage();
    const char *ranges = getenv("PPSCOPE_NVTX_RANGES");
    g.keep_ranges = 1;
    if (ranges && strcmp(ranges, "pipeline") == 0)
        g.keep_ranges = 0;
    else if (ranges && *ranges && strcmp(ranges, "all") != 0)
        fprintf(stderr,
                "ppscope nvtx: PPSCOPE_NVTX_RANGES=\"%.40s\" is neither \"all\" nor "
                "\"pipeline\": keeping all\n",
                ranges);

    pps__nvtx_patterns_init(&g.pat);
    rc = pps__nvtx_patterns_set_torch(&g.pat, getenv("PPSCOPE_NVTX_TORCH_B"),
                                      getenv("PPSCOPE_NVTX_STAGES"),
                                      getenv("PPSCOPE_NVTX_STAGE_ORDER"), &err);
    if (rc)
        fprintf(stderr, "ppscope nvtx: %s\n", err.msg);
    rc = pps__nvtx_patterns_set_regex(&g.pat, getenv("PPSCOPE_NVTX_REGEX"),
                                      getenv("PPSCOPE_NVTX_GROUPS"), getenv("PPSCOPE_NVTX_KIND"),
                                      &err);
    if (rc)
        fprintf(stderr, "ppscope nvtx: %s\n", err.msg);

    if (pps__nvtx_names_init(&g.names, MAX_NAMES, fill_name, NULL) != 0) {
        fprintf(stderr, "ppscope nvtx: tracing off: out of memory\n");
        pps_trace_close(g.t, NULL);
        g.t = NULL;
        return -1;
    }
    g.have_key = pthread_key_create(&g.stack_key, stack_exit) == 0;
    pthread_atfork(NULL, NULL, at_fork_child);
    if (atexit(at_exit) != 0)
        fprintf(stderr, "ppscope nvtx: cannot register the exit handler: the run will not be "
                        "marked complete\n");
    return 0;
}

/* ---- the entry point ----------------------------------------------------------------------- */

struct hook {
    unsigned id;
    NvtxFunctionPointer fn;
};

static const struct hook core_hooks[] = {
    {NVTX_CBID_CORE_MarkEx, (NvtxFunctionPointer)hook_mark_ex},
    {NVTX_CBID_CORE_MarkA, (NvtxFunctionPointer)hook_mark_a},
    {NVTX_CBID_CORE_MarkW, (NvtxFunctionPointer)hook_mark_w},
    {NVTX_CBID_CORE_RangeStartEx, (NvtxFunctionPointer)hook_start_ex},
    {NVTX_CBID_CORE_RangeStartA, (NvtxFunctionPointer)hook_start_a},
    {NVTX_CBID_CORE_RangeStartW, (NvtxFunctionPointer)hook_start_w},
    {NVTX_CBID_CORE_RangeEnd, (NvtxFunctionPointer)hook_end},
    {NVTX_CBID_CORE_RangePushEx, (NvtxFunctionPointer)hook_push_ex},
    {NVTX_CBID_CORE_RangePushA, (NvtxFunctionPointer)hook_push_a},
    {NVTX_CBID_CORE_RangePushW, (NvtxFunctionPointer)hook_push_w},
    {NVTX_CBID_CORE_RangePop, (NvtxFunctionPointer)hook_pop},
    {NVTX_CBID_CORE_NameOsThreadA, (NvtxFunctionPointer)hook_name_thread_a},
    {NVTX_CBID_CORE_NameOsThreadW, (NvtxFunctionPointer)hook_name_thread_w},
};

static const struct hook core2_hooks[] = {
    {NVTX_CBID_CORE2_DomainMarkEx, (NvtxFunctionPointer)hook_domain_mark_ex},
    {NVTX_CBID_CORE2_DomainRangeStartEx, (NvtxFunctionPointer)hook_domain_start_ex},
    {NVTX_CBID_CORE2_DomainRangeEnd, (NvtxFunctionPointer)hook_domain_end},
    {NVTX_CBID_CORE2_DomainRangePushEx, (NvtxFunctionPointer)hook_domain_push_ex},
    {NVTX_CBID_CORE2_DomainRangePop, (NvtxFunctionPointer)hook_domain_pop},
    {NVTX_CBID_CORE2_DomainRegisterStringA, (NvtxFunctionPointer)hook_register_a},
    {NVTX_CBID_CORE2_DomainRegisterStringW, (NvtxFunctionPointer)hook_register_w},
    {NVTX_CBID_CORE2_DomainCreateA, (NvtxFunctionPointer)hook_domain_create_a},
    {NVTX_CBID_CORE2_DomainCreateW, (NvtxFunctionPointer)hook_domain_create_w},
    {NVTX_CBID_CORE2_DomainDestroy, (NvtxFunctionPointer)hook_domain_destroy},
};

/* Points the calling NVTX instance's entries of one module at our hooks. 0, or -1. */
static int install(const NvtxExportTableCallbacks *cb, NvtxCallbackModule module,
                   const struct hook *hooks, size_t n)
{
    NvtxFunctionTable table = NULL;
    unsigned int size = 0;
    if (!cb->GetModuleFunctionTable(module, &table, &size) || !table)
        return -1;
    for (size_t i = 0; i < n; i++)
        if (hooks[i].id < size && table[hooks[i].id])
            *table[hooks[i].id] = hooks[i].fn;
    return 0;
}

int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get)
{
    const NvtxExportTableCallbacks *cb;
    const NvtxExportTableVersionInfo *version;
    enum state state;

    if (!get)
        return 0;
    cb = (const NvtxExportTableCallbacks *)get(NVTX_ETID_CALLBACKS);
    if (!cb ||
        cb->struct_size < offsetof(NvtxExportTableCallbacks, GetModuleFunctionTable) +
                              sizeof(cb->GetModuleFunctionTable) ||
        !cb->GetModuleFunctionTable)
        return 0;

    pthread_mutex_lock(&g.lock);
    if (g.state == FRESH)
        g.state = open_run() == 0 ? OPEN : FAILED;
    state = g.state;
    pthread_mutex_unlock(&g.lock);
    if (state != OPEN || g.forked)
        return 0;

    version = (const NvtxExportTableVersionInfo *)get(NVTX_ETID_VERSIONINFO);
    if (version &&
        version->struct_size >= offsetof(NvtxExportTableVersionInfo, SetInjectionNvtxVersion) +
                                    sizeof(version->SetInjectionNvtxVersion) &&
        version->SetInjectionNvtxVersion)
        version->SetInjectionNvtxVersion(NVTX_VERSION);

    if (install(cb, NVTX_CB_MODULE_CORE, core_hooks, sizeof(core_hooks) / sizeof(core_hooks[0])))
        return 0;
    /* An NVTX instance older than domains has no CORE2 module: the core hooks still work. */
    install(cb, NVTX_CB_MODULE_CORE2, core2_hooks, sizeof(core2_hooks) / sizeof(core2_hooks[0]));
    return 1;
}
