/*
 * model.c - one run as the view holds it: the loaded run, its report and flags, the timeline
 * index, and a signature of its files that tells a live view when to reload.
 *
 * A progressive open reads only the first rows before the first frame; the rest arrives as live
 * rows do, and the report is made once it is all in, on a thread of its own (about a second on
 * 10M spans) while the UI keeps drawing the run, which does not change until the report is taken.
 *
 * The run is read through a follower (pps_run_follow_*), which opens shards read-only, in WAL
 * mode, so the writer is never blocked, and later reads only the rows added since: a live view's
 * update costs what was written since the last one. The index grows at its ends; the report,
 * which costs the whole run, is made again only when that is a small part of the time since the
 * last one (REPORT_SHARE), and always once the run is complete. The signature keeps an unchanged
 * run from being read at all.
 */
#include <dirent.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "tui_int.h"

/* The report is made again when its last cost is at most this share of the time since, or under
 * REPORT_CHEAP_S (small runs: always up to date). */
#define REPORT_SHARE   0.1
#define REPORT_CHEAP_S 0.02

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* A report made on a thread: it only reads run, which the UI leaves alone until it is taken. */
struct pps__tui_report_job {
    pthread_t thread;
    const struct pps_run *run;
    struct pps_report *rep;
    struct pps_flag_list flags;
    struct pps_err err;
    int rc;
    double t0, t1;
    atomic_int done;
};

/* The job's report and flags of j->run, and when they were done (j->t1). */
static void report_of(struct pps__tui_report_job *j)
{
    j->rc = pps_analysis_report(j->run, &j->rep, &j->err);
    if (j->rc >= 0)
        j->rc = pps_analysis_flags(j->run, j->rep, &j->flags, &j->err);
    j->t1 = now_s();
}

static void *report_main(void *arg)
{
    struct pps__tui_report_job *j = arg;

    report_of(j);
    atomic_store(&j->done, 1);
    return NULL;
}

static void job_free(struct pps__tui_report_job *j)
{
    if (!j)
        return;
    pthread_join(j->thread, NULL);
    pps_flag_list_release(&j->flags);
    pps_report_free(j->rep);
    free(j);
}

static void grow_free(struct pps__tui_grow_job *j);

void pps__tui_model_release(struct pps_tui_model *m)
{
    grow_free(m->grow);
    job_free(m->job);
    pps_summary_series_release(&m->run_iters);
    free(m->path);
    pps_tui_index_free(m->index);
    pps_run_follow_free(m->follow);
    pps_flag_list_release(&m->flags);
    pps_critpath_free(m->cp);
    pps_report_free(m->rep);
    pps_run_free(m->run);
    memset(m, 0, sizeof(*m));
}

/* run and its index become m's, in place of those it had (its report is the caller's to make). */
static void adopt_run(struct pps_tui_model *m, struct pps_run *run, struct pps_tui_index *index)
{
    pps_tui_index_free(m->index);
    m->index = index;
    pps_run_free(m->run);
    m->run = run;
}

/* The labelled spans the first read through the index holds: half of --max-spans, or for the
 * screen (m->progressive) a sixteenth first, the rest in a second step. */
static size_t first_keep(const struct pps_tui_model *m)
{
    return m->progressive ? m->max_spans / PPS_TUI_FIRST_KEEP : m->max_spans / 2;
}

/* rep and flags (made from t0 to t1) become m's, in place of those it had. */
static void adopt_report(struct pps_tui_model *m, struct pps_report *rep,
                         struct pps_flag_list flags, double t0, double t1)
{
    pps_flag_list_release(&m->flags);
    pps_critpath_free(m->cp);
    m->cp = NULL;
    pps_report_free(m->rep);
    m->rep = rep;
    m->flags = flags;
    m->rep_at = t1;
    m->rep_s = t1 - t0;
    m->rep_spans = m->run->n_spans + m->run->n_dropped; /* taken in: a drop alone changes n */
}

