/*
 * run.c - a run's configuration (defaults and checks) and pps_run(), which picks the transport
 * and hands the run to its driver (run_threads.c, run_mpi.c).
 */
#include <stdlib.h>
#include <string.h>

#include "run_int.h"

void pps_run_config_init(struct pps_run_config *c)
{
    memset(c, 0, sizeof(*c));
    c->kinds[0] = PPS_SCHED_1F1B;
    c->n_kinds = 1;
    c->p = 4;
    c->m = 8;
    c->v = 0;
    c->backend = PPS_BACKEND_CPU;
    c->transport = PPS_TRANSPORT_AUTO;
    c->iters = 20;
    pps_model_spec_init(&c->model);
    c->trace = 1;
    c->optim_mode = PPS_OPTIM_SYNC;
    c->clip = 1.0;
    pps_emu_config_init(&c->emu);
    c->inject_nonfinite_iter = -1;
    c->fail_stage = -1;
    c->fail_iter = -1;
    c->device_spans = 1;
    c->gpu_partition = 1;
}

int pps_run_config_v(const struct pps_run_config *c, int kind)
{
    if (kind == PPS_RUN_CUSTOM)
        return c->custom ? c->custom->v : 1;
    return pps_sched_kind_v(kind, c->v);
}

int pps_run_config_placement(const struct pps_run_config *c, int kind)
{
    if (kind == PPS_RUN_CUSTOM)
        return c->custom ? c->custom->placement : PPS_PLACE_LOOP;
    return pps_sched_kind_placement(kind);
}

/* The schedule of kind can be generated for c and is valid. */
static int check_schedule(const struct pps_run_config *c, int kind, struct pps_err *err)
{
    struct pps_schedule s = PPS_SCHEDULE_INIT;
    int v = pps_run_config_v(c, kind);
    int rc = kind == PPS_RUN_CUSTOM ? 0 : pps_schedule_check_params(kind, c->p, c->m, v, err);

    if (!rc)
        rc = pps__run_schedule_make(c, kind, v, &s, err);
    if (!rc)
        rc = pps_schedule_validate(&s, NULL, err);
    pps_schedule_release(&s);
    return rc;
}

