/*
 * run_mpi.c - the MPI driver: this process is one stage of the run (rank = stage) in a job of
 * exactly p ranks, launched by mpirun or srun.
 *
 * Errors of the configuration are found the same way on every rank (the checks are
 * deterministic, and the one that is not, whether OUT exists, is made by rank 0 and broadcast),
 * so every rank returns the same error and the job ends cleanly, MPI finalised. A failure of one
 * rank alone (out of memory, a tracer that cannot open, a stage that fails while running) cannot
 * be met that way, since the others wait for it inside MPI calls: that rank calls the
 * transport's abort, which says who failed and why and ends the whole job (transport.h).
 */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pps_config.h"
#include "pps_hash.h"
#include "run_int.h"

#ifdef PPS_HAVE_MPI

#include <mpi.h>

/* Starts MPI if no one has; *we_did says whether pps_run must finalise it. */
static int mpi_up(int *we_did, struct pps_err *err)
{
    int inited = 0, finalized = 0, provided = 0;

    *we_did = 0;
    if (MPI_Finalized(&finalized) != MPI_SUCCESS || finalized)
        return pps_err_set(err, PPS_EINVAL, "MPI was already finalised in this process");
    if (MPI_Initialized(&inited) != MPI_SUCCESS)
        return pps_err_set(err, PPS_EIO, "MPI_Initialized failed");
    if (inited)
        return 0;
    if (MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
        return pps_err_set(err, PPS_EIO, "MPI_Init_thread failed");
    *we_did = 1;
    return 0;
}

/* A failure of this rank alone: tell the job (does not return when the abort works). */
static int rank_failed(struct pps_transport *t, int rc, const struct pps_err *err)
{
    const char *why = err && err->msg[0] ? err->msg : "failed";

    if (t)
        (void)t->ops->abort(t, why);
    fprintf(stderr, "ppscope: rank failed: %s; aborting the MPI job\n", why);
    MPI_Abort(MPI_COMM_WORLD, 1);
    return rc;
}

/* A rank other than 0 sends chunk ch's gradients: a header (count, loss sum), then the
 * values, with kind CTRL, the chunk's virtual stage, and iterations 0 and 1. */
static int send_grads(struct pps_transport *t, struct pps_compute *ch, struct pps_err *err)
{
    struct pps_msg_tag head = {PPS_MSG_CTRL, 0, 0, ch->vstage};
    struct pps_msg_tag body = {PPS_MSG_CTRL, 1, 0, ch->vstage};
    float *g = NULL;
    size_t n = 0;
    double h[2];
    int rc = ch->ops->export_grads(ch, NULL, &n, err);

    if (rc)
        return rc;
    g = malloc((n ? n : 1) * sizeof(float));
    if (!g)
        return pps_err_set(err, PPS_ENOMEM, "out of memory for %zu gradients", n);
    rc = ch->ops->export_grads(ch, g, &n, err);
    h[0] = (double)n;
    h[1] = ch->last ? ch->ops->loss_sum(ch) : 0;
    if (!rc)
        rc = t->ops->send(t, 0, &head, h, sizeof(h), err);
    if (!rc)
        rc = t->ops->send(t, 0, &body, g, n * sizeof(float), err);
    free(g);
    return rc;
}

/* Rank 0 appends virtual stage vs's gradients to *all (its own chunk's, or those its owner
 * sends), and its loss sum to *loss_sum when it is the last. */
static int take_grads(const struct pps__run_sched *rs, struct pps_transport *t,
                      struct pps_compute **chunks, int vs, float **all, size_t *total,
                      double *loss_sum, struct pps_err *err)
{
    struct pps_msg_tag head = {PPS_MSG_CTRL, 0, 0, vs}, body = {PPS_MSG_CTRL, 1, 0, vs};
    int owner = pps_place_stage(rs->sched.placement, rs->p, vs);
    struct pps_compute *ch =
        owner == 0 ? chunks[pps_place_chunk(rs->sched.placement, rs->p, vs)] : NULL;
    double h[2] = {0, 0};
    size_t n = 0;
    float *grow;
    int rc;

    if (ch) {
        rc = ch->ops->export_grads(ch, NULL, &n, err);
        h[1] = ch->last ? ch->ops->loss_sum(ch) : 0;
    } else {
        rc = t->ops->recv(t, owner, &head, h, sizeof(h), err);
        n = (size_t)h[0];
    }
    if (rc)
        return rc;
    grow = realloc(*all, (*total + n + 1) * sizeof(float));
    if (!grow)
        return pps_err_set(err, PPS_ENOMEM, "out of memory for the gradients");
    *all = grow;
    if (ch)
        rc = ch->ops->export_grads(ch, *all + *total, &n, err);
    else
        rc = t->ops->recv(t, owner, &body, *all + *total, n * sizeof(float), err);
    *total += n;
    if (vs == rs->nvs - 1)
        *loss_sum = h[1];
    return rc;
}

/* Rank 0 gathers every chunk's gradients in virtual-stage order and compares them with the
 * reference; the verdict is then summed to every rank, so all exit alike. */
static int check_grads(const struct pps__run_sched *rs, struct pps_transport *t,
                       struct pps_compute **chunks, struct pps_run_outcome *o, struct pps_err *err)
{
    int stage = t->stage, rc = 0;
    float *all = NULL;
    size_t total = 0;
    double loss_sum = 0, verdict[3] = {0, 0, 0};

    if (stage == 0) {
        for (int vs = 0; vs < rs->nvs && !rc; vs++)
            rc = take_grads(rs, t, chunks, vs, &all, &total, &loss_sum, err);
        if (!rc)
            rc = pps__run_compare_grads(rs, all, total, loss_sum, o, err);
        verdict[0] = o->grads_equal;
        verdict[1] = (double)o->first_diff;
        verdict[2] = o->loss_equal;
    } else {
        for (int c = 0; c < rs->v && !rc; c++)
            rc = send_grads(t, chunks[c], err);
    }
    free(all);
    if (!rc)
        rc = t->ops->allreduce_sum(t, verdict, 3, err);
    if (rc)
        return rank_failed(t, rc, err);
    if (stage != 0) {
        o->grads_checked = 1;
        o->grads_equal = verdict[0] != 0;
        o->first_diff = (long)verdict[1];
        o->loss_equal = verdict[2] != 0;
    }
    return 0;
}

/*
 * Closes this rank's tracer (collective: the closing clock sync) and sums what every rank's
 * tracer could not write (a full disk): when any rank lost spans, every rank returns the same
 * PPS_EIO, whose line (pps__run_loss_error) names the run's totals and the reason of the lowest
 * rank that lost them; training went on, the run's end is where it is told. A close error that
 * lost no spans is this rank's line on stderr, as before. Collective over MPI_COMM_WORLD.
 */
static int close_tracer(struct pps_tracer **tr, int rank, const char *dir, int iters,
                        struct pps_err *err)
{
    struct pps_err terr = {0, ""};
    struct pps_trace_stats ts;
    struct pps__run_loss loss = {.first = -1, .last = -1};
    /* Summed as doubles (exact below 2^53 spans); the iterations by MPI_MIN of their values and
     * their negations; the lowest rank that lost spans, by MPI_MIN. */
    double counts[2], sums[2];
    int mine[3], all[3];
    char why[sizeof(terr.msg)];

    (void)pps_trace_flush(*tr, NULL); /* its error is close's too */
    pps_trace_stats(*tr, &ts);
    if (pps_trace_close(*tr, &terr) && !ts.unwritten)
        fprintf(stderr, "ppscope run: rank %d: %s\n", rank, terr.msg);
    *tr = NULL;
    counts[0] = (double)ts.written;
    counts[1] = (double)ts.unwritten;
    mine[0] = ts.unwritten_first_iter >= 0 ? ts.unwritten_first_iter : INT_MAX;
    mine[1] = -ts.unwritten_last_iter;
    mine[2] = ts.unwritten ? rank : INT_MAX;
    if (MPI_Allreduce(counts, sums, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD) != MPI_SUCCESS ||
        MPI_Allreduce(mine, all, 3, MPI_INT, MPI_MIN, MPI_COMM_WORLD) != MPI_SUCCESS)
        return pps_err_set(err, PPS_EIO, "MPI_Allreduce failed summing the tracers' losses");
    if (sums[1] == 0)
        return 0;
    snprintf(why, sizeof(why), "%s", terr.msg);
    if (MPI_Bcast(why, (int)sizeof(why), MPI_CHAR, all[2], MPI_COMM_WORLD) != MPI_SUCCESS)
        return pps_err_set(err, PPS_EIO, "MPI_Bcast failed sharing a tracer's loss");
    why[sizeof(why) - 1] = '\0';
    loss.written = (uint64_t)sums[0];
    loss.unwritten = (uint64_t)sums[1];
    loss.first = all[0] == INT_MAX ? -1 : all[0];
    loss.last = all[0] == INT_MAX ? -1 : -all[1];
    return pps__run_loss_error(&loss, dir, iters, why, err);
}

/* The schedule's shape and lists, hashed field by field (struct padding is no part of it). */
static uint64_t sched_hash(const struct pps_schedule *sc)
{
    int shape[4] = {sc->p, sc->m, sc->v, sc->placement};
    uint64_t h = pps_fnv1a_more(PPS_FNV_OFFSET, shape, sizeof(shape));

    for (size_t i = 0; i < sc->start[sc->p]; i++) {
        uint32_t a[3] = {sc->actions[i].op, sc->actions[i].chunk, sc->actions[i].mb};

        h = pps_fnv1a_more(h, a, sizeof(a));
    }
    for (int s = 0; s <= sc->p; s++) {
        uint64_t at = sc->start[s];

        h = pps_fnv1a_more(h, &at, sizeof(at));
    }
    return h;
}

/*
 * A custom schedule is read from a file by every rank, each from its own path: on hosts that
 * hold different copies the ranks would run different orders (and deadlock, or compute other
 * gradients). Every rank compares its schedule with rank 0's; all refuse alike, naming the first
 * rank that differs. Collective.
 */
static int same_custom_everywhere(const struct pps__run_sched *rs, int rank, struct pps_err *err)
{
    uint64_t mine = sched_hash(&rs->sched), first = mine;
    int differs, lowest = INT_MAX;

    if (MPI_Bcast(&first, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD) != MPI_SUCCESS)
        return pps_err_set(err, PPS_EIO, "MPI_Bcast failed");
    differs = mine != first ? rank : INT_MAX;
    if (MPI_Allreduce(&differs, &lowest, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD) != MPI_SUCCESS)
        return pps_err_set(err, PPS_EIO, "MPI_Allreduce failed");
    if (lowest != INT_MAX)
        return pps_err_set(err, PPS_EINVAL,
                           "%s: rank %d read another schedule than rank 0 (every rank reads the "
                           "file from its own path: give each the same file)",
                           rs->cfg->custom_file ? rs->cfg->custom_file : "the schedule file",
                           lowest);
    return 0;
}

/* Puts the NCCL transport on the MPI one (*t, which it takes), on this rank's GPU (its place among
 * its node's ranks, modulo the node's GPUs), and has the kernels open theirs on the same one. */
static int nccl_up(struct pps_transport **t, struct pps_err *err)
{
    MPI_Comm node;
    int local = 0, device = 0, rc;
    char buf[16];

    if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) ==
        MPI_SUCCESS) {
        if (MPI_Comm_rank(node, &local) != MPI_SUCCESS)
            local = 0;
        MPI_Comm_free(&node);
    }
    rc = pps_transport_nccl_new(*t, local, &device, t, err);
    if (rc)
        return rc;
    snprintf(buf, sizeof(buf), "%d", device);
    if (setenv("PPS_CUDA_DEVICE", buf, 1) != 0)
        return pps_err_set(err, PPS_ENOMEM, "out of memory for PPS_CUDA_DEVICE");
    return 0;
}

