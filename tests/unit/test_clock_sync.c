/*
 * test_clock_sync.c - clock offsets between MPI ranks, measured by pps__clock_sync() and used by
 * the tracer and the reader. An MPI program, run by tests/cli/clock_sync_mpi.sh as two ranks on
 * one machine, one of which fakes a clock that is off by a known amount (PPSCOPE_CLOCK_SKEW_NS
 * in its environment only). Since the ranks share the machine's real clock, the true offset of
 * rank r to rank 0 is skew(0) - skew(r), and a measurement must find it within half its round
 * trip. Environment:
 *
 *   PPS_TEST_SKEW_NS   the skew the script gave the ranks other than 0: each checks that its
 *                      tracer clock really carries it, so the test cannot pass on two equal clocks
 *   PPS_TEST_RUN_DIR   where the tracer case writes its run (the case skips without it)
 *
 * Built without MPI, only the "built without MPI" error is checked and the rest skips.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pps_config.h"
#include "storage.h"
#include "test.h"
#include "tracer_int.h"
#include "tsc.h"

#ifdef PPS_HAVE_MPI

#include <mpi.h>

/* How far apart two ranks may leave one MPI_Barrier, on a loaded two-core machine. Ten times
 * smaller than the skew the script fakes (250 ms), so unaligned clocks still fail. */
#define BARRIER_SLACK_NS 25000000

static int my_rank, world_size;

/* MPI_Init on first use, so that the case before it sees MPI uninitialised. */
static void ensure_mpi(void)
{
    int inited = 0;

    MPI_Initialized(&inited);
    if (!inited) {
        if (MPI_Init(NULL, NULL) != MPI_SUCCESS) {
            fprintf(stderr, "MPI_Init failed\n");
            exit(1);
        }
        MPI_Comm_rank(MPI_COMM_WORLD, &my_rank);
        MPI_Comm_size(MPI_COMM_WORLD, &world_size);
    }
}

static int64_t llabs64(int64_t v)
{
    return v < 0 ? -v : v;
}

/* How far a measured offset may be from the truth: half its round trip (+1: the midpoint
 * (t0 + t2) / 2 is rounded to a whole nanosecond), and where the ranks stamp with the TSC, each
 * rank's line from ticks to CLOCK_MONOTONIC may be off by up to 1 us of its own (tsc.h; the
 * bound test_tsc holds it to), so two ranks' clocks by up to 2 us more than the skew says. */
static int64_t offset_bound(int64_t rtt_ns)
{
    return rtt_ns / 2 + 1 + (pps__tsc_on ? 2000 : 0);
}

/* Every rank's skew, as its tracer clock carries it; skews[0] is rank 0's. */
static int64_t *gather_skews(void)
{
    int64_t *skews = calloc((size_t)world_size, sizeof(*skews));

    if (!skews || MPI_Allgather(&pps__clock_skew_ns, 1, MPI_INT64_T, skews, 1, MPI_INT64_T,
                                MPI_COMM_WORLD) != MPI_SUCCESS) {
        fprintf(stderr, "  rank %d: cannot gather the skews\n", my_rank);
        exit(1);
    }
    return skews;
}

/* A rank other than 0 must carry the skew the script gave it, or the test proves nothing. */
static void check_skew_applied(void)
{
    const char *want = getenv("PPS_TEST_SKEW_NS");

    if (my_rank != 0 && want)
        CHECK_EQ_INT(pps__clock_skew_ns, strtoll(want, NULL, 10));
}

static void test_sync_before_mpi_init(void)
{
    struct pps__clock_sample s = {7, 7, 7};
    struct pps_err err = {0, ""};
    int inited = 0;

    MPI_Initialized(&inited);
    if (inited)
        TEST_SKIP("MPI is already initialised (run this case first, or alone)");
    CHECK_EQ_INT(pps__clock_sync(&s, &err), PPS_EINVAL);
    CHECK_EQ_INT(err.code, PPS_EINVAL);
    CHECK_STR_CONTAINS(err.msg, "clock sync needs MPI to be initialised");
    CHECK(s.offset_ns == 7 && s.rtt_ns == 7 && s.at_ns == 7);
}

