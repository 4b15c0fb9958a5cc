/*
 * test_storage_bad.c - every kind of bad input the reader must turn into a one-line reason that
 * names the file, with the right code, and no crash or leak: a missing path, an empty directory,
 * a file that is not SQLite or not ppscope's, a newer schema, a truncated or corrupted file.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "storage.h"
#include "storage_fixture.h"
#include "test.h"

static void put_be32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)(v >> 24);
    p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8);
    p[3] = (unsigned char)v;
}

/* Overwrites 4 big-endian bytes of a file's header (SQLite keeps its header big-endian). */
static void patch_be32(const char *path, off_t off, uint32_t v)
{
    unsigned char b[4];
    int fd = open(path, O_WRONLY);
    CHECK(fd >= 0);
    if (fd < 0)
        return;
    put_be32(b, v);
    CHECK(pwrite(fd, b, 4, off) == 4);
    close(fd);
}

/* A valid, empty SQLite database (one page, no tables) with the given header fields. */
static void write_empty_sqlite(const char *path, uint32_t app_id, uint32_t version)
{
    unsigned char page[4096] = {0};
    memcpy(page, "SQLite format 3", 16);
    page[16] = 0x10; /* page size 4096 */
    page[18] = 1;    /* legacy (rollback journal) read and write versions */
    page[19] = 1;
    page[21] = 64;
    page[22] = 32;
    page[23] = 32;
    put_be32(page + 24, 1); /* change counter */
    put_be32(page + 28, 1); /* pages */
    put_be32(page + 44, 4); /* schema format */
    put_be32(page + 56, 1); /* UTF-8 */
    put_be32(page + 60, version);
    put_be32(page + 68, app_id);
    put_be32(page + 92, 1); /* version-valid-for = change counter */
    put_be32(page + 96, 3040001);
    page[100] = 0x0D; /* an empty leaf table b-tree: sqlite_master */
    page[105] = 0x10; /* cell content starts at 4096 */
    write_file(path, page, sizeof(page));
}

/* Loads path expecting failure: code, and a one-line message that says file and problem. */
static void check_load_fails(const char *path, int code, const char *file, const char *problem)
{
    struct pps_run *run = (struct pps_run *)&run; /* must be reset to NULL */
    struct pps_err err = {0};
    int rc = pps_run_load(path, &run, &err);
    CHECK_EQ_INT(rc, code);
    CHECK_EQ_INT(err.code, code);
    CHECK(run == NULL);
    CHECK_STR_CONTAINS(err.msg, file);
    CHECK_STR_CONTAINS(err.msg, problem);
    CHECK(strchr(err.msg, '\n') == NULL);
    if (rc == 0)
        pps_run_free(run);
}

static void test_bad_missing_path(void)
{
    char *dir = tmpdir_new(), path[600], msg[700];
    join(path, sizeof(path), dir, "RUN");
    snprintf(msg, sizeof(msg), "%s: no such file or directory", path);
    check_load_fails(path, PPS_ENOENT, path, msg);
    tmpdir_free(dir);
}

static void test_bad_empty_directory(void)
{
    char *dir = tmpdir_new(), path[600];
    check_load_fails(dir, PPS_ENOENT, dir, "no ppscope shards (rank-*.db) in this directory");
    write_file(join(path, sizeof(path), dir, "rank-00000.db-wal"), "", 0);
    write_file(join(path, sizeof(path), dir, "readme"), "x", 1);
    check_load_fails(dir, PPS_ENOENT, dir, "no ppscope shards (rank-*.db) in this directory");
    tmpdir_free(dir);
}

static void test_bad_not_sqlite(void)
{
    char *dir = tmpdir_new(), path[600];
    char text[8192];
    memset(text, 'x', sizeof(text));
    join(path, sizeof(path), dir, "trace.db");
    write_file(path, text, sizeof(text));
    check_load_fails(path, PPS_EFORMAT, "trace.db", "not a ppscope trace");
    /* the same as a shard of a run: the message names the shard */
    join(path, sizeof(path), dir, "rank-00000.db");
    write_file(path, "ELF\x7f garbage", 12);
    check_load_fails(dir, PPS_EFORMAT, "rank-00000.db", "not a ppscope trace");
    tmpdir_free(dir);
}

