/*
 * transport_threads_coll.c - the threads transport's collectives: barrier, allreduce_sum and the
 * non-blocking sum, on one generation-counting rendezvous (see transport_threads.c for the hub
 * and the order its mutexes are taken in).
 *
 * Each stage posts what it brings (its x and n, or n = -1 for a barrier), the last to arrive sums
 * the posted vectors in stage order into every stage's x (all are waiting, so all are stable),
 * then bumps the generation and wakes the rest. A waiter trusts the generation before any
 * failure, so the stage that completes the final barrier may leave at once without failing the
 * others. A non-blocking sum (allreduce_start) posts the same way and returns; its x is stable
 * because the caller promised not to touch it, and the endpoint remembers the generation it
 * posted in, which allreduce_test compares.
 */
#include <stdio.h>

#include "transport_threads_int.h"

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

    rc = pps__tt_lock(&hub->coll_mu, err);
    if (rc)
        return rc;
    if (((struct pps__endpoint *)t)->nb_pending) {
        rc = pps_err_set(err, PPS_EINVAL, "threads transport: %s while a sum is in flight", what);
        goto out;
    }
    rc = pps__tt_state_check(hub, -1, err);
    if (!rc)
        rc = pps__tt_first_left(hub, err, &left);
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
        rc = pps__tt_broadcast(&hub->coll_cv, err);
    } else {
        /* The generation first: a stage that completed it may have left since. */
        while (hub->gen == my_gen) {
            rc = pps__tt_state_check(hub, -1, err);
            if (!rc)
                rc = pps__tt_first_left(hub, err, &left);
            if (!rc && left >= 0)
                rc = pps_err_set(err, PPS_EPEER, "stage %d left before the %s", left, what);
            if (!rc)
                rc = pps__tt_wait(&hub->coll_cv, &hub->coll_mu, err);
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
    return pps__tt_unlock_keep(&hub->coll_mu, rc, err);
}

int pps__tt_allreduce_sum(struct pps_transport *t, double *x, int n, struct pps_err *err)
{
    if (n < 0 || (n > 0 && !x))
        return pps_err_set(err, PPS_EINVAL, "threads transport: allreduce_sum of %d values%s", n,
                           x ? "" : " from no buffer");
    return threads_collective(t, x, n, "allreduce_sum", err);
}

int pps__tt_barrier(struct pps_transport *t, struct pps_err *err)
{
    return threads_collective(t, NULL, -1, "barrier", err);
}

/* ---- non-blocking sum ---------------------------------------------------------------------- */

/* Under coll_mu: takes back what ep posted for a sum that has not completed, so that a later
 * generation cannot complete short of it. */
void pps__tt_nb_abandon_locked(struct pps__endpoint *ep)
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
    rc = pps__tt_state_check(hub, -1, err);
    if (!rc)
        rc = pps__tt_first_left(hub, err, &left);
    if (!rc && left >= 0)
        rc = pps_err_set(err, PPS_EPEER, "stage %d left before the allreduce_start", left);
    if (rc)
        pps__tt_nb_abandon_locked(ep);
    return rc;
}

int pps__tt_allreduce_start(struct pps_transport *t, double *x, int n, struct pps_err *err)
{
    struct pps__endpoint *ep = (struct pps__endpoint *)t;
    struct pps_transport_threads *hub = ep->hub;
    int rc, left;

    if (n < 0 || (n > 0 && !x))
        return pps_err_set(err, PPS_EINVAL, "threads transport: allreduce_start of %d values%s", n,
                           x ? "" : " from no buffer");
    rc = pps__tt_lock(&hub->coll_mu, err);
    if (rc)
        return rc;
    if (ep->nb_pending) {
        rc = pps_err_set(err, PPS_EINVAL, "threads transport: a sum is already in flight");
        goto out;
    }
    rc = pps__tt_state_check(hub, -1, err);
    if (!rc)
        rc = pps__tt_first_left(hub, err, &left);
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
        rc = pps__tt_broadcast(&hub->coll_cv, err);
    }
out:
    return pps__tt_unlock_keep(&hub->coll_mu, rc, err);
}

int pps__tt_allreduce_test(struct pps_transport *t, struct pps_err *err)
{
    struct pps__endpoint *ep = (struct pps__endpoint *)t;
    int rc = pps__tt_lock(&ep->hub->coll_mu, err);

    if (rc)
        return rc;
    rc = nb_check_locked(ep, err);
    return pps__tt_unlock_keep(&ep->hub->coll_mu, rc, err);
}

int pps__tt_allreduce_wait(struct pps_transport *t, struct pps_err *err)
{
    struct pps__endpoint *ep = (struct pps__endpoint *)t;
    struct pps_transport_threads *hub = ep->hub;
    int rc = pps__tt_lock(&hub->coll_mu, err);

    if (rc)
        return rc;
    while ((rc = nb_check_locked(ep, err)) == 0) {
        rc = pps__tt_wait(&hub->coll_cv, &hub->coll_mu, err);
        if (rc) {
            pps__tt_nb_abandon_locked(ep);
            break;
        }
    }
    rc = pps__tt_unlock_keep(&hub->coll_mu, rc < 0 ? rc : 0, err);
    return rc;
}
