/*
 * test_import_kineto.c - the Kineto importer's parts on small hand-made traces: the numbers'
 * conversion, the streaming reader where its windows are cut (inside strings, after nested
 * objects, across chunks, events bigger than a chunk, gzip), and the import's rules (docs/
 * import.md): labels to ops, gloo's work ranges merged into their actions, an op starting when
 * its input arrived, kernels through their launch, NCCL kernels, virtual stages to ranks and
 * chunks, B/E pairs, steps, the time base, the ranks; and bad input refused with nothing left.
 */
#include "pps_config.h"
#include "test.h"

#if !defined(PPS_HAVE_SIMDJSON) || !defined(PPS_HAVE_ZLIB)

int main(void)
{
    printf("skipped: built without simdjson or zlib, so without the Kineto importer\n");
    return 77;
}

#else

#include <zlib.h>

#include "import.h"
#include "kineto_int.h"
#include "storage_fixture.h"

/* ---- helpers ------------------------------------------------------------------------------ */

static char *g_dir;

static const char *tmp_path(const char *name)
{
    static char buf[8][1024];
    static int k;
    char *b = buf[k++ % 8];
    if (!g_dir)
        g_dir = tmpdir_new();
    return join(b, sizeof(buf[0]), g_dir, name);
}

static const char *put_file(const char *name, const char *text)
{
    const char *p = tmp_path(name);
    FILE *f = fopen(p, "w");
    CHECK(f != NULL);
    CHECK(fwrite(text, 1, strlen(text), f) == strlen(text));
    CHECK(fclose(f) == 0);
    return p;
}

/* Imports files into a new run (name under the temporary directory); returns the rc. */
static int import(const char *run, const char *const *files, int n, struct pps_err *err)
{
    struct pps_import_opts o = {tmp_path(run), 0};
    struct pps_import_stats st;
    rm_rf(o.out_dir);
    return pps_import_kineto(files, n, &o, &st, err);
}

static struct pps_run *import_load(const char *run, const char *const *files, int n)
{
    struct pps_err err = {0};
    struct pps_run *r = NULL;
    int rc = import(run, files, n, &err);
    if (rc)
        fprintf(stderr, "  import: %s\n", err.msg);
    CHECK(rc == 0);
    CHECK(pps_run_load(tmp_path(run), &r, &err) == 0);
    return r;
}

/* The k-th span (in start order) of kind on stage; NULL when there is none. */
static const struct pps_span *nth(const struct pps_run *r, int stage, int kind, int k)
{
    if (stage >= r->n_stages)
        return NULL;
    for (size_t i = 0; i < r->stages[stage].n; i++) {
        const struct pps_span *s = &r->stages[stage].spans[i];
        if (s->kind == kind && k-- == 0)
            return s;
    }
    return NULL;
}

static int count(const struct pps_run *r, int stage, int kind)
{
    int n = 0;
    while (nth(r, stage, kind, n))
        n++;
    return n;
}

/* An "X" event: name, thread, ts and dur in microseconds, and more fields (may be ""). */
static void ev(char *buf, size_t n, const char *name, int tid, const char *ts, const char *dur,
               const char *more)
{
    size_t len = strlen(buf);
    snprintf(buf + len, n - len,
             "%s{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"%s\", \"pid\": 1, "
             "\"tid\": %d, \"ts\": %s, \"dur\": %s%s%s}",
             len && buf[len - 1] != '[' ? ",\n" : "", name, tid, ts, dur, *more ? ", " : "", more);
}

/* Imports a trace that opens with head (up to its event list's '[') and holds one thread's
 * labels (NULL-ended), 1 us each at 1, 3, 5, ... us, from NAME.json into the run NAME-run. */
static struct pps_run *import_labels(const char *name, const char *head, const char *const *labels)
{
    static char buf[4096];
    char file[64], run[64], ts[16];
    const char *files[1];

    snprintf(buf, sizeof(buf), "%s", head);
    for (int i = 0; labels[i]; i++) {
        snprintf(ts, sizeof(ts), "%d", 2 * i + 1);
        ev(buf, sizeof(buf), labels[i], 1, ts, "1", "");
    }
    strcat(buf, "]}");
    snprintf(file, sizeof(file), "%s.json", name);
    snprintf(run, sizeof(run), "%s-run", name);
    files[0] = put_file(file, buf);
    return import_load(run, files, 1);
}

