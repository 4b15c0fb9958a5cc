/*
 * transport_threads_int.h - what the two files of the threads transport share: the hub and its
 * endpoints, the checked pthread calls, the hub state's checks (transport_threads.c) and the
 * collectives (transport_threads_coll.c). Not installed; names here are pps__tt_ (internal).
 */
#ifndef PPS_TRANSPORT_THREADS_INT_H
#define PPS_TRANSPORT_THREADS_INT_H

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

/* ---- pthread calls, checked: 0 or PPS_EIO with the reason ---------------------------------- */

static inline int pps__tt_lock(pthread_mutex_t *mu, struct pps_err *err)
{
    int rc = pthread_mutex_lock(mu);

    if (rc != 0)
        return pps_err_set(err, PPS_EIO, "threads transport: pthread_mutex_lock: %s", strerror(rc));
    return 0;
}

static inline int pps__tt_unlock(pthread_mutex_t *mu, struct pps_err *err)
{
    int rc = pthread_mutex_unlock(mu);

    if (rc != 0)
        return pps_err_set(err, PPS_EIO, "threads transport: pthread_mutex_unlock: %s",
                           strerror(rc));
    return 0;
}

/* Unlocks mu; if that fails and rc was 0, reports the failure instead. */
static inline int pps__tt_unlock_keep(pthread_mutex_t *mu, int rc, struct pps_err *err)
{
    int urc = pps__tt_unlock(mu, rc ? NULL : err);

    return rc ? rc : urc;
}

static inline int pps__tt_wait(pthread_cond_t *cv, pthread_mutex_t *mu, struct pps_err *err)
{
    int rc = pthread_cond_wait(cv, mu);

    if (rc != 0)
        return pps_err_set(err, PPS_EIO, "threads transport: pthread_cond_wait: %s", strerror(rc));
    return 0;
}

static inline int pps__tt_broadcast(pthread_cond_t *cv, struct pps_err *err)
{
    int rc = pthread_cond_broadcast(cv);

    if (rc != 0)
        return pps_err_set(err, PPS_EIO, "threads transport: pthread_cond_broadcast: %s",
                           strerror(rc));
    return 0;
}

/* ---- transport_threads.c: the hub state ---------------------------------------------------- */

/* PPS_EPEER with the abort's reason when the run failed; else 1 when peer (>= 0) has left; else
 * 0. Takes state_mu. */
int pps__tt_state_check(struct pps_transport_threads *hub, int peer, struct pps_err *err);
/* The first stage that has left in *stage, or -1. Takes state_mu. */
int pps__tt_first_left(struct pps_transport_threads *hub, struct pps_err *err, int *stage);

/* ---- transport_threads_coll.c: the collectives (the ops of the same names) ----------------- */

int pps__tt_allreduce_sum(struct pps_transport *t, double *x, int n, struct pps_err *err);
int pps__tt_barrier(struct pps_transport *t, struct pps_err *err);
int pps__tt_allreduce_start(struct pps_transport *t, double *x, int n, struct pps_err *err);
int pps__tt_allreduce_test(struct pps_transport *t, struct pps_err *err);
int pps__tt_allreduce_wait(struct pps_transport *t, struct pps_err *err);
/* Under coll_mu: takes back what ep posted for a sum that has not completed, so that a later
 * generation cannot complete short of it. */
void pps__tt_nb_abandon_locked(struct pps__endpoint *ep);

#endif
