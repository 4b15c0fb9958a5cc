/*
 * transport_mpi.c - the MPI transport: one process per stage, stage = rank in a duplicate of
 * the caller's communicator. transport.h documents the contract, the tag encoding and what a
 * failed rank does; this file keeps it:
 *
 *   - send copies the payload and MPI_Isend's the copy. The requests and their copies wait in
 *     arrays, completed lazily by MPI_Testsome whenever their number has doubled since the last
 *     sweep (so a sweep costs O(1) per send on average) and all at free by MPI_Waitall. No send
 *     waits for its receive, whatever the eager limit: above it MPI sends the data when the
 *     receiver posts the matching receive, from the copy that is still ours.
 *   - recv is MPI_Recv on (src, tag): MPI matches by source and tag whatever arrived first, and
 *     does not let equal tags from one source overtake each other.
 *   - allreduce_sum gathers to rank 0, which sums in rank order and broadcasts, because
 *     MPI_Allreduce promises no order of summation (its result may change with the algorithm MPI
 *     picks for a message size, and between ranks). allreduce_start does the same without
 *     blocking: MPI_Igather, then, once allreduce_test or _wait sees it complete, the sum on rank 0
 *     and MPI_Ibcast, so every rank posts the two collectives in the same order.
 *
 * Built without MPI, only the constructor and the abort exist, and say so.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "pps_config.h"
#include "transport.h"

#ifdef PPS_HAVE_MPI

#include <mpi.h>

struct pps__mpi {
    struct pps_transport base;
    MPI_Comm comm;
    int m, vstages;
    int mb_bits, vs_bits, iter_bits; /* the tag's fields, from the low bits: iter, mb, vs, kind */
    int tag_ub;

    /* sends in flight: request, private copy of the payload, destination */
    MPI_Request *reqs;
    void **bufs;
    int *dsts;
    int *idx;             /* MPI_Testsome's indices */
    MPI_Status *statuses; /* and statuses */
    int npend, cap, sweep_at;

    double *gathered; /* rank 0: p * n values for allreduce_sum */
    size_t gathered_cap;

    /* The non-blocking sum: gathered to rank 0 (NB_GATHER), then broadcast (NB_BCAST). */
    int nb_state;
    MPI_Request nb_req;
    double *nb_x;
    int nb_n;
};

enum { NB_NONE = 0, NB_GATHER, NB_BCAST };

static const struct pps_transport_ops mpi_ops;

#define KIND_BITS   2
#define FIRST_SWEEP 64

/* Bits needed to hold 0..count-1. */
static int bits_for(int count)
{
    int b = 0;

    while (b < 31 && (1LL << b) < count)
        b++;
    return b;
}

/* MPI's reason for rc, in buf. */
static const char *mpi_reason(int rc, char *buf, size_t size)
{
    char s[MPI_MAX_ERROR_STRING];
    int len = 0;

    if (MPI_Error_string(rc, s, &len) != MPI_SUCCESS || len <= 0)
        snprintf(buf, size, "MPI error %d", rc);
    else
        snprintf(buf, size, "%.*s", len, s);
    return buf;
}

/* An MPI failure in an exchange with peer: PPS_EPEER naming it. */
static int peer_error(struct pps_err *err, int rc, int peer, const char *what)
{
    char why[MPI_MAX_ERROR_STRING + 32];

    return pps_err_set(err, PPS_EPEER, "stage %d (rank %d) failed: %s (during %s)", peer, peer,
                       mpi_reason(rc, why, sizeof(why)), what);
}

/* An MPI failure in a collective: PPS_EPEER, naming no one (MPI does not say who). */
static int coll_error(struct pps_err *err, int rc, const char *what)
{
    char why[MPI_MAX_ERROR_STRING + 32];

    return pps_err_set(err, PPS_EPEER, "a stage failed during %s: %s", what,
                       mpi_reason(rc, why, sizeof(why)));
}