/* The report and flags of the run as it is now. */
static int make_report(struct pps_tui_model *m, struct pps_err *err)
{
    struct pps_report *rep = NULL;
    struct pps_flag_list flags = PPS_FLAG_LIST_INIT;
    double t = now_s();
    int rc;

    if ((rc = pps_analysis_report(m->run, &rep, err)) < 0 ||
        (rc = pps_analysis_flags(m->run, rep, &flags, err)) < 0) {
        pps_flag_list_release(&flags);
        pps_report_free(rep);
        return rc;
    }
    adopt_report(m, rep, flags, t, now_s());
    return 0;
}

/* Starts making the report on a thread; where no thread can be had, makes it here. */
static int start_report(struct pps_tui_model *m, struct pps_err *err)
{
    struct pps__tui_report_job *j = calloc(1, sizeof(*j));

    if (!j)
        return pps_err_set(err, PPS_ENOMEM, "out of memory");
    j->run = m->run;
    j->flags = (struct pps_flag_list)PPS_FLAG_LIST_INIT;
    j->t0 = now_s();
    atomic_init(&j->done, 0);
    if (pthread_create(&j->thread, NULL, report_main, j) != 0) {
        free(j);
        return make_report(m, err);
    }
    m->job = j;
    return 0;
}

int pps__tui_model_report_take(struct pps_tui_model *m, int wait, struct pps_err *err)
{
    struct pps__tui_report_job *j = m->job;
    int rc;

    if (!j || (!wait && !atomic_load(&j->done)))
        return 0;
    pthread_join(j->thread, NULL);
    m->job = NULL;
    rc = j->rc;
    if (rc >= 0) {
        adopt_report(m, j->rep, j->flags, j->t0, j->t1);
        rc = 1;
    } else {
        if (err)
            *err = j->err;
        pps_flag_list_release(&j->flags);
        pps_report_free(j->rep);
    }
    free(j);
    return rc;
}

/*
 * Keeps the newest whole iterations within m->max_spans: past it, drops the oldest, down to half
 * of it (so that a growing run drops a share at a time, not every fetch). final: the whole run
 * has been read and nothing more will be written: past max_spans in all, exactly its newest
 * whole iterations of at most max_spans / 2 labelled spans, however the reads fell
 * (pps_run_keep_iter() depends on those iterations alone), which an open through the index
 * holds too (read_pick). 1 when it dropped.
 */
static int keep_newest(struct pps_tui_model *m, int final, struct pps_err *err)
{
    size_t before;
    int k;

    if (!m->max_spans || !m->run ||
        m->run->n_spans + (final ? m->run->n_dropped : 0) <= m->max_spans ||
        (final && !pps_run_finished(m->run)))
        return 0;
    if ((k = pps_run_keep_iter(m->run, m->max_spans / 2)) < 0)
        return pps_err_set(err, PPS_ENOMEM, "out of memory choosing the iterations to keep");
    before = m->run->n_dropped;
    pps_run_drop_before(m->run, k); /* at first_iter: what came in below it since */
    return m->run->n_dropped != before;
}

/*
 * Reads whole iterations of a finished run through the spans' index, where its summary (of the
 * run as its files are now) says which and where they lie (pps_summary_pick(): anchor, dir; dir
 * 0 the newest), at most keep labelled spans of them, into *out: what reading the run whole and
 * dropping the rest holds, at the cost of those iterations. The run's own first (last)
 * iterations come with everything before (after) them. With dir 0, only a run past max_spans
 * with older iterations to leave out. 1 when it did (*older, where not NULL: it left older
 * iterations out), and where series is not NULL every iteration of the run from the summary
 * in it (left empty where it cannot be had: the charts of the whole run are extra); 0 where it
 * cannot (a live run, no summary or a damaged one, no map of its labels, files changed between
 * the reads): the caller reads whole, or stays as it is; PPS_ENOMEM.
 */
static int read_pick(const char *path, size_t max_spans, size_t keep, int no_summary, int anchor,
                     int dir, struct pps_run **out, int *older, struct pps_summary_series *series,
                     struct pps_err *err)
{
    struct pps_run *meta = NULL, *run = NULL;
    struct pps_summary_pick pk;
    struct pps_err why = {0, ""};
    void *data = NULL;
    size_t len = 0;
    int rc = 0;

