/*
 * gz_ahead.c - zlib reads a few chunks ahead of the parse, in a thread of its own (gz_ahead.h).
 *
 * A ring of SLOTS chunks: the thread fills the free ones in order and stops at the end of the
 * data or at an error (which travels in the slot, after the data before it); the reader empties
 * them in the same order. Without a thread (pthread_create failed) the reader reads itself.
 */
#include "gz_ahead.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#define SLOTS 3

struct slot {
    char *data;
    long n;         /* bytes, 0 at the end, -1 on failure */
    int zerr, sys;  /* with n <= 0: zlib's error code, errno's value */
    char why[128];  /* with n <= 0: zlib's words */
    int64_t offset; /* gzoffset after this chunk */
};

struct pps__gzahead {
    gzFile gz;
    struct slot slot[SLOTS];
    size_t head, tail; /* the reader takes slot[head % SLOTS]; the thread fills slot[tail % ...] */
    int threaded, stop, done;
    int64_t offset; /* of what was handed over */
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t filled, emptied;
};

/* One chunk into s, as gzread gives it, with the error or the end said. */
static void read_chunk(gzFile gz, struct slot *s)
{
    const char *why;
    int zerr = Z_OK;

    errno = 0;
    s->n = gzread(gz, s->data, PPS__GZAHEAD_CHUNK);
    s->sys = errno;
    s->zerr = Z_OK;
    s->why[0] = '\0';
    if (s->n <= 0) {
        why = gzerror(gz, &zerr);
        s->zerr = zerr;
        snprintf(s->why, sizeof(s->why), "%s", why ? why : "");
        if (s->n == 0 && zerr != Z_BUF_ERROR)
            s->zerr = Z_OK;
    }
    {
        z_off_t off = gzoffset(gz);
        s->offset = off < 0 ? 0 : (int64_t)off;
    }
}

static void *ahead_main(void *arg)
{
    struct pps__gzahead *g = arg;

    pthread_mutex_lock(&g->lock);
    while (!g->stop && !g->done) {
        if (g->tail - g->head == SLOTS) {
            pthread_cond_wait(&g->emptied, &g->lock);
            continue;
        }
        struct slot *s = &g->slot[g->tail % SLOTS];
        /* The slot is the thread's until tail moves past it: read without the lock. */
        pthread_mutex_unlock(&g->lock);
        read_chunk(g->gz, s);
        pthread_mutex_lock(&g->lock);
        g->tail++;
        g->done = s->n <= 0;
        pthread_cond_signal(&g->filled);
    }
    pthread_mutex_unlock(&g->lock);
    return NULL;
}

int pps__gzahead_open(const char *path, struct pps__gzahead **out, struct pps_err *err)
{
    struct pps__gzahead *g = calloc(1, sizeof(*g));

    *out = NULL;
    if (!g)
        return pps_err_set(err, PPS_ENOMEM, "%s: out of memory", path);
    for (int i = 0; i < SLOTS; i++)
        if (!(g->slot[i].data = malloc(PPS__GZAHEAD_CHUNK))) {
            pps__gzahead_close(g);
            return pps_err_set(err, PPS_ENOMEM, "%s: out of memory", path);
        }
    errno = 0;
    if (!(g->gz = gzopen(path, "rb"))) {
        int e = errno;
        pps__gzahead_close(g);
        return pps_err_set(err, e == ENOMEM ? PPS_ENOMEM : PPS_EIO, "%s: cannot open (%s)", path,
                           e ? strerror(e) : "zlib");
    }
    gzbuffer(g->gz, 1u << 17);
    pthread_mutex_init(&g->lock, NULL);
    pthread_cond_init(&g->filled, NULL);
    pthread_cond_init(&g->emptied, NULL);
    g->threaded = pthread_create(&g->thread, NULL, ahead_main, g) == 0;
    *out = g;
    return 0;
}

long pps__gzahead_read(struct pps__gzahead *g, char *buf, int *zerr, int *sys, char *why,
                       size_t why_len)
{
    struct slot *s = &g->slot[g->head % SLOTS];
    long n;

    if (!g->threaded) {
        read_chunk(g->gz, s);
    } else {
        pthread_mutex_lock(&g->lock);
        while (g->tail == g->head)
            pthread_cond_wait(&g->filled, &g->lock);
        pthread_mutex_unlock(&g->lock);
    }
    n = s->n;
    if (n > 0)
        memcpy(buf, s->data, (size_t)n);
    *zerr = s->zerr;
    *sys = s->sys;
    snprintf(why, why_len, "%s", s->why);
    g->offset = s->offset;
    if (n <= 0) /* the end stays the end: the thread has stopped, and this slot says it again */
        return n;
    if (g->threaded) {
        pthread_mutex_lock(&g->lock);
        g->head++;
        pthread_cond_signal(&g->emptied);
        pthread_mutex_unlock(&g->lock);
    }
    return n;
}

int64_t pps__gzahead_offset(const struct pps__gzahead *g)
{
    return g->offset;
}

void pps__gzahead_close(struct pps__gzahead *g)
{
    if (!g)
        return;
    if (g->threaded) {
        pthread_mutex_lock(&g->lock);
        g->stop = 1;
        pthread_cond_signal(&g->emptied);
        pthread_mutex_unlock(&g->lock);
        pthread_join(g->thread, NULL);
    }
    if (g->gz) {
        pthread_mutex_destroy(&g->lock);
        pthread_cond_destroy(&g->filled);
        pthread_cond_destroy(&g->emptied);
        gzclose(g->gz);
    }
    for (int i = 0; i < SLOTS; i++)
        free(g->slot[i].data);
    free(g);
}
