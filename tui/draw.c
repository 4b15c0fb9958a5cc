/*
 * draw.c - draws the view into a frame: header, lanes, ruler, status line, key bar, and the
 * "too small" screen; the panes are pane.c's, the help screen help.c's.
 *
 * A lane's cells come from the index (pps_tui_index_columns): the kind that covers most of the
 * column, and how much of it is covered. Without colours each kind is a letter (upper case where
 * it covers at least half the column), with colours a solid bar in the kind's colour; idle is a
 * dim dot either way. Where a lane's ops are few enough, each op's microbatch number is written
 * at its start.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "tui_int.h"

int pps__tui_kind_color(int kind)
{
    switch (kind) {
    case PPS_SPAN_F:
        return PPS_TUI_C_F;
    case PPS_SPAN_B:
        return PPS_TUI_C_B;
    case PPS_SPAN_W:
        return PPS_TUI_C_W;
    case PPS_SPAN_BW:
        return PPS_TUI_C_BW;
    case PPS_SPAN_SEND:
    case PPS_SPAN_RECV:
    case PPS_SPAN_MEMCPY:
        return PPS_TUI_C_COMM;
    case PPS_SPAN_WAIT:
        return PPS_TUI_C_WAIT;
    case PPS_SPAN_OPT:
    case PPS_SPAN_ROLLBACK:
        return PPS_TUI_C_OPT;
    default:
        return PPS_TUI_C_OTHER;
    }
}

char pps__tui_kind_letter(int kind, int partial)
{
    static const char letters[PPS_SPAN_KIND_COUNT] = {'?', 'F', 'B', 'W', 'X', '>', '<',
                                                      '~', 'O', 'R', 'K', 'M', '-'};
    char c = kind > 0 && kind < PPS_SPAN_KIND_COUNT ? letters[kind] : '?';

    return partial && c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

/* "s3", "s3.1" for a chunk lane, "s3 dev" for a stage's device row, "A s3" in A/B. */
static void lane_label(const struct pps_tui *ui, int model, int lane, char *buf, size_t len)
{
    const struct pps_tui_index *ix = ui->models[model].index;
    int stage, chunk;
    const char *run = ui->n_models > 1 ? (model ? "B " : "A ") : "";

    pps_tui_index_lane_id(ix, lane, &stage, &chunk);
    if (pps_tui_index_lane_device(ix, lane))
        snprintf(buf, len, "%ss%d dev", run, stage);
    else if (pps_tui_index_chunked(ix))
        snprintf(buf, len, "%ss%d.%d", run, stage, chunk);
    else
        snprintf(buf, len, "%ss%d", run, stage);
}

static int label_width(const struct pps_tui *ui)
{
    int w = 2;

    for (int m = 0; m < ui->n_models; m++) {
        int n = pps__tui_lanes(ui, m);
        char buf[32];
        if (n > 0) {
            lane_label(ui, m, n - 1, buf, sizeof(buf));
            if ((int)strlen(buf) > w)
                w = (int)strlen(buf);
        }
    }
    return w + 2; /* a scroll mark and the cursor mark */
}

/* Keeps the cursor's lane in view: scrolls model's lanes shown in h rows. */
static void scroll_lanes(struct pps_tui *ui, int model, int h)
{
    int cm, cl, n = pps__tui_lanes(ui, model), *top = &ui->lane_top[model];

    pps__tui_cursor_lane(ui, &cm, &cl);
    if (cm == model && h > 0) {
        if (cl < *top)
            *top = cl;
        if (cl >= *top + h)
            *top = cl - h + 1;
    }
    if (*top > n - h)
        *top = n - h;
    if (*top < 0)
        *top = 0;
}