static int run_one(const struct pps_run_config *c, int kind, int rank, struct pps_run_outcome *o,
                   struct pps_err *err)
{
    struct pps__run_sched rs;
    struct pps_transport *t = NULL;
    struct pps_compute *chunks[64] = {NULL};
    struct pps_tracer *tr = NULL;
    struct pps_exec_config ec;
    struct pps_exec_result er;
    double shared[2];
    int rc;

    rc = pps__run_sched_prepare(&rs, c, kind, err);
    if (!rc && rs.v > (int)(sizeof(chunks) / sizeof(chunks[0])))
        rc = pps_err_set(err, PPS_EINVAL, "v=%d: at most %d chunks per stage under MPI", rs.v,
                         (int)(sizeof(chunks) / sizeof(chunks[0])));
    if (rc)
        goto out; /* the same on every rank */
    /* One run, one id: every rank writes rank 0's (readers refuse shards of two runs). */
    if (MPI_Bcast(rs.run_id, (int)sizeof(rs.run_id), MPI_CHAR, 0, MPI_COMM_WORLD) != MPI_SUCCESS) {
        rc = pps_err_set(err, PPS_EIO, "MPI_Bcast failed");
        goto out;
    }
    if (kind == PPS_RUN_CUSTOM && (rc = same_custom_everywhere(&rs, rank, err)))
        goto out; /* the same on every rank */
    o->kind = kind;
    snprintf(o->dir, sizeof(o->dir), "%s", rs.dir);
    rc = pps_transport_mpi_new(NULL, rs.m, rs.nvs, &t, err);
    if (rc)
        goto out; /* collective: the tag-size check is the same on every rank */
    if (c->transport == PPS_TRANSPORT_NCCL && (rc = nccl_up(&t, err))) {
        /* No NCCL library or no GPU: the same on every rank. Anything else may be this rank's
         * alone, with the others waiting for it in NCCL's set-up: end the job. */
        if (rc != PPS_ENOENT)
            rc = rank_failed(t, rc, err);
        goto out;
    }
    rc = pps__run_transport_wrap(&rs, &t, err);
    if (!rc)
        rc = pps__run_chunks_new(&rs, rank, chunks, err);
    if (!rc)
        rc = pps__run_tracer_open(&rs, rank, 1, t->ops->name, &tr, err);
    if (!rc)
        rc = pps__run_chunks_trace(&rs, rank, chunks, tr, err);
    if (rc) {
        rc = rank_failed(t, rc, err);
        goto out;
    }
    pps__run_exec_config(&rs, rank, t, tr, chunks, &ec);
    rc = pps_executor_run(&ec, &er, err); /* on failure the executor has aborted the job */
    if (rc)
        goto out;
    rc = close_tracer(&tr, rank, rs.dir, c->iters, err);
    if (rc)
        goto out; /* every rank has the same error: rank 0 says it */
    o->wall_ns = (double)(er.t_end_ns - er.t_start_ns);
    o->steps = er.steps;
    o->skips = er.skips;
    o->clips = er.clips;
    o->rollbacks = er.rollbacks;
    o->reruns = er.reruns;
    /* The loss lives on the last virtual stage's rank; every rank gets it. */
    shared[0] = rank == pps__run_loss_stage(&rs) ? er.loss : 0;
    shared[1] = 0;
    rc = t->ops->allreduce_sum(t, shared, 2, err);
    if (rc) {
        rc = rank_failed(t, rc, err);
        goto out;
    }
    o->loss = shared[0];
    if (c->check_grads)
        rc = check_grads(&rs, t, chunks, o, err);
out:
    if (tr) /* a failed run's shard is closed incomplete (run.h); its failure says more */
        (void)pps_trace_close_incomplete(tr, NULL);
    pps__run_chunks_free(chunks, rs.v);
    if (t)
        t->ops->free(t);
    pps__run_sched_release(&rs);
    return rc;
}

