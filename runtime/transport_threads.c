/*
 * transport_threads.c - the threads transport: every stage a thread of one process.
 *
 * A hub holds one mailbox per destination stage: a mutex, a condition variable and a chained
 * hash of the messages that arrived, keyed by (source, tag), each chain in arrival order so that
 * equal tags from one source are received in send order. send copies the payload into a new
 * message and appends it to the destination's mailbox; recv waits on its own mailbox until the
 * message is there, unlinks it, copies it out and frees it.
 *
 * Failure and departure live in the hub's state (its own mutex, always taken after a mailbox's or
 * the collectives' mutex, never before): an abort or a departing endpoint updates the state, then
 * takes each mailbox's mutex and the collectives' mutex in turn to broadcast, so that a waiter,
 * which checks the state under its mutex before waiting, cannot miss the wake-up.
 *
 * The collectives (barrier, allreduce_sum, the non-blocking sum) are in transport_threads_coll.c;
 * transport_threads_int.h holds what the two files share.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "transport_threads_int.h"

#define INITIAL_BUCKETS 64

static int check_tag(const struct pps_msg_tag *tag, struct pps_err *err)
{
    if (!tag)
        return pps_err_set(err, PPS_EINVAL, "threads transport: no message tag");
    if (tag->kind < PPS_MSG_ACT || tag->kind > PPS_MSG_META)
        return pps_err_set(err, PPS_EINVAL, "threads transport: %d is not a message kind",
                           tag->kind);
    if (tag->iter < 0 || tag->mb < 0 || tag->vstage < 0)
        return pps_err_set(err, PPS_EINVAL,
                           "threads transport: negative tag field (iter %d, mb %d, vstage %d)",
                           tag->iter, tag->mb, tag->vstage);
    return 0;
}

static int check_peer(const struct pps_transport *t, int peer, const char *what,
                      struct pps_err *err)
{
    if (peer < 0 || peer >= t->p)
        return pps_err_set(err, PPS_EINVAL, "threads transport: %s stage %d is not in 0..%d", what,
                           peer, t->p - 1);
    return 0;
}

static int same_tag(const struct pps_msg_tag *a, const struct pps_msg_tag *b)
{
    return a->kind == b->kind && a->iter == b->iter && a->mb == b->mb && a->vstage == b->vstage;
}

static size_t hash_key(int src, const struct pps_msg_tag *tag)
{
    uint64_t h = 1469598103934665603u; /* FNV-1a over the five fields */
    const int f[5] = {src, tag->kind, tag->iter, tag->mb, tag->vstage};

    for (int i = 0; i < 5; i++) {
        h ^= (uint32_t)f[i];
        h *= 1099511628211u;
    }
    return (size_t)(h ^ (h >> 29));
}

/* ---- mailbox ------------------------------------------------------------------------------- */

/* Appends m at the tail of its chain, so that equal keys keep their arrival order. */
static void chain_append(struct pps__tmsg **buckets, size_t nbuckets, struct pps__tmsg *m)
{
    struct pps__tmsg **pp = &buckets[hash_key(m->src, &m->tag) & (nbuckets - 1)];

    while (*pp)
        pp = &(*pp)->next;
    m->next = NULL;
    *pp = m;
}

/* Doubles the table when it holds twice as many messages as chains; on no memory it keeps the
 * old table, which stays correct, only slower. */
static void box_maybe_grow(struct pps__mailbox *b)
{
    size_t n = b->nbuckets * 2;
    struct pps__tmsg **nb;

    if (b->count < b->nbuckets * 2 || n < b->nbuckets)
        return;
    nb = calloc(n, sizeof(*nb));
    if (!nb)
        return;
    for (size_t i = 0; i < b->nbuckets; i++) {
        struct pps__tmsg *m = b->buckets[i];
        while (m) {
            struct pps__tmsg *next = m->next;
            chain_append(nb, n, m);
            m = next;
        }
    }
    free(b->buckets);
    b->buckets = nb;
    b->nbuckets = n;
}

