/*
 * hooks.c - the NVTX hooks of libppscope_nvtx.so: the functions injection.c puts in NVTX's
 * function tables, which turn NVTX ranges into ppscope spans through the tracer's public API
 * (ppscope/trace.h). docs/nvtx.md is the user's side.
 *
 * - Push/pop ranges live on a per-thread stack (frames tagged with their domain, so that each
 *   domain pops its own); start/end ranges live in one table under a lock, since they may end
 *   on another thread. A range becomes a span when it ends: a pipeline op when its name matches
 *   a naming rule (storage/labels.h), else a named RANGE span.
 * - Each distinct name is matched and interned once (names.h); a registered string's handle is
 *   the cached entry itself, so a REGISTERED message costs no lookup.
 * - Iterations come from names that mark them ("pps:iter=3"), else are inferred from repeated
 *   forwards (iters.h); either way through pps_trace_iteration, when the range starts.
 * - Every hook that touches the tracer counts itself in, in its own thread's counter, so that the
 *   exit handler can wait for it; once the run is closing (or in a forked child) the hooks do
 *   nothing.
 * - Nothing here aborts or blocks the program: ranges that cannot be traced are dropped and
 *   counted, and injection.c reports the count at exit.
 */
#define _DEFAULT_SOURCE /* syscall(), for membarrier(2) */
#include "injection_int.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <linux/membarrier.h>

#include "iters.h"
#include "names.h"
#include "labels.h"
#include "cupti.h"
#include "ppscope/trace.h"
#include "tracer_core.h"

#define NAME_BYTES      512     /* longer names are cut (at a UTF-8 boundary) */
#define MAX_OPEN_RANGES 1048576 /* start/end ranges open at once */
#define UNNAMED         "(unnamed)"
#define PPS__NVTX_RECENT 16 /* names a thread finds by address (name_cached()) */

struct frame {
    int64_t start_ns;                  /* pps__stamp(): TSC ticks or nanoseconds (tracer/tsc.h) */
    const struct pps__nvtx_name *name; /* NULL: not traced (counted when it ends) */
    const void *domain;                /* NULL for the core API and the default domain */
    int64_t bytes;                     /* from the event's payload, -1 if none */
    uint64_t ext;                      /* the op's id pushed to CUPTI; 0: none */
};

