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
 * Collectives use one generation-counting rendezvous: each stage posts what it brings (its x and
 * n, or n = -1 for a barrier), the last to arrive sums the posted vectors in stage order into
 * every stage's x (all are waiting, so all are stable), then bumps the generation and wakes the
 * rest. A waiter trusts the generation before any failure, so the stage that completes the final
 * barrier may leave at once without failing the others. A non-blocking sum (allreduce_start)
 * posts the same way and returns; its x is stable because the caller promised not to touch it,
 * and the endpoint remembers the generation it posted in, which allreduce_test compares.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <pthread.h>

#include "transport.h"

struct pps__tmsg {
    struct pps__tmsg *next;
    int src;
    struct pps_msg_tag tag;
    size_t len;
    unsigned char data[];
};

struct pps__mailbox {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    struct pps__tmsg **buckets;
    size_t nbuckets; /* a power of two */
    size_t count;
};

struct pps__endpoint {
    struct pps_transport base;
    struct pps_transport_threads *hub;
    /* A non-blocking sum in flight (allreduce_start): posted in generation nb_gen; under
     * coll_mu. */
    int nb_pending;
    unsigned long nb_gen;
};

struct pps_transport_threads {
    int p;
    struct pps__endpoint *endpoints; /* p */
    struct pps__mailbox *boxes;      /* p: boxes[s] holds what was sent to stage s */

    /* state: failure, departures, references */
    pthread_mutex_t state_mu;
    int failed; /* an abort happened; failed_msg says who and why */
    char failed_msg[400];
    unsigned char *left; /* p: stage s released its endpoint */
    int refs;            /* the creator's and one per endpoint not yet released */

    /* collectives */
    pthread_mutex_t coll_mu;
    pthread_cond_t coll_cv;
    unsigned long gen;
    int arrived;
    double **coll_x; /* p: what each stage posted in this generation */
    int *coll_n;     /* p: its n, -1 for a barrier */
    int coll_rc;     /* the outcome of the last completed generation */
    char coll_msg[400];
};

#define INITIAL_BUCKETS 64

/* ---- small helpers ------------------------------------------------------------------------- */

static int lock(pthread_mutex_t *mu, struct pps_err *err)
{
    int rc = pthread_mutex_lock(mu);

    if (rc != 0)
        return pps_err_set(err, PPS_EIO, "threads transport: pthread_mutex_lock: %s", strerror(rc));
    return 0;
}

static int unlock(pthread_mutex_t *mu, struct pps_err *err)
{
    int rc = pthread_mutex_unlock(mu);

    if (rc != 0)
        return pps_err_set(err, PPS_EIO, "threads transport: pthread_mutex_unlock: %s",
                           strerror(rc));
    return 0;
}

/* Unlocks mu; if that fails and rc was 0, reports the failure instead. */
static int unlock_keep(pthread_mutex_t *mu, int rc, struct pps_err *err)
{
    int urc = unlock(mu, rc ? NULL : err);

    return rc ? rc : urc;
}

static int wait_on(pthread_cond_t *cv, pthread_mutex_t *mu, struct pps_err *err)
{
    int rc = pthread_cond_wait(cv, mu);

    if (rc != 0)
        return pps_err_set(err, PPS_EIO, "threads transport: pthread_cond_wait: %s", strerror(rc));
    return 0;
}

static int broadcast(pthread_cond_t *cv, struct pps_err *err)
{
    int rc = pthread_cond_broadcast(cv);

    if (rc != 0)
        return pps_err_set(err, PPS_EIO, "threads transport: pthread_cond_broadcast: %s",
                           strerror(rc));
    return 0;
}

static const char *kind_name(int kind)
{
    switch (kind) {
    case PPS_MSG_ACT:
        return "activation";
    case PPS_MSG_GRAD:
        return "gradient";
    case PPS_MSG_CTRL:
        return "control";
    }
    return "message";
}

