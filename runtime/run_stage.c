/*
 * run_stage.c - the pieces of a run that every driver (threads, MPI) builds the same way: one
 * schedule's setup, a stage's chunks, tracer (with the run's metadata) and link model, and the
 * executor's config. The gradient check is run_grads.c's.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <dirent.h>

#include "kernels.h"
#include "host.h"
#include "pps_run_id.h"
#include "run_int.h"

/* ---- one schedule's setup ------------------------------------------------------------------ */

int pps__run_sched_prepare(struct pps__run_sched *rs, const struct pps_run_config *c, int kind,
                           struct pps_err *err)
{
    struct pps_sched_fault fault;
    size_t used = 0;
    int rc;

    memset(rs, 0, sizeof(*rs));
    rs->sched = (struct pps_schedule)PPS_SCHEDULE_INIT;
    rs->cfg = c;
    rs->kind = kind;
    rs->p = c->p;
    rs->m = c->m;
    rs->v = pps_run_config_v(c, kind);
    rs->nvs = rs->p * rs->v;
    pps_run_id_new(rs->run_id);
    rc = pps__run_schedule_make(c, kind, rs->v, &rs->sched, err);
    if (!rc)
        rc = pps_schedule_validate(&rs->sched, &fault, err);
    if (rc)
        return rc;
    rs->first_block = calloc((size_t)rs->nvs + 1, sizeof(int));
    if (!rs->first_block)
        return pps_err_set(err, PPS_ENOMEM, "out of memory for the partition");
    rc = pps_model_partition(&c->model, rs->nvs, c->partition, rs->first_block, err);
    if (rc)
        return rc;
    for (int k = 0; k < rs->nvs && used < sizeof(rs->partition); k++)
        used += (size_t)snprintf(rs->partition + used, sizeof(rs->partition) - used, "%s%d",
                                 k ? "," : "", rs->first_block[k + 1] - rs->first_block[k]);
    if (c->backend != PPS_BACKEND_EMU) {
        rc = pps_model_data_new(&c->model, &rs->data, err);
        if (rc)
            return rc;
    }
    if (c->out && c->trace) {
        int n = c->n_kinds > 1
                    ? snprintf(rs->dir, sizeof(rs->dir), "%s/%s", c->out, pps_sched_kind_name(kind))
                    : snprintf(rs->dir, sizeof(rs->dir), "%s", c->out);
        if (n < 0 || (size_t)n >= sizeof(rs->dir))
            return pps_err_set(err, PPS_EINVAL, "%s: the run directory's name is too long", c->out);
    }
    return 0;
}

void pps__run_sched_release(struct pps__run_sched *rs)
{
    pps_schedule_release(&rs->sched);
    free(rs->first_block);
    rs->first_block = NULL;
    pps_model_data_free(rs->data);
    rs->data = NULL;
}

