/*
 * test_tui_fixture.h - runs for the view's tests: in memory (a struct pps_run built by hand) or
 * on disk (a schedule simulated with chosen costs and written through the storage writer, like
 * `ppscope sim --trace`, optionally left open to be extended later, as a live run); and the main
 * of a test that keeps its runs in one scratch directory.
 */
#ifndef PPS_TEST_TUI_FIXTURE_H
#define PPS_TEST_TUI_FIXTURE_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "schedule.h"
#include "storage.h"

/* Each test uses some of these helpers. */
#define FX_FN static __attribute__((unused))

/* An empty in-memory run of p stages; add spans with fx_add, then fx_sort. */
FX_FN struct pps_run *fx_run_new(int p)
{
    struct pps_run *run = calloc(1, sizeof(*run));

    run->n_stages = p;
    run->p = p;
    run->stages = calloc((size_t)p, sizeof(*run->stages));
    run->complete = 1;
    return run;
}

FX_FN struct pps_span *fx_add(struct pps_run *run, int stage, int kind, int64_t start, int64_t end)
{
    struct pps_stage_spans *ss = &run->stages[stage];
    struct pps_span *s;

    ss->spans = realloc(ss->spans, (ss->n + 1) * sizeof(*ss->spans));
    s = &ss->spans[ss->n++];
    memset(s, 0, sizeof(*s));
    s->stage = (int16_t)stage;
    s->kind = (uint8_t)kind;
    s->start_ns = start;
    s->end_ns = end;
    s->iter = 0;
    s->mb = 0;
    s->peer = -1;
    s->name_id = -1;
    run->n_spans++;
    return s;
}

FX_FN int fx_span_cmp(const void *a, const void *b)
{
    const struct pps_span *x = a, *y = b;

    if (x->start_ns != y->start_ns)
        return x->start_ns < y->start_ns ? -1 : 1;
    return (x->end_ns > y->end_ns) - (x->end_ns < y->end_ns);
}

/* Sorts each stage as the reader does and sets t_min, t_max, n_iters. */
FX_FN void fx_sort(struct pps_run *run)
{
    int first = 1;

    for (int s = 0; s < run->n_stages; s++) {
        struct pps_stage_spans *ss = &run->stages[s];
        if (ss->n)
            qsort(ss->spans, ss->n, sizeof(*ss->spans), fx_span_cmp);
        for (size_t i = 0; i < ss->n; i++) {
            if (first || ss->spans[i].start_ns < run->t_min)
                run->t_min = ss->spans[i].start_ns;
            if (first || ss->spans[i].end_ns > run->t_max)
                run->t_max = ss->spans[i].end_ns;
            if (ss->spans[i].iter + 1 > run->n_iters)
                run->n_iters = ss->spans[i].iter + 1;
            first = 0;
        }
    }
}

/* What a simulated run on disk looks like. */
struct fx_sim {
    int kind; /* enum pps_sched_kind */
    int p, m, v;
    double tf, tb, tw;
    int slow_stage;    /* -1: none */
    double slow_mult;  /* that stage's costs times this */
    double unit_ns;    /* ns per cost unit */
    int waits;         /* write a WAIT span in each idle gap between a stage's ops */
    double wait_extra; /* stretch each op's start by this many units of extra wait (a stall) */
    int64_t act_bytes; /* the peak activations each iteration's metric holds (-1: unknown) */
    int no_meta;       /* write no schedule, p, m, v: a run that does not say how it ran */
    int model_ends;    /* write where the model's ends are: embedding on 0, LM head on p-1 */
    struct pps_schedule sched;
    struct pps_sim_result res;
};

FX_FN void fx_sim_defaults(struct fx_sim *x, int kind, int p, int m)
{
    memset(x, 0, sizeof(*x));
    x->kind = kind;
    x->p = p;
    x->m = m;
    x->v = kind == PPS_SCHED_INTERLEAVED ? 2 : 1;
    x->tf = x->tb = x->tw = 1;
    x->slow_stage = -1;
    x->slow_mult = 1;
    x->unit_ns = 1e6;
    x->act_bytes = 1 << 20;
}

