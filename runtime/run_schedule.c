/*
 * run_schedule.c - the schedule a run runs: generated from its kind, or, for zb-auto, built for
 * the costs the run is set up with, and the metadata the analysis rebuilds it from.
 *
 * zb-auto's order depends on the costs it is built for, so the kind alone does not say what
 * ran. The costs are the backend's own where it has them: the emu backend's configured op times
 * (multipliers and a slow stage applied) and its modeled time of one activation message; the
 * real backends (cpu, cuda) have none before they run, so unit costs (tF = tB = tW = 1, no
 * message time). Every shard writes the costs of its stage and the limit (zb_auto_costs,
 * zb_auto_mem_limit), printed exactly, and the analysis builds the same order from them
 * (analysis/run_schedule.c): the build is deterministic.
 */
#include <stdio.h>
#include <stdlib.h>

#include "run_int.h"

int pps__run_mem_limit(const struct pps_run_config *c)
{
    return c->mem_limit > 0 ? c->mem_limit : c->p;
}

int pps__run_zb_auto_costs(const struct pps_run_config *c, struct pps_sim_costs *costs)
{
    const struct pps_model_spec *s = &c->model;
    size_t act_bytes = (size_t)s->micro_batch * (size_t)s->seq_len * (size_t)s->hidden * 4;
    struct pps_emu_config plain;

    if (pps_sim_costs_init(costs, c->p, 1, 1, 1))
        return PPS_ENOMEM;
    costs->topt = 0; /* the same for every order: it changes no choice */
    if (c->backend != PPS_BACKEND_EMU)
        return 0;
    for (int st = 0; st < c->p; st++)
        pps_emu_stage_costs(&c->emu, st, &costs->tf[st], &costs->tb[st], &costs->tw[st]);
    /* The time of one activation message, as the emu link models it and the report's
     * prediction adds to each hop (a slow link is a fault to find, not a cost to plan for). */
    plain = c->emu;
    plain.slow_link_a = plain.slow_link_b = -1;
    costs->tcomm = c->p > 1 ? pps_emu_link_delay_ns(&plain, 0, 1, act_bytes) : 0;
    return 0;
}

int pps__run_schedule_make(const struct pps_run_config *c, int kind, int v,
                           struct pps_schedule *sched, struct pps_err *err)
{
    struct pps_sim_costs costs;
    int rc;

    if (kind == PPS_RUN_CUSTOM)
        return pps_schedule_copy(sched, c->custom) ? pps_err_set(err, PPS_ENOMEM, "out of memory")
                                                   : 0;
    if (kind != PPS_SCHED_ZB_AUTO)
        return pps_schedule_generate(sched, kind, c->p, c->m, v, err);
    if ((rc = pps_schedule_check_params(kind, c->p, c->m, v, err)))
        return rc;
    if (pps__run_zb_auto_costs(c, &costs))
        return pps_err_set(err, PPS_ENOMEM, "out of memory");
    rc = pps_schedule_auto(sched, &costs, c->m, pps__run_mem_limit(c), err);
    pps_sim_costs_release(&costs);
    return rc;
}

int pps__run_zb_auto_meta(const struct pps_run_config *c, int stage, struct pps_tracer *t)
{
    struct pps_sim_costs costs;
    char buf[128];
    int rc = 0;

    if (pps__run_zb_auto_costs(c, &costs))
        return -1;
    snprintf(buf, sizeof(buf), "%.17g,%.17g,%.17g,%.17g", costs.tf[stage], costs.tb[stage],
             costs.tw[stage], costs.tcomm);
    rc |= pps_trace_meta(t, "zb_auto_costs", buf);
    rc |= pps_trace_meta_int(t, "zb_auto_mem_limit", pps__run_mem_limit(c));
    pps_sim_costs_release(&costs);
    return rc;
}

int pps__run_custom_meta(const struct pps__run_sched *rs, int stage, struct pps_tracer *t)
{
    size_t need = pps_schedule_format_row(&rs->sched, stage, NULL, 0);
    char *row = malloc(need + 1);
    int rc;

    if (!row)
        return -1;
    pps_schedule_format_row(&rs->sched, stage, row, need + 1);
    rc = pps_trace_meta(t, "schedule_order", row);
    free(row);
    if (rs->cfg->custom_file)
        rc |= pps_trace_meta(t, "schedule_file", rs->cfg->custom_file);
    return rc;
}
