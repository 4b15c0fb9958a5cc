/*
 * test_transport_threads.c - the threads transport (runtime/transport_threads.c) against the
 * contract in runtime/transport.h: matching by tag whatever arrived first, sends that never wait
 * for the receiver, payloads copied intact, the right peer only, collectives in stage order,
 * and failures (an abort, a stage that left) waking every waiter with PPS_EPEER naming the stage.
 * Run it under helgrind too: every case is built to be race-free by the transport's locks alone.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "test.h"
#include "transport.h"

/* ---- helpers -------------------------------------------------------------------------------- */

static struct pps_msg_tag tag_of(int kind, int iter, int mb, int vstage)
{
    struct pps_msg_tag t = {kind, iter, mb, vstage};
    return t;
}

static struct pps_transport_threads *new_hub(int p)
{
    struct pps_transport_threads *hub = NULL;
    struct pps_err err = {0, ""};
    int rc = pps_transport_threads_new(p, &hub, &err);

    if (rc || !hub) {
        fprintf(stderr, "  pps_transport_threads_new(%d): %s\n", p, err.msg);
        exit(1);
    }
    return hub;
}

/* Releases every endpoint and the hub. */
static void free_all(struct pps_transport_threads *hub, int p)
{
    for (int s = 0; s < p; s++) {
        struct pps_transport *t = pps_transport_threads_endpoint(hub, s);
        t->ops->free(t);
    }
    pps_transport_threads_free(hub);
}

/* Gives waiting threads time to block, so that a wake-up path is what the case exercises. The
 * outcome does not depend on it: a call that comes after the event fails the same way. */
static void let_threads_block(void)
{
    struct timespec ts = {0, 50 * 1000 * 1000};
    nanosleep(&ts, NULL);
}

/* Runs fn(stage) on p threads, one per stage, and joins them. */
struct stage_arg {
    struct pps_transport_threads *hub;
    int stage;
    void *shared;
    int rc;
    struct pps_err err;
};

static void run_stages(struct pps_transport_threads *hub, int p, void *(*fn)(void *), void *shared,
                       struct stage_arg *args)
{
    pthread_t th[16];

    for (int s = 0; s < p; s++) {
        args[s].hub = hub;
        args[s].stage = s;
        args[s].shared = shared;
        args[s].rc = 0;
        args[s].err.code = 0;
        args[s].err.msg[0] = '\0';
        if (pthread_create(&th[s], NULL, fn, &args[s]) != 0) {
            fprintf(stderr, "  pthread_create failed\n");
            exit(1);
        }
    }
    for (int s = 0; s < p; s++) {
        if (pthread_join(th[s], NULL) != 0) {
            fprintf(stderr, "  pthread_join failed\n");
            exit(1);
        }
    }
}

/* The payload of message i: len(i) bytes, each a function of i and its position. */
static size_t payload_len(int i)
{
    return (size_t)(i % 97) * 8 + 1;
}

static void fill_payload(unsigned char *buf, int i)
{
    for (size_t k = 0; k < payload_len(i); k++)
        buf[k] = (unsigned char)(i * 31 + (int)k * 7 + 1);
}

static int payload_ok(const unsigned char *buf, int i)
{
    for (size_t k = 0; k < payload_len(i); k++)
        if (buf[k] != (unsigned char)(i * 31 + (int)k * 7 + 1))
            return 0;
    return 1;
}

/* ---- construction and arguments ---------------------------------------------------------- */

static void test_new_rejects_bad_p(void)
{
    struct pps_transport_threads *hub = (void *)1;
    struct pps_err err = {0, ""};

    CHECK_EQ_INT(pps_transport_threads_new(0, &hub, &err), PPS_EINVAL);
    CHECK(hub == NULL);
    CHECK_STR_CONTAINS(err.msg, "p must be >= 1");
    hub = new_hub(3);
    CHECK(pps_transport_threads_endpoint(hub, 3) == NULL);
    CHECK(pps_transport_threads_endpoint(hub, -1) == NULL);
    CHECK(pps_transport_threads_endpoint(hub, 2) == pps_transport_threads_endpoint(hub, 2));
    CHECK_EQ_INT(pps_transport_threads_endpoint(hub, 2)->stage, 2);
    CHECK_EQ_INT(pps_transport_threads_endpoint(hub, 2)->p, 3);
    CHECK(strcmp(pps_transport_threads_endpoint(hub, 0)->ops->name, "threads") == 0);
    CHECK_EQ_INT(pps_transport_threads_abort(hub, 3, "x"), PPS_EINVAL);
    free_all(hub, 3);
}