int pps_run_config_check(const struct pps_run_config *c, struct pps_err *err)
{
    int interleaved = 0, rc;

    if (c->n_kinds < 1 || c->n_kinds > PPS_RUN_MAX_SCHEDULES)
        return pps_err_set(err, PPS_EINVAL, "between 1 and %d schedules, got %d",
                           PPS_RUN_MAX_SCHEDULES, c->n_kinds);
    if (c->p < 1 || c->m < 1 || c->v < 0 || c->iters < 1)
        return pps_err_set(err, PPS_EINVAL, "p, m and iters must be >= 1 (p=%d, m=%d, iters=%d)",
                           c->p, c->m, c->iters);
    if (c->backend != PPS_BACKEND_CPU && c->backend != PPS_BACKEND_EMU &&
        c->backend != PPS_BACKEND_CUDA)
        return pps_err_set(err, PPS_EINVAL, "unknown backend %d", c->backend);
    if (c->transport == PPS_TRANSPORT_NCCL && c->backend != PPS_BACKEND_CUDA)
        return pps_err_set(
            err, PPS_EINVAL,
            "--transport nccl sends between GPUs through NCCL: it runs with --backend cuda");
    if (c->optim_mode != PPS_OPTIM_SYNC && c->optim_mode != PPS_OPTIM_POSTVAL)
        return pps_err_set(err, PPS_EINVAL, "unknown optimizer mode %d", c->optim_mode);
    for (int i = 0; i < c->n_kinds; i++) {
        if (c->kinds[i] == PPS_RUN_CUSTOM && !c->custom)
            return pps_err_set(err, PPS_EINVAL, "a custom schedule to run, and none given");
        if (c->kinds[i] == PPS_RUN_CUSTOM && (c->custom->p != c->p || c->custom->m != c->m))
            return pps_err_set(err, PPS_EINVAL,
                               "the custom schedule is of p=%d, m=%d; the run of p=%d, m=%d",
                               c->custom->p, c->custom->m, c->p, c->m);
        if ((c->kinds[i] < 0 && c->kinds[i] != PPS_RUN_CUSTOM) ||
            c->kinds[i] >= PPS_SCHED_KIND_COUNT)
            return pps_err_set(err, PPS_EINVAL, "unknown schedule kind %d", c->kinds[i]);
        for (int j = 0; j < i; j++)
            if (c->kinds[j] == c->kinds[i])
                return pps_err_set(err, PPS_EINVAL, "schedule %s is listed twice",
                                   pps_sched_kind_name(c->kinds[i]));
        interleaved |= pps_run_config_v(c, c->kinds[i]) > 1;
    }
    if (c->n_kinds == 1 && pps_run_config_placement(c, c->kinds[0]) == PPS_PLACE_V && c->v > 0 &&
        c->v != 2)
        return pps_err_set(err, PPS_EINVAL,
                           "v=%d: %s runs two chunks per stage (down the stages and back up)", c->v,
                           pps_sched_kind_name(c->kinds[0]));
    if (c->v > 1 && !interleaved)
        return pps_err_set(err, PPS_EINVAL,
                           "v=%d: only interleaved and interleaved-zb run several chunks per stage",
                           c->v);
    if (c->mem_limit < 0)
        return pps_err_set(err, PPS_EINVAL, "a memory limit of %d: >= 1, 0 for p", c->mem_limit);
    if (c->w_budget < 0)
        return pps_err_set(err, PPS_EINVAL, "a W budget of %d: the most pending W's, 0 for none",
                           c->w_budget);
    if (!(c->act_budget_mib >= 0 && c->act_budget_mib < 1e12))
        return pps_err_set(err, PPS_EINVAL, "an activation budget of %g MiB: >= 0, 0 for none",
                           c->act_budget_mib);
    if ((rc = pps_model_spec_check(&c->model, err)))
        return rc;
    for (int i = 0; i < c->n_kinds; i++) {
        int v = pps_run_config_v(c, c->kinds[i]);
        struct pps_err perr = {0, ""};
        int *fb;

        if ((rc = check_schedule(c, c->kinds[i], err)))
            return rc;
        fb = calloc((size_t)(c->p * v) + 1, sizeof(int));
        if (!fb)
            return pps_err_set(err, PPS_ENOMEM, "out of memory");
        rc = pps_model_partition(&c->model, c->p * v, c->partition, fb, &perr);
        if (rc) {
            free(fb);
            return pps_err_set(err, rc, "%s: %s%s", pps_sched_kind_name(c->kinds[i]),
                               c->partition && c->partition[0] ? "--partition: " : "", perr.msg);
        }
        for (int s = 0; s < c->p && !rc; s++) {
            int budget;
            rc = pps__run_stage_w_budget(c, c->kinds[i], c->p, v, fb, s, &budget, err);
        }
        free(fb);
        if (rc)
            return rc;
    }
    if (c->backend == PPS_BACKEND_EMU && (rc = pps_emu_config_check(&c->emu, c->p, err)))
        return rc;
    if (c->check_grads && c->backend == PPS_BACKEND_EMU)
        return pps_err_set(
            err, PPS_EINVAL,
            "the gradient check needs real math: use --backend cpu or cuda, not emu");
    if (c->inject_nonfinite_iter >= c->iters)
        return pps_err_set(err, PPS_EINVAL,
                           "cannot inject a non-finite gradient at iteration %d of %d (0..%d)",
                           c->inject_nonfinite_iter, c->iters, c->iters - 1);
    if (c->inject_nonfinite_iter >= 0) {
        for (int i = 0; i < c->n_kinds; i++)
            if (c->p * pps_run_config_v(c, c->kinds[i]) < 2)
                return pps_err_set(err, PPS_EINVAL,
                                   "injecting a non-finite gradient needs two virtual stages or "
                                   "more (p * v >= 2)");
    }
    if (c->fail_stage >= c->p || (c->fail_stage >= 0) != (c->fail_iter >= 0) ||
        c->fail_iter >= c->iters)
        return pps_err_set(err, PPS_EINVAL,
                           "an injected failure needs a stage in 0..%d and an iteration in 0..%d "
                           "(--inject-fail STAGE:ITER)",
                           c->p - 1, c->iters - 1);
    return 0;
}

/* ---- launcher ------------------------------------------------------------------------------ */

static int env_count(const char *name)
{
    const char *s = getenv(name);
    char *end;
    long v;

    if (!s || !*s)
        return -1;
    v = strtol(s, &end, 10);
    return *end || v < 0 || v > 1 << 20 ? -1 : (int)v;
}

