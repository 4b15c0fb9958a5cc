/*
 * test_transport_nccl.c - runtime/transport_nccl.c, compiled against a model of NCCL's
 * point-to-point calls on host memory (tests/unit/fake_nccl: in-order matching per communicator,
 * no tags, a send's buffer read only when it pairs), on the threads transport as its host. What
 * it checks is the transport's own logic, which a GPU would run the same way: its communicators
 * with each neighbour, the notes that let the receiver match NCCL's in-order messages by tag,
 * its device buffers reused only once their send has paired, the size check, poll, the refusal
 * of a stage that is not a neighbour. NCCL itself, and the GPU, are checked by
 * tests/gpu/device-check.sh where there are GPUs.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "nccl.h"
#include "test.h"
#include "transport.h"
#include "transport_nccl_plugin.h"

#define MAX_P 8

struct stage {
    struct pps_transport_threads *hub;
    struct pps_transport *t; /* the nccl transport of this stage */
    int stage, p;
    void (*body)(struct stage *);
    int rc;
    struct pps_err err;
};

static void *stage_main(void *arg)
{
    struct stage *st = arg;
    struct pps_transport *host = pps_transport_threads_endpoint(st->hub, st->stage);
    const struct pps__nccl_plugin *plugin = pps_nccl_plugin(PPS__NCCL_PLUGIN_ABI);
    int device = -1;

    st->rc = plugin->transport_new(host, st->stage, &device, &st->t, &st->err);
    if (st->rc == 0) {
        CHECK_EQ_INT(device, 0); /* the fake has one GPU: every local rank modulo 1 */
        st->body(st);
        st->t->ops->free(st->t);
    }
    return NULL;
}

/* Runs body on p stage threads, each with its nccl transport, and joins them. */
static void run(int p, void (*body)(struct stage *))
{
    struct pps_transport_threads *hub = NULL;
    struct stage st[MAX_P];
    pthread_t th[MAX_P];
    struct pps_err err = {0};

    CHECK_EQ_INT(pps_transport_threads_new(p, &hub, &err), 0);
    for (int s = 0; s < p; s++) {
        st[s] = (struct stage){.hub = hub, .stage = s, .p = p, .body = body};
        CHECK(pthread_create(&th[s], NULL, stage_main, &st[s]) == 0);
    }
    for (int s = 0; s < p; s++)
        CHECK(pthread_join(th[s], NULL) == 0);
    pps_transport_threads_free(hub);
    for (int s = 0; s < p; s++)
        if (st[s].rc) {
            fprintf(stderr, "  stage %d: %s\n", s, st[s].err.msg);
            CHECK_EQ_INT(st[s].rc, 0);
        }
    CHECK_EQ_INT(fake_nccl_size_mismatches(), 0); /* every receive posted at its send's size */
    CHECK_EQ_INT(fake_nccl_unpaired(), 0);
}

/* Message (from, mb, kind)'s payload: n floats, each a function of all four. */
static size_t n_of(int mb)
{
    return (size_t)(mb % 5) * 37 + 3;
}

static void fill(float *x, int from, int mb, int kind)
{
    for (size_t i = 0; i < n_of(mb); i++)
        x[i] = (float)(from * 100000 + kind * 10000 + mb * 100) + (float)i;
}

static int intact(const float *x, int from, int mb, int kind)
{
    for (size_t i = 0; i < n_of(mb); i++)
        if (x[i] != (float)(from * 100000 + kind * 10000 + mb * 100) + (float)i)
            return 0;
    return 1;
}

static struct pps_msg_tag tag(int kind, int iter, int mb, int vstage)
{
    struct pps_msg_tag t = {kind, iter, mb, vstage};
    return t;
}

#define MBS 24

/* Every stage sends MBS activations forward and MBS gradients back, reusing one host buffer,
 * before it receives anything; then receives its neighbours' in another order than they were
 * sent (gradients from the last microbatch down, activations odd ones first). The ring's wrap
 * (p-1 to 0) is a neighbour too, as interleaved schedules need. */