FX_FN int fx_sim_prepare(struct fx_sim *x)
{
    struct pps_sim_costs c;
    struct pps_schedule init = PPS_SCHEDULE_INIT;
    int rc;

    x->sched = init;
    memset(&x->res, 0, sizeof(x->res));
    if ((rc = pps_schedule_generate(&x->sched, x->kind, x->p, x->m, x->v, NULL)) < 0)
        return rc;
    if ((rc = pps_sim_costs_init(&c, x->p, x->tf, x->tb, x->tw)) < 0)
        return rc;
    if (x->slow_stage >= 0) {
        c.tf[x->slow_stage] *= x->slow_mult;
        c.tb[x->slow_stage] *= x->slow_mult;
        c.tw[x->slow_stage] *= x->slow_mult;
    }
    rc = pps_simulate(&x->sched, &c, &x->res, NULL);
    pps_sim_costs_release(&c);
    return rc;
}

FX_FN void fx_sim_release(struct fx_sim *x)
{
    pps_schedule_release(&x->sched);
    pps_sim_result_release(&x->res);
}

/* Opens a shard in dir with the run's metadata. */
FX_FN struct pps_store_writer *fx_writer(const char *dir, const struct fx_sim *x)
{
    struct pps_store_writer *w = NULL;

    if (pps_store_writer_open(dir, 0, &w, NULL) < 0)
        return NULL;
    if (x->no_meta)
        return w;
    pps_store_writer_meta(w, "schedule", pps_sched_kind_name(x->kind), NULL);
    pps_store_writer_meta_int(w, "p", x->p, NULL);
    pps_store_writer_meta_int(w, "m", x->m, NULL);
    pps_store_writer_meta_int(w, "v", x->v, NULL);
    pps_store_writer_meta_int(w, "tcomm_ns", 0, NULL);
    if (x->model_ends) {
        pps_store_writer_meta_int(w, "model_embedding_stage", 0, NULL);
        pps_store_writer_meta_int(w, "model_head_stage", x->p - 1, NULL);
    }
    return w;
}

static const uint8_t fx_kind_of_op[] = {PPS_SPAN_F, PPS_SPAN_B, PPS_SPAN_W, PPS_SPAN_BW};

/* Writes iterations [from, to) of the simulated timeline, back to back, and a loss metric per
 * iteration. With waits, a WAIT span fills each gap between a stage's ops, and the time before
 * its first op and after its last (its input, the optimizer barrier); with wait_extra,
 * every op after a stage's first is delayed by that much more, a WAIT span covering the delay
 * (a communication stall). */
