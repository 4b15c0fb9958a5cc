/*
 * view.c - the state of a view: which runs, which time range, following, paused, the cursor
 * and the selected op, and every move the keys and the mouse make on it.
 *
 * View times are ns relative to run A's first span. Run B is drawn shifted so that its
 * iteration with the same number as the one at the view's centre in A starts at the same
 * place: both runs share one time scale, aligned by iteration.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tui_int.h"

/* The narrowest view: a few ns per column is as far as zooming means anything. */
#define MIN_WIDTH_NS 64
/* The longest stretch of a run the view spans: see pps__tui_extent(). */
#define VIEW_MAX_EXTENT ((int64_t)1 << 60)

void pps_tui_init(struct pps_tui *ui, const struct pps_tui_opts *opts)
{
    memset(ui, 0, sizeof(*ui));
    if (opts)
        ui->opts = *opts;
    if (!(ui->opts.delay_s > 0))
        ui->opts.delay_s = 0.5;
}

void pps_tui_release(struct pps_tui *ui)
{
    for (int i = 0; i < 2; i++)
        pps__tui_model_release(&ui->models[i]);
    ui->n_models = 0;
}

void pps__tui_say(struct pps_tui *ui, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(ui->message, sizeof(ui->message), fmt, ap);
    va_end(ap);
}

void pps__tui_say_read(struct pps_tui *ui, int m)
{
    const struct pps_report *rep = ui->models[m].rep;

    if (rep && rep->n_iters > 0)
        pps__tui_say(ui, "read iterations %d-%d through the index", rep->iters[0].iter,
                     rep->iters[rep->n_iters - 1].iter);
}

int pps__tui_lanes(const struct pps_tui *ui, int model)
{
    if (model < 0 || model >= ui->n_models)
        return 0;
    return pps_tui_index_lanes(ui->models[model].index);
}

void pps__tui_cursor_lane(const struct pps_tui *ui, int *model, int *lane)
{
    int na = pps__tui_lanes(ui, 0);

    *model = ui->cursor < na ? 0 : 1;
    *lane = ui->cursor < na ? ui->cursor : ui->cursor - na;
}

int64_t pps__tui_extent(const struct pps_tui *ui)
{
    int64_t e = 0;

    for (int m = 0; m < ui->n_models; m++) {
        const struct pps_run *r = ui->models[m].run;
        if (r && r->t_max - r->t_min > e)
            e = r->t_max - r->t_min;
    }
    /* A run's times may be 2^63 ns apart; the view's arithmetic (a range four times the run,
     * margins either side) holds 2^60 (36 years), which it shows of a longer one. */
    return e < VIEW_MAX_EXTENT ? e : VIEW_MAX_EXTENT;
}

void pps__tui_bounds(const struct pps_tui *ui, int64_t *lo, int64_t *hi)
{
    const struct pps_tui_model *m = &ui->models[0];
    const struct pps_summary_series *s = &m->run_iters;
    int64_t a, b;

    *lo = 0;
    *hi = pps__tui_extent(ui);
    if (ui->n_models != 1 || !m->run || !s->n)
        return;
    /* Every window, and every labelled span inside or outside them. */
    a = s->run_t0;
    b = s->run_t1;
    /* Times are within 2^62 ns of 0 (series_of(), the reader): the differences fit. */
    if (a <= -((int64_t)1 << 62) || b >= (int64_t)1 << 62)
        return;
    a -= m->run->t_min;
    b -= m->run->t_min;
    if (a < -VIEW_MAX_EXTENT)
        a = -VIEW_MAX_EXTENT;
    if (b > VIEW_MAX_EXTENT)
        b = VIEW_MAX_EXTENT;
    *lo = a < *lo ? a : *lo;
    *hi = b > *hi ? b : *hi;
}

/* The report iteration of model whose window holds abs (its own clock), or the nearest. */
static int iter_at_abs(const struct pps_report *rep, int64_t abs)
{
    int lo = 0, hi;

    if (!rep || rep->n_iters < 1)
        return -1;
    hi = rep->n_iters;
    /* Windows follow each other in time: the last one starting at or before abs. */
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (rep->iters[mid].t0 <= abs)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0)
        return 0;
    lo--;
    if (abs >= rep->iters[lo].t1 && lo + 1 < rep->n_iters &&
        rep->iters[lo + 1].t0 - abs < abs - rep->iters[lo].t1)
        lo++;
    return lo;
}