static void test_bad_empty_file(void)
{
    char *dir = tmpdir_new(), path[600];
    join(path, sizeof(path), dir, "empty.db");
    write_file(path, "", 0);
    check_load_fails(path, PPS_EFORMAT, "empty.db", "not a ppscope trace");
    join(path, sizeof(path), dir, "rank-00000.db");
    write_file(path, "", 0);
    check_load_fails(dir, PPS_EFORMAT, "rank-00000.db", "not a ppscope trace");
    tmpdir_free(dir);
}

static void test_bad_wrong_application_id(void)
{
    char *dir = tmpdir_new(), path[600];
    write_rank(dir, 0, NO_OFFSET, 1);
    join(path, sizeof(path), dir, "rank-00000.db");
    patch_be32(path, 68, 0x12345678);
    check_load_fails(path, PPS_EFORMAT, "rank-00000.db", "not a ppscope trace");
    check_load_fails(dir, PPS_EFORMAT, "rank-00000.db", "not a ppscope trace");
    tmpdir_free(dir);
}

static void test_bad_missing_tables(void)
{
    char *dir = tmpdir_new(), path[600];
    join(path, sizeof(path), dir, "trace.db");
    write_empty_sqlite(path, PPS_APPLICATION_ID, PPS_SCHEMA_VERSION);
    check_load_fails(path, PPS_EFORMAT, "trace.db", "not a ppscope trace (no table");
    /* a plain SQLite file of no one in particular */
    join(path, sizeof(path), dir, "other.db");
    write_empty_sqlite(path, 0, 0);
    check_load_fails(path, PPS_EFORMAT, "other.db", "not a ppscope trace");
    tmpdir_free(dir);
}

static void test_bad_newer_version(void)
{
    char *dir = tmpdir_new(), path[600], msg[700];
    write_rank(dir, 0, NO_OFFSET, 1);
    join(path, sizeof(path), dir, "rank-00000.db");
    patch_be32(path, 60, 7);
    snprintf(msg, sizeof(msg), "%s: schema version 7 is newer than this ppscope (%d)", path,
             PPS_SCHEMA_VERSION);
    check_load_fails(path, PPS_EVERSION, path, msg);
    check_load_fails(dir, PPS_EVERSION, path, "schema version 7 is newer");
    tmpdir_free(dir);
}

/* A shard of many pages: spans in several batches, as a tracer writes them. */
static void write_big_shard(const char *dir)
{
    struct pps_store_writer *w = NULL;
    struct pps_err err = {0};
    struct pps_span spans[500];
    CHECK_EQ_INT(pps_store_writer_open(dir, 0, &w, &err), 0);
    for (int batch = 0; batch < 10; batch++) {
        for (int i = 0; i < 500; i++) {
            spans[i] = make_span(0, 1 + i % 4, -1, -1);
            spans[i].stage = (int16_t)(i % 4);
            spans[i].start_ns = (int64_t)(batch * 500 + i) * 1000;
            spans[i].end_ns = spans[i].start_ns + 900;
        }
        CHECK_EQ_INT(pps_store_writer_spans(w, spans, 500, &err), 0);
    }
    CHECK_EQ_INT(pps_store_writer_close(w, 1, &err), 0);
}

static void test_bad_truncated(void)
{
    char *dir = tmpdir_new(), path[600];
    write_big_shard(dir);
    join(path, sizeof(path), dir, "rank-00000.db");
    long size = file_size(path);
    CHECK(size > 64 * 1024);
    struct pps_run *run = load_ok(dir); /* intact first */
    if (run)
        CHECK_EQ_INT(run->n_spans, 5000);
    pps_run_free(run);
    CHECK(truncate(path, size / 2) == 0);
    check_load_fails(dir, PPS_EFORMAT, "rank-00000.db", "truncated or corrupted");
    check_load_fails(path, PPS_EFORMAT, "rank-00000.db", "truncated or corrupted");
    /* cut inside the header's page too */
    CHECK(truncate(path, 1000) == 0);
    check_load_fails(path, PPS_EFORMAT, "rank-00000.db", "");
    tmpdir_free(dir);
}