/* ---- numbers ------------------------------------------------------------------------------ */

static void test_us_to_ns(void)
{
    static const struct {
        const char *text;
        int ok;
        int64_t ns;
    } cases[] = {
        {"0", 1, 0},
        {"1", 1, 1000},
        {"1.5", 1, 1500},
        {"5267337588310.898", 1, 5267337588310898},
        {"1682725898079292", 1, 1682725898079292000},
        {"0.0004", 1, 0},
        {"0.0005", 1, 1}, /* half away from zero */
        {"1.23456789", 1, 1235},
        {"-2.5", 1, -2500},
        {"1e3", 1, 1000000},
        {"2.5E-3", 1, 3},
        {"4611686018427387", 1, 4611686018427387000},
        {"4611686018427388", 0, 0}, /* over 2^62 ns */
        {"123456789012345678901234567890", 0, 0},
        {"1e400", 0, 0},
        {"", 0, 0},
        {"-", 0, 0},
        {"1.", 0, 0},
        {"abc", 0, 0},
        {"1x", 0, 0},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int64_t v = -42;
        int rc = pps__kineto_us_to_ns(cases[i].text, strlen(cases[i].text), &v);
        if ((rc == 0) != cases[i].ok || (rc == 0 && v != cases[i].ns)) {
            fprintf(stderr, "  \"%s\": rc %d, %lld\n", cases[i].text, rc, (long long)v);
            test_failures_++;
        }
    }
}

/* ---- the reader --------------------------------------------------------------------------- */

/* Reads a file to its end; the events' names, each "e<i>", must come in order, once each. */
static int64_t read_all(const char *path, int64_t *rank, int64_t *base)
{
    struct pps__kreader *r = NULL;
    struct pps_err err = {0};
    const struct pps__kev *evs;
    size_t n;
    int64_t seen = 0;
    int rc;

    CHECK(pps__kreader_open(path, &r, &err) == 0);
    while ((rc = pps__kreader_next(r, &evs, &n, &err)) > 0) {
        for (size_t i = 0; i < n; i++, seen++) {
            char want[32];
            snprintf(want, sizeof(want), "e%lld", (long long)seen);
            if (evs[i].name.n < strlen(want) || memcmp(evs[i].name.s, want, strlen(want))) {
                fprintf(stderr, "  event %lld: name %.*s\n", (long long)seen, (int)evs[i].name.n,
                        evs[i].name.s);
                test_failures_++;
                pps__kreader_close(r);
                return -1;
            }
        }
    }
    if (rc)
        fprintf(stderr, "  %s\n", err.msg);
    CHECK(rc == 0);
    CHECK(r->events == seen);
    if (rank)
        *rank = r->rank;
    if (base)
        *base = r->base_ns;
    pps__kreader_close(r);
    return seen;
}

/* A window cut after a "}," inside a string, or after a nested object, is refused by simdjson
 * and cut again carefully: no event is lost or read twice. */
static void test_reader_wrong_cuts(void)
{
    static char buf[4096];
    int64_t rank, base;

    buf[0] = '\0';
    strcat(buf, "{\"distributedInfo\": {\"rank\": 3, \"world_size\": 4}, \"traceEvents\": [");
    ev(buf, sizeof(buf), "e0", 1, "1", "1", "");
    ev(buf, sizeof(buf), "e1 {\\\"a\\\": 1}, {", 1, "2", "1",
       "\"args\": {\"x\": {\"y\": 1}, \"z\": 2}");
    ev(buf, sizeof(buf), "e2 }, ", 1, "3", "1", "\"args\": {\"x\": {\"y\": \"}, \"}, \"z\": 2}");
    strcat(buf,
           "], \"deviceProperties\": [{\"id\": 0}, {\"id\": 1}], \"baseTimeNanoseconds\": 77}");
    CHECK(read_all(put_file("cuts.json", buf), &rank, &base) == 3);
    CHECK_EQ_INT(rank, 3);
    CHECK_EQ_INT(base, 77);
}