/* The offset is found within half the round trip; rank 0's is 0. */
static void test_sync_finds_the_skew(void)
{
    struct pps__clock_sample s;
    struct pps_err err = {0, ""};
    int64_t *skews, before, after;

    ensure_mpi();
    pps__clock_skew_init();
    check_skew_applied();
    skews = gather_skews();
    before = pps_trace_now();
    CHECK_EQ_INT(pps__clock_sync(&s, &err), 0);
    after = pps_trace_now();
    if (err.code)
        fprintf(stderr, "  rank %d: %s\n", my_rank, err.msg);
    printf("rank %d: skew %lld ns, offset %lld ns, rtt %lld ns\n", my_rank,
           (long long)pps__clock_skew_ns, (long long)s.offset_ns, (long long)s.rtt_ns);
    if (my_rank == 0) {
        CHECK_EQ_INT(s.offset_ns, 0);
        CHECK_EQ_INT(s.rtt_ns, 0);
    } else {
        int64_t truth = skews[0] - skews[my_rank];

        CHECK(s.rtt_ns > 0);
        CHECK(llabs64(s.offset_ns - truth) <= offset_bound(s.rtt_ns));
    }
    CHECK(s.at_ns >= before && s.at_ns <= after);
    free(skews);
}

/* Repeated syncs agree with each other within their bounds (and each frees its communicator:
 * a leak would run out of communicators long before a real job's two syncs a run). */
static void test_sync_repeats(void)
{
    struct pps__clock_sample first, s;
    struct pps_err err = {0, ""};

    ensure_mpi();
    pps__clock_skew_init();
    CHECK_EQ_INT(pps__clock_sync(&first, &err), 0);
    for (int i = 0; i < 200; i++) {
        CHECK_EQ_INT(pps__clock_sync(&s, &err), 0);
        if (err.code) {
            fprintf(stderr, "  rank %d: %s\n", my_rank, err.msg);
            break;
        }
        if (llabs64(s.offset_ns - first.offset_ns) >
            offset_bound(s.rtt_ns) + offset_bound(first.rtt_ns)) {
            fprintf(stderr,
                    "  rank %d: sync %d found %lld ns (rtt %lld), the first %lld (rtt %lld)\n",
                    my_rank, i, (long long)s.offset_ns, (long long)s.rtt_ns,
                    (long long)first.offset_ns, (long long)first.rtt_ns);
            test_failures_++;
            break;
        }
    }
}

/* The sync's messages never meet the program's: a receive the program has posted for any source
 * and any tag on MPI_COMM_WORLD during the sync still gets the program's own message after it. */
static void test_sync_leaves_user_traffic_alone(void)
{
    struct pps__clock_sample s;
    struct pps_err err = {0, ""};
    MPI_Request req;
    int64_t got = -1, mine;

    ensure_mpi();
    mine = 1000 + my_rank;
    CHECK_EQ_INT(MPI_Irecv(&got, 1, MPI_INT64_T, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &req),
                 MPI_SUCCESS);
    CHECK_EQ_INT(pps__clock_sync(&s, &err), 0);
    CHECK_EQ_INT(MPI_Send(&mine, 1, MPI_INT64_T, (my_rank + 1) % world_size, 99, MPI_COMM_WORLD),
                 MPI_SUCCESS);
    CHECK_EQ_INT(MPI_Wait(&req, MPI_STATUS_IGNORE), MPI_SUCCESS);
    CHECK_EQ_INT(got, 1000 + (my_rank + world_size - 1) % world_size);
}

/* Rank `rank`'s integer meta key, or fails the case. */
static int64_t meta_int(const struct pps_run *run, int rank, const char *key)
{
    for (size_t i = 0; i < run->n_meta; i++)
        if (run->meta[i].rank == rank && strcmp(run->meta[i].key, key) == 0)
            return strtoll(run->meta[i].value, NULL, 10);
    fprintf(stderr, "  rank %d has no meta %s\n", rank, key);
    test_failures_++;
    return 0;
}

/* The F span of microbatch 0 on stage `stage`, after loading (aligned), or NULL. */
static const struct pps_span *marker_span(const struct pps_run *run, int stage)
{
    if (stage >= run->n_stages)
        return NULL;
    for (size_t i = 0; i < run->stages[stage].n; i++) {
        const struct pps_span *sp = &run->stages[stage].spans[i];
        if (sp->kind == PPS_SPAN_F && sp->mb == 0)
            return sp;
    }
    return NULL;
}

