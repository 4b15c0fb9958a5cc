/*
 * run_schedule.c - a named run's schedule, regenerated for the analysis: from its kind, or, for
 * zb-auto, built again from the costs and the limit the run was built for (its metadata).
 *
 * zb-auto's order depends on the costs it was built for (runtime/run_schedule.c), which need
 * not be unit costs: regenerating it from its kind alone would report a run against an order it
 * did not run. Every shard of a zb-auto run says its stage's costs exactly (zb_auto_costs,
 * "tf,tb,tw,tcomm") and the limit (zb_auto_mem_limit), and the build is deterministic, so the
 * same order comes back.
 */
#include <stdlib.h>
#include <string.h>

#include "analysis_int.h"

/* zb-auto from run's metadata into sched: PPS_EINVAL naming what is missing. */
static int zb_auto_of_run(const struct pps_run *run, int p, int m, struct pps_schedule *sched,
                          struct pps_err *perr)
{
    struct pps_sim_costs costs;
    int rc, limit = 0;
    unsigned char *seen;

    if (pps_sim_costs_init(&costs, p, 1, 1, 1))
        return pps_err_set(perr, PPS_ENOMEM, "out of memory");
    costs.topt = 0;
    if (!(seen = calloc((size_t)p, 1))) {
        rc = pps_err_set(perr, PPS_ENOMEM, "out of memory");
        goto out;
    }
    for (size_t k = 0; k < run->n_meta; k++) {
        const struct pps_meta_entry *e = &run->meta[k];
        double tf, tb, tw, tc;
        char tail;

        if (!strcmp(e->key, "zb_auto_mem_limit") && atoi(e->value) > 0)
            limit = atoi(e->value);
        if (strcmp(e->key, "zb_auto_costs") || e->rank < 0 || e->rank >= p ||
            sscanf(e->value, "%lf,%lf,%lf,%lf%c", &tf, &tb, &tw, &tc, &tail) != 4)
            continue;
        costs.tf[e->rank] = tf;
        costs.tb[e->rank] = tb;
        costs.tw[e->rank] = tw;
        costs.tcomm = tc;
        seen[e->rank] = 1;
    }
    for (int s = 0; s < p; s++)
        if (!seen[s]) {
            rc = pps_err_set(perr, PPS_EINVAL,
                             "the zb-auto run does not say the costs it was built for (stage "
                             "%d has no zb_auto_costs)",
                             s);
            goto out;
        }
    if (!limit) {
        rc = pps_err_set(perr, PPS_EINVAL,
                         "the zb-auto run does not say its memory limit (zb_auto_mem_limit)");
        goto out;
    }
    rc = pps_schedule_auto(sched, &costs, m, limit, perr);
out:
    free(seen);
    pps_sim_costs_release(&costs);
    return rc;
}

int pps__analysis_generate(const struct pps_run *run, const struct pps_report *rep,
                           struct pps_schedule *sched, struct pps_err *perr)
{
    int rc = pps_schedule_check_params(rep->sched_kind, rep->p, rep->m, rep->v, perr);

    if (rc)
        return rc;
    if (rep->sched_kind == PPS_SCHED_ZB_AUTO)
        return zb_auto_of_run(run, rep->p, rep->m, sched, perr);
    return pps_schedule_generate(sched, rep->sched_kind, rep->p, rep->m, rep->v, perr);
}