static void test_bad_arguments(void)
{
    struct pps_transport_threads *hub = new_hub(2);
    struct pps_transport *t = pps_transport_threads_endpoint(hub, 0);
    struct pps_msg_tag ok = tag_of(PPS_MSG_ACT, 0, 0, 1);
    struct pps_msg_tag neg = tag_of(PPS_MSG_ACT, 0, -1, 1);
    struct pps_msg_tag kind = tag_of(7, 0, 0, 1);
    struct pps_err err = {0, ""};
    char b = 0;

    CHECK_EQ_INT(t->ops->send(t, 2, &ok, &b, 1, &err), PPS_EINVAL);
    CHECK_STR_CONTAINS(err.msg, "destination stage 2 is not in 0..1");
    CHECK_EQ_INT(t->ops->send(t, 1, &neg, &b, 1, &err), PPS_EINVAL);
    CHECK_STR_CONTAINS(err.msg, "negative");
    CHECK_EQ_INT(t->ops->send(t, 1, &kind, &b, 1, &err), PPS_EINVAL);
    CHECK_STR_CONTAINS(err.msg, "not a message kind");
    CHECK_EQ_INT(t->ops->send(t, 1, &ok, NULL, 1, &err), PPS_EINVAL);
    CHECK_EQ_INT(t->ops->recv(t, -1, &ok, &b, 1, &err), PPS_EINVAL);
    CHECK_EQ_INT(t->ops->poll(t, 5, &ok), 1); /* recv would fail at once */
    CHECK_EQ_INT(t->ops->allreduce_sum(t, NULL, 3, &err), PPS_EINVAL);
    free_all(hub, 2);
}

/* ---- point to point ---------------------------------------------------------------------- */

static void test_matched_by_tag_out_of_order(void)
{
    struct pps_transport_threads *hub = new_hub(2);
    struct pps_transport *a = pps_transport_threads_endpoint(hub, 0);
    struct pps_transport *b = pps_transport_threads_endpoint(hub, 1);
    static const int order[] = {3, 1, 4, 0, 2};
    struct pps_err err = {0, ""};
    int v;

    for (int i = 0; i < 5; i++) {
        struct pps_msg_tag act = tag_of(PPS_MSG_ACT, 7, i, 1);
        struct pps_msg_tag grad = tag_of(PPS_MSG_GRAD, 7, i, 1);
        v = 100 + i;
        CHECK_EQ_INT(a->ops->send(a, 1, &act, &v, sizeof(v), &err), 0);
        v = 200 + i;
        CHECK_EQ_INT(a->ops->send(a, 1, &grad, &v, sizeof(v), &err), 0);
    }
    /* Each field of the tag tells messages apart: another iteration is not there. */
    struct pps_msg_tag other_iter = tag_of(PPS_MSG_ACT, 8, 0, 1);
    struct pps_msg_tag other_vstage = tag_of(PPS_MSG_ACT, 7, 0, 0);
    CHECK_EQ_INT(b->ops->poll(b, 0, &other_iter), 0);
    CHECK_EQ_INT(b->ops->poll(b, 0, &other_vstage), 0);
    for (int k = 0; k < 5; k++) {
        int i = order[k];
        struct pps_msg_tag grad = tag_of(PPS_MSG_GRAD, 7, i, 1);
        struct pps_msg_tag act = tag_of(PPS_MSG_ACT, 7, i, 1);
        CHECK_EQ_INT(b->ops->poll(b, 0, &grad), 1);
        CHECK_EQ_INT(b->ops->recv(b, 0, &grad, &v, sizeof(v), &err), 0);
        CHECK_EQ_INT(v, 200 + i);
        CHECK_EQ_INT(b->ops->poll(b, 0, &grad), 0);
        CHECK_EQ_INT(b->ops->recv(b, 0, &act, &v, sizeof(v), &err), 0);
        CHECK_EQ_INT(v, 100 + i);
    }
    free_all(hub, 2);
}

