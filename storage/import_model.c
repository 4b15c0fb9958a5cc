/*
 * import_model.c - the importers' model of a trace (import_model.h): processes and their spans,
 * iterations from step ranges, device spans attributed to the op open on their launching thread,
 * ranks, and the shards written at the end.
 */
#include "import_model.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <unistd.h>

#include "storage_int.h"

#define NAME_BYTES    512 /* longer names are cut (at a UTF-8 boundary), as the injection does */
#define UNNAMED       "(unnamed)"
#define MAX_TNAMES    4096 /* thread names kept per rank: meta, not spans */
#define MAX_RANKS     ((size_t)INT16_MAX + 1)
#define WRITE_BATCH   16384
#define MAX_WRITERS   8  /* threads writing shards at once */
#define MAX_RUNS      16 /* runs in order that write_spans merges */
#define STAGE_DEFAULT (-1)

/* ---- the model ---------------------------------------------------------------------------- */

void pps__imodel_init(struct pps__imodel *m, const char *source)
{
    memset(m, 0, sizeof(*m));
    m->source = source;
    pps_label_patterns_init(&m->rules);
}

static void proc_release(struct pps__im_proc *p)
{
    free(p->launches);
    free(p->spans);
    free(p->iters);
    free(p->tnames);
}

void pps__imodel_file_end(struct pps__imodel *m)
{
    for (size_t i = m->first_proc; i < m->n_procs; i++) {
        struct pps__im_proc *p = &m->procs[i];
        free(p->launches);
        p->launches = NULL;
        p->cap_launches = p->n_launches = 0;
        p->launch_mix = 0;
        for (size_t k = 0; k < p->n; k++) {
            struct pps_span *sp = &p->spans[k];
            sp->rank = 0;
            if (sp->kind == PPS_SPAN_SEND || sp->kind == PPS_SPAN_RECV)
                sp->corr = 0; /* NCCL's, launched or not: a CUPTI id is no message id */
        }
    }
    for (size_t i = 0; i < m->n_threads; i++)
        free(m->threads[i].ops);
    free(m->threads);
    m->threads = NULL;
    m->n_threads = m->cap_threads = 0;
    pps__idmap_release(&m->proc_map);
    pps__idmap_release(&m->thread_map);
    pps__idmap_release(&m->string_map);
}

void pps__imodel_release(struct pps__imodel *m)
{
    pps__imodel_file_end(m);
    for (size_t i = 0; i < m->n_procs; i++)
        proc_release(&m->procs[i]);
    free(m->procs);
    for (size_t i = 0; i < m->n_files; i++) {
        struct pps__im_file *f = &m->files[i];
        free(f->path);
        free(f->host);
        for (int k = 0; k < 4; k++) {
            free(f->meta_key[k]);
            free(f->meta_value[k]);
        }
    }
    free(m->files);
    free(m->info);
    pps_strtab_release(&m->names);
    pps_label_patterns_release(&m->rules);
    memset(m, 0, sizeof(*m));
}

static int nomem(struct pps_err *err)
{
    return pps_err_set(err, PPS_ENOMEM, "out of memory");
}

int pps__imodel_file_begin(struct pps__imodel *m, const struct pps__file_info *info,
                           struct pps_err *err)
{
    struct pps__im_file *f;

    pps__imodel_file_end(m);
    if (pps_grow((void **)&m->files, &m->cap_files, m->n_files + 1, sizeof(*m->files)) != 0)
        return nomem(err);
    f = &m->files[m->n_files++];
    memset(f, 0, sizeof(*f));
    f->has_utc = info->has_utc;
    f->utc_ns = info->utc_ns;
    if (!(f->path = strdup(info->path)) || !(f->host = strdup(info->host ? info->host : "")))
        return nomem(err);
    for (int k = 0; k < 4 && info->meta[k].key; k++)
        if (!(f->meta_key[k] = strdup(info->meta[k].key)) ||
            !(f->meta_value[k] = strdup(info->meta[k].value ? info->meta[k].value : "")))
            return nomem(err);
    m->first_proc = m->n_procs;
    return 0;
}

/* The model's id of a name (cut, without emit_nvtx's decorations), classified on first sight. */
static int32_t name_id(struct pps__imodel *m, const char *text, struct pps_err *err)
{
    char buf[NAME_BYTES];
    int32_t id;

    if (!text || !*text || pps_label_clean_name(text, buf, sizeof(buf)) == 0)
        snprintf(buf, sizeof(buf), "%s", UNNAMED);
    if ((id = pps_strtab_find(&m->names, buf)) >= 0)
        return id;
    if ((id = pps_strtab_intern(&m->names, buf)) < 0)
        return id == PPS_ENOMEM ? nomem(err) : pps_err_set(err, PPS_EFORMAT, "too many names");
    if (pps_grow((void **)&m->info, &m->cap_info, (size_t)id + 1, sizeof(*m->info)) != 0)
        return nomem(err);
    struct pps__im_name_info *ni = &m->info[id];
    pps_label_match(&m->rules, buf, &ni->op);
    /* Another tool's step range, when the name is no label of ours. */
    if (ni->op.kind >= 0 || !pps_label_step(buf, &ni->step))
        ni->step = -1;
    ni->nccl = pps__import_kernel_is_comm(buf, &ni->nccl_kind);
    return id;
}