    *out = NULL;
    if (!max_spans || no_summary || pps_run_load_meta(path, &meta, &why) < 0 ||
        !pps_run_finished(meta) ||
        pps_run_summary_get(path, PPS_SUMMARY_NAME, meta->stamp, &data, &len, &why) != 1)
        goto out;
    /* The whole run's iterations from the same read of the summary, where asked for. */
    if ((rc = pps_summary_pick(data, len, keep, anchor, dir, &pk, series, &why)) != 0) {
        if (rc == PPS_ENOMEM)
            *err = why;
        rc = rc == PPS_ENOMEM ? rc : 0;
        goto out;
    }
    if ((dir == 0 && (pk.spans <= (int64_t)max_spans || !pk.older)) ||
        pps_run_load_window(path, pk.older ? pk.t0 : -PPS_TUI_TIME_END,
                            pk.newer ? pk.t1 + 1 : PPS_TUI_TIME_END, &run, &why) < 0)
        goto out;
    if (run->stamp != meta->stamp || (int64_t)run->n_spans > pk.spans)
        goto out; /* the files changed between the two reads */
    pps_run_drop_before(run, pk.first_iter);
    pps_run_drop_from(run, pk.end_iter);
    run->n_dropped = (size_t)pk.spans - run->n_spans;
    run->n_iters = pk.n_iters; /* the run's, not the window's */
    *out = run;
    if (older)
        *older = pk.older;
    if (series && series->n < 2)
        pps_summary_series_release(series); /* one iteration: nothing to chart */
    run = NULL;
    rc = 1;
out:
    if (rc != 1 && series)
        pps_summary_series_release(series); /* none where nothing was read */
    free(data);
    pps_run_free(run);
    pps_run_free(meta);
    return rc;
}

/* ---- the open through the index, in two steps ----------------------------------------------
 *
 * A view that opens a summarised run through the index draws its first frame from the newest
 * iterations within a sixteenth of --max-spans (PPS_TUI_FIRST_KEEP), and reads the newest within
 * half of it, what it holds from then on, on a thread of its own meanwhile: the first frame
 * costs a sixteenth of the read. The thread makes the index, the report and the flags of what
 * it read too; the UI takes them all at once (pps__tui_model_grow_take()).
 */
struct pps__tui_grow_job {
    /* Its thread, and the report and flags of run once read (r.run), their error (r.rc < 0 and
     * r.err: of the whole step), and when the report was made. */
    struct pps__tui_report_job r;
    char *path;
    size_t max_spans, keep;
    int anchor, dir; /* what read_pick() reads: the newest (dir 0), or a page */
    int first;       /* a page's first step (keep < max_spans / 2): its second follows */
    int want_series; /* the model has no run_iters yet: series, read with the run */
    struct pps_summary_series series;
    /* 1 once either the thread has ended or the UI has given the job up: whichever comes
     * second frees it (the UI joining, or the thread itself). */
    atomic_int left;
    struct pps_run *run;
    struct pps_tui_index *index;
};

static void grow_release(struct pps__tui_grow_job *j);

static void *grow_main(void *arg)
{
    struct pps__tui_grow_job *j = arg;

    j->r.rc = read_pick(j->path, j->max_spans, j->keep, 0, j->anchor, j->dir, &j->run, NULL,
                        j->want_series ? &j->series : NULL, &j->r.err);
    if (j->r.rc == 1 && (j->r.rc = pps_tui_index_build(j->run, &j->index, &j->r.err)) >= 0) {
        j->r.run = j->run;
        j->r.t0 = now_s();
        report_of(&j->r);
        if (j->r.rc >= 0)
            j->r.rc = 1;
    }
    atomic_store(&j->r.done, 1);
    /* Given up meanwhile (grow_free): this thread is detached, and frees what it made. */
    if (atomic_exchange(&j->left, 1) == 1)
        grow_release(j);
    return NULL;
}

