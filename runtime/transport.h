/*
 * transport.h - moving activations and gradients between pipeline stages.
 *
 * One interface, three implementations: threads (every stage a thread of one process; the
 * default, no launcher), mpi (one process per stage under mpirun or srun) and nccl (one process
 * per GPU under MPI, the messages through NCCL). The executor sends a stage's output to the next
 * stage and its input gradient to the previous one, and receives what its schedule's next action
 * needs. docs/transports.md is the guide; this header is the reference.
 *
 * Rules every transport keeps, so that any valid schedule runs without deadlock:
 *   - send never blocks on the receiver: the message is copied (or handed over) and the call
 *     returns; the transport buffers as much as the schedule has in flight.
 *   - recv blocks until the message with exactly that tag from that peer has arrived, whatever
 *     else arrived first (messages are matched by tag, not by order). Two messages with the same
 *     tag from the same peer are received in the order they were sent.
 *   - a peer that dies makes recv fail with PPS_EPEER naming it, instead of waiting forever
 *     (what "dies" can mean, and be noticed, differs per transport: see each constructor).
 * Timing: the executor, not the transport, records SEND/RECV/WAIT spans around these calls.
 *
 * Errors: 0 or a negative PPS_E... code with a one-line reason in err (which may be NULL).
 * PPS_EINVAL: a bad argument (a stage out of range, a negative tag field, a message whose size
 * is not the one recv asked for: it is consumed and dropped); PPS_EPEER: another stage failed or
 * left, the reason names it ("stage 2 failed: out of memory"); PPS_ENOMEM; PPS_EIO: the threads
 * library or MPI failed in a way that names no peer.
 *
 * Threads: an endpoint (one struct pps_transport) belongs to one stage and is used by one thread
 * at a time; different endpoints may be used from different threads at once.
 */
#ifndef PPS_TRANSPORT_H
#define PPS_TRANSPORT_H

#include <stddef.h>
#include <stdint.h>

#include "pps_error.h"

/* What a message carries; part of its tag. */
enum pps_msg_kind {
    PPS_MSG_ACT = 0,  /* activation, forward: virtual stage k -> k+1 */
    PPS_MSG_GRAD = 1, /* input gradient, backward: virtual stage k -> k-1 */
    PPS_MSG_CTRL = 2, /* control (optimizer validation, shutdown) */
    PPS_MSG_META = 3, /* a transport's own bookkeeping on the transport it is built on (nccl) */
};

/* What a message of kind k carries, in words for messages ("activation"); "message" for a kind
 * that is not one of enum pps_msg_kind. */
static inline const char *pps_msg_kind_name(int kind)
{
    switch (kind) {
    case PPS_MSG_ACT:
        return "activation";
    case PPS_MSG_GRAD:
        return "gradient";
    case PPS_MSG_CTRL:
        return "control";
    case PPS_MSG_META:
        return "transport note";
    }
    return "message";
}

/* A message's identity: a receiver asks for exactly this. Every field is >= 0 and kind is one of
 * enum pps_msg_kind; the MPI transport has further limits (pps_transport_mpi_new()). */
struct pps_msg_tag {
    int kind;   /* enum pps_msg_kind */
    int iter;   /* iteration */
    int mb;     /* microbatch */
    int vstage; /* the virtual stage the message is FOR (pps_schedule_vstage()) */
};

struct pps_transport;

struct pps_transport_ops {
    const char *name; /* "threads", "mpi" */
    /* Copies len bytes to stage dst (which may be this stage itself); never waits for the
     * receiver. buf may be NULL when len is 0. */
    int (*send)(struct pps_transport *t, int dst, const struct pps_msg_tag *tag, const void *buf,
                size_t len, struct pps_err *err);
    /* Waits for the message tag from stage src and copies it into buf (exactly len bytes: a
     * message of another size fails with PPS_EINVAL and is dropped). */
    int (*recv)(struct pps_transport *t, int src, const struct pps_msg_tag *tag, void *buf,
                size_t len, struct pps_err *err);
    /* 1 when recv would not block (the message has arrived, or recv would fail at once: a bad
     * argument, a failed peer), else 0. */
    int (*poll)(struct pps_transport *t, int src, const struct pps_msg_tag *tag);
    /* Sum of x[0..n-1] over all stages, on every stage (the optimizer's global gradient norm).
     * Every stage calls it with the same n. Summed in stage order 0, 1, ..., p-1, element by
     * element, so the result is deterministic and bitwise identical on every stage. */
    int (*allreduce_sum)(struct pps_transport *t, double *x, int n, struct pps_err *err);
    /* Every stage waits for every other. */
    int (*barrier)(struct pps_transport *t, struct pps_err *err);
    /* Releases this endpoint; see each constructor for what it waits for. NULL-safe. */
    void (*free)(struct pps_transport *t);

