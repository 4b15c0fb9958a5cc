/*
 * test_transport_mpi.c - the MPI transport (runtime/transport_mpi.c) against the contract in
 * runtime/transport.h. An MPI program, run by tests/cli/transport_mpi.sh under mpirun with 2, 3
 * and 4 ranks on one machine; every rank runs every case, in the same order, and each case ends
 * in a barrier. Environment:
 *
 *   PPS_TEST_RUN_DIR   a directory every rank can write (the barrier case; it skips without)
 *
 * `test_transport_mpi peer_exit` is not a case but a run of its own, for 2 ranks: rank 1 exits
 * without MPI_Finalize while rank 0 waits in recv for a message from it. The script checks that
 * the job ends, with a failure, rather than hang; rank 0 prints what its recv returned, if it
 * returns at all (Open MPI's mpirun usually kills the job first). `peer_abort` is the same with
 * rank 1 failing the way the executor should: through pps_transport_mpi_abort().
 *
 * Built without MPI, only the "built without MPI" error is checked, and the program exits 77.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "pps_config.h"
#include "test.h"
#include "transport.h"

#ifdef PPS_HAVE_MPI

#include <mpi.h>

static int my_rank, world_size;

/* m and vstages of the runs the cases pretend to be. */
#define RUN_M       128
#define RUN_VSTAGES 16

static struct pps_msg_tag tag_of(int kind, int iter, int mb, int vstage)
{
    struct pps_msg_tag t = {kind, iter, mb, vstage};
    return t;
}

static struct pps_transport *open_transport(void)
{
    struct pps_transport *t = NULL;
    struct pps_err err = {0, ""};