/* The MPI tag of (peer, tag) in *out, after checking both. */
static int encode(const struct pps__mpi *t, int peer, const char *what,
                  const struct pps_msg_tag *tag, size_t len, int *out, struct pps_err *err)
{
    unsigned long v;

    *out = 0; /* written on every path: a caller never reads a tag that was not made */
    if (peer < 0 || peer >= t->base.p)
        return pps_err_set(err, PPS_EINVAL, "mpi transport: %s stage %d is not in 0..%d", what,
                           peer, t->base.p - 1);
    if (!tag)
        return pps_err_set(err, PPS_EINVAL, "mpi transport: no message tag");
    if (tag->kind < PPS_MSG_ACT || tag->kind > PPS_MSG_META)
        return pps_err_set(err, PPS_EINVAL, "mpi transport: %d is not a message kind", tag->kind);
    if (tag->iter < 0 || tag->mb < 0 || tag->vstage < 0)
        return pps_err_set(err, PPS_EINVAL,
                           "mpi transport: negative tag field (iter %d, mb %d, vstage %d)",
                           tag->iter, tag->mb, tag->vstage);
    if (tag->mb >= t->m || tag->vstage >= t->vstages)
        return pps_err_set(err, PPS_EINVAL,
                           "mpi transport: %s for microbatch %d, virtual stage %d is outside the "
                           "run's m=%d, vstages=%d that the MPI tag was sized for",
                           pps_msg_kind_name(tag->kind), tag->mb, tag->vstage, t->m, t->vstages);
    if (len > INT_MAX)
        return pps_err_set(err, PPS_EINVAL,
                           "mpi transport: a %zu-byte %s is over the %d bytes of one MPI message",
                           len, pps_msg_kind_name(tag->kind), INT_MAX);
    v = (unsigned long)tag->iter & ((1UL << t->iter_bits) - 1);
    v |= (unsigned long)tag->mb << t->iter_bits;
    v |= (unsigned long)tag->vstage << (t->iter_bits + t->mb_bits);
    v |= (unsigned long)tag->kind << (t->iter_bits + t->mb_bits + t->vs_bits);
    *out = (int)v;
    return 0;
}

/* Completes what it can of the sends in flight and frees their copies. */
static int sweep(struct pps__mpi *t, struct pps_err *err)
{
    int done = 0, rc, keep = 0, bad_rc = MPI_SUCCESS, bad_dst = -1;

    if (t->npend == 0)
        return 0;
    rc = MPI_Testsome(t->npend, t->reqs, &done, t->idx, t->statuses);
    if (rc == MPI_ERR_IN_STATUS) {
        for (int i = 0; i < done && bad_dst < 0; i++) {
            if (t->statuses[i].MPI_ERROR != MPI_SUCCESS) {
                bad_rc = t->statuses[i].MPI_ERROR;
                bad_dst = t->dsts[t->idx[i]];
            }
        }
    } else if (rc != MPI_SUCCESS) {
        return coll_error(err, rc, "a sweep of the sends in flight");
    }
    /* Completed requests are MPI_REQUEST_NULL now: free their copies and keep the others, in
     * order. A request that failed stays, with its copy, for free to wait on. */
    for (int i = 0; i < t->npend; i++) {
        if (t->reqs[i] == MPI_REQUEST_NULL) {
            free(t->bufs[i]);
            continue;
        }
        t->reqs[keep] = t->reqs[i];
        t->bufs[keep] = t->bufs[i];
        t->dsts[keep] = t->dsts[i];
        keep++;
    }
    t->npend = keep;
    t->sweep_at = t->npend * 2 > FIRST_SWEEP ? t->npend * 2 : FIRST_SWEEP;
    if (bad_dst >= 0)
        return peer_error(err, bad_rc, bad_dst, "a send");
    if (rc != MPI_SUCCESS)
        return coll_error(err, rc, "a sweep of the sends in flight");
    return 0;
}

/* Replaces *arr by itself grown to cap items of elem bytes; -1, *arr untouched, out of memory. */
static int regrow(void **arr, int cap, size_t elem)
{
    void *p = realloc(*arr, (size_t)cap * elem);

    if (!p)
        return -1;
    *arr = p;
    return 0;
}

static int grow_pending(struct pps__mpi *t, struct pps_err *err)
{
    int cap = t->cap ? t->cap * 2 : FIRST_SWEEP;

    if (t->npend < t->cap)
        return 0;
    if (t->cap > INT_MAX / 2)
        return pps_err_set(err, PPS_ENOMEM, "mpi transport: too many sends in flight");
    /* Each array is replaced as soon as it grows, so a failure halfway leaves them consistent. */
    if (regrow((void **)&t->reqs, cap, sizeof(*t->reqs)) ||
        regrow((void **)&t->bufs, cap, sizeof(*t->bufs)) ||
        regrow((void **)&t->dsts, cap, sizeof(*t->dsts)) ||
        regrow((void **)&t->idx, cap, sizeof(*t->idx)) ||
        regrow((void **)&t->statuses, cap, sizeof(*t->statuses)))
        return pps_err_set(err, PPS_ENOMEM, "mpi transport: out of memory for %d sends in flight",
                           cap);
    t->cap = cap;
    return 0;
}