/* Many events over many chunks, an event bigger than a chunk, gzip, a bare array. */
static void test_reader_stream(void)
{
    size_t cap = 12u << 20, len = 0;
    char *big = malloc(cap);
    gzFile gz;
    int i;

    CHECK(big != NULL);
    len += (size_t)sprintf(big + len, "\xEF\xBB\xBF{\"traceEvents\": [\n");
    for (i = 0; i < 40000; i++)
        len += (size_t)sprintf(big + len,
                               "%s  {\"ph\": \"X\", \"name\": \"e%d\", \"pid\": 1, \"tid\": 2, "
                               "\"ts\": %d.125, \"dur\": 1.5, \"args\": {\"External id\": %d}}",
                               i ? ",\n" : "", i, i, i);
    /* One event of 3 MiB: the window grows for it. */
    len += (size_t)sprintf(big + len,
                           ",\n{\"ph\": \"X\", \"name\": \"e%d\", \"ts\": 1, \"dur\": 1, "
                           "\"args\": {\"s\": \"",
                           i++);
    memset(big + len, 'x', 3u << 20);
    len += 3u << 20;
    len += (size_t)sprintf(big + len, "\"}},\n{\"ph\": \"i\", \"name\": \"e%d\", \"ts\": 2}, ]}\n",
                           i++);
    big[len] = '\0';
    CHECK(read_all(put_file("stream.json", big), NULL, NULL) == i);
    gz = gzopen(tmp_path("stream.json.gz"), "wb");
    CHECK(gz != NULL);
    CHECK(gzwrite(gz, big, (unsigned)len) == (int)len);
    CHECK(gzclose(gz) == Z_OK);
    CHECK(read_all(tmp_path("stream.json.gz"), NULL, NULL) == i);
    free(big);
    CHECK(read_all(put_file("bare.json", "[{\"ph\": \"X\", \"name\": \"e0\", \"ts\": 1, \"dur\": "
                                         "1}, {\"name\": \"e1\"}]"),
                   NULL, NULL) == 2);
}