static void draw_op_labels(struct pps_tui *ui, struct pps_tui_frame *f, int model, int lane, int y,
                           int64_t a, int64_t b)
{
    const struct pps_tui_layout *l = &ui->layout;
    const struct pps_tui_index *ix = ui->models[model].index;
    double ns_per_col = (double)(b - a) / l->bars_w;
    size_t first, count;
    int free_x = 0; /* first column a label may use */

    pps_tui_index_visible(ix, lane, a, b, (size_t)l->bars_w / 2, &first, &count);
    if (count > (size_t)l->bars_w / 2)
        return; /* too dense to read: the colours say enough */
    for (size_t i = first; i < first + count; i++) {
        const struct pps_span *s = pps_tui_index_span(ix, lane, i);
        int x0 = (int)floor((double)(s->start_ns - a) / ns_per_col);
        int x1 = (int)ceil((double)(s->end_ns - a) / ns_per_col);
        int sel =
            ui->sel.valid && ui->sel.model == model && ui->sel.lane == lane && ui->sel.pos == i;
        char num[16];
        int len;

        if (x0 < 0)
            x0 = 0;
        if (x1 > l->bars_w)
            x1 = l->bars_w;
        if (sel)
            for (int x = x0; x < x1; x++) {
                struct pps_tui_cell *c = pps_tui_frame_at(f, l->bars_x + x, y);
                if (c)
                    c->attr |= PPS_TUI_A_UNDER | PPS_TUI_A_BOLD;
            }
        if (s->kind < PPS_SPAN_F || s->kind > PPS_SPAN_ROLLBACK || s->mb < 0 || x0 < free_x)
            continue;
        len = snprintf(num, sizeof(num), "%d", s->mb);
        /* Room for the number and at least one cell of the op's own letter or colour. */
        if (x1 - x0 < len + 1 || (double)(s->end_ns - s->start_ns) / ns_per_col < len + 1)
            continue;
        pps_tui_frame_text(f, l->bars_x + x0, y, len, num, pps__tui_kind_color(s->kind),
                           ui->opts.color ? PPS_TUI_A_REVERSE | PPS_TUI_A_BOLD : 0);
        free_x = x0 + len;
    }
}

static void draw_lane(struct pps_tui *ui, struct pps_tui_frame *f, int model, int lane, int y,
                      int mark)
{
    const struct pps_tui_layout *l = &ui->layout;
    struct pps_tui_col cols[PPS__TUI_MAX_COLS];
    struct pps__tui_lod_col lod[PPS__TUI_MAX_COLS];
    const struct pps_tui_model *m = &ui->models[model];
    int64_t base = pps__tui_base(ui, model), a = base + ui->t0, b = base + ui->t1;
    int cm, cl, n = l->bars_w < PPS__TUI_MAX_COLS ? l->bars_w : PPS__TUI_MAX_COLS, stage, chunk;
    char label[32];

    pps__tui_cursor_lane(ui, &cm, &cl);
    lane_label(ui, model, lane, label, sizeof(label));
    pps_tui_frame_text(f, 0, y, l->label_w - 2, label, PPS_TUI_C_DEFAULT,
                       cm == model && cl == lane ? PPS_TUI_A_REVERSE | PPS_TUI_A_BOLD : 0);
    /* [label][scroll mark][cursor mark]: the cursor's lane shows '>' also without colours. */
    if (mark)
        pps_tui_frame_put(f, l->label_w - 2, y, (uint32_t)mark, PPS_TUI_C_DIM, 0);
    if (cm == model && cl == lane)
        pps_tui_frame_put(f, l->label_w - 1, y, '>', PPS_TUI_C_KEY, PPS_TUI_A_BOLD);
    pps_tui_index_columns(m->index, lane, a, b, n, cols);
    /* Past the time held: the run's other iterations, from its summary (lod.c). */
    /* A stage's figures, on its first lane (a run with chunks has a lane per chunk); not in A/B,
     * which reads no other iterations. */
    stage = chunk = -1;
    if (m->index && ui->n_models == 1)
        pps_tui_index_lane_id(m->index, lane, &stage, &chunk);
    pps__tui_lod_columns(m, chunk > 0 ? -1 : stage, pps_tui_index_lane_device(m->index, lane), a,
                         b, n, lod);
    for (int x = 0; x < n; x++) {
        int k = cols[x].kind, partial = cols[x].cover < 128;

        /* The summary where no span held is: a straggler of a held iteration in another's
         * window shows as itself. */
        if (lod[x].level > 0 && !k && ui->opts.ascii) /* eighths as digits: no ASCII ramp is */
            pps_tui_frame_put(f, l->bars_x + x, y, (uint32_t)('0' + lod[x].level),
                              pps__tui_kind_color(lod[x].kind), 0);
        else if (lod[x].level > 0 && !k)
            pps_tui_frame_put(f, l->bars_x + x, y, PPS_TUI_G_SPARK0 + (uint32_t)lod[x].level - 1,
                              pps__tui_kind_color(lod[x].kind), 0);
        else if (!k)
            pps_tui_frame_put(f, l->bars_x + x, y, PPS_TUI_G_IDLE, PPS_TUI_C_IDLE, 0);
        else if (!ui->opts.color || k == PPS_SPAN_WAIT)
            /* Waiting is idle the runtime knows about: a letter, never a solid bar. */
            pps_tui_frame_put(f, l->bars_x + x, y, (uint32_t)pps__tui_kind_letter(k, partial),
                              pps__tui_kind_color(k), 0);
        else if (!partial)
            pps_tui_frame_put(f, l->bars_x + x, y, ' ', pps__tui_kind_color(k), PPS_TUI_A_REVERSE);
        else
            pps_tui_frame_put(f, l->bars_x + x, y, PPS_TUI_G_LIGHT, pps__tui_kind_color(k), 0);
    }
    draw_op_labels(ui, f, model, lane, y, a, b);
    pps__tui_path_paint(ui, f, model, lane, y, a, b);
}