static int mpi_send(struct pps_transport *base, int dst, const struct pps_msg_tag *tag,
                    const void *buf, size_t len, struct pps_err *err)
{
    struct pps__mpi *t = (struct pps__mpi *)base;
    void *copy = NULL;
    int mtag, rc;

    rc = encode(t, dst, "destination", tag, len, &mtag, err);
    if (!rc && len > 0 && !buf)
        rc = pps_err_set(err, PPS_EINVAL, "mpi transport: no buffer for %zu bytes", len);
    if (!rc && t->npend >= t->sweep_at)
        rc = sweep(t, err);
    if (!rc)
        rc = grow_pending(t, err);
    if (rc)
        goto out;
    copy = malloc(len ? len : 1);
    if (!copy) {
        rc = pps_err_set(err, PPS_ENOMEM, "mpi transport: out of memory for a %zu-byte %s", len,
                         pps_msg_kind_name(tag->kind));
        goto out;
    }
    if (len > 0)
        memcpy(copy, buf, len);
    rc = MPI_Isend(copy, (int)len, MPI_BYTE, dst, mtag, t->comm, &t->reqs[t->npend]);
    if (rc != MPI_SUCCESS) {
        rc = peer_error(err, rc, dst, "a send");
        goto out;
    }
    t->bufs[t->npend] = copy;
    t->dsts[t->npend] = dst;
    t->npend++;
    copy = NULL;
out:
    free(copy);
    return rc;
}

static int mpi_recv(struct pps_transport *base, int src, const struct pps_msg_tag *tag, void *buf,
                    size_t len, struct pps_err *err)
{
    struct pps__mpi *t = (struct pps__mpi *)base;
    MPI_Status st;
    int mtag, rc, count = 0;

    rc = encode(t, src, "source", tag, len, &mtag, err);
    if (!rc && len > 0 && !buf)
        rc = pps_err_set(err, PPS_EINVAL, "mpi transport: no buffer for %zu bytes", len);
    if (!rc && t->npend >= t->sweep_at)
        rc = sweep(t, err);
    if (rc)
        return rc;
    rc = MPI_Recv(buf, (int)len, MPI_BYTE, src, mtag, t->comm, &st);
    if (rc != MPI_SUCCESS) {
        int cls = MPI_ERR_OTHER;
        MPI_Error_class(rc, &cls);
        if (cls == MPI_ERR_TRUNCATE)
            return pps_err_set(err, PPS_EINVAL,
                               "the %s of iteration %d, microbatch %d for virtual stage %d from "
                               "stage %d is larger than the %zu bytes stage %d expected",
                               pps_msg_kind_name(tag->kind), tag->iter, tag->mb, tag->vstage, src,
                               len, base->stage);
        return peer_error(err, rc, src, "a receive");
    }
    rc = MPI_Get_count(&st, MPI_BYTE, &count);
    if (rc != MPI_SUCCESS)
        return peer_error(err, rc, src, "a receive");
    if ((size_t)count != len)
        return pps_err_set(err, PPS_EINVAL,
                           "the %s of iteration %d, microbatch %d for virtual stage %d from stage "
                           "%d is %d bytes, stage %d expected %zu",
                           pps_msg_kind_name(tag->kind), tag->iter, tag->mb, tag->vstage, src,
                           count, base->stage, len);
    return 0;
}

static int mpi_poll(struct pps_transport *base, int src, const struct pps_msg_tag *tag)
{
    struct pps__mpi *t = (struct pps__mpi *)base;
    int mtag, flag = 0;

    if (encode(t, src, "source", tag, 0, &mtag, NULL))
        return 1;
    if (MPI_Iprobe(src, mtag, t->comm, &flag, MPI_STATUS_IGNORE) != MPI_SUCCESS)
        return 1;
    return flag != 0;
}