/* Bad files: each a PPS_EFORMAT (or PPS_ENOENT) naming the file, with what is wrong. */
static void test_reader_bad(void)
{
    static const struct {
        const char *text, *says;
    } cases[] = {
        {"", "empty"},
        {"   \n", "empty"},
        {"nope", "not JSON"},
        {"{\"traceEvents\": [{\"ph\": \"X\"", "truncated"},
        {"{\"traceEvents\": [{\"ph\": \"X\"}", "truncated"},
        {"{\"traceEvents\": [{\"ph\": \"X\"}]", "truncated"},
        {"{\"traceEvents\": 5}", "not an array"},
        {"{\"a\": 1}", "no traceEvents"},
        {"{\"traceEvents\": [1]}", "not an object"},
        {"{\"traceEvents\": [{\"ph\": \"X\", \"ts\": \"1\"}]}", "ts is not a number"},
        {"{\"traceEvents\": [{\"ph\": \"X\", \"ts\": 1, \"name\": 1}]}", "name is not a string"},
        {"{\"traceEvents\": [{\"ph\": \"X\", \"pid\": [1]}]}", "pid is neither"},
        {"{\"traceEvents\": [{\"ph\": \"X\", \"args\": 1}]}", "args is not an object"},
        {"{\"traceEvents\": [{\"ph\": \"X\", \"ts\": NaN}]}", "event 0"},
        {"{\"traceEvents\": [{}, {\"ph\": \"X\"}}]}", "unbalanced"},
        {"{\"traceEvents\": [,{}]}", "empty element"},
        {"{\"traceEvents\": [{}]} x", "follows the end"},
        {"{\"traceEvents\": [{}] \"a\": 1}", "',' or '}'"},
        {"{\"distributedInfo\": [1], \"traceEvents\": [{}]}", "distributedInfo"},
        {"{\"distributedInfo\": {\"rank\": 1.5}, \"traceEvents\": [{}]}", "rank"},
        {"{\"distributedInfo\": {\"rank\": 99999}, \"traceEvents\": [{}]}", "out of range"},
        {"{\"baseTimeNanoseconds\": \"1\", \"traceEvents\": [{}]}", "baseTimeNanoseconds"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct pps__kreader *r = NULL;
        struct pps_err err = {0};
        const struct pps__kev *evs;
        size_t n;
        int rc;
        char name[32];
        snprintf(name, sizeof(name), "bad-%zu.json", i);
        const char *path = put_file(name, cases[i].text);
        CHECK(pps__kreader_open(path, &r, &err) == 0);
        while ((rc = pps__kreader_next(r, &evs, &n, &err)) > 0)
            ;
        pps__kreader_close(r);
        if (rc != PPS_EFORMAT || !strstr(err.msg, cases[i].says) || !strstr(err.msg, name)) {
            fprintf(stderr, "  case %zu (%s): rc %d, \"%s\"\n", i, cases[i].text, rc, err.msg);
            test_failures_++;
        }
    }
}

/* ---- the import's rules ------------------------------------------------------------------- */

/* A "PP:" schedule on rank 0 of 2: the SEND and RECV actions last until gloo's transfers end,
 * the B starts when its gradients arrived, kernels follow their launches. */
static void test_import_pp_actions(void)
{
    static char buf[8192];
    const char *files[1];
    const struct pps_span *s;
    struct pps_run *r;
    int64_t base = 1000000000;

    snprintf(buf, sizeof(buf),
             "{\"distributedInfo\": {\"rank\": 0, \"world_size\": 2}, "
             "\"traceEvents\": [");
    ev(buf, sizeof(buf), "ProfilerStep#5", 1, "0", "1000", "");
    ev(buf, sizeof(buf), "PP:0F0", 1, "10", "30", "");
    strcat(buf, ",{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", "
                "\"pid\": 1, \"tid\": 1, \"ts\": 20, \"dur\": 2, \"args\": {\"correlation\": 7}}");
    strcat(buf, ",{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"gemm\", \"pid\": 0, \"tid\": 7, "
                "\"ts\": 1200, \"dur\": 5, \"args\": {\"correlation\": 7}}");
    ev(buf, sizeof(buf), "PP:0SEND_F0", 1, "40", "5", "");
    ev(buf, sizeof(buf), "c10d::send", 1, "41", "2",
       "\"args\": {\"Concrete Inputs\": [\"\", \"\", "
       "\"1\", \"0\"]}");
    ev(buf, sizeof(buf), "gloo:send", 1, "42", "58", "");
    strcat(buf, ",{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", "
                "\"pid\": 1, \"tid\": 1, \"ts\": 43, \"dur\": 1, \"args\": {\"correlation\": 8}}");
    strcat(buf, ",{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"ncclDevKernel_SendRecv(x)\", "
                "\"pid\": 0, \"tid\": 8, \"ts\": 50, \"dur\": 9, \"args\": {\"correlation\": 8}}");
    strcat(buf, ",{\"ph\": \"X\", \"cat\": \"gpu_memcpy\", \"name\": \"Memcpy HtoD\", \"pid\": 0, "
                "\"tid\": 7, \"ts\": 60, \"dur\": 1, \"args\": {\"bytes\": 4096}}");
    ev(buf, sizeof(buf), "PP:0RECV_B0", 1, "100", "5", "");
    ev(buf, sizeof(buf), "gloo:recv", 1, "101", "99", "");
    ev(buf, sizeof(buf), "PP:0B0", 1, "150", "110", "");
    ev(buf, sizeof(buf), "PP:0WAIT_SEND_F0", 1, "300", "1", "");
    ev(buf, sizeof(buf), "Optimizer.step#SGD.step", 1, "400", "10", "");
    strcat(buf, ",{\"ph\": \"X\", \"cat\": \"python_function\", \"name\": \"f\", \"pid\": 1, "
                "\"tid\": 1, \"ts\": 1, \"dur\": 1}");
    snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), "], \"baseTimeNanoseconds\": %lld}",
             (long long)base);
    files[0] = put_file("pp.json", buf);
    r = import_load("pp-run", files, 1);
    CHECK_EQ_INT(r->n_shards, 1);
    CHECK_STR_CONTAINS(pps_run_meta(r, "source"), "kineto");
    CHECK_STR_CONTAINS(pps_run_meta(r, "world"), "2");
    CHECK((s = nth(r, 0, PPS_SPAN_F, 0)) != NULL);
    CHECK_EQ_INT(s->start_ns, base + 10000);
    CHECK_EQ_INT(s->end_ns, base + 40000);
    CHECK_EQ_INT(s->iter, 5);
    CHECK_EQ_INT(s->mb, 0);
    CHECK((s = nth(r, 0, PPS_SPAN_SEND, 0)) != NULL); /* the action, to gloo's completion */
    CHECK_EQ_INT(s->start_ns, base + 40000);
    CHECK_EQ_INT(s->end_ns, base + 100000);
    CHECK_EQ_INT(s->peer, 1);
    CHECK((s = nth(r, 0, PPS_SPAN_SEND, 1)) != NULL); /* NCCL's kernel, launched in the action */
    CHECK_EQ_INT(s->start_ns, base + 50000);
    CHECK_EQ_INT(s->peer, 1);
    CHECK_EQ_INT(s->corr, 0);
    CHECK(nth(r, 0, PPS_SPAN_SEND, 2) == NULL); /* gloo's range is in the action */
    CHECK((s = nth(r, 0, PPS_SPAN_RECV, 0)) != NULL);
    CHECK_EQ_INT(s->end_ns, base + 200000);
    CHECK_EQ_INT(count(r, 0, PPS_SPAN_RECV), 1);
    CHECK((s = nth(r, 0, PPS_SPAN_BW, 0)) != NULL); /* waited for its gradients until 200 */
    CHECK_EQ_INT(s->start_ns, base + 200000);
    CHECK_EQ_INT(s->end_ns, base + 260000);
    CHECK((s = nth(r, 0, PPS_SPAN_KERNEL, 0)) != NULL); /* ran after the step: its launch's */
    CHECK_EQ_INT(s->iter, 5);
    CHECK_EQ_INT(s->mb, 0);
    CHECK_EQ_INT(s->corr, 7);
    CHECK_STR_CONTAINS(pps_run_span_name(r, s), "gemm");
    CHECK((s = nth(r, 0, PPS_SPAN_MEMCPY, 0)) != NULL);
    CHECK_EQ_INT(s->bytes, 4096);
    CHECK_EQ_INT(count(r, 0, PPS_SPAN_OPT), 1);
    /* Step, launches, c10d::send, WAIT_SEND_F: ranges; the Python frame: skipped. */
    CHECK_EQ_INT(count(r, 0, PPS_SPAN_RANGE), 5);
    pps_run_free(r);
}

