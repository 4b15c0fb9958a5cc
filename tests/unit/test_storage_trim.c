/*
 * test_storage_trim.c - pps_run_drop_before() and pps_run_keep_iter(), what `ppscope view
 * --max-spans` keeps of a long run: exactly the iterations from K on, the spans without an
 * iteration that reach past K's first compute span, and K's metrics; the extents of what is left;
 * and a report of what is left that takes the dropped iterations for neither missing nor partial.
 */
#include "analysis.h"
#include "test.h"
#include "unit/storage_fixture.h"

#define ITERS 10

/* Iteration i: F and B on stages 0 and 1, 1 ms each, i + 1 ms apart from the last, and a WAIT
 * with no iteration between them; a RANGE with no iteration over the whole run. */
static void write_trim_run(const char *dir)
{
    for (int r = 0; r < 2; r++) {
        struct pps_store_writer *w = NULL;
        struct pps_err err = {0, ""};
        struct pps_span sp[ITERS * 3 + 1];
        struct pps_metric mt[ITERS];
        int32_t name = -1;
        int64_t t = 0;
        size_t n = 0;

        CHECK_EQ_INT(pps_store_writer_open(dir, r, &w, &err), 0);
        if (!w)
            return;
        CHECK_EQ_INT(pps_store_writer_meta(w, "schedule", "gpipe", &err), 0);
        CHECK_EQ_INT(pps_store_writer_meta_int(w, "p", 2, &err), 0);
        CHECK_EQ_INT(pps_store_writer_meta_int(w, "m", 1, &err), 0);
        CHECK_EQ_INT(pps_store_writer_meta_int(w, "iters", ITERS, &err), 0);
        CHECK_EQ_INT(pps_store_writer_name(w, "train", &name, &err), 0);
        for (int i = 0; i < ITERS; i++) {
            for (int k = 0; k < 3; k++) {
                struct pps_span *s = &sp[n++];
                memset(s, 0, sizeof(*s));
                s->kind = k == 0 ? PPS_SPAN_F : k == 1 ? PPS_SPAN_WAIT : PPS_SPAN_B;
                s->stage = (int16_t)r;
                s->iter = k == 1 ? -1 : i;
                s->peer = k == 1 ? 1 - r : -1;
                s->name_id = -1;
                s->start_ns = t + (k == 2 ? (r == 0 ? 3000000 : 2000000) : r * 1000000);
                s->end_ns = s->start_ns + (k == 1 ? 500000 : 1000000);
                if (k == 0 && r == 1)
                    s->start_ns = t + 1000000, s->end_ns = t + 2000000;
                if (k == 1)
                    s->start_ns = t - 400000, s->end_ns = t - 100000; /* before the iteration */
            }
            mt[i] = (struct pps_metric){.iter = i,
                                        .stage = r,
                                        .loss = 1.0 / (i + 1),
                                        .grad_norm = 1,
                                        .act_bytes = 1,
                                        .pending_w = 0,
                                        .dropped = 0,
                                        .rank = r};
            t += 5000000 + 1000000LL * i;
        }
        sp[n] = (struct pps_span){.kind = PPS_SPAN_RANGE,
                                  .stage = (int16_t)r,
                                  .chunk = 0,
                                  .mb = -1,
                                  .iter = -1,
                                  .start_ns = -1000,
                                  .end_ns = t,
                                  .peer = -1,
                                  .name_id = name};
        n++;
        CHECK_EQ_INT(pps_store_writer_spans(w, sp, n, &err), 0);
        CHECK_EQ_INT(pps_store_writer_metrics(w, mt, ITERS, &err), 0);
        CHECK_EQ_INT(pps_store_writer_close(w, 1, &err), 0);
    }
}

/* The earliest start (*t0) and latest end (*t1, where not NULL) of the compute spans of run
 * labelled lo..hi. */
static void labelled_extent(const struct pps_run *run, int lo, int hi, int64_t *t0, int64_t *t1)
{
    *t0 = INT64_MAX;
    if (t1)
        *t1 = INT64_MIN;
    for (int s = 0; s < run->n_stages; s++)
        for (size_t i = 0; i < run->stages[s].n; i++) {
            const struct pps_span *sp = &run->stages[s].spans[i];
            if (sp->iter < lo || sp->iter > hi || !pps_span_kind_is_compute(sp->kind))
                continue;
            if (sp->start_ns < *t0)
                *t0 = sp->start_ns;
            if (t1 && sp->end_ns > *t1)
                *t1 = sp->end_ns;
        }
}

