/*
 * test_export.c - the exporters on runs built by hand, where the answer is known to the byte:
 * each format's quoting of names and paths (commas, quotes, line breaks, control characters,
 * bytes that are not UTF-8), tracks split where spans overlap, flows paired by message id,
 * the SVG's merging of sub-pixel spans and its cap, its range checks, and the file that is
 * written whole or not at all. The formats parsed back by real parsers, on real runs, are in
 * tests/cli/export_cli.sh.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analysis_fixture.h"
#include "export.h"
#include "export_int.h"
#include "test.h"

/* A document written by one exporter, in memory. */
struct doc {
    char *text;
    size_t len;
    int rc;
    char what[128];
    struct pps_err err;
};

static struct doc export_of(int format, struct pps_run *r, const struct pps_svg_view *view)
{
    struct doc d = {0};
    struct pps_report *rep = report_of(r);
    struct pps_flag_list flags = PPS_FLAG_LIST_INIT;
    struct pps_export_input in = {r, rep, &flags, view};
    FILE *f = open_memstream(&d.text, &d.len);

    CHECK(f != NULL);
    CHECK_EQ_INT(pps_analysis_flags(r, rep, &flags, NULL), 0);
    d.rc = pps_export_write(f, format, &in, d.what, sizeof(d.what), &d.err);
    fclose(f);
    pps_flag_list_release(&flags);
    pps_report_free(rep);
    return d;
}

static size_t count(const char *hay, const char *needle)
{
    size_t n = 0;

    for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
        n++;
    return n;
}

/* Two stages, one iteration: F, B on each, a message from 0 to 1. */
static struct pps_run *small_run(void)
{
    struct pps_run *r = run_new(2, "gpipe", 2, 1, 1);

    run_add(r, 0, PPS_SPAN_F, 0, 0, 1000, 2000);
    run_add(r, 1, PPS_SPAN_F, 0, 0, 2500, 3500);
    run_add(r, 1, PPS_SPAN_B, 0, 0, 3500, 5500);
    run_add(r, 0, PPS_SPAN_B, 0, 0, 6000, 8000);
    span_sort(r);
    r->t_min = 1000;
    r->t_max = 8000;
    return r;
}

/* Names the run's spans may carry, each a trap for one format's quoting. */
static void add_names(struct pps_run *r)
{
    static const char *const names[] = {"plain", "a,b", "say \"hi\"", "two\nlines", "bad\xff"};

    r->n_names = sizeof(names) / sizeof(names[0]);
    r->names = calloc(r->n_names, sizeof(*r->names));
    CHECK(r->names != NULL);
    for (size_t i = 0; i < r->n_names; i++) {
        r->names[i] = strdup(names[i]);
        run_add(r, 0, PPS_SPAN_RANGE, 0, -1, 1100 + 10 * (int64_t)i, 1105 + 10 * (int64_t)i);
        r->stages[0].spans[r->stages[0].n - 1].name_id = (int32_t)i;
    }
    span_sort(r);
}

static void test_csv_quotes_names_as_rfc4180_says(void)
{
    struct pps_run *r = small_run();
    struct doc d;

    add_names(r);
    d = export_of(PPS_EXPORT_CSV, r, NULL);
    CHECK_EQ_INT(d.rc, 0);
    CHECK_STR_CONTAINS(d.text,
                       "kind,stage,chunk,mb,iter,start_ns,end_ns,dur_ns,peer,bytes,name,rank,clock,"
                       "corr\n");
    CHECK_STR_CONTAINS(d.text, "RANGE,0,0,-1,0,1100,1105,5,-1,0,plain,0,host,0\n");
    CHECK_STR_CONTAINS(d.text, ",\"a,b\",0,host");
    CHECK_STR_CONTAINS(d.text, ",\"say \"\"hi\"\"\",0,host");
    CHECK_STR_CONTAINS(d.text, ",\"two\nlines\",0,host");
    CHECK_STR_CONTAINS(d.text, ",bad\xef\xbf\xbd,0,host"); /* U+FFFD for the stray byte */
    CHECK_STR_CONTAINS(d.text, "F,1,0,0,0,2500,3500,1000,-1,0,,0,host,0\n");
    CHECK_STR_CONTAINS(d.what, "9 rows");
    free(d.text);
    pps_run_free(r);
}

