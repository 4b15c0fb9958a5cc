/*
 * transport_nccl.c - the nccl transport (transport.h): messages between neighbouring stages
 * through NCCL, on an MPI transport for the rest. Built into libppscope_nccl.so with NCCL and the
 * CUDA runtime (transport_nccl_plugin.h); ppscope loads it (transport_nccl_load.c).
 *
 * Per neighbour n (k+1 and k-1 modulo p, one when p is 2): a communicator for what this stage
 * sends n (this stage rank 0 in it) and one for what n sends (rank 1), each with its own stream.
 * A send copies the message into a device buffer on the send stream, queues the ncclSend behind
 * it, records an event, and sends n a note of the tag and size over host; the buffer is reused
 * once its event has passed. A recv reads n's notes in order, posting an ncclRecv for each into a
 * buffer of its own (its event recorded behind it), until the note of the tag asked for comes;
 * then it waits for that event, watching NCCL for an error meanwhile, and copies the message out.
 */
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>
#include <nccl.h>

#include "pps_cuda_device.h"
#include "transport_nccl_plugin.h"

/* The host tags of the notes: a unique id (communicator set-up), then every message's. */
#define TAG_ID_ITER   0
#define TAG_NOTE_ITER 1

/* What a note carries: the message's tag and size. */
struct note {
    int32_t kind, iter, mb, vstage;
    uint64_t len;
};

/* A device buffer: in flight to a neighbour (send), or received and waiting to be asked for. */
struct slot {
    void *dev;
    size_t cap;
    cudaEvent_t ev;
    int busy;         /* send: its ncclSend may still read it */
    struct note note; /* recv: the message it holds */
};

struct peer {
    int stage;
    ncclComm_t to, from; /* what this stage sends the peer; what the peer sends */
    cudaStream_t send_s, recv_s;
    struct slot *sends; /* reused once their event has passed */
    int n_sends;
    struct slot *held; /* received, in the order the peer sent them */
    int n_held, cap_held;
};

struct nccl_t {
    struct pps_transport base;
    struct pps_transport *host;
    int device;
    struct peer peers[2];
    int n_peers;
};

static struct nccl_t *nccl_of(struct pps_transport *t)
{
    return (struct nccl_t *)(void *)t;
}

static int cuda_fail(cudaError_t e, const char *what, struct pps_err *err)
{
    (void)cudaGetLastError();
    return pps_err_set(err, e == cudaErrorMemoryAllocation ? PPS_ENOMEM : PPS_EIO,
                       "nccl transport: %s: %s (%s)", what, cudaGetErrorString(e),
                       cudaGetErrorName(e));
}

static int nccl_fail(ncclResult_t r, ncclComm_t comm, const char *what, int stage,
                     struct pps_err *err)
{
    const char *last = comm ? ncclGetLastError(comm) : NULL;
    return pps_err_set(err, r == ncclRemoteError ? PPS_EPEER : PPS_EIO,
                       "nccl transport: %s stage %d: %s%s%s", what, stage, ncclGetErrorString(r),
                       last && *last ? ": " : "", last && *last ? last : "");
}

static struct peer *peer_of(struct nccl_t *t, int stage)
{
    for (int i = 0; i < t->n_peers; i++)
        if (t->peers[i].stage == stage)
            return &t->peers[i];
    return NULL;
}

static int not_neighbour(struct nccl_t *t, const char *what, int stage, struct pps_err *err)
{
    if (stage < 0 || stage >= t->base.p)
        return pps_err_set(err, PPS_EINVAL, "nccl transport: %s stage %d is not in 0..%d", what,
                           stage, t->base.p - 1);
    return pps_err_set(err, PPS_EINVAL,
                       "nccl transport: stages %d and %d are not neighbours (only k and k+1 "
                       "modulo p exchange messages)",
                       t->base.stage, stage);
}

/* ---- buffers ------------------------------------------------------------------------------- */