int pps__imodel_string_known(const struct pps__imodel *m, int64_t id)
{
    return pps__idmap_get(&m->string_map, id) >= 0;
}

int pps__imodel_string_add(struct pps__imodel *m, int64_t id, const char *text, struct pps_err *err)
{
    int32_t nid = name_id(m, text, err);

    if (nid < 0)
        return nid;
    if (pps__idmap_get(&m->string_map, id) < 0 && pps__idmap_put(&m->string_map, id, nid) != 0)
        return nomem(err);
    return 0;
}

/* The model's name id of an event's text, or of its string id. */
static int32_t text_id(struct pps__imodel *m, int64_t string_id, const char *text,
                       struct pps_err *err)
{
    int32_t id;

    if (string_id < 0)
        return name_id(m, text, err);
    if ((id = pps__idmap_get(&m->string_map, string_id)) < 0)
        return pps_err_set(err, PPS_EINVAL, "string %lld was not given", (long long)string_id);
    return id;
}

/* The current file's process of key in *out, made on first sight (*out NULL on failure). */
static int proc_get(struct pps__imodel *m, int64_t key, int pid, struct pps__im_proc **out,
                    struct pps_err *err)
{
    int32_t i = pps__idmap_get(&m->proc_map, key);
    struct pps__im_proc *p;

    /* Set on every path: the compiler cannot see that an error's code is never 0. */
    *out = NULL;
    if (i >= 0) {
        *out = &m->procs[i];
        return 0;
    }
    if (m->n_procs >= MAX_RANKS)
        return pps_err_set(err, PPS_EFORMAT, "more than %zu processes: one rank each is too many",
                           MAX_RANKS);
    if (pps_grow((void **)&m->procs, &m->cap_procs, m->n_procs + 1, sizeof(*m->procs)) != 0 ||
        pps__idmap_put(&m->proc_map, key, (int32_t)m->n_procs) != 0)
        return nomem(err);
    p = &m->procs[m->n_procs++];
    memset(p, 0, sizeof(*p));
    p->file = m->n_files - 1;
    p->key = key;
    p->pid = pid;
    p->min_stage = -1;
    p->mpi_rank = -1;
    *out = p;
    return 0;
}

static int thread_get(struct pps__imodel *m, int64_t key, size_t proc, struct pps__im_thread **out,
                      struct pps_err *err)
{
    int32_t i = pps__idmap_get(&m->thread_map, key);
    struct pps__im_thread *t;

    if (i >= 0) {
        *out = &m->threads[i];
        return 0;
    }
    if (m->n_threads >= INT32_MAX ||
        pps_grow((void **)&m->threads, &m->cap_threads, m->n_threads + 1, sizeof(*m->threads)) !=
            0 ||
        pps__idmap_put(&m->thread_map, key, (int32_t)m->n_threads) != 0)
        return nomem(err);
    t = &m->threads[m->n_threads++];
    memset(t, 0, sizeof(*t));
    t->key = key;
    t->proc = proc;
    *out = t;
    return 0;
}

/* A new span at the end of p's, in *out, with every field at its "none". */
static int span_new(struct pps__im_proc *p, struct pps_span **out, struct pps_err *err)
{
    struct pps_span *s;

    if (p->n >= UINT32_MAX)
        return pps_err_set(err, PPS_EFORMAT, "more than %u spans in one process", UINT32_MAX);
    if (pps_grow((void **)&p->spans, &p->cap, p->n + 1, sizeof(*p->spans)) != 0)
        return nomem(err);
    s = &p->spans[p->n++];
    memset(s, 0, sizeof(*s));
    s->iter = -1;
    s->mb = -1;
    s->peer = -1;
    s->name_id = -1;
    s->stage = STAGE_DEFAULT;
    s->clock = PPS_CLOCK_HOST;
    *out = s;
    return 0;
}

static int iter_mark(struct pps__im_proc *p, int64_t start, int64_t end, int iter,
                     struct pps_err *err)
{
    if (pps_grow((void **)&p->iters, &p->cap_iters, p->n_iters + 1, sizeof(*p->iters)) != 0)
        return nomem(err);
    p->iters[p->n_iters++] = (struct pps__import_iter){start, end, iter};
    return 0;
}

/* "MPI Rank 3", as nsys names the thread of an MPI rank it traces: 3; else -1. */
static int mpi_rank_of(const char *name)
{
    long r = 0;
    int digits = 0;

    if (strncmp(name, "MPI Rank ", 9) != 0)
        return -1;
    for (name += 9; *name >= '0' && *name <= '9' && digits < 6; name++, digits++)
        r = r * 10 + (*name - '0');
    return digits && !*name && r <= INT16_MAX ? (int)r : -1;
}

