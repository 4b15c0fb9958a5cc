/*
 * test_storage.c - the trace store: writer, reader, merge, clock alignment, incomplete and live
 * shards, runs in read-only places. Bad input has its own file, test_storage_bad.c. Each case
 * works in its own temporary directory and removes it.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "storage.h"
#include "storage_fixture.h"
#include "test.h"

static void test_kind_names(void)
{
    static const char *names[] = {"?",    "F",   "B",        "W",      "BW",     "SEND", "RECV",
                                  "WAIT", "OPT", "ROLLBACK", "KERNEL", "MEMCPY", "RANGE"};
    for (int k = 1; k < PPS_SPAN_KIND_COUNT; k++) {
        CHECK(!strcmp(pps_span_kind_name(k), names[k]));
        CHECK_EQ_INT(pps_span_kind_parse(names[k]), k);
    }
    CHECK(!strcmp(pps_span_kind_name(0), "?"));
    CHECK(!strcmp(pps_span_kind_name(PPS_SPAN_KIND_COUNT), "?"));
    CHECK(!strcmp(pps_span_kind_name(-3), "?"));
    CHECK_EQ_INT(pps_span_kind_parse("f"), -1);
    CHECK_EQ_INT(pps_span_kind_parse("?"), -1);
    CHECK_EQ_INT(pps_span_kind_parse(NULL), -1);
    int compute[PPS_SPAN_KIND_COUNT] = {0};
    compute[PPS_SPAN_F] = compute[PPS_SPAN_B] = compute[PPS_SPAN_W] = compute[PPS_SPAN_BW] = 1;
    compute[PPS_SPAN_OPT] = 1;
    for (int k = 0; k < PPS_SPAN_KIND_COUNT; k++)
        CHECK_EQ_INT(pps_span_kind_is_compute(k), compute[k]);
}

static void test_round_trip(void)
{
    char *dir = tmpdir_new(), run_dir[600];
    join(run_dir, sizeof(run_dir), dir, "run");
    write_run(run_dir, NO_OFFSET);
    struct pps_run *run = load_ok(run_dir);
    if (run) {
        CHECK_EQ_INT(run->merged, 0);
        CHECK(!strcmp(run->path, run_dir));
        check_run(run, NO_OFFSET);
    }
    pps_run_free(run);
    tmpdir_free(dir);
}

/* More spans than one multi-row insert holds, and a remainder: every field still lands. */
static void test_large_batch_round_trip(void)
{
    enum { N = 1000 };
    char *dir = tmpdir_new();
    struct pps_store_writer *w = NULL;
    struct pps_err err = {0};
    struct pps_span *spans = calloc(N, sizeof(*spans));
    CHECK_EQ_INT(pps_store_writer_open(dir, 3, &w, &err), 0);
    for (int i = 0; i < N; i++) {
        struct pps_span *s = &spans[i];
        s->kind = (uint8_t)(1 + i % (PPS_SPAN_KIND_COUNT - 1));
        s->stage = (int16_t)(i % 3);
        s->chunk = (int16_t)(i % 5 - 1);
        s->mb = i % 7;
        s->iter = i / 100;
        s->start_ns = (int64_t)1 << 40 | (int64_t)i * 10;
        s->end_ns = s->start_ns + i;
        s->peer = i % 4 - 1;
        s->bytes = (int64_t)i << 33;
        s->name_id = -1;
        s->clock = (uint8_t)(i % 2);
        s->corr = -(int64_t)i;
    }
    /* In two batches, one not a multiple of the statement's rows. */
    CHECK_EQ_INT(pps_store_writer_spans(w, spans, 701, &err), 0);
    CHECK_EQ_INT(pps_store_writer_spans(w, spans + 701, N - 701, &err), 0);
    CHECK_EQ_INT(pps_store_writer_close(w, 1, &err), 0);

    struct pps_run *run = load_ok(dir);
    if (run) {
        CHECK_EQ_INT(run->n_spans, N);
        CHECK_EQ_INT(run->n_stages, 3);
        CHECK_EQ_INT(run->n_iters, 10);
        for (int stage = 0; stage < 3; stage++) {
            const struct pps_stage_spans *b = &run->stages[stage];
            CHECK(spans_sorted(b));
            /* start_ns order is i order: the k-th span of the stage is i = 3k + stage */
            for (size_t k = 0; k < b->n; k++) {
                const struct pps_span *s = &b->spans[k], *e = &spans[3 * k + (size_t)stage];
                CHECK(s->kind == e->kind && s->stage == e->stage && s->chunk == e->chunk &&
                      s->mb == e->mb && s->iter == e->iter && s->start_ns == e->start_ns &&
                      s->end_ns == e->end_ns && s->peer == e->peer && s->bytes == e->bytes &&
                      s->name_id == -1 && s->clock == e->clock && s->corr == e->corr &&
                      s->rank == 3);
            }
        }
    }
    pps_run_free(run);
    free(spans);
    tmpdir_free(dir);
}