static int check_tag(const struct pps_msg_tag *tag, struct pps_err *err)
{
    if (!tag)
        return pps_err_set(err, PPS_EINVAL, "threads transport: no message tag");
    if (tag->kind < PPS_MSG_ACT || tag->kind > PPS_MSG_CTRL)
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

/* What state_check() returns when peer has left (the caller says what could not happen). */
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

static int state_check(struct pps_transport_threads *hub, int peer, struct pps_err *err)
{
    int rc = lock(&hub->state_mu, err);

    if (rc)
        return rc;
    rc = state_check_locked(hub, peer, err);
    return unlock_keep(&hub->state_mu, rc, err);
}

/* The first stage that has left, or -1. */
static int state_first_left(struct pps_transport_threads *hub, struct pps_err *err, int *stage)
{
    int rc = lock(&hub->state_mu, err);

    if (rc)
        return rc;
    *stage = -1;
    for (int s = 0; s < hub->p && *stage < 0; s++)
        if (hub->left[s])
            *stage = s;
    return unlock(&hub->state_mu, err);
}

/* Wakes every waiter on every mailbox and on the collectives, after a change of state. */
static int wake_all(struct pps_transport_threads *hub, struct pps_err *err)
{
    int rc = 0;

    for (int s = 0; s < hub->p; s++) {
        int lrc = lock(&hub->boxes[s].mu, rc ? NULL : err);
        if (lrc) {
            rc = rc ? rc : lrc;
            continue;
        }
        int brc = broadcast(&hub->boxes[s].cv, rc ? NULL : err);
        rc = rc ? rc : brc;
        rc = unlock_keep(&hub->boxes[s].mu, rc, err);
    }
    if (lock(&hub->coll_mu, rc ? NULL : err) == 0) {
        int brc = broadcast(&hub->coll_cv, rc ? NULL : err);
        rc = rc ? rc : brc;
        rc = unlock_keep(&hub->coll_mu, rc, err);
    } else if (!rc) {
        rc = PPS_EIO;
    }
    return rc;
}

static void hub_destroy(struct pps_transport_threads *hub)
{
    for (int s = 0; s < hub->p; s++)
        box_release(&hub->boxes[s]);
    (void)pthread_cond_destroy(&hub->coll_cv);
    (void)pthread_mutex_destroy(&hub->coll_mu);
    (void)pthread_mutex_destroy(&hub->state_mu);
    free(hub->coll_n);
    free(hub->coll_x);
    free(hub->left);
    free(hub->boxes);
    free(hub->endpoints);
    free(hub);
}

/* Drops one reference; the last one frees the hub. A failed lock leaks the hub rather than risk
 * freeing it under another thread. */
static void hub_unref(struct pps_transport_threads *hub)
{
    int last;

    if (lock(&hub->state_mu, NULL))
        return;
    last = --hub->refs == 0;
    if (unlock(&hub->state_mu, NULL))
        return;
    if (last)
        hub_destroy(hub);
}

/* ---- ops ----------------------------------------------------------------------------------- */

static int threads_send(struct pps_transport *t, int dst, const struct pps_msg_tag *tag,
                        const void *buf, size_t len, struct pps_err *err)
{
    struct pps_transport_threads *hub = ((struct pps__endpoint *)t)->hub;
    struct pps__tmsg *m = NULL;
    struct pps__mailbox *b;
    int rc;

    rc = check_peer(t, dst, "destination", err);
    if (!rc)
        rc = check_tag(tag, err);
    if (!rc && len > 0 && !buf)
        rc = pps_err_set(err, PPS_EINVAL, "threads transport: no buffer for %zu bytes", len);
    if (rc)
        return rc;
    if (len > SIZE_MAX - sizeof(*m))
        return pps_err_set(err, PPS_EINVAL, "threads transport: message of %zu bytes", len);
    m = malloc(sizeof(*m) + len);
    if (!m)
        return pps_err_set(err, PPS_ENOMEM, "threads transport: out of memory for a %zu-byte %s",
                           len, kind_name(tag->kind));
    m->next = NULL;
    m->src = t->stage;
    m->tag = *tag;
    m->len = len;
    if (len > 0)
        memcpy(m->data, buf, len);

    b = &hub->boxes[dst];
    rc = lock(&b->mu, err);
    if (rc)
        goto out;
    rc = state_check(hub, dst, err);
    if (rc == PEER_LEFT)
        rc = pps_err_set(err, PPS_EPEER,
                         "stage %d left and cannot receive the %s of iteration %d, microbatch %d "
                         "for virtual stage %d from stage %d",
                         dst, kind_name(tag->kind), tag->iter, tag->mb, tag->vstage, t->stage);
    if (!rc) {
        chain_append(b->buckets, b->nbuckets, m);
        b->count++;
        m = NULL;
        box_maybe_grow(b);
        rc = broadcast(&b->cv, err);
    }
    rc = unlock_keep(&b->mu, rc, err);
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

    rc = check_peer(t, src, "source", err);
    if (!rc)
        rc = check_tag(tag, err);
    if (!rc && len > 0 && !buf)
        rc = pps_err_set(err, PPS_EINVAL, "threads transport: no buffer for %zu bytes", len);
    if (rc)
        return rc;
    rc = lock(&b->mu, err);
    if (rc)
        return rc;
    for (;;) {
        rc = state_check(hub, src, err);
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
                             src, kind_name(tag->kind), tag->iter, tag->mb, tag->vstage, t->stage);
            break;
        }
        rc = wait_on(&b->cv, &b->mu, err);
        if (rc)
            break;
    }
    rc = unlock_keep(&b->mu, rc, err);
    if (rc)
        goto out;
    if (m->len != len) {
        rc = pps_err_set(err, PPS_EINVAL,
                         "the %s of iteration %d, microbatch %d for virtual stage %d from stage "
                         "%d is %zu bytes, stage %d expected %zu",
                         kind_name(tag->kind), tag->iter, tag->mb, tag->vstage, src, m->len,
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
    if (lock(&b->mu, NULL))
        return 1;
    ready = box_find(b, src, tag, 0) != NULL || state_check(hub, src, NULL) != 0;
    if (unlock(&b->mu, NULL))
        return 1;
    return ready;
}

/* Under coll_mu, by the last stage to arrive: checks that every stage brought the same thing and
 * sums the posted vectors, element by element in stage order, into every one of them. */
static void coll_complete_locked(struct pps_transport_threads *hub)
{
    int n = hub->coll_n[0];

    hub->coll_rc = 0;
    hub->coll_msg[0] = '\0';
    for (int s = 1; s < hub->p; s++) {
        if (hub->coll_n[s] != n) {
            hub->coll_rc = PPS_EINVAL;
            if (n < 0 || hub->coll_n[s] < 0)
                snprintf(hub->coll_msg, sizeof(hub->coll_msg),
                         "stage %d called %s while stage 0 called %s", s,
                         hub->coll_n[s] < 0 ? "barrier" : "allreduce_sum",
                         n < 0 ? "barrier" : "allreduce_sum");
            else
                snprintf(hub->coll_msg, sizeof(hub->coll_msg),
                         "allreduce_sum of %d values on stage %d, of %d on stage 0", hub->coll_n[s],
                         s, n);
            return;
        }
    }
    for (int i = 0; i < n; i++) {
        double sum = hub->coll_x[0][i];
        for (int s = 1; s < hub->p; s++)
            sum += hub->coll_x[s][i];
        for (int s = 0; s < hub->p; s++)
            hub->coll_x[s][i] = sum;
    }
}

/* The rendezvous behind barrier (x NULL, n -1) and allreduce_sum. */
static int threads_collective(struct pps_transport *t, double *x, int n, const char *what,
                              struct pps_err *err)
{
    struct pps_transport_threads *hub = ((struct pps__endpoint *)t)->hub;
    unsigned long my_gen;
    int rc, left;

    rc = lock(&hub->coll_mu, err);
    if (rc)
        return rc;
    if (((struct pps__endpoint *)t)->nb_pending) {
        rc = pps_err_set(err, PPS_EINVAL, "threads transport: %s while a sum is in flight", what);
        goto out;
    }
    rc = state_check(hub, -1, err);
    if (!rc)
        rc = state_first_left(hub, err, &left);
    if (!rc && left >= 0)
        rc = pps_err_set(err, PPS_EPEER, "stage %d left before the %s", left, what);
    if (rc)
        goto out;
    my_gen = hub->gen;
    hub->coll_x[t->stage] = x;
    hub->coll_n[t->stage] = n;
    if (++hub->arrived == hub->p) {
        coll_complete_locked(hub);
        hub->arrived = 0;
        hub->gen++;
        rc = broadcast(&hub->coll_cv, err);
    } else {
        /* The generation first: a stage that completed it may have left since. */
        while (hub->gen == my_gen) {
            rc = state_check(hub, -1, err);
            if (!rc)
                rc = state_first_left(hub, err, &left);
            if (!rc && left >= 0)
                rc = pps_err_set(err, PPS_EPEER, "stage %d left before the %s", left, what);
            if (!rc)
                rc = wait_on(&hub->coll_cv, &hub->coll_mu, err);
            if (rc) {
                /* Leave the count as it was, so that a later call cannot complete it short. */
                hub->arrived--;
                hub->coll_x[t->stage] = NULL;
                goto out;
            }
        }
    }
    if (!rc && hub->coll_rc)
        rc = pps_err_set(err, hub->coll_rc, "threads transport: %s", hub->coll_msg);
out:
    return unlock_keep(&hub->coll_mu, rc, err);
}

static int threads_allreduce_sum(struct pps_transport *t, double *x, int n, struct pps_err *err)
{
    if (n < 0 || (n > 0 && !x))
        return pps_err_set(err, PPS_EINVAL, "threads transport: allreduce_sum of %d values%s", n,
                           x ? "" : " from no buffer");
    return threads_collective(t, x, n, "allreduce_sum", err);
}

static int threads_barrier(struct pps_transport *t, struct pps_err *err)
{
    return threads_collective(t, NULL, -1, "barrier", err);
}

/* ---- non-blocking sum ---------------------------------------------------------------------- */

/* Under coll_mu: takes back what ep posted for a sum that has not completed, so that a later
 * generation cannot complete short of it. */
static void nb_abandon_locked(struct pps__endpoint *ep)
{
    struct pps_transport_threads *hub = ep->hub;

    if (ep->nb_pending && hub->gen == ep->nb_gen) {
        hub->arrived--;
        hub->coll_x[ep->base.stage] = NULL;
    }
    ep->nb_pending = 0;
}

/* Under coll_mu: 1 when ep's sum has completed, 0 when it has not and no one failed or left,
 * or the error (the sum is then abandoned). */
static int nb_check_locked(struct pps__endpoint *ep, struct pps_err *err)
{
    struct pps_transport_threads *hub = ep->hub;
    int rc, left;

    if (!ep->nb_pending)
        return pps_err_set(err, PPS_EINVAL, "threads transport: no sum in flight");
    /* The generation first, as for a blocking collective: the stage that completed it may have
     * left since. */
    if (hub->gen != ep->nb_gen) {
        ep->nb_pending = 0;
        if (hub->coll_rc)
            return pps_err_set(err, hub->coll_rc, "threads transport: %s", hub->coll_msg);
        return 1;
    }
    rc = state_check(hub, -1, err);
    if (!rc)
        rc = state_first_left(hub, err, &left);
    if (!rc && left >= 0)
        rc = pps_err_set(err, PPS_EPEER, "stage %d left before the allreduce_start", left);
    if (rc)
        nb_abandon_locked(ep);
    return rc;
}

static int threads_allreduce_start(struct pps_transport *t, double *x, int n, struct pps_err *err)
{
    struct pps__endpoint *ep = (struct pps__endpoint *)t;
    struct pps_transport_threads *hub = ep->hub;
    int rc, left;

    if (n < 0 || (n > 0 && !x))
        return pps_err_set(err, PPS_EINVAL, "threads transport: allreduce_start of %d values%s", n,
                           x ? "" : " from no buffer");
    rc = lock(&hub->coll_mu, err);
    if (rc)
        return rc;
    if (ep->nb_pending) {
        rc = pps_err_set(err, PPS_EINVAL, "threads transport: a sum is already in flight");
        goto out;
    }
    rc = state_check(hub, -1, err);
    if (!rc)
        rc = state_first_left(hub, err, &left);
    if (!rc && left >= 0)
        rc = pps_err_set(err, PPS_EPEER, "stage %d left before the allreduce_start", left);
    if (rc)
        goto out;
    ep->nb_pending = 1;
    ep->nb_gen = hub->gen;
    hub->coll_x[t->stage] = x;
    hub->coll_n[t->stage] = n;
    if (++hub->arrived == hub->p) {
        coll_complete_locked(hub);
        hub->arrived = 0;
        hub->gen++;
        rc = broadcast(&hub->coll_cv, err);
    }
out:
    return unlock_keep(&hub->coll_mu, rc, err);
}

static int threads_allreduce_test(struct pps_transport *t, struct pps_err *err)
{
    struct pps__endpoint *ep = (struct pps__endpoint *)t;
    int rc = lock(&ep->hub->coll_mu, err);

    if (rc)
        return rc;
    rc = nb_check_locked(ep, err);
    return unlock_keep(&ep->hub->coll_mu, rc, err);
}

static int threads_allreduce_wait(struct pps_transport *t, struct pps_err *err)
{
    struct pps__endpoint *ep = (struct pps__endpoint *)t;
    struct pps_transport_threads *hub = ep->hub;
    int rc = lock(&hub->coll_mu, err);

    if (rc)
        return rc;
    while ((rc = nb_check_locked(ep, err)) == 0) {
        rc = wait_on(&hub->coll_cv, &hub->coll_mu, err);
        if (rc) {
            nb_abandon_locked(ep);
            break;
        }
    }
    rc = unlock_keep(&hub->coll_mu, rc < 0 ? rc : 0, err);
    return rc;
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
    if (lock(&hub->coll_mu, NULL) == 0) {
        nb_abandon_locked((struct pps__endpoint *)t);
        (void)unlock(&hub->coll_mu, NULL);
    }
    rc = lock(&hub->state_mu, NULL);
    if (rc)
        return;
    hub->left[t->stage] = 1;
    rc = unlock(&hub->state_mu, NULL);
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
    .allreduce_sum = threads_allreduce_sum,
    .barrier = threads_barrier,
    .free = threads_free,
    .allreduce_start = threads_allreduce_start,
    .allreduce_test = threads_allreduce_test,
    .allreduce_wait = threads_allreduce_wait,
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
    if (hub) {
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
    rc = lock(&hub->state_mu, &err);
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
    rc = unlock(&hub->state_mu, &err);
    if (rc)
        return rc;
    return wake_all(hub, &err);
}

void pps_transport_threads_free(struct pps_transport_threads *hub)
{
    if (hub)
        hub_unref(hub);
}