static void exchange_body(struct stage *st)
{
    struct pps_transport *t = st->t;
    int next = (st->stage + 1) % st->p, prev = (st->stage + st->p - 1) % st->p;
    float buf[256];
    struct pps_err err = {0};

    for (int mb = 0; mb < MBS; mb++) {
        struct pps_msg_tag a = tag(PPS_MSG_ACT, 0, mb, next), g = tag(PPS_MSG_GRAD, 0, mb, prev);
        fill(buf, st->stage, mb, PPS_MSG_ACT);
        CHECK_EQ_INT(t->ops->send(t, next, &a, buf, n_of(mb) * sizeof(float), &err), 0);
        fill(buf, st->stage, mb, PPS_MSG_GRAD);
        CHECK_EQ_INT(t->ops->send(t, prev, &g, buf, n_of(mb) * sizeof(float), &err), 0);
    }
    for (int mb = MBS - 1; mb >= 0; mb--) {
        struct pps_msg_tag g = tag(PPS_MSG_GRAD, 0, mb, st->stage);
        CHECK_EQ_INT(t->ops->recv(t, next, &g, buf, n_of(mb) * sizeof(float), &err), 0);
        CHECK(intact(buf, next, mb, PPS_MSG_GRAD));
    }
    for (int k = 0; k < MBS; k++) {
        int mb = k < MBS / 2 ? 2 * k + 1 : 2 * (k - MBS / 2);
        struct pps_msg_tag a = tag(PPS_MSG_ACT, 0, mb, st->stage);
        CHECK_EQ_INT(t->ops->recv(t, prev, &a, buf, n_of(mb) * sizeof(float), &err), 0);
        CHECK(intact(buf, prev, mb, PPS_MSG_ACT));
    }
    CHECK_EQ_INT(t->ops->barrier(t, &err), 0); /* nobody frees while another still receives */
}

static void test_matched_by_tag_in_any_order(void)
{
    run(4, exchange_body);
    run(3, exchange_body);
    run(2, exchange_body); /* one neighbour, both ways */
}

/* Equal tags from one peer arrive in the order they were sent (transport.h's rule). */
static void equal_tags_body(struct stage *st)
{
    struct pps_transport *t = st->t;
    struct pps_msg_tag m = tag(PPS_MSG_CTRL, 0, 0, 0);
    struct pps_err err = {0};
    float x[4];

    for (int i = 0; i < 5 && st->stage == 0; i++) {
        fill(x, i, 0, 0);
        CHECK_EQ_INT(t->ops->send(t, 1, &m, x, sizeof(float) * 3, &err), 0);
    }
    for (int i = 0; i < 5 && st->stage == 1; i++) {
        CHECK_EQ_INT(t->ops->recv(t, 0, &m, x, sizeof(float) * 3, &err), 0);
        CHECK(intact(x, i, 0, 0));
    }
    CHECK_EQ_INT(t->ops->barrier(t, &err), 0);
}

static void test_equal_tags_in_send_order(void)
{
    run(2, equal_tags_body);
}

/* A message of another size than asked for is refused and dropped; the next one still comes;
 * a stage that is not a neighbour is refused; a stage's message to itself goes through the
 * host; poll says 0 before the message is sent, 1 after. */
static void edges_body(struct stage *st)
{
    struct pps_transport *t = st->t;
    struct pps_msg_tag a = tag(PPS_MSG_ACT, 0, 1, 1), b = tag(PPS_MSG_ACT, 0, 2, 1);
    struct pps_msg_tag self = tag(PPS_MSG_ACT, 0, 0, 2);
    struct pps_err err = {0};
    float x[256] = {0}; /* n_of(mb) floats for every mb used here */

    if (st->stage == 0) {
        CHECK_EQ_INT(t->ops->send(t, 2, &a, x, 8, &err), PPS_EINVAL);
        CHECK_STR_CONTAINS(err.msg, "stages 0 and 2 are not neighbours");
        CHECK_EQ_INT(t->ops->send(t, 9, &a, x, 8, &err), PPS_EINVAL);
        CHECK_STR_CONTAINS(err.msg, "stage 9 is not in 0..3");
        CHECK_EQ_INT(t->ops->barrier(t, &err), 0); /* stage 1 has polled */
        fill(x, 0, 1, 0);
        CHECK_EQ_INT(t->ops->send(t, 1, &a, x, n_of(1) * sizeof(float), &err), 0);
        fill(x, 0, 2, 0);
        CHECK_EQ_INT(t->ops->send(t, 1, &b, x, n_of(2) * sizeof(float), &err), 0);
    } else if (st->stage == 1) {
        CHECK_EQ_INT(t->ops->poll(t, 0, &a), 0);
        CHECK_EQ_INT(t->ops->poll(t, 3, &a), 1); /* recv would fail at once */
        CHECK_EQ_INT(t->ops->barrier(t, &err), 0);
        while (!t->ops->poll(t, 0, &b))
            sched_yield();
        CHECK_EQ_INT(t->ops->poll(t, 0, &a), 1); /* noted before b, so here too */
        CHECK_EQ_INT(t->ops->recv(t, 0, &a, x, 8, &err), PPS_EINVAL);
        CHECK_STR_CONTAINS(err.msg, "has 160 bytes, not 8 (dropped)");
        CHECK_EQ_INT(t->ops->poll(t, 0, &a), 0); /* dropped: gone */
        CHECK_EQ_INT(t->ops->recv(t, 0, &b, x, n_of(2) * sizeof(float), &err), 0);
        CHECK(intact(x, 0, 2, 0));
        fill(x, 1, 0, 0);
        CHECK_EQ_INT(t->ops->send(t, 1, &self, x, n_of(0) * sizeof(float), &err), 0);
        memset(x, 0, sizeof(x));
        CHECK_EQ_INT(t->ops->recv(t, 1, &self, x, n_of(0) * sizeof(float), &err), 0);
        CHECK(intact(x, 1, 0, 0));
    } else {
        CHECK_EQ_INT(t->ops->barrier(t, &err), 0);
    }
    CHECK_EQ_INT(t->ops->barrier(t, &err), 0);
}

