/*
 * fake_nccl.c - NCCL's point-to-point calls and the CUDA runtime calls of the NCCL transport,
 * on host memory (nccl.h here says what the model keeps). One lock for everything: the stages of
 * test_transport_nccl are threads of one process.
 */
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "nccl.h"

enum { OP_SEND, OP_RECV };

struct op {
    int type;
    void *buf; /* a receive's destination, a send's source: read only when it pairs */
    size_t len;
    int done;
    struct op *next; /* in its communicator's queue */
};

struct fake_stream {
    struct op **ops; /* in the order they were queued; a copy is done at once and not kept */
    int n, cap;
};

struct fake_event {
    cudaStream_t s; /* NULL: never recorded, passed */
    int upto;       /* ops[0 .. upto-1] must be done */
};

struct shared {
    uint64_t id;
    int refs;
    struct op *sends[2], *recvs[2]; /* queued by rank r, oldest first */
    struct shared *next;
};

struct fake_comm {
    struct shared *sh;
    int rank;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct shared *comms;
static uint64_t next_id = 1;
static int mismatches;

static void push(struct op **q, struct op *o)
{
    while (*q)
        q = &(*q)->next;
    *q = o;
}

/* Pairs every send with the receive at the head of the other rank's queue, in order. */
static void progress(void)
{
    for (struct shared *c = comms; c; c = c->next)
        for (int r = 0; r < 2; r++)
            while (c->sends[r] && c->recvs[1 - r]) {
                struct op *s = c->sends[r], *v = c->recvs[1 - r];
                c->sends[r] = s->next;
                c->recvs[1 - r] = v->next;
                if (s->len == v->len)
                    memcpy(v->buf, s->buf, s->len);
                else
                    mismatches++;
                s->done = v->done = 1;
            }
}

static int add_op(cudaStream_t s, struct op *o)
{
    if (s->n == s->cap) {
        int cap = s->cap ? 2 * s->cap : 16;
        struct op **g = realloc(s->ops, (size_t)cap * sizeof(*g));
        if (!g)
            return -1;
        s->ops = g;
        s->cap = cap;
    }
    s->ops[s->n++] = o;
    return 0;
}

static int passed(cudaEvent_t e)
{
    if (!e->s)
        return 1;
    for (int i = 0; i < e->upto; i++)
        if (!e->s->ops[i]->done)
            return 0;
    return 1;
}

/* ---- the CUDA runtime ------------------------------------------------------------------------ */

int fake_cuda_devices = 1;

cudaError_t cudaGetDeviceCount(int *count)
{
    *count = fake_cuda_devices;
    return cudaSuccess;
}

cudaError_t cudaSetDevice(int device)
{
    (void)device;
    return cudaSuccess;
}

cudaError_t cudaGetLastError(void)
{
    return cudaSuccess;
}

const char *cudaGetErrorString(cudaError_t e)
{
    return e == cudaErrorMemoryAllocation ? "out of memory" : "fake error";
}

const char *cudaGetErrorName(cudaError_t e)
{
    return e == cudaErrorMemoryAllocation ? "cudaErrorMemoryAllocation" : "cudaErrorFake";
}

cudaError_t cudaMalloc(void **p, size_t bytes)
{
    *p = calloc(1, bytes);
    return *p ? cudaSuccess : cudaErrorMemoryAllocation;
}

cudaError_t cudaFree(void *p)
{
    free(p);
    return cudaSuccess;
}

cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t bytes, enum cudaMemcpyKind kind,
                            cudaStream_t s)
{
    (void)kind;
    (void)s;
    memcpy(dst, src, bytes);
    return cudaSuccess;
}

cudaError_t cudaMemcpy(void *dst, const void *src, size_t bytes, enum cudaMemcpyKind kind)
{
    (void)kind;
    memcpy(dst, src, bytes);
    return cudaSuccess;
}

cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned flags)
{
    (void)flags;
    *s = calloc(1, sizeof(**s));
    return *s ? cudaSuccess : cudaErrorMemoryAllocation;
}

cudaError_t cudaStreamDestroy(cudaStream_t s)
{
    for (int i = 0; i < s->n; i++)
        free(s->ops[i]);
    free(s->ops);
    free(s);
    return cudaSuccess;
}

cudaError_t cudaEventCreateWithFlags(cudaEvent_t *e, unsigned flags)
{
    (void)flags;
    *e = calloc(1, sizeof(**e));
    return *e ? cudaSuccess : cudaErrorMemoryAllocation;
}

cudaError_t cudaEventDestroy(cudaEvent_t e)
{
    free(e);
    return cudaSuccess;
}

cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s)
{
    pthread_mutex_lock(&lock);
    e->s = s;
    e->upto = s->n;
    pthread_mutex_unlock(&lock);
    return cudaSuccess;
}

cudaError_t cudaEventQuery(cudaEvent_t e)
{
    int ok;
    pthread_mutex_lock(&lock);
    progress();
    ok = passed(e);
    pthread_mutex_unlock(&lock);
    return ok ? cudaSuccess : cudaErrorNotReady;
}

cudaError_t cudaEventSynchronize(cudaEvent_t e)
{
    while (cudaEventQuery(e) != cudaSuccess)
        sched_yield();
    return cudaSuccess;
}

/* ---- NCCL ------------------------------------------------------------------------------------ */

ncclResult_t ncclGetUniqueId(ncclUniqueId *id)
{
    memset(id, 0, sizeof(*id));
    pthread_mutex_lock(&lock);
    memcpy(id->internal, &next_id, sizeof(next_id));
    next_id++;
    pthread_mutex_unlock(&lock);
    return ncclSuccess;
}

ncclResult_t ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId id, int rank)
{
    struct shared *c;
    uint64_t key;

    if (nranks != 2 || rank < 0 || rank > 1)
        return ncclInvalidUsage; /* the transport's communicators are pairs */
    memcpy(&key, id.internal, sizeof(key));
    pthread_mutex_lock(&lock);
    for (c = comms; c && c->id != key; c = c->next)
        ;
    if (!c && (c = calloc(1, sizeof(*c)))) {
        c->id = key;
        c->next = comms;
        comms = c;
    }
    if (c)
        c->refs++;
    pthread_mutex_unlock(&lock);
    if (!c || !(*comm = malloc(sizeof(**comm))))
        return ncclInvalidUsage;
    (*comm)->sh = c;
    (*comm)->rank = rank;
    return ncclSuccess;
}

ncclResult_t ncclCommDestroy(ncclComm_t comm)
{
    struct shared *c = comm->sh;

    pthread_mutex_lock(&lock);
    /* What this rank queued and never paired is abandoned (its stream frees it). */
    c->sends[comm->rank] = c->recvs[comm->rank] = NULL;
    if (--c->refs == 0) {
        struct shared **p = &comms;
        while (*p != c)
            p = &(*p)->next;
        *p = c->next;
        free(c);
    }
    pthread_mutex_unlock(&lock);
    free(comm);
    return ncclSuccess;
}

ncclResult_t ncclGroupStart(void)
{
    return ncclSuccess;
}

ncclResult_t ncclGroupEnd(void)
{
    return ncclSuccess;
}

static ncclResult_t queue(int type, void *buf, size_t count, int peer, ncclComm_t comm,
                          cudaStream_t s)
{
    struct op *o;

    if (peer != 1 - comm->rank)
        return ncclInvalidUsage;
    if (!(o = calloc(1, sizeof(*o))))
        return ncclInvalidUsage;
    o->type = type;
    o->buf = buf;
    o->len = count;
    pthread_mutex_lock(&lock);
    if (add_op(s, o)) {
        pthread_mutex_unlock(&lock);
        free(o);
        return ncclInvalidUsage;
    }
    push(type == OP_SEND ? &comm->sh->sends[comm->rank] : &comm->sh->recvs[comm->rank], o);
    pthread_mutex_unlock(&lock);
    return ncclSuccess;
}

ncclResult_t ncclSend(const void *buf, size_t count, ncclDataType_t type, int peer, ncclComm_t comm,
                      cudaStream_t s)
{
    (void)type;
    return queue(OP_SEND, (void *)(uintptr_t)buf, count, peer, comm, s);
}

ncclResult_t ncclRecv(void *buf, size_t count, ncclDataType_t type, int peer, ncclComm_t comm,
                      cudaStream_t s)
{
    (void)type;
    return queue(OP_RECV, buf, count, peer, comm, s);
}

ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t *async)
{
    (void)comm;
    *async = ncclSuccess;
    return ncclSuccess;
}

const char *ncclGetErrorString(ncclResult_t r)
{
    return r == ncclSuccess ? "no error" : "fake NCCL error";
}

const char *ncclGetLastError(ncclComm_t comm)
{
    (void)comm;
    return "";
}

int fake_nccl_size_mismatches(void)
{
    int n;
    pthread_mutex_lock(&lock);
    n = mismatches;
    pthread_mutex_unlock(&lock);
    return n;
}

int fake_nccl_unpaired(void)
{
    int n = 0;
    pthread_mutex_lock(&lock);
    for (struct shared *c = comms; c; c = c->next)
        for (int r = 0; r < 2; r++)
            for (struct op *o = c->sends[r]; o; o = o->next)
                n++;
    pthread_mutex_unlock(&lock);
    return n;
}