static int thread_name(struct pps__imodel *m, struct pps__im_proc *p,
                       const struct pps__host_event *ev, struct pps_err *err)
{
    int32_t id;
    int r;

    if (ev->string_id < 0 && (!ev->text || !*ev->text))
        return 0;
    if ((id = text_id(m, ev->string_id, ev->text, err)) < 0)
        return id;
    if ((r = mpi_rank_of(m->names.strs[id])) >= 0)
        p->mpi_rank = (p->mpi_rank == -1 || p->mpi_rank == r) ? r : -2;
    if (p->n_tnames >= MAX_TNAMES)
        return 0;
    for (size_t i = 0; i < p->n_tnames; i++)
        if (p->tnames[i].tid == ev->tid) {
            p->tnames[i].name = id; /* renamed: the last name counts */
            return 0;
        }
    if (pps_grow((void **)&p->tnames, &p->cap_tnames, p->n_tnames + 1, sizeof(*p->tnames)) != 0)
        return nomem(err);
    p->tnames[p->n_tnames++] = (struct pps__im_tname){ev->tid, id};
    return 0;
}

static int is_pipeline_kind(int kind)
{
    return kind >= PPS_SPAN_F && kind <= PPS_SPAN_OPT;
}

int pps__imodel_host(struct pps__imodel *m, const struct pps__host_event *ev, struct pps_err *err)
{
    struct pps__im_proc *p;
    struct pps_span *s;
    int64_t start = ev->start, end = ev->what == PPS__EV_MARK ? ev->start : ev->end;
    int32_t id;
    int rc;

    if ((rc = proc_get(m, ev->proc, ev->pid, &p, err)))
        return rc;
    if (ev->what == PPS__EV_THREAD_NAME)
        return thread_name(m, p, ev, err);
    if (ev->what == PPS__EV_RANGE && !ev->has_end) {
        m->skipped++; /* it never ended: nsys closes ranges at exit, so the file was cut */
        return 0;
    }
    if (end < start)
        return pps_err_set(err, PPS_EFORMAT, "a range that ends before it starts");
    if ((id = text_id(m, ev->string_id, ev->text, err)) < 0)
        return id;
    const struct pps__im_name_info *ni = &m->info[id];
    const struct pps_label_op *op = &ni->op;
    int pipeline = is_pipeline_kind(op->kind);

    /* An op has a length: a mark named like one is not an op (the injection's rule too). */
    if (ev->what == PPS__EV_MARK && pipeline) {
        m->skipped++;
        return 0;
    }
    if (op->kind == PPS_LABEL_ITER || ni->step >= 0 || (pipeline && op->iter >= 0)) {
        /* Ranges bound their iteration; marks (and ops that name one) last until the next. */
        int64_t until = ev->what == PPS__EV_RANGE && !pipeline ? end : INT64_MAX;
        int iter = ni->step >= 0 ? ni->step : op->iter;
        if ((rc = iter_mark(p, start, until, iter, err)))
            return rc;
    }
    if ((rc = span_new(p, &s, err)))
        return rc;
    s->start_ns = start;
    s->end_ns = end;
    s->iter = op->iter >= 0 ? op->iter : ni->step;
    if (!pipeline) {
        s->kind = PPS_SPAN_RANGE;
        s->name_id = id;
        return 0;
    }
    s->kind = (uint8_t)op->kind;
    s->stage = (int16_t)(op->stage >= 0 ? op->stage : STAGE_DEFAULT);
    s->chunk = (int16_t)(op->chunk >= 0 ? op->chunk : 0);
    s->mb = op->mb;
    if (op->kind == PPS_SPAN_SEND || op->kind == PPS_SPAN_RECV || op->kind == PPS_SPAN_WAIT) {
        s->peer = op->peer;
        /* Bytes from the name, else from the event's integer payload; a wait moves none. */
        s->bytes = op->bytes >= 0                                                    ? op->bytes
                   : op->kind != PPS_SPAN_WAIT && ev->has_payload && ev->payload > 0 ? ev->payload
                                                                                     : 0;
    }
    if (op->stage >= 0 && (p->min_stage < 0 || op->stage < p->min_stage))
        p->min_stage = op->stage;
    /* The op's thread remembers it: a kernel launched from there while it runs is its. */
    struct pps__im_thread *t = NULL;
    if ((rc = thread_get(m, ev->thread, (size_t)(p - m->procs), &t, err)))
        return rc;
    if (pps_grow((void **)&t->ops, &t->cap_ops, t->n_ops + 1, sizeof(*t->ops)) != 0)
        return nomem(err);
    t->ops[t->n_ops++] = (struct pps__im_op_ref){start, (uint32_t)(p->n - 1), -1};
    return 0;
}

static int op_cmp(const void *a, const void *b)
{
    const struct pps__im_op_ref *x = a, *y = b;
    if (x->start != y->start)
        return (x->start > y->start) - (x->start < y->start);
    return (x->span > y->span) - (x->span < y->span);
}