static void test_bad_garbage_in_the_middle(void)
{
    char *dir = tmpdir_new(), path[600];
    unsigned char junk[6000];
    uint32_t x = 12345;
    for (size_t i = 0; i < sizeof(junk); i++) {
        x = x * 1103515245u + 12345u;
        junk[i] = (unsigned char)(x >> 16);
    }
    write_big_shard(dir);
    join(path, sizeof(path), dir, "rank-00000.db");
    long size = file_size(path);
    int fd = open(path, O_WRONLY);
    CHECK(fd >= 0);
    if (fd >= 0) {
        CHECK(pwrite(fd, junk, sizeof(junk), size / 2) == (ssize_t)sizeof(junk));
        close(fd);
    }
    check_load_fails(dir, PPS_EFORMAT, "rank-00000.db", "truncated or corrupted");
    tmpdir_free(dir);
}

/* Garbage over each page in turn: always an error or a clean load, never a crash. */
static void test_bad_garbage_anywhere(void)
{
    char *dir = tmpdir_new(), path[600], copy[600];
    unsigned char *image = NULL;
    long size, failed = 0, pages;
    FILE *f;

    write_big_shard(dir);
    join(path, sizeof(path), dir, "rank-00000.db");
    join(copy, sizeof(copy), dir, "copy");
    mkdir(copy, 0777);
    join(copy, sizeof(copy), dir, "copy/rank-00000.db");
    size = file_size(path);
    pages = size / 4096;
    CHECK(size > 0 && (image = malloc((size_t)size)) != NULL);
    CHECK((f = fopen(path, "rb")) != NULL);
    if (!image || !f) {
        free(image);
        tmpdir_free(dir);
        return;
    }
    CHECK(fread(image, 1, (size_t)size, f) == (size_t)size);
    fclose(f);
    for (long pg = 1; pg < pages; pg++) {
        struct pps_run *run = NULL;
        struct pps_err err = {0};
        unsigned char saved[1024];
        memcpy(saved, image + pg * 4096, sizeof(saved));
        memset(image + pg * 4096, 0xA7, sizeof(saved));
        write_file(copy, image, (size_t)size);
        memcpy(image + pg * 4096, saved, sizeof(saved));
        int rc = pps_run_load(copy, &run, &err);
        if (rc) {
            CHECK_EQ_INT(rc, PPS_EFORMAT);
            CHECK_STR_CONTAINS(err.msg, "rank-00000.db: truncated or corrupted");
            failed++;
        }
        pps_run_free(run);
    }
    /* every page of this file holds spans, their index or another table: each one is noticed */
    CHECK_EQ_INT(failed, pages - 1);
    free(image);
    tmpdir_free(dir);
}

/* One span that the writer stores as given; on load it is corrupted, with the file's name. */
static void check_wild_span(int64_t start, int64_t end)
{
    char *dir = tmpdir_new();
    struct pps_store_writer *w = NULL;
    struct pps_err err = {0};
    struct pps_span s = make_span(0, PPS_SPAN_F, -1, -1);

    s.start_ns = start;
    s.end_ns = end;
    CHECK_EQ_INT(pps_store_writer_open(dir, 0, &w, &err), 0);
    CHECK_EQ_INT(pps_store_writer_meta_int(w, "p", 1, &err), 0);
    CHECK_EQ_INT(pps_store_writer_spans(w, &s, 1, &err), 0);
    CHECK_EQ_INT(pps_store_writer_close(w, 1, &err), 0);
    check_load_fails(dir, PPS_EFORMAT, "rank-00000.db", "truncated or corrupted");
    tmpdir_free(dir);
}

