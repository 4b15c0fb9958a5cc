/*
 * test_import_model.c - the importers' model of a trace (storage/import_model.c), fed events by
 * hand: device spans attributed to the op open on the launching thread (nested ops, ops that
 * overlap because their ends came late, a call outside any op, ids that collide across
 * processes or were forged to collide in the hash), NCCL kernels as communication, iterations
 * from marks and step ranges, the default stage, ranks from MPI thread names or file order, and
 * one write read back. Also the helpers the importers share: the id map (idmap.h) and the rule
 * that makes a kernel communication (import_int.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "import_model.h"
#include "test.h"

static struct pps__imodel m;
static struct pps_err err;

static void begin(const char *path)
{
    struct pps__file_info info;
    memset(&info, 0, sizeof(info));
    info.path = path;
    info.host = "";
    CHECK_EQ_INT(pps__imodel_file_begin(&m, &info, &err), 0);
}

/* A range (or a mark when end < 0) on thread tid of process pid. */
static void host(int pid, int tid, int64_t start, int64_t end, const char *text)
{
    struct pps__host_event ev;
    memset(&ev, 0, sizeof(ev));
    ev.what = end < 0 ? PPS__EV_MARK : PPS__EV_RANGE;
    ev.start = start;
    ev.end = end;
    ev.has_end = 1;
    ev.proc = pid;
    ev.pid = pid;
    ev.thread = (int64_t)pid << 24 | tid;
    ev.tid = tid;
    ev.text = text;
    ev.string_id = -1;
    CHECK_EQ_INT(pps__imodel_host(&m, &ev, &err), 0);
}

static void thread_name(int pid, int tid, const char *name)
{
    struct pps__host_event ev;
    memset(&ev, 0, sizeof(ev));
    ev.what = PPS__EV_THREAD_NAME;
    ev.proc = pid;
    ev.pid = pid;
    ev.thread = (int64_t)pid << 24 | tid;
    ev.tid = tid;
    ev.text = name;
    ev.string_id = -1;
    CHECK_EQ_INT(pps__imodel_host(&m, &ev, &err), 0);
}

static void kernel(int pid, int64_t start, int64_t end, int64_t corr, const char *name)
{
    struct pps__device_event ev;
    memset(&ev, 0, sizeof(ev));
    ev.kind = PPS__DEV_KERNEL;
    ev.start = start;
    ev.end = end;
    ev.corr = corr;
    ev.name = name;
    ev.string_id = -1;
    ev.proc = pid;
    ev.pid = pid;
    ev.has_proc = pid >= 0;
    CHECK_EQ_INT(pps__imodel_device(&m, &ev, &err), 0);
}

static void launch(int pid, int tid, int64_t at, int64_t corr)
{
    pps__imodel_launch(&m, pid, (int64_t)pid << 24 | tid, at, corr);
}

/* The process of pid (of the current model), found by key. */
static struct pps__im_proc *proc_of(int64_t key)
{
    for (size_t i = 0; i < m.n_procs; i++)
        if (m.procs[i].key == key)
            return &m.procs[i];
    CHECK(!"no such process");
    return NULL;
}

/* The span of p named name (model ids), the k-th of them. */
static const struct pps_span *named(const struct pps__im_proc *p, const char *name, int k)
{
    int32_t id = pps_strtab_find(&m.names, name);
    for (size_t i = 0; id >= 0 && i < p->n; i++)
        if (p->spans[i].name_id == id && k-- == 0)
            return &p->spans[i];
    fprintf(stderr, "  no span '%s'\n", name);
    CHECK(0);
    return NULL;
}

static void test_kernels_go_to_the_innermost_open_op(void)
{
    pps__imodel_init(&m, "test");
    begin("a");
    host(1, 1, 0, 100, "pps:F stage=2 mb=0"); /* an op with ops inside it */
    host(1, 1, 10, 20, "pps:B stage=2 mb=1");
    host(1, 1, 30, 40, "pps:W stage=2 mb=2");
    host(1, 1, 200, 250, "pps:F stage=2 mb=3"); /* ends late: overlaps the next */
    host(1, 1, 240, 280, "pps:SEND stage=2 peer=3 mb=4");
    host(1, 2, 0, 1000, "pps:BW stage=2 mb=9"); /* another thread's op */
    CHECK_EQ_INT(pps__imodel_host_done(&m, &err), 0);
    static const struct {
        int64_t at;
        int mb; /* -1: no op */
    } cases[] = {{15, 1},   {25, 0},  {35, 2},  {99, 0},  {100, -1},
                 {150, -1}, {210, 3}, {245, 4}, {260, 4}, {-5, -1}};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        kernel(1, 1000 + (int64_t)i, 1001 + (int64_t)i, 10 + (int64_t)i, "gemm");
        launch(1, 1, cases[i].at, 10 + (int64_t)i);
    }
    struct pps__im_proc *p = proc_of(1);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const struct pps_span *s = named(p, "gemm", (int)i);
        if (s->mb != cases[i].mb) {
            fprintf(stderr, "  launch at %lld: mb %d, expected %d\n", (long long)cases[i].at, s->mb,
                    cases[i].mb);
            test_failures_++;
        }
    }
    pps__imodel_release(&m);
}