/* Rank 0's checks of the run the ranks wrote: stored offsets and aligned spans. */
static void check_run(const char *dir, const int64_t *skews, const int64_t *raw)
{
    struct pps_run *run = NULL;
    struct pps_err err = {0, ""};
    const struct pps_span *sp0;

    if (pps_run_load(dir, &run, &err) != 0) {
        fprintf(stderr, "  %s\n", err.msg);
        test_failures_++;
        return;
    }
    CHECK_EQ_INT(run->n_shards, world_size);
    CHECK_EQ_INT(run->complete, 1);
    sp0 = marker_span(run, 0);
    CHECK(sp0 != NULL);
    for (int r = 1; r < world_size && sp0; r++) {
        const struct pps_span *sp = marker_span(run, r);
        int64_t truth = skews[0] - skews[r];
        int64_t off = meta_int(run, r, "clock_offset_start_ns");
        int64_t rtt = meta_int(run, r, "clock_rtt_start_ns");
        int64_t off_end = meta_int(run, r, "clock_offset_end_ns");
        int64_t rtt_end = meta_int(run, r, "clock_rtt_end_ns");

        printf("rank %d in the run: offset %lld ns (rtt %lld) at open, %lld ns (rtt %lld) at "
               "close, truth %lld ns\n",
               r, (long long)off, (long long)rtt, (long long)off_end, (long long)rtt_end,
               (long long)truth);
        CHECK(rtt > 0 && llabs64(off - truth) <= offset_bound(rtt));
        CHECK(rtt_end > 0 && llabs64(off_end - truth) <= offset_bound(rtt_end));
        CHECK(sp != NULL);
        if (!sp)
            continue;
        printf("rank %d marker: raw %+lld ns from rank 0's, aligned %+lld ns\n", r,
               (long long)(raw[r] - raw[0]), (long long)(sp->start_ns - sp0->start_ns));
        /* Raw, the clocks are the skew apart; aligned, the ranks left the barrier together. */
        CHECK(llabs64(raw[r] - raw[0] + truth) <= BARRIER_SLACK_NS);
        CHECK(llabs64(sp->start_ns - sp0->start_ns) <= BARRIER_SLACK_NS + offset_bound(rtt));
    }
    pps_run_free(run);
}

/* The whole path: tracers with clock_sync on one run, a span just after a barrier on each, the
 * run loaded back with every rank on rank 0's clock. */
static void test_tracer_aligns_ranks(void)
{
    const char *dir = getenv("PPS_TEST_RUN_DIR");
    struct pps_trace_options o;
    struct pps_tracer *t = NULL;
    struct pps_err err = {0, ""};
    int64_t *skews = NULL, *raw = NULL, start;
    int ok, all_ok;

    if (!dir)
        TEST_SKIP("PPS_TEST_RUN_DIR is not set");
    ensure_mpi();
    pps_trace_options_init(&o);
    o.run_dir = dir;
    o.clock_sync = 1; /* rank and world: -1, from Open MPI's environment */
    ok = pps_trace_open(&o, &t, &err) == 0;
    if (!ok)
        fprintf(stderr, "  rank %d: %s\n", my_rank, err.msg);
    /* Everyone must agree to go on: a rank alone in a collective would hang the test. */
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    CHECK(all_ok);
    if (!all_ok) {
        pps_trace_close(t, NULL);
        return;
    }
    check_skew_applied();
    skews = gather_skews();
    raw = calloc((size_t)world_size, sizeof(*raw));
    CHECK(raw != NULL);

    pps_trace_meta(t, "schedule", "1f1b");
    pps_trace_meta_int(t, "p", world_size);
    pps_trace_meta_int(t, "m", 1);
    pps_trace_iteration(t, 0);
    MPI_Barrier(MPI_COMM_WORLD);
    start = pps_trace_now();
    pps_trace_record(t, PPS_TRACE_F, my_rank, 0, 0, start, start + 1000000);
    CHECK_EQ_INT(pps_trace_close(t, &err), 0);
    if (err.code)
        fprintf(stderr, "  rank %d: %s\n", my_rank, err.msg);
    MPI_Gather(&start, 1, MPI_INT64_T, raw, 1, MPI_INT64_T, 0, MPI_COMM_WORLD);
    if (my_rank == 0 && raw)
        check_run(dir, skews, raw);
    MPI_Barrier(MPI_COMM_WORLD);
    free(skews);
    free(raw);
}

static const struct test_case cases[] = {
    TEST(test_sync_before_mpi_init), TEST(test_sync_finds_the_skew),
    TEST(test_sync_repeats),         TEST(test_sync_leaves_user_traffic_alone),
    TEST(test_tracer_aligns_ranks),  {NULL, NULL},
};

int main(int argc, char **argv)
{
    int rc = test_main(cases, argc, argv), inited = 0, finalized = 0;

    MPI_Initialized(&inited);
    MPI_Finalized(&finalized);
    if (inited && !finalized)
        MPI_Finalize();
    return rc;
}

#else /* !PPS_HAVE_MPI */

static void test_sync_without_mpi(void)
{
    struct pps__clock_sample s = {7, 7, 7};
    struct pps_err err = {0, ""};

    CHECK_EQ_INT(pps__clock_sync(&s, &err), PPS_EINVAL);
    CHECK_STR_CONTAINS(err.msg, "this ppscope was built without MPI (PPS_WITH_MPI)");
    CHECK(s.offset_ns == 7 && s.rtt_ns == 7 && s.at_ns == 7);
}

static const struct test_case cases[] = {
    TEST(test_sync_without_mpi),
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    return test_main(cases, argc, argv);
}

#endif
