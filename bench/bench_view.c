/*
 * bench_view.c - what `ppscope view` costs on a big run, and whether it keeps up with a live one.
 *
 *   bench_view [--spans N] [--live-seconds S] [--rate R] [--max-spans K]
 *   bench_view --open RUN [--max-spans K]
 *
 * With --open, only the frames of an existing run (bench/scale.sh's 100M-span run, say) opened
 * as `ppscope view RUN` opens it: a finished run summarised and held in part is drawn past what
 * it holds from its summary, so "the whole run" is all of it (docs/view.md).
 *
 * 1. Writes a run of N spans (default 10M): ZB-H1, p=8, m=32, one simulated iteration tiled
 *    back to back, with a WAIT in every gap, through the storage writer.
 * 2. Opening: pps_run_load, the report, the flags, the timeline index, and the first 200x50
 *    frame; goal: first frame under 1 s after the load. Then the progressive open the view uses:
 *    the first PPS_TUI_FIRST_ROWS spans, their index and the first frame (goal: under 1 s), and
 *    what reading the rest and making the report costs after it.
 * 3. Later frames at every zoom from the whole run down to ~1 us per column, panning: mean, p99
 *    and max per frame; goal: under 16 ms. The same frames on a run 1/10 the size give the
 *    ratio that shows a frame costs the screen, not the trace (goal: about 1x).
 * 4. Live: a writer thread appends R spans/s (default 100k) for S seconds (default 10) while the
 *    view refreshes every 0.5 s, as `ppscope view` does; prints each refresh's cost and the
 *    lag from a commit to the view holding it, and the spans it holds, keeping K (default
 *    PPS_TUI_MAX_SPANS, as `ppscope view`; 0: all). Goals: lag under the 0.5 s interval, and
 *    what it holds bounded by K however long the run grows.
 *
 * Figures go to stdout with their goals and "MISSED" where a goal was missed; the exit status
 * is 0 unless something failed to run. Timings depend on the machine: compare the ratios.
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "analysis.h"
#include "schedule.h"
#include "storage.h"
#include "tui_core.h"

static void sleep_s(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};

    nanosleep(&ts, NULL);
}

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* One simulated iteration, as spans of stage order, to be tiled. */
struct tile {
    struct pps_span *spans;
    size_t n;
    int64_t period_ns;
};

static const uint8_t kind_of_op[] = {PPS_SPAN_F, PPS_SPAN_B, PPS_SPAN_W, PPS_SPAN_BW};

static int make_tile(struct tile *t, int p, int m)
{
    struct pps_schedule s = PPS_SCHEDULE_INIT;
    struct pps_sim_costs c;
    struct pps_sim_result r;
    const double unit = 100000; /* 100 us per op */
    size_t k = 0;

    memset(&r, 0, sizeof(r));
    if (pps_schedule_generate(&s, PPS_SCHED_ZB_H1, p, m, 1, NULL) < 0 ||
        pps_sim_costs_init(&c, p, 1, 1, 1) < 0)
        return -1;
    if (pps_simulate(&s, &c, &r, NULL) < 0)
        return -1;
    t->spans = calloc(2 * s.start[p], sizeof(*t->spans));
    if (!t->spans)
        return -1;
    for (int st = 0; st < p; st++) {
        double prev = -1;
        for (size_t a = s.start[st]; a < s.start[st + 1]; a++) {
            struct pps_span *sp;
            if (prev >= 0 && r.spans[a].start > prev) {
                sp = &t->spans[k++];
                sp->start_ns = llround(prev * unit);
                sp->end_ns = llround(r.spans[a].start * unit);
                sp->kind = PPS_SPAN_WAIT;
                sp->stage = (int16_t)st;
                sp->mb = (int32_t)s.actions[a].mb;
                sp->peer = st ? st - 1 : 1;
                sp->name_id = -1;
            }
            sp = &t->spans[k++];
            sp->start_ns = llround(r.spans[a].start * unit);
            sp->end_ns = llround(r.spans[a].end * unit);
            sp->kind = kind_of_op[s.actions[a].op];
            sp->stage = (int16_t)st;
            sp->mb = (int32_t)s.actions[a].mb;
            sp->peer = -1;
            sp->name_id = -1;
            prev = r.spans[a].end;
        }
    }
    t->n = k;
    t->period_ns = llround(r.makespan * unit);
    pps_sim_result_release(&r);
    pps_sim_costs_release(&c);
    pps_schedule_release(&s);
    return 0;
}