/* The iteration a process was in at t (its marks sorted: after host_done). */
static int iter_at(const struct pps__im_proc *p, int64_t t)
{
    return pps__import_iter_at(p->iters, p->n_iters, t);
}

int pps__imodel_host_done(struct pps__imodel *m, struct pps_err *err)
{
    (void)err;
    for (size_t i = m->first_proc; i < m->n_procs; i++) {
        struct pps__im_proc *p = &m->procs[i];
        pps__sort_inplace(p->iters, p->n_iters, sizeof(*p->iters), pps__import_iter_cmp);
        for (size_t k = 0; k < p->n; k++)
            if (p->spans[k].iter < 0)
                p->spans[k].iter = iter_at(p, p->spans[k].start_ns);
    }
    /*
     * Each thread's ops by start, each with the op that was open when it started (the ops'
     * nesting): then the op open at any time is the last to start before it, or one of the
     * ops it lies in. The export comes in time order, so the sort only checks.
     */
    for (size_t i = 0; i < m->n_threads; i++) {
        struct pps__im_thread *t = &m->threads[i];
        const struct pps_span *spans = m->procs[t->proc].spans;
        pps__sort_inplace(t->ops, t->n_ops, sizeof(*t->ops), op_cmp);
        for (size_t k = 0; k < t->n_ops; k++) {
            int32_t c = (int32_t)k - 1;
            while (c >= 0 && spans[t->ops[c].span].end_ns <= t->ops[k].start)
                c = t->ops[c].parent;
            t->ops[k].parent = c;
        }
    }
    return 0;
}

/* The op open on thread t at time at (the innermost one), or NULL. */
static const struct pps_span *op_at(const struct pps__imodel *m, const struct pps__im_thread *t,
                                    int64_t at)
{
    const struct pps_span *spans = m->procs[t->proc].spans;
    size_t lo = 0, hi = t->n_ops;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->ops[mid].start <= at)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (int32_t c = (int32_t)lo - 1; c >= 0; c = t->ops[c].parent)
        if (spans[t->ops[c].span].end_ns > at)
            return &spans[t->ops[c].span];
    return NULL;
}

/*
 * NCCL's kernels are communication: a send or a receive when the op that launched it says so, or
 * its name does; a collective (or a fused send-receive outside any op) stays a kernel, schema v1
 * having no kind for it. (A send's CUPTI correlation id is no message id, and links pair sends
 * with receives by corr: file_end drops it once the launches are known.)
 */
static void nccl_kind(const struct pps__imodel *m, struct pps_span *s, const struct pps_span *op)
{
    const struct pps__im_name_info *ni = s->name_id >= 0 ? &m->info[s->name_id] : NULL;
    int kind = 0;

    if (!ni || !ni->nccl)
        return;
    if (op && (op->kind == PPS_SPAN_SEND || op->kind == PPS_SPAN_RECV))
        kind = op->kind;
    else
        kind = ni->nccl_kind;
    if (!kind)
        return;
    s->kind = (uint8_t)kind;
    s->peer = op && op->kind == kind ? op->peer : -1;
}

/*
 * The launch hash. Correlation ids count up with the calls, and the calls come in time order:
 * a hash that keeps neighbours together (the id itself, folded) makes the lookups of a table read
 * in order walk memory in order. Ids that a forged file chose to collide make long runs of
 * probes: past LAUNCH_PROBES, the process's hash mixes its bits instead, for good.
 */
#define LAUNCH_PROBES 64

static size_t launch_hash(const struct pps__im_proc *p, int64_t corr)
{
    uint64_t c = (uint64_t)corr;
    return (size_t)(p->launch_mix ? pps__idmap_hash(corr) : c ^ (c >> 29)) & (p->cap_launches - 1);
}

/* Slot of corr: its span's, or the empty one where it would go; *probes counts the steps. */
static size_t launch_slot(const struct pps__im_proc *p, int64_t corr, size_t *probes)
{
    size_t mask = p->cap_launches - 1, i = launch_hash(p, corr), n = 0;
    while (p->launches[i] != UINT32_MAX && p->spans[p->launches[i]].corr != corr) {
        i = (i + 1) & mask;
        n++;
    }
    *probes = n;
    return i;
}

/* Rebuilds the hash in cap slots (the current hash function); -1 when out of memory. */
static int launch_rehash(struct pps__im_proc *p, size_t cap)
{
    uint32_t *old = p->launches, *fresh = malloc(cap * sizeof(*fresh));
    size_t old_cap = p->cap_launches, probes;

    if (!fresh)
        return -1;
    memset(fresh, 0xff, cap * sizeof(*fresh));
    p->launches = fresh;
    p->cap_launches = cap;
    for (size_t j = 0; j < old_cap; j++)
        if (old[j] != UINT32_MAX)
            p->launches[launch_slot(p, p->spans[old[j]].corr, &probes)] = old[j];
    free(old);
    return 0;
}

