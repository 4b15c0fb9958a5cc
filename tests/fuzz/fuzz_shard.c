/*
 * fuzz_shard.c - libFuzzer target of the shard reader: each input is written to a file and
 * loaded with pps_run_load(), the loader behind report, view and merge, as one file (a shard or
 * a merged file: the reader reads both alike). Every input must end in a run that keeps the
 * loader's promises (storage.h: spans of known kinds and clocks, stages below n_stages, times
 * within +-2^62 and sorted), or in a PPS_E... code with a reason naming the file and no
 * run: a crash, a leak or a sanitizer report is a bug.
 *
 * Built with clang's -fsanitize=fuzzer under PPS_FUZZ=ON (tests/fuzz.cmake); the seeds are
 * tests/fuzz/corpus/shard (make_corpus_shard.sh, small real shards and damaged ones):
 *
 *   CC=clang CXX=clang++ cmake -S . -B build-fuzz -DPPS_FUZZ=ON
 *   cmake --build build-fuzz --target fuzz_shard
 *   build-fuzz/tests/fuzz_shard -max_total_time=30 NEW_DIR tests/fuzz/corpus/shard
 *
 * Without libFuzzer the same file builds a replayer (fuzz_common.h's), which ctest runs over the
 * corpus (fuzz_replay_shard), so the seeds and what fuzzing found stay loadable.
 */
#define FUZZ_NAME  "shard"
#define FUZZ_INPUT "rank-00000.db"
#define FUZZ_PROG  "fuzz_shard"
#include "fuzz_common.h"

#include "storage.h"

#define TIME_MAX ((int64_t)1 << 62)

static void bad(const char *what, long long a, long long b)
{
    fprintf(stderr, FUZZ_PROG ": %s (%lld, %lld)\n", what, a, b);
    abort();
}

/* The promises of a loaded run (storage.h, pps_run_load()). */
static void check_run(const struct pps_run *run)
{
    size_t n = 0;

    if (!run->merged || run->n_stages < 0 || (run->n_stages > 0) != (run->stages != NULL))
        bad("a run that is not one file's, or without its stages", run->merged, run->n_stages);
    for (int st = 0; st < run->n_stages; st++) {
        const struct pps_stage_spans *ss = &run->stages[st];
        for (size_t i = 0; i < ss->n; i++) {
            const struct pps_span *s = &ss->spans[i];
            if (s->kind <= 0 || s->kind >= PPS_SPAN_KIND_COUNT || s->stage != st)
                bad("a span of an unknown kind or in another stage's list", s->kind, s->stage);
            /* docs/schema.md allows an end before the start, by less than 2^62. */
            if (s->start_ns < -TIME_MAX || s->start_ns > TIME_MAX || s->end_ns < -TIME_MAX ||
                s->end_ns > TIME_MAX || s->end_ns <= s->start_ns - TIME_MAX)
                bad("a span outside +-2^62", (long long)s->start_ns, (long long)s->end_ns);
            if (s->start_ns < run->t_min || s->end_ns > run->t_max)
                bad("a span outside t_min..t_max", (long long)s->start_ns, (long long)s->end_ns);
            if (i > 0 && ss->spans[i - 1].start_ns > s->start_ns)
                bad("spans out of order", (long long)ss->spans[i - 1].start_ns,
                    (long long)s->start_ns);
            /* Any negative name_id means "no name" to pps_run_span_name() (the reader keeps
             * what the file says, -2 too); one that is not must index the names. */
            if (s->name_id >= 0 && (size_t)s->name_id >= run->n_names)
                bad("a name_id outside the names", s->name_id, (long long)run->n_names);
            if (s->name_id >= 0 && !run->names[s->name_id])
                bad("a span named by a NULL name", s->name_id, 0);
        }
        n += ss->n;
    }
    if (n != run->n_spans)
        bad("n_spans is not the spans' count", (long long)run->n_spans, (long long)n);
    for (size_t i = 0; i < run->n_meta; i++)
        if (!run->meta[i].key || !run->meta[i].value)
            bad("a meta entry without its key or value", (long long)i, 0);
}

/* The contract of a failure: a negative code, no run, a reason naming the file. The reason may
 * quote the file's bytes (a kind's name): the CLI escapes them as it prints it (pps_text_put). */
static void check_failure(int rc, const struct pps_run *run, const struct pps_err *err)
{
    if (rc >= 0 || run || !err->msg[0] || !strstr(err->msg, fuzz_input)) {
        fprintf(stderr, FUZZ_PROG ": bad failure %d (run %p): '%s'\n", rc, (const void *)run,
                err->msg);
        abort();
    }
}

/* Whether a loaded span meets [t0, t1) (storage.h, pps_run_load_window()). */
static int meets(const struct pps_span *s, int64_t t0, int64_t t1)
{
    if (s->end_ns == s->start_ns)
        return t0 <= s->start_ns && s->start_ns < t1;
    return s->start_ns < t1 && s->end_ns > t0;
}

/*
 * A window of the file: a run that keeps the loader's promises, or a failure that keeps its
 * contract. Where the whole file loaded and SQLite's check passed on it (a complete file: the
 * loader makes that check), the window is the full load's spans that meet it, span for span: the
 * index it is read through is the table's.
 */
static void check_window(const struct pps_run *full, int64_t t0, int64_t t1)
{
    struct pps_run *win = NULL;
    struct pps_err err = {0};
    int rc = pps_run_load_window(fuzz_input, t0, t1, &win, &err);

    if (rc != 0) {
        check_failure(rc, win, &err);
        if (full && full->complete)
            bad("a window of a file that loads whole fails", rc, 0);
        return;
    }
    check_run(win);
    if (full && full->complete) {
        for (int st = 0; st < full->n_stages; st++) {
            const struct pps_stage_spans *f = &full->stages[st];
            size_t k = 0;
            for (size_t i = 0; i < f->n; i++) {
                if (!meets(&f->spans[i], t0, t1))
                    continue;
                if (st >= win->n_stages || k >= win->stages[st].n ||
                    memcmp(&f->spans[i], &win->stages[st].spans[k], sizeof(f->spans[i])) != 0)
                    bad("a window that is not the full load's spans in it", st, (long long)k);
                k++;
            }
            if (st < win->n_stages && win->stages[st].n != k)
                bad("a window with spans the full load does not have there", st,
                    (long long)win->stages[st].n);
        }
    }
    pps_run_free(win);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct pps_run *run = NULL;
    struct pps_err err = {0};

    fuzz_write_input(data, size);
    int rc = pps_run_load(fuzz_input, &run, &err);
    if (rc == 0)
        check_run(run);
    else
        check_failure(rc, run, &err);
    /* Windows: the whole run, its middle third, and one with no span (or fixed ones). */
    if (run && run->t_max > run->t_min) {
        int64_t third = (run->t_max - run->t_min) / 3;
        check_window(run, run->t_min, run->t_max + 1);
        check_window(run, run->t_min + third, run->t_max - third + 1);
        check_window(run, run->t_max + 1, run->t_max + 2);
    } else {
        check_window(run, 0, (int64_t)1 << 40);
    }
    pps_run_free(run);
    /* What SQLite may leave beside a file that says it is in WAL mode, or has a hot journal. */
    for (const char *const *x = (const char *const[]){"-wal", "-shm", "-journal", NULL}; *x; x++) {
        char side[sizeof(fuzz_input) + 16];
        snprintf(side, sizeof(side), "%s%s", fuzz_input, *x);
        unlink(side);
    }
    return 0;
}