static void draw_lanes(struct pps_tui *ui, struct pps_tui_frame *f, int model,
                       struct pps_tui_rect r)
{
    int n = pps__tui_lanes(ui, model), top;

    scroll_lanes(ui, model, r.h);
    top = ui->lane_top[model];
    for (int i = 0; i < r.h && top + i < n; i++) {
        int mark = 0;
        if (i == 0 && top > 0)
            mark = '^';
        else if (i == r.h - 1 && top + i < n - 1)
            mark = 'v';
        draw_lane(ui, f, model, top + i, r.y + i, mark);
    }
}

/* The run's schedule; "schedule unknown" where the run does not say, as `ppscope report` says. */
static const char *run_name(const struct pps_tui_model *m)
{
    const char *name = m->rep ? pps_report_schedule_name(m->run, m->rep) : m->run->schedule;

    return name && name[0] ? name : "schedule unknown";
}

/* p or m of the report into buf: "?" where the run does not say (the report holds 0 then), as
 * `ppscope report` prints it. Returns buf. */
static const char *known_int(int v, char *buf, size_t len)
{
    if (v > 0)
        snprintf(buf, len, "%d", v);
    else
        snprintf(buf, len, "?");
    return buf;
}

/* path in at most w columns: whole, or an ellipsis and as many of its last components as fit
 * ("…/x/rank-00000.db"); empty when not even the last one fits. */
static void fit_path(const char *path, int w, int ascii, char *buf, size_t len)
{
    const char *ell = ascii ? "..." : "\xe2\x80\xa6";
    int ell_w = ascii ? 3 : 1;

    buf[0] = '\0';
    if (pps__tui_text_w(path) <= w) {
        snprintf(buf, len, "%s", path);
        return;
    }
    for (const char *p = strchr(path, '/'); p && p[1]; p = strchr(p + 1, '/'))
        if (ell_w + pps__tui_text_w(p) <= w) {
            snprintf(buf, len, "%s%s", ell, p);
            return;
        }
}

/* The two runs' paths of the A/B header in w columns: each whole where both fit, else the
 * room shared between them, the shorter keeping what it needs. */
