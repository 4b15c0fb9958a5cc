/*
 * run_threads.c - the threads driver: every stage of a schedule's run is a thread of this
 * process, with its own chunks, transport endpoint and tracer (shard "rank-0000S.db").
 *
 * The driver builds everything before the first thread starts, so that a configuration or
 * resource problem stops the run before any stage computes; it joins the threads, and only then
 * looks at the chunks again (the gradient check, the parameters) and closes the tracers.
 */
#include <math.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <pthread.h>

#include "host.h"
#include "run_int.h"

struct stage_thread {
    pthread_t th;
    struct pps_exec_config ec;
    struct pps_exec_result res;
    struct pps_err err;
    int rc;
    _Atomic int finished; /* set as the thread's last act: the driver waits for every one */
};

static void *stage_main(void *arg)
{
    struct stage_thread *st = arg;

    st->rc = pps_executor_run(&st->ec, &st->res, &st->err);
    atomic_store_explicit(&st->finished, 1, memory_order_release);
    return NULL;
}

/* ---- stopping on SIGTERM / SIGINT ------------------------------------------------------------ */

/*
 * A threads run that is asked to stop (SIGTERM, SIGINT) stops cleanly: the driver aborts the
 * stages as a failed stage would, and the tracers are closed incomplete with every span recorded
 * so far written. The handler only notes the signal (any thread may take it: BLAS has its own);
 * the driver, waiting for its stages, looks every few milliseconds.
 */
static volatile sig_atomic_t stop_signal;

static void on_stop_signal(int sig)
{
    stop_signal = sig;
}

struct stop_handlers {
    struct sigaction term, intr, hup;
};

static void stop_handlers_set(struct stop_handlers *old)
{
    struct sigaction sa;

    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    stop_signal = 0;
    sigaction(SIGTERM, &sa, &old->term);
    sigaction(SIGINT, &sa, &old->intr);
    /* A closed terminal (ssh dropped) asks the same as a kill: SIGHUP's default would leave the
     * shards unclosed and say nothing. */
    sigaction(SIGHUP, &sa, &old->hup);
}

static const char *stop_name(int sig)
{
    return sig == SIGINT ? "SIGINT" : sig == SIGHUP ? "SIGHUP" : "SIGTERM";
}

/* Puts the program's handlers back. */
static void stop_handlers_restore(const struct stop_handlers *old)
{
    sigaction(SIGTERM, &old->term, NULL);
    sigaction(SIGINT, &old->intr, NULL);
    sigaction(SIGHUP, &old->hup, NULL);
}

/* Joins the n stage threads; aborts them when a stop signal comes first. Returns that signal,
 * or 0. */
static int wait_stages(struct stage_thread *st, int n, struct pps_transport_threads *hub)
{
    const struct timespec tick = {0, 5 * 1000 * 1000};
    int sig = 0;

    for (;;) {
        int done = 1;

        for (int s = 0; s < n && done; s++)
            done = atomic_load_explicit(&st[s].finished, memory_order_acquire);
        if (done)
            break;
        if (!sig && stop_signal) {
            sig = stop_signal;
            (void)pps_transport_threads_abort(hub, -1,
                                              sig == SIGINT   ? "stopped by SIGINT"
                                              : sig == SIGHUP ? "stopped by SIGHUP"
                                                              : "stopped by SIGTERM");
        }
        nanosleep(&tick, NULL);
    }
    for (int s = 0; s < n; s++)
        pthread_join(st[s].th, NULL);
    return sig;
}

/* The chunk of virtual stage vs among every stage's (chunks[stage * v + chunk]). */
static struct pps_compute *chunk_of(const struct pps__run_sched *rs, struct pps_compute **chunks,
                                    int vs)
{
    int pl = rs->sched.placement;

    return chunks[pps_place_stage(pl, rs->p, vs) * rs->v + pps_place_chunk(pl, rs->p, vs)];
}

/* Every chunk's export (grads or params) concatenated in virtual-stage order into *out. */
static int gather(const struct pps__run_sched *rs, struct pps_compute **chunks, int grads,
                  float **out, size_t *n_out, struct pps_err *err)
{
    size_t total = 0, n;
    float *buf;
    int rc = 0;

    *out = NULL;
    *n_out = 0;
    for (int vs = 0; vs < rs->nvs && !rc; vs++) {
        struct pps_compute *ch = chunk_of(rs, chunks, vs);
        rc = grads ? ch->ops->export_grads(ch, NULL, &n, err)
                   : ch->ops->export_params(ch, NULL, &n, err);
        total += n;
    }
    if (rc)
        return rc;
    buf = malloc((total ? total : 1) * sizeof(float));
    if (!buf)
        return pps_err_set(err, PPS_ENOMEM, "out of memory for %zu exported values", total);
    total = 0;
    for (int vs = 0; vs < rs->nvs && !rc; vs++) {
        struct pps_compute *ch = chunk_of(rs, chunks, vs);
        rc = grads ? ch->ops->export_grads(ch, buf + total, &n, err)
                   : ch->ops->export_params(ch, buf + total, &n, err);
        total += n;
    }
    if (rc) {
        free(buf);
        return rc;
    }
    *out = buf;
    *n_out = total;
    return 0;
}

