/*
 * test_devmap.c - device records into op spans (tracer/devmap.c), with records made up here in
 * the orders CUPTI may deliver them: the op's external correlation first (the usual case), the
 * kernel first (it waits, then finds its op), a kernel whose call ran outside every op (written
 * unattributed after waiting), a memset and copies, several tracers' slots, and the packing's
 * range limits.
 */
#include <stdlib.h>
#include <string.h>

#include "devmap.h"
#include "test.h"

struct got {
    int n;
    int slot[16];
    struct pps_span span[16];
    char name[16][32];
};

static void collect(void *ctx, int slot, const struct pps_span *s, const char *name)
{
    struct got *g = ctx;
    CHECK(g->n < 16);
    g->slot[g->n] = slot;
    g->span[g->n] = *s;
    snprintf(g->name[g->n], sizeof(g->name[0]), "%s", name);
    g->n++;
}

static struct pps__devrec ext(uint32_t corr, uint64_t op)
{
    struct pps__devrec r = {.type = PPS__DEVREC_EXTERNAL, .corr = corr, .ext = op};
    return r;
}

static struct pps__devrec kernel(uint32_t corr, int64_t t0, int64_t t1, const char *name)
{
    struct pps__devrec r = {
        .type = PPS__DEVREC_KERNEL, .corr = corr, .start_ns = t0, .end_ns = t1, .name = name};
    return r;
}

static void test_pack_round_trip_and_limits(void)
{
    int slot, kind, chunk, mb, iter;
    uint64_t x = pps__devop_pack(5, PPS_SPAN_W, 1, 37, 123456);

    CHECK(x >> 63);
    CHECK_EQ_INT(pps__devop_unpack(x, &slot, &kind, &chunk, &mb, &iter), 0);
    CHECK_EQ_INT(slot, 5);
    CHECK_EQ_INT(kind, PPS_SPAN_W);
    CHECK_EQ_INT(chunk, 1);
    CHECK_EQ_INT(mb, 37);
    CHECK_EQ_INT(iter, 123456);
    /* Unknowns and values past the fields' range come back as -1 (kind 0). */
    x = pps__devop_pack(PPS__DEVOP_SLOTS, 99, -1, 1 << 20, -1);
    CHECK_EQ_INT(pps__devop_unpack(x, &slot, &kind, &chunk, &mb, &iter), 0);
    CHECK_EQ_INT(slot, -1);
    CHECK_EQ_INT(kind, 0);
    CHECK_EQ_INT(chunk, -1);
    CHECK_EQ_INT(mb, -1);
    CHECK_EQ_INT(iter, -1);
    /* The largest values that fit. */
    x = pps__devop_pack(PPS__DEVOP_SLOTS - 1, 15, 254, (1 << 20) - 2, (1 << 24) - 2);
    CHECK_EQ_INT(pps__devop_unpack(x, &slot, &kind, &chunk, &mb, &iter), 0);
    CHECK_EQ_INT(slot, PPS__DEVOP_SLOTS - 1);
    CHECK_EQ_INT(chunk, 254);
    CHECK_EQ_INT(mb, (1 << 20) - 2);
    CHECK_EQ_INT(iter, (1 << 24) - 2);
    /* Not ours: bit 63 clear. */
    CHECK_EQ_INT(pps__devop_unpack(12345, &slot, &kind, &chunk, &mb, &iter), -1);
    /* The span corr keeps the op, not the slot: two tracers' same op give the same corr. */
    CHECK(pps__devop_corr(pps__devop_pack(1, 1, 0, 2, 3)) ==
          pps__devop_corr(pps__devop_pack(2, 1, 0, 2, 3)));
    CHECK(pps__devop_corr(pps__devop_pack(1, 1, 0, 2, 3)) > 0);
}

