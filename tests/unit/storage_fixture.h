/*
 * storage_fixture.h - what the storage tests share: temporary directories, and a small run
 * written through the writer (two ranks, one span of every kind, names, metrics, meta) with
 * make_span() saying what each span should read back as. Include after test.h.
 */
#ifndef PPS_STORAGE_FIXTURE_H
#define PPS_STORAGE_FIXTURE_H

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "storage.h"
#include "test.h"

/* ---- files and directories ---------------------------------------------------------------- */

static inline char *tmpdir_new(void)
{
    const char *base = getenv("TMPDIR");
    char tmpl[512];
    snprintf(tmpl, sizeof(tmpl), "%s/pps-storage-XXXXXX", base && *base ? base : "/tmp");
    if (!mkdtemp(tmpl)) {
        perror("mkdtemp");
        exit(1);
    }
    return strdup(tmpl);
}

/* dir/name into buf. */
static inline const char *join(char *buf, size_t n, const char *dir, const char *name)
{
    int k = snprintf(buf, n, "%s/%s", dir, name);
    if (k < 0 || (size_t)k >= n) {
        fprintf(stderr, "path too long: %s/%s\n", dir, name);
        exit(1);
    }
    return buf;
}

static inline void rm_rf(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return;
    if (S_ISDIR(st.st_mode)) {
        DIR *d = opendir(path);
        struct dirent *de;
        while (d && (de = readdir(d))) {
            char sub[1024];
            if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
                continue;
            rm_rf(join(sub, sizeof(sub), path, de->d_name));
        }
        if (d)
            closedir(d);
        rmdir(path);
    } else {
        unlink(path);
    }
}

static inline void tmpdir_free(char *dir)
{
    rm_rf(dir);
    free(dir);
}

static inline void write_file(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    if (!f)
        return;
    CHECK(fwrite(data, 1, n, f) == n);
    fclose(f);
}

static inline long file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

/* ---- a small run with everything in it ---------------------------------------------------- */

enum offsets { NO_OFFSET, CONSTANT_OFFSET };

static inline int is_kind(int k, int a, int b, int c)
{
    return k == a || k == b || k == c;
}

/* The span of kind k that rank writes on stage = rank; times distinct and kind-ordered. */
static inline struct pps_span make_span(int rank, int k, int32_t kernel_name, int32_t range_name)
{
    struct pps_span s;
    memset(&s, 0, sizeof(s));
    s.kind = (uint8_t)k;
    s.stage = (int16_t)rank;
    s.chunk = (int16_t)(k % 2);
    s.mb = k % 4; /* below the run's m: the reader checks */
    s.iter = k % 3;
    s.start_ns = 1000000 + 1000 * k + 37 * rank;
    s.end_ns = s.start_ns + 500 + k;
    s.peer = is_kind(k, PPS_SPAN_SEND, PPS_SPAN_RECV, PPS_SPAN_WAIT) ? 1 - rank : -1;
    s.bytes = is_kind(k, PPS_SPAN_SEND, PPS_SPAN_RECV, PPS_SPAN_MEMCPY) ? 100 * k + rank : 0;
    s.corr = is_kind(k, PPS_SPAN_KERNEL, PPS_SPAN_MEMCPY, -1) ? 7000 + k : 0;
    s.name_id = k == PPS_SPAN_KERNEL ? kernel_name : k == PPS_SPAN_RANGE ? range_name : -1;
    s.clock = is_kind(k, PPS_SPAN_KERNEL, PPS_SPAN_MEMCPY, -1) ? PPS_CLOCK_DEVICE : PPS_CLOCK_HOST;
    s.rank = 99; /* the writer stores its own rank, whatever this says */
    return s;
}

static inline const char *kernel_name(int rank)
{
    return rank == 0 ? "gemm_fp16" : "softmax";
}

static inline double metric_loss(int iter)
{
    return iter == 1 ? NAN : 1.5 + iter;
}