    /* ---- non-blocking sum and abort (post-validation and failure, executor.h) ----
     *
     * allreduce_start begins what allreduce_sum does, with the same rules (every stage, same n,
     * summed in stage order, bitwise identical everywhere), and returns without waiting for the
     * other stages; x must stay allocated and untouched until the sum completes, when it holds
     * the result. One sum per endpoint may be in flight: starting another, or calling
     * allreduce_sum or barrier, before it completes is PPS_EINVAL. Stages start their collectives
     * (blocking or not) in the same order. allreduce_test returns 1 when the sum in flight has
     * completed (and is no longer in flight), 0 when it has not yet, or a negative PPS_E... code
     * (a failed or departed stage: PPS_EPEER; no sum in flight: PPS_EINVAL), after which the sum
     * is abandoned. Under MPI, calling it now and then is what moves the sum along (rank 0 sums
     * when it sees the gather complete). allreduce_wait waits for the completion: 0 or the same
     * errors. An endpoint released with a sum in flight abandons it (threads), or leaks it (MPI,
     * where that happens only on the way to an abort). */
    int (*allreduce_start)(struct pps_transport *t, double *x, int n, struct pps_err *err);
    int (*allreduce_test)(struct pps_transport *t, struct pps_err *err);
    int (*allreduce_wait)(struct pps_transport *t, struct pps_err *err);
    /* This stage failed for reason: makes every other stage stop, as each transport can (threads:
     * pps_transport_threads_abort() blaming this stage; MPI: pps_transport_mpi_abort(), which
     * does not return). Returns 0 once the others have been told, or a negative PPS_E... code. */
    int (*abort)(struct pps_transport *t, const char *reason);
};

struct pps_transport {
    const struct pps_transport_ops *ops;
    int stage; /* this endpoint's stage (rank) */
    int p;     /* stages */
};

/* ---- threads: every stage a thread of one process ------------------------------------------
 *
 * A hub holds one mailbox per stage (a mutex, a condition variable and a hash of the messages
 * that arrived, keyed by source and tag) and hands out p endpoints, one per stage thread. send
 * copies the payload into a new message in the destination's mailbox; recv waits on its own
 * mailbox's condition variable until the message is there, copies it out and frees it.
 *
 * Failure. A stage thread cannot die alone, so a failing stage says so: the executor calls
 * pps_transport_threads_abort() with the stage and the reason, and from then on every call on
 * every endpoint (those already waiting included) fails with PPS_EPEER and "stage S failed:
 * REASON", so the other stages stop instead of waiting forever. A stage that releases its
 * endpoint (ops->free) has left: a recv waiting for a message from it that has not arrived, a
 * send to it, and any barrier or allreduce it has not reached then fail with PPS_EPEER.
 *
 * Lifetime. The hub and its endpoints live until the hub and every endpoint have been released
 * (pps_transport_threads_free() and ops->free on each endpoint, in any order, each once), so
 * the executor may release an endpoint at the end of its stage thread and the hub after joining
 * them, or the hub at once after handing the endpoints out.
 */
struct pps_transport_threads;

/* Creates a hub for p >= 1 stages in *out. */
int pps_transport_threads_new(int p, struct pps_transport_threads **out, struct pps_err *err);

/* Stage stage's endpoint (the same one on every call), or NULL when stage is out of range. */
struct pps_transport *pps_transport_threads_endpoint(struct pps_transport_threads *hub, int stage);

/* Marks the run failed, blaming stage (0..p-1, or -1 when no stage is to blame: "run aborted:
 * REASON"), and wakes every waiter. The first abort's reason is the one every later failure
 * reports. Returns 0, or PPS_EINVAL for a bad hub or stage, or PPS_EIO if a lock failed. */
int pps_transport_threads_abort(struct pps_transport_threads *hub, int stage, const char *reason);

/* Releases the creator's reference to the hub. NULL-safe. */
void pps_transport_threads_free(struct pps_transport_threads *hub);