/* Rank 0: room to gather p * n values. */
static int gather_room(struct pps__mpi *t, int n, struct pps_err *err)
{
    int p = t->base.p;

    if (t->base.stage == 0 && (size_t)p * (size_t)n > t->gathered_cap) {
        double *g = realloc(t->gathered, (size_t)p * (size_t)n * sizeof(*g));
        /* Rank 0 cannot refuse alone: the others are already in the gather. Say so and let the
         * caller abort the job. */
        if (!g)
            return pps_err_set(err, PPS_ENOMEM,
                               "mpi transport: out of memory to gather %d x %d values", p, n);
        t->gathered = g;
        t->gathered_cap = (size_t)p * (size_t)n;
    }
    return 0;
}

/* Rank 0: the gathered values summed in rank order into x. */
static void gather_sum(struct pps__mpi *t, double *x, int n)
{
    if (t->base.stage != 0)
        return;
    for (int i = 0; i < n; i++) {
        double sum = t->gathered[i];
        for (int r = 1; r < t->base.p; r++)
            sum += t->gathered[(size_t)r * (size_t)n + (size_t)i];
        x[i] = sum;
    }
}

static int mpi_allreduce_sum(struct pps_transport *base, double *x, int n, struct pps_err *err)
{
    struct pps__mpi *t = (struct pps__mpi *)base;
    int p = base->p, rc;

    if (n < 0 || (n > 0 && !x))
        return pps_err_set(err, PPS_EINVAL, "mpi transport: allreduce_sum of %d values%s", n,
                           x ? "" : " from no buffer");
    if (t->nb_state != NB_NONE)
        return pps_err_set(err, PPS_EINVAL,
                           "mpi transport: allreduce_sum while a sum is in flight");
    if (p == 1 || n == 0)
        return 0;
    if ((rc = gather_room(t, n, err)))
        return rc;
    rc = MPI_Gather(x, n, MPI_DOUBLE, t->gathered, n, MPI_DOUBLE, 0, t->comm);
    if (rc != MPI_SUCCESS)
        return coll_error(err, rc, "allreduce_sum");
    gather_sum(t, x, n);
    rc = MPI_Bcast(x, n, MPI_DOUBLE, 0, t->comm);
    if (rc != MPI_SUCCESS)
        return coll_error(err, rc, "allreduce_sum");
    return 0;
}

static int mpi_barrier(struct pps_transport *base, struct pps_err *err)
{
    struct pps__mpi *t = (struct pps__mpi *)base;
    int rc;

    if (t->nb_state != NB_NONE)
        return pps_err_set(err, PPS_EINVAL, "mpi transport: barrier while a sum is in flight");
    rc = MPI_Barrier(t->comm);

    if (rc != MPI_SUCCESS)
        return coll_error(err, rc, "barrier");
    return 0;
}

/* ---- the non-blocking sum: MPI_Igather to rank 0, the sum there, MPI_Ibcast ---------------- */

static int mpi_allreduce_start(struct pps_transport *base, double *x, int n, struct pps_err *err)
{
    struct pps__mpi *t = (struct pps__mpi *)base;
    int rc;

    if (n < 0 || (n > 0 && !x))
        return pps_err_set(err, PPS_EINVAL, "mpi transport: allreduce_start of %d values%s", n,
                           x ? "" : " from no buffer");
    if (t->nb_state != NB_NONE)
        return pps_err_set(err, PPS_EINVAL, "mpi transport: a sum is already in flight");
    t->nb_x = x;
    t->nb_n = n;
    if (base->p == 1 || n == 0) {
        /* Nothing to exchange: a completed request, so that test and wait need no special case. */
        t->nb_req = MPI_REQUEST_NULL;
        t->nb_state = NB_BCAST;
        return 0;
    }
    if ((rc = gather_room(t, n, err)))
        return rc;
    rc = MPI_Igather(x, n, MPI_DOUBLE, t->gathered, n, MPI_DOUBLE, 0, t->comm, &t->nb_req);
    if (rc != MPI_SUCCESS)
        return coll_error(err, rc, "allreduce_start");
    t->nb_state = NB_GATHER;
    return 0;
}

/* Waits for (block) or tests the request of the sum in flight; *flag says whether it completed
 * (when testing). An error abandons the sum. */