static void test_n_stages_covers_p_and_spans(void)
{
    char *dir = tmpdir_new();
    struct pps_store_writer *w = NULL;
    struct pps_err err = {0};
    struct pps_span s = make_span(0, PPS_SPAN_F, -1, -1);
    s.stage = 4;
    CHECK_EQ_INT(pps_store_writer_open(dir, 0, &w, &err), 0);
    CHECK_EQ_INT(pps_store_writer_meta_int(w, "p", 2, &err), 0);
    CHECK_EQ_INT(pps_store_writer_spans(w, &s, 1, &err), 0);
    CHECK_EQ_INT(pps_store_writer_close(w, 1, &err), 0);
    /* A stage at or above the file's p is damage: stage 32767 of a p=4 run listed 32768 stages
     * (issue 11). Without p, stages go up to the highest one seen. */
    struct pps_run *run = NULL;
    CHECK_EQ_INT(pps_run_load(dir, &run, &err), PPS_EFORMAT);
    CHECK_STR_CONTAINS(err.msg, "rank-00000.db: truncated or corrupted (spans row 1: stage 4 out "
                                "of range 0..1)");
    CHECK(run == NULL);
    char nop[600];
    join(nop, sizeof(nop), dir, "nop");
    CHECK_EQ_INT(pps_store_writer_open(nop, 0, &w, &err), 0);
    CHECK_EQ_INT(pps_store_writer_spans(w, &s, 1, &err), 0);
    CHECK_EQ_INT(pps_store_writer_close(w, 1, &err), 0);
    run = load_ok(nop);
    if (run) {
        CHECK_EQ_INT(run->n_stages, 5);
        CHECK_EQ_INT(run->stages[0].n, 0);
        CHECK_EQ_INT(run->stages[3].n, 0);
        CHECK_EQ_INT(run->stages[4].n, 1);
        CHECK_EQ_INT(run->p, 0);
    }
    pps_run_free(run);

    /* and p above the highest stage: empty stages up to p */
    char sub[600];
    join(sub, sizeof(sub), dir, "p8");
    CHECK_EQ_INT(pps_store_writer_open(sub, 0, &w, &err), 0);
    CHECK_EQ_INT(pps_store_writer_meta_int(w, "p", 8, &err), 0);
    s.stage = 1;
    CHECK_EQ_INT(pps_store_writer_spans(w, &s, 1, &err), 0);
    CHECK_EQ_INT(pps_store_writer_close(w, 1, &err), 0);
    run = load_ok(sub);
    if (run) {
        CHECK_EQ_INT(run->n_stages, 8);
        CHECK_EQ_INT(run->stages[7].n, 0);
        CHECK(run->stages[7].spans == NULL);
    }
    pps_run_free(run);
    tmpdir_free(dir);
}

