/*
 * pane.c - the panes under the timeline: stats (per stage busy by kind, idle and wait; the
 * bubble beside the theory and the prediction; the verdict), flags (each with its evidence, and
 * loss and iteration time over the run as small charts), and for A/B the delta table.
 * Everything shown comes from analysis/; this file only lays it out.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tui_int.h"

static const char *const pane_names[PPS_TUI_PANE_COUNT] = {"Stats", "Flags+charts", "A/B delta"};

/* Kinds the stats table can show, in its order. */
static const int table_kinds[] = {PPS_SPAN_F,   PPS_SPAN_B,    PPS_SPAN_W,   PPS_SPAN_BW,
                                  PPS_SPAN_OPT, PPS_SPAN_SEND, PPS_SPAN_RECV};
#define N_TABLE_KINDS ((int)(sizeof(table_kinds) / sizeof(table_kinds[0])))

int pps__tui_wrap(struct pps_tui_frame *f, int x, int y, int w, int max_lines, const char *text,
                  int color, int attr)
{
    int lines = 0;
    const char *p = text;

    while (*p && lines < max_lines && w > 0) {
        int len = (int)strlen(p), cut = len;

        if (len > w) {
            cut = w;
            while (cut > 0 && p[cut] != ' ')
                cut--;
            if (cut == 0)
                cut = w;
        }
        pps_tui_frame_printf(f, x, y + lines, w, color, attr, "%.*s", cut, p);
        p += cut;
        while (*p == ' ')
            p++;
        lines++;
    }
    return lines;
}

static void pct(double frac, char *buf, size_t len)
{
    if (isnan(frac))
        snprintf(buf, len, "n/a");
    else
        snprintf(buf, len, "%.1f%%", 100 * frac);
}

/* The model the stats and flags panes show: the cursor's run. */
static int pane_model(const struct pps_tui *ui)
{
    int m, lane;

    pps__tui_cursor_lane(ui, &m, &lane);
    return m < ui->n_models ? m : 0;
}

static void draw_title(struct pps_tui *ui, struct pps_tui_frame *f, struct pps_tui_rect r, int pane)
{
    int x = r.x;

    for (int i = 0; i < r.w; i++)
        pps_tui_frame_put(f, r.x + i, r.y, PPS_TUI_G_HLINE, PPS_TUI_C_DIM, 0);
    for (int p = 0; p < PPS_TUI_PANE_COUNT; p++) {
        if (p == PPS_TUI_PANE_DELTA && ui->n_models < 2)
            continue;
        x += 1;
        /* Brackets mark the pane shown, also where there is no reverse video (text). */
        x += pps_tui_frame_printf(f, x, r.y, r.x + r.w - x, PPS_TUI_C_TITLE,
                                  p == pane ? PPS_TUI_A_REVERSE | PPS_TUI_A_BOLD : 0,
                                  p == pane ? "[%s]" : " %s ", pane_names[p]);
    }
    if (ui->n_models > 1 && pane != PPS_TUI_PANE_DELTA)
        pps_tui_frame_printf(f, x + 2, r.y, r.x + r.w - x - 2, PPS_TUI_C_DEFAULT, PPS_TUI_A_BOLD,
                             " run %c ", pane_model(ui) ? 'B' : 'A');
}