#define MANY 10000

static void *send_many(void *p)
{
    struct stage_arg *a = p;
    struct pps_transport *t = pps_transport_threads_endpoint(a->hub, a->stage);
    unsigned char buf[97 * 8 + 1];

    for (int i = 0; i < MANY && !a->rc; i++) {
        struct pps_msg_tag tag = tag_of(PPS_MSG_ACT, i / 100, i % 100, 1);
        fill_payload(buf, i);
        a->rc = t->ops->send(t, 1, &tag, buf, payload_len(i), &a->err);
    }
    return NULL;
}

/* The sender finishes all its sends (the thread is joined) before the receiver reads one: a send
 * that waited for its receive would hang here. Then they are received newest first. */
static void test_many_in_flight_without_blocking(void)
{
    struct pps_transport_threads *hub = new_hub(2);
    struct pps_transport *b = pps_transport_threads_endpoint(hub, 1);
    struct stage_arg arg = {hub, 0, NULL, 0, {0, ""}};
    unsigned char buf[97 * 8 + 1];
    struct pps_err err = {0, ""};
    pthread_t th;
    int bad = 0;

    CHECK(pthread_create(&th, NULL, send_many, &arg) == 0);
    CHECK(pthread_join(th, NULL) == 0);
    CHECK_EQ_INT(arg.rc, 0);
    for (int i = MANY - 1; i >= 0; i--) {
        struct pps_msg_tag tag = tag_of(PPS_MSG_ACT, i / 100, i % 100, 1);
        memset(buf, 0, sizeof(buf));
        if (b->ops->recv(b, 0, &tag, buf, payload_len(i), &err) != 0 || !payload_ok(buf, i))
            bad++;
    }
    CHECK_EQ_INT(bad, 0);
    free_all(hub, 2);
}

static void test_payload_copied_and_intact(void)
{
    struct pps_transport_threads *hub = new_hub(2);
    struct pps_transport *a = pps_transport_threads_endpoint(hub, 0);
    struct pps_transport *b = pps_transport_threads_endpoint(hub, 1);
    struct pps_msg_tag big = tag_of(PPS_MSG_ACT, 0, 0, 1);
    struct pps_msg_tag empty = tag_of(PPS_MSG_CTRL, 0, 0, 1);
    size_t n = 1 << 20;
    float *src = malloc(n * sizeof(float)), *dst = malloc(n * sizeof(float));
    struct pps_err err = {0, ""};

    if (!src || !dst) {
        fprintf(stderr, "  out of memory\n");
        exit(1);
    }
    for (size_t i = 0; i < n; i++)
        src[i] = (float)i * 0.5f - 3.0f;
    CHECK_EQ_INT(a->ops->send(a, 1, &big, src, n * sizeof(float), &err), 0);
    CHECK_EQ_INT(a->ops->send(a, 1, &empty, NULL, 0, &err), 0);
    /* The sender owns its buffer again as soon as send returns. */
    memset(src, 0xff, n * sizeof(float));
    CHECK_EQ_INT(b->ops->recv(b, 0, &empty, NULL, 0, &err), 0);
    CHECK_EQ_INT(b->ops->recv(b, 0, &big, dst, n * sizeof(float), &err), 0);
    int bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += dst[i] != (float)i * 0.5f - 3.0f;
    CHECK_EQ_INT(bad, 0);
    free(src);
    free(dst);
    free_all(hub, 2);
}