/* Frees j, whose thread has ended and been joined. */
static void grow_release(struct pps__tui_grow_job *j)
{
    pps_flag_list_release(&j->r.flags);
    pps_report_free(j->r.rep);
    pps_tui_index_free(j->index);
    pps_run_free(j->run);
    pps_summary_series_release(&j->series);
    free(j->path);
    free(j);
}

/* Gives j up: at once where its thread is done, else the thread frees it when it ends (a view
 * that quits does not wait for a read it will not show). */
static void grow_free(struct pps__tui_grow_job *j)
{
    pthread_t thread;

    if (!j)
        return;
    thread = j->r.thread; /* j may be gone once the exchange below says the thread was not done */
    if (atomic_exchange(&j->left, 1) == 1) {
        pthread_join(thread, NULL);
        grow_release(j);
    } else {
        pthread_detach(thread);
    }
}

/* Starts a read of anchor, dir (read_pick()) within keep labelled spans on a thread: the second
 * step of an open or a page (keep max_spans / 2), or a page's first (less). 0, or -1 where no
 * thread (or memory) can be had: the view keeps what it holds. */
static int start_read(struct pps_tui_model *m, int anchor, int dir, size_t keep)
{
    struct pps__tui_grow_job *j = calloc(1, sizeof(*j));

    if (!j || !(j->path = strdup(m->path))) {
        free(j);
        return -1;
    }
    j->max_spans = m->max_spans;
    j->keep = keep;
    j->first = keep < m->max_spans / 2;
    j->want_series = m->run_iters.n == 0;
    j->anchor = anchor;
    j->dir = dir;
    atomic_init(&j->left, 0);
    j->r.flags = (struct pps_flag_list)PPS_FLAG_LIST_INIT;
    atomic_init(&j->r.done, 0);
    if (pthread_create(&j->r.thread, NULL, grow_main, j) != 0) {
        free(j->path);
        free(j);
        return -1;
    }
    m->grow = j;
    return 0;
}

/* The second step of a read of anchor, dir: the whole of it. */
static void start_grow(struct pps_tui_model *m, int anchor, int dir)
{
    start_read(m, anchor, dir, m->max_spans / 2);
}

int pps__tui_model_grow_take(struct pps_tui_model *m, int wait, struct pps_err *err)
{
    struct pps__tui_grow_job *j = m->grow;
    int rc;

    if (!j || (!wait && !atomic_load(&j->r.done)))
        return 0;
    pthread_join(j->r.thread, NULL);
    m->grow = NULL;
    rc = j->r.rc;
    if (rc < 0 && err)
        *err = j->r.err;
    /* A report being made reads the run it replaces. */
    if (rc == 1 && (rc = pps__tui_model_report_take(m, 1, err)) >= 0)
        rc = 1;
    if (rc == 1) {
        m->windowed = 1; /* its follower, where it has one, is read no more */
        adopt_run(m, j->run, j->index);
        j->run = NULL;
        j->index = NULL;
        adopt_report(m, j->r.rep, j->r.flags, j->r.t0, j->r.t1);
        j->r.rep = NULL;
        j->r.flags = (struct pps_flag_list)PPS_FLAG_LIST_INIT;
        if (j->series.n && !m->run_iters.n) {
            m->run_iters = j->series;
            memset(&j->series, 0, sizeof(j->series));
        }
        if (j->first) {
            start_grow(m, j->anchor, j->dir); /* the whole page, as the open's second step */
            rc = 2;
        }
    }
    grow_release(j);
    return rc;
}