static void test_openmetrics_escapes_label_values(void)
{
    struct pps_run *r = small_run();
    struct doc d;

    free(r->path);
    r->path = strdup("runs/a\"b\\c\nd");
    d = export_of(PPS_EXPORT_OPENMETRICS, r, NULL);
    CHECK_EQ_INT(d.rc, 0);
    CHECK_STR_CONTAINS(d.text, "ppscope_bubble_ratio{run=\"runs/a\\\"b\\\\c\\nd\",iter=\"0\"} ");
    CHECK_STR_CONTAINS(d.text, "# TYPE ppscope_bubble_ratio gauge\n# UNIT ppscope_bubble_ratio "
                               "ratio\n# HELP ppscope_bubble_ratio ");
    /* One iteration: no steady state, so no sample, but the family is there. */
    CHECK_STR_CONTAINS(d.text, "# HELP ppscope_steady_bubble_ratio The steady bubble: iterations "
                               "1..N-1 back to back, as they ran.\n# TYPE");
    CHECK(strcmp(d.text + d.len - 6, "# EOF\n") == 0);
    CHECK_EQ_INT(count(d.text, "\n# EOF"), 1);
    free(d.text);
    pps_run_free(r);
}

static void test_perfetto_escapes_names_and_path(void)
{
    struct pps_run *r = small_run();
    struct doc d;

    add_names(r);
    free(r->path);
    r->path = strdup("r\x01un\"\\");
    d = export_of(PPS_EXPORT_PERFETTO, r, NULL);
    CHECK_EQ_INT(d.rc, 0);
    CHECK_STR_CONTAINS(
        d.text, "{\"otherData\":{\"producer\":\"ppscope\",\"run\":\"r\xef\xbf\xbdun\\\"\\\\\"");
    CHECK_STR_CONTAINS(d.text, "{\"name\":\"say \\\"hi\\\"\",\"ph\":\"X\"");
    CHECK_STR_CONTAINS(d.text, "{\"name\":\"two\\nlines\",\"ph\":\"X\"");
    CHECK_STR_CONTAINS(d.text, "{\"name\":\"bad\xef\xbf\xbd\",\"ph\":\"X\"");
    /* ns precision in us: the F of stage 1 starts 1500 ns after the run's first span. */
    CHECK_STR_CONTAINS(d.text, "\"ts\":1.500,\"dur\":1.000,\"pid\":0");
    CHECK_EQ_INT(count(d.text, "\"ph\":\"X\""), 9);
    free(d.text);
    pps_run_free(r);
}

static void test_svg_escapes_the_path(void)
{
    struct pps_run *r = small_run();
    struct doc d;

    free(r->path);
    r->path = strdup("<a&b>\x02");
    d = export_of(PPS_EXPORT_SVG, r, NULL);
    CHECK_EQ_INT(d.rc, 0);
    CHECK_STR_CONTAINS(d.text, "<title>ppscope: &lt;a&amp;b&gt;\xef\xbf\xbd</title>");
    CHECK_EQ_INT(count(d.text, "<g class=\"stage\""), 2);
    CHECK_EQ_INT(count(d.text, "<rect class=\"span "), 4);
    free(d.text);
    pps_run_free(r);
}

/* Each format's quoting of what a run's strings may hold that the format cannot: ESC and BEL (a
 * terminal that prints the file acts on them), a C1 control, U+FFFF (no XML character), a
 * byte that is not UTF-8; each is U+FFFD, and the text around it stays. */