static void test_merge_round_trip(void)
{
    char *dir = tmpdir_new(), run_dir[600], out[600];
    struct pps_err err = {0};
    join(run_dir, sizeof(run_dir), dir, "run");
    join(out, sizeof(out), dir, "merged.db");
    write_run(run_dir, CONSTANT_OFFSET);
    CHECK_EQ_INT(pps_run_merge(run_dir, out, &err), 0);

    struct pps_run *a = load_ok(run_dir), *b = load_ok(out);
    if (a && b) {
        check_run(a, CONSTANT_OFFSET);
        check_run(b, CONSTANT_OFFSET);
        CHECK_EQ_INT(a->merged, 0);
        CHECK_EQ_INT(b->merged, 1);
        CHECK_EQ_INT(a->n_stages, b->n_stages);
        CHECK_EQ_INT(a->t_min, b->t_min);
        CHECK_EQ_INT(a->t_max, b->t_max);
        for (int st = 0; st < a->n_stages && st < b->n_stages; st++) {
            CHECK_EQ_INT(a->stages[st].n, b->stages[st].n);
            for (size_t i = 0; i < a->stages[st].n && i < b->stages[st].n; i++) {
                const struct pps_span *x = &a->stages[st].spans[i], *y = &b->stages[st].spans[i];
                const char *nx = pps_run_span_name(a, x), *ny = pps_run_span_name(b, y);
                CHECK(x->start_ns == y->start_ns && x->end_ns == y->end_ns && x->kind == y->kind &&
                      x->rank == y->rank && x->bytes == y->bytes && x->corr == y->corr &&
                      x->iter == y->iter && x->mb == y->mb && x->peer == y->peer &&
                      x->chunk == y->chunk && x->clock == y->clock);
                CHECK((!nx && !ny) || (nx && ny && !strcmp(nx, ny)));
            }
        }
        CHECK_EQ_INT(a->n_meta, b->n_meta);
        for (size_t i = 0; i < a->n_meta && i < b->n_meta; i++)
            CHECK(a->meta[i].rank == b->meta[i].rank && !strcmp(a->meta[i].key, b->meta[i].key) &&
                  !strcmp(a->meta[i].value, b->meta[i].value));
    }
    pps_run_free(a);
    pps_run_free(b);

    /* never overwrites: neither a merged file nor anything else */
    long size = file_size(out);
    CHECK_EQ_INT(pps_run_merge(run_dir, out, &err), PPS_EINVAL);
    CHECK_STR_CONTAINS(err.msg, out);
    CHECK_STR_CONTAINS(err.msg, "already exists");
    CHECK_EQ_INT(file_size(out), size);
    b = load_ok(out);
    pps_run_free(b);
    tmpdir_free(dir);
}

static void test_merge_bad_input(void)
{
    char *dir = tmpdir_new(), path[600], out[600], empty[600], bad[600], shard[700];
    struct pps_err err = {0};
    join(out, sizeof(out), dir, "out.db");

    join(path, sizeof(path), dir, "missing");
    CHECK_EQ_INT(pps_run_merge(path, out, &err), PPS_ENOENT);
    CHECK_STR_CONTAINS(err.msg, path);
    CHECK_STR_CONTAINS(err.msg, "no such file or directory");

    join(empty, sizeof(empty), dir, "empty");
    mkdir(empty, 0777);
    CHECK_EQ_INT(pps_run_merge(empty, out, &err), PPS_ENOENT);
    CHECK_STR_CONTAINS(err.msg, "no ppscope shards (rank-*.db) in this directory");

    join(bad, sizeof(bad), dir, "bad");
    write_rank(bad, 0, NO_OFFSET, 1);
    join(shard, sizeof(shard), bad, "rank-00001.db");
    write_file(shard, "hello, not a database at all, just some text......", 50);
    CHECK_EQ_INT(pps_run_merge(bad, out, &err), PPS_EFORMAT);
    CHECK_STR_CONTAINS(err.msg, shard);
    CHECK_STR_CONTAINS(err.msg, "not a ppscope trace");

    join(shard, sizeof(shard), bad, "rank-00000.db");
    CHECK_EQ_INT(pps_run_merge(shard, out, &err), PPS_EINVAL);
    CHECK_STR_CONTAINS(err.msg, "not a run directory");

    /* no failed merge leaves an output behind */
    CHECK(access(out, F_OK) != 0);
    tmpdir_free(dir);
}