static void fit_paths(const struct pps_tui *ui, int w, char *a, char *b, size_t len)
{
    const char *pa = ui->models[0].path, *pb = ui->models[1].path;
    int wa = pps__tui_text_w(pa), wb = pps__tui_text_w(pb), ra = w / 2, rb = w - w / 2;

    if (wa + wb <= w)
        ra = wa, rb = wb;
    else if (wa <= ra)
        ra = wa, rb = w - wa;
    else if (wb <= rb)
        rb = wb, ra = w - wb;
    fit_path(pa, ra, ui->opts.ascii, a, len);
    fit_path(pb, rb, ui->opts.ascii, b, len);
}

/*
 * What the run lost, as the report says it: spans the tracer dropped (counted), and planned
 * iterations with none of their ops, once the run is over (ended, or its writers gone: a live
 * run has simply not reached them). The first run's, or B's where A lost nothing.
 */
static void lost_tag(const struct pps_tui *ui, int over, char *buf, size_t len)
{
    buf[0] = '\0';
    for (int i = 0; i < ui->n_models && !buf[0]; i++) {
        const struct pps_report *rep = ui->models[i].rep;
        const char *ab = ui->n_models > 1 ? (i ? "B " : "A ") : "";

        if (!rep)
            continue;
        if (over && rep->n_missing == 1)
            snprintf(buf, len, " [%sMISSING ITER %d]", ab, rep->missing_first);
        else if (over && rep->n_missing > 0)
            snprintf(buf, len, " [%sMISSING %d ITERS]", ab, rep->n_missing);
        else if (rep->dropped > 0)
            snprintf(buf, len, " [%sDROPPED %lld]", ab, (long long)rep->dropped);
    }
}

/* Whether the model holds part of its run's iterations (--max-spans dropped the others). */
static int holds_part(const struct pps_tui_model *m)
{
    return m->run->first_iter > 0 || m->run->end_iter > 0;
}

/* ", iters A-B" where the model dropped its oldest iterations (--max-spans), else "". */
static const char *kept_text(const struct pps_tui_model *m, char *buf, size_t len)
{
    buf[0] = '\0';
    if (holds_part(m) && m->rep && m->rep->n_iters > 0)
        snprintf(buf, len, ", iters %d-%d", m->rep->iters[0].iter,
                 m->rep->iters[m->rep->n_iters - 1].iter);
    return buf;
}