FX_FN int fx_write_iters(struct pps_store_writer *w, const struct fx_sim *x, int from, int to)
{
    size_t n = x->sched.start[x->p];
    struct pps_span *buf = calloc(3 * n + 2 * (size_t)x->p + 1, sizeof(*buf));
    int rc = 0;
    double stretch = x->wait_extra * (double)n / x->p; /* the longest a stage gets delayed */

    for (int it = from; it < to && !rc; it++) {
        double t0 = it * (x->res.makespan + stretch);
        size_t k = 0;
        struct pps_metric mt;

        for (int s = 0; s < x->p; s++) {
            double prev_end = -1, delay = 0;
            for (size_t a = x->sched.start[s]; a < x->sched.start[s + 1]; a++) {
                struct pps_span *sp;
                double st = t0 + x->res.spans[a].start + delay;
                double en = t0 + x->res.spans[a].end + delay;

                if (prev_end >= 0) {
                    delay += x->wait_extra;
                    st += x->wait_extra;
                    en += x->wait_extra;
                }
                /* As the runtime does, the stage waits for its first input too (and, below,
                 * for the optimizer barrier after its last op). */
                if (x->waits && prev_end < 0 && st > t0) {
                    sp = &buf[k++];
                    sp->start_ns = llround(t0 * x->unit_ns);
                    sp->end_ns = llround(st * x->unit_ns);
                    sp->kind = PPS_SPAN_WAIT;
                    sp->stage = (int16_t)s;
                    sp->iter = it;
                    sp->mb = -1;
                    sp->peer = s > 0 ? s - 1 : -1;
                    sp->name_id = -1;
                }
                if ((x->waits || x->wait_extra > 0) && prev_end >= 0 && st > prev_end) {
                    /* Waiting for data: the schedule's own gap, and the stall on top. */
                    sp = &buf[k++];
                    sp->start_ns = llround((x->waits ? prev_end : st - x->wait_extra) * x->unit_ns);
                    sp->end_ns = llround(st * x->unit_ns);
                    sp->kind = PPS_SPAN_WAIT;
                    sp->stage = (int16_t)s;
                    sp->iter = it;
                    sp->mb = (int32_t)x->sched.actions[a].mb;
                    sp->peer = s > 0 ? s - 1 : s + 1;
                    sp->name_id = -1;
                }
                sp = &buf[k++];
                sp->start_ns = llround(st * x->unit_ns);
                sp->end_ns = llround(en * x->unit_ns);
                sp->kind = fx_kind_of_op[x->sched.actions[a].op];
                sp->stage = (int16_t)s;
                sp->chunk = (int16_t)x->sched.actions[a].chunk;
                sp->mb = (int32_t)x->sched.actions[a].mb;
                sp->iter = it;
                sp->peer = -1;
                sp->name_id = -1;
                prev_end = en;
            }
            if (x->waits && prev_end >= 0 && t0 + x->res.makespan + stretch > prev_end) {
                struct pps_span *sp = &buf[k++];
                sp->start_ns = llround(prev_end * x->unit_ns);
                sp->end_ns = llround((t0 + x->res.makespan + stretch) * x->unit_ns);
                sp->kind = PPS_SPAN_WAIT;
                sp->stage = (int16_t)s;
                sp->iter = it;
                sp->mb = -1;
                sp->peer = -1;
                sp->name_id = -1;
            }
        }
        rc = pps_store_writer_spans(w, buf, k, NULL);
        memset(&mt, 0, sizeof(mt));
        mt.iter = it;
        mt.stage = x->p - 1;
        mt.loss = 4.0 / (1 + it);
        mt.grad_norm = 1;
        mt.act_bytes = x->act_bytes;
        if (!rc)
            rc = pps_store_writer_metrics(w, &mt, 1, NULL);
    }
    free(buf);
    return rc;
}

/* Writes a whole closed run of iters iterations into dir. */
FX_FN int fx_write_run(const char *dir, struct fx_sim *x, int iters)
{
    struct pps_store_writer *w;
    int rc = fx_sim_prepare(x);

    if (rc < 0)
        return rc;
    if (!(w = fx_writer(dir, x)))
        return -1;
    rc = fx_write_iters(w, x, 0, iters);
    return pps_store_writer_close(w, 1, NULL) < 0 ? -1 : rc;
}

/* A fresh temporary directory (removed by fx_rmrf). */
FX_FN char *fx_tmpdir(char *buf, size_t len)
{
    snprintf(buf, len, "%s/pps-tui-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    return mkdtemp(buf);
}

FX_FN void fx_rmrf(const char *dir)
{
    char cmd[4200];

    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
}

/* These need test.h, included first (the live writer is a program, not a test). */
#ifdef PPS_TEST_H
/* Writes x's simulated run (iters iterations) to dir/name and releases x; returns its path, good
 * for the next seven calls. */
FX_FN const char *fx_sim_run_x(const char *dir, const char *name, struct fx_sim *x, int iters)
{
    static char paths[8][4400];
    static int next;
    char *path = paths[next++ % 8];

    snprintf(path, sizeof(paths[0]), "%s/%s", dir, name);
    CHECK(fx_write_run(path, x, iters) == 0);
    fx_sim_release(x);
    return path;
}

/* The same for a run of kind at p stages and m microbatches, with fx_sim_defaults' costs. */
FX_FN const char *fx_sim_run(const char *dir, const char *name, int kind, int p, int m, int iters)
{
    struct fx_sim x;

    fx_sim_defaults(&x, kind, p, m);
    return fx_sim_run_x(dir, name, &x, iters);
}

/* The main of a test whose runs live in one scratch directory: makes it in dir (len bytes), runs
 * the cases asked for and removes it. test_main's exit code, or 1 when no directory could be
 * made. */
FX_FN int fx_test_main_in_tmpdir(const struct test_case *cases, int argc, char **argv, char *dir,
                                 size_t len)
{
    int rc;

    if (!fx_tmpdir(dir, len)) {
        perror("mkdtemp");
        return 1;
    }
    rc = test_main(cases, argc, argv);
    fx_rmrf(dir);
    return rc;
}
#endif

#endif