int pps__tui_model_page(struct pps_tui_model *m, int anchor, int dir, struct pps_err *err)
{
    struct pps_tui_index *index = NULL;
    struct pps_run *run = NULL;
    size_t keep = first_keep(m);
    int rc, taken = 0;

    if (m->loading || !m->run)
        return 0;
    if (!pps_run_finished(m->run))
        return 0; /* a live run: read_pick() reads none */
    /* On the screen (progressive), nothing is read here, so that no frame waits for it: the
     * first step on a thread, whose taking starts the second (pps__tui_model_grow_take()). A
     * read under way that is not this page's first step is given up: the view moves on. */
    if (m->progressive && !m->no_summary && m->max_spans && keep < m->max_spans / 2) {
        struct pps__tui_grow_job *was = m->grow;

        if (was && was->first && was->anchor == anchor && was->dir == dir)
            return 2;
        m->grow = NULL;
        if (start_read(m, anchor, dir, keep) == 0) {
            grow_free(was);
            return 2;
        }
        /* No thread: the whole page here, as a view not on the screen reads it (a first step
         * here would have no second). */
        m->grow = was;
        keep = m->max_spans / 2;
    }
    /* A page asked for while the second step of the last read is under way: that first, and
     * where it holds an iteration past anchor in dir, nothing more to read. From here on the
     * model has changed where it was taken: 1, even if the page then reads nothing. */
    if (m->grow && (taken = pps__tui_model_grow_take(m, 1, err)) < 0)
        return taken;
    if (taken > 0 && dir != 0 && m->rep && m->rep->n_iters > 0 &&
        (dir < 0 ? m->rep->iters[0].iter < anchor
                 : m->rep->iters[m->rep->n_iters - 1].iter > anchor))
        return 1;
    if ((rc = read_pick(m->path, m->max_spans, keep, m->no_summary, anchor, dir, &run, NULL,
                        m->run_iters.n ? NULL : &m->run_iters, err)) <= 0)
        return rc < 0 ? rc : taken > 0;
    /* A report being made reads the run it replaces. */
    if ((rc = pps__tui_model_report_take(m, 1, err)) < 0 ||
        (rc = pps_tui_index_build(run, &index, err)) < 0) {
        pps_run_free(run);
        return rc;
    }
    adopt_run(m, run, index);
    m->windowed = 1; /* its follower, where it has one, is read no more */
    if ((rc = make_report(m, err)) < 0)
        return rc;
    if (keep < m->max_spans / 2)
        start_grow(m, anchor, dir); /* the whole page, as the open's second step */
    return 1;
}

void pps__tui_model_page_cancel(struct pps_tui_model *m)
{
    if (m->grow && m->grow->first) {
        grow_free(m->grow);
        m->grow = NULL;
    }
}

/* What one load reads at a time where spans are kept within max_spans: a quarter of them. */
size_t pps__tui_chunk_of(size_t max_spans)
{
    return max_spans / 4 > 1000 ? max_spans / 4 : 1000;
}

int pps__tui_model_load(struct pps_tui_model *m, const char *path, size_t first_rows,
                        size_t max_spans, int no_summary, struct pps_err *err)
{
    double t = now_s();
    int rc, more = 0, older = 0;

    memset(m, 0, sizeof(*m));
    m->max_spans = max_spans;
    m->no_summary = no_summary;
    m->progressive = first_rows != 0;
    m->sig = pps__tui_signature(path);
    m->path = strdup(path);
    if (!m->path) {
        rc = pps_err_set(err, PPS_ENOMEM, "out of memory");
        goto fail;
    }
    /* A summarised finished run: its newest iterations through the index (a progressive open:
     * fewer first, the rest on a thread). */
    /* The whole run's iterations with them, but for the screen's first frame (its second
     * step reads them). */
    if ((rc = read_pick(path, max_spans, first_keep(m), no_summary, 0, 0, &m->run, &older,
                        m->progressive ? NULL : &m->run_iters, err)) < 0)
        goto fail;
    if (rc == 1) {
        m->windowed = 1;
        goto loaded;
    }
    if ((rc = pps_run_follow_open(path, &m->follow, err)) < 0)
        goto fail;
    /* The whole run, within max_spans: a chunk at a time, the oldest dropped as it goes. */
    if (first_rows && max_spans && first_rows > pps__tui_chunk_of(max_spans))
        first_rows = pps__tui_chunk_of(max_spans); /* a progressive open's first rows too */
    do {
        size_t rows = first_rows ? first_rows : max_spans ? pps__tui_chunk_of(max_spans) : 0;
        if ((rc = pps_run_follow_fetch(m->follow, rows, NULL, err)) < 0)
            goto fail;
        more = rc == 1;
        if ((rc = pps_run_follow_apply(m->follow, &m->run, NULL, err)) < 0 ||
            (rc = keep_newest(m, 0, err)) < 0)
            goto fail;
    } while (more && !first_rows);
    m->loading = more;
    pps_run_follow_progress(m->follow, &m->load_read, &m->load_total);
    if (!more && (rc = keep_newest(m, 1, err)) < 0)
        goto fail;
loaded:
    m->base_ns = m->run->t_min;
    /* The report costs the whole run: it waits until the whole run is in. */
    if (!m->loading && (rc = make_report(m, err)) < 0)
        goto fail;
    if ((rc = pps_tui_index_build(m->run, &m->index, err)) < 0)
        goto fail;
    if (m->windowed && older && first_keep(m) < max_spans / 2)
        start_grow(m, 0, 0);
    m->load_s = now_s() - t;
    return 0;
fail:
    pps__tui_model_release(m);
    return rc;
}