static void draw_header(struct pps_tui *ui, struct pps_tui_frame *f)
{
    struct pps_tui_rect r = ui->layout.header;
    char tags[192] = "", text[1024], pa[256], pb[256], p[16], m_[16], bub[16];
    char ranks[96], missing[160] = "", lost[64];
    int live = 0, gone = 1, reading = 0, x, tw, room, n_missing = 0;
    const char *live_tag;

    for (int m = 0; m < ui->n_models; m++) {
        /* A run that lost its writers (killed) will not grow: it is not live, and says so. */
        if (!ui->models[m].run->complete) {
            live = 1;
            gone &= pps_run_writers_gone(ui->models[m].run);
        }
        /* A run without some ranks' shards says which, as the report's status does. */
        if (!n_missing &&
            (n_missing = pps_run_missing_text(ui->models[m].run, ranks, sizeof(ranks))))
            snprintf(missing, sizeof(missing), " [MISSING RANK%s %s]", n_missing == 1 ? "" : "S",
                     ranks);
    }
    live_tag = !live ? "" : gone ? " [NO WRITER]" : " [LIVE]";
    lost_tag(ui, !live || gone, lost, sizeof(lost));
    if (lost[0] && strlen(missing) + strlen(lost) < sizeof(missing))
        strcat(missing, lost);
    /* A progressive open through the index: older iterations are still being read. */
    for (int m = 0; m < ui->n_models; m++)
        reading |= ui->models[m].grow != NULL;
    snprintf(tags, sizeof(tags), "%s%s%s%s%s", missing, live_tag, reading ? " [READING]" : "",
             ui->follow ? " [FOLLOW]" : "", ui->paused ? " [PAUSED]" : "");
    tw = (int)strlen(tags);
    for (int i = 0; i < r.w; i++)
        pps_tui_frame_put(f, i, r.y, ' ', PPS_TUI_C_TITLE, PPS_TUI_A_REVERSE);
    /* The figures first, then the paths in what room is left: a long path loses its first
     * directories (an ellipsis says so), never the run's name. */
    room = r.w - tw - 1;
    if (ui->n_models > 1) {
        /* Each run's kept iterations where it dropped some: the two may hold different ones. */
        char ka[64], kb[64];
        kept_text(&ui->models[0], ka, sizeof(ka));
        kept_text(&ui->models[1], kb, sizeof(kb));
        snprintf(text, sizeof(text), "ppscope view  A  (%s%s)  vs  B  (%s%s)",
                 run_name(&ui->models[0]), ka, run_name(&ui->models[1]), kb);
        fit_paths(ui, room - pps__tui_text_w(text), pa, pb, sizeof(pa));
        snprintf(text, sizeof(text), "ppscope view  A %s (%s%s)  vs  B %s (%s%s)", pa,
                 run_name(&ui->models[0]), ka, pb, run_name(&ui->models[1]), kb);
    } else {
        const struct pps_tui_model *m = &ui->models[0];
        const struct pps_report *rep = m->rep;
        char load[64];

        if (!rep) {
            /* A progressive open: the figures come with the report, once the run is all in. */
            pps__tui_loading_text(ui, 0, load, sizeof(load));
            snprintf(text, sizeof(text), "ppscope view  %s  %s  ", run_name(m), load);
        } else {
            /* The bubble the verdict judges: the steady one for a post-validated run. */
            int steady = rep->basis == PPS_BASIS_STEADY;
            double shown = steady ? rep->judged_measured : rep->bubble;

            if (isnan(shown))
                snprintf(bub, sizeof(bub), "n/a");
            else
                snprintf(bub, sizeof(bub), "%.1f%%", 100 * shown);
            const char *src = pps_run_meta(m->run, "source");

            char iters[64];

            /* Where the oldest were dropped (--max-spans): which iterations the figures are of. */
            if (holds_part(m) && rep->n_iters > 0)
                snprintf(iters, sizeof(iters), "iters %d-%d of %d", rep->iters[0].iter,
                         rep->iters[rep->n_iters - 1].iter, m->run->n_iters);
            else
                snprintf(iters, sizeof(iters), "%d iter%s", rep->n_iters,
                         rep->n_iters == 1 ? "" : "s");
            snprintf(text, sizeof(text), "ppscope view  %s p=%s m=%s v=%d  %s  %s %s  %s%s%s",
                     run_name(m), known_int(rep->p, p, sizeof(p)),
                     known_int(rep->m, m_, sizeof(m_)), rep->v, iters,
                     steady ? "steady bubble" : "bubble", bub, src ? "from " : "", src ? src : "",
                     src ? "  " : "");
        }
        fit_path(m->path, room - pps__tui_text_w(text), ui->opts.ascii, pa, sizeof(pa));
        snprintf(text + strlen(text), sizeof(text) - strlen(text), "%s", pa);
    }
    x = pps_tui_frame_text(f, 0, r.y, r.w - tw - 1, text, PPS_TUI_C_TITLE,
                           PPS_TUI_A_REVERSE | PPS_TUI_A_BOLD);
    (void)x;
    /* The state tags at the right edge; PAUSED loud, where it cannot be missed. */
    x = r.w - tw;
    if (x < 0)
        x = 0;
    if (missing[0])
        x += pps_tui_frame_text(f, x, r.y, -1, missing, PPS_TUI_C_WARN,
                                PPS_TUI_A_REVERSE | PPS_TUI_A_BOLD);
    if (live)
        x += pps_tui_frame_text(f, x, r.y, -1, live_tag, gone ? PPS_TUI_C_WARN : PPS_TUI_C_GOOD,
                                PPS_TUI_A_REVERSE);
    if (reading)
        x += pps_tui_frame_text(f, x, r.y, -1, " [READING]", PPS_TUI_C_TITLE, PPS_TUI_A_REVERSE);
    if (ui->follow)
        x += pps_tui_frame_text(f, x, r.y, -1, " [FOLLOW]", PPS_TUI_C_TITLE, PPS_TUI_A_REVERSE);
    if (ui->paused) {
        pps_tui_frame_put(f, x++, r.y, ' ', PPS_TUI_C_TITLE, PPS_TUI_A_REVERSE);
        pps_tui_frame_text(f, x, r.y, -1, "[PAUSED]", PPS_TUI_C_WARN,
                           PPS_TUI_A_REVERSE | PPS_TUI_A_BOLD);
    }
}

