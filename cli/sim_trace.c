/* sim_trace.c - `ppscope sim --trace`: a prediction stored as a run, readable like a measured one.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "pps_run_id.h"
#include "sim_trace.h"
#include "storage.h"

static const uint8_t span_kind_of_op[] = {PPS_SPAN_F, PPS_SPAN_B, PPS_SPAN_W, PPS_SPAN_BW};

static int write_meta(struct pps_store_writer *w, const struct pps_schedule *sc, const char *file,
                      const struct pps_sim_costs *c, double unit_ns, struct pps_err *err)
{
    char buf[64];
    int rc = pps_store_writer_meta(w, "schedule", pps_sched_kind_name(sc->kind), err);
    if (!rc) {
        pps_run_id_new(buf);
        rc = pps_store_writer_meta(w, "run_id", buf, err);
    }
    if (!rc)
        rc = pps_store_writer_meta_int(w, "p", sc->p, err);
    if (!rc)
        rc = pps_store_writer_meta_int(w, "m", sc->m, err);
    if (!rc)
        rc = pps_store_writer_meta_int(w, "v", sc->v, err);
    if (!rc)
        rc = pps_store_writer_meta(w, "placement", pps_placement_name(sc->placement), err);
    if (!rc)
        rc = pps_store_writer_meta_int(w, "world", 1, err);
    if (!rc)
        rc = pps_store_writer_meta(w, "source", "sim", err);
    if (!rc)
        rc = pps_store_writer_meta(w, "backend", "sim", err);
    if (!rc)
        rc = pps_store_writer_meta(w, "model", "simulated", err);
    if (!rc)
        rc = pps_store_writer_meta(w, "device", "none (simulated)", err);
    if (!rc)
        rc = pps_store_writer_meta_int(w, "tcomm_ns", llround(c->tcomm * unit_ns), err);
    if (!rc) {
        snprintf(buf, sizeof(buf), "%.17g", c->w_mem);
        rc = pps_store_writer_meta(w, "sim_w_mem", buf, err);
    }
    if (!rc) {
        snprintf(buf, sizeof(buf), "%.17g", unit_ns);
        rc = pps_store_writer_meta(w, "sim_unit_ns", buf, err);
    }
    if (!rc && sc->kind < 0) {
        /* A custom schedule's order, which no kind says: every stage's row of the grid, in the
         * one shard (the analysis reads it back: analysis/run_schedule.c). */
        size_t need = pps_schedule_format(sc, -1, -1, NULL, 0);
        char *rows = malloc(need + 1);

        if (!rows)
            return pps_err_set(err, PPS_ENOMEM, "out of memory");
        pps_schedule_format(sc, -1, -1, rows, need + 1);
        rc = pps_store_writer_meta(w, "schedule_order", rows, err);
        free(rows);
        if (!rc && file)
            rc = pps_store_writer_meta(w, "schedule_file", file, err);
    }
    return rc;
}

int pps_sim_write_trace(const char *dir, const struct pps_schedule *sc, const char *file,
                        const struct pps_sim_costs *c, const struct pps_sim_result *res, int iters,
                        double unit_ns, struct pps_err *err)
{
    struct pps_store_writer *w = NULL;
    size_t n = sc->start[sc->p], per_iter = n + (c->topt > 0 ? (size_t)sc->p : 0);
    struct pps_span *buf = calloc(per_iter ? per_iter : 1, sizeof(*buf));
    int rc;
    if (!buf)
        return pps_err_set(err, PPS_ENOMEM, "out of memory");
    /* Nanoseconds are int64 in the store: refuse a trace whose times would not fit. */
    if (!((double)iters * res->makespan * unit_ns < 4.6e18)) {
        free(buf);
        return pps_err_set(err, PPS_EINVAL,
                           "%s: %d iterations of %g units at %g ns per unit do not fit in the "
                           "trace's 64-bit nanoseconds (use a smaller --unit-ns)",
                           dir, iters, res->makespan, unit_ns);
    }
    rc = pps_store_writer_open(dir, 0, &w, err);
    if (!rc)
        rc = write_meta(w, sc, file, c, unit_ns, err);
    for (int it = 0; it < iters && !rc; it++) {
        double t0 = it * res->makespan;
        size_t k = 0;
        for (int s = 0; s < sc->p; s++) {
            for (size_t a = sc->start[s]; a < sc->start[s + 1]; a++, k++) {
                struct pps_span *sp = &buf[k];
                sp->start_ns = llround((t0 + res->spans[a].start) * unit_ns);
                sp->end_ns = llround((t0 + res->spans[a].end) * unit_ns);
                sp->kind = span_kind_of_op[sc->actions[a].op];
                sp->stage = (int16_t)s;
                sp->chunk = (int16_t)sc->actions[a].chunk;
                sp->mb = (int32_t)sc->actions[a].mb;
                sp->iter = it;
                sp->peer = -1;
                sp->name_id = -1;
            }
            if (c->topt > 0) {
                struct pps_span *sp = &buf[n + (size_t)s];
                sp->start_ns = llround((t0 + res->makespan - c->topt) * unit_ns);
                sp->end_ns = llround((t0 + res->makespan) * unit_ns);
                sp->kind = PPS_SPAN_OPT;
                sp->stage = (int16_t)s;
                sp->mb = -1;
                sp->iter = it;
                sp->peer = -1;
                sp->name_id = -1;
            }
        }
        rc = pps_store_writer_spans(w, buf, per_iter, err);
    }
    int crc = pps_store_writer_close(w, rc == 0, rc ? NULL : err);
    free(buf);
    return rc ? rc : crc;
}
