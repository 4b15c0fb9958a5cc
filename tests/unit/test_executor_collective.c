/*
 * test_executor_collective.c - what the executor added to the threads transport for
 * post-validation and failure: the non-blocking sum (allreduce_start / test / wait) gives what
 * allreduce_sum gives, refuses a second sum in flight, and ends with PPS_EPEER naming the stage
 * when a stage aborts (ops->abort) or leaves; the abort op wakes a stage blocked in recv.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "test.h"
#include "transport.h"

enum { P = 3 };

struct worker {
    struct pps_transport *t;
    double x[2];
    int rc;
    struct pps_err err;
    int mode; /* 0: start then wait; 1: start then poll test; 2: recv that never comes */
};

static void *work(void *arg)
{
    struct worker *w = arg;
    struct pps_msg_tag tag = {PPS_MSG_ACT, 0, 0, 0};
    float f;

    if (w->mode == 2) {
        w->rc = w->t->ops->recv(w->t, 0, &tag, &f, sizeof(f), &w->err);
        return NULL;
    }
    w->rc = w->t->ops->allreduce_start(w->t, w->x, 2, &w->err);
    if (w->rc)
        return NULL;
    if (w->mode == 1) {
        struct timespec ms = {0, 1000000};
        while ((w->rc = w->t->ops->allreduce_test(w->t, &w->err)) == 0)
            nanosleep(&ms, NULL);
        if (w->rc == 1)
            w->rc = 0;
    } else {
        w->rc = w->t->ops->allreduce_wait(w->t, &w->err);
    }
    return NULL;
}

static void test_nonblocking_sum_equals_the_blocking_one(void)
{
    struct pps_transport_threads *hub = NULL;
    struct worker w[P];
    pthread_t th[P];
    struct pps_err err = {0, ""};
    /* Values whose sum depends on the order: stage order 0, 1, 2 must give 1e16 + 1 - 1e16 = 0
     * (1e16 + 1 rounds to 1e16), any other order may not. */
    const double vals[P] = {1e16, 1, -1e16};

    CHECK_EQ_INT(pps_transport_threads_new(P, &hub, &err), 0);
    memset(w, 0, sizeof(w));
    for (int s = 0; s < P; s++) {
        w[s].t = pps_transport_threads_endpoint(hub, s);
        w[s].x[0] = vals[s];
        w[s].x[1] = s;
        w[s].mode = s % 2;
        pthread_create(&th[s], NULL, work, &w[s]);
    }
    for (int s = 0; s < P; s++)
        pthread_join(th[s], NULL);
    for (int s = 0; s < P; s++) {
        CHECK_EQ_INT(w[s].rc, 0);
        CHECK(w[s].x[0] == (1e16 + 1) - 1e16);
        CHECK(w[s].x[1] == 3);
    }
    /* One sum in flight at a time, and no blocking collective beside it. */
    {
        double x[2] = {1, 2}, y = 0;
        struct pps_transport *t0 = w[0].t;
        CHECK_EQ_INT(t0->ops->allreduce_start(t0, x, 2, &err), 0);
        CHECK_EQ_INT(t0->ops->allreduce_test(t0, &err), 0);
        CHECK_EQ_INT(t0->ops->allreduce_start(t0, x, 2, &err), PPS_EINVAL);
        CHECK_STR_CONTAINS(err.msg, "already in flight");
        CHECK_EQ_INT(t0->ops->allreduce_sum(t0, &y, 1, &err), PPS_EINVAL);
        CHECK_EQ_INT(t0->ops->barrier(t0, &err), PPS_EINVAL);
        /* Stage 1 leaves: stage 0's sum can never complete. */
        w[1].t->ops->free(w[1].t);
        CHECK_EQ_INT(t0->ops->allreduce_wait(t0, &err), PPS_EPEER);
        CHECK_STR_CONTAINS(err.msg, "stage 1 left");
        CHECK_EQ_INT(t0->ops->allreduce_test(t0, &err), PPS_EINVAL); /* abandoned */
    }
    w[0].t->ops->free(w[0].t);
    w[2].t->ops->free(w[2].t);
    pps_transport_threads_free(hub);
}

static void test_abort_op_stops_waiting_stages_naming_the_failed_one(void)
{
    struct pps_transport_threads *hub = NULL;
    struct worker w[P];
    pthread_t th[P];
    struct pps_err err = {0, ""};
    struct timespec ms = {0, 20000000};

    CHECK_EQ_INT(pps_transport_threads_new(P, &hub, &err), 0);
    memset(w, 0, sizeof(w));
    for (int s = 0; s < 2; s++) {
        w[s].t = pps_transport_threads_endpoint(hub, s);
        w[s].mode = s == 0 ? 0 : 2; /* stage 0 in a sum, stage 1 in a recv */
        pthread_create(&th[s], NULL, work, &w[s]);
    }
    nanosleep(&ms, NULL);
    {
        struct pps_transport *t2 = pps_transport_threads_endpoint(hub, 2);
        CHECK_EQ_INT(t2->ops->abort(t2, "out of cheese"), 0);
        for (int s = 0; s < 2; s++) {
            pthread_join(th[s], NULL);
            CHECK_EQ_INT(w[s].rc, PPS_EPEER);
            CHECK_STR_CONTAINS(w[s].err.msg, "stage 2 failed: out of cheese");
        }
        t2->ops->free(t2);
    }
    w[0].t->ops->free(w[0].t);
    w[1].t->ops->free(w[1].t);
    pps_transport_threads_free(hub);
}

static const struct test_case cases[] = {
    TEST(test_nonblocking_sum_equals_the_blocking_one),
    TEST(test_abort_op_stops_waiting_stages_naming_the_failed_one),
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    return test_main(cases, argc, argv);
}