/* Writes rank's shard: meta, names, one span of every kind, metrics of 3 iterations. */
static inline int write_rank(const char *dir, int rank, enum offsets off, int complete)
{
    struct pps_store_writer *w = NULL;
    struct pps_err err = {0};
    struct pps_span spans[PPS_SPAN_KIND_COUNT];
    struct pps_metric metrics[3];
    int32_t kname = -1, rname = -1;
    int rc;

    rc = pps_store_writer_open(dir, rank, &w, &err);
    CHECK_EQ_INT(rc, 0);
    if (rc) {
        fprintf(stderr, "  %s\n", err.msg);
        return rc;
    }
    /* One run: the keys that say so (identity.c) agree; a rank's own keys (model) may not. */
    CHECK_EQ_INT(pps_store_writer_meta(w, "schedule", "1f1b", &err), 0);
    CHECK_EQ_INT(pps_store_writer_meta_int(w, "p", 2, &err), 0);
    CHECK_EQ_INT(pps_store_writer_meta_int(w, "m", 4, &err), 0);
    CHECK_EQ_INT(pps_store_writer_meta_int(w, "v", 2, &err), 0);
    CHECK_EQ_INT(pps_store_writer_meta(w, "model", "tiny", &err), 0);
    CHECK_EQ_INT(pps_store_writer_meta(w, "model", rank == 0 ? "tiny-2" : "tiny-9", &err),
                 0); /* replaces */
    if (rank == 1 && off == CONSTANT_OFFSET)
        CHECK_EQ_INT(pps_store_writer_meta_int(w, "clock_offset_start_ns", 1000, &err), 0);
    CHECK_EQ_INT(pps_store_writer_name(w, kernel_name(rank), &kname, &err), 0);
    CHECK_EQ_INT(pps_store_writer_name(w, "step", &rname, &err), 0);

    /* Written in reverse order: the reader sorts. */
    for (int k = PPS_SPAN_KIND_COUNT - 1, i = 0; k >= 1; k--, i++)
        spans[i] = make_span(rank, k, kname, rname);
    CHECK_EQ_INT(pps_store_writer_spans(w, spans, PPS_SPAN_KIND_COUNT - 1, &err), 0);

    for (int it = 2, i = 0; it >= 0; it--, i++) {
        struct pps_metric *m = &metrics[i];
        m->iter = it;
        m->stage = rank;
        m->loss = metric_loss(it);
        m->grad_norm = 0.25 * it;
        m->act_bytes = (int64_t)(it + 1) << 20;
        m->pending_w = rank;
        m->dropped = it;
        m->rank = 42;
    }
    CHECK_EQ_INT(pps_store_writer_metrics(w, metrics, 3, &err), 0);
    rc = pps_store_writer_close(w, complete, &err);
    CHECK_EQ_INT(rc, 0);
    return rc;
}

static inline void write_run(const char *dir, enum offsets off)
{
    write_rank(dir, 0, off, 1);
    write_rank(dir, 1, off, 1);
}

static inline int spans_sorted(const struct pps_stage_spans *b)
{
    for (size_t i = 1; i < b->n; i++) {
        const struct pps_span *x = &b->spans[i - 1], *y = &b->spans[i];
        if (x->start_ns > y->start_ns || (x->start_ns == y->start_ns && x->end_ns > y->end_ns))
            return 0;
    }
    return 1;
}