/* Span k of p waits for the launch of its corr; the first span of a corr keeps the slot. At most
 * 70% full: 4 bytes a slot, so 6 to 11 bytes a span (17 while it grows). */
static int launch_wait(struct pps__im_proc *p, uint32_t k, struct pps_err *err)
{
    size_t probes;

    if ((p->n_launches + 1) * 10 > p->cap_launches * 7 &&
        launch_rehash(p, p->cap_launches ? p->cap_launches * 2 : 256) != 0)
        return nomem(err);
    size_t i = launch_slot(p, p->spans[k].corr, &probes);
    if (probes > LAUNCH_PROBES && !p->launch_mix) {
        p->launch_mix = 1;
        if (launch_rehash(p, p->cap_launches) != 0)
            return nomem(err);
        i = launch_slot(p, p->spans[k].corr, &probes);
    }
    if (p->launches[i] == UINT32_MAX) {
        p->launches[i] = k;
        p->n_launches++;
    }
    return 0;
}

int pps__imodel_device(struct pps__imodel *m, const struct pps__device_event *ev,
                       struct pps_err *err)
{
    struct pps__im_proc *p;
    struct pps_span *s;
    int32_t id;
    int rc;

    /* A row that does not say its process belongs to the file's process of unknown id. */
    if ((rc =
             proc_get(m, ev->has_proc ? ev->proc : INT64_MIN, ev->has_proc ? ev->pid : 0, &p, err)))
        return rc;
    if ((id = text_id(m, ev->string_id, ev->name, err)) < 0)
        return id;
    if ((rc = span_new(p, &s, err)))
        return rc;
    s->start_ns = ev->start;
    s->end_ns = ev->end;
    s->kind = ev->kind == PPS__DEV_KERNEL ? PPS_SPAN_KERNEL : PPS_SPAN_MEMCPY;
    s->bytes = ev->kind == PPS__DEV_KERNEL ? 0 : ev->bytes;
    s->corr = ev->corr;
    s->name_id = id;
    /* Until its launch says better: the iteration it ran in, on the rank's stage. */
    s->iter = iter_at(p, ev->start);
    nccl_kind(m, s, NULL);
    return ev->corr != 0 ? launch_wait(p, (uint32_t)(p->n - 1), err) : 0;
}

int pps__imodel_launches_pending(const struct pps__imodel *m)
{
    for (size_t i = m->first_proc; i < m->n_procs; i++)
        if (m->procs[i].n_launches)
            return 1;
    return 0;
}

/* Attributes span k of p to what was open on thread at the call's start. */
static void attribute(struct pps__imodel *m, struct pps__im_proc *p, uint32_t k, int64_t thread,
                      int64_t start)
{
    struct pps_span *s = &p->spans[k];
    const struct pps_span *op = NULL;
    int32_t ti = pps__idmap_get(&m->thread_map, thread);

    if (ti >= 0 && m->threads[ti].proc == (size_t)(p - m->procs))
        op = op_at(m, &m->threads[ti], start);
    s->rank = 1; /* launched: a later call with its corr is not its (the writer ignores rank) */
    if (op) {
        s->stage = op->stage;
        s->chunk = op->chunk;
        s->mb = op->mb;
        s->iter = op->iter;
    } else {
        s->iter = iter_at(p, start);
    }
    nccl_kind(m, s, op);
}

void pps__imodel_launch(struct pps__imodel *m, int64_t proc, int64_t thread, int64_t start,
                        int64_t corr)
{
    /* The device rows' own process, else the file's unknown one (rows without globalPid). */
    int32_t pi = pps__idmap_get(&m->proc_map, proc);
    for (int pass = 0; pass < 2; pass++, pi = pps__idmap_get(&m->proc_map, INT64_MIN)) {
        struct pps__im_proc *p;
        if (pi < 0)
            continue;
        p = &m->procs[pi];
        if (!p->n_launches)
            continue;
        size_t probes, i = launch_slot(p, corr, &probes);
        uint32_t k = p->launches[i];
        if (k == UINT32_MAX || p->spans[k].rank)
            continue;
        /* One span per corr: CUDA gives each launch its own (a forged file's others stay
         * unattributed). */
        attribute(m, p, k, thread, start);
        return;
    }
}

/*
 * Appends other's spans to p's, their names made m's. The copy goes a chunk at a time from the
 * end, other's array shrinking behind it: the two never hold all of other's spans at once.
 */
static int absorb_spans(struct pps__im_proc *p, struct pps__im_proc *o, const int32_t *remap,
                        struct pps_err *err)
{
    const size_t chunk = 65536;
    size_t base = p->n;

    if (o->n == 0)
        return 0;
    if (pps_grow((void **)&p->spans, &p->cap, p->n + o->n, sizeof(*p->spans)) != 0)
        return nomem(err);
    while (o->n > 0) {
        size_t k = o->n > chunk ? o->n - chunk : 0;
        for (size_t i = k; i < o->n; i++) {
            struct pps_span *s = &p->spans[base + i];
            *s = o->spans[i];
            if (s->name_id >= 0)
                s->name_id = remap[s->name_id];
        }
        o->n = k;
        if (k > 0 && k * 2 < o->cap) {
            struct pps_span *less = realloc(o->spans, k * sizeof(*less));
            if (less) {
                o->spans = less;
                o->cap = k;
            }
        }
    }
    return 0; /* the caller moves p->n past what came in */
}