/* Bubble, theory, prediction and verdict: as many of those lines as fit; returns lines used. */
static int draw_bubble(const struct pps_tui_model *m, struct pps_tui_frame *f, int x, int y, int w,
                       int h)
{
    const struct pps_report *rep = m->rep;
    char a[32], b[32], c[32], verdict[320];
    int n = 0, v;

    if (h <= 0)
        return 0;
    pct(rep->bubble, a, sizeof(a));
    if (rep->have_prediction) {
        pct(rep->pred.bubble, b, sizeof(b));
        pps_tui_frame_printf(f, x, y + n++, w, PPS_TUI_C_DEFAULT, 0,
                             "bubble   measured %-7s predicted %s (%s, measured op costs)", a, b,
                             m->run->schedule);
    } else {
        pps_tui_frame_printf(f, x, y + n++, w, PPS_TUI_C_DEFAULT, 0,
                             "bubble   measured %-7s predicted n/a: %s", a, rep->prediction_note);
    }
    if (n < h) {
        pct(rep->bubble_quoted, a, sizeof(a));
        pct(rep->bubble_exact, c, sizeof(c));
        pps_tui_frame_printf(f, x, y + n++, w, PPS_TUI_C_DEFAULT, 0, "theory   (p-1)/m %-7s %s %s",
                             a, rep->v > 1 ? "(p-1)/(v*m+p-1)" : "(p-1)/(m+p-1)", c);
    }
    if (n < h) {
        v = pps_report_verdict(rep, verdict, sizeof(verdict));
        pps_tui_frame_text(f, x, y + n, 9, "verdict", PPS_TUI_C_DEFAULT, 0);
        n += pps__tui_wrap(f, x + 9, y + n, w - 9, h - n > 1 ? 2 : 1, verdict,
                           v == PPS_VERDICT_ABOVE          ? PPS_TUI_C_WARN
                           : v == PPS_VERDICT_AS_PREDICTED ? PPS_TUI_C_GOOD
                                                           : PPS_TUI_C_DEFAULT,
                           PPS_TUI_A_BOLD);
    }
    return n;
}

static int stage_flagged(const struct pps_tui_model *m, int s)
{
    for (size_t i = 0; i < m->flags.n; i++)
        if (m->flags.items[i].stage == s)
            return 1;
    return 0;
}

static void draw_stats(struct pps_tui *ui, struct pps_tui_frame *f, struct pps_tui_rect r)
{
    const struct pps_tui_model *m = &ui->models[pane_model(ui)];
    const struct pps_report *rep = m->rep;
    int shown[N_TABLE_KINDS], y = r.y + 1, end = r.y + r.h, x, n_it = rep->n_iters;
    double max_ns = 0, unit = 1e6;
    const char *uname = "ms";

    y += draw_bubble(m, f, r.x + 1, y, r.w - 2, end - y);
    if (y >= end || n_it < 1)
        return;
    for (int k = 0; k < N_TABLE_KINDS; k++) {
        shown[k] = k == 0;
        for (int s = 0; s < rep->n_stages; s++) {
            double t = rep->total[s].busy_ns[table_kinds[k]] / n_it;
            if (t > 0)
                shown[k] = 1;
            if (t > max_ns)
                max_ns = t;
        }
    }
    if (max_ns < 1e6) {
        unit = 1e3;
        uname = "us";
    } else if (max_ns >= 1e10) {
        unit = 1e9;
        uname = "s";
    }
    x = r.x + 1;
    x += pps_tui_frame_printf(f, x, y, r.x + r.w - x, PPS_TUI_C_DIM, PPS_TUI_A_BOLD, "stage");
    for (int k = 0; k < N_TABLE_KINDS; k++)
        if (shown[k])
            x += pps_tui_frame_printf(f, x, y, r.x + r.w - x, PPS_TUI_C_DIM, PPS_TUI_A_BOLD, " %8s",
                                      pps_span_kind_name(table_kinds[k]));
    pps_tui_frame_printf(f, x, y, r.x + r.w - x, PPS_TUI_C_DIM, PPS_TUI_A_BOLD,
                         "    idle    wait  (%s per iteration)", uname);
    y++;
    for (int s = 0; s < rep->n_stages && y < end; s++, y++) {
        const struct pps_stage_stats *t = &rep->total[s];
        double wait = rep->total_window_ns > 0 ? t->wait_ns / rep->total_window_ns : 0;

        x = r.x + 1;
        x += pps_tui_frame_printf(f, x, y, r.x + r.w - x, PPS_TUI_C_DEFAULT, 0, "%4d", s);
        x += pps_tui_frame_printf(f, x, y, 1, PPS_TUI_C_WARN, PPS_TUI_A_BOLD, "%s",
                                  stage_flagged(m, s) ? "!" : " ");
        for (int k = 0; k < N_TABLE_KINDS; k++)
            if (shown[k])
                x += pps_tui_frame_printf(f, x, y, r.x + r.w - x,
                                          pps__tui_kind_color(table_kinds[k]), 0, " %8.3f",
                                          t->busy_ns[table_kinds[k]] / n_it / unit);
        pps_tui_frame_printf(f, x, y, r.x + r.w - x, PPS_TUI_C_DEFAULT, 0, " %6.1f%% %6.1f%%",
                             100 * t->idle_frac, 100 * wait);
    }
    for (size_t i = 0; i < m->flags.n && y < end; i++, y++) {
        pps_tui_frame_put(f, r.x + 1, y, PPS_TUI_G_FLAG, PPS_TUI_C_WARN, PPS_TUI_A_BOLD);
        pps_tui_frame_text(f, r.x + 3, y, r.w - 4, m->flags.items[i].text, PPS_TUI_C_WARN, 0);
    }
}