static void test_escapers_replace_control_characters(void)
{
    static const char in[] = "k\x1b]0;t\x07|\xc2\x9b|\xef\xbf\xbf|\xff|\xe5\x90\x8d";
#define R "\xef\xbf\xbd"
    static const struct {
        void (*put)(FILE *, const char *);
        const char *out;
    } rows[] = {
        {pps__export_xml_text, "k" R "]0;t" R "|" R "|" R "|" R "|\xe5\x90\x8d"},
        {pps__export_om_string, "k" R "]0;t" R "|" R "|" R "|" R "|\xe5\x90\x8d"},
        {pps__export_csv_field, "k" R "]0;t" R "|" R "|" R "|" R "|\xe5\x90\x8d"},
        {pps__export_json_string, "\"k" R "]0;t" R "|" R "|" R "|" R "|\xe5\x90\x8d\""},
    };
#undef R

    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);

        CHECK(f != NULL);
        rows[i].put(f, in);
        fclose(f);
        if (strcmp(buf, rows[i].out) != 0)
            fprintf(stderr, "row %zu: got '%s'\n", i, buf);
        CHECK(strcmp(buf, rows[i].out) == 0);
        free(buf);
    }
}

/* Spans of one stage that overlap without nesting go to two tracks, so each track nests. */
static void test_perfetto_splits_overlapping_spans_into_lanes(void)
{
    struct pps_run *r = small_run();
    struct doc d;

    run_add(r, 0, PPS_SPAN_F, 0, 1, 1500, 2500); /* overlaps F 1000-2000 in part */
    span_sort(r);
    d = export_of(PPS_EXPORT_PERFETTO, r, NULL);
    CHECK_EQ_INT(d.rc, 0);
    CHECK_STR_CONTAINS(d.text, "\"args\":{\"name\":\"stage 0\"}");
    CHECK_STR_CONTAINS(d.text, "\"args\":{\"name\":\"stage 0 (2)\"}");
    CHECK_EQ_INT(count(d.text, "\"name\":\"thread_name\""), 3);
    free(d.text);
    pps_run_free(r);
}

static void add_msg(struct pps_run *r, int kind, int stage, int peer, int64_t corr, int64_t t0,
                    int64_t t1)
{
    struct pps_span *sp;

    run_add(r, stage, kind, 0, 0, t0, t1);
    sp = &r->stages[stage].spans[r->stages[stage].n - 1];
    sp->peer = peer;
    sp->corr = corr;
    sp->bytes = 64;
    sp->chunk = -1;
}

/* Messages pair by link and id: the k-th send of a repeated id with the k-th receive; a receive
 * of another link, or without an id, has no arrow. */
static void test_perfetto_pairs_each_send_with_its_recv(void)
{
    struct pps_run *r = small_run();
    struct doc d;

    add_msg(r, PPS_SPAN_SEND, 0, 1, 7, 2000, 2100);
    add_msg(r, PPS_SPAN_RECV, 1, 0, 7, 2400, 2400); /* of no duration: still bound */
    add_msg(r, PPS_SPAN_SEND, 1, 0, 9, 5500, 5600);
    add_msg(r, PPS_SPAN_RECV, 0, 1, 9, 5900, 6000);
    add_msg(r, PPS_SPAN_SEND, 1, 0, 9, 5700, 5800); /* the id again */
    add_msg(r, PPS_SPAN_RECV, 0, 1, 9, 6000, 6001);
    add_msg(r, PPS_SPAN_RECV, 0, 1, 0, 6100, 6200); /* no id */
    span_sort(r);
    d = export_of(PPS_EXPORT_PERFETTO, r, NULL);
    CHECK_EQ_INT(d.rc, 0);
    CHECK_EQ_INT(count(d.text, "\"ph\":\"s\""), 3);
    CHECK_EQ_INT(count(d.text, "\"ph\":\"f\",\"cat\":\"p2p\""), 3);
    /* Send at the middle of 2000-2100 (1.050 us after the first span), receive at its start. */
    CHECK_STR_CONTAINS(d.text, "\"ph\":\"s\",\"cat\":\"p2p\",\"id\":1,\"ts\":1.050");
    CHECK_STR_CONTAINS(d.text, "\"ph\":\"f\",\"cat\":\"p2p\",\"id\":1,\"bp\":\"e\",\"ts\":1.400");
    CHECK_STR_CONTAINS(d.text, "\"id\":2,\"ts\":4.550"); /* the first send of id 9 ... */
    CHECK_STR_CONTAINS(d.text, "\"id\":2,\"bp\":\"e\",\"ts\":4.950"); /* ... to the first recv */
    CHECK_STR_CONTAINS(d.what, "3 flows");
    free(d.text);
    pps_run_free(r);
}