/* Writes text from *x on row y of the status line when it fits whole in [*x, end); returns 1 if it
 * did. The status line drops a part that does not fit rather than cut it. */
static int put_whole(struct pps_tui_frame *f, int *x, int y, int end, const char *text, int color,
                     int attr)
{
    int w = pps__tui_text_w(text);

    if (*x + w > end)
        return 0;
    *x += pps_tui_frame_text(f, *x, y, w, text, color, attr);
    return 1;
}

/*
 * The selected op on the status line: its kind, then only the fields that apply to it (a send, a
 * receive, a wait or the optimizer has no chunk, maybe no microbatch or iteration: the trace
 * holds -1 there, which means "none", not a number to show), each whole where it fits; its name,
 * last, cut with an ellipsis where it is too long.
 */
static void draw_selection(struct pps_tui *ui, struct pps_tui_frame *f, int x, int y, int end)
{
    const struct pps_tui_model *m = &ui->models[ui->sel.model];
    const struct pps_span *s = pps_tui_index_span(m->index, ui->sel.lane, ui->sel.pos);
    const char *name = pps_run_span_name(m->run, s);
    char buf[160], t[32];
    int a = PPS_TUI_A_BOLD, c = PPS_TUI_C_DEFAULT;

    snprintf(buf, sizeof(buf), "%s[%s]", ui->n_models > 1 ? (ui->sel.model ? "B: " : "A: ") : "",
             pps_span_kind_name(s->kind));
    put_whole(f, &x, y, end, buf, c, a);
    if (s->stage >= 0) {
        snprintf(buf, sizeof(buf), " stage %d", s->stage);
        put_whole(f, &x, y, end, buf, c, a);
    }
    if (s->chunk >= 0) {
        snprintf(buf, sizeof(buf), " chunk %d", s->chunk);
        put_whole(f, &x, y, end, buf, c, a);
    }
    if (s->mb >= 0) {
        snprintf(buf, sizeof(buf), "  mb %d", s->mb);
        put_whole(f, &x, y, end, buf, c, a);
    }
    if (s->iter >= 0) {
        snprintf(buf, sizeof(buf), "  iter %d", s->iter);
        put_whole(f, &x, y, end, buf, c, a);
    }
    pps_tui_format_ns((double)(s->start_ns - pps__tui_base(ui, ui->sel.model)), t, sizeof(t));
    snprintf(buf, sizeof(buf), "  start %s", t);
    put_whole(f, &x, y, end, buf, c, a);
    pps_tui_format_ns((double)(s->end_ns - s->start_ns), t, sizeof(t));
    snprintf(buf, sizeof(buf), "  dur %s", t);
    put_whole(f, &x, y, end, buf, c, a);
    if (s->peer >= 0) {
        snprintf(buf, sizeof(buf), "  peer s%d", s->peer);
        put_whole(f, &x, y, end, buf, c, a);
    }
    if (s->bytes > 0) {
        snprintf(buf, sizeof(buf), "  %lld bytes (%.2f MiB)", (long long)s->bytes,
                 (double)s->bytes / 1048576.0);
        if (!put_whole(f, &x, y, end, buf, c, a)) {
            snprintf(buf, sizeof(buf), "  %.2f MiB", (double)s->bytes / 1048576.0);
            put_whole(f, &x, y, end, buf, c, a);
        }
    }
    if (name && x + 3 < end) {
        x += pps_tui_frame_text(f, x, y, 2, "  ", c, a);
        pps__tui_text_fit(f, x, y, end - x, name, c, a, ui->opts.ascii);
    }
}