/* "Forward i" / "Backward i": receives and sends of the microbatch, peers from c10d's
 * arguments or the neighbours, the op starting when its input arrived. Rank from the order. */
static void test_import_single_stage(void)
{
    static char a[4096], b[1024];
    const char *files[2];
    const struct pps_span *s;
    struct pps_run *r;

    strcpy(a, "{\"traceEvents\": [");
    ev(a, sizeof(a), "Forward 0", 1, "10", "90", "");
    ev(a, sizeof(a), "c10d::recv_", 1, "11", "2",
       "\"args\": {\"Concrete Inputs\": [\"\", \"\", "
       "\"0\", \"0\"]}");
    ev(a, sizeof(a), "gloo:recv", 1, "12", "48", "");
    ev(a, sizeof(a), "gloo:send", 1, "90", "210", "");
    ev(a, sizeof(a), "Backward 0", 1, "400", "100", "");
    ev(a, sizeof(a), "gloo:recv", 1, "401", "49", "");
    strcat(a, "]}");
    strcpy(b, "{\"traceEvents\": [");
    ev(b, sizeof(b), "Forward 0", 1, "1", "5", "");
    strcat(b, "]}");
    files[0] = put_file("single-0.json", b);
    files[1] = put_file("single-1.json", a);
    r = import_load("single-run", files, 2);
    CHECK_EQ_INT(r->n_shards, 2);
    CHECK((s = nth(r, 1, PPS_SPAN_F, 0)) != NULL);
    CHECK_EQ_INT(s->start_ns, 60000);
    CHECK_EQ_INT(s->end_ns, 100000);
    CHECK((s = nth(r, 1, PPS_SPAN_RECV, 0)) != NULL);
    CHECK_EQ_INT(s->peer, 0); /* c10d::recv_'s srcRank */
    CHECK_EQ_INT(s->mb, 0);
    CHECK((s = nth(r, 1, PPS_SPAN_SEND, 0)) != NULL);
    CHECK_EQ_INT(s->peer, -1); /* to rank 2, which is not in a world of 2 */
    CHECK_EQ_INT(s->end_ns, 300000);
    CHECK((s = nth(r, 1, PPS_SPAN_BW, 0)) != NULL);
    CHECK_EQ_INT(s->start_ns, 450000);
    CHECK((s = nth(r, 1, PPS_SPAN_RECV, 1)) != NULL);
    CHECK_EQ_INT(s->peer, -1); /* from rank 2: none */
    CHECK_EQ_INT(count(r, 0, PPS_SPAN_F), 1);
    pps_run_free(r);
}