/* Thousands of spans a fraction of a pixel wide make a rect per two pixels, each saying how many
 * spans it stands for, in the colour of the kind that covers most of it, as pale as it is idle. */
static void test_svg_merges_subpixel_spans(void)
{
    struct pps_run *r = run_new(1, NULL, 0, 0, 0);
    struct pps_svg_view v = {.t0 = 0, .t1 = 10000000, .n_iters = 1, .n_run_iters = 1};
    struct doc d;
    long total = 0;
    int n = 20000;

    /* F and B alternating in 5 ms (540 px), B the longer, busy 48% of the time: 0.03 px each. */
    for (int i = 0; i < n; i++)
        run_add(r, 0, i % 2 ? PPS_SPAN_B : PPS_SPAN_F, 0, i, 250 * (int64_t)i,
                250 * (int64_t)i + (i % 2 ? 200 : 40));
    run_add(r, 0, PPS_SPAN_W, 0, 0, 6000000, 8000000); /* 2 ms: 216 px, a rect of its own */
    span_sort(r);
    r->t_max = 10000000;
    d = export_of(PPS_EXPORT_SVG, r, &v);
    CHECK_EQ_INT(d.rc, 0);
    CHECK(count(d.text, "<rect class=\"span B\"") >= 260);
    CHECK(count(d.text, "<rect class=\"span B\"") <= 280);
    CHECK_EQ_INT(count(d.text, "<rect class=\"span F\""), 0); /* B covers more */
    CHECK(count(d.text, "fill-opacity=\"0.4") + count(d.text, "fill-opacity=\"0.5") >= 260);
    CHECK_STR_CONTAINS(d.text, "<rect class=\"span W\" data-spans=\"1\" x=\"744.00\"");
    for (const char *p = strstr(d.text, "data-spans=\""); p; p = strstr(p + 1, "data-spans=\""))
        total += strtol(p + strlen("data-spans=\""), NULL, 10);
    CHECK_EQ_INT(total, n + 1);
    CHECK_STR_CONTAINS(d.what, "20001 spans");
    free(d.text);
    pps_run_free(r);
}

/* Wide spans that overlap cannot merge: past the cap the rest is left out, and said. */
static void test_svg_caps_its_rects(void)
{
    struct pps_run *r = run_new(1, NULL, 0, 0, 0);
    struct pps_svg_view v = {.t0 = 0, .t1 = 1000000000, .n_iters = 1, .n_run_iters = 1};
    struct doc d;
    int n = PPS_SVG_MAX_RECTS + 1000;

    for (int i = 0; i < n; i++)
        run_add(r, 0, PPS_SPAN_F, 0, i, 10000 * (int64_t)i, 10000 * (int64_t)i + 100000000);
    span_sort(r);
    r->t_max = 1000000000;
    d = export_of(PPS_EXPORT_SVG, r, &v);
    CHECK_EQ_INT(d.rc, 0);
    CHECK_EQ_INT(count(d.text, "<rect class=\"span "), PPS_SVG_MAX_RECTS);
    CHECK_STR_CONTAINS(d.text, "1000 more spans left out (over 50000 rects)");
    free(d.text);
    pps_run_free(r);
}

static void check_view_error(struct pps_run *r, struct pps_svg_range range, const char *why)
{
    struct pps_report *rep = report_of(r);
    struct pps_svg_view v;
    struct pps_err err = {0, ""};

    CHECK_EQ_INT(pps_export_svg_view(r, rep, &range, &v, &err), PPS_EINVAL);
    CHECK_STR_CONTAINS(err.msg, why);
    pps_report_free(rep);
}