/* The first message from src with tag, unlinked from the mailbox when take is set. */
static struct pps__tmsg *box_find(struct pps__mailbox *b, int src, const struct pps_msg_tag *tag,
                                  int take)
{
    struct pps__tmsg **pp = &b->buckets[hash_key(src, tag) & (b->nbuckets - 1)];

    for (; *pp; pp = &(*pp)->next) {
        struct pps__tmsg *m = *pp;
        if (m->src == src && same_tag(&m->tag, tag)) {
            if (take) {
                *pp = m->next;
                b->count--;
            }
            return m;
        }
    }
    return NULL;
}

static int box_init(struct pps__mailbox *b, struct pps_err *err)
{
    int rc;

    b->buckets = calloc(INITIAL_BUCKETS, sizeof(*b->buckets));
    if (!b->buckets)
        return pps_err_set(err, PPS_ENOMEM, "threads transport: out of memory");
    b->nbuckets = INITIAL_BUCKETS;
    b->count = 0;
    rc = pthread_mutex_init(&b->mu, NULL);
    if (rc != 0) {
        free(b->buckets);
        return pps_err_set(err, PPS_EIO, "threads transport: pthread_mutex_init: %s", strerror(rc));
    }
    rc = pthread_cond_init(&b->cv, NULL);
    if (rc != 0) {
        pthread_mutex_destroy(&b->mu);
        free(b->buckets);
        return pps_err_set(err, PPS_EIO, "threads transport: pthread_cond_init: %s", strerror(rc));
    }
    return 0;
}

/* Frees the mailbox and every message still in it. Destroy failures are ignored: nothing waits
 * on a mailbox any more when the hub goes. */
static void box_release(struct pps__mailbox *b)
{
    for (size_t i = 0; i < b->nbuckets; i++) {
        struct pps__tmsg *m = b->buckets[i];
        while (m) {
            struct pps__tmsg *next = m->next;
            free(m);
            m = next;
        }
    }
    free(b->buckets);
    (void)pthread_cond_destroy(&b->cv);
    (void)pthread_mutex_destroy(&b->mu);
}

/* ---- hub state ----------------------------------------------------------------------------- */

/* What pps__tt_state_check() returns when peer has left (the caller says what could not happen). */
#define PEER_LEFT 1

/* Under state_mu: PPS_EPEER with the abort's reason when the run failed; else PEER_LEFT when peer
 * (>= 0) has left; else 0. */
static int state_check_locked(struct pps_transport_threads *hub, int peer, struct pps_err *err)
{
    if (hub->failed)
        return pps_err_set(err, PPS_EPEER, "%s", hub->failed_msg);
    if (peer >= 0 && hub->left[peer])
        return PEER_LEFT;
    return 0;
}

int pps__tt_state_check(struct pps_transport_threads *hub, int peer, struct pps_err *err)
{
    int rc = pps__tt_lock(&hub->state_mu, err);

    if (rc)
        return rc;
    rc = state_check_locked(hub, peer, err);
    return pps__tt_unlock_keep(&hub->state_mu, rc, err);
}

/* The first stage that has left, or -1. */
int pps__tt_first_left(struct pps_transport_threads *hub, struct pps_err *err, int *stage)
{
    int rc = pps__tt_lock(&hub->state_mu, err);

    if (rc)
        return rc;
    *stage = -1;
    for (int s = 0; s < hub->p && *stage < 0; s++)
        if (hub->left[s])
            *stage = s;
    return pps__tt_unlock(&hub->state_mu, err);
}

/* Wakes every waiter on every mailbox and on the collectives, after a change of state. */
static int wake_all(struct pps_transport_threads *hub, struct pps_err *err)
{
    int rc = 0;

    for (int s = 0; s < hub->p; s++) {
        int lrc = pps__tt_lock(&hub->boxes[s].mu, rc ? NULL : err);
        if (lrc) {
            rc = rc ? rc : lrc;
            continue;
        }
        int brc = pps__tt_broadcast(&hub->boxes[s].cv, rc ? NULL : err);
        rc = rc ? rc : brc;
        rc = pps__tt_unlock_keep(&hub->boxes[s].mu, rc, err);
    }
    if (pps__tt_lock(&hub->coll_mu, rc ? NULL : err) == 0) {
        int brc = pps__tt_broadcast(&hub->coll_cv, rc ? NULL : err);
        rc = rc ? rc : brc;
        rc = pps__tt_unlock_keep(&hub->coll_mu, rc, err);
    } else if (!rc) {
        rc = PPS_EIO;
    }
    return rc;
}