/* A device buffer of at least len bytes in s, with its event (a new slot's). */
static int slot_fit(struct slot *s, size_t len, struct pps_err *err)
{
    cudaError_t e;

    if (!s->ev && (e = cudaEventCreateWithFlags(&s->ev, cudaEventDisableTiming)) != cudaSuccess)
        return cuda_fail(e, "an event", err);
    if (s->cap >= len && s->dev)
        return 0;
    if (s->dev)
        cudaFree(s->dev);
    s->dev = NULL;
    s->cap = 0;
    if ((e = cudaMalloc(&s->dev, len ? len : 1)) != cudaSuccess)
        return cuda_fail(e, "a message buffer", err);
    s->cap = len;
    return 0;
}

static void slot_free(struct slot *s)
{
    if (s->dev)
        cudaFree(s->dev);
    if (s->ev)
        cudaEventDestroy(s->ev);
    memset(s, 0, sizeof(*s));
}

/* A send slot whose last send has passed, or a new one. */
static struct slot *send_slot(struct peer *p, struct pps_err *err)
{
    struct slot *grown;

    for (int i = 0; i < p->n_sends; i++) {
        struct slot *s = &p->sends[i];
        if (s->busy && cudaEventQuery(s->ev) == cudaSuccess)
            s->busy = 0;
        if (!s->busy)
            return s;
    }
    (void)cudaGetLastError(); /* cudaErrorNotReady from the queries */
    grown = realloc(p->sends, (size_t)(p->n_sends + 1) * sizeof(*grown));
    if (!grown) {
        pps_err_set(err, PPS_ENOMEM, "nccl transport: out of memory for send buffers");
        return NULL;
    }
    p->sends = grown;
    memset(&grown[p->n_sends], 0, sizeof(*grown));
    return &grown[p->n_sends++];
}

/* ---- messages ------------------------------------------------------------------------------ */

static int nccl_send(struct pps_transport *base, int dst, const struct pps_msg_tag *tag,
                     const void *buf, size_t len, struct pps_err *err)
{
    struct nccl_t *t = nccl_of(base);
    struct pps_msg_tag note_tag = {PPS_MSG_META, TAG_NOTE_ITER, 0, 0};
    struct note n;
    struct peer *p;
    struct slot *s;
    cudaError_t e;
    ncclResult_t r;
    int rc;

    if (dst == base->stage || !tag)
        return t->host->ops->send(t->host, dst, tag, buf, len, err);
    if (!(p = peer_of(t, dst)))
        return not_neighbour(t, "destination", dst, err);
    if (!buf && len)
        return pps_err_set(err, PPS_EINVAL, "nccl transport: no buffer for %zu bytes", len);
    cudaSetDevice(t->device);
    if (!(s = send_slot(p, err)) || (rc = slot_fit(s, len, err)))
        return s ? rc : PPS_ENOMEM;
    /* From pageable memory the copy has read buf when it returns: buf is free again. */
    if (len &&
        (e = cudaMemcpyAsync(s->dev, buf, len, cudaMemcpyHostToDevice, p->send_s)) != cudaSuccess)
        return cuda_fail(e, "copying a message to the GPU", err);
    if ((r = ncclSend(s->dev, len, ncclChar, 1, p->to, p->send_s)) != ncclSuccess)
        return nccl_fail(r, p->to, "ncclSend to", dst, err);
    if ((e = cudaEventRecord(s->ev, p->send_s)) != cudaSuccess)
        return cuda_fail(e, "recording a send", err);
    s->busy = 1;
    n = (struct note){tag->kind, tag->iter, tag->mb, tag->vstage, len};
    return t->host->ops->send(t->host, dst, &note_tag, &n, sizeof(n), err);
}

static int same_tag(const struct note *n, const struct pps_msg_tag *tag)
{
    return n->kind == tag->kind && n->iter == tag->iter && n->mb == tag->mb &&
           n->vstage == tag->vstage;
}