/* ---- mpi: one process per stage ------------------------------------------------------------
 *
 * Stage = rank in a duplicate of comm (a `const MPI_Comm *`, or NULL for MPI_COMM_WORLD), p = its
 * size. MPI must be initialised by the caller, every rank calls the constructor (collective: it
 * duplicates the communicator), and one thread at a time uses the transport (MPI_THREAD_FUNNELED
 * if that is the main thread, MPI_THREAD_SERIALIZED otherwise). The duplicate returns errors
 * (MPI_ERRORS_RETURN) instead of aborting on them.
 *
 * send: MPI_Isend from a private copy of the buffer, completed lazily (MPI_Testsome when the
 * number in flight doubles) and all at free, so no send waits for its receive, whatever MPI's
 * eager limit. recv: MPI_Recv on (src, tag). allreduce_sum: gathered to rank 0, summed there in
 * rank order, broadcast (MPI_Allreduce promises no order). barrier: MPI_Barrier.
 *
 * Tags. A message's MPI tag packs, from the low bits: the iteration modulo 2^I, the microbatch
 * (ceil(log2 m) bits), the virtual stage (ceil(log2 vstages) bits) and the kind (2 bits), in the
 * bits that MPI_TAG_UB allows (31 with Open MPI and MPICH; 15 is the least the standard
 * promises). I is what is left and must be at least 1; since a sender sends a (kind, mb,
 * vstage) of iteration i before that of any later iteration and MPI does not let messages with
 * equal tags overtake, the iteration wrapping around never confuses a valid schedule. The
 * constructor fails with PPS_EINVAL ("m=... and vstages=... need ... tag bits; MPI_TAG_UB=...
 * allows ...") when m and vstages do not fit, and send/recv with PPS_EINVAL for an mb >= m or a
 * vstage >= vstages, whatever the kind. A message is at most INT_MAX bytes.
 *
 * Failure. A rank that fails should call pps_transport_mpi_abort(), which takes the whole job
 * down (MPI_Abort): the others would otherwise wait forever for its messages. A rank that dies
 * without it (a crash, exit() before MPI_Finalize) makes Open MPI's launcher (mpirun, v4) kill
 * the job, so the others end with it rather than hang; an MPI built with fault tolerance
 * (ULFM) instead returns the failure from the waiting call, and then recv and send fail with
 * PPS_EPEER "stage N (rank N) failed: <MPI's error string>" and the collectives with PPS_EPEER
 * "a stage failed during barrier: ..." (MPI does not say which). A rank that calls MPI_Finalize
 * while another still waits for its messages leaves that one waiting: that is a schedule bug.
 *
 * ops->free waits until every message this rank sent has been delivered (received, or taken
 * into MPI's buffers), then frees the duplicate communicator; call it before MPI_Finalize.
 *
 * Built without MPI (no PPS_HAVE_MPI), the constructor fails with PPS_EINVAL and says so.
 */

/* Creates the MPI transport for a run of m >= 1 microbatches and vstages >= 1 virtual stages
 * (p * v) in *out. */
int pps_transport_mpi_new(const void *comm, int m, int vstages, struct pps_transport **out,
                          struct pps_err *err);

/* Prints "ppscope: stage N (rank N) failed: REASON; aborting the MPI job" on stderr and calls
 * MPI_Abort on the transport's communicator, which ends every rank of the job (exit status 1).
 * Returns only when it cannot: PPS_EINVAL when t is not an MPI transport, PPS_EIO when MPI_Abort
 * returned. */
int pps_transport_mpi_abort(struct pps_transport *t, const char *reason);

/* ---- nccl: one process per GPU, the messages through NCCL ----------------------------------
 *
 * Built on an MPI transport (host, which it takes): one rank per stage and per GPU, as for mpi;
 * the collectives, barrier and abort are host's, and so is a message a stage sends itself. A
 * message to another stage goes through NCCL: a communicator of two ranks per direction between
 * neighbouring stages (k and k+1 modulo p, the only pairs a schedule's messages join),
 * bootstrapped by sending NCCL's unique ids over host, each with a send and a receive stream of
 * its own on the GPU.
 *
 * NCCL matches a pair's messages in the order they are sent, not by tag, so the sender tells the
 * receiver over host (a PPS_MSG_META note: the tag and the size) each message it queues, in
 * order; the receiver posts NCCL receives in that order into buffers of its own and hands out
 * the one asked for when it is asked, which keeps transport.h's rule that recv matches by tag.
 *
 * The executor's buffers are host memory (compute.h), so a send copies the message to the GPU and
 * queues an ncclSend on its send stream, never waiting for the receiver (the device buffer is
 * reused once the send's event has passed); a recv waits for the NCCL receive to land and copies
 * it to the host. The time NCCL's kernels spend waiting for the peer is in the receive's WAIT
 * span on the host, and in the device's NCCL kernels when CUPTI records them.
 *
 * The transport lives in libppscope_nccl.so (common/pps_plugin.h), which links NCCL and the
 * CUDA runtime; without it, or in a build without NCCL, the constructor fails with PPS_ENOENT
 * saying why. The GPU: PPS_CUDA_DEVICE where it is set (as for the kernels), else local_rank
 * (this rank among those of its node) modulo the node's GPUs; *device_out receives it, for the
 * kernels to open theirs on. NCCL refuses two ranks on one GPU: on one GPU, run the stages as
 * threads (--transport threads). Every rank calls it (collective). On failure host is released
 * too.
 */
int pps_transport_nccl_new(struct pps_transport *host, int local_rank, int *device_out,
                           struct pps_transport **out, struct pps_err *err);

#endif
