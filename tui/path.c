/*
 * path.c - the critical path in the view (key c): each iteration's chain of ops and transfers
 * as analysis/critpath.c walks it, made from a model's report the first time the view shows it
 * (and again after the report is remade), drawn over the lanes: every op dimmed but the path's,
 * which are bold, and the status line says what the path is made of.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "tui_int.h"

const struct pps_critpath *pps__tui_path(struct pps_tui *ui, int m)
{
    struct pps_tui_model *md = &ui->models[m];
    struct pps_err err = {0, ""};

    if (m < 0 || m >= ui->n_models || !md->rep || !md->run)
        return NULL;
    if (!md->cp && pps_analysis_critpath(md->run, md->rep, &md->cp, &err) < 0)
        md->cp = NULL;
    return md->cp;
}

/* Sets the attributes of the columns [t0, t1) covers in row y (bars of width w from x, a column
 * ns_per_col long from a). */
static void mark(struct pps_tui_frame *f, const struct pps_tui_layout *l, int y, int64_t a,
                 double ns_per_col, int64_t t0, int64_t t1)
{
    int x0 = (int)floor((double)(t0 - a) / ns_per_col);
    int x1 = (int)ceil((double)(t1 - a) / ns_per_col);

    if (x1 == x0)
        x1 = x0 + 1; /* a transfer too short for a column still shows where it is */
    if (x0 < 0)
        x0 = 0;
    if (x1 > l->bars_w)
        x1 = l->bars_w;
    for (int x = x0; x < x1; x++) {
        struct pps_tui_cell *c = pps_tui_frame_at(f, l->bars_x + x, y);
        if (c && c->ch != PPS_TUI_G_IDLE)
            c->attr = (uint8_t)((c->attr & ~PPS_TUI_A_DIM) | PPS_TUI_A_BOLD);
    }
}

/* Whether a span of stage st and chunk c is drawn on the lane of stage and chunk: the index puts
 * a span without a chunk (a message, the optimizer) on its stage's chunk 0. */
static int on_lane(int st, int c, int stage, int chunk, int chunked)
{
    return st == stage && (!chunked || (c < 0 ? 0 : c) == chunk);
}

void pps__tui_path_paint(struct pps_tui *ui, struct pps_tui_frame *f, int model, int lane, int y,
                         int64_t a, int64_t b)
{
    const struct pps_tui_layout *l = &ui->layout;
    const struct pps_tui_index *ix = ui->models[model].index;
    const struct pps_critpath *cp;
    double ns_per_col;
    int stage, chunk, chunked;

    /* The path runs through the host's ops; a device row keeps its look. */
    if (!ui->critpath || !ix || b <= a || l->bars_w < 1 || pps_tui_index_lane_device(ix, lane) ||
        !(cp = pps__tui_path(ui, model)))
        return;
    ns_per_col = (double)(b - a) / l->bars_w;
    pps_tui_index_lane_id(ix, lane, &stage, &chunk);
    chunked = pps_tui_index_chunked(ix);
    for (int x = 0; x < l->bars_w; x++) {
        struct pps_tui_cell *c = pps_tui_frame_at(f, l->bars_x + x, y);
        if (c && c->ch != PPS_TUI_G_IDLE)
            c->attr = (uint8_t)((c->attr | PPS_TUI_A_DIM) & ~PPS_TUI_A_BOLD);
    }
    for (int it = 0; it < cp->n_iters; it++) {
        const struct pps_critpath_iter *ci = &cp->iters[it];

        if (ci->t1 < a || ci->t0 > b)
            continue;
        for (size_t i = 0; i < ci->n_steps; i++) {
            const struct pps_critpath_step *st = &ci->steps[i], *prev = i ? st - 1 : NULL;
            int here = on_lane(st->stage, st->chunk, stage, chunk, chunked);

            if (here && st->end_ns >= a && st->start_ns <= b)
                mark(f, l, y, a, ns_per_col, st->start_ns, st->end_ns);
            /* The message into this step: its receive on this step's stage, its send on the
             * step before's (chunk 0's lane, as messages have no chunk). */
            if (st->has_recv && on_lane(st->stage, -1, stage, chunk, chunked))
                mark(f, l, y, a, ns_per_col, st->recv_start_ns, st->recv_end_ns);
            if (prev && st->has_send && on_lane(prev->stage, -1, stage, chunk, chunked))
                mark(f, l, y, a, ns_per_col, st->send_start_ns, st->send_end_ns);
        }
    }
}

int pps__tui_path_text(struct pps_tui *ui, char *buf, size_t len)
{
    const struct pps_critpath *cp = pps__tui_path(ui, 0);
    const struct pps_critpath_iter *ci;
    char a[32], b[32];
    int it, top = -1;
    size_t n;

    if (len)
        buf[0] = '\0';
    it = pps__tui_iter_at(ui, 0, ui->t0 + (ui->t1 - ui->t0) / 2);
    if (!cp || it < 0 || it >= cp->n_iters || cp->iters[it].n_steps == 0 || len == 0)
        return 0;
    ci = &cp->iters[it];
    for (int s = 0; s < cp->n_stages; s++)
        if (top < 0 || ci->stage_ns[s] > ci->stage_ns[top])
            top = s;
    pps_tui_format_ns(ci->length_ns, a, sizeof(a));
    pps_tui_format_ns(ci->window_ns, b, sizeof(b));
    snprintf(buf, len, "critical path %s of the %s window", a, b);
    n = strlen(buf);
    if (top >= 0 && ci->length_ns > 0 && n < len)
        snprintf(buf + n, len - n, ": s%d %.1f%%, comm %.1f%%, wait %.1f%%", top,
                 100 * ci->stage_ns[top] / ci->length_ns, 100 * ci->comm_ns / ci->length_ns,
                 100 * ci->wait_ns / ci->length_ns);
    return 1;
}