int64_t pps__tui_base(const struct pps_tui *ui, int model)
{
    const struct pps_tui_model *a = &ui->models[0], *b;
    int ka, kb = -1;

    if (model == 0 || ui->n_models < 2)
        return a->run ? a->run->t_min : 0;
    b = &ui->models[1];
    ka = iter_at_abs(a->rep, a->run->t_min + ui->t0 + (ui->t1 - ui->t0) / 2);
    if (ka < 0 || !b->rep || b->rep->n_iters < 1)
        return b->run->t_min;
    for (int i = 0; i < b->rep->n_iters; i++)
        if (b->rep->iters[i].iter == a->rep->iters[ka].iter)
            kb = i;
    if (kb < 0)
        kb = ka < b->rep->n_iters ? ka : b->rep->n_iters - 1;
    return b->rep->iters[kb].t0 - (a->rep->iters[ka].t0 - a->run->t_min);
}

int pps__tui_iter_at(const struct pps_tui *ui, int model, int64_t t)
{
    if (model < 0 || model >= ui->n_models)
        return -1;
    return iter_at_abs(ui->models[model].rep, pps__tui_base(ui, model) + t);
}

void pps__tui_set_range(struct pps_tui *ui, int64_t t0, int64_t t1)
{
    int64_t lo, hi, w = t1 - t0, max_w;

    pps__tui_bounds(ui, &lo, &hi);
    max_w = (hi - lo) * 4;

    if (max_w < 1000000)
        max_w = 1000000;
    if (w < MIN_WIDTH_NS) {
        t0 -= (MIN_WIDTH_NS - w) / 2;
        w = MIN_WIDTH_NS;
    }
    if (w > max_w) {
        t0 += (w - max_w) / 2;
        w = max_w;
    }
    /* Keep half the screen over the run at least. */
    if (t0 < lo - w / 2)
        t0 = lo - w / 2;
    if (t0 > hi - w / 2)
        t0 = hi - w / 2;
    ui->t0 = t0;
    ui->t1 = t0 + w;
}

void pps__tui_zoom(struct pps_tui *ui, double factor, int64_t t)
{
    double w = (double)(ui->t1 - ui->t0), left = (double)(t - ui->t0) / (w > 0 ? w : 1);
    double nw = w * factor;
    int64_t t0;

    /* set_range() clamps the width; the double must fit int64 before it gets there. */
    if (!(nw < (double)VIEW_MAX_EXTENT * 4))
        nw = (double)VIEW_MAX_EXTENT * 4;

    if (ui->follow) {
        /* Following: the end stays in view, zoom around it. */
        t0 = ui->t1 - (int64_t)nw;
        pps__tui_set_range(ui, t0, ui->t1);
        pps__tui_follow(ui);
        return;
    }
    t0 = t - (int64_t)(left * nw);
    pps__tui_set_range(ui, t0, t0 + (int64_t)nw);
}

void pps__tui_pan(struct pps_tui *ui, int64_t dt)
{
    if (dt < 0 && ui->follow) {
        ui->follow = 0;
        pps__tui_say(ui, "follow off (F turns it on)");
    }
    pps__tui_set_range(ui, ui->t0 + dt, ui->t1 + dt);
}

void pps__tui_fit_all(struct pps_tui *ui, int whole)
{
    int64_t lo = 0, hi = pps__tui_extent(ui), margin;

    if (whole)
        pps__tui_bounds(ui, &lo, &hi);
    margin = (hi - lo) / 100;
    pps__tui_set_range(ui, lo - margin, hi + margin + 1);
}

void pps__tui_fit_iter(struct pps_tui *ui, int it)
{
    const struct pps_report *rep = ui->models[0].rep;
    int64_t base = ui->models[0].run->t_min, t0, t1, margin;

    if (!rep || it < 0 || it >= rep->n_iters)
        return;
    t0 = rep->iters[it].t0 - base;
    t1 = rep->iters[it].t1 - base;
    /* A/B: the view must hold B's aligned iteration too, which may be longer. */
    if (ui->n_models > 1 && ui->models[1].rep) {
        const struct pps_report *rb = ui->models[1].rep;
        for (int i = 0; i < rb->n_iters; i++)
            if (rb->iters[i].iter == rep->iters[it].iter &&
                rb->iters[i].t1 - rb->iters[i].t0 > t1 - t0)
                t1 = t0 + (rb->iters[i].t1 - rb->iters[i].t0);
    }
    margin = (t1 - t0) / 50;
    pps__tui_set_range(ui, t0 - margin, t1 + margin + 1);
}

