/*
 * kineto_link.c - the Kineto importer's second half (kineto_int.h): what a file's records mean
 * together, worked out once the file has ended.
 *
 *  - Communication. gloo and NCCL record each send and receive as a work range from its post to
 *    its completion ("gloo:recv"), inside the call that posted it (c10d::recv_, whose arguments
 *    name the peer when shapes were recorded). Inside a "PP:" SEND or RECV action, the range
 *    lengthens the action to the transfer's end; inside "Forward i" / "Backward i" of a
 *    single-stage schedule, it is a SEND or RECV of that microbatch, to or from the neighbouring
 *    rank; elsewhere, one of its own.
 *  - Waiting for input. PyTorch's schedules wait for a microbatch's input inside the op that
 *    needs it (the F of a "PP:" schedule waits for the receive of RECV_F, "Forward i" for the
 *    receive it posts itself), so an op whose input arrives while it runs starts, here, when
 *    the input arrived: before that it only waited. Without this a stage that waits would look
 *    busy, and the bubble would vanish into the ops.
 *  - Device spans. A kernel or copy belongs to the runtime call with its correlation id, and
 *    through it to the op open on the launching thread: its iteration, microbatch and chunk.
 *    NCCL's kernels are communication: a SEND or RECV when the op that launched them says so, or
 *    their name does (pps__import_kernel_is_comm, the rule nsys's imports follow too).
 *  - Iterations. A span is in the step ("ProfilerStep#N") that holds its start, a device span in
 *    its launch's.
 *  - Stages. PyTorch numbers virtual stages: with p ranks, a looped schedule puts stage s on rank
 *    s mod p, a V-shaped one on rank s or 2p-1-s. Which of the two the labels fit is found from
 *    the stages the rank ran; the rank is the stage, s / p the chunk, and peers are mapped the
 *    same way. Labels that fit neither keep their stages as they are (docs/nvtx.md's default).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "import_int.h"
#include "kineto_int.h"
#include "storage_int.h"

/* ---- what the events add as they come ------------------------------------------------------ */

int pps__kfile_vstage(struct pps__kfile *f, int vstage, struct pps_err *err)
{
    size_t lo = 0, hi = f->n_vstages;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (f->vstages[mid] < vstage)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < f->n_vstages && f->vstages[lo] == vstage)
        return 0;
    if (pps_grow((void **)&f->vstages, &f->cap_vstages, f->n_vstages + 1, sizeof(*f->vstages)) != 0)
        return pps_err_set(err, PPS_ENOMEM, "%s: out of memory", f->path);
    memmove(f->vstages + lo + 1, f->vstages + lo, (f->n_vstages - lo) * sizeof(*f->vstages));
    f->vstages[lo] = vstage;
    f->n_vstages++;
    return 0;
}

int pps__kfile_step(struct pps__kfile *f, int64_t start, int64_t end, int iter, struct pps_err *err)
{
    if (iter < 0)
        return 0;
    if (pps_grow((void **)&f->steps, &f->cap_steps, f->n_steps + 1, sizeof(*f->steps)) != 0)
        return pps_err_set(err, PPS_ENOMEM, "%s: out of memory", f->path);
    f->steps[f->n_steps++] = (struct pps__import_iter){start, end, iter};
    return 0;
}

/* ---- lookups by time ---------------------------------------------------------------------- */

/* The iteration of the step holding t (the steps sorted: in pps__kfile_link), -1. */
static int32_t iter_at(const struct pps__kfile *f, int64_t t)
{
    return pps__import_iter_at(f->steps, f->n_steps, t);
}

/* A record of the kind a lookup finds (labelled ops, c10d calls, work ranges), by thread and
 * start, with the one that was open when it started. */
struct ref {
    int64_t start, end;
    int32_t thread;
    uint32_t rec;
    int32_t parent;
};

struct refs {
    struct ref *v;
    size_t n, cap;
};

static int ref_cmp(const void *a, const void *b)
{
    const struct ref *x = a, *y = b;
    if (x->thread != y->thread)
        return x->thread < y->thread ? -1 : 1;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return (x->rec > y->rec) - (x->rec < y->rec);
}