static struct pps_store_writer *open_writer(const char *dir)
{
    struct pps_store_writer *w = NULL;
    struct pps_err err = {0, ""};

    if (pps_store_writer_open(dir, 0, &w, &err) < 0 ||
        pps_store_writer_meta(w, "schedule", "zb-h1", &err) < 0 ||
        pps_store_writer_meta_int(w, "p", 8, &err) < 0 ||
        pps_store_writer_meta_int(w, "m", 32, &err) < 0 ||
        pps_store_writer_meta_int(w, "v", 1, &err) < 0) {
        fprintf(stderr, "bench_view: %s\n", err.msg);
        return NULL;
    }
    return w;
}

/* Appends iterations [from, to) of the tile to w, in batches of about 64k spans. */
static int write_iters(struct pps_store_writer *w, const struct tile *t, long from, long to,
                       struct pps_span *buf, size_t cap)
{
    size_t k = 0;

    for (long it = from; it < to; it++) {
        for (size_t i = 0; i < t->n; i++) {
            buf[k] = t->spans[i];
            buf[k].start_ns += it * t->period_ns;
            buf[k].end_ns += it * t->period_ns;
            buf[k].iter = (int32_t)it;
            k++;
        }
        if (k + t->n > cap || it + 1 == to) {
            if (pps_store_writer_spans(w, buf, k, NULL) < 0)
                return -1;
            k = 0;
        }
    }
    return 0;
}