static void test_external_first_then_kernel(void)
{
    struct pps__devmap *m = pps__devmap_new();
    struct got g = {0};
    uint64_t op = pps__devop_pack(3, PPS_SPAN_F, 0, 4, 7);
    struct pps__devrec e = ext(100, op), k = kernel(100, 1000, 1500, "gemm");

    CHECK(m != NULL);
    pps__devmap_record(m, &e, collect, &g);
    CHECK_EQ_INT(g.n, 0);
    pps__devmap_record(m, &k, collect, &g);
    CHECK_EQ_INT(g.n, 1);
    CHECK_EQ_INT(g.slot[0], 3);
    CHECK_EQ_INT(g.span[0].kind, PPS_SPAN_KERNEL);
    CHECK_EQ_INT(g.span[0].mb, 4);
    CHECK_EQ_INT(g.span[0].iter, 7);
    CHECK_EQ_INT(g.span[0].chunk, 0);
    CHECK(g.span[0].start_ns == 1000 && g.span[0].end_ns == 1500);
    CHECK(g.span[0].corr == pps__devop_corr(op));
    CHECK_EQ_INT(g.span[0].clock, PPS_CLOCK_HOST);
    CHECK(strcmp(g.name[0], "gemm") == 0);
    /* A second kernel of the same call (a graph, a library's several launches under one API
     * call) finds the same op. */
    k = kernel(100, 1600, 1700, "gemm_epilogue");
    pps__devmap_record(m, &k, collect, &g);
    CHECK_EQ_INT(g.n, 2);
    CHECK_EQ_INT(g.slot[1], 3);
    CHECK(m->unattributed == 0);
    pps__devmap_free(m);
}

static void test_kernel_first_waits_for_its_op(void)
{
    struct pps__devmap *m = pps__devmap_new();
    struct got g = {0};
    char name[8] = "relu";
    struct pps__devrec k = kernel(200, 10, 20, name), e;

    pps__devmap_record(m, &k, collect, &g);
    CHECK_EQ_INT(g.n, 0);
    /* The record's name was copied: the buffer it came from is gone by the time it is written. */
    strcpy(name, "XXXX");
    e = ext(200, pps__devop_pack(0, PPS_SPAN_B, 1, 2, 3));
    pps__devmap_record(m, &e, collect, &g);
    pps__devmap_drain_end(m, 0, 0, collect, &g);
    CHECK_EQ_INT(g.n, 1);
    CHECK_EQ_INT(g.slot[0], 0);
    CHECK_EQ_INT(g.span[0].mb, 2);
    CHECK(strcmp(g.name[0], "relu") == 0);
    CHECK(m->n_pending == 0);
    pps__devmap_free(m);
}

static void test_kernel_outside_every_op_is_written_unattributed(void)
{
    struct pps__devmap *m = pps__devmap_new();
    struct got g = {0};
    struct pps__devrec k = kernel(300, 5, 9, "init");

    pps__devmap_record(m, &k, collect, &g);
    /* It waits for its call from the first drain that sees it, however many drains come. */
    for (int d = 0; d < 10; d++) {
        pps__devmap_drain_end(m, 1000 + d, 0, collect, &g);
        CHECK_EQ_INT(g.n, 0);
    }
    pps__devmap_drain_end(m, 1000 + PPS__DEVMAP_PATIENCE_NS - 1, 0, collect, &g);
    CHECK_EQ_INT(g.n, 0);
    pps__devmap_drain_end(m, 1000 + PPS__DEVMAP_PATIENCE_NS, 0, collect, &g);
    CHECK_EQ_INT(g.n, 1);
    CHECK_EQ_INT(g.slot[0], -1);
    CHECK_EQ_INT(g.span[0].iter, -1);
    CHECK_EQ_INT(g.span[0].mb, -1);
    CHECK(g.span[0].corr == 0);
    CHECK(m->unattributed == 1);
    /* At close (force), whatever waits is written at once. */
    k = kernel(301, 5, 9, "late");
    pps__devmap_record(m, &k, collect, &g);
    pps__devmap_drain_end(m, 0, 1, collect, &g);
    CHECK_EQ_INT(g.n, 2);
    pps__devmap_free(m);
}