int pps_run_launched_rank(void)
{
    int r;

    if ((r = env_count("OMPI_COMM_WORLD_RANK")) >= 0 || (r = env_count("PMI_RANK")) >= 0 ||
        (r = env_count("PMIX_RANK")) >= 0 || (r = env_count("SLURM_PROCID")) >= 0)
        return r;
    return 0;
}

int pps__run_launched_world(void)
{
    int w;

    if ((w = env_count("OMPI_COMM_WORLD_SIZE")) > 0)
        return w;
    if ((w = env_count("PMI_SIZE")) > 0)
        return w;
    if ((w = env_count("PMIX_SIZE")) > 0)
        return w;
    /* srun sets SLURM_PROCID for each task; an allocation alone (salloc) does not. */
    if (getenv("SLURM_PROCID") && (w = env_count("SLURM_NTASKS")) > 0)
        return w;
    return 1;
}

/* ---- what the tracers lost ------------------------------------------------------------------ */

void pps__run_loss_add(struct pps__run_loss *l, const struct pps_trace_stats *s)
{
    l->written += s->written;
    l->unwritten += s->unwritten;
    l->dropped += s->dropped;
    if (s->unwritten_first_iter >= 0 && (l->first < 0 || s->unwritten_first_iter < l->first))
        l->first = s->unwritten_first_iter;
    if (s->unwritten_last_iter > l->last)
        l->last = s->unwritten_last_iter;
}

int pps__run_loss_error(const struct pps__run_loss *l, const char *dir, int iters, const char *why,
                        struct pps_err *err)
{
    char range[96] = "";

    if (l->unwritten == 0)
        return 0;
    /* Training went on (the tracer never blocks it): the run's end is where the loss is told. */
    if (l->first >= 0)
        snprintf(range, sizeof(range), " (iterations %d-%d of %d, in whole or in part)", l->first,
                 l->last, iters);
    return pps_err_set(err, PPS_EIO, "%s: the tracer could not write %llu of %llu spans%s: %s", dir,
                       (unsigned long long)l->unwritten,
                       (unsigned long long)(l->written + l->unwritten), range,
                       why && *why ? why : "the trace store refused them");
}

/* ---- run ----------------------------------------------------------------------------------- */

int pps_run(const struct pps_run_config *c, struct pps_run_result *res, struct pps_err *err)
{
    int transport = c->transport, world = pps__run_launched_world(), rc;

    memset(res, 0, sizeof(*res));
    /* Until MPI says, the launcher's numbering tells which process speaks for the job. */
    res->rank = world > 1 ? pps_run_launched_rank() : 0;
    res->world = world;
    if ((rc = pps_run_config_check(c, err)))
        return rc;
    if (transport == PPS_TRANSPORT_AUTO)
        transport = world > 1 ? PPS_TRANSPORT_MPI : PPS_TRANSPORT_THREADS;
    if (transport == PPS_TRANSPORT_THREADS && world > 1)
        return pps_err_set(err, PPS_EINVAL,
                           "--transport threads runs every stage in one process, but a launcher "
                           "started %d of them: use --transport mpi, or run without the launcher",
                           world);
    if (transport == PPS_TRANSPORT_MPI || transport == PPS_TRANSPORT_NCCL) {
        snprintf(res->transport, sizeof(res->transport), "%s",
                 transport == PPS_TRANSPORT_NCCL ? "nccl" : "mpi");
        return pps__run_mpi(c, res, err);
    }
    snprintf(res->transport, sizeof(res->transport), "threads");
    res->rank = 0;
    if ((rc = pps__run_out_check(c->trace ? c->out : NULL, err)))
        return rc;
    return pps__run_threads(c, res, err);
}

void pps_run_result_release(struct pps_run_result *res)
{
    if (res->mpi_finalize) {
        pps__run_mpi_finalize();
        res->mpi_finalize = 0;
    }
    for (int i = 0; i < PPS_RUN_MAX_SCHEDULES; i++) {
        free(res->outcomes[i].params);
        res->outcomes[i].params = NULL;
    }
}

const char *pps_run_kernels_backend(int backend)
{
    return backend == PPS_BACKEND_CUDA ? "cuda" : backend == PPS_BACKEND_CPU ? "cpu" : NULL;
}