static void test_correlation_ids_are_per_process(void)
{
    pps__imodel_init(&m, "test");
    begin("a");
    host(1, 1, 0, 100, "PP:0F0");
    host(2, 2, 0, 100, "PP:1F5");
    CHECK_EQ_INT(pps__imodel_host_done(&m, &err), 0);
    kernel(1, 10, 20, 7, "k");
    kernel(2, 10, 20, 7, "k");
    kernel(-1, 10, 20, 8, "k"); /* a row that does not say its process */
    launch(2, 2, 50, 7);
    launch(1, 1, 50, 7);
    launch(1, 1, 60, 7); /* a second call of one id: the first counts */
    launch(2, 2, 50, 8); /* found in the unknown process */
    CHECK_EQ_INT(named(proc_of(1), "k", 0)->stage, 0);
    CHECK_EQ_INT(named(proc_of(2), "k", 0)->stage, 1);
    CHECK_EQ_INT(named(proc_of(2), "k", 0)->mb, 5);
    CHECK_EQ_INT(named(proc_of(INT64_MIN), "k", 0)->rank, 1); /* launched */
    CHECK_EQ_INT(named(proc_of(INT64_MIN), "k", 0)->mb, -1);  /* by process 2, not its op */
    pps__imodel_release(&m);
}

static void test_forged_colliding_ids_still_attribute(void)
{
    pps__imodel_init(&m, "test");
    begin("a");
    host(1, 1, 0, 1000000, "PP:0F1");
    CHECK_EQ_INT(pps__imodel_host_done(&m, &err), 0);
    /* Ids that the folding hash puts in one slot, a thousand of them. */
    for (int64_t i = 0; i < 1000; i++)
        kernel(1, i, i + 1, (i + 1) << 40, "k");
    struct pps__im_proc *p = proc_of(1);
    CHECK(p->launch_mix);
    for (int64_t i = 0; i < 1000; i++)
        launch(1, 1, 10, (i + 1) << 40);
    for (size_t i = 0; i < p->n; i++)
        if (p->spans[i].kind == PPS_SPAN_KERNEL)
            CHECK_EQ_INT(p->spans[i].mb, 1);
    pps__imodel_release(&m);
}

static void test_nccl_kernels_are_communication(void)
{
    pps__imodel_init(&m, "test");
    begin("a");
    host(1, 1, 0, 100, "PP:0SEND_F3");
    host(1, 1, 200, 300, "PP:0F4");
    CHECK_EQ_INT(pps__imodel_host_done(&m, &err), 0);
    kernel(1, 10, 90, 1, "ncclDevKernel_SendRecv");                 /* in a send: a send */
    kernel(1, 210, 290, 2, "ncclKernel_AllReduce_RING_LL_Sum_f32"); /* a collective */
    kernel(1, 400, 500, 3, "ncclKernel_Recv_f32");                  /* by its name */
    kernel(1, 600, 700, 4, "ncclDevKernel_SendRecv");               /* no op, no way to say */
    launch(1, 1, 50, 1);
    launch(1, 1, 250, 2);
    pps__imodel_file_end(&m);
    struct pps__im_proc *p = proc_of(1);
    const struct pps_span *s = named(p, "ncclDevKernel_SendRecv", 0);
    CHECK_EQ_INT(s->kind, PPS_SPAN_SEND);
    CHECK_EQ_INT(s->peer, 1);
    CHECK_EQ_INT(s->mb, 3);
    CHECK_EQ_INT(s->corr, 0); /* a CUPTI id is no message id */
    CHECK_EQ_INT(named(p, "ncclKernel_AllReduce_RING_LL_Sum_f32", 0)->kind, PPS_SPAN_KERNEL);
    CHECK_EQ_INT(named(p, "ncclKernel_AllReduce_RING_LL_Sum_f32", 0)->corr, 2);
    CHECK_EQ_INT(named(p, "ncclKernel_AllReduce_RING_LL_Sum_f32", 0)->mb, 4);
    CHECK_EQ_INT(named(p, "ncclKernel_Recv_f32", 0)->kind, PPS_SPAN_RECV);
    CHECK_EQ_INT(named(p, "ncclKernel_Recv_f32", 0)->peer, -1);
    CHECK_EQ_INT(named(p, "ncclDevKernel_SendRecv", 1)->kind, PPS_SPAN_KERNEL);
    pps__imodel_release(&m);
}

