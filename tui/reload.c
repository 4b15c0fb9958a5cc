/*
 * reload.c - live runs read on a thread of their own, so that the view answers keys at once
 * even while a run grows fast.
 *
 * The thread wakes every delay, compares each run's file signature with the one it last read
 * and, when it changed, fetches the new rows through the model's follower (read-only
 * connections: the writer is never blocked). The rows wait in the follower until the UI takes
 * them, which only copies them into its run (pps__tui_model_apply); rows fetched while the view is
 * paused add up there. A run still loading after a progressive open is read a chunk at a time,
 * the next as soon as the UI took the last, without waiting for the delay. The follower is used by
 * one thread at a time: the reloader holds a slot's fetch mutex while it reads, and take only tries
 * it, so the UI never waits for the files.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tui_int.h"

/* Spans a loading run is read by at a time: each chunk is applied by the UI between keys, so it
 * is what one apply may cost the UI (tens of ms); and the progress moves by it. */
#define LOAD_CHUNK 500000

struct slot {
    char *path;
    struct pps_run_follow *follow; /* the model's: the UI's model outlives the reloader */
    pthread_mutex_t fetching;      /* held while the follower is in use */
    uint64_t sig;                  /* of the files when last fetched (by the UI at first) */
    uint64_t ready_sig;
    int have_ready;     /* rows fetched and not applied yet */
    int loading;        /* the rest of a progressive open is still to be read */
    int ready_more;     /* what is ready stopped at a chunk: more of the open to come */
    size_t chunk;       /* a chunk: LOAD_CHUNK, or less where the model keeps fewer spans */
    size_t live_chunk;  /* what one live read takes at most: 0 (all), or the model's chunk */
    struct pps_err err; /* the last fetch's failure, until taken */
};

struct pps__tui_reloader {
    pthread_t thread;
    int started;
    pthread_mutex_t lock;
    pthread_cond_t wake;
    int stop;
    double delay_s;
    int n;
    struct slot slots[2];
};

/* Whether a slot has a chunk of its open to read now: the thread then does not sleep. */
static int loading_due(const struct pps__tui_reloader *r)
{
    for (int m = 0; m < r->n; m++)
        if (r->slots[m].loading && !r->slots[m].have_ready && !r->slots[m].err.code)
            return 1;
    return 0;
}

/* Reads the next chunk of a loading slot; r->lock is held on entry and on return. */
static void load_chunk(struct pps__tui_reloader *r, struct slot *s)
{
    struct pps_err err = {0, ""};
    uint64_t sig;
    int rc;

    pthread_mutex_unlock(&r->lock);
    /* The signature before the read: a commit after it is seen by the next look. */
    sig = pps__tui_signature(s->path);
    pthread_mutex_lock(&s->fetching);
    rc = pps_run_follow_fetch(s->follow, s->chunk, NULL, &err);
    pthread_mutex_unlock(&s->fetching);
    pthread_mutex_lock(&r->lock);
    if (rc < 0) {
        s->err = err;
        return;
    }
    s->have_ready = 1;
    s->ready_sig = sig;
    s->ready_more = rc == 1;
    if (rc == 0) {
        s->loading = 0;
        s->sig = sig;
    }
}

static void *reload_main(void *arg)
{
    struct pps__tui_reloader *r = arg;

    pthread_mutex_lock(&r->lock);
    while (!r->stop) {
        struct timespec until;
        double d = r->delay_s;

        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += (time_t)d;
        until.tv_nsec += (long)((d - (double)(time_t)d) * 1e9);
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
        /* A loading run is read without a pause; take wakes the thread for the next chunk. */
        if (!loading_due(r))
            pthread_cond_timedwait(&r->wake, &r->lock, &until);
        for (int m = 0; m < r->n && !r->stop; m++) {
            struct slot *s = &r->slots[m];
            struct pps_err err = {0, ""};
            uint64_t sig;
            int rc;

            /* A finished run read through its index has no follower: nothing is added to it. */
            if (!s->follow)
                continue;
            if (s->loading) {
                if (!s->have_ready && !s->err.code)
                    load_chunk(r, s);
                continue;
            }
            /* A view that keeps --max-spans reads no more until it took the last rows (a paused
             * one: nothing), and a chunk at a time (a clock change re-reads the whole run). */
            if (s->live_chunk && s->have_ready)
                continue;
            pthread_mutex_unlock(&r->lock);
            sig = pps__tui_signature(s->path);
            rc = 1;
            if (sig != s->sig) {
                pthread_mutex_lock(&s->fetching);
                rc = pps_run_follow_fetch(s->follow, s->live_chunk, NULL, &err);
                pthread_mutex_unlock(&s->fetching);
            }
            pthread_mutex_lock(&r->lock);
            if (sig == s->sig)
                continue;
            if (rc < 0) {
                s->err = err;
                continue;
            }
            s->have_ready = 1;
            s->ready_sig = sig;
            s->ready_more = rc == 1;
            s->sig = sig;
            if (rc == 1)
                s->loading = 1; /* the rest a chunk at a time, without waiting for the delay */
        }
    }
    pthread_mutex_unlock(&r->lock);
    return NULL;
}