/* Frees hub and what it holds: its first boxes mailboxes, and the locks that the flags say were
 * made (a hub that pps_transport_threads_new() left half made). */
static void hub_free(struct pps_transport_threads *hub, int boxes, int coll_cv, int coll_mu,
                     int state_mu)
{
    for (int s = 0; s < boxes; s++)
        box_release(&hub->boxes[s]);
    if (coll_cv)
        (void)pthread_cond_destroy(&hub->coll_cv);
    if (coll_mu)
        (void)pthread_mutex_destroy(&hub->coll_mu);
    if (state_mu)
        (void)pthread_mutex_destroy(&hub->state_mu);
    free(hub->coll_n);
    free(hub->coll_x);
    free(hub->left);
    free(hub->boxes);
    free(hub->endpoints);
    free(hub);
}

static void hub_destroy(struct pps_transport_threads *hub)
{
    hub_free(hub, hub->p, 1, 1, 1);
}

/* Drops one reference; the last one frees the hub. A failed lock leaks the hub rather than risk
 * freeing it under another thread. */
static void hub_unref(struct pps_transport_threads *hub)
{
    int last;

    if (pps__tt_lock(&hub->state_mu, NULL))
        return;
    last = --hub->refs == 0;
    if (pps__tt_unlock(&hub->state_mu, NULL))
        return;
    if (last)
        hub_destroy(hub);
}

/* ---- ops ----------------------------------------------------------------------------------- */

/* What a send or a receive checks first: the peer (what it is to this call), the tag, and a
 * buffer when there are bytes to move. */
static int check_io(const struct pps_transport *t, int peer, const char *what,
                    const struct pps_msg_tag *tag, const void *buf, size_t len, struct pps_err *err)
{
    int rc = check_peer(t, peer, what, err);

    if (!rc)
        rc = check_tag(tag, err);
    if (!rc && len > 0 && !buf)
        rc = pps_err_set(err, PPS_EINVAL, "threads transport: no buffer for %zu bytes", len);
    return rc;
}

static int threads_send(struct pps_transport *t, int dst, const struct pps_msg_tag *tag,
                        const void *buf, size_t len, struct pps_err *err)
{
    struct pps_transport_threads *hub = ((struct pps__endpoint *)t)->hub;
    struct pps__tmsg *m = NULL;
    struct pps__mailbox *b;
    int rc;

    rc = check_io(t, dst, "destination", tag, buf, len, err);
    if (rc)
        return rc;
    if (len > SIZE_MAX - sizeof(*m))
        return pps_err_set(err, PPS_EINVAL, "threads transport: message of %zu bytes", len);
    m = malloc(sizeof(*m) + len);
    if (!m)
        return pps_err_set(err, PPS_ENOMEM, "threads transport: out of memory for a %zu-byte %s",
                           len, pps_msg_kind_name(tag->kind));
    m->next = NULL;
    m->src = t->stage;
    m->tag = *tag;
    m->len = len;
    if (len > 0)
        memcpy(m->data, buf, len);

    b = &hub->boxes[dst];
    rc = pps__tt_lock(&b->mu, err);
    if (rc)
        goto out;
    rc = pps__tt_state_check(hub, dst, err);
    if (rc == PEER_LEFT)
        rc = pps_err_set(err, PPS_EPEER,
                         "stage %d left and cannot receive the %s of iteration %d, microbatch %d "
                         "for virtual stage %d from stage %d",
                         dst, pps_msg_kind_name(tag->kind), tag->iter, tag->mb, tag->vstage,
                         t->stage);
    if (!rc) {
        chain_append(b->buckets, b->nbuckets, m);
        b->count++;
        m = NULL;
        box_maybe_grow(b);
        rc = pps__tt_broadcast(&b->cv, err);
    }
    rc = pps__tt_unlock_keep(&b->mu, rc, err);
out:
    free(m);
    return rc;
}