static void test_copies_and_memsets(void)
{
    struct pps__devmap *m = pps__devmap_new();
    struct got g = {0};
    struct pps__devrec e = ext(400, pps__devop_pack(1, PPS_SPAN_F, 0, 0, 0));
    struct pps__devrec c = {.type = PPS__DEVREC_MEMCPY,
                            .corr = 400,
                            .start_ns = 1,
                            .end_ns = 2,
                            .bytes = 4096,
                            .copy = "memcpy DtoD"};
    struct pps__devrec s = {
        .type = PPS__DEVREC_MEMSET, .corr = 400, .start_ns = 3, .end_ns = 4, .bytes = 64};

    pps__devmap_record(m, &e, collect, &g);
    pps__devmap_record(m, &c, collect, &g);
    pps__devmap_record(m, &s, collect, &g);
    CHECK_EQ_INT(g.n, 2);
    CHECK_EQ_INT(g.span[0].kind, PPS_SPAN_MEMCPY);
    CHECK(g.span[0].bytes == 4096);
    CHECK(strcmp(g.name[0], "memcpy DtoD") == 0);
    CHECK_EQ_INT(g.span[1].kind, PPS_SPAN_MEMCPY);
    CHECK(g.span[1].bytes == 64);
    CHECK(strcmp(g.name[1], "memset") == 0);
    /* A kernel's bytes are 0, a negative count is 0, an end before the start is the start. */
    c = kernel(400, 50, 40, "k");
    c.bytes = 7;
    pps__devmap_record(m, &c, collect, &g);
    CHECK(g.span[2].bytes == 0 && g.span[2].end_ns == 50);
    pps__devmap_free(m);
}

/* Two tracers of one process (two stages as threads): each record goes to its op's slot. */
static void test_slots_route_records(void)
{
    struct pps__devmap *m = pps__devmap_new();
    struct got g = {0};

    for (int s = 0; s < 2; s++) {
        struct pps__devrec e = ext(500 + s, pps__devop_pack(s, PPS_SPAN_F, 0, s, 0));
        pps__devmap_record(m, &e, collect, &g);
    }
    for (int s = 1; s >= 0; s--) {
        struct pps__devrec k = kernel(500 + s, 0, 1, "k");
        pps__devmap_record(m, &k, collect, &g);
    }
    CHECK_EQ_INT(g.n, 2);
    CHECK_EQ_INT(g.slot[0], 1);
    CHECK_EQ_INT(g.span[0].mb, 1);
    CHECK_EQ_INT(g.slot[1], 0);
    CHECK_EQ_INT(g.span[1].mb, 0);
    pps__devmap_free(m);
}

/* A call forgotten (more than the ring's calls since) is not mistaken for the newer one in its
 * place: the kernel waits, then is written unattributed. */
static void test_ring_never_confuses_calls(void)
{
    struct pps__devmap *m = pps__devmap_new();
    struct got g = {0};
    struct pps__devrec e1 = ext(7, pps__devop_pack(0, PPS_SPAN_F, 0, 1, 0));
    struct pps__devrec e2 = ext(7 + PPS__DEVMAP_RING, pps__devop_pack(0, PPS_SPAN_F, 0, 2, 0));
    struct pps__devrec k = kernel(7, 0, 1, "old");

    pps__devmap_record(m, &e1, collect, &g);
    pps__devmap_record(m, &e2, collect, &g);
    pps__devmap_record(m, &k, collect, &g);
    CHECK_EQ_INT(g.n, 0);
    pps__devmap_drain_end(m, 0, 1, collect, &g);
    CHECK_EQ_INT(g.n, 1);
    CHECK_EQ_INT(g.span[0].mb, -1);
    pps__devmap_free(m);
}

static void count(void *ctx, int slot, const struct pps_span *s, const char *name)
{
    (*(size_t *)ctx)++;
}

/* More records waiting than there is room for: the rest are written at once, counted. */
static void test_pending_overflow_is_counted(void)
{
    struct pps__devmap *m = pps__devmap_new();
    size_t n = 0;

    for (uint32_t i = 0; i < PPS__DEVMAP_PENDING; i++) {
        struct pps__devrec k = kernel(1000 + i, 0, 1, "k");
        pps__devmap_record(m, &k, count, &n);
    }
    CHECK(n == 0);
    {
        struct pps__devrec k = kernel(999999, 0, 1, "one too many");
        pps__devmap_record(m, &k, count, &n);
    }
    CHECK(n == 1);
    CHECK(m->lost == 1);
    pps__devmap_drain_end(m, 0, 1, count, &n);
    CHECK(n == 1 + PPS__DEVMAP_PENDING);
    CHECK(m->n_pending == 0);
    pps__devmap_free(m);
}

static const struct test_case cases[] = {
    TEST(test_pack_round_trip_and_limits),
    TEST(test_external_first_then_kernel),
    TEST(test_kernel_first_waits_for_its_op),
    TEST(test_kernel_outside_every_op_is_written_unattributed),
    TEST(test_copies_and_memsets),
    TEST(test_slots_route_records),
    TEST(test_ring_never_confuses_calls),
    TEST(test_pending_overflow_is_counted),
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    return test_main(cases, argc, argv);
}