static void test_recv_from_the_right_peer_only(void)
{
    struct pps_transport_threads *hub = new_hub(3);
    struct pps_transport *s0 = pps_transport_threads_endpoint(hub, 0);
    struct pps_transport *s1 = pps_transport_threads_endpoint(hub, 1);
    struct pps_transport *s2 = pps_transport_threads_endpoint(hub, 2);
    struct pps_msg_tag tag = tag_of(PPS_MSG_GRAD, 3, 2, 1);
    struct pps_err err = {0, ""};
    int v;

    v = 2000;
    CHECK_EQ_INT(s2->ops->send(s2, 1, &tag, &v, sizeof(v), &err), 0);
    CHECK_EQ_INT(s1->ops->poll(s1, 0, &tag), 0); /* the same tag, but from stage 2 */
    v = 1000;
    CHECK_EQ_INT(s0->ops->send(s0, 1, &tag, &v, sizeof(v), &err), 0);
    CHECK_EQ_INT(s1->ops->poll(s1, 0, &tag), 1);
    CHECK_EQ_INT(s1->ops->recv(s1, 2, &tag, &v, sizeof(v), &err), 0);
    CHECK_EQ_INT(v, 2000);
    CHECK_EQ_INT(s1->ops->poll(s1, 2, &tag), 0);
    CHECK_EQ_INT(s1->ops->recv(s1, 0, &tag, &v, sizeof(v), &err), 0);
    CHECK_EQ_INT(v, 1000);
    /* Nothing went to the other stages' mailboxes. */
    CHECK_EQ_INT(s0->ops->poll(s0, 2, &tag), 0);
    CHECK_EQ_INT(s2->ops->poll(s2, 0, &tag), 0);
    free_all(hub, 3);
}

static void test_equal_tags_in_send_order(void)
{
    struct pps_transport_threads *hub = new_hub(2);
    struct pps_transport *a = pps_transport_threads_endpoint(hub, 0);
    struct pps_transport *b = pps_transport_threads_endpoint(hub, 1);
    struct pps_msg_tag tag = tag_of(PPS_MSG_CTRL, 0, 0, 0);
    struct pps_err err = {0, ""};
    int v;

    /* Enough to make the mailbox's table grow between them. */
    for (v = 0; v < 1000; v++)
        CHECK_EQ_INT(a->ops->send(a, 1, &tag, &v, sizeof(v), &err), 0);
    for (int i = 0; i < 1000; i++) {
        CHECK_EQ_INT(b->ops->recv(b, 0, &tag, &v, sizeof(v), &err), 0);
        CHECK_EQ_INT(v, i);
    }
    free_all(hub, 2);
}

static void test_wrong_size_is_refused_and_dropped(void)
{
    struct pps_transport_threads *hub = new_hub(2);
    struct pps_transport *a = pps_transport_threads_endpoint(hub, 0);
    struct pps_transport *b = pps_transport_threads_endpoint(hub, 1);
    struct pps_msg_tag tag = tag_of(PPS_MSG_ACT, 1, 2, 1);
    struct pps_err err = {0, ""};
    double d[2] = {1, 2};

    CHECK_EQ_INT(a->ops->send(a, 1, &tag, d, sizeof(d), &err), 0);
    CHECK_EQ_INT(b->ops->recv(b, 0, &tag, d, sizeof(d[0]), &err), PPS_EINVAL);
    CHECK_STR_CONTAINS(err.msg, "is 16 bytes, stage 1 expected 8");
    CHECK_EQ_INT(b->ops->poll(b, 0, &tag), 0);
    free_all(hub, 2);
}

static void *recv_one(void *p)
{
    struct stage_arg *a = p;
    struct pps_transport *t = pps_transport_threads_endpoint(a->hub, a->stage);
    struct pps_msg_tag tag = tag_of(PPS_MSG_ACT, 0, 0, 1);
    int *v = a->shared;

    a->rc = t->ops->recv(t, 0, &tag, v, sizeof(*v), &a->err);
    return NULL;
}