static void test_drop_keeps_the_newest_iterations(void)
{
    char *dir = tmpdir_new();
    struct pps_run *full = NULL, *run = NULL;
    struct pps_report *rep = NULL;
    struct pps_err err = {0, ""};
    int64_t cut;
    const int k = 6;

    write_trim_run(dir);
    CHECK_EQ_INT(pps_run_load(dir, &full, &err), 0);
    CHECK_EQ_INT(pps_run_load(dir, &run, &err), 0);
    if (!full || !run)
        goto out;
    labelled_extent(full, k, INT32_MAX, &cut, NULL);
    pps_run_drop_before(run, k);
    CHECK_EQ_INT(run->first_iter, k);
    /* What is left is exactly what the rule keeps, in the same order. */
    size_t left = 0;
    int64_t t_min = INT64_MAX;
    for (int s = 0; s < full->n_stages; s++) {
        size_t j = 0;
        for (size_t i = 0; i < full->stages[s].n; i++) {
            const struct pps_span *sp = &full->stages[s].spans[i];
            int keep = sp->iter >= 0 ? sp->iter >= k : sp->end_ns > cut;
            if (!keep)
                continue;
            CHECK(j < run->stages[s].n && !memcmp(sp, &run->stages[s].spans[j], sizeof(*sp)));
            if (sp->start_ns < t_min)
                t_min = sp->start_ns;
            j++;
        }
        CHECK_EQ_INT(run->stages[s].n, j);
        left += j;
    }
    CHECK_EQ_INT(run->n_spans, left);
    CHECK_EQ_INT(run->n_dropped, full->n_spans - left);
    CHECK_EQ_INT(run->t_min, t_min);
    CHECK_EQ_INT(run->t_min, -1000); /* the RANGE over the whole run reaches past the cut */
    CHECK_EQ_INT(run->t_max, full->t_max);
    CHECK_EQ_INT(run->n_metrics, 2 * (ITERS - k));
    for (size_t i = 0; i < run->n_metrics; i++)
        CHECK(run->metrics[i].iter >= k);

    /* The report is of iterations k.. and none of 0..k-1 is missing. */
    CHECK_EQ_INT(pps_analysis_report(run, &rep, &err), 0);
    if (rep) {
        CHECK_EQ_INT(rep->n_iters, ITERS - k);
        CHECK_EQ_INT(rep->iters[0].iter, k);
        CHECK_EQ_INT(rep->n_missing, 0);
        CHECK_EQ_INT(rep->n_full, ITERS - k);
    }
    pps_report_free(rep);
    rep = NULL;

    /* Dropping again below what is gone does nothing; further drops more. */
    pps_run_drop_before(run, 3);
    CHECK_EQ_INT(run->n_spans, left);
    pps_run_drop_before(run, ITERS - 1);
    CHECK_EQ_INT(run->first_iter, ITERS - 1);
    CHECK_EQ_INT(pps_analysis_report(run, &rep, &err), 0);
    if (rep)
        CHECK_EQ_INT(rep->n_iters, 1);
out:
    pps_report_free(rep);
    pps_run_free(full);
    pps_run_free(run);
    tmpdir_free(dir);
}