int pps__tui_model_apply(struct pps_tui_model *m, uint64_t sig, int more, struct pps_err *err)
{
    double t = now_s();
    int rc, moved, loaded, dropped;

    if (m->windowed)
        return 0; /* a finished run read through its index: nothing is added */
    /* A report being made reads the run: it is taken before the run changes. */
    if (m->job && (rc = pps__tui_model_report_take(m, 1, err)) < 0)
        return rc;
    if ((moved = pps_run_follow_apply(m->follow, &m->run, NULL, err)) < 0)
        return moved;
    if ((dropped = keep_newest(m, 0, err)) < 0)
        return dropped;
    m->sig = sig;
    loaded = m->loading && !more;
    m->loading = m->loading && more;
    if (!m->loading) {
        int fin = keep_newest(m, 1, err);
        if (fin < 0)
            return fin;
        dropped |= fin;
    }
    moved |= dropped;
    pps_run_follow_progress(m->follow, &m->load_read, &m->load_total);
    if ((rc = pps_tui_index_update(&m->index, m->run, moved, err)) < 0)
        return rc;
    if (loaded) {
        if ((rc = start_report(m, err)) < 0)
            return rc;
    } else if (!m->loading &&
               /* A drop leaves the report of iterations no longer held: made again at once (the
                * run is within max_spans, so it is bounded too). */
               (dropped || (m->run->n_spans + m->run->n_dropped != m->rep_spans &&
                            (m->run->complete || !m->rep || m->rep_s < REPORT_CHEAP_S ||
                             m->rep_s <= REPORT_SHARE * (now_s() - m->rep_at)))))
        if ((rc = make_report(m, err)) < 0)
            return rc;
    m->load_s = now_s() - t;
    return 0;
}

int pps__tui_model_update(struct pps_tui_model *m, struct pps_err *err)
{
    uint64_t sig = pps__tui_signature(m->path);
    int rc;

    if ((sig == m->sig && !m->loading) || m->windowed)
        return 0; /* windowed: a finished run read through its index, which does not grow */
    if ((rc = pps_run_follow_fetch(m->follow, 0, NULL, err)) < 0)
        return rc;
    if ((rc = pps__tui_model_apply(m, sig, 0, err)) < 0)
        return rc;
    /* Refreshing is synchronous: the report too. */
    if ((rc = pps__tui_model_report_take(m, 1, err)) < 0)
        return rc;
    return 1;
}

/* Folds one file's size and modification time into h (FNV-1a over the numbers). */
static uint64_t fold_file(uint64_t h, const char *path)
{
    struct stat st;
    uint64_t v[3];

    if (stat(path, &st) != 0)
        return h;
    v[0] = (uint64_t)st.st_size;
    v[1] = (uint64_t)st.st_mtim.tv_sec;
    v[2] = (uint64_t)st.st_mtim.tv_nsec;
    for (int i = 0; i < 3; i++)
        for (int b = 0; b < 8; b++) {
            h ^= (v[i] >> (8 * b)) & 0xFF;
            h *= 1099511628211ull;
        }
    return h;
}

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);

    return n >= k && !strcmp(s + n - k, suffix);
}