void pps__tui_follow(struct pps_tui *ui)
{
    int64_t w = ui->t1 - ui->t0, margin = w / 50, end = pps__tui_extent(ui) + margin + 1;

    if (end - w < -margin) /* the whole run fits: it grows from the left edge */
        pps__tui_set_range(ui, -margin, w - margin);
    else
        pps__tui_set_range(ui, end - w, end);
}

/* Opens the runs with pps__tui_model_load(..., first_rows). */
static int open_runs(struct pps_tui *ui, const char *path_a, const char *path_b, size_t first_rows,
                     struct pps_err *err)
{
    const char *paths[2] = {path_a, path_b};
    int rc = 0;

    for (int m = 0; m < 2 && paths[m]; m++) {
        rc = pps__tui_model_load(&ui->models[m], paths[m], first_rows, ui->opts.max_spans,
                                 ui->opts.no_summary, err);
        if (rc < 0) {
            pps_tui_release(ui);
            return rc;
        }
        ui->n_models = m + 1;
    }
    ui->pane = ui->n_models > 1 ? PPS_TUI_PANE_DELTA : PPS_TUI_PANE_STATS;
    pps__tui_fit_all(ui, 0); /* what is held: the spans, before the run's summary */
    ui->refit = pps__tui_loading(ui);
    for (int m = 0; m < ui->n_models; m++)
        if (!ui->models[m].run->complete)
            ui->follow = 1;
    return 0;
}

int pps_tui_open(struct pps_tui *ui, const char *path_a, const char *path_b, struct pps_err *err)
{
    return open_runs(ui, path_a, path_b, 0, err);
}

int pps_tui_open_progressive(struct pps_tui *ui, const char *path_a, const char *path_b,
                             size_t first_rows, struct pps_err *err)
{
    return open_runs(ui, path_a, path_b, first_rows ? first_rows : PPS_TUI_FIRST_ROWS, err);
}

int pps__tui_loading(const struct pps_tui *ui)
{
    for (int m = 0; m < ui->n_models; m++)
        if (ui->models[m].loading || ui->models[m].grow)
            return 1;
    return 0;
}

void pps__tui_loading_text(const struct pps_tui *ui, int m, char *buf, size_t len)
{
    const struct pps_tui_model *md = &ui->models[m];
    int pct = md->load_total > 0 ? (int)(100 * md->load_read / md->load_total) : 0;

    /* Rows written since the first fetch can keep the share below 100 until the end. */
    if (pct > 99)
        pct = 99;
    if (md->loading)
        snprintf(buf, len, "loading%s %d%%", ui->opts.ascii ? "..." : "\xe2\x80\xa6", pct);
    else /* all read; the report is being made on a thread */
        snprintf(buf, len, "loading%s report", ui->opts.ascii ? "..." : "\xe2\x80\xa6");
}

/* After a reload: the selected op again, found by its start, stage and kind. */
static void reselect(struct pps_tui *ui, const struct pps_span *old)
{
    struct pps_tui_index *ix = ui->models[ui->sel.model].index;
    size_t first, count;

    ui->sel.valid = 0;
    if (ui->sel.lane >= pps_tui_index_lanes(ix))
        return;
    pps_tui_index_visible(ix, ui->sel.lane, old->start_ns, old->start_ns + 1, 64, &first, &count);
    for (size_t i = first; i < first + count && i < pps_tui_index_lane_spans(ix, ui->sel.lane);
         i++) {
        const struct pps_span *s = pps_tui_index_span(ix, ui->sel.lane, i);
        if (s->start_ns == old->start_ns && s->kind == old->kind && s->mb == old->mb) {
            ui->sel.pos = i;
            ui->sel.valid = 1;
            return;
        }
    }
}

int pps__tui_sel_span(const struct pps_tui *ui, int m, struct pps_span *out)
{
    if (!ui->sel.valid || ui->sel.model != m || !ui->models[m].index ||
        ui->sel.lane >= pps_tui_index_lanes(ui->models[m].index))
        return 0;
    *out = *pps_tui_index_span(ui->models[m].index, ui->sel.lane, ui->sel.pos);
    return 1;
}