/* A sparkline of n values (NaN skipped) in w cells from (x, y), with its range as a label. */
static void draw_chart(struct pps_tui_frame *f, int x, int y, int w, const char *label,
                       const double *v, int n, int as_time)
{
    double lo = INFINITY, hi = -INFINITY;
    char a[32], b[32];
    int lw;

    for (int i = 0; i < n; i++)
        if (!isnan(v[i])) {
            lo = v[i] < lo ? v[i] : lo;
            hi = v[i] > hi ? v[i] : hi;
        }
    if (lo > hi) {
        pps_tui_frame_printf(f, x, y, w, PPS_TUI_C_DIM, 0, "%s: none recorded", label);
        return;
    }
    if (as_time) {
        pps_tui_format_ns(lo, a, sizeof(a));
        pps_tui_format_ns(hi, b, sizeof(b));
    } else {
        snprintf(a, sizeof(a), "%.4g", lo);
        snprintf(b, sizeof(b), "%.4g", hi);
    }
    lw = pps_tui_frame_printf(f, x, y, w, PPS_TUI_C_DEFAULT, 0, "%-15s %s..%s ", label, a, b);
    x += lw;
    w -= lw;
    /* One cell per iteration, or the mean of a run of iterations when they outnumber cells. */
    for (int c = 0; c < w && c < n; c++) {
        int i0 = (int)((long)c * n / (w < n ? w : n)),
            i1 = (int)((long)(c + 1) * n / (w < n ? w : n));
        double sum = 0;
        int k = 0, lvl;

        for (int i = i0; i < i1; i++)
            if (!isnan(v[i])) {
                sum += v[i];
                k++;
            }
        if (!k)
            continue;
        lvl = hi > lo ? (int)lround(7 * (sum / k - lo) / (hi - lo)) : 3;
        pps_tui_frame_put(f, x + c, y, PPS_TUI_G_SPARK0 + (uint32_t)lvl, PPS_TUI_C_KEY, 0);
    }
}

static void draw_flags(struct pps_tui *ui, struct pps_tui_frame *f, struct pps_tui_rect r)
{
    const struct pps_tui_model *m = &ui->models[pane_model(ui)];
    const struct pps_report *rep = m->rep;
    int y = r.y + 1, end = r.y + r.h;
    double *times = NULL, *loss = NULL;

    if (m->flags.n == 0 && y < end)
        pps__tui_wrap(f, r.x + 1, y++, r.w - 2, 1,
                      "no flags: stages balanced, no communication stall, bubble as predicted",
                      PPS_TUI_C_GOOD, 0);
    for (size_t i = 0; i < m->flags.n && y < end - 2; i++) {
        const struct pps_flag *fl = &m->flags.items[i];
        int lines;

        pps_tui_frame_put(f, r.x + 1, y, PPS_TUI_G_FLAG, PPS_TUI_C_WARN, PPS_TUI_A_BOLD);
        pps_tui_frame_printf(f, r.x + 3, y, 10, PPS_TUI_C_WARN, PPS_TUI_A_BOLD, "%s",
                             pps_flag_kind_name(fl->kind));
        lines =
            pps__tui_wrap(f, r.x + 13, y, r.w - 14, end - 2 - y, fl->text, PPS_TUI_C_DEFAULT, 0);
        y += lines > 0 ? lines : 1;
    }
    if (y + 1 >= end + 1 || rep->n_iters < 1)
        return;
    times = malloc((size_t)rep->n_iters * sizeof(*times));
    if (times) {
        for (int i = 0; i < rep->n_iters; i++)
            times[i] = rep->iters[i].window_ns;
        if (y < end)
            draw_chart(f, r.x + 1, y++, r.w - 2, "iteration time", times, rep->n_iters, 1);
    }
    if (y < end && pps__tui_losses(m, &loss) == 0)
        draw_chart(f, r.x + 1, y++, r.w - 2, "loss", loss, loss ? rep->n_iters : 0, 0);
    free(times);
    free(loss);
}