static void test_recv_waits_for_its_message(void)
{
    struct pps_transport_threads *hub = new_hub(2);
    struct pps_transport *a = pps_transport_threads_endpoint(hub, 0);
    struct pps_msg_tag other = tag_of(PPS_MSG_ACT, 0, 1, 1);
    struct pps_msg_tag tag = tag_of(PPS_MSG_ACT, 0, 0, 1);
    struct stage_arg arg = {hub, 1, NULL, -99, {0, ""}};
    struct pps_err err = {0, ""};
    int got = 0, v;
    pthread_t th;

    arg.shared = &got;
    CHECK(pthread_create(&th, NULL, recv_one, &arg) == 0);
    let_threads_block();
    v = 5; /* another message first: it must not satisfy the waiting recv */
    CHECK_EQ_INT(a->ops->send(a, 1, &other, &v, sizeof(v), &err), 0);
    let_threads_block();
    v = 42;
    CHECK_EQ_INT(a->ops->send(a, 1, &tag, &v, sizeof(v), &err), 0);
    CHECK(pthread_join(th, NULL) == 0);
    CHECK_EQ_INT(arg.rc, 0);
    CHECK_EQ_INT(got, 42);
    free_all(hub, 2);
}

static void test_single_stage(void)
{
    struct pps_transport_threads *hub = new_hub(1);
    struct pps_transport *t = pps_transport_threads_endpoint(hub, 0);
    struct pps_msg_tag tag = tag_of(PPS_MSG_ACT, 0, 0, 1); /* chunk 0 -> chunk 1, same stage */
    struct pps_err err = {0, ""};
    double x[2] = {1.5, -2};
    int v = 9;

    CHECK_EQ_INT(t->ops->send(t, 0, &tag, &v, sizeof(v), &err), 0);
    v = 0;
    CHECK_EQ_INT(t->ops->recv(t, 0, &tag, &v, sizeof(v), &err), 0);
    CHECK_EQ_INT(v, 9);
    CHECK_EQ_INT(t->ops->barrier(t, &err), 0);
    CHECK_EQ_INT(t->ops->allreduce_sum(t, x, 2, &err), 0);
    CHECK(x[0] == 1.5 && x[1] == -2);
    /* The hub may go first; the endpoint keeps it alive. */
    pps_transport_threads_free(hub);
    CHECK_EQ_INT(t->ops->barrier(t, &err), 0);
    t->ops->free(t);
}

/* ---- collectives ------------------------------------------------------------------------- */

#define RED_P      4
#define RED_N      8
#define RED_ROUNDS 200

/* Stage s's j-th value in round r: magnitudes far apart, so the sum depends on the order. */
static double red_value(int s, int j, int r)
{
    static const double v[4] = {1e16, -1e16, 1.0, 3.0};
    return v[(s + j) % 4] * (1.0 + (double)r / 1024.0) + (double)(j % 3);
}

static double red_in_order(int j, int r, int p)
{
    double sum = red_value(0, j, r);
    for (int s = 1; s < p; s++)
        sum += red_value(s, j, r);
    return sum;
}

/* Whether the values catch a sum in any other order of p stages: every permutation but those
 * that only swap the first two (a + b == b + a, so no values can) sums some element differently.
 * Tried over all p^p tuples, keeping the permutations. */
static int every_other_order_differs(int p)
{
    int total = 1, ord[4];

    for (int s = 0; s < p; s++)
        total *= p;
    for (int code = 0; code < total; code++) {
        int c = code, used = 0, is_perm = 1, same_tail = 1, differs = 0;
        for (int s = 0; s < p; s++, c /= p) {
            ord[s] = c % p;
            is_perm &= !(used & (1 << ord[s]));
            used |= 1 << ord[s];
            same_tail &= s < 2 || ord[s] == s;
        }
        if (!is_perm || same_tail)
            continue;
        for (int j = 0; j < RED_N && !differs; j++) {
            double sum = red_value(ord[0], j, 0);
            for (int s = 1; s < p; s++)
                sum += red_value(ord[s], j, 0);
            differs = sum != red_in_order(j, 0, p);
        }
        if (!differs)
            return 0;
    }
    return 1;
}