void pps__tui_updated(struct pps_tui *ui, int m, const struct pps_span *old)
{
    int lanes;

    /* The view's times are relative to A's first span: where older iterations were dropped, it
     * moved, and the view stays on the same time. */
    if (m == 0 && ui->models[0].run && ui->models[0].run->t_min != ui->models[0].base_ns) {
        int64_t d = ui->models[0].run->t_min - ui->models[0].base_ns;
        ui->models[0].base_ns = ui->models[0].run->t_min;
        /* On what is left: a view of dropped time moves onto the run, as any move does. */
        pps__tui_set_range(ui, ui->t0 - d, ui->t1 - d);
    }
    if (old)
        reselect(ui, old);
    lanes = pps__tui_lanes(ui, 0) + pps__tui_lanes(ui, 1);
    if (ui->cursor >= lanes)
        ui->cursor = lanes > 0 ? lanes - 1 : 0;
    if (ui->refit) {
        /* A progressive open: show all there is until a key takes over. */
        pps__tui_fit_all(ui, 0);
        ui->refit = pps__tui_loading(ui);
    }
    if (ui->follow)
        pps__tui_follow(ui);
}

int pps_tui_refresh(struct pps_tui *ui, struct pps_err *err)
{
    int changed = 0;

    if (ui->paused)
        return 0;
    for (int m = 0; m < ui->n_models; m++) {
        struct pps_span old;
        int had_sel = pps__tui_sel_span(ui, m, &old);
        int rc = pps__tui_model_update(&ui->models[m], err);

        if (rc < 0)
            return rc;
        if (rc == 0)
            continue;
        pps__tui_updated(ui, m, had_sel ? &old : NULL);
        changed = 1;
    }
    return changed;
}

int pps__tui_select_at(struct pps_tui *ui, int model, int lane, int64_t t, int64_t tol)
{
    struct pps_tui_index *ix;
    size_t pos;

    if (model < 0 || model >= ui->n_models)
        return 0;
    ix = ui->models[model].index;
    if (lane < 0 || lane >= pps_tui_index_lanes(ix))
        return 0;
    if (!pps_tui_index_pick(ix, lane, pps__tui_base(ui, model) + t, tol, &pos))
        return 0;
    ui->sel.valid = 1;
    ui->sel.model = model;
    ui->sel.lane = lane;
    ui->sel.pos = pos;
    return 1;
}

/* The first op at or after position from (dir 1) or at or before it (dir -1), into *out. */
static int find_op(struct pps_tui_index *ix, int lane, long from, int dir, size_t *out)
{
    long n = (long)pps_tui_index_lane_spans(ix, lane);

    for (long i = from; i >= 0 && i < n; i += dir) {
        const struct pps_span *s = pps_tui_index_span(ix, lane, (size_t)i);
        if (s->kind >= PPS_SPAN_F && s->kind <= PPS_SPAN_ROLLBACK) {
            *out = (size_t)i;
            return 1;
        }
    }
    return 0;
}

void pps__tui_select_step(struct pps_tui *ui, int dir)
{
    int model, lane;
    struct pps_tui_index *ix;
    const struct pps_span *s;
    int64_t base, w = ui->t1 - ui->t0, centre;
    size_t first, count, pos;
    long from;

    pps__tui_cursor_lane(ui, &model, &lane);
    if (model >= ui->n_models)
        return;
    ix = ui->models[model].index;
    if (lane >= pps_tui_index_lanes(ix))
        return;
    base = pps__tui_base(ui, model);
    if (ui->sel.valid && ui->sel.model == model && ui->sel.lane == lane) {
        from = (long)ui->sel.pos + dir;
    } else {
        /* From the centre of the view: the first op starting after it, or the last before. */
        centre = base + ui->t0 + w / 2;
        pps_tui_index_visible(ix, lane, centre, INT64_MAX, 0, &first, &count);
        while (first < pps_tui_index_lane_spans(ix, lane) &&
               pps_tui_index_span(ix, lane, first)->start_ns < centre)
            first++;
        from = dir > 0 ? (long)first : (long)first - 1;
    }
    if (!find_op(ix, lane, from, dir, &pos))
        return;
    s = pps_tui_index_span(ix, lane, pos);
    ui->sel.valid = 1;
    ui->sel.model = model;
    ui->sel.lane = lane;
    ui->sel.pos = pos;
    if (s->start_ns - base < ui->t0 || s->end_ns - base > ui->t1) {
        int64_t mid = (s->start_ns + s->end_ns) / 2 - base;
        ui->follow = 0;
        pps__tui_set_range(ui, mid - w / 2, mid - w / 2 + w);
    }
}