/* Durations and the run's extent are differences of times: a time near INT64_MIN or INT64_MAX
 * overflowed them (UBSan; the report printed -0.000 ms). Times are strictly within 2^62 of 0:
 * a span from -2^62 to 2^62 lasts 2^63 ns, which overflowed too (issue 11). */
static void test_bad_span_times_beyond_2_62(void)
{
    const int64_t lim = ((int64_t)1 << 62) - 1;

    check_wild_span(-INT64_MAX, INT64_MAX);
    check_wild_span(0, lim + 1);
    check_wild_span(-lim - 1, 0);
    check_wild_span(-lim - 1, lim + 1);
    check_wild_span(lim, -2); /* ends more than 2^62 - 1 ns before it starts */
    check_wild_span(45, 0);   /* ends before it starts: a negative duration in every figure */
    /* the limits themselves load */
    {
        char *dir = tmpdir_new();
        struct pps_store_writer *w = NULL;
        struct pps_err err = {0};
        struct pps_span s[2] = {make_span(0, PPS_SPAN_F, -1, -1), make_span(0, PPS_SPAN_B, -1, -1)};
        s[0].start_ns = -lim;
        s[0].end_ns = 0;
        s[1].start_ns = 0;
        s[1].end_ns = lim;
        CHECK_EQ_INT(pps_store_writer_open(dir, 0, &w, &err), 0);
        CHECK_EQ_INT(pps_store_writer_spans(w, s, 2, &err), 0);
        CHECK_EQ_INT(pps_store_writer_close(w, 1, &err), 0);
        struct pps_run *run = load_ok(dir);
        if (run)
            CHECK_EQ_INT(run->n_spans, 2);
        pps_run_free(run);
        tmpdir_free(dir);
    }
}

static void copy_file(const char *from, const char *to)
{
    FILE *f = fopen(from, "rb");
    char buf[65536];
    size_t n;
    FILE *g = fopen(to, "wb");
    CHECK(f != NULL && g != NULL);
    while (f && g && (n = fread(buf, 1, sizeof(buf), f)) > 0)
        CHECK(fwrite(buf, 1, n, g) == n);
    if (f)
        fclose(f);
    if (g)
        fclose(g);
}

/* cp rank-00000.db rank-00001.db: the loader read every span twice; merge refused it. */
static void test_bad_two_shards_claim_one_rank(void)
{
    char *dir = tmpdir_new(), a[600], b[600], out[600];
    struct pps_err err = {0};

    write_rank(dir, 0, NO_OFFSET, 1);
    copy_file(join(a, sizeof(a), dir, "rank-00000.db"), join(b, sizeof(b), dir, "rank-00001.db"));
    check_load_fails(dir, PPS_EFORMAT, "rank-00001.db", "rank 0 is in another shard");
    CHECK_EQ_INT(pps_run_merge(dir, join(out, sizeof(out), dir, "merged.db"), &err), PPS_EFORMAT);
    CHECK_STR_CONTAINS(err.msg, "rank-00001.db: its rank 0 is in another shard");
    CHECK(strchr(err.msg, '\n') == NULL);
    CHECK(file_size(out) < 0); /* refused before anything is written */
    /* one shard alone loads */
    unlink(b);
    struct pps_run *run = load_ok(dir);
    pps_run_free(run);
    tmpdir_free(dir);
}

static const struct test_case cases[] = {
    TEST(test_bad_missing_path),
    TEST(test_bad_empty_directory),
    TEST(test_bad_not_sqlite),
    TEST(test_bad_empty_file),
    TEST(test_bad_wrong_application_id),
    TEST(test_bad_missing_tables),
    TEST(test_bad_newer_version),
    TEST(test_bad_truncated),
    TEST(test_bad_garbage_in_the_middle),
    TEST(test_bad_garbage_anywhere),
    TEST(test_bad_span_times_beyond_2_62),
    TEST(test_bad_two_shards_claim_one_rank),
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    return test_main(cases, argc, argv);
}