/* Reads one note from p's stage and posts its receive. */
static int take_note(struct nccl_t *t, struct peer *p, struct pps_err *err)
{
    struct pps_msg_tag note_tag = {PPS_MSG_META, TAG_NOTE_ITER, 0, 0};
    struct note n;
    struct slot *s;
    cudaError_t e;
    ncclResult_t r;
    int rc;

    rc = t->host->ops->recv(t->host, p->stage, &note_tag, &n, sizeof(n), err);
    if (rc)
        return rc;
    if (p->n_held == p->cap_held) {
        int cap = p->cap_held ? 2 * p->cap_held : 8;
        struct slot *grown = realloc(p->held, (size_t)cap * sizeof(*grown));
        if (!grown)
            return pps_err_set(err, PPS_ENOMEM, "nccl transport: out of memory for messages");
        memset(grown + p->cap_held, 0, (size_t)(cap - p->cap_held) * sizeof(*grown));
        p->held = grown;
        p->cap_held = cap;
    }
    s = &p->held[p->n_held];
    if ((rc = slot_fit(s, (size_t)n.len, err)))
        return rc;
    s->note = n;
    if ((r = ncclRecv(s->dev, (size_t)n.len, ncclChar, 0, p->from, p->recv_s)) != ncclSuccess)
        return nccl_fail(r, p->from, "ncclRecv from", p->stage, err);
    if ((e = cudaEventRecord(s->ev, p->recv_s)) != cudaSuccess)
        return cuda_fail(e, "recording a receive", err);
    p->n_held++;
    return 0;
}

static int held_index(const struct peer *p, const struct pps_msg_tag *tag)
{
    for (int i = 0; i < p->n_held; i++)
        if (same_tag(&p->held[i].note, tag))
            return i;
    return -1;
}

/* Waits for s's receive, watching the communicator for an error (a peer gone) meanwhile. */
static int wait_held(struct peer *p, struct slot *s, struct pps_err *err)
{
    for (;;) {
        cudaError_t e = cudaEventQuery(s->ev);
        ncclResult_t async = ncclSuccess;

        if (e == cudaSuccess)
            return 0;
        if (e != cudaErrorNotReady)
            return cuda_fail(e, "waiting for a receive", err);
        if (ncclCommGetAsyncError(p->from, &async) != ncclSuccess ||
            (async != ncclSuccess && async != ncclInProgress))
            return nccl_fail(async, p->from, "a receive from", p->stage, err);
        sched_yield();
    }
}

static int nccl_recv(struct pps_transport *base, int src, const struct pps_msg_tag *tag, void *buf,
                     size_t len, struct pps_err *err)
{
    struct nccl_t *t = nccl_of(base);
    struct peer *p;
    struct slot s;
    int i, rc;
    cudaError_t e;

    if (src == base->stage || !tag)
        return t->host->ops->recv(t->host, src, tag, buf, len, err);
    if (!(p = peer_of(t, src)))
        return not_neighbour(t, "source", src, err);
    cudaSetDevice(t->device);
    while ((i = held_index(p, tag)) < 0)
        if ((rc = take_note(t, p, err)))
            return rc;
    rc = wait_held(p, &p->held[i], err);
    s = p->held[i];
    memmove(&p->held[i], &p->held[i + 1], (size_t)(p->n_held - i - 1) * sizeof(s));
    p->held[--p->n_held] = s; /* its buffer and event, kept for the next note */
    if (rc)
        return rc;
    if (s.note.len != len)
        return pps_err_set(err, PPS_EINVAL,
                           "nccl transport: the %s for microbatch %d from stage %d has %llu "
                           "bytes, not %zu (dropped)",
                           pps_msg_kind_name(tag->kind), tag->mb, src,
                           (unsigned long long)s.note.len, len);
    if (len && (e = cudaMemcpy(buf, s.dev, len, cudaMemcpyDeviceToHost)) != cudaSuccess)
        return cuda_fail(e, "copying a message from the GPU", err);
    return 0;
}

static int nccl_poll(struct pps_transport *base, int src, const struct pps_msg_tag *tag)
{
    struct pps_msg_tag note_tag = {PPS_MSG_META, TAG_NOTE_ITER, 0, 0};
    struct nccl_t *t = nccl_of(base);
    struct peer *p;
    int i;

    if (src == base->stage || !tag)
        return t->host->ops->poll(t->host, src, tag);
    if (!(p = peer_of(t, src)))
        return 1; /* recv fails at once */
    cudaSetDevice(t->device);
    while ((i = held_index(p, tag)) < 0) {
        if (!t->host->ops->poll(t->host, src, &note_tag))
            return 0;
        if (take_note(t, p, NULL))
            return 1; /* recv will fail too, and say why */
    }
    if (cudaEventQuery(p->held[i].ev) == cudaSuccess)
        return 1;
    (void)cudaGetLastError();
    return 0;
}