static int nb_wait(struct pps__mpi *t, int block, int *flag, struct pps_err *err)
{
    int rc = block ? MPI_Wait(&t->nb_req, MPI_STATUS_IGNORE)
                   : MPI_Test(&t->nb_req, flag, MPI_STATUS_IGNORE);

    if (rc != MPI_SUCCESS) {
        t->nb_state = NB_NONE;
        return coll_error(err, rc, "allreduce_start");
    }
    return 0;
}

/* Moves the sum in flight along: waiting (block) or testing each request. 1 when it has
 * completed, 0 when not yet, or the error (the sum is then abandoned: its request leaks). */
static int nb_progress(struct pps__mpi *t, int block, struct pps_err *err)
{
    int rc, flag = 0;

    if (t->nb_state == NB_NONE)
        return pps_err_set(err, PPS_EINVAL, "mpi transport: no sum in flight");
    if (t->nb_state == NB_GATHER) {
        if ((rc = nb_wait(t, block, &flag, err)))
            return rc;
        if (!block && !flag)
            return 0;
        gather_sum(t, t->nb_x, t->nb_n);
        rc = MPI_Ibcast(t->nb_x, t->nb_n, MPI_DOUBLE, 0, t->comm, &t->nb_req);
        if (rc != MPI_SUCCESS) {
            t->nb_state = NB_NONE;
            return coll_error(err, rc, "allreduce_start");
        }
        t->nb_state = NB_BCAST;
    }
    flag = 0;
    if ((rc = nb_wait(t, block, &flag, err)))
        return rc;
    if (!block && !flag)
        return 0;
    t->nb_state = NB_NONE;
    return 1;
}

static int mpi_allreduce_test(struct pps_transport *base, struct pps_err *err)
{
    return nb_progress((struct pps__mpi *)base, 0, err);
}

static int mpi_allreduce_wait(struct pps_transport *base, struct pps_err *err)
{
    int rc = nb_progress((struct pps__mpi *)base, 1, err);

    return rc < 0 ? rc : 0;
}

static int mpi_abort_op(struct pps_transport *base, const char *reason)
{
    return pps_transport_mpi_abort(base, reason);
}

static void mpi_free(struct pps_transport *base)
{
    struct pps__mpi *t = (struct pps__mpi *)base;
    int finalized = 1, leak = 0;

    if (!t)
        return;
    /* A sum still in flight can neither be completed alone nor freed (MPI forbids freeing a
     * collective's request), and MPI may still write its buffers: leave all of it, and the
     * communicator it runs on, to the abort that follows. */
    if (t->nb_state != NB_NONE)
        return;
    if (MPI_Finalized(&finalized) == MPI_SUCCESS && !finalized) {
        /* A failed wait may leave a copy in MPI's hands: leak the copies rather than free one
         * that MPI still reads (the job is failing anyway). */
        if (t->npend > 0 && MPI_Waitall(t->npend, t->reqs, MPI_STATUSES_IGNORE) != MPI_SUCCESS)
            leak = 1;
        (void)MPI_Comm_free(&t->comm); /* nothing to tell a caller that is going away */
    }
    for (int i = 0; i < t->npend && !leak; i++)
        free(t->bufs[i]);
    free(t->reqs);
    free(t->bufs);
    free(t->dsts);
    free(t->idx);
    free(t->statuses);
    free(t->gathered);
    free(t);
}

static const struct pps_transport_ops mpi_ops = {
    .name = "mpi",
    .send = mpi_send,
    .recv = mpi_recv,
    .poll = mpi_poll,
    .allreduce_sum = mpi_allreduce_sum,
    .barrier = mpi_barrier,
    .free = mpi_free,
    .allreduce_start = mpi_allreduce_start,
    .allreduce_test = mpi_allreduce_test,
    .allreduce_wait = mpi_allreduce_wait,
    .abort = mpi_abort_op,
};

int pps_transport_mpi_new(const void *comm, int m, int vstages, struct pps_transport **out,
                          struct pps_err *err)
{
    struct pps__mpi *t = NULL;
    MPI_Comm parent = comm ? *(const MPI_Comm *)comm : MPI_COMM_WORLD;
    int inited = 0, finalized = 0, flag = 0, tag_bits = 0, need, rc, dup = 0;
    int *ub = NULL;
    char why[MPI_MAX_ERROR_STRING + 32];