static void test_keep_iter_chooses_whole_iterations(void)
{
    char *dir = tmpdir_new();
    struct pps_run *run = NULL;
    struct pps_err err = {0, ""};

    write_trim_run(dir);
    CHECK_EQ_INT(pps_run_load(dir, &run, &err), 0);
    if (run) {
        /* 2 ranks x (10 x 3 + 1) spans; 40 labelled of 62, 4 an iteration: a keep of 25, the
         * newest 6 iterations (24 labelled). */
        CHECK_EQ_INT(run->n_spans, 62);
        CHECK_EQ_INT(pps_run_keep_iter(run, 62), 0); /* all of it fits */
        CHECK_EQ_INT(pps_run_keep_iter(run, 1000), 0);
        CHECK_EQ_INT(pps_run_keep_iter(run, 25), ITERS - 6);
        CHECK_EQ_INT(pps_run_keep_iter(run, 24), ITERS - 6);
        CHECK_EQ_INT(pps_run_keep_iter(run, 23), ITERS - 5);
        CHECK_EQ_INT(pps_run_keep_iter(run, 16), ITERS - 4);
        CHECK_EQ_INT(pps_run_keep_iter(run, 1), ITERS - 1); /* one iteration stays */
        pps_run_drop_before(run, ITERS - 4);
        CHECK_EQ_INT(pps_run_keep_iter(run, 1), ITERS - 1);
        CHECK_EQ_INT(pps_run_keep_iter(run, 1000), ITERS - 4); /* nothing more to drop */
        CHECK_EQ_INT(pps_run_keep_iter(run, 16), ITERS - 4);   /* the same from what is left */
    }
    pps_run_free(run);
    tmpdir_free(dir);
}

/* pps_run_drop_from(): iterations 3-5 of the run, held as a view paged back holds them: every
 * span labelled 3..5 and none other, the unlabelled spans that start before 5's last op ends
 * (and reach past 3's first, after pps_run_drop_before), their metrics; a report of them with
 * no iteration missing, although the run planned 10. */
static void test_drop_from_keeps_the_middle(void)
{
    char *dir = tmpdir_new();
    struct pps_run *full = NULL, *run = NULL;
    struct pps_report *rep = NULL;
    struct pps_err err = {0, ""};
    int64_t cut_lo, cut_hi;
    size_t want = 0;

    write_trim_run(dir);
    CHECK_EQ_INT(pps_run_load(dir, &full, &err), 0);
    CHECK_EQ_INT(pps_run_load(dir, &run, &err), 0);
    if (!full || !run)
        goto out;
    labelled_extent(full, 3, 5, &cut_lo, &cut_hi);
    for (int s = 0; s < full->n_stages; s++)
        for (size_t i = 0; i < full->stages[s].n; i++) {
            const struct pps_span *sp = &full->stages[s].spans[i];
            want += sp->iter >= 0 ? sp->iter >= 3 && sp->iter <= 5
                                  : sp->end_ns > cut_lo && sp->start_ns < cut_hi;
        }
    pps_run_drop_from(run, 0); /* would leave nothing: no-op */
    CHECK_EQ_INT((int)run->n_spans, (int)full->n_spans);
    pps_run_drop_before(run, 3);
    pps_run_drop_from(run, 6);
    CHECK_EQ_INT(run->first_iter, 3);
    CHECK_EQ_INT(run->end_iter, 6);
    CHECK_EQ_INT((int)run->n_spans, (int)want);
    CHECK_EQ_INT((int)(run->n_spans + run->n_dropped), (int)full->n_spans);
    for (int s = 0; s < run->n_stages; s++)
        for (size_t i = 0; i < run->stages[s].n; i++) {
            const struct pps_span *sp = &run->stages[s].spans[i];
            if (sp->iter >= 0)
                CHECK(sp->iter >= 3 && sp->iter <= 5);
            else
                CHECK(sp->end_ns > cut_lo && sp->start_ns < cut_hi);
        }
    for (size_t i = 0; i < run->n_metrics; i++)
        CHECK(run->metrics[i].iter >= 3 && run->metrics[i].iter <= 5);
    CHECK_EQ_INT((int)run->n_metrics, 6);
    CHECK_EQ_INT(pps_analysis_report(run, &rep, &err), 0);
    if (rep) {
        CHECK_EQ_INT(rep->n_iters, 3);
        CHECK_EQ_INT(rep->n_missing, 0);
        CHECK_EQ_INT(rep->n_full, 3);
    }
    pps_run_drop_from(run, 7); /* past what is held: no-op */
    CHECK_EQ_INT(run->end_iter, 6);
out:
    pps_report_free(rep);
    pps_run_free(full);
    pps_run_free(run);
    tmpdir_free(dir);
}

static const struct test_case cases[] = {
    TEST(test_drop_keeps_the_newest_iterations),
    TEST(test_keep_iter_chooses_whole_iterations),
    TEST(test_drop_from_keeps_the_middle),
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    return test_main(cases, argc, argv);
}