static void draw_status(struct pps_tui *ui, struct pps_tui_frame *f)
{
    struct pps_tui_rect r = ui->layout.status;
    char buf[320], a[32], b[32], e[32], col[32];
    int x = 0, it, lod_it, end = r.x + r.w;
    int64_t lo, hi;

    if (ui->paused)
        x = pps_tui_frame_text(f, 0, r.y, r.w, "[PAUSED] ", PPS_TUI_C_WARN,
                               PPS_TUI_A_REVERSE | PPS_TUI_A_BOLD) +
            1;
    if (ui->message[0]) {
        pps__tui_text_fit(f, x, r.y, end - x, ui->message, PPS_TUI_C_KEY, PPS_TUI_A_BOLD,
                          ui->opts.ascii);
        return;
    }
    if (ui->sel.valid && ui->sel.model < ui->n_models) {
        draw_selection(ui, f, x, r.y, end);
        return;
    }
    pps_tui_format_ns((double)ui->t0, a, sizeof(a));
    pps_tui_format_ns((double)ui->t1, b, sizeof(b));
    pps__tui_bounds(ui, &lo, &hi);
    pps_tui_format_ns((double)(hi - lo), e, sizeof(e));
    pps_tui_format_ns((double)(ui->t1 - ui->t0) / (ui->layout.bars_w > 0 ? ui->layout.bars_w : 1),
                      col, sizeof(col));
    it = pps__tui_iter_at(ui, 0, ui->t0 + (ui->t1 - ui->t0) / 2);
    /* Each part whole or not at all: the range, the column's time, the iteration, the flags. */
    snprintf(buf, sizeof(buf), "view %s..%s of %s", a, b, e);
    put_whole(f, &x, r.y, end, buf, PPS_TUI_C_DIM, 0);
    snprintf(buf, sizeof(buf), "  1 col = %s", col);
    put_whole(f, &x, r.y, end, buf, PPS_TUI_C_DIM, 0);
    lod_it = ui->n_models == 1 ? pps__tui_lod_iter_at(&ui->models[0], ui->t0 + (ui->t1 - ui->t0) / 2)
                               : -1;
    if (lod_it >= 0) {
        /* Past the time held: the run's own iteration there, which its summary knows. */
        snprintf(buf, sizeof(buf), "  iteration %d (from the summary; not held)",
                 ui->models[0].run_iters.iter[lod_it]);
        put_whole(f, &x, r.y, end, buf, PPS_TUI_C_DIM, 0);
    } else if (it >= 0) {
        snprintf(buf, sizeof(buf), "  iteration %d (%d of %d%s)", ui->models[0].rep->iters[it].iter,
                 it + 1, ui->models[0].rep->n_iters,
                 holds_part(&ui->models[0]) ? " kept" : "");
        put_whole(f, &x, r.y, end, buf, PPS_TUI_C_DIM, 0);
    }
    if (ui->critpath && pps__tui_path_text(ui, buf + 2, sizeof(buf) - 2)) {
        buf[0] = buf[1] = ' ';
        put_whole(f, &x, r.y, end, buf, PPS_TUI_C_KEY, PPS_TUI_A_BOLD);
    }
    for (int m = 0; m < ui->n_models; m++) {
        size_t nf = ui->models[m].flags.n;
        if (!nf)
            continue;
        snprintf(buf, sizeof(buf), "  %s%zu flag%s", ui->n_models > 1 ? (m ? "B " : "A ") : "", nf,
                 nf == 1 ? "" : "s");
        put_whole(f, &x, r.y, end, buf, PPS_TUI_C_WARN, PPS_TUI_A_BOLD);
    }
}