static void test_clock_offset_constant(void)
{
    char *dir = tmpdir_new();
    write_run(dir, CONSTANT_OFFSET);
    struct pps_run *run = load_ok(dir);
    if (run) {
        check_run(run, CONSTANT_OFFSET); /* rank 1's host spans +1000, device spans as written */
        const struct pps_stage_spans *b = &run->stages[1];
        for (size_t i = 0; i < b->n; i++) {
            const struct pps_span *s = &b->spans[i];
            struct pps_span raw = make_span(1, s->kind, 0, 0);
            CHECK_EQ_INT(s->start_ns - raw.start_ns, s->clock == PPS_CLOCK_HOST ? 1000 : 0);
        }
        for (size_t i = 0; i < run->stages[0].n; i++) {
            const struct pps_span *s = &run->stages[0].spans[i];
            CHECK_EQ_INT(s->start_ns, make_span(0, s->kind, 0, 0).start_ns);
        }
    }
    pps_run_free(run);
    tmpdir_free(dir);
}

static void test_clock_offset_interpolated(void)
{
    char *dir = tmpdir_new();
    struct pps_store_writer *w = NULL;
    struct pps_err err = {0};
    /* offset 1000 at t=1,000,000 and 3000 at t=2,000,000: +2 ns per 1000 ns */
    static const int64_t at[] = {1000000, 1250000, 1500000, 2000000, 2500000};
    static const int64_t want[] = {1001000, 1251500, 1502000, 2003000, 2504000};
    struct pps_span spans[5];
    CHECK_EQ_INT(pps_store_writer_open(dir, 0, &w, &err), 0);
    CHECK_EQ_INT(pps_store_writer_meta_int(w, "clock_offset_start_ns", 1000, &err), 0);
    CHECK_EQ_INT(pps_store_writer_meta_int(w, "clock_offset_end_ns", 3000, &err), 0);
    CHECK_EQ_INT(pps_store_writer_meta_int(w, "clock_sync_start_ns", 1000000, &err), 0);
    CHECK_EQ_INT(pps_store_writer_meta_int(w, "clock_sync_end_ns", 2000000, &err), 0);
    for (int i = 0; i < 5; i++) {
        spans[i] = make_span(0, PPS_SPAN_F, -1, -1);
        spans[i].start_ns = at[i];
        spans[i].end_ns = at[i] + 500000;
    }
    CHECK_EQ_INT(pps_store_writer_spans(w, spans, 5, &err), 0);
    CHECK_EQ_INT(pps_store_writer_close(w, 1, &err), 0);
    struct pps_run *run = load_ok(dir);
    if (run) {
        CHECK_EQ_INT(run->stages[0].n, 5);
        for (size_t i = 0; i < run->stages[0].n && i < 5; i++) {
            const struct pps_span *s = &run->stages[0].spans[i];
            CHECK_EQ_INT(s->start_ns, want[i]);
            /* the end 500 us later drifts 1000 ns more */
            CHECK_EQ_INT(s->end_ns, want[i] + 500000 + 1000);
        }
        CHECK_EQ_INT(run->t_min, 1001000);
    }
    pps_run_free(run);
    tmpdir_free(dir);
}

static void test_incomplete_closed(void)
{
    char *dir = tmpdir_new();
    write_rank(dir, 0, NO_OFFSET, 1);
    write_rank(dir, 1, NO_OFFSET, 0);
    struct pps_run *run = load_ok(dir);
    if (run) {
        CHECK_EQ_INT(run->complete, 0);
        CHECK_EQ_INT(run->n_shards, 2);
        CHECK_EQ_INT(run->n_spans, 2 * (PPS_SPAN_KIND_COUNT - 1));
    }
    pps_run_free(run);
    tmpdir_free(dir);
}