    if (pps_transport_mpi_new(NULL, RUN_M, RUN_VSTAGES, &t, &err) != 0 || !t) {
        fprintf(stderr, "  rank %d: pps_transport_mpi_new: %s\n", my_rank, err.msg);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    return t;
}

/* Ends a case: every rank is done with it before any starts the next. */
static void close_transport(struct pps_transport *t)
{
    struct pps_err err = {0, ""};

    CHECK_EQ_INT(t->ops->barrier(t, &err), 0);
    t->ops->free(t);
}

static int next_rank(int r)
{
    return (r + 1) % world_size;
}

static int prev_rank(int r)
{
    return (r + world_size - 1) % world_size;
}

/* Message i's payload: sizes from 1 byte to past every eager limit (every 250th is 300 KB). */
static size_t payload_len(int i)
{
    return i % 250 == 7 ? 300 * 1024 : (size_t)(i % 97) * 8 + 1;
}

static unsigned char payload_byte(int from, int i, size_t k)
{
    return (unsigned char)(from * 101 + i * 31 + (int)k * 7 + 1);
}

static void fill_payload(unsigned char *buf, int from, int i)
{
    for (size_t k = 0; k < payload_len(i); k++)
        buf[k] = payload_byte(from, i, k);
}

static int payload_ok(const unsigned char *buf, int from, int i)
{
    for (size_t k = 0; k < payload_len(i); k++)
        if (buf[k] != payload_byte(from, i, k))
            return 0;
    return 1;
}

/* ---- construction ------------------------------------------------------------------------ */

static void test_stage_is_rank(void)
{
    struct pps_transport *t = open_transport();
    struct pps_transport *t2 = NULL;
    MPI_Comm world = MPI_COMM_WORLD;
    struct pps_err err = {0, ""};

    CHECK_EQ_INT(t->stage, my_rank);
    CHECK_EQ_INT(t->p, world_size);
    CHECK(strcmp(t->ops->name, "mpi") == 0);
    /* An explicit communicator works the same. */
    CHECK_EQ_INT(pps_transport_mpi_new(&world, 1, 1, &t2, &err), 0);
    if (t2) {
        CHECK_EQ_INT(t2->stage, my_rank);
        close_transport(t2);
    }
    close_transport(t);
}

static void test_tag_limits(void)
{
    struct pps_transport *t = NULL;
    struct pps_err err = {0, ""};
    char b = 0;

    CHECK_EQ_INT(pps_transport_mpi_new(NULL, 0, 4, &t, &err), PPS_EINVAL);
    CHECK(t == NULL);
    /* 20 + 20 + 2 + 1 bits: more than any MPI_TAG_UB allows. */
    CHECK_EQ_INT(pps_transport_mpi_new(NULL, 1 << 20, 1 << 20, &t, &err), PPS_EINVAL);
    CHECK(t == NULL);
    CHECK_STR_CONTAINS(err.msg, "m=1048576 and vstages=1048576 need 43 tag bits");
    CHECK_STR_CONTAINS(err.msg, "MPI_TAG_UB=");

    t = open_transport();
    struct pps_msg_tag big_mb = tag_of(PPS_MSG_ACT, 0, RUN_M, 0);
    struct pps_msg_tag big_vs = tag_of(PPS_MSG_GRAD, 0, 0, RUN_VSTAGES);
    struct pps_msg_tag neg = tag_of(PPS_MSG_ACT, -1, 0, 0);
    struct pps_msg_tag kind = tag_of(4, 0, 0, 0); /* past PPS_MSG_META: beyond its 2 bits */
    CHECK_EQ_INT(t->ops->send(t, 0, &big_mb, &b, 1, &err), PPS_EINVAL);
    CHECK_STR_CONTAINS(err.msg, "outside the run's m=128, vstages=16");
    CHECK_EQ_INT(t->ops->send(t, 0, &big_vs, &b, 1, &err), PPS_EINVAL);
    CHECK_EQ_INT(t->ops->recv(t, 0, &neg, &b, 1, &err), PPS_EINVAL);
    CHECK_EQ_INT(t->ops->send(t, 0, &kind, &b, 1, &err), PPS_EINVAL);
    CHECK_EQ_INT(t->ops->send(t, world_size, &neg, &b, 1, &err), PPS_EINVAL);
    CHECK_EQ_INT(t->ops->poll(t, 0, &big_mb), 1); /* recv would fail at once */
    /* Iterations far past the tag's iteration bits wrap and still match. */
    struct pps_msg_tag late = tag_of(PPS_MSG_CTRL, 2000000000, RUN_M - 1, RUN_VSTAGES - 1);
    int v = my_rank;
    CHECK_EQ_INT(t->ops->send(t, next_rank(my_rank), &late, &v, sizeof(v), &err), 0);
    CHECK_EQ_INT(t->ops->recv(t, prev_rank(my_rank), &late, &v, sizeof(v), &err), 0);
    CHECK_EQ_INT(v, prev_rank(my_rank));
    close_transport(t);
}

/* ---- point to point ---------------------------------------------------------------------- */

static void test_matched_by_tag_out_of_order(void)
{
    struct pps_transport *t = open_transport();
    static const int order[] = {3, 1, 4, 0, 2};
    struct pps_err err = {0, ""};
    int v, from = prev_rank(my_rank);

    for (int i = 0; i < 5; i++) {
        struct pps_msg_tag act = tag_of(PPS_MSG_ACT, 7, i, 1);
        struct pps_msg_tag grad = tag_of(PPS_MSG_GRAD, 7, i, 1);
        v = my_rank * 1000 + 100 + i;
        CHECK_EQ_INT(t->ops->send(t, next_rank(my_rank), &act, &v, sizeof(v), &err), 0);
        v = my_rank * 1000 + 200 + i;
        CHECK_EQ_INT(t->ops->send(t, next_rank(my_rank), &grad, &v, sizeof(v), &err), 0);
    }
    for (int k = 0; k < 5; k++) {
        int i = order[k];
        struct pps_msg_tag grad = tag_of(PPS_MSG_GRAD, 7, i, 1);
        struct pps_msg_tag act = tag_of(PPS_MSG_ACT, 7, i, 1);
        CHECK_EQ_INT(t->ops->recv(t, from, &grad, &v, sizeof(v), &err), 0);
        CHECK_EQ_INT(v, from * 1000 + 200 + i);
        CHECK_EQ_INT(t->ops->recv(t, from, &act, &v, sizeof(v), &err), 0);
        CHECK_EQ_INT(v, from * 1000 + 100 + i);
    }
    close_transport(t);
}

#define MANY 10000

/* Every rank sends 10,000 messages to the next, some past the eager limit, and only then, after
 * a barrier that every rank reaches only once all its sends have returned, receives any: newest
 * first. A send that waited for its receive would deadlock here. */
static void test_many_in_flight_without_blocking(void)
{
    struct pps_transport *t = open_transport();
    unsigned char *buf = malloc(300 * 1024);
    struct pps_err err = {0, ""};
    int rc = 0, bad = 0, from = prev_rank(my_rank);

    if (!buf) {
        fprintf(stderr, "  out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (int i = 0; i < MANY && !rc; i++) {
        struct pps_msg_tag tag = tag_of(PPS_MSG_ACT, i / RUN_M, i % RUN_M, 1);
        fill_payload(buf, my_rank, i);
        rc = t->ops->send(t, next_rank(my_rank), &tag, buf, payload_len(i), &err);
    }
    CHECK_EQ_INT(rc, 0);
    CHECK_EQ_INT(t->ops->barrier(t, &err), 0);
    for (int i = MANY - 1; i >= 0; i--) {
        struct pps_msg_tag tag = tag_of(PPS_MSG_ACT, i / RUN_M, i % RUN_M, 1);
        memset(buf, 0, payload_len(i));
        if (t->ops->recv(t, from, &tag, buf, payload_len(i), &err) != 0 ||
            !payload_ok(buf, from, i))
            bad++;
    }
    CHECK_EQ_INT(bad, 0);
    free(buf);
    close_transport(t);
}

/* Every rank sends the same tag to rank 1 (rank 1 to itself too); rank 1 receives them newest
 * rank first. Rank 0's went out before a barrier, so it has usually arrived by the time rank 1
 * asks for the last rank's: matching by tag alone would hand it over. */
static void test_recv_from_the_right_peer_only(void)
{
    struct pps_transport *t = open_transport();
    struct pps_msg_tag tag = tag_of(PPS_MSG_GRAD, 3, 2, 1);
    struct pps_msg_tag nobody = tag_of(PPS_MSG_GRAD, 3, 2, 2);
    struct pps_err err = {0, ""};
    int v = my_rank * 1000 + 7;

    if (my_rank == 0)
        CHECK_EQ_INT(t->ops->send(t, 1, &tag, &v, sizeof(v), &err), 0);
    CHECK_EQ_INT(t->ops->barrier(t, &err), 0);
    if (my_rank != 0)
        CHECK_EQ_INT(t->ops->send(t, 1, &tag, &v, sizeof(v), &err), 0);
    if (my_rank == 1) {
        for (int r = world_size - 1; r >= 0; r--) {
            v = -1;
            CHECK_EQ_INT(t->ops->recv(t, r, &tag, &v, sizeof(v), &err), 0);
            CHECK_EQ_INT(v, r * 1000 + 7);
        }
        for (int r = 0; r < world_size; r++)
            CHECK_EQ_INT(t->ops->poll(t, r, &nobody), 0);
    }
    close_transport(t);
}

/* Gives up on a poll loop that never ends, so that a broken poll fails instead of hanging. */
static int poll_until_ready(struct pps_transport *t, int src, const struct pps_msg_tag *tag)
{
    time_t give_up = time(NULL) + 60;

    while (!t->ops->poll(t, src, tag))
        if (time(NULL) > give_up)
            return 0;
    return 1;
}

static void test_poll_says_when_recv_would_not_block(void)
{
    struct pps_transport *t = open_transport();
    struct pps_msg_tag tag = tag_of(PPS_MSG_ACT, 0, 5, 3);
    struct pps_err err = {0, ""};
    int v = 0;

    /* Rank 0 sends only after the barrier, which rank 1 has not passed yet. */
    if (my_rank == 1)
        CHECK_EQ_INT(t->ops->poll(t, 0, &tag), 0);
    CHECK_EQ_INT(t->ops->barrier(t, &err), 0);
    if (my_rank == 0) {
        v = 31;
        CHECK_EQ_INT(t->ops->send(t, 1, &tag, &v, sizeof(v), &err), 0);
    } else if (my_rank == 1) {
        CHECK(poll_until_ready(t, 0, &tag));
        CHECK_EQ_INT(t->ops->recv(t, 0, &tag, &v, sizeof(v), &err), 0);
        CHECK_EQ_INT(v, 31);
        CHECK_EQ_INT(t->ops->poll(t, 0, &tag), 0);
    }
    close_transport(t);
}

static void test_payload_to_self_and_empty(void)
{
    struct pps_transport *t = open_transport();
    struct pps_msg_tag big = tag_of(PPS_MSG_ACT, 0, 0, 1);
    struct pps_msg_tag empty = tag_of(PPS_MSG_CTRL, 0, 0, 1);
    size_t n = 1 << 20;
    float *src = malloc(n * sizeof(float)), *dst = malloc(n * sizeof(float));
    struct pps_err err = {0, ""};
    int bad = 0;

    if (!src || !dst) {
        fprintf(stderr, "  out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (size_t i = 0; i < n; i++)
        src[i] = (float)i * 0.25f + (float)my_rank;
    CHECK_EQ_INT(t->ops->send(t, my_rank, &big, src, n * sizeof(float), &err), 0);
    CHECK_EQ_INT(t->ops->send(t, my_rank, &empty, NULL, 0, &err), 0);
    memset(src, 0xff, n * sizeof(float)); /* the sender's buffer is its own again */
    CHECK_EQ_INT(t->ops->recv(t, my_rank, &empty, NULL, 0, &err), 0);
    CHECK_EQ_INT(t->ops->recv(t, my_rank, &big, dst, n * sizeof(float), &err), 0);
    for (size_t i = 0; i < n; i++)
        bad += dst[i] != (float)i * 0.25f + (float)my_rank;
    CHECK_EQ_INT(bad, 0);
    free(src);
    free(dst);
    close_transport(t);
}

static void test_wrong_size_is_refused(void)
{
    struct pps_transport *t = open_transport();
    struct pps_msg_tag a = tag_of(PPS_MSG_ACT, 1, 2, 1);
    struct pps_msg_tag b = tag_of(PPS_MSG_ACT, 1, 3, 1);
    struct pps_err err = {0, ""};
    double d[4] = {1, 2, 3, 4};

    if (my_rank == 0) {
        CHECK_EQ_INT(t->ops->send(t, 1, &a, d, 2 * sizeof(double), &err), 0);
        CHECK_EQ_INT(t->ops->send(t, 1, &b, d, 2 * sizeof(double), &err), 0);
    } else if (my_rank == 1) {
        CHECK_EQ_INT(t->ops->recv(t, 0, &a, d, sizeof(double), &err), PPS_EINVAL);
        CHECK_STR_CONTAINS(err.msg, "is larger than the 8 bytes stage 1 expected");
        CHECK_EQ_INT(t->ops->recv(t, 0, &b, d, 4 * sizeof(double), &err), PPS_EINVAL);
        CHECK_STR_CONTAINS(err.msg, "is 16 bytes, stage 1 expected 32");
    }
    close_transport(t);
}

/* ---- collectives ------------------------------------------------------------------------- */

#define RED_N      8
#define RED_ROUNDS 100

/* Rank s's j-th value in round r: magnitudes far apart, so the sum depends on the order. */
static double red_value(int s, int j, int r)
{
    static const double v[4] = {1e16, -1e16, 1.0, 3.0};
    return v[(s + j) % 4] * (1.0 + (double)r / 1024.0) + (double)(j % 3);
}

static double red_in_order(int j, int r)
{
    double sum = red_value(0, j, r);
    for (int s = 1; s < world_size; s++)
        sum += red_value(s, j, r);
    return sum;
}

/* Whether the values catch a sum in any other order of p ranks: every permutation but those
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
            differs = sum != red_in_order(j, 0);
        }
        if (!differs)
            return 0;
    }
    return 1;
}

static void test_allreduce_in_rank_order_on_every_rank(void)
{
    struct pps_transport *t = open_transport();
    struct pps_err err = {0, ""};
    int bad = 0;

    /* With 2 ranks no values can tell (a + b == b + a); from 3 on, they catch any other order. */
    if (world_size <= 4)
        CHECK(every_other_order_differs(world_size));
    for (int r = 0; r < RED_ROUNDS; r++) {
        double x[RED_N];
        for (int j = 0; j < RED_N; j++)
            x[j] = red_value(my_rank, j, r);
        CHECK_EQ_INT(t->ops->allreduce_sum(t, x, RED_N, &err), 0);
        for (int j = 0; j < RED_N; j++) {
            double want = red_in_order(j, r);
            bad += memcmp(&x[j], &want, sizeof(want)) != 0;
        }
    }
    CHECK_EQ_INT(bad, 0);
    CHECK_EQ_INT(t->ops->allreduce_sum(t, NULL, 0, &err), 0);
    close_transport(t);
}

/* Each rank creates a file before the barrier; after it, every rank finds every rank's. */
static void test_barrier_waits_for_every_rank(void)
{
    const char *dir = getenv("PPS_TEST_RUN_DIR");
    struct pps_transport *t;
    struct pps_err err = {0, ""};
    char path[4096];
    int missing = 0;

    if (!dir)
        TEST_SKIP("PPS_TEST_RUN_DIR is not set");
    t = open_transport();
    for (int round = 0; round < 20; round++) {
        snprintf(path, sizeof(path), "%s/barrier-%d-%d", dir, round, my_rank);
        FILE *f = fopen(path, "w");
        CHECK(f != NULL);
        if (f)
            fclose(f);
        CHECK_EQ_INT(t->ops->barrier(t, &err), 0);
        for (int r = 0; r < world_size; r++) {
            snprintf(path, sizeof(path), "%s/barrier-%d-%d", dir, round, r);
            missing += access(path, F_OK) != 0;
        }
    }
    CHECK_EQ_INT(missing, 0);
    close_transport(t);
}

/* ---- a rank that dies ----------------------------------------------------------------------- */

/* Rank 1 exits without sending (and without MPI_Finalize); rank 0 waits for its message. */
static int peer_exit(void)
{
    struct pps_transport *t = open_transport();
    struct pps_msg_tag tag = tag_of(PPS_MSG_GRAD, 0, 0, 0);
    struct pps_err err = {0, ""};
    int v, rc;

    if (t->ops->barrier(t, &err) != 0) {
        fprintf(stderr, "rank %d: barrier: %s\n", my_rank, err.msg);
        return 1;
    }
    if (my_rank != 0) {
        fprintf(stderr, "rank %d: exiting without sending\n", my_rank);
        fflush(stderr);
        _exit(3);
    }
    rc = t->ops->recv(t, 1, &tag, &v, sizeof(v), &err);
    printf("rank 0: recv returned %d: %s\n", rc, rc ? err.msg : "(a message nobody sent)");
    fflush(stdout);
    /* Nothing else can be trusted now: leave without the collective frees. */
    _exit(rc == PPS_EPEER ? 4 : 1);
}

/* Rank 1 fails and says so through pps_transport_mpi_abort(); rank 0 waits for its message. */
static int peer_abort(void)
{
    struct pps_transport *t = open_transport();
    struct pps_msg_tag tag = tag_of(PPS_MSG_GRAD, 0, 0, 0);
    struct pps_err err = {0, ""};
    int v, rc;

    if (t->ops->barrier(t, &err) != 0) {
        fprintf(stderr, "rank %d: barrier: %s\n", my_rank, err.msg);
        return 1;
    }
    if (my_rank != 0) {
        rc = pps_transport_mpi_abort(t, "injected failure");
        fprintf(stderr, "rank %d: pps_transport_mpi_abort returned %d\n", my_rank, rc);
        _exit(1);
    }
    rc = t->ops->recv(t, 1, &tag, &v, sizeof(v), &err);
    printf("rank 0: recv returned %d: %s\n", rc, rc ? err.msg : "(a message nobody sent)");
    fflush(stdout);
    _exit(1);
}

static const struct test_case cases[] = {
    TEST(test_stage_is_rank),
    TEST(test_tag_limits),
    TEST(test_matched_by_tag_out_of_order),
    TEST(test_many_in_flight_without_blocking),
    TEST(test_recv_from_the_right_peer_only),
    TEST(test_poll_says_when_recv_would_not_block),
    TEST(test_payload_to_self_and_empty),
    TEST(test_wrong_size_is_refused),
    TEST(test_allreduce_in_rank_order_on_every_rank),
    TEST(test_barrier_waits_for_every_rank),
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    int rc;

    if (MPI_Init(&argc, &argv) != MPI_SUCCESS) {
        fprintf(stderr, "MPI_Init failed\n");
        return 1;
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &my_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world_size);
    if (world_size < 2) {
        fprintf(stderr, "run me with at least 2 ranks (tests/cli/transport_mpi.sh)\n");
        MPI_Finalize();
        return 1;
    }
    if (argc > 1 && strcmp(argv[1], "peer_exit") == 0)
        rc = peer_exit();
    else if (argc > 1 && strcmp(argv[1], "peer_abort") == 0)
        rc = peer_abort();
    else
        rc = test_main(cases, argc, argv);
    MPI_Finalize();
    return rc;
}

#else /* !PPS_HAVE_MPI */

int main(void)
{
    struct pps_transport *t = (struct pps_transport *)1;
    struct pps_err err = {0, ""};

    CHECK_EQ_INT(pps_transport_mpi_new(NULL, 1, 1, &t, &err), PPS_EINVAL);
    CHECK(t == NULL);
    CHECK_STR_CONTAINS(err.msg, "built without MPI");
    CHECK_EQ_INT(pps_transport_mpi_abort(NULL, "x"), PPS_EINVAL);
    if (test_failures_)
        return 1;
    fprintf(stderr, "skipped: ppscope was built without MPI\n");
    return 77;
}

#endif