static void test_svg_view_refuses_what_the_run_cannot_show(void)
{
    struct pps_run *r = small_run();

    check_view_error(r, (struct pps_svg_range){NAN, NAN, 3}, "has no iteration 3 (it has 0 to 0)");
    check_view_error(r, (struct pps_svg_range){0.001, NAN, 0}, "one or the other");
    check_view_error(r, (struct pps_svg_range){0.005, 0.002, -1}, "is not before --to");
    check_view_error(r, (struct pps_svg_range){0.5, NAN, -1}, "past the end");
    check_view_error(r, (struct pps_svg_range){-1, NAN, -1}, "from 0 up");
    pps_run_free(r);
}

static void test_svg_view_defaults_to_the_first_iterations(void)
{
    struct pps_run *r = run_new(1, NULL, 0, 0, 0);
    struct pps_report *rep;
    struct pps_svg_view v;
    struct pps_svg_range range = PPS_SVG_RANGE_INIT;

    for (int it = 0; it < 5; it++)
        run_add(r, 0, PPS_SPAN_F, it, 0, 1000 * (int64_t)it, 1000 * (int64_t)it + 800);
    span_sort(r);
    r->t_max = 4800;
    rep = report_of(r);
    CHECK_EQ_INT(pps_export_svg_view(r, rep, NULL, &v, NULL), 0);
    CHECK_EQ_INT(v.t0, 0);
    CHECK_EQ_INT(v.t1, (PPS_SVG_DEFAULT_ITERS - 1) * 1000 + 800);
    CHECK_EQ_INT(v.n_iters, PPS_SVG_DEFAULT_ITERS);
    CHECK_EQ_INT(v.defaulted, 1);
    range.iter = 3;
    CHECK_EQ_INT(pps_export_svg_view(r, rep, &range, &v, NULL), 0);
    CHECK_EQ_INT(v.t0, 3000);
    CHECK_EQ_INT(v.t1, 3800);
    CHECK_EQ_INT(v.first_iter, 3);
    CHECK_EQ_INT(v.n_iters, 1);
    range = (struct pps_svg_range){0.0015, NAN, -1};
    CHECK_EQ_INT(pps_export_svg_view(r, rep, &range, &v, NULL), 0);
    CHECK_EQ_INT(v.t0, 1500);
    CHECK_EQ_INT(v.t1, 4800);
    CHECK_EQ_INT(v.first_iter, 1); /* iteration 1 ends at 1800: it lies in the view */
    CHECK_EQ_INT(v.last_iter, 4);
    CHECK_EQ_INT(v.n_iters, 4);
    pps_report_free(rep);
    pps_run_free(r);
}

static char *tmpdir_new(void)
{
    char *dir = strdup("/tmp/pps-test-export-XXXXXX");

    CHECK(dir && mkdtemp(dir));
    return dir;
}

/* Entries in dir besides . and .., for "nothing left behind". */
static int entries(const char *dir)
{
    char cmd[512];
    FILE *p;
    int n = -1;

    snprintf(cmd, sizeof(cmd), "ls -A '%s' | wc -l", dir);
    p = popen(cmd, "r");
    CHECK(p != NULL);
    if (fscanf(p, "%d", &n) != 1)
        n = -1;
    pclose(p);
    return n;
}