/* The error to report from the stages: the one that failed first on its own (not the others'
 * PPS_EPEER about it), named by its stage. */
static int stage_error(struct stage_thread *st, int p, struct pps_err *err)
{
    int pick = -1;

    for (int s = 0; s < p && pick < 0; s++)
        if (st[s].rc && st[s].rc != PPS_EPEER)
            pick = s;
    if (pick >= 0)
        return pps_err_set(err, st[pick].rc, "stage %d failed: %s", pick, st[pick].err.msg);
    for (int s = 0; s < p; s++)
        if (st[s].rc)
            return pps_err_set(err, st[s].rc, "%s", st[s].err.msg);
    return 0;
}

/* After the threads: the gradient check, the parameters, the timing. */
static int finish(const struct pps__run_sched *rs, struct pps_compute **chunks,
                  struct stage_thread *st, struct pps_run_outcome *o, struct pps_err *err)
{
    const struct pps_run_config *c = rs->cfg;
    int64_t t0 = st[0].res.t_start_ns, t1 = st[0].res.t_end_ns;
    int rc = 0;

    for (int s = 0; s < rs->p; s++) {
        t0 = st[s].res.t_start_ns < t0 ? st[s].res.t_start_ns : t0;
        t1 = st[s].res.t_end_ns > t1 ? st[s].res.t_end_ns : t1;
    }
    o->wall_ns = (double)(t1 - t0);
    o->loss = st[pps__run_loss_stage(rs)].res.loss;
    o->steps = st[0].res.steps;
    o->skips = st[0].res.skips;
    o->clips = st[0].res.clips;
    o->rollbacks = st[0].res.rollbacks;
    o->reruns = st[0].res.reruns;
    if (c->check_grads) {
        float *g = NULL;
        size_t n = 0;
        struct pps_compute *lastc = chunk_of(rs, chunks, rs->nvs - 1);
        rc = gather(rs, chunks, 1, &g, &n, err);
        if (!rc)
            rc = pps__run_compare_grads(rs, g, n, lastc->ops->loss_sum(lastc), o, err);
        free(g);
    }
    if (!rc && c->keep_params)
        rc = gather(rs, chunks, 0, &o->params, &o->n_params, err);
    return rc;
}

/*
 * Closes the p tracers (NULL entries skipped), the first n_complete of them complete and the
 * rest incomplete (run.h: a failed run's shards get no complete mark), after a last flush whose
 * figures go into *loss. Returns 0, or the first close error, with its reason in *first.
 */
static int close_tracers(struct pps_tracer **tr, int n_complete, int p, struct pps__run_loss *loss,
                         struct pps_err *first)
{
    int rc = 0;

    for (int s = 0; s < p; s++) {
        struct pps_err terr = {0, ""};
        struct pps_trace_stats ts;
        int crc;

        if (!tr[s])
            continue;
        (void)pps_trace_flush(tr[s], NULL); /* its error is close's too */
        pps_trace_stats(tr[s], &ts);
        pps__run_loss_add(loss, &ts);
        crc = s < n_complete ? pps_trace_close(tr[s], &terr)
                             : pps_trace_close_incomplete(tr[s], &terr);
        tr[s] = NULL;
        if (crc && !rc) {
            rc = crc;
            *first = terr;
        }
    }
    return rc;
}

static int run_one(const struct pps_run_config *c, int kind, struct pps_run_outcome *o,
                   struct pps_err *err)
{
    struct pps__run_sched rs;
    struct pps_transport_threads *hub = NULL;
    struct pps_transport **t = NULL;
    struct pps_compute **chunks = NULL;
    struct pps_tracer **tr = NULL;
    struct stage_thread *st = NULL;
    struct pps__run_loss loss = {.first = -1, .last = -1};
    struct stop_handlers handlers;
    struct pps_err cerr = {0, ""};
    int p = c->p, v, started = 0, rc, crc, ok = 0, sig = 0, handlers_set = 0;