int pps__imodel_absorb(struct pps__imodel *m, struct pps__imodel *other, int device,
                       struct pps_err *err)
{
    int32_t *remap = malloc((other->names.n ? other->names.n : 1) * sizeof(*remap));
    size_t *where = malloc((other->n_procs ? other->n_procs : 1) * sizeof(*where));
    size_t *base = malloc((other->n_procs ? other->n_procs : 1) * sizeof(*base));
    int rc = 0;

    if (!remap || !where || !base) {
        rc = nomem(err);
        goto out;
    }
    for (size_t j = 0; j < other->names.n; j++)
        if ((remap[j] = name_id(m, other->names.strs[j], err)) < 0) {
            rc = remap[j];
            goto out;
        }
    for (size_t j = 0; j < other->string_map.cap; j++)
        if (other->string_map.vals[j] >= 0 &&
            pps__idmap_get(&m->string_map, other->string_map.keys[j]) < 0 &&
            pps__idmap_put(&m->string_map, other->string_map.keys[j],
                           remap[other->string_map.vals[j]])) {
            rc = nomem(err);
            goto out;
        }
    for (size_t i = 0; i < other->n_procs; i++) {
        struct pps__im_proc *o = &other->procs[i], *p;
        if ((rc = proc_get(m, o->key, o->pid, &p, err)))
            goto out;
        where[i] = (size_t)(p - m->procs);
        base[i] = p->n;
        size_t n = o->n;
        if ((rc = absorb_spans(p, o, remap, err)))
            goto out;
        p->n += n;
        /* Device spans: other had none of the file's iterations, nor m's launch hash. */
        for (size_t k = base[i]; device && k < p->n; k++) {
            p->spans[k].iter = iter_at(p, p->spans[k].start_ns);
            if (p->spans[k].corr != 0 && (rc = launch_wait(p, (uint32_t)k, err)))
                goto out;
        }
        for (size_t k = 0; k < o->n_iters; k++)
            if ((rc = iter_mark(p, o->iters[k].start, o->iters[k].end, o->iters[k].iter, err)))
                goto out;
        for (size_t k = 0; k < o->n_tnames && p->n_tnames < MAX_TNAMES; k++) {
            if (pps_grow((void **)&p->tnames, &p->cap_tnames, p->n_tnames + 1,
                         sizeof(*p->tnames)) != 0) {
                rc = nomem(err);
                goto out;
            }
            p->tnames[p->n_tnames++] =
                (struct pps__im_tname){o->tnames[k].tid, remap[o->tnames[k].name]};
        }
        if (o->min_stage >= 0 && (p->min_stage < 0 || o->min_stage < p->min_stage))
            p->min_stage = o->min_stage;
        if (o->mpi_rank != -1)
            p->mpi_rank = p->mpi_rank == -1 || p->mpi_rank == o->mpi_rank ? o->mpi_rank : -2;
    }
    for (size_t i = 0; i < other->n_threads; i++) {
        struct pps__im_thread *o = &other->threads[i], *t;
        size_t pi = where[o->proc];
        if ((rc = thread_get(m, o->key, pi, &t, err)))
            goto out;
        if (pps_grow((void **)&t->ops, &t->cap_ops, t->n_ops + o->n_ops, sizeof(*t->ops)) != 0) {
            rc = nomem(err);
            goto out;
        }
        for (size_t k = 0; k < o->n_ops; k++)
            t->ops[t->n_ops++] = (struct pps__im_op_ref){
                o->ops[k].start, (uint32_t)(o->ops[k].span + base[o->proc]), -1};
        free(o->ops);
        o->ops = NULL;
        o->n_ops = o->cap_ops = 0;
    }
    m->skipped += other->skipped;
out:
    free(remap);
    free(where);
    free(base);
    return rc;
}

/* ---- ranks and shards --------------------------------------------------------------------- */

static int proc_cmp(const void *a, const void *b)
{
    const struct pps__im_proc *x = a, *y = b;
    if (x->file != y->file)
        return x->file < y->file ? -1 : 1;
    return (x->key > y->key) - (x->key < y->key);
}

static int proc_rank_cmp(const void *a, const void *b)
{
    const struct pps__im_proc *x = a, *y = b;
    return (x->rank > y->rank) - (x->rank < y->rank);
}

