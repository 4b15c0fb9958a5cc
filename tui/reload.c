/*
 * reload.c - live runs re-read on a thread of their own, so that the view answers keys at once
 * even while a big run is being loaded again.
 *
 * The thread wakes every delay, compares each run's file signature with the one it last loaded
 * and, when it changed, loads the run (pps_run_load opens the shards read-only: the writer is
 * never blocked). The loaded model waits in a slot until the UI takes it; a newer one replaces
 * one not taken yet (while the view is paused). Models move between the threads whole, under
 * the mutex, and are used by one thread at a time.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tui_int.h"

struct slot {
    char *path;
    uint64_t sig; /* of the last model loaded (by the UI at first) */
    struct pps_tui_model ready;
    int have_ready;
    struct pps_err err; /* the last load's failure, until taken */
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
        pthread_cond_timedwait(&r->wake, &r->lock, &until);
        for (int m = 0; m < r->n && !r->stop; m++) {
            struct slot *s = &r->slots[m];
            struct pps_tui_model fresh;
            struct pps_err err = {0, ""};
            uint64_t sig;
            int rc;

            pthread_mutex_unlock(&r->lock);
            sig = pps__tui_signature(s->path);
            rc = sig == s->sig ? 1 : pps__tui_model_load(&fresh, s->path, &err);
            pthread_mutex_lock(&r->lock);
            if (rc == 1)
                continue;
            if (rc < 0) {
                s->err = err;
                continue;
            }
            if (s->have_ready)
                pps__tui_model_release(&s->ready);
            s->ready = fresh;
            s->have_ready = 1;
            s->sig = fresh.sig;
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
    r->n = ui->n_models;
    r->delay_s = ui->opts.delay_s;
    for (int m = 0; m < r->n; m++) {
        r->slots[m].sig = ui->models[m].sig;
        r->slots[m].path = strdup(ui->models[m].path);
        if (!r->slots[m].path) {
            pps__tui_reloader_stop(r);
            return pps_err_set(err, PPS_ENOMEM, "out of memory");
        }
    }
    pthread_mutex_init(&r->lock, NULL);
    pthread_cond_init(&r->wake, NULL);
    r->started = pthread_create(&r->thread, NULL, reload_main, r) == 0;
    if (!r->started) {
        pthread_cond_destroy(&r->wake);
        pthread_mutex_destroy(&r->lock);
        for (int m = 0; m < r->n; m++)
            free(r->slots[m].path);
        free(r);
        return pps_err_set(err, PPS_EIO, "cannot start the thread that follows the run");
    }
    *out = r;
    return 0;
}

int pps__tui_reloader_take(struct pps__tui_reloader *r, int m, struct pps_tui_model *fresh,
                           struct pps_err *err)
{
    int got = 0;

    if (!r || m < 0 || m >= r->n)
        return 0;
    pthread_mutex_lock(&r->lock);
    if (r->slots[m].have_ready) {
        *fresh = r->slots[m].ready;
        memset(&r->slots[m].ready, 0, sizeof(r->slots[m].ready));
        r->slots[m].have_ready = 0;
        got = 1;
    } else if (r->slots[m].err.code) {
        if (err)
            *err = r->slots[m].err;
        r->slots[m].err.code = 0;
    }
    pthread_mutex_unlock(&r->lock);
    return got;
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
        pthread_cond_destroy(&r->wake);
        pthread_mutex_destroy(&r->lock);
    }
    for (int m = 0; m < r->n; m++) {
        if (r->slots[m].have_ready)
            pps__tui_model_release(&r->slots[m].ready);
        free(r->slots[m].path);
    }
    free(r);
}
