/*
 * run_schedule.c - a run's schedule for the analysis: from its kind, or, for zb-auto, built again
 * from the costs and the limit the run was built for (its metadata); a custom schedule's order
 * (a schedule file's) read back from the rows of ppscope's grid its shards keep.
 *
 * zb-auto's order depends on the costs it was built for (runtime/run_schedule.c), which need
 * not be unit costs: regenerating it from its kind alone would report a run against an order it
 * did not run. Every shard of a zb-auto run says its stage's costs exactly (zb_auto_costs,
 * "tf,tb,tw,tcomm") and the limit (zb_auto_mem_limit), and the build is deterministic, so the
 * same order comes back.
 */
#include <stdio.h>
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
    int rc;

    if (rep->sched_kind < 0 && rep->observed.actions)
        return pps_schedule_copy(sched, &rep->observed)
                   ? pps_err_set(perr, PPS_ENOMEM, "out of memory for the run's order")
                   : 0;
    if (rep->sched_kind < 0)
        return pps_err_set(perr, PPS_EINVAL, "the run's schedule is not known");
    if ((rc = pps_schedule_check_params(rep->sched_kind, rep->p, rep->m, rep->v, perr)))
        return rc;
    if (rep->sched_kind == PPS_SCHED_ZB_AUTO)
        return zb_auto_of_run(run, rep->p, rep->m, sched, perr);
    return pps_schedule_generate(sched, rep->sched_kind, rep->p, rep->m, rep->v, perr);
}

/* The rows of the grid that the run's shards keep (meta schedule_order), rank by rank, after its
 * placement: the text pps_schedule_read takes. NULL where no shard keeps one (or out of memory,
 * *oom set). */
static char *stated_text(const struct pps_run *run, int *oom)
{
    const char *placement = pps_run_meta(run, "placement");
    size_t len = 64, used;
    char *text;
    int top = -1;

    *oom = 0;
    for (size_t k = 0; k < run->n_meta; k++)
        if (!strcmp(run->meta[k].key, "schedule_order")) {
            len += strlen(run->meta[k].value) + 1;
            if (run->meta[k].rank > top)
                top = run->meta[k].rank;
        }
    if (top < 0)
        return NULL;
    if (!(text = malloc(len))) {
        *oom = 1;
        return NULL;
    }
    used = (size_t)snprintf(text, len, "placement: %s\n",
                            placement && !strcmp(placement, "v") ? "v" : "loop");
    /* Rank order: the rows go s0, s1, ...; meta is sorted by key, not by rank. */
    for (int r = 0; r <= top; r++)
        for (size_t k = 0; k < run->n_meta; k++)
            if (run->meta[k].rank == r && !strcmp(run->meta[k].key, "schedule_order"))
                used += (size_t)snprintf(text + used, len - used, "%s\n", run->meta[k].value);
    return text;
}

int pps__analysis_stated_order(const struct pps_run *run, struct pps_report *rep,
                               struct pps_err *err)
{
    struct pps_schedule sched = PPS_SCHEDULE_INIT;
    struct pps_err perr = {0, ""};
    int oom, rc;
    char *text = stated_text(run, &oom);

    if (oom)
        return pps_err_set(err, PPS_ENOMEM, "out of memory for the run's order");
    if (!text)
        return 0;
    rc = pps_schedule_read(&sched, NULL, text, strlen(text), PPS_SYNTAX_GRID, &perr);
    free(text);
    if (rc == PPS_ENOMEM)
        return pps_err_set(err, rc, "out of memory for the run's order");
    if (!rc && (sched.p != rep->p || sched.m != rep->m || sched.v != rep->v))
        rc = pps_err_set(&perr, PPS_EFORMAT,
                         "it is of p=%d, m=%d, v=%d where the run says p=%d, m=%d, v=%d", sched.p,
                         sched.m, sched.v, rep->p, rep->m, rep->v);
    if (!rc)
        rc = pps_schedule_validate(&sched, NULL, &perr);
    if (rc == PPS_ENOMEM) {
        pps_schedule_release(&sched);
        return pps_err_set(err, rc, "out of memory for the run's order");
    }
    if (rc) {
        pps_schedule_release(&sched);
        snprintf(rep->infer_note, sizeof(rep->infer_note),
                 "the order its shards keep (schedule_order) is damaged: %.180s", perr.msg);
        return 0;
    }
    rep->observed = sched;
    return 1;
}