int pps__imodel_finish(struct pps__imodel *m, struct pps_err *err)
{
    unsigned char *seen = NULL;
    int by_mpi = m->n_procs > 0;

    pps__imodel_file_end(m);
    if (m->n_procs == 0)
        return pps_err_set(err, PPS_EFORMAT,
                           "nothing to import: no NVTX range, kernel or copy in %s",
                           m->n_files == 1 ? m->files[0].path : "these files");
    /* Threads are gone (file_end): the processes may move. */
    qsort(m->procs, m->n_procs, sizeof(*m->procs), proc_cmp);
    if (!(seen = calloc(MAX_RANKS, 1)))
        return nomem(err);
    for (size_t i = 0; i < m->n_procs && by_mpi; i++) {
        int r = m->procs[i].mpi_rank;
        if (r < 0 || seen[r])
            by_mpi = 0;
        else
            seen[r] = 1;
    }
    free(seen);
    for (size_t i = 0; i < m->n_procs; i++)
        m->procs[i].rank = by_mpi ? m->procs[i].mpi_rank : (int)i;
    qsort(m->procs, m->n_procs, sizeof(*m->procs), proc_rank_cmp);
    /*
     * Each file's times count from its own start: several files are put on the clock of rank
     * 0's through the wall-clock times of their starts, when every file says it. One file's
     * processes already share one clock.
     */
    int all_utc = m->n_files > 1;
    for (size_t i = 0; i < m->n_files; i++)
        all_utc &= m->files[i].has_utc;
    const struct pps__im_file *ref = &m->files[m->procs[0].file];
    for (size_t i = 0; i < m->n_files && all_utc; i++)
        m->files[i].offset_ns = m->files[i].utc_ns - ref->utc_ns;
    return 0;
}

/* The writers: threads that take the next process to write until none is left or one failed. */
struct writers {
    struct pps__imodel *m;
    const struct pps__import_out *out;
    struct pps__import_progress *pr; /* the calling thread's: only it prints */
    pthread_t caller;
    int64_t written, total; /* spans, counted atomically */
    pthread_mutex_t lock;
    size_t next;
    int rc;
    struct pps_err err;
    struct pps_import_stats st;
};

/* Counts k spans written, and says so on the caller's thread. */
static void count_written(struct writers *ws, size_t k)
{
    int64_t n = __atomic_add_fetch(&ws->written, (int64_t)k, __ATOMIC_RELAXED);
    if (ws->pr && pthread_equal(pthread_self(), ws->caller))
        pps__import_progress_writing(ws->pr, n, ws->total);
}

/*
 * Writes p's spans in the order of their start. The index on (stage, start_ns) then grows at its
 * end, a page at a time, where spans in any order would land all over it, and an index larger
 * than SQLite's cache would be read and written back a page per span. p's spans are a few runs
 * each in order (the NVTX ranges, then each device table, all in time order): they are merged
 * through batch (WRITE_BATCH spans). Too many runs (an export in no order) go as they are.
 */
static int write_spans(struct pps_store_writer *w, const struct pps__im_proc *p,
                       struct pps_span *batch, struct writers *ws, struct pps_err *err)
{
    size_t head[MAX_RUNS], end[MAX_RUNS], runs = 0, fill = 0;
    int rc;

    for (size_t i = 0; i < p->n; i++) {
        if (i > 0 && p->spans[i].start_ns >= p->spans[i - 1].start_ns)
            continue;
        if (runs == MAX_RUNS) {
            for (size_t k = 0; k < p->n; k += WRITE_BATCH) {
                size_t n = p->n - k < WRITE_BATCH ? p->n - k : WRITE_BATCH;
                if ((rc = pps_store_writer_spans(w, p->spans + k, n, err)))
                    return rc;
                count_written(ws, n);
            }
            return 0;
        }
        if (runs)
            end[runs - 1] = i;
        head[runs++] = i;
    }
    if (runs)
        end[runs - 1] = p->n;
    for (;;) {
        size_t best = runs;
        for (size_t r = 0; r < runs; r++)
            if (head[r] < end[r] &&
                (best == runs || p->spans[head[r]].start_ns < p->spans[head[best]].start_ns))
                best = r;
        if (best == runs || fill == WRITE_BATCH) {
            if (fill && (rc = pps_store_writer_spans(w, batch, fill, err)))
                return rc;
            count_written(ws, fill);
            fill = 0;
            if (best == runs)
                return 0;
        }
        batch[fill++] = p->spans[head[best]++];
    }
}

/* Writes one process's shard. map[] (one entry per model name, all -1) maps the model's name ids
 * to the shard's; it is left all -1 again. batch holds WRITE_BATCH spans. */
static int write_proc(struct pps__imodel *m, struct pps__im_proc *p, struct writers *ws,
                      int32_t *map, struct pps_span *batch, struct pps_import_stats *st,
                      struct pps_err *err)
{
    const struct pps__import_out *out = ws->out;
    const struct pps__im_file *f = &m->files[p->file];
    struct pps_store_writer *w = NULL;
    int stage = p->min_stage >= 0 ? p->min_stage : p->rank, rc;
    char key[64];