/* Mean iteration window of a report, NaN without iterations. */
static double mean_iter(const struct pps_report *rep)
{
    return rep->n_iters > 0 ? rep->total_window_ns / rep->n_iters : NAN;
}

/* Peak activations: measured bytes from the metrics, else the prediction's microbatches. */
static void peak_act(const struct pps_tui_model *m, char *buf, size_t len)
{
    int64_t bytes = pps__tui_peak_act(m);
    double pk = 0;

    if (bytes >= 0) {
        snprintf(buf, len, "%.2f MiB", (double)bytes / 1048576.0);
        return;
    }
    if (!m->rep->have_prediction || !m->rep->pred.peak_act) {
        snprintf(buf, len, "n/a");
        return;
    }
    for (int s = 0; s < m->rep->pred.p; s++)
        pk = m->rep->pred.peak_act[s] > pk ? m->rep->pred.peak_act[s] : pk;
    snprintf(buf, len, "%.2f mb (pred.)", pk);
}

static void delta_row(struct pps_tui_frame *f, int x, int y, int w, const char *name, const char *a,
                      const char *b, const char *d, int better)
{
    int c = better > 0 ? PPS_TUI_C_GOOD : better < 0 ? PPS_TUI_C_WARN : PPS_TUI_C_DEFAULT;
    int n = pps_tui_frame_printf(f, x, y, w, PPS_TUI_C_DEFAULT, 0, "%-16s %16s %16s ", name, a, b);

    pps_tui_frame_text(f, x + n, y, w - n, d, c, 0);
}

static const char *run_or(const char *schedule)
{
    return schedule && schedule[0] ? schedule : "?";
}