static void test_edges(void)
{
    run(4, edges_body);
}

/* The collectives are the host transport's: the sum in stage order, on every stage. */
static void allreduce_body(struct stage *st)
{
    struct pps_err err = {0};
    double x[2] = {st->stage + 1.0, 0.5};

    CHECK_EQ_INT(st->t->ops->allreduce_sum(st->t, x, 2, &err), 0);
    CHECK(x[0] == 10.0 && x[1] == 2.0);
}

static void test_allreduce_is_the_hosts(void)
{
    run(4, allreduce_body);
}

/* The GPU a rank takes on a machine of 4: its local rank modulo 4, or PPS_CUDA_DEVICE where it
 * is set; a value that names none of them is refused, named. */
static int device_of(int local_rank, const char *env, struct pps_err *err)
{
    struct pps_transport_threads *hub = NULL;
    struct pps_transport *t = NULL;
    int device = -1, rc;

    if (env)
        setenv("PPS_CUDA_DEVICE", env, 1);
    else
        unsetenv("PPS_CUDA_DEVICE");
    CHECK_EQ_INT(pps_transport_threads_new(1, &hub, err), 0);
    rc = pps_nccl_plugin(PPS__NCCL_PLUGIN_ABI)
             ->transport_new(pps_transport_threads_endpoint(hub, 0), local_rank, &device, &t, err);
    if (t)
        t->ops->free(t);
    pps_transport_threads_free(hub);
    unsetenv("PPS_CUDA_DEVICE");
    return rc < 0 ? rc : device;
}

static void test_device_choice(void)
{
    struct pps_err err = {0};

    fake_cuda_devices = 4;
    CHECK_EQ_INT(device_of(0, NULL, &err), 0);
    CHECK_EQ_INT(device_of(5, NULL, &err), 1);
    CHECK_EQ_INT(device_of(6, "", &err), 2);
    CHECK_EQ_INT(device_of(5, "3", &err), 3);
    CHECK_EQ_INT(device_of(0, "0", &err), 0);
    const char *bad[] = {"4", "-1", "abc", "1x", "99999999999999999999"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        CHECK_EQ_INT(device_of(0, bad[i], &err), PPS_EINVAL);
        CHECK(strstr(err.msg, bad[i]) != NULL && strstr(err.msg, "(0..3)") != NULL);
    }
    fake_cuda_devices = 1;
}

static void test_layout_checked(void)
{
    CHECK(pps_nccl_plugin(PPS__NCCL_PLUGIN_ABI) != NULL);
    CHECK(pps_nccl_plugin(PPS__NCCL_PLUGIN_ABI + 1) == NULL);
}

static const struct test_case cases[] = {
    TEST(test_matched_by_tag_in_any_order),
    TEST(test_equal_tags_in_send_order),
    TEST(test_edges),
    TEST(test_allreduce_is_the_hosts),
    TEST(test_device_choice),
    TEST(test_layout_checked),
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    return test_main(cases, argc, argv);
}