/* Virtual stages: looped and V-shaped placements become stage and chunk; labels that fit
 * neither keep their stages. */
static void test_import_layouts(void)
{
    static const char rank0_of_2[] =
        "{\"distributedInfo\": {\"rank\": 0, \"world_size\": 2}, \"traceEvents\": [";
    const struct pps_span *s;
    struct pps_run *r;

    /* Rank 0 of 2, looped: stages 0 and 2; 2 sends to 3, on rank 1. */
    r = import_labels("loop", rank0_of_2,
                      (const char *const[]){"PP:0F0", "PP:2F0", "PP:2SEND_F0", NULL});
    CHECK((s = nth(r, 0, PPS_SPAN_F, 1)) != NULL);
    CHECK_EQ_INT(s->chunk, 1);
    CHECK((s = nth(r, 0, PPS_SPAN_SEND, 0)) != NULL);
    CHECK_EQ_INT(s->peer, 1);
    CHECK_EQ_INT(s->chunk, 1);
    CHECK_STR_CONTAINS(pps_run_meta(r, "kineto_stages"), "loop");
    pps_run_free(r);

    /* Rank 0 of 2, V: stages 0 and 3; 3's gradients go to 2, on rank 1. */
    r = import_labels(
        "v", rank0_of_2,
        (const char *const[]){"PP:0F0", "PP:3F0", "PP:3SEND_B0", "PP:0SEND_F0", NULL});
    CHECK_EQ_INT(r->n_stages, 1);
    CHECK((s = nth(r, 0, PPS_SPAN_F, 1)) != NULL);
    CHECK_EQ_INT(s->chunk, 1);
    CHECK((s = nth(r, 0, PPS_SPAN_SEND, 0)) != NULL);
    CHECK_EQ_INT(s->peer, 1);
    CHECK((s = nth(r, 0, PPS_SPAN_SEND, 1)) != NULL);
    CHECK_EQ_INT(s->peer, 1);
    CHECK_STR_CONTAINS(pps_run_meta(r, "kineto_stages"), "v");
    pps_run_free(r);

    /* One process labelling three stages itself (ppscope's own names): stages as labelled. */
    r = import_labels("asis", "{\"traceEvents\": [",
                      (const char *const[]){"pps:F stage=0 mb=0", "pps:F stage=1 mb=0",
                                            "pps:F stage=2 mb=0", NULL});
    CHECK_EQ_INT(r->n_stages, 3);
    for (int k = 0; k < 3; k++)
        CHECK_EQ_INT(count(r, k, PPS_SPAN_F), 1);
    pps_run_free(r);
}

/* B/E pairs, a step of them, unmatched ends, thread names, the time base. */
static void test_import_begin_end(void)
{
    const char *files[1];
    const struct pps_span *s;
    struct pps_run *r;

    files[0] =
        put_file("be.json",
                 "{\"baseTimeNanoseconds\": 5, \"traceEvents\": ["
                 "{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": 1, \"tid\": 9, \"args\": "
                 "{\"name\": \"main\"}},"
                 "{\"ph\": \"B\", \"name\": \"ProfilerStep#2\", \"pid\": 1, \"tid\": 9, \"ts\": 1},"
                 "{\"ph\": \"B\", \"name\": \"PP:0F1\", \"pid\": 1, \"tid\": 9, \"ts\": 2.0005},"
                 "{\"ph\": \"E\", \"pid\": 1, \"tid\": 9, \"ts\": 3},"
                 "{\"ph\": \"E\", \"pid\": 1, \"tid\": 9, \"ts\": 10},"
                 "{\"ph\": \"E\", \"pid\": 1, \"tid\": 9, \"ts\": 11},"
                 "{\"ph\": \"B\", \"name\": \"never ends\", \"pid\": 1, \"tid\": 9, \"ts\": 12},"
                 "{\"ph\": \"i\", \"name\": \"mark\", \"pid\": 1, \"tid\": 9, \"ts\": 12}"
                 "]}");
    r = import_load("be-run", files, 1);
    CHECK((s = nth(r, 0, PPS_SPAN_F, 0)) != NULL);
    CHECK_EQ_INT(s->start_ns, 5 + 2001); /* 2.0005 us: half a ns rounds away from zero */
    CHECK_EQ_INT(s->end_ns, 5 + 3000);
    CHECK_EQ_INT(s->iter, 2);
    CHECK_EQ_INT(s->mb, 1);
    CHECK_EQ_INT(count(r, 0, PPS_SPAN_RANGE), 1); /* the step; the open one is dropped */
    CHECK_STR_CONTAINS(pps_run_meta(r, "thread_name.9"), "main");
    pps_run_free(r);
}

