/*
 * memory.c - measured peak activation memory and pending W's per stage beside the schedule's
 * own (memory.h): the metrics rows' peaks, and the run's schedule walked op by op with each
 * chunk's bytes per microbatch (pps_schedule_stage_memory, the simulator's model).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis_int.h"
#include "memory.h"

/* The bytes per microbatch of each of stage s's v chunks that meta key of rank s says
 * ("b0,b1,..."), into bytes[0..v); 0 when the run does not say or says something else. */
static int chunk_bytes(const struct pps_run *run, int s, const char *key, int v, double *bytes)
{
    const char *text = NULL;

    for (size_t i = 0; i < run->n_meta; i++)
        if (run->meta[i].rank == s && !strcmp(run->meta[i].key, key))
            text = run->meta[i].value;
    if (!text)
        return 0;
    for (int c = 0; c < v; c++) {
        char *end;
        double b = strtod(text, &end);

        if (end == text || !(b >= 0 && b < 1e18) || (*end != ',' && *end != '\0') ||
            (*end == '\0' && c != v - 1))
            return 0;
        bytes[c] = b;
        text = *end ? end + 1 : end;
    }
    return *text == '\0';
}

/* The run's schedule as it ran (generated, or its order), with its W budget. */
static int run_schedule(const struct pps_run *run, const struct pps_report *rep,
                        struct pps_schedule *sched, struct pps_err *perr)
{
    int rc = pps__analysis_generate(run, rep, sched, perr);

    return rc < 0 ? rc : pps__analysis_w_budget(run, sched, perr);
}

int pps_analysis_memory(const struct pps_run *run, const struct pps_report *rep,
                        struct pps_memory *mem, struct pps_err *err)
{
    struct pps_schedule sched = PPS_SCHEDULE_INIT;
    struct pps_err perr = {0, ""};
    double *bytes = NULL;
    int n = rep->n_stages, rc = 0;

    memset(mem, 0, sizeof(*mem));
    mem->n_stages = n;
    if (n > 0 && !(mem->stages = calloc((size_t)n, sizeof(*mem->stages))))
        return pps_err_set(err, PPS_ENOMEM, "out of memory for the memory figures");
    for (int s = 0; s < n; s++) {
        mem->stages[s] = (struct pps_memory_stage){s, -1, -1, NAN, -1};
    }
    for (size_t i = 0; i < run->n_metrics; i++) {
        const struct pps_metric *m = &run->metrics[i];
        struct pps_memory_stage *st;

        if (m->stage < 0 || m->stage >= n)
            continue;
        st = &mem->stages[m->stage];
        if (m->act_bytes >= 0 && m->act_bytes > st->act_peak)
            st->act_peak = m->act_bytes;
        if (m->pending_w >= 0 && m->pending_w > st->pw_peak)
            st->pw_peak = m->pending_w;
        mem->have_measured |= m->act_bytes >= 0 || m->pending_w >= 0;
    }

    if (rep->p < 1 || rep->n_stages != rep->p) {
        snprintf(mem->note, sizeof(mem->note), "the run's stages are not its p");
        goto out;
    }
    rc = run_schedule(run, rep, &sched, &perr);
    if (rc == PPS_ENOMEM) {
        rc = pps_err_set(err, rc, "out of memory for the schedule");
        goto out;
    }
    if (rc < 0) {
        snprintf(mem->note, sizeof(mem->note), "%.150s", perr.msg);
        rc = 0;
        goto out;
    }
    if (!(bytes = calloc(2 * (size_t)sched.v, sizeof(double)))) {
        rc = pps_err_set(err, PPS_ENOMEM, "out of memory for the memory figures");
        goto out;
    }
    mem->have_predicted = 1;
    for (int s = 0; s < n; s++) {
        double act, *f = bytes, *b = bytes + sched.v;
        int have = chunk_bytes(run, s, "act_bytes_f", sched.v, f) &&
                   chunk_bytes(run, s, "act_bytes_b", sched.v, b);

        /* Without the bytes the walk still counts the pending W's. */
        if (!have)
            memset(bytes, 0, 2 * (size_t)sched.v * sizeof(double));
        pps_schedule_stage_memory(&sched, s, f, b, &act, &mem->stages[s].pred_pw);
        if (have)
            mem->stages[s].pred_act = act;
    }
out:
    free(bytes);
    pps_schedule_release(&sched);
    return rc;
}

void pps_memory_release(struct pps_memory *mem)
{
    if (!mem)
        return;
    free(mem->stages);
    memset(mem, 0, sizeof(*mem));
}