static void *allreduce_stage(void *p)
{
    struct stage_arg *a = p;
    struct pps_transport *t = pps_transport_threads_endpoint(a->hub, a->stage);
    int *bad = a->shared;

    for (int r = 0; r < RED_ROUNDS && !a->rc; r++) {
        double x[RED_N];
        for (int j = 0; j < RED_N; j++)
            x[j] = red_value(a->stage, j, r);
        a->rc = t->ops->allreduce_sum(t, x, RED_N, &a->err);
        for (int j = 0; j < RED_N && !a->rc; j++) {
            double want = red_in_order(j, r, t->p);
            if (memcmp(&x[j], &want, sizeof(want)) != 0)
                bad[a->stage]++;
        }
    }
    return NULL;
}

static void test_allreduce_in_stage_order_on_every_stage(void)
{
    struct pps_transport_threads *hub = new_hub(RED_P);
    struct stage_arg args[RED_P];
    int bad[RED_P] = {0};

    CHECK(every_other_order_differs(RED_P));
    CHECK(every_other_order_differs(3));
    run_stages(hub, RED_P, allreduce_stage, bad, args);
    for (int s = 0; s < RED_P; s++) {
        CHECK_EQ_INT(args[s].rc, 0);
        CHECK_EQ_INT(bad[s], 0);
    }
    free_all(hub, RED_P);
}

static void *allreduce_own_n(void *p)
{
    struct stage_arg *a = p;
    struct pps_transport *t = pps_transport_threads_endpoint(a->hub, a->stage);
    double x[3] = {1, 2, 3};

    a->rc = t->ops->allreduce_sum(t, x, 2 + a->stage, &a->err);
    return NULL;
}

static void test_allreduce_different_n_fails_everywhere(void)
{
    struct pps_transport_threads *hub = new_hub(2);
    struct stage_arg args[2];

    run_stages(hub, 2, allreduce_own_n, NULL, args);
    for (int s = 0; s < 2; s++) {
        CHECK_EQ_INT(args[s].rc, PPS_EINVAL);
        CHECK_STR_CONTAINS(args[s].err.msg, "allreduce_sum of 3 values on stage 1, of 2");
    }
    free_all(hub, 2);
}

struct barrier_shared {
    pthread_mutex_t mu;
    int arrived;
    int early; /* a stage left a barrier before every stage had arrived at it */
};

#define BAR_P      4
#define BAR_ROUNDS 300

static void *barrier_stage(void *p)
{
    struct stage_arg *a = p;
    struct barrier_shared *sh = a->shared;
    struct pps_transport *t = pps_transport_threads_endpoint(a->hub, a->stage);

    for (int r = 0; r < BAR_ROUNDS && !a->rc; r++) {
        pthread_mutex_lock(&sh->mu);
        sh->arrived++;
        pthread_mutex_unlock(&sh->mu);
        a->rc = t->ops->barrier(t, &a->err);
        pthread_mutex_lock(&sh->mu);
        if (sh->arrived < BAR_P * (r + 1))
            sh->early++;
        pthread_mutex_unlock(&sh->mu);
    }
    return NULL;
}

static void test_barrier_waits_for_every_stage(void)
{
    struct pps_transport_threads *hub = new_hub(BAR_P);
    struct barrier_shared sh = {PTHREAD_MUTEX_INITIALIZER, 0, 0};
    struct stage_arg args[BAR_P];

    run_stages(hub, BAR_P, barrier_stage, &sh, args);
    for (int s = 0; s < BAR_P; s++)
        CHECK_EQ_INT(args[s].rc, 0);
    CHECK_EQ_INT(sh.arrived, BAR_P * BAR_ROUNDS);
    CHECK_EQ_INT(sh.early, 0);
    free_all(hub, BAR_P);
}

static void *barrier_then_leave(void *p)
{
    struct stage_arg *a = p;
    struct pps_transport *t = pps_transport_threads_endpoint(a->hub, a->stage);

    a->rc = t->ops->barrier(t, &a->err);
    t->ops->free(t);
    return NULL;
}