/* A rank that dies mid-run: everything it flushed is there, and the run says incomplete. */
static void test_incomplete_killed(void)
{
    char *dir = tmpdir_new();
    int status = 0;
    pid_t pid;

    write_rank(dir, 0, NO_OFFSET, 1);
    fflush(NULL);
    pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        struct pps_store_writer *w = NULL;
        struct pps_err err = {0};
        struct pps_span s = make_span(1, PPS_SPAN_F, -1, -1);
        if (pps_store_writer_open(dir, 1, &w, &err) || pps_store_writer_meta_int(w, "p", 2, &err) ||
            pps_store_writer_spans(w, &s, 1, &err))
            _exit(1);
        /* No close: killed. SIGKILL rather than _exit(), so that nothing at all runs after
         * (a leak checker would otherwise report the writer the child never closed). */
        kill(getpid(), SIGKILL);
        _exit(2);
    }
    CHECK(waitpid(pid, &status, 0) == pid);
    CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL); /* not exit 1: it wrote */
    struct pps_run *run = load_ok(dir);
    if (run) {
        CHECK_EQ_INT(run->complete, 0);
        CHECK_EQ_INT(run->n_shards, 2);
        CHECK_EQ_INT(run->stages[1].n, 1);
        if (run->stages[1].n == 1)
            CHECK_EQ_INT(run->stages[1].spans[0].rank, 1);
    }
    pps_run_free(run);
    tmpdir_free(dir);
}

static void test_read_while_writing(void)
{
    char *dir = tmpdir_new();
    struct pps_store_writer *w = NULL;
    struct pps_err err = {0};
    struct pps_span a[3], b[2];
    for (int i = 0; i < 3; i++)
        a[i] = make_span(0, PPS_SPAN_F + i, -1, -1);
    for (int i = 0; i < 2; i++) {
        b[i] = make_span(0, PPS_SPAN_OPT, -1, -1);
        b[i].start_ns += 100000 * (i + 1);
        b[i].end_ns += 100000 * (i + 1);
    }
    CHECK_EQ_INT(pps_store_writer_open(dir, 0, &w, &err), 0);
    CHECK_EQ_INT(pps_store_writer_spans(w, a, 3, &err), 0);

    struct pps_run *run = load_ok(dir);
    if (run) {
        CHECK_EQ_INT(run->n_spans, 3);
        CHECK_EQ_INT(run->complete, 0);
    }
    pps_run_free(run);

    CHECK_EQ_INT(pps_store_writer_spans(w, b, 2, &err), 0);
    run = load_ok(dir);
    if (run) {
        CHECK_EQ_INT(run->n_spans, 5);
        CHECK_EQ_INT(run->complete, 0);
        CHECK_EQ_INT(run->stages[0].spans[run->stages[0].n - 1].kind, PPS_SPAN_OPT);
    }
    pps_run_free(run);

    CHECK_EQ_INT(pps_store_writer_close(w, 1, &err), 0);
    run = load_ok(dir);
    if (run) {
        CHECK_EQ_INT(run->n_spans, 5);
        CHECK_EQ_INT(run->complete, 1);
    }
    pps_run_free(run);
    tmpdir_free(dir);
}

/*
 * What a viewer of someone else's finished run does: read and merge shards in a directory it
 * cannot write to, where SQLite cannot create the -shm file that WAL mode wants. As root, the
 * reading happens in a child that becomes nobody; it reports through a pipe and then kills
 * itself, so a leak checker has nothing to say about the memory it inherited.
 */