/* ---- the rest is the host's ------------------------------------------------------------------ */

static int nccl_allreduce_sum(struct pps_transport *t, double *x, int n, struct pps_err *err)
{
    struct pps_transport *h = nccl_of(t)->host;
    return h->ops->allreduce_sum(h, x, n, err);
}

static int nccl_barrier(struct pps_transport *t, struct pps_err *err)
{
    struct pps_transport *h = nccl_of(t)->host;
    return h->ops->barrier(h, err);
}

static int nccl_allreduce_start(struct pps_transport *t, double *x, int n, struct pps_err *err)
{
    struct pps_transport *h = nccl_of(t)->host;
    return h->ops->allreduce_start(h, x, n, err);
}

static int nccl_allreduce_test(struct pps_transport *t, struct pps_err *err)
{
    struct pps_transport *h = nccl_of(t)->host;
    return h->ops->allreduce_test(h, err);
}

static int nccl_allreduce_wait(struct pps_transport *t, struct pps_err *err)
{
    struct pps_transport *h = nccl_of(t)->host;
    return h->ops->allreduce_wait(h, err);
}

static int nccl_abort(struct pps_transport *t, const char *reason)
{
    struct pps_transport *h = nccl_of(t)->host;
    return h->ops->abort(h, reason);
}

static void peer_release(struct peer *p)
{
    for (int i = 0; i < p->n_sends; i++) {
        if (p->sends[i].busy)
            cudaEventSynchronize(p->sends[i].ev);
        slot_free(&p->sends[i]);
    }
    for (int i = 0; i < p->cap_held; i++)
        slot_free(&p->held[i]);
    free(p->sends);
    free(p->held);
    if (p->to)
        ncclCommDestroy(p->to);
    if (p->from)
        ncclCommDestroy(p->from);
    if (p->send_s)
        cudaStreamDestroy(p->send_s);
    if (p->recv_s)
        cudaStreamDestroy(p->recv_s);
    memset(p, 0, sizeof(*p));
}

/* Waits for what this stage sent to be delivered (NCCL's sends end when received), then frees. */
static void nccl_free(struct pps_transport *base)
{
    struct nccl_t *t;

    if (!base)
        return;
    t = nccl_of(base);
    cudaSetDevice(t->device);
    for (int i = 0; i < t->n_peers; i++)
        peer_release(&t->peers[i]);
    if (t->host)
        t->host->ops->free(t->host);
    free(t);
}

static const struct pps_transport_ops nccl_ops = {
    .name = "nccl",
    .send = nccl_send,
    .recv = nccl_recv,
    .poll = nccl_poll,
    .allreduce_sum = nccl_allreduce_sum,
    .barrier = nccl_barrier,
    .free = nccl_free,
    .allreduce_start = nccl_allreduce_start,
    .allreduce_test = nccl_allreduce_test,
    .allreduce_wait = nccl_allreduce_wait,
    .abort = nccl_abort,
};

/* ---- set-up ---------------------------------------------------------------------------------- */

static int pick_device(int local_rank, int *device, struct pps_err *err)
{
    const char *env = NULL;
    int count = 0, set;
    cudaError_t e = cudaGetDeviceCount(&count);

    if (e != cudaSuccess || count <= 0) {
        (void)cudaGetLastError();
        return pps_err_set(err, PPS_ENOENT, "nccl transport: no CUDA device on this machine (%s)",
                           e == cudaSuccess ? "none found" : cudaGetErrorString(e));
    }
    set = pps_cuda_device_env(count, device, &env);
    if (set < 0)
        return pps_err_set(err, PPS_EINVAL,
                           "nccl transport: PPS_CUDA_DEVICE=%s is not a device of this machine "
                           "(0..%d)",
                           env, count - 1);
    if (set > 0)
        return 0;
    *device = (local_rank < 0 ? 0 : local_rank) % count;
    return 0;
}