static int refs_add(struct refs *rs, const struct pps__krec *r, uint32_t i)
{
    if (pps_grow((void **)&rs->v, &rs->cap, rs->n + 1, sizeof(*rs->v)) != 0)
        return -1;
    rs->v[rs->n++] = (struct ref){r->start, r->end, r->thread, i, -1};
    return 0;
}

/* Sorts, and links each ref to the one of its thread still open when it started. */
static void refs_index(struct refs *rs)
{
    pps__sort_inplace(rs->v, rs->n, sizeof(*rs->v), ref_cmp);
    for (size_t k = 0; k < rs->n; k++) {
        int32_t c = (int32_t)k - 1;
        while (c >= 0 && rs->v[c].thread == rs->v[k].thread && rs->v[c].end <= rs->v[k].start)
            c = rs->v[c].parent;
        rs->v[k].parent = c >= 0 && rs->v[c].thread == rs->v[k].thread ? c : -1;
    }
}

/* The innermost ref open on thread at t (start <= t < end), as an index into rs, or -1. */
static int32_t ref_at(const struct refs *rs, int32_t thread, int64_t t)
{
    size_t lo = 0, hi = rs->n;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const struct ref *m = &rs->v[mid];
        if (m->thread < thread || (m->thread == thread && m->start <= t))
            lo = mid + 1;
        else
            hi = mid;
    }
    for (int32_t c = (int32_t)lo - 1; c >= 0 && rs->v[c].thread == thread; c = rs->v[c].parent)
        if (rs->v[c].end > t)
            return c;
    return -1;
}

/* ---- the layout of virtual stages ---------------------------------------------------------- */

static void find_layout(struct pps__kfile *f)
{
    int p = (int)f->world, loop = 1, v = 1;

    f->p = p;
    f->layout = PPS__KL_AS_IS;
    f->stage = (int16_t)f->rank;
    if (f->n_vstages == 0)
        return;
    for (size_t i = 0; i < f->n_vstages; i++) {
        int s = f->vstages[i];
        loop &= s % p == f->rank;
        v &= s < 2 * p && (s < p ? s : 2 * p - 1 - s) == f->rank;
    }
    if (p >= 2 && (loop || v)) {
        /* Where both fit (one chunk a rank, or an odd p), the looped order is PyTorch's
         * default. */
        f->layout = loop ? PPS__KL_LOOP : PPS__KL_V;
        snprintf(f->layout_note, sizeof(f->layout_note), "%s, p=%d, v=%zu", loop ? "loop" : "v", p,
                 f->n_vstages);
        return;
    }
    f->stage = (int16_t)f->vstages[0];
    snprintf(f->layout_note, sizeof(f->layout_note), "as labelled, p=%d", p);
}

/* The rank (stage) of virtual stage s, -1 when it is none. */
static int32_t rank_of(const struct pps__kfile *f, int32_t s)
{
    int p = f->p;
    if (s < 0)
        return -1;
    switch (f->layout) {
    case PPS__KL_LOOP:
        return s % p;
    case PPS__KL_V:
        return s < p ? s : s < 2 * p ? 2 * p - 1 - s : -1;
    default:
        return s <= INT16_MAX ? s : -1;
    }
}

/* ---- linking ------------------------------------------------------------------------------ */

/* A receive's key for the op waiting on it: virtual stage, microbatch, direction. */
static int64_t recv_key(int32_t vstage, int32_t mb, int backward)
{
    return ((int64_t)vstage << 33) | ((int64_t)mb << 1) | backward;
}

/* Communication ranges: merged into their op, or spans of their own (see the file's comment).
 * ext[] and trim[] (one per label) collect what the ops get once every range is seen. */