static void test_read_only_directory(void)
{
    char *dir = tmpdir_new(), run_dir[600], out_dir[600], out[700], path[700];
    int fds[2], status = 0;
    char result = 'x';
    pid_t pid;

    join(run_dir, sizeof(run_dir), dir, "run");
    join(out_dir, sizeof(out_dir), dir, "out");
    write_run(run_dir, CONSTANT_OFFSET);
    join(out, sizeof(out), out_dir, "merged.db");
    CHECK(mkdir(out_dir, 0777) == 0 && chmod(out_dir, 0777) == 0);
    CHECK(chmod(dir, 0755) == 0);
    CHECK(chmod(join(path, sizeof(path), run_dir, "rank-00000.db"), 0444) == 0);
    CHECK(chmod(join(path, sizeof(path), run_dir, "rank-00001.db"), 0444) == 0);
    CHECK(chmod(run_dir, 0555) == 0);
    CHECK(pipe(fds) == 0);
    fflush(NULL);
    pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        struct pps_run *run = NULL;
        struct pps_err err = {0};
        char r = 'k';
        close(fds[0]);
        if (geteuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0))
            r = 's';
        else if (access(run_dir, W_OK) == 0)
            r = 's'; /* the directory is writable after all: nothing to test */
        else if (pps_run_load(run_dir, &run, &err) != 0 ||
                 run->n_spans != 2 * (PPS_SPAN_KIND_COUNT - 1) || run->complete != 1)
            r = 'l';
        else if (pps_run_merge(run_dir, out, &err) != 0)
            r = 'm';
        if (err.msg[0])
            fprintf(stderr, "  child: %s\n", err.msg);
        pps_run_free(run);
        if (write(fds[1], &r, 1) != 1)
            _exit(1);
        kill(getpid(), SIGKILL);
        _exit(1);
    }
    close(fds[1]);
    CHECK(read(fds[0], &result, 1) == 1);
    close(fds[0]);
    CHECK(waitpid(pid, &status, 0) == pid);
    chmod(run_dir, 0755);
    if (result == 's') {
        tmpdir_free(dir);
        TEST_SKIP("cannot make a directory this process cannot write to");
    }
    CHECK(result == 'k'); /* l: load failed, m: merge failed */
    if (result != 'k')
        fprintf(stderr, "  child said %c\n", result);
    struct pps_run *a = load_ok(out), *b = load_ok(run_dir);
    if (a && b) {
        CHECK_EQ_INT(a->n_spans, b->n_spans);
        CHECK_EQ_INT(a->t_max, b->t_max);
    }
    pps_run_free(a);
    pps_run_free(b);
    tmpdir_free(dir);
}

/* Debian's SQLite takes "file:..." for a URI: a run named so must still be that directory. */
static void test_path_that_looks_like_a_uri(void)
{
    char *dir = tmpdir_new(), cwd[1024], path[700];
    struct pps_store_writer *w = NULL;
    struct pps_err err = {0};
    struct pps_span s = make_span(0, PPS_SPAN_F, -1, -1);

    CHECK(getcwd(cwd, sizeof(cwd)) != NULL);
    write_rank(join(path, sizeof(path), dir, "x"), 0, NO_OFFSET, 1);
    long size = file_size(join(path, sizeof(path), dir, "x/rank-00000.db"));
    CHECK(chdir(dir) == 0);

    CHECK_EQ_INT(pps_store_writer_open("file:x", 0, &w, &err), 0);
    CHECK_EQ_INT(pps_store_writer_spans(w, &s, 1, &err), 0);
    CHECK_EQ_INT(pps_store_writer_close(w, 1, &err), 0);
    CHECK(access("file:x/rank-00000.db", F_OK) == 0);
    CHECK_EQ_INT(file_size("x/rank-00000.db"), size); /* the other run is untouched */

    struct pps_run *run = load_ok("file:x");
    if (run)
        CHECK_EQ_INT(run->n_spans, 1);
    pps_run_free(run);
    CHECK_EQ_INT(pps_run_merge("file:x", "file:m.db", &err), 0);
    CHECK(access("file:m.db", F_OK) == 0);
    CHECK(access("m.db", F_OK) != 0);
    run = load_ok("file:m.db");
    if (run)
        CHECK_EQ_INT(run->n_spans, 1);
    pps_run_free(run);

    CHECK(chdir(cwd) == 0);
    tmpdir_free(dir);
}