static void draw_ruler(struct pps_tui *ui, struct pps_tui_frame *f)
{
    const struct pps_tui_layout *l = &ui->layout;

    /* The cursor: Enter selects on the cursor's lane at this column. */
    pps_tui_ruler_draw(f, l->bars_x, l->ruler.y, l->bars_w, ui->t0, ui->t1, l->bars_w / 2);
}

static void draw_keybar(struct pps_tui *ui, struct pps_tui_frame *f)
{
    struct pps_tui_rect r = ui->layout.keybar;
    int x = 0;

    for (const struct pps_tui_keydef *k = pps_tui_keytab(); k->fn; k++) {
        const char *sp;
        int kw = 0, w = 0;

        if (!k->bar)
            continue;
        sp = strchr(k->bar, ' ');
        /* Widths in columns: one per code point (UTF-8 continuation bytes take none). */
        for (const char *c = k->bar; *c; c++)
            if ((*c & 0xC0) != 0x80) {
                w++;
                kw += !sp || c < sp;
            }
        /* Stop before an item that would not fit whole. */
        if (x + w > r.w)
            break;
        x += pps_tui_frame_text(f, x, r.y, kw > 0 ? kw : 0, k->bar, PPS_TUI_C_KEY,
                                PPS_TUI_A_REVERSE);
        x += pps_tui_frame_text(f, x, r.y, r.w - x, sp ? sp : "", PPS_TUI_C_DEFAULT, 0);
        x++;
    }
}

static void draw_too_small(struct pps_tui *ui, struct pps_tui_frame *f)
{
    const struct pps_tui_layout *l = &ui->layout;
    char lines[3][64];

    snprintf(lines[0], sizeof(lines[0]), "terminal too small");
    snprintf(lines[1], sizeof(lines[1]), "have %dx%d, need %dx%d", l->cols, l->rows, l->need_cols,
             l->need_rows);
    snprintf(lines[2], sizeof(lines[2]), "q quits");
    for (int i = 0; i < 3; i++) {
        int w = (int)strlen(lines[i]), y = f->rows / 2 - 1 + i, x = (f->cols - w) / 2;
        if (f->rows < 3)
            y = i;
        pps_tui_frame_text(f, x < 0 ? 0 : x, y, f->cols, lines[i],
                           i == 1 ? PPS_TUI_C_WARN : PPS_TUI_C_DEFAULT,
                           i == 1 ? PPS_TUI_A_BOLD : 0);
    }
}

void pps_tui_draw(struct pps_tui *ui, struct pps_tui_frame *f)
{
    struct pps_tui_layout_req req;
    int next;

    pps_tui_frame_clear(f);
    req.cols = f->cols;
    req.rows = f->rows;
    req.lanes_a = pps__tui_lanes(ui, 0);
    req.lanes_b = pps__tui_lanes(ui, 1);
    req.label_w = label_width(ui);
    pps_tui_layout(&req, &ui->layout);
    if (!ui->layout.ok) {
        draw_too_small(ui, f);
        return;
    }
    draw_header(ui, f);
    draw_lanes(ui, f, 0, ui->layout.lanes_a);
    if (ui->n_models > 1)
        draw_lanes(ui, f, 1, ui->layout.lanes_b);
    draw_ruler(ui, f);
    draw_status(ui, f);
    pps__tui_draw_pane(ui, f, ui->layout.pane, ui->pane);
    if (ui->layout.side.w > 0) {
        next = (ui->pane + 1) % PPS_TUI_PANE_COUNT;
        if (next == PPS_TUI_PANE_DELTA && ui->n_models < 2)
            next = (next + 1) % PPS_TUI_PANE_COUNT;
        if (next != ui->pane)
            pps__tui_draw_pane(ui, f, ui->layout.side, next);
    }
    draw_keybar(ui, f);
    if (ui->help)
        pps__tui_draw_help(ui, f);
}