int pps__run_out_check(const char *out, struct pps_err *err)
{
    struct stat st;
    DIR *d;
    struct dirent *e;
    int empty = 1;

    if (!out)
        return 0;
    if (stat(out, &st) != 0)
        return errno == ENOENT ? 0 : pps_err_set(err, PPS_EINVAL, "%s: %s", out, strerror(errno));
    if (!S_ISDIR(st.st_mode))
        return pps_err_set(err, PPS_EINVAL, "%s: exists and is not a directory", out);
    d = opendir(out);
    if (!d)
        return pps_err_set(err, PPS_EINVAL, "%s: %s", out, strerror(errno));
    while (empty && (e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            empty = 0;
    closedir(d);
    if (!empty)
        return pps_err_set(err, PPS_EINVAL,
                           "%s: already exists (ppscope never overwrites a run; pick another "
                           "--out)",
                           out);
    return 0;
}

/* ---- chunks -------------------------------------------------------------------------------- */

void pps__run_chunks_free(struct pps_compute **chunks, int v)
{
    for (int c = 0; c < v; c++) {
        if (chunks[c]) {
            free(chunks[c]->layer_names);
            chunks[c]->ops->free(chunks[c]);
        }
        chunks[c] = NULL;
    }
}

int pps__run_chunks_trace(const struct pps__run_sched *rs, int stage, struct pps_compute **chunks,
                          struct pps_tracer *tracer, struct pps_err *err)
{
    char name[32];

    if (!tracer)
        return 0;
    /* Where the stage computes on its device: "32 of 132 SMs (green context 1 of 4)". */
    if (rs->v > 0 && chunks[0] && chunks[0]->device_part[0] &&
        pps_trace_meta(tracer, "device_partition", chunks[0]->device_part) != 0)
        return pps_err_set(err, PPS_ENOMEM, "out of memory for the run's metadata");
    /* Interning takes the tracer's lock: done once here, so the ops record by id. */
    for (int c = 0; c < rs->v; c++) {
        int vs = pps_schedule_vstage(&rs->sched, stage, c), b0 = rs->first_block[vs];
        int nb = rs->first_block[vs + 1] - b0, n = nb + 2;
        int32_t *ids = malloc((size_t)n * sizeof(*ids));

        if (!ids)
            return pps_err_set(err, PPS_ENOMEM, "out of memory for the layers' span names");
        for (int k = 0; k < n; k++) {
            if (k == 0)
                snprintf(name, sizeof(name), "embedding");
            else if (k == n - 1)
                snprintf(name, sizeof(name), "head");
            else
                snprintf(name, sizeof(name), "block %d", b0 + k - 1);
            ids[k] = pps_trace_name(tracer, name);
            if (ids[k] < 0) {
                int code = ids[k] == PPS_ENOMEM ? PPS_ENOMEM : PPS_EINVAL;

                free(ids);
                return pps_err_set(err, code, "stage %d: the tracer refused the name '%s'", stage,
                                   name);
            }
        }
        free(chunks[c]->layer_names);
        chunks[c]->layer_names = ids;
        chunks[c]->n_layer_names = n;
        chunks[c]->tracer = tracer;
    }
    return 0;
}

int pps__run_chunks_new(const struct pps__run_sched *rs, int stage, struct pps_compute **chunks,
                        struct pps_err *err)
{
    struct pps_model_spec spec = rs->cfg->model;
    const struct pps_model_spec *s = &spec;
    size_t act_floats = (size_t)s->micro_batch * (size_t)s->seq_len * (size_t)s->hidden;
    int rc = 0;

    /* On one GPU, each stage on its own SM partition, so the GPU behaves as p smaller ones; not
     * for the gradient check, whose single-stream reference runs on the whole GPU (cuBLAS picks
     * its kernels by the SMs it has: the same SMs give the same bits). */
    if (rs->cfg->backend == PPS_BACKEND_CUDA && rs->cfg->gpu_partition && !rs->cfg->check_grads &&
        rs->one_device && rs->p >= 2)
        spec.device_parts = rs->p;

    for (int c = 0; c < rs->v; c++)
        chunks[c] = NULL;
    for (int c = 0; c < rs->v && !rc; c++) {
        int vs = pps_schedule_vstage(&rs->sched, stage, c);
        if (rs->cfg->backend == PPS_BACKEND_EMU) {
            size_t after_f = 0;
            pps_model_act_bytes(s, rs->first_block[vs + 1] - rs->first_block[vs], vs == 0,
                                vs == rs->nvs - 1, &after_f, NULL);
            rc = pps_emu_compute_new(&rs->cfg->emu, rs->p, rs->v, rs->sched.placement, stage, c,
                                     rs->first_block[vs + 1] - rs->first_block[vs], act_floats,
                                     after_f, &chunks[c], err);
        } else {
            rc = pps_model_compute_new(s, pps_run_kernels_backend(rs->cfg->backend), rs->p, rs->v,
                                       rs->sched.placement, rs->m, stage, c, rs->first_block,
                                       rs->data, &chunks[c], err);
        }
    }
    if (rc)
        pps__run_chunks_free(chunks, rs->v);
    return rc;
}

int pps__run_transport_wrap(const struct pps__run_sched *rs, struct pps_transport **t,
                            struct pps_err *err)
{
    struct pps_transport *inner = *t;

    if (rs->cfg->backend != PPS_BACKEND_EMU)
        return 0;
    *t = NULL;
    return pps_emu_link_new(&rs->cfg->emu, inner, t, err);
}

/* ---- tracer and metadata ------------------------------------------------------------------- */

static int write_meta(struct pps__run_sched *rs, int stage, struct pps_tracer *t,
                      const char *transport)
{
    const struct pps_run_config *c = rs->cfg;
    const struct pps_model_spec *s = &c->model;
    size_t act_bytes = (size_t)s->micro_batch * (size_t)s->seq_len * (size_t)s->hidden * 4;
    struct pps_emu_config plain;
    char buf[1024];
    int rc = 0, stage_budget = c->w_budget;

    (void)pps__run_stage_w_budget(c, rs->kind, rs->p, rs->v, rs->first_block, stage, &stage_budget,
                                  NULL);
    rc |= pps_trace_meta(t, "source", "ppscope"); /* the tracer's "tracer": this is a run of ours */
    rc |= pps_trace_meta(t, "run_id", rs->run_id);
    rc |= pps_trace_meta(t, "schedule", pps_sched_kind_name(rs->kind));
    rc |= pps_trace_meta_int(t, "p", rs->p);
    rc |= pps_trace_meta_int(t, "m", rs->m);
    rc |= pps_trace_meta_int(t, "v", rs->v);
    rc |= pps_trace_meta(t, "placement", pps_placement_name(rs->sched.placement));
    rc |= pps_trace_meta(t, "transport", transport);
    /* The cores this process may use: the analysis sets its stage threads against them. */
    rc |= pps_trace_meta_int(t, "host_cpus", pps_host_cpus());
    pps_host_cpu_list(buf, sizeof(buf));
    if (buf[0])
        rc |= pps_trace_meta(t, "host_cpu_list", buf);
    rc |= pps_trace_meta(t, "partition", rs->partition);
    rc |= pps_trace_meta_int(t, "iters", c->iters);
    rc |= pps_trace_meta(t, "optimizer", pps_optim_mode_name(c->optim_mode));
    snprintf(buf, sizeof(buf), "%g", c->clip);
    rc |= pps_trace_meta(t, "clip", buf);
    rc |= pps_trace_meta_int(t, "w_budget", c->w_budget);
    snprintf(buf, sizeof(buf), "%g", c->act_budget_mib);
    rc |= pps_trace_meta(t, "act_budget_mib", buf);
    rc |= pps_trace_meta_int(t, "stage_w_budget", stage_budget);
    if (rs->kind == PPS_SCHED_ZB_AUTO)
        rc |= pps__run_zb_auto_meta(c, stage, t);
    if (rs->kind == PPS_RUN_CUSTOM)
        rc |= pps__run_custom_meta(rs, stage, t);
    rc |= pps_trace_meta_int(t, "seed", (int64_t)s->seed);
    snprintf(buf, sizeof(buf), "%g", (double)s->adamw.lr);
    rc |= pps_trace_meta(t, "lr", buf);
    /* What a microbatch holds after F through each of the stage's chunks, and after B while its
     * W is pending: the units of the report's memory model (analysis/memory.h). The emulation
     * keeps half of F's bytes for a pending W (emu.h). */
    for (int after = 0; after < 2; after++) {
        buf[0] = '\0';
        for (int ch = 0; ch < rs->v; ch++) {
            size_t after_f = 0, after_b = 0, used = strlen(buf);
            int vs = pps_schedule_vstage(&rs->sched, stage, ch);

            pps_model_act_bytes(s, rs->first_block[vs + 1] - rs->first_block[vs], vs == 0,
                                vs == rs->nvs - 1, &after_f, &after_b);
            if (c->backend == PPS_BACKEND_EMU)
                after_b = after_f / 2;
            snprintf(buf + used, sizeof(buf) - used, "%s%zu", ch ? "," : "",
                     after ? after_b : after_f);
        }
        rc |= pps_trace_meta(t, after ? "act_bytes_b" : "act_bytes_f", buf);
    }
    snprintf(buf, sizeof(buf),
             "byte-level LM: %d residual MLP blocks, hidden %d, mlp %dx, seq %d, microbatch %d, "
             "%zu parameters",
             s->layers, s->hidden, s->mlp_ratio, s->seq_len, s->micro_batch,
             pps_model_param_count(s));
    if (c->backend != PPS_BACKEND_EMU) {
        rc |= pps_trace_meta(t, "model", buf);
        /* Where the model's ends are: the embedding in virtual stage 0, the LM head and the loss
         * in the last (stage 0 in V). Only a run that says so gets them named in its diagnosis. */
        rc |= pps_trace_meta_int(t, "model_embedding_stage", 0);
        rc |= pps_trace_meta_int(t, "model_head_stage", pps__run_loss_stage(rs));
        rc |= pps_trace_meta(t, "backend", pps_run_kernels_backend(c->backend));
        rc |= pps_trace_meta(t, "data", rs->data ? rs->data->path : "");
        pps_kernels_describe(pps_run_kernels_backend(c->backend), buf, sizeof(buf));
        rc |= pps_trace_meta(t, "device", buf);
        return rc;
    }
    {
        char model[1200];
        snprintf(model, sizeof(model), "emulated (no math), with the shapes of the %s", buf);
        rc |= pps_trace_meta(t, "model", model);
    }
    rc |= pps_trace_meta(t, "backend", "emu");
    rc |= pps_trace_meta(t, "emulated", "1");
    rc |= pps_trace_meta(t, "device",
                         "emu: an emulated device (every op sleeps its modeled time, no math)");
    rc |= pps_trace_meta_int(t, "emu_tf_ns", llround(c->emu.tf_ns));
    rc |= pps_trace_meta_int(t, "emu_tb_ns", llround(c->emu.tb_ns));
    rc |= pps_trace_meta_int(t, "emu_tw_ns", llround(c->emu.tw_ns));
    rc |= pps_trace_meta_int(t, "emu_latency_ns", llround(c->emu.latency_ns));
    snprintf(buf, sizeof(buf), "%g", c->emu.bandwidth_gbps);
    rc |= pps_trace_meta(t, "emu_bandwidth_gbps", buf);
    if (c->emu.layer_costs) {
        const double *l[3] = {c->emu.embed_ns, c->emu.block_ns, c->emu.head_ns};
        static const char *const key[3] = {"emu_embed_ms", "emu_block_ms", "emu_head_ms"};
        for (int k = 0; k < 3; k++) {
            snprintf(buf, sizeof(buf), "%g,%g,%g", l[k][0] / 1e6, l[k][1] / 1e6, l[k][2] / 1e6);
            rc |= pps_trace_meta(t, key[k], buf);
        }
    }
    if (c->emu.stage_mult) {
        size_t used = 0;
        buf[0] = '\0';
        for (int k = 0; k < c->emu.n_stage_mult && used < sizeof(buf); k++)
            used += (size_t)snprintf(buf + used, sizeof(buf) - used, "%s%g", k ? "," : "",
                                     c->emu.stage_mult[k]);
        rc |= pps_trace_meta(t, "emu_stage_mult", buf);
    }
    if (c->emu.slow_stage >= 0) {
        snprintf(buf, sizeof(buf), "%d:%g", c->emu.slow_stage, c->emu.slow_factor);
        rc |= pps_trace_meta(t, "emu_slow_stage", buf);
    }
    if (c->emu.slow_link_a >= 0) {
        snprintf(buf, sizeof(buf), "%d-%d:%g", c->emu.slow_link_a, c->emu.slow_link_b,
                 c->emu.slow_link_ns / 1e3);
        rc |= pps_trace_meta(t, "emu_slow_link_us", buf);
    }
    /* The modeled link time of one activation: what the prediction adds to each hop (a slow
     * link is a fault for the diagnosis to find, so it is not in it). */
    plain = c->emu;
    plain.slow_link_a = plain.slow_link_b = -1;
    rc |= pps_trace_meta_int(
        t, "tcomm_ns", rs->p > 1 ? llround(pps_emu_link_delay_ns(&plain, 0, 1, act_bytes)) : 0);
    return rc;
}

int pps__run_tracer_open(struct pps__run_sched *rs, int stage, int clock_sync,
                         const char *transport, struct pps_tracer **out, struct pps_err *err)
{
    struct pps_trace_options o;
    int rc;

    *out = NULL;
    if (!rs->dir[0])
        return 0;
    pps_trace_options_init(&o);
    o.run_dir = rs->dir;
    o.rank = stage;
    o.world = rs->p;
    o.clock_sync = clock_sync;
    o.buffer_spans = 16384; /* a few thousand spans a second per stage: seconds of room */
    rc = pps_trace_open(&o, out, err);
    if (rc)
        return rc;
    if (write_meta(rs, stage, *out, transport))
        return pps_err_set(err, PPS_ENOMEM, "%s: out of memory for the run's metadata", rs->dir);
    /* On a GPU, what the device did: kernels and copies of every op, from CUPTI. Where it cannot
     * trace, the run goes on with the host's spans and says so once (the shard has no
     * device_activity key). */
    if (rs->cfg->backend == PPS_BACKEND_CUDA && rs->cfg->device_spans) {
        struct pps_err derr = {0};
        if (pps_trace_device_activity(*out, &derr) != 0 && stage == 0 && rs->cfg->warn_cores)
            fprintf(stderr,
                    "ppscope run: warning: no device spans (%s): the timelines are the "
                    "host's\n",
                    derr.msg);
    }
    return 0;
}

/* ---- the executor's config ----------------------------------------------------------------- */

static void on_iter(void *arg, int iter, double loss)
{
    struct pps__run_sched *rs = arg;
    int64_t now = pps_trace_now();

    if (!rs->cfg->progress)
        return;
    if (now - rs->progress_ns < 1000000000LL && iter != rs->cfg->iters - 1)
        return;
    rs->progress_ns = now;
    if (isnan(loss))
        fprintf(stderr, "ppscope run: %s iteration %d/%d\n", pps_sched_kind_name(rs->kind),
                iter + 1, rs->cfg->iters);
    else
        fprintf(stderr, "ppscope run: %s iteration %d/%d, loss %.4f\n",
                pps_sched_kind_name(rs->kind), iter + 1, rs->cfg->iters, loss);
}

int pps__run_stage_w_budget(const struct pps_run_config *c, int kind, int p, int v,
                            const int *first_block, int stage, int *budget, struct pps_err *err)
{
    size_t w_bytes = 0;
    double n;

    *budget = c->w_budget;
    if (!(c->act_budget_mib > 0))
        return 0;
    /* Any of the stage's pending W's may be on its largest chunk: count them all at that size. */
    for (int ch = 0; ch < v; ch++) {
        int vs = pps_place_vstage(pps_run_config_placement(c, kind), p, stage, ch);
        size_t after_f = 0, after_b = 0;
        pps_model_act_bytes(&c->model, first_block[vs + 1] - first_block[vs], vs == 0,
                            vs == p * v - 1, &after_f, &after_b);
        if (c->backend == PPS_BACKEND_EMU)
            after_b = after_f / 2; /* emu.h: half of F's bytes while the W is pending */
        if (after_b > w_bytes)
            w_bytes = after_b;
    }
    if (!w_bytes)
        return 0; /* its pending W's hold nothing: the bytes bound nothing */
    n = floor(c->act_budget_mib * 1048576.0 / (double)w_bytes);
    if (n < 1)
        return pps_err_set(err, PPS_EINVAL,
                           "--act-budget-mib %g holds no pending W on stage %d of %s (one holds "
                           "%.3f MiB)",
                           c->act_budget_mib, stage, pps_sched_kind_name(kind),
                           (double)w_bytes / 1048576.0);
    if (n < 1 << 30 && (!*budget || (int)n < *budget))
        *budget = (int)n;
    return 0;
}

void pps__run_exec_config(struct pps__run_sched *rs, int stage, struct pps_transport *t,
                          struct pps_tracer *tracer, struct pps_compute **chunks,
                          struct pps_exec_config *ec)
{
    const struct pps_run_config *c = rs->cfg;

    pps_exec_config_init(ec);
    ec->sched = &rs->sched;
    ec->stage = stage;
    ec->t = t;
    ec->tracer = tracer;
    ec->chunks = chunks;
    ec->iters = c->check_grads ? 1 : c->iters;
    ec->optim_mode = c->optim_mode;
    ec->clip = c->clip;
    ec->no_step = c->check_grads;
    /* pps_run_config_check() has refused a budget that fails here. */
    if (pps__run_stage_w_budget(c, rs->kind, rs->p, rs->v, rs->first_block, stage, &ec->w_budget,
                                NULL))
        ec->w_budget = c->w_budget;
    ec->inject_nonfinite_iter = c->inject_nonfinite_iter;
    ec->fail_iter = stage == c->fail_stage ? c->fail_iter : -1;
    ec->on_iter = on_iter;
    ec->arg = rs;
}