static int threads_recv(struct pps_transport *t, int src, const struct pps_msg_tag *tag, void *buf,
                        size_t len, struct pps_err *err)
{
    struct pps_transport_threads *hub = ((struct pps__endpoint *)t)->hub;
    struct pps__mailbox *b = &hub->boxes[t->stage];
    struct pps__tmsg *m = NULL;
    int rc;

    rc = check_io(t, src, "source", tag, buf, len, err);
    if (rc)
        return rc;
    rc = pps__tt_lock(&b->mu, err);
    if (rc)
        return rc;
    for (;;) {
        rc = pps__tt_state_check(hub, src, err);
        if (rc < 0) /* a failed run fails every call, even one whose message is there */
            break;
        m = box_find(b, src, tag, 1);
        if (m) {
            rc = 0;
            break;
        }
        if (rc == PEER_LEFT) {
            rc = pps_err_set(err, PPS_EPEER,
                             "stage %d left without sending the %s of iteration %d, microbatch "
                             "%d for virtual stage %d to stage %d",
                             src, pps_msg_kind_name(tag->kind), tag->iter, tag->mb, tag->vstage,
                             t->stage);
            break;
        }
        rc = pps__tt_wait(&b->cv, &b->mu, err);
        if (rc)
            break;
    }
    rc = pps__tt_unlock_keep(&b->mu, rc, err);
    if (rc)
        goto out;
    if (m->len != len) {
        rc = pps_err_set(err, PPS_EINVAL,
                         "the %s of iteration %d, microbatch %d for virtual stage %d from stage "
                         "%d is %zu bytes, stage %d expected %zu",
                         pps_msg_kind_name(tag->kind), tag->iter, tag->mb, tag->vstage, src, m->len,
                         t->stage, len);
        goto out;
    }
    if (len > 0)
        memcpy(buf, m->data, len);
out:
    free(m);
    return rc;
}

static int threads_poll(struct pps_transport *t, int src, const struct pps_msg_tag *tag)
{
    struct pps_transport_threads *hub = ((struct pps__endpoint *)t)->hub;
    struct pps__mailbox *b = &hub->boxes[t->stage];
    int ready;

    if (check_peer(t, src, "source", NULL) || check_tag(tag, NULL))
        return 1;
    if (pps__tt_lock(&b->mu, NULL))
        return 1;
    ready = box_find(b, src, tag, 0) != NULL || pps__tt_state_check(hub, src, NULL) != 0;
    if (pps__tt_unlock(&b->mu, NULL))
        return 1;
    return ready;
}

static int threads_abort_op(struct pps_transport *t, const char *reason)
{
    return pps_transport_threads_abort(((struct pps__endpoint *)t)->hub, t->stage, reason);
}

/* The stage leaves: whoever waits on it is told, and the hub loses a reference. */
static void threads_free(struct pps_transport *t)
{
    struct pps_transport_threads *hub;
    int rc;

    if (!t)
        return;
    hub = ((struct pps__endpoint *)t)->hub;
    if (pps__tt_lock(&hub->coll_mu, NULL) == 0) {
        pps__tt_nb_abandon_locked((struct pps__endpoint *)t);
        (void)pps__tt_unlock(&hub->coll_mu, NULL);
    }
    rc = pps__tt_lock(&hub->state_mu, NULL);
    if (rc)
        return;
    hub->left[t->stage] = 1;
    rc = pps__tt_unlock(&hub->state_mu, NULL);
    if (rc)
        return;
    (void)wake_all(hub, NULL); /* nothing to tell a caller that is going away */
    hub_unref(hub);
}