int pps__run_mpi(const struct pps_run_config *c, struct pps_run_result *res, struct pps_err *err)
{
    int we_did = 0, rank = 0, world = 0, rc, code = 0;

    rc = mpi_up(&we_did, err);
    if (rc)
        return rc;
    if (MPI_Comm_rank(MPI_COMM_WORLD, &rank) != MPI_SUCCESS ||
        MPI_Comm_size(MPI_COMM_WORLD, &world) != MPI_SUCCESS) {
        rc = pps_err_set(err, PPS_EIO, "cannot read this rank's place in MPI_COMM_WORLD");
        goto out;
    }
    res->rank = rank;
    res->world = world;
    if (world != c->p) {
        rc = pps_err_set(err, PPS_EINVAL,
                         "the launcher started %d rank%s, but p=%d: run one rank per stage "
                         "(mpirun -np %d)",
                         world, world == 1 ? "" : "s", c->p, c->p);
        goto out;
    }
    if (rank == 0)
        code = pps__run_out_check(c->trace ? c->out : NULL, err);
    if (MPI_Bcast(&code, 1, MPI_INT, 0, MPI_COMM_WORLD) != MPI_SUCCESS) {
        rc = pps_err_set(err, PPS_EIO, "MPI_Bcast failed");
        goto out;
    }
    if (code) {
        rc = rank == 0 ? code : pps_err_set(err, code, "rank 0 refused the run directory");
        goto out;
    }
    for (int i = 0; i < c->n_kinds && !rc; i++) {
        rc = run_one(c, c->kinds[i], rank, &res->outcomes[i], err);
        res->n = i + 1;
    }
out:
    res->mpi_finalize = we_did;
    return rc;
}

void pps__run_mpi_finalize(void)
{
    int up = 0, down = 0;
    if (MPI_Initialized(&up) != MPI_SUCCESS || !up || MPI_Finalized(&down) != MPI_SUCCESS || down)
        return;
    (void)MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
}

#else /* !PPS_HAVE_MPI */

int pps__run_mpi(const struct pps_run_config *c, struct pps_run_result *res, struct pps_err *err)
{
    return pps_err_set(err, PPS_EINVAL,
                       "--transport mpi: ppscope was built without MPI (configure with "
                       "-DPPS_WITH_MPI=ON and an MPI installed)");
}

void pps__run_mpi_finalize(void)
{
}
#endif