static int write_run(const char *dir, const struct tile *t, long iters)
{
    size_t cap = 65536 + t->n;
    struct pps_span *buf = malloc(cap * sizeof(*buf));
    struct pps_store_writer *w = open_writer(dir);
    int rc = buf && w ? write_iters(w, t, 0, iters, buf, cap) : -1;

    if (w && pps_store_writer_close(w, 1, NULL) < 0)
        rc = -1;
    free(buf);
    return rc;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

/* Times frames at every zoom over ui's run; mean, p99 and max in ms. */
static void time_frames(struct pps_tui *ui, struct pps_tui_frame *f, double *mean, double *p99,
                        double *max)
{
    enum { N = 240 };
    static double t[N];
    const char *script[] = {"+", "+", "l", "+", "L", "+", "+", "h", "+", "n"};
    double sum = 0;
    int k = 0;

    pps_tui_key(ui, 'a');
    while (k < N) {
        /* Down from the whole run to the narrowest zoom, panning on the way, then back out. */
        for (int i = 0; i < 24 && k < N; i++, k++) {
            double t0 = now_s();
            pps_tui_key(ui, script[i % 10][0]);
            pps_tui_draw(ui, f);
            t[k] = now_s() - t0;
        }
        pps_tui_key(ui, 'a');
    }
    for (int i = 0; i < N; i++)
        sum += t[i];
    qsort(t, N, sizeof(t[0]), cmp_double);
    *mean = 1e3 * sum / N;
    *p99 = 1e3 * t[N * 99 / 100];
    *max = 1e3 * t[N - 1];
}

static const char *missed(int ok)
{
    return ok ? "" : "  MISSED";
}

/* ---- live ----------------------------------------------------------------------------------- */

struct live {
    const char *dir;
    const struct tile *tile;
    double rate;    /* spans per second */
    double seconds; /* how long */
    volatile int done;
    double commit_s[4096]; /* when each batch was committed */
    long commit_spans[4096];
    volatile int n_commits;
};

static void *live_writer(void *arg)
{
    struct live *lv = arg;
    long per_batch = (long)(lv->rate / 10 / lv->tile->n) + 1; /* 10 batches a second */
    size_t cap = (size_t)per_batch * lv->tile->n + 1;
    struct pps_span *buf = malloc(cap * sizeof(*buf));
    struct pps_store_writer *w = open_writer(lv->dir);
    double start = now_s();
    long it = 0, spans = 0;

    while (buf && w && now_s() - start < lv->seconds && lv->n_commits < 4096) {
        double due = start + 0.1 * lv->n_commits;
        while (now_s() < due)
            sleep_s(0.001);
        if (write_iters(w, lv->tile, it, it + per_batch, buf, cap) < 0)
            break;
        it += per_batch;
        spans += per_batch * (long)lv->tile->n;
        lv->commit_spans[lv->n_commits] = spans;
        lv->commit_s[lv->n_commits] = now_s();
        lv->n_commits++;
    }
    if (w)
        pps_store_writer_close(w, 1, NULL);
    free(buf);
    lv->done = 1;
    return NULL;
}

static int bench_live(const char *dir, const struct tile *t, double rate, double seconds,
                      size_t max_spans)
{
    struct live lv;
    struct pps_tui ui;
    struct pps_tui_opts o = {1, 0, 0.5, max_spans, 0, NULL};
    size_t most_held = 0;
    struct pps_tui_frame f;
    pthread_t th;
    double worst_lag = 0, worst_refresh = 0;
    int opened = 0, n_refresh = 0;

    memset(&lv, 0, sizeof(lv));
    lv.dir = dir;
    lv.tile = t;
    lv.rate = rate;
    lv.seconds = seconds;
    if (pps_tui_frame_init(&f, 200, 50) < 0 || pthread_create(&th, NULL, live_writer, &lv))
        return -1;
    pps_tui_init(&ui, &o);
    printf("\nlive: a writer appends %.0f spans/s for %.0f s; the view refreshes every 0.5 s, "
           "keeping %zu spans (--max-spans; 0: all)\n",
           rate, seconds, max_spans);
    printf("%10s %10s %12s %12s %12s\n", "spans", "held", "refresh ms", "draw ms", "lag ms");
    while (!lv.done || !opened) {
        double t0 = now_s(), t1, t2, lag = 0;
        size_t have;
        int c;

        if (!opened) {
            struct pps_err err = {0, ""};
            if (lv.n_commits == 0 || pps_tui_open(&ui, dir, NULL, &err) < 0) {
                sleep_s(0.05);
                continue;
            }
            opened = 1;
        } else {
            pps_tui_refresh(&ui, NULL);
        }
        t1 = now_s();
        pps_tui_draw(&ui, &f);
        t2 = now_s();
        /* What the view has taken in: what it holds and what it dropped of it. */
        have = ui.models[0].run->n_spans + ui.models[0].run->n_dropped;
        if (ui.models[0].run->n_spans > most_held)
            most_held = ui.models[0].run->n_spans;
        /* Lag: how long ago the first commit the view does not hold yet was made (0 if none). */
        for (c = 0; c < lv.n_commits; c++)
            if ((size_t)lv.commit_spans[c] > have) {
                lag = t2 - lv.commit_s[c];
                break;
            }
        if (lag > worst_lag)
            worst_lag = lag;
        if (t1 - t0 > worst_refresh)
            worst_refresh = t1 - t0;
        if (n_refresh++ % 4 == 0)
            printf("%10zu %10zu %12.1f %12.2f %12.1f\n", have, ui.models[0].run->n_spans,
                   1e3 * (t1 - t0), 1e3 * (t2 - t1), 1e3 * lag);
        while (now_s() < t0 + 0.5)
            sleep_s(0.005);
    }
    pthread_join(th, NULL);
    printf("worst refresh %.0f ms, worst lag %.0f ms (goal: lag < 500 ms)%s\n", 1e3 * worst_refresh,
           1e3 * worst_lag, missed(worst_lag < 0.5));
    printf("most spans held %zu of %zu taken in (goal: bounded by --max-spans, %zu)%s\n", most_held,
           (size_t)lv.commit_spans[lv.n_commits > 0 ? lv.n_commits - 1 : 0], max_spans,
           missed(max_spans == 0 || most_held <= max_spans + max_spans / 2));
    pps_tui_release(&ui);
    pps_tui_frame_release(&f);
    return 0;
}

/* Opens path in ui (initialised with o) and draws its first frame into f: 0, with the seconds
 * each took; 1 when it cannot be opened (said on stderr). */
static int open_timed(struct pps_tui *ui, const struct pps_tui_opts *o, const char *path,
                      struct pps_tui_frame *f, double *t_open, double *t_first)
{
    struct pps_err err = {0, ""};
    double t0;

    pps_tui_init(ui, o);
    t0 = now_s();
    if (pps_tui_open(ui, path, NULL, &err) < 0) {
        fprintf(stderr, "bench_view: %s\n", err.msg);
        return 1;
    }
    *t_open = now_s() - t0;
    t0 = now_s();
    pps_tui_draw(ui, f);
    *t_first = now_s() - t0;
    return 0;
}

/* --open RUN: the frames of a run made elsewhere, at every zoom from the whole run down. */
static int open_frames(const char *path, size_t max_spans)
{
    struct pps_tui_opts o = {1, 0, 0.5, 0, 0, NULL};
    struct pps_tui ui;
    struct pps_tui_frame f;
    double t_open, t_first, mean, p99, max;

    o.max_spans = max_spans;
    if (pps_tui_frame_init(&f, 200, 50) < 0 || open_timed(&ui, &o, path, &f, &t_open, &t_first))
        return 1;
    printf("open %s: %.3f s, %zu spans held, %zu iterations in its summary\n", path, t_open,
           ui.models[0].run->n_spans, ui.models[0].run_iters.n);
    printf("  first frame 200x50    %8.3f ms\n", 1e3 * t_first);
    time_frames(&ui, &f, &mean, &p99, &max);
    printf("  frames 200x50, 240 at every zoom from the whole run, panning: mean %.2f ms, p99 %.2f "
           "ms, max %.2f ms (goal < 16 ms)%s\n",
           mean, p99, max, missed(max < 16));
    pps_tui_release(&ui);
    pps_tui_frame_release(&f);
    return 0;
}

int main(int argc, char **argv)
{
    long spans = 10000000, max_spans = PPS_TUI_MAX_SPANS;
    double live_s = 10, rate = 100000;
    const char *open_run = NULL;
    char dir[256], big[300], small[300], livedir[300], cmd[400];
    struct tile t;
    struct pps_run *run = NULL;
    struct pps_report *rep = NULL;
    struct pps_flag_list fl = PPS_FLAG_LIST_INIT;
    struct pps_tui_index *ix = NULL;
    struct pps_tui ui;
    struct pps_tui_opts o = {1, 0, 0.5, 0, 0, NULL};
    struct pps_tui_frame f;
    struct pps_err err = {0, ""};
    double t0, t_load, t_rep, t_flags, t_ix, t_open, t_first, mean, p99, max, smean, sp99, smax;
    double t_prog, t_rest;
    size_t n_first;
    int loading;
    long iters;

    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--spans"))
            spans = atol(argv[i + 1]);
        else if (!strcmp(argv[i], "--live-seconds"))
            live_s = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--rate"))
            rate = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--max-spans"))
            max_spans = atol(argv[i + 1]);
        else if (!strcmp(argv[i], "--open"))
            open_run = argv[i + 1];
    }
    if (open_run)
        return open_frames(open_run, (size_t)max_spans);
    snprintf(dir, sizeof(dir), "%s/pps-bench-view-XXXXXX",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(dir) || make_tile(&t, 8, 32) < 0 || pps_tui_frame_init(&f, 200, 50) < 0) {
        fprintf(stderr, "bench_view: setup failed\n");
        return 1;
    }
    snprintf(big, sizeof(big), "%s/big", dir);
    snprintf(small, sizeof(small), "%s/small", dir);
    snprintf(livedir, sizeof(livedir), "%s/live", dir);
    iters = spans / (long)t.n;
    printf("bench_view: ZB-H1 p=8 m=32, %zu spans per iteration, %ld iterations\n", t.n, iters);
    t0 = now_s();
    if (write_run(big, &t, iters) < 0 || write_run(small, &t, iters / 10 + 1) < 0) {
        fprintf(stderr, "bench_view: could not write the runs\n");
        return 1;
    }
    printf("wrote %ld + %ld spans in %.1f s\n", iters * (long)t.n, (iters / 10 + 1) * (long)t.n,
           now_s() - t0);

    /* Opening, piece by piece. */
    t0 = now_s();
    if (pps_run_load(big, &run, &err) < 0) {
        fprintf(stderr, "bench_view: %s\n", err.msg);
        return 1;
    }
    t_load = now_s() - t0;
    t0 = now_s();
    pps_analysis_report(run, &rep, &err);
    t_rep = now_s() - t0;
    t0 = now_s();
    pps_analysis_flags(run, rep, &fl, &err);
    t_flags = now_s() - t0;
    t0 = now_s();
    pps_tui_index_build(run, &ix, &err);
    t_ix = now_s() - t0;
    pps_tui_index_free(ix);
    pps_flag_list_release(&fl);
    pps_report_free(rep);
    pps_run_free(run);

    /* The real path: open, then the first frame. */
    if (open_timed(&ui, &o, big, &f, &t_open, &t_first))
        return 1;
    printf("\nopen %zu spans:\n", ui.models[0].run->n_spans);
    printf("  pps_run_load          %8.3f s\n", t_load);
    printf("  report                %8.3f s\n", t_rep);
    printf("  flags                 %8.3f s\n", t_flags);
    printf("  timeline index        %8.3f s  (the view's own cost to open)\n", t_ix);
    printf("  pps_tui_open (all)    %8.3f s\n", t_open);
    printf("  first frame 200x50    %8.3f ms\n", 1e3 * t_first);
    printf("  index + first frame   %8.3f s   (goal < 1 s)%s\n", t_ix + t_first,
           missed(t_ix + t_first < 1));
    printf("  open to first frame   %8.3f s   (goal < 1 s, load included)%s\n", t_open + t_first,
           missed(t_open + t_first < 1));

    time_frames(&ui, &f, &mean, &p99, &max);
    pps_tui_release(&ui);

    /* The path `ppscope view` takes: the first rows, their index and the first frame; the rest
     * and the report follow (here on this thread, through pps_tui_refresh). */
    pps_tui_init(&ui, &o);
    t0 = now_s();
    if (pps_tui_open_progressive(&ui, big, NULL, 0, &err) < 0) {
        fprintf(stderr, "bench_view: %s\n", err.msg);
        return 1;
    }
    pps_tui_draw(&ui, &f);
    t_prog = now_s() - t0;
    n_first = ui.models[0].run->n_spans;
    loading = ui.models[0].loading;
    t0 = now_s();
    if (pps_tui_refresh(&ui, &err) < 0) {
        fprintf(stderr, "bench_view: %s\n", err.msg);
        return 1;
    }
    t_rest = now_s() - t0;
    printf("  open to first frame (progressive) %8.3f s   (goal < 1 s; %zu spans, %s)%s\n", t_prog,
           n_first, loading ? "says loading" : "all in", missed(t_prog < 1));
    printf("  then the rest and the report      %8.3f s   (%zu spans; the view answers keys)\n",
           t_rest, ui.models[0].run->n_spans);
    pps_tui_release(&ui);
    pps_tui_init(&ui, &o);
    if (pps_tui_open(&ui, small, NULL, &err) < 0)
        return 1;
    time_frames(&ui, &f, &smean, &sp99, &smax);
    printf("\nlater frames 200x50, 240 at every zoom, panning:\n");
    printf("  %9s spans: mean %.2f ms  p99 %.2f ms  max %.2f ms (goal < 16 ms)%s\n", "10x", mean,
           p99, max, missed(max < 16));
    printf("  %9s spans: mean %.2f ms  p99 %.2f ms  max %.2f ms\n", "1x", smean, sp99, smax);
    printf("  10x the spans costs %.2fx per frame (a frame costs the screen, not the trace: ~1x)\n",
           mean / smean);
    pps_tui_release(&ui);

    if (live_s > 0)
        bench_live(livedir, &t, rate, live_s, (size_t)(max_spans > 0 ? max_spans : 0));

    pps_tui_frame_release(&f);
    free(t.spans);
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "bench_view: could not remove %s\n", dir);
    return 0;
}