static void link_comm(struct pps__kfile *f, const struct refs *labels, const struct refs *calls,
                      const struct refs *comm, int64_t *ext, int64_t *trim)
{
    for (size_t i = 0; i < comm->n; i++) {
        struct pps__krec *c = &f->recs[comm->v[i].rec];
        int32_t li = ref_at(labels, c->thread, c->start);
        int32_t ci = ref_at(calls, c->thread, c->start);
        int32_t hint = ci >= 0 ? f->recs[calls->v[ci].rec].peer : -1;
        struct pps__krec *op = li >= 0 ? &f->recs[labels->v[li].rec] : NULL;

        if (op && op->role == PPS__KR_OP && op->kind == c->kind) {
            if (c->end > ext[li])
                ext[li] = c->end;
            c->kind = 0; /* the op's transfer, now part of it */
            continue;
        }
        c->flags |= PPS__KF_PEER_RANK;
        c->peer = hint;
        if (!op || op->role != PPS__KR_SINGLE)
            continue;
        /* Forward i receives from the rank before and sends to the one after; Backward i the
         * other way round. */
        int fwd = op->kind == PPS_SPAN_F, to_next = (c->kind == PPS_SPAN_SEND) == fwd;
        int32_t peer = (int32_t)f->rank + (to_next ? 1 : -1);
        c->mb = op->mb;
        if (c->peer < 0)
            c->peer = peer >= 0 && peer < f->world ? peer : -1;
        if (c->kind == PPS_SPAN_RECV && c->start >= op->start && c->end > op->start &&
            c->end < op->end && c->end > trim[li])
            trim[li] = c->end;
    }
}

/* Device spans: iteration, microbatch and chunk of their launch's op; NCCL's as communication. */
static int link_device(struct pps__kfile *f, const struct refs *labels, struct pps_err *err)
{
    struct pps__idmap launches = {0};
    int rc = 0;

    for (size_t i = 0; i < f->n_recs; i++)
        if (f->recs[i].role == PPS__KR_LAUNCH && f->recs[i].kind &&
            pps__idmap_put(&launches, f->recs[i].corr, (int32_t)i) != 0) {
            rc = pps_err_set(err, PPS_ENOMEM, "%s: out of memory", f->path);
            goto out;
        }
    for (size_t i = 0; i < f->n_recs; i++) {
        struct pps__krec *d = &f->recs[i];
        const struct pps__krec *op = NULL;
        int32_t li = d->corr ? pps__idmap_get(&launches, d->corr) : -1;
        int64_t at = d->start;

        if (d->role != PPS__KR_DEVICE || !d->kind)
            continue;
        if (li >= 0) {
            const struct pps__krec *l = &f->recs[li];
            int32_t oi = ref_at(labels, l->thread, l->start);
            at = l->start;
            op = oi >= 0 ? &f->recs[labels->v[oi].rec] : NULL;
        }
        d->iter = iter_at(f, at);
        if (op) {
            d->mb = op->mb;
            d->vstage = op->vstage;
        }
        const struct pps__kname *k = &f->kn[d->name];
        if (d->kind != PPS_SPAN_KERNEL || k->cls != PPS__KN_NCCL)
            continue;
        /* Its correlation id is no message id (links pair SENDs and RECVs by corr): dropped. */
        if (op && (op->kind == PPS_SPAN_SEND || op->kind == PPS_SPAN_RECV)) {
            d->kind = op->kind;
            d->peer = op->peer;
            d->flags = op->flags;
            d->corr = 0;
        } else if (k->nccl_kind) {
            d->kind = (uint8_t)k->nccl_kind;
            d->corr = 0;
        }
    }
out:
    pps__idmap_release(&launches);
    return rc;
}

/* Multi-stage schedules: an op that its RECV's transfer ends inside started when it ended. */
static int link_waits(struct pps__kfile *f, const struct refs *labels, int64_t *trim,
                      struct pps_err *err)
{
    struct pps__idmap last = {0};
    int rc = 0;

    for (size_t i = 0; i < labels->n; i++) {
        const struct pps__krec *r = &f->recs[labels->v[i].rec];
        if (r->role != PPS__KR_OP || r->vstage < 0 || r->mb < 0)
            continue;
        if (r->kind == PPS_SPAN_RECV && r->peer >= 0) {
            /* From the stage before: activations, for an F; from the one after: gradients. */
            if (pps__idmap_put(&last, recv_key(r->vstage, r->mb, r->peer > r->vstage),
                               (int32_t)i) != 0) {
                rc = pps_err_set(err, PPS_ENOMEM, "%s: out of memory", f->path);
                break;
            }
            continue;
        }
        int backward = r->kind == PPS_SPAN_B || r->kind == PPS_SPAN_BW;
        if (r->kind != PPS_SPAN_F && !backward)
            continue;
        int32_t ri = pps__idmap_get(&last, recv_key(r->vstage, r->mb, backward));
        if (ri < 0)
            continue;
        int64_t arrived = f->recs[labels->v[ri].rec].end;
        if (arrived > r->start && arrived < r->end && arrived > trim[i])
            trim[i] = arrived;
    }
    pps__idmap_release(&last);
    return rc;
}