static void test_load_one_shard_file(void)
{
    char *dir = tmpdir_new(), shard[600];
    write_run(dir, NO_OFFSET);
    join(shard, sizeof(shard), dir, "rank-00001.db");
    struct pps_run *run = load_ok(shard);
    if (run) {
        CHECK_EQ_INT(run->n_shards, 1);
        CHECK_EQ_INT(run->merged, 1);
        CHECK_EQ_INT(run->complete, 1);
        CHECK_EQ_INT(run->n_spans, PPS_SPAN_KIND_COUNT - 1);
        /* only rank 1's metadata here */
        CHECK(pps_run_meta(run, "model") && !strcmp(pps_run_meta(run, "model"), "tiny-9"));
        CHECK_EQ_INT(run->stages[0].n, 0);
    }
    pps_run_free(run);
    tmpdir_free(dir);
}

static void test_shards_ignore_other_files(void)
{
    char *dir = tmpdir_new(), path[600];
    write_rank(dir, 0, NO_OFFSET, 1);
    write_file(join(path, sizeof(path), dir, "notes.txt"), "x", 1);
    write_file(join(path, sizeof(path), dir, "rank-00001.db.bak"), "x", 1);
    write_file(join(path, sizeof(path), dir, "rank-00002.db-wal"), "", 0);
    write_file(join(path, sizeof(path), dir, "rank-x.db"), "x", 1);
    struct pps_run *run = load_ok(dir);
    if (run)
        CHECK_EQ_INT(run->n_shards, 1);
    pps_run_free(run);
    tmpdir_free(dir);
}

static void test_writer_refuses_overwrite(void)
{
    char *dir = tmpdir_new(), path[600];
    struct pps_store_writer *w = (struct pps_store_writer *)&w;
    struct pps_err err = {0};
    write_rank(dir, 0, NO_OFFSET, 1);
    join(path, sizeof(path), dir, "rank-00000.db");
    long size = file_size(path);
    CHECK_EQ_INT(pps_store_writer_open(dir, 0, &w, &err), PPS_EINVAL);
    CHECK(w == NULL);
    CHECK_STR_CONTAINS(err.msg, path);
    CHECK_STR_CONTAINS(err.msg, "already exists");
    CHECK_EQ_INT(file_size(path), size);
    struct pps_run *run = load_ok(dir); /* the shard is as the first writer left it */
    if (run) {
        CHECK_EQ_INT(run->n_spans, PPS_SPAN_KIND_COUNT - 1);
        CHECK_EQ_INT(run->complete, 1);
    }
    pps_run_free(run);
    tmpdir_free(dir);
}

static void test_writer_creates_parents_and_checks_args(void)
{
    char *dir = tmpdir_new(), path[600], file[600];
    struct pps_store_writer *w = NULL;
    struct pps_err err = {0};
    join(path, sizeof(path), dir, "a/b/c/run");
    CHECK_EQ_INT(pps_store_writer_open(path, 12, &w, &err), 0);
    CHECK_EQ_INT(pps_store_writer_close(w, 1, &err), 0);
    join(file, sizeof(file), path, "rank-00012.db");
    CHECK(access(file, F_OK) == 0);

    CHECK_EQ_INT(pps_store_writer_open(path, -1, &w, &err), PPS_EINVAL);
    CHECK_EQ_INT(pps_store_writer_open(path, 40000, &w, &err), PPS_EINVAL);
    /* a run directory that is a file */
    CHECK_EQ_INT(pps_store_writer_open(file, 0, &w, &err), PPS_EINVAL);
    CHECK_STR_CONTAINS(err.msg, file);
    CHECK(w == NULL);
    tmpdir_free(dir);
}