static void test_iterations_from_marks_and_step_ranges(void)
{
    pps__imodel_init(&m, "test");
    begin("a");
    /* Process 1: marks, each until the next. */
    host(1, 1, 5, 8, "pps:F stage=0 mb=0"); /* before any */
    host(1, 1, 10, -1, "pps:iter=0");
    host(1, 1, 20, 30, "pps:F stage=0 mb=0");
    host(1, 1, 100, -1, "pps:iter=1");
    host(1, 1, 120, 130, "pps:F stage=0 mb=0");
    host(1, 1, 140, 150, "pps:F stage=0 mb=1 iter=7"); /* says its own */
    /* Process 2: PyTorch's steps, ranges that bound their iteration. */
    host(2, 2, 10, 50, "ProfilerStep#3");
    host(2, 2, 20, 30, "PP:1F0");
    host(2, 2, 60, 70, "PP:1F1"); /* between steps */
    host(2, 2, 80, 200, "ProfilerStep#4");
    host(2, 2, 90, 95, "PP:1F2");
    host(2, 3, 96, 99, "PP:1W2");  /* on another thread of the process */
    host(2, 2, 150, -1, "PP:1F9"); /* a mark named like an op: not one */
    CHECK_EQ_INT(pps__imodel_host_done(&m, &err), 0);
    kernel(2, 300, 310, 1, "late"); /* runs after the step it was launched in */
    launch(2, 2, 150, 1);
    struct pps__im_proc *p = proc_of(1);
    int want1[] = {-1, 0, 0, 1, 1, 7}; /* spans in order: F, iter mark, F, mark, F, F */
    for (size_t i = 0; i < p->n; i++)
        CHECK_EQ_INT(p->spans[i].iter, want1[i]);
    p = proc_of(2);
    CHECK_EQ_INT(p->n, 7);
    int want2[] = {3, 3, -1, 4, 4, 4, 4};
    for (size_t i = 0; i < p->n; i++)
        CHECK_EQ_INT(p->spans[i].iter, want2[i]);
    CHECK_EQ_INT(m.skipped, 1);
    pps__imodel_release(&m);
}

static void test_ranks_and_default_stages(void)
{
    pps__imodel_init(&m, "test");
    begin("a");
    host(30, 1, 0, 10, "pps:W mb=0"); /* no stage: the process's */
    host(30, 1, 20, 30, "pps:F stage=5 mb=0");
    host(30, 1, 40, 50, "pps:F stage=6 mb=0");
    host(20, 1, 0, 10, "work"); /* no op at all: its rank's stage */
    CHECK_EQ_INT(pps__imodel_host_done(&m, &err), 0);
    begin("b");
    host(10, 1, 0, 10, "other");
    CHECK_EQ_INT(pps__imodel_host_done(&m, &err), 0);
    CHECK_EQ_INT(pps__imodel_finish(&m, &err), 0);
    /* No MPI names: by file, then pid. */
    CHECK_EQ_INT(m.procs[0].key, 20);
    CHECK_EQ_INT(m.procs[1].key, 30);
    CHECK_EQ_INT(m.procs[2].key, 10);
    CHECK_EQ_INT(m.procs[1].min_stage, 5);
    pps__imodel_release(&m);

    pps__imodel_init(&m, "test");
    begin("a");
    thread_name(30, 30, "MPI Rank 0");
    thread_name(20, 20, "MPI Rank 1");
    host(30, 30, 0, 10, "x");
    host(20, 20, 0, 10, "x");
    CHECK_EQ_INT(pps__imodel_host_done(&m, &err), 0);
    CHECK_EQ_INT(pps__imodel_finish(&m, &err), 0);
    CHECK_EQ_INT(m.procs[0].key, 30);
    CHECK_EQ_INT(m.procs[0].rank, 0);
    CHECK_EQ_INT(m.procs[1].rank, 1);
    pps__imodel_release(&m);
}