    if (!out)
        return pps_err_set(err, PPS_EINVAL, "mpi transport: nowhere to put the transport");
    *out = NULL;
    if (m < 1 || vstages < 1)
        return pps_err_set(err, PPS_EINVAL,
                           "mpi transport: m and vstages must be >= 1, got m=%d, vstages=%d", m,
                           vstages);
    if (MPI_Initialized(&inited) != MPI_SUCCESS || !inited ||
        MPI_Finalized(&finalized) != MPI_SUCCESS || finalized)
        return pps_err_set(err, PPS_EINVAL, "mpi transport: MPI is %s",
                           inited ? "already finalized" : "not initialized (call MPI_Init first)");

    t = calloc(1, sizeof(*t));
    if (!t)
        return pps_err_set(err, PPS_ENOMEM, "mpi transport: out of memory");
    t->comm = MPI_COMM_NULL;
    rc = MPI_Comm_dup(parent, &t->comm);
    if (rc != MPI_SUCCESS) {
        rc = pps_err_set(err, PPS_EIO, "mpi transport: MPI_Comm_dup: %s",
                         mpi_reason(rc, why, sizeof(why)));
        goto out;
    }
    dup = 1;
    rc = MPI_Comm_set_errhandler(t->comm, MPI_ERRORS_RETURN);
    if (rc == MPI_SUCCESS)
        rc = MPI_Comm_rank(t->comm, &t->base.stage);
    if (rc == MPI_SUCCESS)
        rc = MPI_Comm_size(t->comm, &t->base.p);
    if (rc == MPI_SUCCESS)
        rc = MPI_Comm_get_attr(t->comm, MPI_TAG_UB, &ub, &flag);
    if (rc != MPI_SUCCESS) {
        rc = pps_err_set(err, PPS_EIO, "mpi transport: cannot set up the communicator: %s",
                         mpi_reason(rc, why, sizeof(why)));
        goto out;
    }
    /* The standard promises MPI_TAG_UB >= 32767; tags use the bits below it: 0..2^bits-1. */
    t->tag_ub = flag && ub ? *ub : 32767;
    while (tag_bits < 31 && ((1LL << (tag_bits + 1)) - 1) <= (long long)t->tag_ub)
        tag_bits++;
    t->m = m;
    t->vstages = vstages;
    t->mb_bits = bits_for(m);
    t->vs_bits = bits_for(vstages);
    need = KIND_BITS + t->mb_bits + t->vs_bits + 1;
    if (need > tag_bits) {
        rc = pps_err_set(err, PPS_EINVAL,
                         "mpi transport: m=%d and vstages=%d need %d tag bits (%d for the kind, "
                         "%d for the microbatch, %d for the virtual stage, 1 for the iteration); "
                         "MPI_TAG_UB=%d allows %d",
                         m, vstages, need, KIND_BITS, t->mb_bits, t->vs_bits, t->tag_ub, tag_bits);
        goto out;
    }
    t->iter_bits = tag_bits - KIND_BITS - t->mb_bits - t->vs_bits;
    t->sweep_at = FIRST_SWEEP;
    t->base.ops = &mpi_ops;
    *out = &t->base;
    t = NULL;
    rc = 0;
out:
    if (t) {
        if (dup)
            (void)MPI_Comm_free(&t->comm); /* the error being reported matters more */
        free(t);
    }
    return rc;
}

int pps_transport_mpi_abort(struct pps_transport *base, const char *reason)
{
    struct pps__mpi *t = (struct pps__mpi *)base;

    if (!base || base->ops != &mpi_ops)
        return PPS_EINVAL;
    fprintf(stderr, "ppscope: stage %d (rank %d) failed: %s; aborting the MPI job\n", base->stage,
            base->stage, reason && *reason ? reason : "no reason given");
    fflush(stderr);
    MPI_Abort(t->comm, 1);
    return PPS_EIO;
}

#else /* !PPS_HAVE_MPI */

int pps_transport_mpi_new(const void *comm, int m, int vstages, struct pps_transport **out,
                          struct pps_err *err)
{
    if (out)
        *out = NULL;
    return pps_err_set(err, PPS_EINVAL,
                       "mpi transport: ppscope was built without MPI (configure with "
                       "-DPPS_WITH_MPI=ON and an MPI installed)");
}

int pps_transport_mpi_abort(struct pps_transport *t, const char *reason)
{
    return PPS_EINVAL;
}

#endif