/* Everything write_run() wrote, read back: every field of every span and metric. */
static inline void check_run(const struct pps_run *run, enum offsets off)
{
    CHECK(run->complete == 1);
    CHECK_EQ_INT(run->n_shards, 2);
    CHECK_EQ_INT(run->p, 2);
    CHECK_EQ_INT(run->m, 4);
    CHECK_EQ_INT(run->v, 2);
    CHECK(run->schedule && !strcmp(run->schedule, "1f1b"));
    /* rank 0 wins over rank 1's tiny-9 */
    CHECK(pps_run_meta(run, "model") && !strcmp(pps_run_meta(run, "model"), "tiny-2"));
    CHECK(pps_run_meta(run, "ppscope_version") != NULL);
    CHECK(pps_run_meta(run, "nope") == NULL);
    CHECK_EQ_INT(run->n_stages, 2);
    CHECK_EQ_INT(run->n_spans, 2 * (PPS_SPAN_KIND_COUNT - 1));
    CHECK_EQ_INT(run->n_iters, 3);

    int64_t t_min = INT64_MAX, t_max = INT64_MIN;
    for (int stage = 0; stage < run->n_stages && stage < 2; stage++) {
        const struct pps_stage_spans *b = &run->stages[stage];
        CHECK_EQ_INT(b->n, PPS_SPAN_KIND_COUNT - 1);
        CHECK(spans_sorted(b));
        for (size_t i = 0; i < b->n; i++) {
            const struct pps_span *s = &b->spans[i];
            struct pps_span e = make_span(stage, s->kind, 0, 0);
            int64_t shift =
                (stage == 1 && off == CONSTANT_OFFSET && e.clock == PPS_CLOCK_HOST) ? 1000 : 0;
            CHECK_EQ_INT(s->rank, stage);
            CHECK_EQ_INT(s->stage, stage);
            CHECK_EQ_INT(s->chunk, e.chunk);
            CHECK_EQ_INT(s->mb, e.mb);
            CHECK_EQ_INT(s->iter, e.iter);
            CHECK_EQ_INT(s->start_ns, e.start_ns + shift);
            CHECK_EQ_INT(s->end_ns, e.end_ns + shift);
            CHECK_EQ_INT(s->peer, e.peer);
            CHECK_EQ_INT(s->bytes, e.bytes);
            CHECK_EQ_INT(s->corr, e.corr);
            CHECK_EQ_INT(s->clock, e.clock);
            if (s->kind == PPS_SPAN_KERNEL) {
                CHECK(pps_run_span_name(run, s) &&
                      !strcmp(pps_run_span_name(run, s), kernel_name(stage)));
            } else if (s->kind == PPS_SPAN_RANGE) {
                CHECK(pps_run_span_name(run, s) && !strcmp(pps_run_span_name(run, s), "step"));
            } else {
                CHECK_EQ_INT(s->name_id, -1);
                CHECK(pps_run_span_name(run, s) == NULL);
            }
            if (s->start_ns < t_min)
                t_min = s->start_ns;
            if (s->end_ns > t_max)
                t_max = s->end_ns;
        }
        /* one of each kind */
        for (int k = 1; k < PPS_SPAN_KIND_COUNT; k++) {
            int n = 0;
            for (size_t i = 0; i < b->n; i++)
                n += b->spans[i].kind == k;
            CHECK_EQ_INT(n, 1);
        }
    }
    CHECK_EQ_INT(run->t_min, t_min);
    CHECK_EQ_INT(run->t_max, t_max);

    CHECK_EQ_INT(run->n_metrics, 6);
    for (size_t i = 0; i < run->n_metrics && i < 6; i++) {
        const struct pps_metric *m = &run->metrics[i];
        int it = (int)i / 2, stage = (int)i % 2; /* sorted by iter, then stage */
        CHECK_EQ_INT(m->iter, it);
        CHECK_EQ_INT(m->stage, stage);
        CHECK_EQ_INT(m->rank, stage);
        if (it == 1)
            CHECK(isnan(m->loss));
        else
            CHECK_NEAR(m->loss, metric_loss(it), 0);
        CHECK_NEAR(m->grad_norm, 0.25 * it, 0);
        CHECK_EQ_INT(m->act_bytes, (int64_t)(it + 1) << 20);
        CHECK_EQ_INT(m->pending_w, stage);
        CHECK_EQ_INT(m->dropped, it);
    }
}

static inline struct pps_run *load_ok(const char *path)
{
    struct pps_run *run = NULL;
    struct pps_err err = {0};
    int rc = pps_run_load(path, &run, &err);
    CHECK_EQ_INT(rc, 0);
    if (rc)
        fprintf(stderr, "  %s\n", err.msg);
    return run;
}

#endif