static void draw_delta(struct pps_tui *ui, struct pps_tui_frame *f, struct pps_tui_rect r)
{
    const struct pps_report *ra = ui->models[0].rep, *rb = ui->models[1].rep;
    double ia = mean_iter(ra), ib = mean_iter(rb);
    int y = r.y + 1, end = r.y + r.h, x = r.x + 1, w = r.w - 2;
    char a[48], b[48], d[64];

    if (ui->n_models < 2)
        return;
    if (!isnan(ia) && !isnan(ib) && ia > 0 && ib > 0) {
        double gain = (ia - ib) / ia;
        pps_tui_format_ns(ia, a, sizeof(a));
        pps_tui_format_ns(ib, b, sizeof(b));
        if (fabs(gain) < 0.005)
            pps_tui_frame_printf(f, x, y++, w, PPS_TUI_C_DEFAULT, PPS_TUI_A_BOLD,
                                 "A and B take the same time per iteration (%s vs %s)", a, b);
        else
            pps_tui_frame_printf(f, x, y++, w, PPS_TUI_C_GOOD, PPS_TUI_A_BOLD,
                                 "%c is %.1f%% faster than %c: %s vs %s per iteration (%.2fx)",
                                 gain > 0 ? 'B' : 'A', 100 * fabs(gain) / (gain > 0 ? 1 - gain : 1),
                                 gain > 0 ? 'A' : 'B', gain > 0 ? b : a, gain > 0 ? a : b,
                                 gain > 0 ? ia / ib : ib / ia);
    } else if (y < end) {
        pps_tui_frame_text(f, x, y++, w, "no iterations to compare", PPS_TUI_C_DIM, 0);
    }
    if (y >= end)
        return;
    pps_tui_frame_printf(f, x, y++, w, PPS_TUI_C_DIM, PPS_TUI_A_BOLD, "%-16s %16s %16s %s", "", "A",
                         "B", "B - A");
    if (y < end) {
        snprintf(a, sizeof(a), "%s", run_or(ui->models[0].run->schedule));
        snprintf(b, sizeof(b), "%s", run_or(ui->models[1].run->schedule));
        delta_row(f, x, y++, w, "schedule", a, b, "", 0);
    }
    if (y < end) {
        pps_tui_format_ns(ia, a, sizeof(a));
        pps_tui_format_ns(ib, b, sizeof(b));
        pps_tui_format_ns(ib - ia, d, sizeof(d));
        if (!isnan(ia) && ia > 0)
            snprintf(d + strlen(d), sizeof(d) - strlen(d), " (%+.1f%%)", 100 * (ib - ia) / ia);
        delta_row(f, x, y++, w, "iteration", a, b, d, ib < ia ? 1 : ib > ia ? -1 : 0);
    }
    if (y < end) {
        pct(ra->bubble, a, sizeof(a));
        pct(rb->bubble, b, sizeof(b));
        snprintf(d, sizeof(d), "%+.1f pp", 100 * (rb->bubble - ra->bubble));
        delta_row(f, x, y++, w, "bubble", a, b, d, rb->bubble < ra->bubble ? 1 : -1);
    }
    if (y < end) {
        peak_act(&ui->models[0], a, sizeof(a));
        peak_act(&ui->models[1], b, sizeof(b));
        delta_row(f, x, y++, w, "peak activations", a, b, "", 0);
    }
    for (int s = 0; y < end && (s < ra->n_stages || s < rb->n_stages); s++, y++) {
        double fa = s < ra->n_stages ? ra->total[s].idle_frac : NAN;
        double fb = s < rb->n_stages ? rb->total[s].idle_frac : NAN;
        char name[32];

        snprintf(name, sizeof(name), "idle stage %d", s);
        pct(fa, a, sizeof(a));
        pct(fb, b, sizeof(b));
        if (isnan(fa) || isnan(fb))
            snprintf(d, sizeof(d), "n/a");
        else
            snprintf(d, sizeof(d), "%+.1f pp", 100 * (fb - fa));
        delta_row(f, x, y, w, name, a, b, d, isnan(fa) || isnan(fb) ? 0 : fb < fa ? 1 : -1);
    }
}

/* A run still loading (progressive open) has no report yet: the pane says how far it is. Returns
 * 1 when it drew that. */
static int draw_loading(struct pps_tui *ui, struct pps_tui_frame *f, struct pps_tui_rect r,
                        int pane)
{
    int m = pane == PPS_TUI_PANE_DELTA ? (ui->models[0].rep ? 1 : 0) : pane_model(ui);
    const struct pps_tui_model *md = &ui->models[m];
    char text[64], line[200];

    if (md->rep || r.h < 2)
        return md->rep == NULL;
    pps__tui_loading_text(ui, m, text, sizeof(text));
    snprintf(line, sizeof(line), "%s%s  (%lld of %lld spans read; the %s come when all are in)",
             ui->n_models > 1 ? (m ? "run B " : "run A ") : "", text, (long long)md->load_read,
             (long long)md->load_total, pane == PPS_TUI_PANE_FLAGS ? "flags" : "figures");
    pps__tui_wrap(f, r.x + 1, r.y + 1, r.w - 2, r.h - 1, line, PPS_TUI_C_DIM, 0);
    return 1;
}

void pps__tui_draw_pane(struct pps_tui *ui, struct pps_tui_frame *f, struct pps_tui_rect r,
                        int pane)
{
    if (r.w < 4 || r.h < 1)
        return;
    draw_title(ui, f, r, pane);
    if (draw_loading(ui, f, r, pane))
        return;
    if (pane == PPS_TUI_PANE_STATS)
        draw_stats(ui, f, r);
    else if (pane == PPS_TUI_PANE_FLAGS)
        draw_flags(ui, f, r);
    else
        draw_delta(ui, f, r);
}