/* Refused: each with its reason, and no run left (nor the importer's temporary directory). */
static void test_import_refuses(void)
{
    struct pps_err err = {0};
    const char *ok = put_file("ok.json", "{\"distributedInfo\": {\"rank\": 1}, \"traceEvents\": "
                                         "[{\"ph\": \"X\", \"name\": \"a\", \"ts\": 1, \"dur\": "
                                         "1}]}");
    const char *neg = put_file("neg.json", "{\"traceEvents\": [{\"ph\": \"X\", \"name\": \"a\", "
                                           "\"ts\": 1, \"dur\": -1}]}");
    const char *nodur = put_file("nodur.json", "{\"traceEvents\": [{\"ph\": \"X\", \"ts\": 1}]}");
    const char *late = put_file("late.json", "{\"traceEvents\": [{\"ph\": \"B\", \"ts\": 5}, "
                                             "{\"ph\": \"E\", \"ts\": 4}]}");
    const char *big = put_file("big.json", "{\"traceEvents\": [{\"ph\": \"X\", \"ts\": "
                                           "4611686018427387, \"dur\": 1}]}");
    const char *files[2] = {ok, ok};
    static const char *const runs[] = {"twice", "neg", "nodur", "late", "big", "missing", "dir"};
    DIR *d;
    struct dirent *de;

    CHECK_EQ_INT(import("twice", files, 2, &err), PPS_EFORMAT);
    CHECK_STR_CONTAINS(err.msg, "a second file of rank 1");
    files[1] = neg;
    CHECK_EQ_INT(import("neg", files, 2, &err), PPS_EFORMAT);
    CHECK_STR_CONTAINS(err.msg, "neg.json: not a Kineto trace: event 0: a negative dur");
    CHECK_EQ_INT(import("nodur", &nodur, 1, &err), PPS_EFORMAT);
    CHECK_STR_CONTAINS(err.msg, "without dur");
    CHECK_EQ_INT(import("late", &late, 1, &err), PPS_EFORMAT);
    CHECK_STR_CONTAINS(err.msg, "event 1");
    CHECK_EQ_INT(import("big", &big, 1, &err), PPS_EFORMAT);
    CHECK_STR_CONTAINS(err.msg, "out of range");
    files[0] = tmp_path("nothing-here.json");
    CHECK_EQ_INT(import("missing", files, 1, &err), PPS_ENOENT);
    files[0] = g_dir;
    CHECK_EQ_INT(import("dir", files, 1, &err), PPS_EFORMAT);
    CHECK_STR_CONTAINS(err.msg, "not a file");
    for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
        struct stat st;
        if (stat(tmp_path(runs[i]), &st) == 0) {
            fprintf(stderr, "  left behind: %s\n", runs[i]);
            test_failures_++;
        }
    }
    /* Nor the importer's hidden temporary directories. */
    CHECK((d = opendir(g_dir)) != NULL);
    while ((de = readdir(d)))
        if (de->d_name[0] == '.' && strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) {
            fprintf(stderr, "  left behind: %s\n", de->d_name);
            test_failures_++;
        }
    closedir(d);
}

int main(int argc, char **argv)
{
    static const struct test_case cases[] = {
        TEST(test_us_to_ns),          TEST(test_reader_wrong_cuts),
        TEST(test_reader_stream),     TEST(test_reader_bad),
        TEST(test_import_pp_actions), TEST(test_import_single_stage),
        TEST(test_import_layouts),    TEST(test_import_begin_end),
        TEST(test_import_refuses),    {NULL, NULL},
    };
    int rc = test_main(cases, argc, argv);
    if (g_dir) {
        rm_rf(g_dir);
        free(g_dir);
    }
    return rc;
}

#endif