/* The stage that completes the last barrier may leave before the others have woken: they must
 * still pass (the generation decides, not the departure). */
static void test_leaving_after_the_last_barrier_fails_no_one(void)
{
    struct stage_arg args[BAR_P];
    int failed = 0;

    for (int round = 0; round < 200; round++) {
        struct pps_transport_threads *hub = new_hub(BAR_P);
        run_stages(hub, BAR_P, barrier_then_leave, NULL, args);
        for (int s = 0; s < BAR_P; s++)
            failed += args[s].rc != 0;
        pps_transport_threads_free(hub);
    }
    CHECK_EQ_INT(failed, 0);
}

/* ---- failures ---------------------------------------------------------------------------- */

/* Stage 0 waits for a message from stage 1, stage 1 in a barrier, stage 3 in an allreduce;
 * stage 2 fails. */
static void *wait_somewhere(void *p)
{
    struct stage_arg *a = p;
    struct pps_transport *t = pps_transport_threads_endpoint(a->hub, a->stage);
    struct pps_msg_tag tag = tag_of(PPS_MSG_GRAD, 0, 0, 0);
    double x[2] = {1, 2};
    int v;

    if (a->stage == 0)
        a->rc = t->ops->recv(t, 1, &tag, &v, sizeof(v), &a->err);
    else if (a->stage == 1)
        a->rc = t->ops->barrier(t, &a->err);
    else if (a->stage == 3)
        a->rc = t->ops->allreduce_sum(t, x, 2, &a->err);
    return NULL;
}

struct abort_plan {
    struct pps_transport_threads *hub;
    int stage;
    const char *reason;
};

static void *abort_later(void *p)
{
    struct abort_plan *plan = p;

    let_threads_block();
    pps_transport_threads_abort(plan->hub, plan->stage, plan->reason);
    return NULL;
}

static void test_abort_wakes_every_waiter_naming_the_stage(void)
{
    struct pps_transport_threads *hub = new_hub(4);
    struct abort_plan plan = {hub, 2, "out of memory in forward"};
    struct stage_arg args[4];
    struct pps_err err = {0, ""};
    pthread_t th;

    CHECK(pthread_create(&th, NULL, abort_later, &plan) == 0);
    run_stages(hub, 4, wait_somewhere, NULL, args);
    CHECK(pthread_join(th, NULL) == 0);
    for (int s = 0; s < 4; s++) {
        if (s == 2)
            continue;
        CHECK_EQ_INT(args[s].rc, PPS_EPEER);
        CHECK_STR_CONTAINS(args[s].err.msg, "stage 2 failed: out of memory in forward");
    }
    /* From now on every call fails the same way, and a second abort changes nothing. */
    struct pps_transport *t = pps_transport_threads_endpoint(hub, 0);
    struct pps_msg_tag tag = tag_of(PPS_MSG_ACT, 0, 0, 1);
    int v = 1;
    CHECK_EQ_INT(pps_transport_threads_abort(hub, 1, "something else"), 0);
    CHECK_EQ_INT(t->ops->send(t, 1, &tag, &v, sizeof(v), &err), PPS_EPEER);
    CHECK_STR_CONTAINS(err.msg, "stage 2 failed: out of memory in forward");
    CHECK_EQ_INT(t->ops->barrier(t, &err), PPS_EPEER);
    CHECK_EQ_INT(pps_transport_threads_endpoint(hub, 1)->ops->poll(
                     pps_transport_threads_endpoint(hub, 1), 0, &tag),
                 1);
    free_all(hub, 4);
}

static void test_abort_without_a_stage(void)
{
    struct pps_transport_threads *hub = new_hub(2);
    struct pps_transport *t = pps_transport_threads_endpoint(hub, 0);
    struct pps_msg_tag tag = tag_of(PPS_MSG_ACT, 0, 0, 1);
    struct pps_err err = {0, ""};
    int v;

    CHECK_EQ_INT(pps_transport_threads_abort(hub, -1, "interrupted"), 0);
    CHECK_EQ_INT(t->ops->recv(t, 1, &tag, &v, sizeof(v), &err), PPS_EPEER);
    CHECK_STR_CONTAINS(err.msg, "run aborted: interrupted");
    free_all(hub, 2);
}