int pps__tui_reloader_start(const struct pps_tui *ui, struct pps__tui_reloader **out,
                            struct pps_err *err)
{
    struct pps__tui_reloader *r = calloc(1, sizeof(*r));

    *out = NULL;
    if (!r)
        return pps_err_set(err, PPS_ENOMEM, "out of memory");
    pthread_mutex_init(&r->lock, NULL);
    pthread_cond_init(&r->wake, NULL);
    r->n = ui->n_models;
    r->delay_s = ui->opts.delay_s;
    for (int m = 0; m < r->n; m++) {
        r->slots[m].sig = ui->models[m].sig;
        r->slots[m].follow = ui->models[m].follow;
        r->slots[m].loading = ui->models[m].loading;
        r->slots[m].live_chunk =
            ui->models[m].max_spans ? pps__tui_chunk_of(ui->models[m].max_spans) : 0;
        r->slots[m].chunk =
            ui->models[m].max_spans && pps__tui_chunk_of(ui->models[m].max_spans) < LOAD_CHUNK
                ? pps__tui_chunk_of(ui->models[m].max_spans)
                : LOAD_CHUNK;
        pthread_mutex_init(&r->slots[m].fetching, NULL);
        r->slots[m].path = strdup(ui->models[m].path);
        if (!r->slots[m].path) {
            pps__tui_reloader_stop(r);
            return pps_err_set(err, PPS_ENOMEM, "out of memory");
        }
    }
    r->started = pthread_create(&r->thread, NULL, reload_main, r) == 0;
    if (!r->started) {
        pps__tui_reloader_stop(r);
        return pps_err_set(err, PPS_EIO, "cannot start the thread that follows the run");
    }
    *out = r;
    return 0;
}

int pps__tui_reloader_take(struct pps__tui_reloader *r, int m, struct pps_tui_model *model,
                           struct pps_err *err)
{
    struct slot *s;
    uint64_t sig = 0;
    int ready = 0, more, rc;

    if (!r || m < 0 || m >= r->n)
        return 0;
    s = &r->slots[m];
    /* The report of a run that just finished loading is made on a thread that reads the run: new
     * rows wait until it is taken. */
    if (model->job) {
        rc = pps__tui_model_report_take(model, 0, err);
        if (rc != 0 || model->job)
            return rc > 0;
    }
    pthread_mutex_lock(&r->lock);
    if (s->have_ready) {
        ready = 1;
        sig = s->ready_sig;
    } else if (s->err.code) {
        if (err)
            *err = s->err;
        s->err.code = 0;
    }
    pthread_mutex_unlock(&r->lock);
    /* A fetch under way: take it next time rather than wait for the files. */
    if (!ready || pthread_mutex_trylock(&s->fetching) != 0)
        return 0;
    pthread_mutex_lock(&r->lock);
    sig = s->ready_sig; /* a fetch may have ended since */
    more = s->ready_more;
    s->have_ready = 0;
    if (s->loading)
        pthread_cond_signal(&r->wake); /* the next chunk */
    pthread_mutex_unlock(&r->lock);
    rc = pps__tui_model_apply(model, sig, more, err);
    pthread_mutex_unlock(&s->fetching);
    return rc < 0 ? 0 : 1;
}

void pps__tui_reloader_stop(struct pps__tui_reloader *r)
{
    if (!r)
        return;
    if (r->started) {
        pthread_mutex_lock(&r->lock);
        r->stop = 1;
        pthread_cond_signal(&r->wake);
        pthread_mutex_unlock(&r->lock);
        pthread_join(r->thread, NULL);
    }
    pthread_cond_destroy(&r->wake);
    pthread_mutex_destroy(&r->lock);
    for (int m = 0; m < r->n; m++) {
        pthread_mutex_destroy(&r->slots[m].fetching);
        free(r->slots[m].path);
    }
    free(r);
}