    if ((rc = pps__import_shard_open(out, p->rank, (int)m->n_procs, m->source, f->path, &w, err)))
        return rc;
    /* The writer says where it runs; the rank ran where the file says, if it does. */
    if ((rc = pps_store_writer_meta(w, "host", f->host[0] ? f->host : "unknown", err)) ||
        (rc = pps_store_writer_meta_int(w, "pid", p->pid, err)))
        goto out;
    for (int k = 0; k < 4 && f->meta_key[k]; k++)
        if (f->meta_value[k][0] &&
            (rc = pps_store_writer_meta(w, f->meta_key[k], f->meta_value[k], err)))
            goto out;
    if (p->file != m->procs[0].file && m->files[p->file].offset_ns != 0 &&
        (rc = pps_store_writer_meta_int(w, "clock_offset_start_ns", f->offset_ns, err)))
        goto out;
    for (size_t i = 0; i < p->n_tnames; i++) {
        snprintf(key, sizeof(key), "thread_name.%d", p->tnames[i].tid);
        if ((rc = pps_store_writer_meta(w, key, m->names.strs[p->tnames[i].name], err)))
            goto out;
    }
    /* The names go in one transaction: alone, each would be a commit of its own. */
    if ((rc = pps__store_writer_exec(w, "BEGIN", err)))
        goto out;
    for (size_t i = 0; i < p->n; i++) {
        struct pps_span *s = &p->spans[i];
        if (s->stage == STAGE_DEFAULT)
            s->stage = (int16_t)stage;
        if (s->name_id >= 0) {
            int32_t g = s->name_id;
            if (map[g] < 0 && (rc = pps_store_writer_name(w, m->names.strs[g], &map[g], err)))
                goto out;
            s->name_id = map[g];
        }
    }
    if ((rc = pps__store_writer_exec(w, "COMMIT", err)))
        goto out;
    if ((rc = write_spans(w, p, batch, ws, err)))
        goto out;
    rc = pps__import_shard_close(w, err);
    w = NULL;
    if (!rc) {
        st->ranks++;
        st->spans += (int64_t)p->n;
    }
out:
    pps_store_writer_close(w, 0, NULL);
    for (size_t i = 0; i < m->names.n; i++)
        map[i] = -1;
    return rc;
}

static void *writer_main(void *arg)
{
    struct writers *ws = arg;
    struct pps__imodel *m = ws->m;
    int32_t *map = malloc((m->names.n ? m->names.n : 1) * sizeof(*map));
    struct pps_span *batch = malloc(WRITE_BATCH * sizeof(*batch));
    struct pps_import_stats st = {0};
    struct pps_err err = {0};
    int rc = map && batch ? 0 : nomem(&err);

    for (size_t i = 0; map && i < m->names.n; i++)
        map[i] = -1;
    while (!rc) {
        pthread_mutex_lock(&ws->lock);
        size_t i = ws->rc ? m->n_procs : ws->next++;
        pthread_mutex_unlock(&ws->lock);
        if (i >= m->n_procs)
            break;
        struct pps__im_proc *p = &m->procs[i];
        rc = write_proc(m, p, ws, map, batch, &st, &err);
        /* What is written is no longer needed: the peak stays that of the model. */
        proc_release(p);
        p->spans = NULL;
        p->iters = NULL;
        p->tnames = NULL;
        p->launches = NULL;
        p->n = p->cap = p->n_iters = p->cap_iters = p->n_tnames = p->cap_tnames = 0;
    }
    free(map);
    free(batch);
    pthread_mutex_lock(&ws->lock);
    if (rc && !ws->rc) {
        ws->rc = rc;
        ws->err = err;
    }
    ws->st.ranks += st.ranks;
    ws->st.spans += st.spans;
    pthread_mutex_unlock(&ws->lock);
    return NULL;
}

int pps__imodel_write(struct pps__imodel *m, const struct pps__import_out *out,
                      struct pps__import_progress *pr, struct pps_import_stats *st,
                      struct pps_err *err)
{
    struct writers ws;
    pthread_t threads[MAX_WRITERS];
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    size_t n = m->n_procs < (size_t)(cpus > 0 ? cpus : 1) ? m->n_procs : (size_t)cpus, started = 0;

    /* Shards are files of their own: on several cores, several are written at once. */
    memset(&ws, 0, sizeof(ws));
    ws.m = m;
    ws.out = out;
    ws.pr = pr;
    ws.caller = pthread_self();
    for (size_t i = 0; i < m->n_procs; i++)
        ws.total += (int64_t)m->procs[i].n;
    pthread_mutex_init(&ws.lock, NULL);
    if (n > MAX_WRITERS)
        n = MAX_WRITERS;
    for (; started + 1 < n; started++)
        if (pthread_create(&threads[started], NULL, writer_main, &ws) != 0)
            break;
    writer_main(&ws); /* this thread is a writer too; with one core, the only one */
    for (size_t i = 0; i < started; i++)
        pthread_join(threads[i], NULL);
    pthread_mutex_destroy(&ws.lock);
    st->skipped += m->skipped;
    st->ranks += ws.st.ranks;
    st->spans += ws.st.spans;
    if (ws.rc && err)
        *err = ws.err;
    return ws.rc;
}