int pps__kfile_link(struct pps__kfile *f, struct pps_err *err)
{
    struct refs labels = {0}, calls = {0}, comm = {0};
    int64_t *ext = NULL, *trim = NULL;
    int rc = 0;

    if (f->n_recs > INT32_MAX)
        return pps_err_set(err, PPS_EFORMAT, "%s: more than %d spans", f->path, INT32_MAX);
    find_layout(f);
    pps__sort_inplace(f->steps, f->n_steps, sizeof(*f->steps), pps__import_iter_cmp);
    for (size_t i = 0; i < f->n_recs; i++) {
        const struct pps__krec *r = &f->recs[i];
        struct refs *rs = r->role == PPS__KR_OP || r->role == PPS__KR_SINGLE ? &labels
                          : r->role == PPS__KR_C10D                          ? &calls
                          : r->role == PPS__KR_COMM                          ? &comm
                                                                             : NULL;
        if (rs && r->kind && refs_add(rs, r, (uint32_t)i) != 0)
            goto nomem;
    }
    refs_index(&labels);
    refs_index(&calls);
    refs_index(&comm);
    if (!(ext = calloc(labels.n + 1, sizeof(*ext))) ||
        !(trim = calloc(labels.n + 1, sizeof(*trim))))
        goto nomem;
    link_comm(f, &labels, &calls, &comm, ext, trim);
    if ((rc = link_device(f, &labels, err)))
        goto out;
    for (size_t i = 0; i < f->n_recs; i++)
        if (f->recs[i].role != PPS__KR_DEVICE)
            f->recs[i].iter = iter_at(f, f->recs[i].start);
    /* Now the ops take their transfers' ends, then lose the time they waited. */
    for (size_t i = 0; i < labels.n; i++) {
        struct pps__krec *r = &f->recs[labels.v[i].rec];
        if (ext[i] > r->end)
            r->end = ext[i];
    }
    if ((rc = link_waits(f, &labels, trim, err)))
        goto out;
    for (size_t i = 0; i < labels.n; i++) {
        struct pps__krec *r = &f->recs[labels.v[i].rec];
        if (trim[i] > r->start && trim[i] <= r->end)
            r->start = trim[i];
    }
    goto out;
nomem:
    rc = pps_err_set(err, PPS_ENOMEM, "%s: out of memory", f->path);
out:
    free(labels.v);
    free(calls.v);
    free(comm.v);
    free(ext);
    free(trim);
    return rc;
}

int pps__kfile_span(const struct pps__kfile *f, const struct pps__krec *r, struct pps_span *s,
                    struct pps_err *err)
{
    int pipeline = r->kind >= PPS_SPAN_F && r->kind <= PPS_SPAN_OPT;

    memset(s, 0, sizeof(*s));
    if (__builtin_add_overflow(r->start, f->base_ns, &s->start_ns) ||
        __builtin_add_overflow(r->end, f->base_ns, &s->end_ns) || s->start_ns < -PPS__TIME_LIMIT ||
        s->start_ns > PPS__TIME_LIMIT || s->end_ns < -PPS__TIME_LIMIT ||
        s->end_ns > PPS__TIME_LIMIT)
        return pps_err_set(err, PPS_EFORMAT,
                           "%s: not a Kineto trace: times out of range with baseTimeNanoseconds "
                           "%" PRId64,
                           f->path, f->base_ns);
    s->kind = r->kind;
    s->clock = PPS_CLOCK_HOST; /* Kineto puts device times on the host's clock itself */
    s->iter = r->iter;
    s->mb = r->mb;
    s->bytes = r->bytes;
    s->corr = r->corr;
    s->name_id = pipeline ? -1 : r->name;
    s->stage = f->stage;
    s->chunk = 0;
    if (r->vstage >= 0) {
        if (f->layout == PPS__KL_AS_IS)
            s->stage = r->vstage;
        else
            s->chunk = (int16_t)(r->vstage / f->p);
    }
    s->peer = r->flags & PPS__KF_PEER_RANK ? r->peer : rank_of(f, r->peer);
    if (r->kind != PPS_SPAN_SEND && r->kind != PPS_SPAN_RECV && r->kind != PPS_SPAN_WAIT)
        s->peer = -1;
    return 0;
}