static void test_writer_rejects_bad_span(void)
{
    char *dir = tmpdir_new();
    struct pps_store_writer *w = NULL;
    struct pps_err err = {0};
    struct pps_span s[2] = {make_span(0, PPS_SPAN_F, -1, -1), make_span(0, PPS_SPAN_B, -1, -1)};
    CHECK_EQ_INT(pps_store_writer_open(dir, 0, &w, &err), 0);
    s[1].kind = 0;
    CHECK_EQ_INT(pps_store_writer_spans(w, s, 2, &err), PPS_EINVAL);
    CHECK_STR_CONTAINS(err.msg, "span 1");
    s[1].kind = PPS_SPAN_B;
    s[1].stage = -2;
    CHECK_EQ_INT(pps_store_writer_spans(w, s, 2, &err), PPS_EINVAL);
    CHECK_EQ_INT(pps_store_writer_spans(w, s, 0, &err), 0);
    CHECK_EQ_INT(pps_store_writer_close(w, 1, &err), 0);
    struct pps_run *run = load_ok(dir);
    if (run)
        CHECK_EQ_INT(run->n_spans, 0); /* a refused batch writes nothing */
    pps_run_free(run);
    tmpdir_free(dir);
}

static void test_writer_interns_names(void)
{
    char *dir = tmpdir_new();
    struct pps_store_writer *w = NULL;
    struct pps_err err = {0};
    int32_t ids[300];
    char name[32];
    CHECK_EQ_INT(pps_store_writer_open(dir, 0, &w, &err), 0);
    for (int i = 0; i < 300; i++) { /* enough to grow the table twice */
        snprintf(name, sizeof(name), "kernel_%d", i);
        CHECK_EQ_INT(pps_store_writer_name(w, name, &ids[i], &err), 0);
    }
    for (int i = 0; i < 300; i++) {
        int32_t again = -1;
        snprintf(name, sizeof(name), "kernel_%d", i);
        CHECK_EQ_INT(pps_store_writer_name(w, name, &again, &err), 0);
        CHECK_EQ_INT(again, ids[i]);
        for (int j = 0; j < i; j += 37)
            CHECK(ids[i] != ids[j]);
    }
    struct pps_span s = make_span(0, PPS_SPAN_KERNEL, ids[299], -1);
    CHECK_EQ_INT(pps_store_writer_spans(w, &s, 1, &err), 0);
    CHECK_EQ_INT(pps_store_writer_close(w, 1, &err), 0);
    struct pps_run *run = load_ok(dir);
    if (run) {
        CHECK_EQ_INT(run->n_names, 300);
        CHECK(pps_run_span_name(run, &run->stages[0].spans[0]) &&
              !strcmp(pps_run_span_name(run, &run->stages[0].spans[0]), "kernel_299"));
    }
    pps_run_free(run);
    tmpdir_free(dir);
}

static void test_null_is_a_no_op(void)
{
    struct pps_err err = {0};
    pps_run_free(NULL);
    CHECK_EQ_INT(pps_store_writer_close(NULL, 1, &err), 0);
    CHECK_EQ_INT(pps_store_writer_close(NULL, 0, NULL), 0);
    CHECK(pps_run_meta(NULL, "p") == NULL);
    CHECK(pps_run_span_name(NULL, NULL) == NULL);
    /* a NULL error context is allowed */
    struct pps_run *run = NULL;
    CHECK_EQ_INT(pps_run_load("/nonexistent/ppscope/run", &run, NULL), PPS_ENOENT);
}

static const struct test_case cases[] = {
    TEST(test_kind_names),
    TEST(test_round_trip),
    TEST(test_large_batch_round_trip),
    TEST(test_n_stages_covers_p_and_spans),
    TEST(test_merge_round_trip),
    TEST(test_merge_bad_input),
    TEST(test_clock_offset_constant),
    TEST(test_clock_offset_interpolated),
    TEST(test_incomplete_closed),
    TEST(test_incomplete_killed),
    TEST(test_read_while_writing),
    TEST(test_read_only_directory),
    TEST(test_path_that_looks_like_a_uri),
    TEST(test_load_one_shard_file),
    TEST(test_shards_ignore_other_files),
    TEST(test_writer_refuses_overwrite),
    TEST(test_writer_creates_parents_and_checks_args),
    TEST(test_writer_rejects_bad_span),
    TEST(test_writer_interns_names),
    TEST(test_null_is_a_no_op),
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    return test_main(cases, argc, argv);
}