/* The communicators with every neighbour: ids out to each (this stage makes the one it sends
 * on), ids in from each, then all initialised in one group (each needs its peer to join). */
static int connect_peers(struct nccl_t *t, struct pps_err *err)
{
    struct pps_msg_tag id_tag = {PPS_MSG_META, TAG_ID_ITER, 0, 0};
    ncclUniqueId out[2], in[2];
    ncclResult_t r;
    cudaError_t e;
    int rc;

    for (int i = 0; i < t->n_peers; i++) {
        if ((r = ncclGetUniqueId(&out[i])) != ncclSuccess)
            return nccl_fail(r, NULL, "a unique id for", t->peers[i].stage, err);
        rc = t->host->ops->send(t->host, t->peers[i].stage, &id_tag, &out[i], sizeof(out[i]), err);
        if (rc)
            return rc;
    }
    for (int i = 0; i < t->n_peers; i++) {
        rc = t->host->ops->recv(t->host, t->peers[i].stage, &id_tag, &in[i], sizeof(in[i]), err);
        if (rc)
            return rc;
    }
    for (int i = 0; i < t->n_peers; i++) {
        struct peer *p = &t->peers[i];
        if ((e = cudaStreamCreateWithFlags(&p->send_s, cudaStreamNonBlocking)) != cudaSuccess ||
            (e = cudaStreamCreateWithFlags(&p->recv_s, cudaStreamNonBlocking)) != cudaSuccess)
            return cuda_fail(e, "a stream", err);
    }
    if ((r = ncclGroupStart()) != ncclSuccess)
        return nccl_fail(r, NULL, "a group for", t->peers[0].stage, err);
    for (int i = 0; i < t->n_peers; i++) {
        struct peer *p = &t->peers[i];
        r = ncclCommInitRank(&p->to, 2, out[i], 0);
        if (r == ncclSuccess)
            r = ncclCommInitRank(&p->from, 2, in[i], 1);
        if (r != ncclSuccess) {
            (void)ncclGroupEnd();
            return nccl_fail(r, NULL, "communicators with", p->stage, err);
        }
    }
    if ((r = ncclGroupEnd()) != ncclSuccess)
        return pps_err_set(err, PPS_EIO,
                           "nccl transport: stage %d could not connect to its neighbours on "
                           "device %d: %s (NCCL needs a GPU of its own per rank; on one GPU use "
                           "--transport threads)",
                           t->base.stage, t->device, ncclGetErrorString(r));
    return 0;
}

static int transport_new(struct pps_transport *host, int local_rank, int *device_out,
                         struct pps_transport **out, struct pps_err *err)
{
    struct nccl_t *t = NULL;
    int rc, s, p;
    cudaError_t e;

    *out = NULL;
    if (!host) /* nothing to release */
        return pps_err_set(err, PPS_EINVAL, "nccl transport: no host transport");
    t = calloc(1, sizeof(*t));
    if (!t) {
        host->ops->free(host);
        return pps_err_set(err, PPS_ENOMEM, "nccl transport: out of memory");
    }
    t->base.ops = &nccl_ops;
    t->base.stage = s = host->stage;
    t->base.p = p = host->p;
    t->host = host;
    if ((rc = pick_device(local_rank, &t->device, err)))
        goto fail;
    if ((e = cudaSetDevice(t->device)) != cudaSuccess) {
        rc = cuda_fail(e, "choosing the device", err);
        goto fail;
    }
    if (p > 1) {
        t->peers[t->n_peers++].stage = (s + 1) % p;
        if ((s + p - 1) % p != (s + 1) % p)
            t->peers[t->n_peers++].stage = (s + p - 1) % p;
    }
    if (t->n_peers && (rc = connect_peers(t, err)))
        goto fail;
    if (device_out)
        *device_out = t->device;
    *out = &t->base;
    return 0;
fail:
    nccl_free(&t->base);
    return rc;
}

const struct pps__nccl_plugin *pps_nccl_plugin(unsigned abi)
{
    static const struct pps__nccl_plugin plugin = {transport_new};
    return abi == PPS__NCCL_PLUGIN_ABI ? &plugin : NULL;
}