static const struct pps_transport_ops threads_ops = {
    .name = "threads",
    .send = threads_send,
    .recv = threads_recv,
    .poll = threads_poll,
    .allreduce_sum = pps__tt_allreduce_sum,
    .barrier = pps__tt_barrier,
    .free = threads_free,
    .allreduce_start = pps__tt_allreduce_start,
    .allreduce_test = pps__tt_allreduce_test,
    .allreduce_wait = pps__tt_allreduce_wait,
    .abort = threads_abort_op,
};

/* ---- public -------------------------------------------------------------------------------- */

int pps_transport_threads_new(int p, struct pps_transport_threads **out, struct pps_err *err)
{
    struct pps_transport_threads *hub = NULL;
    int rc = 0, boxes = 0, state_mu = 0, coll_mu = 0, coll_cv = 0;

    if (!out)
        return pps_err_set(err, PPS_EINVAL, "threads transport: nowhere to put the hub");
    *out = NULL;
    if (p < 1)
        return pps_err_set(err, PPS_EINVAL, "threads transport: p must be >= 1, got %d", p);

    hub = calloc(1, sizeof(*hub));
    if (!hub)
        return pps_err_set(err, PPS_ENOMEM, "threads transport: out of memory");
    hub->p = p;
    hub->endpoints = calloc((size_t)p, sizeof(*hub->endpoints));
    hub->boxes = calloc((size_t)p, sizeof(*hub->boxes));
    hub->left = calloc((size_t)p, sizeof(*hub->left));
    hub->coll_x = calloc((size_t)p, sizeof(*hub->coll_x));
    hub->coll_n = calloc((size_t)p, sizeof(*hub->coll_n));
    if (!hub->endpoints || !hub->boxes || !hub->left || !hub->coll_x || !hub->coll_n) {
        rc = pps_err_set(err, PPS_ENOMEM, "threads transport: out of memory for %d stages", p);
        goto out;
    }
    for (; boxes < p; boxes++) {
        rc = box_init(&hub->boxes[boxes], err);
        if (rc)
            goto out;
    }
    rc = pthread_mutex_init(&hub->state_mu, NULL);
    state_mu = rc == 0;
    if (rc == 0) {
        rc = pthread_mutex_init(&hub->coll_mu, NULL);
        coll_mu = rc == 0;
    }
    if (rc == 0) {
        rc = pthread_cond_init(&hub->coll_cv, NULL);
        coll_cv = rc == 0;
    }
    if (rc != 0) {
        rc = pps_err_set(err, PPS_EIO, "threads transport: cannot make a lock: %s", strerror(rc));
        goto out;
    }
    for (int s = 0; s < p; s++) {
        hub->endpoints[s].base.ops = &threads_ops;
        hub->endpoints[s].base.stage = s;
        hub->endpoints[s].base.p = p;
        hub->endpoints[s].hub = hub;
    }
    hub->refs = p + 1;
    *out = hub;
    hub = NULL;
out:
    if (hub)
        hub_free(hub, boxes, coll_cv, coll_mu, state_mu);
    return rc;
}

struct pps_transport *pps_transport_threads_endpoint(struct pps_transport_threads *hub, int stage)
{
    if (!hub || stage < 0 || stage >= hub->p)
        return NULL;
    return &hub->endpoints[stage].base;
}

int pps_transport_threads_abort(struct pps_transport_threads *hub, int stage, const char *reason)
{
    struct pps_err err = {0, ""};
    int rc;

    if (!hub || stage < -1 || stage >= hub->p)
        return PPS_EINVAL;
    if (!reason || !*reason)
        reason = "no reason given";
    rc = pps__tt_lock(&hub->state_mu, &err);
    if (rc)
        return rc;
    if (!hub->failed) {
        hub->failed = 1;
        if (stage >= 0)
            snprintf(hub->failed_msg, sizeof(hub->failed_msg), "stage %d failed: %s", stage,
                     reason);
        else
            snprintf(hub->failed_msg, sizeof(hub->failed_msg), "run aborted: %s", reason);
    }
    rc = pps__tt_unlock(&hub->state_mu, &err);
    if (rc)
        return rc;
    return wake_all(hub, &err);
}

void pps_transport_threads_free(struct pps_transport_threads *hub)
{
    if (hub)
        hub_unref(hub);
}