    rc = pps__run_sched_prepare(&rs, c, kind, err);
    if (rc)
        goto out;
    v = rs.v;
    o->kind = kind;
    snprintf(o->dir, sizeof(o->dir), "%s", rs.dir);
    t = calloc((size_t)p, sizeof(*t));
    chunks = calloc((size_t)(p * v), sizeof(*chunks));
    tr = calloc((size_t)p, sizeof(*tr));
    st = calloc((size_t)p, sizeof(*st));
    if (!t || !chunks || !tr || !st) {
        rc = pps_err_set(err, PPS_ENOMEM, "out of memory for %d stages", p);
        goto out;
    }
    if ((rc = pps_transport_threads_new(p, &hub, err)))
        goto out;
    for (int s = 0; s < p && !rc; s++) {
        t[s] = pps_transport_threads_endpoint(hub, s);
        rc = pps__run_transport_wrap(&rs, &t[s], err);
    }
    rs.one_device = 1; /* the stages are threads of this process, on its one GPU */
    for (int s = 0; s < p && !rc; s++)
        rc = pps__run_chunks_new(&rs, s, chunks + s * v, err);
    /* From before the shards exist: a stop while they are made closes them as any stop does. */
    stop_handlers_set(&handlers);
    handlers_set = 1;
    for (int s = 0; s < p && !rc; s++)
        rc = pps__run_tracer_open(&rs, s, 0, "threads", &tr[s], err);
    for (int s = 0; s < p && !rc; s++)
        rc = pps__run_chunks_trace(&rs, s, chunks + s * v, tr[s], err);
    if (rc)
        goto out;
    /* Set up and about to start: the one moment a warning about the run is true of it. */
    if (c->warn_cores && c->backend == PPS_BACKEND_CPU && !c->check_grads && kind == c->kinds[0]) {
        int cpus = pps_host_cpus();

        if (p > cpus)
            fprintf(stderr,
                    "ppscope run: warning: %d stage threads on %d usable core%s: stages will wait "
                    "for a core (host contention), which the report measures and names; -p %d "
                    "or fewer fits this machine\n",
                    p, cpus, cpus == 1 ? "" : "s", cpus);
    }
    /* On one GPU the stages run on SM partitions of their own; where they could not (or were
     * not to, under --check-grads or --no-gpu-partition), they share it, and that changes what
     * the bubble means. */
    if (c->warn_cores && c->backend == PPS_BACKEND_CUDA && p > 1 && kind == c->kinds[0] &&
        chunks[0] && chunks[0]->device_sms == 0 && !c->check_grads)
        fprintf(stderr,
                "ppscope run: warning: the %d stages share one GPU's SMs (%s): one stage's "
                "kernels can run in another's bubble, so the measured bubble is smaller than %d "
                "GPUs would show\n",
                p, c->gpu_partition ? chunks[0]->device_part : "--no-gpu-partition", p);

    for (; started < p && !stop_signal; started++) {
        struct stage_thread *x = &st[started];
        pps__run_exec_config(&rs, started, t[started], tr[started], chunks + started * v, &x->ec);
        if (pthread_create(&x->th, NULL, stage_main, x) != 0) {
            rc = pps_err_set(err, PPS_EIO, "cannot start the thread of stage %d", started);
            pps_transport_threads_abort(hub, -1, err->msg);
            break;
        }
    }
    sig = wait_stages(st, started, hub);
    if (!sig && started < p)
        sig = stop_signal; /* stopped before every stage started */
    if (!rc && !sig)
        rc = stage_error(st, p, err);
    if (!rc && !sig)
        rc = finish(&rs, chunks, st, o, err);
    ok = rc == 0 && !sig;
out:
    crc = close_tracers(tr, ok ? p : 0, tr ? p : 0, &loss, &cerr);
    /* What the run's end says: a stop, else the run's own failure, else spans the tracers could
     * not write (training went on: here is where that is told), else a tracer's close error. */
    if (sig)
        rc = pps_err_set(err, PPS_EIO,
                         "stopped by %s: %s is incomplete: %llu spans kept, %llu dropped",
                         stop_name(sig), rs.dir, (unsigned long long)loss.written,
                         (unsigned long long)loss.dropped);
    else if (!rc && loss.unwritten)
        rc = pps__run_loss_error(&loss, rs.dir, c->iters, cerr.msg, err);
    else if (!rc && crc)
        rc = pps_err_set(err, cerr.code, "%s", cerr.msg);
    if (handlers_set)
        stop_handlers_restore(&handlers);
    for (int s = 0; chunks && s < p; s++)
        pps__run_chunks_free(chunks + s * rs.v, rs.v);
    for (int s = 0; t && s < p; s++)
        if (t[s])
            t[s]->ops->free(t[s]);
    pps_transport_threads_free(hub);
    free(st);
    free(tr);
    free(chunks);
    free(t);
    pps__run_sched_release(&rs);
    return rc;
}

int pps__run_threads(const struct pps_run_config *c, struct pps_run_result *res,
                     struct pps_err *err)
{
    int rc = 0;

    res->rank = 0;
    res->world = 1;
    for (int i = 0; i < c->n_kinds && !rc; i++) {
        rc = run_one(c, c->kinds[i], &res->outcomes[i], err);
        res->n = i + 1;
    }
    return rc;
}