uint64_t pps__tui_signature(const char *path)
{
    uint64_t h = 14695981039346656037ull;
    struct stat st;
    char buf[4096];
    DIR *d;
    struct dirent *e;

    if (stat(path, &st) != 0)
        return 0;
    if (!S_ISDIR(st.st_mode)) {
        h = fold_file(h, path);
        snprintf(buf, sizeof(buf), "%s-wal", path);
        return fold_file(h, buf);
    }
    d = opendir(path);
    if (!d)
        return 0;
    /* Directory order is stable while no file is added; a new shard changes the sum anyway. */
    while ((e = readdir(d)) != NULL) {
        if (!ends_with(e->d_name, ".db") && !ends_with(e->d_name, ".db-wal"))
            continue;
        snprintf(buf, sizeof(buf), "%s/%s", path, e->d_name);
        h = fold_file(h, buf);
    }
    closedir(d);
    return h;
}

/* The report iteration metric mt belongs to, or -1: metrics and report iterations are both
 * sorted by iteration, so one cursor (*it, from 0) walks both. */
static int metric_slot(const struct pps_report *rep, size_t *it, const struct pps_metric *mt)
{
    while (*it < (size_t)rep->n_iters && rep->iters[*it].iter < mt->iter)
        (*it)++;
    return *it < (size_t)rep->n_iters && rep->iters[*it].iter == mt->iter ? (int)*it : -1;
}

int pps__tui_losses(const struct pps_tui_model *m, double **out)
{
    const struct pps_report *rep = m->rep;
    double *loss, *n;

    *out = NULL;
    if (!rep || rep->n_iters < 1)
        return 0;
    loss = calloc((size_t)rep->n_iters, sizeof(*loss));
    n = calloc((size_t)rep->n_iters, sizeof(*n));
    if (!loss || !n) {
        free(loss);
        free(n);
        return PPS_ENOMEM;
    }
    for (size_t i = 0, it = 0; i < m->run->n_metrics; i++) {
        const struct pps_metric *mt = &m->run->metrics[i];
        int k = metric_slot(rep, &it, mt);

        if (k >= 0 && !isnan(mt->loss)) {
            loss[k] += mt->loss;
            n[k] += 1;
        }
    }
    for (int it = 0; it < rep->n_iters; it++)
        loss[it] = n[it] > 0 ? loss[it] / n[it] : NAN;
    free(n);
    *out = loss;
    return 0;
}

int64_t pps__tui_peak_act(const struct pps_tui_model *m)
{
    int64_t peak = -1;

    for (size_t i = 0; m->run && i < m->run->n_metrics; i++)
        if (m->run->metrics[i].act_bytes > peak)
            peak = m->run->metrics[i].act_bytes;
    return peak;
}

int pps__tui_pending_w(const struct pps_tui_model *m, int stage, double **out)
{
    const struct pps_report *rep = m->rep;
    double *pw;
    int any = 0;

    *out = NULL;
    if (!rep || rep->n_iters < 1)
        return 0;
    if (!(pw = malloc((size_t)rep->n_iters * sizeof(*pw))))
        return PPS_ENOMEM;
    for (int it = 0; it < rep->n_iters; it++)
        pw[it] = NAN;
    for (size_t i = 0, it = 0; i < m->run->n_metrics; i++) {
        const struct pps_metric *mt = &m->run->metrics[i];
        int k = metric_slot(rep, &it, mt);

        if (k >= 0 && mt->stage == stage && mt->pending_w >= 0) {
            double v = (double)mt->pending_w;
            pw[k] = isnan(pw[k]) || v > pw[k] ? v : pw[k];
            any |= mt->pending_w > 0;
        }
    }
    if (!any) {
        free(pw);
        return 0;
    }
    *out = pw;
    return 0;
}