static void *leave_later(void *p)
{
    struct pps_transport *t = p;

    let_threads_block();
    t->ops->free(t);
    return NULL;
}

static void test_stage_that_left_wakes_its_waiters(void)
{
    struct pps_transport_threads *hub = new_hub(3);
    struct pps_transport *s0 = pps_transport_threads_endpoint(hub, 0);
    struct pps_transport *s1 = pps_transport_threads_endpoint(hub, 1);
    struct pps_transport *s2 = pps_transport_threads_endpoint(hub, 2);
    struct pps_msg_tag sent = tag_of(PPS_MSG_ACT, 4, 0, 0);
    struct pps_msg_tag never = tag_of(PPS_MSG_ACT, 4, 1, 0);
    struct stage_arg args[3];
    struct pps_err err = {0, ""};
    pthread_t th;
    int v = 77;

    /* What stage 1 sent before it left is still delivered. */
    CHECK_EQ_INT(s1->ops->send(s1, 0, &sent, &v, sizeof(v), &err), 0);
    CHECK(pthread_create(&th, NULL, leave_later, s1) == 0);
    /* Stage 0 waits in recv from stage 1 (tag GRAD 0/0/0, never sent), stage 2 nowhere. */
    run_stages(hub, 1, wait_somewhere, NULL, args);
    CHECK(pthread_join(th, NULL) == 0);
    CHECK_EQ_INT(args[0].rc, PPS_EPEER);
    CHECK_STR_CONTAINS(args[0].err.msg, "stage 1 left without sending the gradient of iteration "
                                        "0, microbatch 0 for virtual stage 0 to stage 0");
    v = 0;
    CHECK_EQ_INT(s0->ops->recv(s0, 1, &sent, &v, sizeof(v), &err), 0);
    CHECK_EQ_INT(v, 77);
    CHECK_EQ_INT(s0->ops->recv(s0, 1, &never, &v, sizeof(v), &err), PPS_EPEER);
    CHECK_EQ_INT(s0->ops->send(s0, 1, &never, &v, sizeof(v), &err), PPS_EPEER);
    CHECK_STR_CONTAINS(err.msg, "stage 1 left and cannot receive");
    CHECK_EQ_INT(s2->ops->barrier(s2, &err), PPS_EPEER);
    CHECK_STR_CONTAINS(err.msg, "stage 1 left before the barrier");
    /* Stages that did not leave still talk. */
    CHECK_EQ_INT(s2->ops->send(s2, 0, &never, &v, sizeof(v), &err), 0);
    CHECK_EQ_INT(s0->ops->recv(s0, 2, &never, &v, sizeof(v), &err), 0);
    s0->ops->free(s0);
    s2->ops->free(s2);
    pps_transport_threads_free(hub);
}

static const struct test_case cases[] = {
    TEST(test_new_rejects_bad_p),
    TEST(test_bad_arguments),
    TEST(test_matched_by_tag_out_of_order),
    TEST(test_many_in_flight_without_blocking),
    TEST(test_payload_copied_and_intact),
    TEST(test_recv_from_the_right_peer_only),
    TEST(test_equal_tags_in_send_order),
    TEST(test_wrong_size_is_refused_and_dropped),
    TEST(test_recv_waits_for_its_message),
    TEST(test_single_stage),
    TEST(test_allreduce_in_stage_order_on_every_stage),
    TEST(test_allreduce_different_n_fails_everywhere),
    TEST(test_barrier_waits_for_every_stage),
    TEST(test_leaving_after_the_last_barrier_fails_no_one),
    TEST(test_abort_wakes_every_waiter_naming_the_stage),
    TEST(test_abort_without_a_stage),
    TEST(test_stage_that_left_wakes_its_waiters),
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    return test_main(cases, argc, argv);
}