static void test_file_refuses_an_existing_file_without_force(void)
{
    struct pps_run *r = small_run();
    struct pps_report *rep = report_of(r);
    struct pps_export_input in = {r, rep, NULL, NULL};
    struct pps_err err = {0, ""};
    char *dir = tmpdir_new(), path[256], buf[16] = "";
    FILE *f;

    snprintf(path, sizeof(path), "%s/spans.csv", dir);
    f = fopen(path, "w");
    CHECK(f != NULL);
    fputs("mine", f);
    fclose(f);
    CHECK_EQ_INT(pps_export_file(path, PPS_EXPORT_CSV, &in, 0, NULL, 0, &err), PPS_EINVAL);
    CHECK_STR_CONTAINS(err.msg, "spans.csv: exists: use --force to replace it");
    f = fopen(path, "r");
    CHECK(f && fgets(buf, sizeof(buf), f));
    fclose(f);
    CHECK(strcmp(buf, "mine") == 0);
    CHECK_EQ_INT(entries(dir), 1);
    CHECK_EQ_INT(pps_export_file(path, PPS_EXPORT_CSV, &in, 1, NULL, 0, &err), 0);
    f = fopen(path, "r");
    CHECK(f && fgets(buf, sizeof(buf), f));
    fclose(f);
    CHECK(strncmp(buf, "kind,stage", 10) == 0);
    CHECK_EQ_INT(entries(dir), 1);
    unlink(path);
    rmdir(dir);
    free(dir);
    pps_report_free(rep);
    pps_run_free(r);
}

/* A writer that fails (a bad view) leaves neither the file nor its temporary. */
static void test_file_leaves_nothing_when_the_export_fails(void)
{
    struct pps_run *r = small_run();
    struct pps_report *rep = report_of(r);
    struct pps_svg_view bad = {.t0 = 5, .t1 = 5};
    struct pps_export_input in = {r, rep, NULL, &bad};
    struct pps_err err = {0, ""};
    char *dir = tmpdir_new(), path[256];

    snprintf(path, sizeof(path), "%s/t.svg", dir);
    CHECK_EQ_INT(pps_export_file(path, PPS_EXPORT_SVG, &in, 0, NULL, 0, &err), PPS_EINVAL);
    CHECK_EQ_INT(entries(dir), 0);
    snprintf(path, sizeof(path), "%s/no/such/dir/t.csv", dir);
    CHECK_EQ_INT(pps_export_file(path, PPS_EXPORT_CSV, &in, 0, NULL, 0, &err), PPS_EINVAL);
    CHECK_STR_CONTAINS(err.msg, "t.csv: cannot write there: No such file or directory");
    CHECK_EQ_INT(entries(dir), 0);
    rmdir(dir);
    free(dir);
    pps_report_free(rep);
    pps_run_free(r);
}

/* A write error (here the one a stream reports when it is full) is PPS_EIO. */
static void test_writer_reports_a_write_error(void)
{
    struct pps_run *r = small_run();
    struct pps_report *rep = report_of(r);
    struct pps_export_input in = {r, rep, NULL, NULL};
    struct pps_err err = {0, ""};
    FILE *f = fopen("/dev/full", "w");

    if (!f)
        TEST_SKIP("no /dev/full");
    CHECK_EQ_INT(pps_export_write(f, PPS_EXPORT_OPENMETRICS, &in, NULL, 0, &err), PPS_EIO);
    CHECK_STR_CONTAINS(err.msg, "write failed: No space left on device");
    fclose(f);
    pps_report_free(rep);
    pps_run_free(r);
}

static const struct test_case cases[] = {
    TEST(test_csv_quotes_names_as_rfc4180_says),
    TEST(test_openmetrics_escapes_label_values),
    TEST(test_perfetto_escapes_names_and_path),
    TEST(test_svg_escapes_the_path),
    TEST(test_escapers_replace_control_characters),
    TEST(test_perfetto_splits_overlapping_spans_into_lanes),
    TEST(test_perfetto_pairs_each_send_with_its_recv),
    TEST(test_svg_merges_subpixel_spans),
    TEST(test_svg_caps_its_rects),
    TEST(test_svg_view_refuses_what_the_run_cannot_show),
    TEST(test_svg_view_defaults_to_the_first_iterations),
    TEST(test_file_refuses_an_existing_file_without_force),
    TEST(test_file_leaves_nothing_when_the_export_fails),
    TEST(test_writer_reports_a_write_error),
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    return test_main(cases, argc, argv);
}