struct thread_stack {
    /* Hooks the thread is inside (enter() to leave()): more than 1 when a signal handler calls
     * NVTX inside a hook. Written by the thread alone, read by the exit handler. */
    _Atomic int active;
    int warm; /* 1 once the thread's tracer buffer is set up */
    /* The names of the strings pushed last, by address (name_cached()). */
    struct {
        const char *text;
        const struct pps__nvtx_name *name;
    } recent[PPS__NVTX_RECENT];
    struct frame frames[PPS__NVTX_STACK_FRAMES];
    int depth;         /* frames in use */
    int lost;          /* pushes beyond PPS__NVTX_STACK_FRAMES, popped before the frames are */
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

/* The hooks' own state, under pps__nvtx.lock (the atomics are also read without it). */
static struct {
    atomic_int iter;                 /* the highest iteration marked so far */
    atomic_int explicit_iters;       /* 1 once a name marked an iteration: no more inference */
    struct pps__nvtx_iters inferred; /* joins without the lock, the rest under it (iters.h) */
    struct open_range *ranges;
    int32_t n_ranges, cap_ranges, free_head;
    struct thread_stack *threads;
    struct domain *domains;
} h = {.iter = -1, .free_head = -1, .inferred = PPS__NVTX_ITERS_INIT};

/* Initial-exec, as the tracer core's own: one %fs-relative load, no __tls_get_addr call. */
static _Thread_local struct thread_stack *tls_stack __attribute__((tls_model("initial-exec")));

static struct thread_stack *get_stack(void);

/* ---- entering and leaving the tracer ---------------------------------------------------- */

/*
 * Every hook that may touch the tracer runs between enter() and leave(), counted in its own
 * thread's counter: no write to a line that other threads share. The exit handler sets closing,
 * then waits for every thread's counter to read 0 (pps__nvtx_hooks_quiesce). It is Dekker's
 * pattern, each side storing its mark and then reading the other's, made asymmetric where the
 * kernel allows: the hook side orders its store and load with a compiler barrier alone, and the
 * exit side makes every thread of the process run a full barrier (membarrier(2),
 * MEMBARRIER_CMD_PRIVATE_EXPEDITED), as liburcu does. Without membarrier both sides use a
 * sequentially consistent fence. Either way a hook sees closing and backs out, or is seen and
 * waited for.
 */
static inline __attribute__((always_inline)) void leave(struct thread_stack *s)
{
    atomic_store_explicit(&s->active, atomic_load_explicit(&s->active, memory_order_relaxed) - 1,
                          memory_order_release);
}

static inline __attribute__((always_inline)) struct thread_stack *enter(void)
{
    struct thread_stack *s;

    if (atomic_load_explicit(&pps__nvtx.closing, memory_order_relaxed))
        return NULL;
    if (!(s = tls_stack) && !(s = get_stack())) {
        atomic_fetch_add(&pps__nvtx.dropped, 1); /* a range, or a mark: not traced */
        return NULL;
    }
    /* Not a locked add: only this thread writes it, and a signal handler that runs between the
     * load and the store leaves it as it found it. */
    atomic_store_explicit(&s->active, atomic_load_explicit(&s->active, memory_order_relaxed) + 1,
                          memory_order_relaxed);
    if (pps__nvtx.membarrier)
        atomic_signal_fence(memory_order_seq_cst);
    else
        atomic_thread_fence(memory_order_seq_cst);
    if (atomic_load_explicit(&pps__nvtx.closing, memory_order_relaxed)) {
        leave(s);
        return NULL;
    }
    if (!s->warm) {
        /* Pays for the thread's buffer here, before the hook reads the clock, instead of inside
         * the program's first range. */
        s->warm = 1;
        pps_trace_thread_init(pps__nvtx.t);
    }
    return s;
}

static void drop(void)
{
    atomic_fetch_add(&pps__nvtx.dropped, 1);
}

void pps__nvtx_membarrier_init(void)
{
#ifdef __NR_membarrier
    long cmds = syscall(__NR_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
    pps__nvtx.membarrier =
        cmds > 0 && (cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED) &&
        syscall(__NR_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
#else
    pps__nvtx.membarrier = 0;
#endif
}

/* Whether some thread is inside a hook, after the barrier that makes every flag visible. */
static int any_active(void)
{
    int busy = 0;

#ifdef __NR_membarrier
    /* Cannot fail once registered (set before any hook runs, never changed after). */
    if (pps__nvtx.membarrier)
        (void)syscall(__NR_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0);
#endif
    atomic_thread_fence(memory_order_seq_cst);
    pthread_mutex_lock(&pps__nvtx.lock);
    for (struct thread_stack *s = h.threads; s && !busy; s = s->next)
        busy = atomic_load_explicit(&s->active, memory_order_acquire);
    pthread_mutex_unlock(&pps__nvtx.lock);
    return busy;
}

int pps__nvtx_hooks_quiesce(int ms)
{
    for (int i = 0; i < ms && any_active(); i++) {
        struct timespec one = {0, 1000000};
        nanosleep(&one, NULL);
    }
    return any_active() ? -1 : 0;
}

/* ---- names ------------------------------------------------------------------------------ */

/* Fills a name seen for the first time (under the cache's lock): its rule, and its id. */
void pps__nvtx_fill_name(void *ctx, struct pps__nvtx_name *n)
{
    (void)ctx;
    n->rule = pps_label_match(&pps__nvtx.pat, n->text, &n->op);
    if ((n->rule == PPS_LABEL_NONE || n->op.kind == PPS_LABEL_ITER) && pps__nvtx.keep_ranges) {
        int32_t id = pps_trace_name(pps__nvtx.t, n->text);
        n->name_id = id >= 0 ? id : -1;
    }
}

static const struct pps__nvtx_name *name_of_ascii(const char *s)
{
    /* Looked up in place: the cache copies a name only the first time it sees it. */
    size_t len = pps_label_clean_len(s, NAME_BYTES);
    if (len == 0)
        return pps__nvtx_names_get(&pps__nvtx.names, UNNAMED, strlen(UNNAMED));
    return pps__nvtx_names_get(&pps__nvtx.names, s, len);
}

/*
 * The name of s, through the names this thread pushed last, by address: a loop that pushes one
 * name again and again, or the forwards of a few microbatches in turn, finds it with one
 * compare. Only the same string at the same address hits, and only when it still holds the
 * name's bytes and ends there (a name PyTorch's tails were cut from does not).
 */
static const struct pps__nvtx_name *name_cached(struct thread_stack *ts, const char *s)
{
    /* Fibonacci hashing of the address: strings a few bytes apart take different slots. */
    size_t k = (size_t)(((uint64_t)(uintptr_t)s * 0x9e3779b97f4a7c15ull) >> 60) % PPS__NVTX_RECENT;
    const struct pps__nvtx_name *n = ts->recent[k].name;

    if (n && s && s == ts->recent[k].text && strncmp(s, n->text, n->len) == 0 &&
        s[n->len] == '\0')
        return n;
    if ((n = name_of_ascii(s)) && s) {
        ts->recent[k].text = s;
        ts->recent[k].name = n;
    }
    return n;
}

static const struct pps__nvtx_name *name_of_wide(const wchar_t *ws)
{
    char buf[NAME_BYTES];
    pps_label_utf8_from_wide(ws, buf, sizeof(buf));
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

/* Moves the run to iteration iter if it is past the last one marked. Under pps__nvtx.lock. */
static void mark_iter_locked(int iter)
{
    if (iter > atomic_load(&h.iter)) {
        pps_trace_iteration(pps__nvtx.t, iter);
        atomic_store(&h.iter, iter);
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
        atomic_store(&h.explicit_iters, 1);
        if (n->op.iter > atomic_load(&h.iter)) {
            pthread_mutex_lock(&pps__nvtx.lock);
            mark_iter_locked(n->op.iter);
            pthread_mutex_unlock(&pps__nvtx.lock);
        }
    } else if (n->op.kind == PPS_TRACE_F && !atomic_load(&h.explicit_iters)) {
        /* A forward that joins the iteration takes no lock; the rest (one an iteration, once
         * every key is known) are serialised with the iteration they start. */
        int stage = n->op.stage >= 0 ? n->op.stage : pps__nvtx.stage;
        if (pps__nvtx_iters_join(&h.inferred, stage, n->op.chunk, n->op.mb) !=
            PPS__NVTX_ITERS_SERIAL)
            return;
        pthread_mutex_lock(&pps__nvtx.lock);
        int iter = pps__nvtx_iters_forward(&h.inferred, stage, n->op.chunk, n->op.mb);
        if (iter >= 0 && !atomic_load(&h.explicit_iters))
            mark_iter_locked(iter);
        pthread_mutex_unlock(&pps__nvtx.lock);
    }
}

/* Whether a range is a compute op whose kernels CUPTI should give it (device activity on). */
static int is_compute(const struct pps__nvtx_name *n)
{
    return n &&
           (n->op.kind == PPS_TRACE_F || n->op.kind == PPS_TRACE_B || n->op.kind == PPS_TRACE_W ||
            n->op.kind == PPS_TRACE_BW || n->op.kind == PPS_TRACE_OPT);
}

/* Records a finished range: a pipeline op if its name says so, else a named range. ext: the
 * op's id pushed to CUPTI when it started, 0 if none. */
static void record(const struct pps__nvtx_name *n, int64_t start, int64_t end, int64_t bytes,
                   uint64_t ext)
{
    if (!n) {
        drop();
        return;
    }
    const struct pps_label_op *op = &n->op;
    int stage = op->stage >= 0 ? op->stage : pps__nvtx.stage;
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
        pps__trace_p2p_stamped(pps__nvtx.t, op->kind, stage, op->peer, op->mb, bytes, start, end);
        return;
    case PPS_TRACE_F:
    case PPS_TRACE_B:
    case PPS_TRACE_W:
    case PPS_TRACE_BW:
    case PPS_TRACE_OPT:
        pps__trace_record_dev(pps__nvtx.t, op->kind, stage, chunk, op->mb, start, end, ext);
        return;
    default: /* not a pipeline op, or an iteration marker: a named range */
        if (!pps__nvtx.keep_ranges)
            return;
        if (n->name_id < 0) {
            drop();
            return;
        }
        pps__trace_named_stamped(pps__nvtx.t, PPS_TRACE_RANGE, stage, n->name_id, start, end);
    }
}

/* ---- push/pop: per-thread stacks --------------------------------------------------------- */

/* A thread exits: its stack goes, unless ranges are still open on it (the exit handler records
 * those, ending when the thread did). */
void pps__nvtx_stack_exit(void *stack)
{
    struct thread_stack *s = stack;
    tls_stack = NULL;
    if (pps__nvtx.forked)
        return; /* the lock may have been held by a thread that the fork left behind */
    pthread_mutex_lock(&pps__nvtx.lock);
    if (s->depth > 0) {
        s->exited_ns = pps__stamp();
    } else {
        for (struct thread_stack **pp = &h.threads; *pp; pp = &(*pp)->next) {
            if (*pp == s) {
                *pp = s->next;
                free(s);
                break;
            }
        }
    }
    pthread_mutex_unlock(&pps__nvtx.lock);
}

static struct thread_stack *get_stack(void)
{
    struct thread_stack *s = tls_stack;
    if (s)
        return s;
    s = calloc(1, sizeof(*s));
    if (!s)
        return NULL;
    pthread_mutex_lock(&pps__nvtx.lock);
    s->next = h.threads;
    h.threads = s;
    pthread_mutex_unlock(&pps__nvtx.lock);
    if (pps__nvtx.have_key)
        pthread_setspecific(pps__nvtx.stack_key, s);
    tls_stack = s;
    return s;
}

/* Returns the new range's nesting level (0-based), or -1 when it is not traced. */
static int push(struct thread_stack *s, const void *domain, const struct pps__nvtx_name *n,
                int64_t bytes, int64_t now)
{
    on_start(n);
    if (s->depth == PPS__NVTX_STACK_FRAMES) {
        s->lost++;
        drop();
        return s->depth + s->lost - 1;
    }
    struct frame *f = &s->frames[s->depth++];
    f->start_ns = now;
    f->name = n;
    f->domain = domain;
    f->bytes = bytes;
    /* Device activity: the op's id around its kernels (push/pop ranges only: start/end ranges
     * may end on another thread, and CUPTI's stack is the thread's). */
    f->ext = is_compute(n) ? pps__trace_dev_push(pps__nvtx.t, n->op.kind,
                                                 n->op.chunk >= 0 ? n->op.chunk : 0, n->op.mb)
                           : 0;
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
    if (i + 1 < s->depth) /* another domain's range is inside it: close the gap */
        memmove(&s->frames[i], &s->frames[i + 1], sizeof(f) * (size_t)(s->depth - 1 - i));
    s->depth--;
    if (f.ext)
        pps__cupti_pop();
    record(f.name, f.start_ns, now, f.bytes, f.ext);
    return i;
}

/* ---- start/end: one table, any thread ---------------------------------------------------- */

/* Returns the range's id, or 0 (never a valid id) when it is not traced. */
static nvtxRangeId_t start_range(const struct pps__nvtx_name *n, int64_t bytes, int64_t now)
{
    nvtxRangeId_t id = 0;
    on_start(n);
    pthread_mutex_lock(&pps__nvtx.lock);
    if (h.free_head < 0) {
        if (h.n_ranges == h.cap_ranges) {
            int32_t cap = h.cap_ranges ? h.cap_ranges * 2 : 256;
            struct open_range *r =
                cap <= MAX_OPEN_RANGES ? realloc(h.ranges, sizeof(*r) * (size_t)cap) : NULL;
            if (!r)
                goto out;
            h.ranges = r;
            h.cap_ranges = cap;
        }
        h.ranges[h.n_ranges] = (struct open_range){.next_free = -1};
        h.free_head = h.n_ranges++;
    }
    int32_t k = h.free_head;
    struct open_range *r = &h.ranges[k];
    h.free_head = r->next_free;
    r->in_use = 1;
    r->gen++;
    r->start_ns = now;
    r->name = n;
    r->bytes = bytes;
    id = ((nvtxRangeId_t)r->gen << 32) | (nvtxRangeId_t)(k + 1);
out:
    pthread_mutex_unlock(&pps__nvtx.lock);
    if (!id)
        drop();
    return id;
}

static void end_range(nvtxRangeId_t id, int64_t now)
{
    int64_t k = (int64_t)(id & 0xffffffffu) - 1;
    uint32_t gen = (uint32_t)(id >> 32);
    struct open_range r = {0};
    pthread_mutex_lock(&pps__nvtx.lock);
    if (k >= 0 && k < h.n_ranges && h.ranges[k].in_use && h.ranges[k].gen == gen) {
        r = h.ranges[k];
        h.ranges[k].in_use = 0;
        h.ranges[k].next_free = h.free_head;
        h.free_head = (int32_t)k;
    }
    pthread_mutex_unlock(&pps__nvtx.lock);
    if (r.in_use)
        record(r.name, r.start_ns, now, r.bytes, 0);
}

/* A mark has no length: an iteration marker moves the iteration, a pipeline op is ignored, and
 * anything else is a named range of length 0. */
static void mark(const struct pps__nvtx_name *n, int64_t now)
{
    if (n && n->op.kind >= 0 && n->op.kind != PPS_LABEL_ITER)
        return;
    on_start(n);
    record(n, now, now, -1, 0);
}

/* ---- at exit ---------------------------------------------------------------------------- */

/* Ranges still open end now (or when their thread exited). */
void pps__nvtx_end_open_ranges(int64_t now)
{
    pthread_mutex_lock(&pps__nvtx.lock);
    for (int32_t k = 0; k < h.n_ranges; k++)
        if (h.ranges[k].in_use)
            record(h.ranges[k].name, h.ranges[k].start_ns, now, h.ranges[k].bytes, 0);
    for (struct thread_stack *s = h.threads; s; s = s->next)
        for (int i = s->depth - 1; i >= 0; i--)
            record(s->frames[i].name, s->frames[i].start_ns, s->exited_ns ? s->exited_ns : now,
                   s->frames[i].bytes, s->frames[i].ext);
    pthread_mutex_unlock(&pps__nvtx.lock);
}

/* ---- the hooks: core ---------------------------------------------------------------------- */

static void NVTX_API hook_mark_ex(const nvtxEventAttributes_t *a)
{
    int64_t bytes;
    struct thread_stack *ts = enter();
    if (!ts)
        return;
    int64_t now = pps__stamp();
    mark(name_of_event(a, &bytes), now);
    leave(ts);
}

static void NVTX_API hook_mark_a(const char *msg)
{
    struct thread_stack *ts = enter();
    if (!ts)
        return;
    int64_t now = pps__stamp();
    mark(name_of_ascii(msg), now);
    leave(ts);
}

static void NVTX_API hook_mark_w(const wchar_t *msg)
{
    struct thread_stack *ts = enter();
    if (!ts)
        return;
    int64_t now = pps__stamp();
    mark(name_of_wide(msg), now);
    leave(ts);
}

static nvtxRangeId_t NVTX_API hook_start_ex(const nvtxEventAttributes_t *a)
{
    int64_t bytes;
    struct thread_stack *ts = enter();
    if (!ts)
        return 0;
    int64_t now = pps__stamp();
    const struct pps__nvtx_name *n = name_of_event(a, &bytes);
    nvtxRangeId_t id = start_range(n, bytes, now);
    leave(ts);
    return id;
}

static nvtxRangeId_t NVTX_API hook_start_a(const char *msg)
{
    struct thread_stack *ts = enter();
    if (!ts)
        return 0;
    int64_t now = pps__stamp();
    nvtxRangeId_t id = start_range(name_of_ascii(msg), -1, now);
    leave(ts);
    return id;
}

static nvtxRangeId_t NVTX_API hook_start_w(const wchar_t *msg)
{
    struct thread_stack *ts = enter();
    if (!ts)
        return 0;
    int64_t now = pps__stamp();
    nvtxRangeId_t id = start_range(name_of_wide(msg), -1, now);
    leave(ts);
    return id;
}

static void NVTX_API hook_end(nvtxRangeId_t id)
{
    struct thread_stack *ts = enter();
    if (!ts)
        return;
    int64_t now = pps__stamp();
    end_range(id, now);
    leave(ts);
}

static int NVTX_API hook_push_ex(const nvtxEventAttributes_t *a)
{
    int64_t bytes;
    struct thread_stack *ts = enter();
    if (!ts)
        return -1;
    int64_t now = pps__stamp();
    const struct pps__nvtx_name *n = name_of_event(a, &bytes);
    int level = push(ts, NULL, n, bytes, now);
    leave(ts);
    return level;
}

static int NVTX_API hook_push_a(const char *msg)
{
    struct thread_stack *ts = enter();
    if (!ts)
        return -1;
    int64_t now = pps__stamp();
    int level = push(ts, NULL, name_cached(ts, msg), -1, now);
    leave(ts);
    return level;
}

static int NVTX_API hook_push_w(const wchar_t *msg)
{
    struct thread_stack *ts = enter();
    if (!ts)
        return -1;
    int64_t now = pps__stamp();
    int level = push(ts, NULL, name_of_wide(msg), -1, now);
    leave(ts);
    return level;
}

static int NVTX_API hook_pop(void)
{
    struct thread_stack *ts = enter();
    if (!ts)
        return -1;
    int64_t now = pps__stamp();
    int level = pop(NULL, now);
    leave(ts);
    return level;
}

/* Thread names go into the run's metadata, as thread_name.<os thread id>. */
static void name_thread(uint32_t tid, const char *name)
{
    char key[48];
    snprintf(key, sizeof(key), "thread_name.%u", (unsigned)tid);
    pps_trace_meta(pps__nvtx.t, key, name ? name : "");
}

static void NVTX_API hook_name_thread_a(uint32_t tid, const char *name)
{
    struct thread_stack *ts = enter();
    if (!ts)
        return;
    name_thread(tid, name);
    leave(ts);
}

static void NVTX_API hook_name_thread_w(uint32_t tid, const wchar_t *name)
{
    char buf[NAME_BYTES];
    struct thread_stack *ts = enter();
    if (!ts)
        return;
    pps_label_utf8_from_wide(name, buf, sizeof(buf));
    name_thread(tid, buf);
    leave(ts);
}

/* ---- the hooks: domains ------------------------------------------------------------------ */

/* A domain is only an identity (push/pop pair within one); one handle per distinct name. */
static nvtxDomainHandle_t domain_create(const char *name)
{
    static struct domain forked_domain;
    struct domain *d;
    size_t len;
    if (pps__nvtx.forked)
        return (nvtxDomainHandle_t)(void *)&forked_domain; /* no lock after a fork */
    if (!name)
        name = "";
    len = strlen(name);
    pthread_mutex_lock(&pps__nvtx.lock);
    for (d = h.domains; d; d = d->next)
        if (strcmp(d->name, name) == 0)
            goto out;
    d = malloc(sizeof(*d) + len + 1);
    if (d) {
        memcpy(d->name, name, len + 1);
        d->next = h.domains;
        h.domains = d;
    }
out:
    pthread_mutex_unlock(&pps__nvtx.lock);
    return (nvtxDomainHandle_t)(void *)d;
}

static nvtxDomainHandle_t NVTX_API hook_domain_create_a(const char *name)
{
    return domain_create(name);
}

static nvtxDomainHandle_t NVTX_API hook_domain_create_w(const wchar_t *name)
{
    char buf[NAME_BYTES];
    pps_label_utf8_from_wide(name, buf, sizeof(buf));
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
    struct thread_stack *ts = enter();
    if (!ts)
        return NULL;
    const struct pps__nvtx_name *n = name_of_ascii(s);
    leave(ts);
    return (nvtxStringHandle_t)(uintptr_t)n;
}

static nvtxStringHandle_t NVTX_API hook_register_w(nvtxDomainHandle_t domain, const wchar_t *s)
{
    (void)domain;
    struct thread_stack *ts = enter();
    if (!ts)
        return NULL;
    const struct pps__nvtx_name *n = name_of_wide(s);
    leave(ts);
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
    struct thread_stack *ts = enter();
    if (!ts)
        return -1;
    int64_t now = pps__stamp();
    const struct pps__nvtx_name *n = name_of_event(a, &bytes);
    int level = push(ts, (const void *)domain, n, bytes, now);
    leave(ts);
    return level;
}

static int NVTX_API hook_domain_pop(nvtxDomainHandle_t domain)
{
    struct thread_stack *ts = enter();
    if (!ts)
        return -1;
    int64_t now = pps__stamp();
    int level = pop((const void *)domain, now);
    leave(ts);
    return level;
}

/* ---- the function tables ------------------------------------------------------------------ */

const struct pps__nvtx_hook pps__nvtx_core_hooks[] = {
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

const struct pps__nvtx_hook pps__nvtx_core2_hooks[] = {
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

const size_t pps__nvtx_n_core_hooks =
    sizeof(pps__nvtx_core_hooks) / sizeof(pps__nvtx_core_hooks[0]);
const size_t pps__nvtx_n_core2_hooks =
    sizeof(pps__nvtx_core2_hooks) / sizeof(pps__nvtx_core2_hooks[0]);