static void test_written_and_read_back(void)
{
    char dir[] = "/tmp/pps-test-import-model-XXXXXX", run[64];
    struct pps__import_out out;
    struct pps_import_stats st = {0};
    struct pps_run *r = NULL;

    CHECK(mkdtemp(dir));
    snprintf(run, sizeof(run), "%s/run", dir);
    pps__imodel_init(&m, "test");
    begin("a");
    host(1, 1, 0, 100, "pps:W mb=0");
    host(1, 1, 200, 300, "range");
    host(2, 2, 0, 100, "pps:F stage=1 mb=0");
    CHECK_EQ_INT(pps__imodel_host_done(&m, &err), 0);
    kernel(1, 10, 20, 1, "gemm");
    launch(1, 1, 5, 1);
    CHECK_EQ_INT(pps__imodel_finish(&m, &err), 0);
    CHECK_EQ_INT(pps__import_out_begin(&out, run, &err), 0);
    CHECK_EQ_INT(pps__imodel_write(&m, &out, NULL, &st, &err), 0);
    CHECK_EQ_INT(pps__import_out_commit(&out, &err), 0);
    pps__import_out_release(&out);
    pps__imodel_release(&m);
    CHECK_EQ_INT(st.ranks, 2);
    CHECK_EQ_INT(st.spans, 4);
    CHECK_EQ_INT(pps_run_load(run, &r, &err), 0);
    CHECK_EQ_INT(r->n_spans, 4);
    CHECK_EQ_INT(r->n_stages, 2);
    /* Rank 0 (pid 1) has no op that names a stage: its spans are on stage 0, its rank. */
    CHECK_EQ_INT(r->stages[0].n, 3);
    const struct pps_span *k = NULL;
    for (size_t i = 0; i < r->stages[0].n; i++)
        if (r->stages[0].spans[i].kind == PPS_SPAN_KERNEL)
            k = &r->stages[0].spans[i];
    CHECK(k && k->mb == 0 && k->corr == 1);
    CHECK(!strcmp(pps_run_span_name(r, k), "gemm"));
    CHECK(!strcmp(pps_run_meta(r, "source"), "test"));
    pps_run_free(r);
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    CHECK_EQ_INT(system(cmd), 0);
}

/* The map both importers key processes, threads, strings and launches by (idmap.h). */
static void test_idmap_finds_replaces_and_grows(void)
{
    struct pps__idmap im;
    int ok = 1;

    pps__idmap_init(&im);
    CHECK_EQ_INT(pps__idmap_get(&im, 7), -1); /* empty: no slots yet */
    /* Keys that cluster (consecutive ids) and the extremes, past several doublings. */
    for (int32_t i = 0; i < 5000; i++)
        CHECK_EQ_INT(pps__idmap_put(&im, (int64_t)i * 4096 - 1000, i), 0);
    CHECK_EQ_INT(pps__idmap_put(&im, INT64_MIN, 5000), 0);
    CHECK_EQ_INT(pps__idmap_put(&im, INT64_MAX, 5001), 0);
    CHECK_EQ_INT((int)im.n, 5002);
    for (int32_t i = 0; i < 5000; i++)
        ok &= pps__idmap_get(&im, (int64_t)i * 4096 - 1000) == i;
    CHECK(ok);
    CHECK_EQ_INT(pps__idmap_get(&im, INT64_MIN), 5000);
    CHECK_EQ_INT(pps__idmap_get(&im, INT64_MAX), 5001);
    CHECK_EQ_INT(pps__idmap_get(&im, 1), -1);
    /* A second put of a key replaces its value, and adds no entry. */
    CHECK_EQ_INT(pps__idmap_put(&im, INT64_MIN, 9), 0);
    CHECK_EQ_INT(pps__idmap_get(&im, INT64_MIN), 9);
    CHECK_EQ_INT((int)im.n, 5002);
    pps__idmap_release(&im);
    CHECK_EQ_INT(pps__idmap_get(&im, INT64_MAX), -1);
    pps__idmap_release(&im); /* twice is safe */
}

/* The one rule both importers follow for NCCL's kernels, by name. */
static void test_kernel_is_comm_by_its_name(void)
{
    static const struct {
        const char *name;
        int comm, kind;
    } names[] = {
        {"ncclDevKernel_SendRecv", 1, 0}, /* a fused send-receive: which, its op says */
        {"ncclKernel_AllReduce_RING_LL_Sum_f32", 1, 0},
        {"ncclKernel_Recv_f32", 1, PPS_SPAN_RECV},
        {"NCCL_SEND", 1, PPS_SPAN_SEND}, /* any case */
        {"gemm_kernel", 0, 0},
        {"sendrecv_copy", 0, 0}, /* not NCCL's */
        {"", 0, 0},
    };

    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        int kind = -1;
        CHECK_EQ_INT(pps__import_kernel_is_comm(names[i].name, &kind), names[i].comm);
        CHECK_EQ_INT(kind, names[i].kind);
    }
    CHECK(pps__import_has_word("xxNcClyy", "nccl"));
    CHECK(!pps__import_has_word("ncc", "nccl"));
}

static const struct test_case cases[] = {
    TEST(test_kernels_go_to_the_innermost_open_op),
    TEST(test_correlation_ids_are_per_process),
    TEST(test_forged_colliding_ids_still_attribute),
    TEST(test_nccl_kernels_are_communication),
    TEST(test_iterations_from_marks_and_step_ranges),
    TEST(test_ranks_and_default_stages),
    TEST(test_written_and_read_back),
    TEST(test_idmap_finds_replaces_and_grows),
    TEST(test_kernel_is_comm_by_its_name),
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    return test_main(cases, argc, argv);
}
