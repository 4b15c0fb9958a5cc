/*
 * pane.c - the panes under the timeline: stats (per stage busy by kind, idle, wait and, where
 * the columns fit, idle by phase; the bubble beside the theory and the prediction; the verdict),
 * flags (each with its evidence, and loss and iteration time over the run as small charts), and
 * for A/B the delta table.
 * Everything shown comes from analysis/; this file only lays it out.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare.h"
#include "tui_int.h"

static const char *const pane_names[PPS_TUI_PANE_COUNT] = {"Stats", "Flags+charts", "A/B delta"};

/* Kinds the stats table can show, in its order. */
static const int table_kinds[] = {PPS_SPAN_F,   PPS_SPAN_B,    PPS_SPAN_W,   PPS_SPAN_BW,
                                  PPS_SPAN_OPT, PPS_SPAN_SEND, PPS_SPAN_RECV};
#define N_TABLE_KINDS ((int)(sizeof(table_kinds) / sizeof(table_kinds[0])))

/* Bytes of p the next line of a text wrapped at spaces into w columns takes. */
static int wrap_cut(const char *p, int w)
{
    int len = (int)strlen(p), cut = len;

    if (len > w) {
        cut = w;
        while (cut > 0 && p[cut] != ' ')
            cut--;
        if (cut == 0)
            cut = w;
    }
    return cut;
}

int pps__tui_wrap(struct pps_tui_frame *f, int x, int y, int w, int max_lines, const char *text,
                  int color, int attr)
{
    int lines = 0;
    const char *p = text;

    while (*p && lines < max_lines && w > 0) {
        int cut = wrap_cut(p, w);

        pps_tui_frame_printf(f, x, y + lines, w, color, attr, "%.*s", cut, p);
        p += cut;
        while (*p == ' ')
            p++;
        lines++;
    }
    return lines;
}

int pps__tui_wrap_lines(int w, const char *text)
{
    int lines = 0;

    for (const char *p = text; *p && w > 0; lines++) {
        p += wrap_cut(p, w);
        while (*p == ' ')
            p++;
    }
    return lines;
}

int pps__tui_text_w(const char *text)
{
    int w = 0;

    for (const char *c = text; *c; c++)
        w += (*c & 0xC0) != 0x80;
    return w;
}

int pps__tui_text_fit(struct pps_tui_frame *f, int x, int y, int w, const char *text, int color,
                      int attr, int ascii)
{
    const char *ell = ascii ? "..." : "\xe2\x80\xa6";
    int ell_w = ascii ? 3 : 1, cols = 0, cut = 0;

    if (w <= 0)
        return 0;
    if (pps__tui_text_w(text) <= w)
        return pps_tui_frame_text(f, x, y, w, text, color, attr);
    if (w <= ell_w)
        return 0;
    /* The last space that leaves room for the ellipsis; a single long word is cut anywhere. */
    for (const char *c = text; *c && cols <= w - ell_w; c++) {
        if (*c == ' ' && cols > 0)
            cut = (int)(c - text);
        cols += (*c & 0xC0) != 0x80;
    }
    if (!cut) {
        cols = 0;
        for (cut = 0; text[cut] && cols < w - ell_w; cut++)
            cols += (text[cut] & 0xC0) != 0x80;
        while (text[cut] && (text[cut] & 0xC0) == 0x80)
            cut++;
    }
    while (cut > 1 && text[cut - 1] == ' ')
        cut--;
    cols = pps_tui_frame_printf(f, x, y, w - ell_w, color, attr, "%.*s", cut, text);
    return cols + pps_tui_frame_text(f, x + cols, y, ell_w, ell, color, attr);
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

/* Where text goes on after its first `lines` wrapped lines in width w. */
static const char *wrap_skip(const char *p, int w, int lines)
{
    while (*p && lines-- > 0 && w > 0) {
        p += wrap_cut(p, w);
        while (*p == ' ')
            p++;
    }
    return p;
}

static const char *run_or(const char *schedule)
{
    return schedule && schedule[0] ? schedule : "unknown";
}

/* Wraps text in w columns over at most max_lines lines from (x, y); where it needs more, the
 * last line ends with an ellipsis at a word, so nothing is cut without saying so. Returns the
 * lines drawn. */
static int wrap_fit(struct pps_tui_frame *f, int x, int y, int w, int max_lines, const char *text,
                    int color, int attr, int ascii)
{
    int n;

    if (max_lines < 1 || pps__tui_wrap_lines(w, text) <= max_lines)
        return pps__tui_wrap(f, x, y, w, max_lines, text, color, attr);
    n = pps__tui_wrap(f, x, y, w, max_lines - 1, text, color, attr);
    pps__tui_text_fit(f, x, y + n, w, wrap_skip(text, w, n), color, attr, ascii);
    return n + 1;
}

/* Bubble, theory, prediction and verdict: as many of those lines as fit; returns lines used.
 * The first line holds the figures the verdict compares: the steady state where it rests on
 * that, said so. Each line is whole, or shortened at a word with an ellipsis. */
static int draw_bubble(const struct pps_tui *ui, const struct pps_tui_model *m,
                       struct pps_tui_frame *f, int x, int y, int w, int h)
{
    const struct pps_report *rep = m->rep;
    int steady = rep->basis == PPS_BASIS_STEADY, ascii = ui->opts.ascii, n = 0, v, lines;
    char a[32], b[32], c[32], line[400], verdict[512];

    if (h <= 0)
        return 0;
    pct(steady ? rep->judged_measured : rep->bubble, a, sizeof(a));
    if (rep->have_prediction) {
        pct(steady ? rep->judged_predicted : rep->pred.bubble, b, sizeof(b));
        snprintf(line, sizeof(line), "%s measured %-7s predicted %s",
                 steady ? "steady  " : "bubble  ", a, b);
        /* What the prediction is, where the line has room for it. */
        snprintf(c, sizeof(c), " (%s, %s)", run_or(pps_report_schedule_name(m->run, rep)),
                 steady ? "back to back" : "measured op costs");
        if (pps__tui_text_w(line) + pps__tui_text_w(c) <= w)
            snprintf(line + strlen(line), sizeof(line) - strlen(line), "%s", c);
    } else {
        snprintf(line, sizeof(line), "bubble   measured %-7s predicted n/a: %s", a,
                 rep->prediction_note);
    }
    pps__tui_text_fit(f, x, y + n++, w, line, PPS_TUI_C_DEFAULT, 0, ascii);
    if (n < h && rep->n_device_stages > 0) {
        /* The report's device line: each window less its kernels (docs/analysis.md). */
        pct(rep->device_bubble, a, sizeof(a));
        snprintf(line, sizeof(line), "device   bubble %-7s on the device (its kernels, %d stage%s)",
                 a, rep->n_device_stages, rep->n_device_stages == 1 ? "" : "s");
        pps__tui_text_fit(f, x, y + n++, w, line, PPS_TUI_C_DEFAULT, 0, ascii);
    }
    if (n < h) {
        pct(rep->bubble_quoted, a, sizeof(a));
        pct(rep->bubble_exact, c, sizeof(c));
        int zb_steady;
        double zb = pps_report_zb_theory(rep, &zb_steady);
        int at = snprintf(line, sizeof(line), "theory   (p-1)/m %-7s %s %s", a,
                          pps_report_theory_v(rep) > 1 ? "(p-1)/(v*m+p-1)" : "(p-1)/(m+p-1)", c);
        if (!isnan(zb) && at > 0 && (size_t)at < sizeof(line)) {
            pct(zb, a, sizeof(a));
            snprintf(line + at, sizeof(line) - (size_t)at, "  zero-bubble %s%s", a,
                     zb_steady ? " steady" : "");
        }
        pps__tui_text_fit(f, x, y + n++, w, line, PPS_TUI_C_DEFAULT, 0, ascii);
    }
    if (n < h) {
        v = pps_report_verdict(rep, verdict, sizeof(verdict));
        /* Up to four lines, leaving two for the table below where the pane is short. */
        lines = h - n - 2 < 4 ? h - n - 2 : 4;
        lines = lines < 1 ? 1 : lines;
        pps_tui_frame_text(f, x, y + n, 9, "verdict", PPS_TUI_C_DEFAULT, 0);
        n += wrap_fit(f, x + 9, y + n, w - 9, lines, verdict,
                      v == PPS_VERDICT_ABOVE          ? PPS_TUI_C_WARN
                      : v == PPS_VERDICT_AS_PREDICTED ? PPS_TUI_C_GOOD
                                                      : PPS_TUI_C_DEFAULT,
                      PPS_TUI_A_BOLD, ascii);
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

/*
 * The stats table's shape in w columns: the width cw of its value columns (after a space each)
 * and the unit's note, the first that fits whole of: 8-wide columns with "(ms per iteration)",
 * with "(ms/iter)", columns as narrow as their values (vw: the widest value or kind name) with
 * either note, and those without a note. A note is never cut: it goes whole or not at all.
 */
static void table_shape(int w, int n_shown, int vw, const char *uname, int *cw, char *note,
                        size_t len)
{
    static const char *const notes[] = {"  (%s per iteration)", "  (%s/iter)"};
    const int widths[2] = {vw > 8 ? vw : 8, vw};

    for (int i = 0; i < 4; i++) {
        *cw = widths[i / 2];
        snprintf(note, len, notes[i % 2], uname);
        /* "stage" over "%4d!", the kinds, then idle and wait, 8 columns each. */
        if (5 + n_shown * (*cw + 1) + 16 + (int)strlen(note) <= w)
            return;
    }
    *cw = vw;
    note[0] = '\0';
}

/* Flags drawn whole from row *y in [x, x + w) while they fit before end, wrapped, each its kind's
 * name in name_w columns first (0: none); where they do not all fit, the last row says how many
 * are left and where to see them (more). A flag is never cut short. */
static void draw_flag_list(const struct pps_tui_model *m, struct pps_tui_frame *f, int x, int *y,
                           int w, int end, int name_w, const char *more)
{
    for (size_t i = 0; i < m->flags.n && *y < end; i++) {
        const struct pps_flag *fl = &m->flags.items[i];
        int lines = pps__tui_wrap_lines(w - 2 - name_w, fl->text);

        lines = lines > 0 ? lines : 1;
        /* Whole, and leaving a row to count the rest if there are more. */
        if (*y + lines > end || (i + 1 < m->flags.n && *y + lines >= end)) {
            pps_tui_frame_printf(f, x + 2, (*y)++, w - 2, PPS_TUI_C_WARN, 0, "%zu more flag%s%s",
                                 m->flags.n - i, m->flags.n - i == 1 ? "" : "s", more);
            return;
        }
        pps_tui_frame_put(f, x, *y, PPS_TUI_G_FLAG, PPS_TUI_C_WARN, PPS_TUI_A_BOLD);
        if (name_w)
            pps_tui_frame_printf(f, x + 2, *y, name_w, PPS_TUI_C_WARN, PPS_TUI_A_BOLD, "%s",
                                 pps_flag_kind_name(fl->kind));
        pps__tui_wrap(f, x + 2 + name_w, *y, w - 2 - name_w, lines, fl->text,
                      name_w ? PPS_TUI_C_DEFAULT : PPS_TUI_C_WARN, 0);
        *y += lines;
    }
}

static void draw_stats(struct pps_tui *ui, struct pps_tui_frame *f, struct pps_tui_rect r)
{
    const struct pps_tui_model *m = &ui->models[pane_model(ui)];
    const struct pps_report *rep = m->rep;
    int shown[N_TABLE_KINDS], y = r.y + 1, end = r.y + r.h, x, n_it = rep->n_full;
    int n_shown = 0, vw = 1, cw, phases;
    double max_ns = 0, unit = 1e6;
    const char *uname = "ms";
    char note[32], v[32];

    y += draw_bubble(ui, m, f, r.x + 1, y, r.w - 2, end - y);
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
    for (int k = 0; k < N_TABLE_KINDS; k++) {
        if (!shown[k])
            continue;
        n_shown++;
        vw = (int)strlen(pps_span_kind_name(table_kinds[k])) > vw
                 ? (int)strlen(pps_span_kind_name(table_kinds[k]))
                 : vw;
        for (int s = 0; s < rep->n_stages; s++) {
            int n =
                snprintf(v, sizeof(v), "%.3f", rep->total[s].busy_ns[table_kinds[k]] / n_it / unit);
            vw = n > vw ? n : vw;
        }
    }
    table_shape(r.w - 2, n_shown, vw, uname, &cw, note, sizeof(note));
    /* Each stage's idle by phase (warm-up, steady, cool-down, barrier: analysis/phase.c), as
     * shares of the window that add up to its idle column, where the columns fit whole. */
    phases = rep->total_window_ns > 0 &&
             5 + n_shown * (cw + 1) + 16 + 4 * 8 + (int)strlen(note) <= r.w - 2;
    x = r.x + 1;
    x += pps_tui_frame_printf(f, x, y, r.x + r.w - x, PPS_TUI_C_DIM, PPS_TUI_A_BOLD, "stage");
    for (int k = 0; k < N_TABLE_KINDS; k++)
        if (shown[k])
            x += pps_tui_frame_printf(f, x, y, r.x + r.w - x, PPS_TUI_C_DIM, PPS_TUI_A_BOLD, " %*s",
                                      cw, pps_span_kind_name(table_kinds[k]));
    pps_tui_frame_printf(f, x, y, r.x + r.w - x, PPS_TUI_C_DIM, PPS_TUI_A_BOLD,
                         "    idle    wait%s%s", phases ? "    warm  steady    cool barrier" : "",
                         note);
    y++;
    for (int s = 0; s < rep->n_stages && y < end; s++) {
        const struct pps_stage_stats *t = &rep->total[s];
        double wait = rep->total_window_ns > 0 ? t->wait_ns / rep->total_window_ns : 0;

        if (!t->present) /* a stage the run does not have (analysis.h) */
            continue;
        x = r.x + 1;
        x += pps_tui_frame_printf(f, x, y, r.x + r.w - x, PPS_TUI_C_DEFAULT, 0, "%4d", s);
        x += pps_tui_frame_printf(f, x, y, 1, PPS_TUI_C_WARN, PPS_TUI_A_BOLD, "%s",
                                  stage_flagged(m, s) ? "!" : " ");
        for (int k = 0; k < N_TABLE_KINDS; k++)
            if (shown[k])
                x += pps_tui_frame_printf(f, x, y, r.x + r.w - x,
                                          pps__tui_kind_color(table_kinds[k]), 0, " %*.3f", cw,
                                          t->busy_ns[table_kinds[k]] / n_it / unit);
        x += pps_tui_frame_printf(f, x, y, r.x + r.w - x, PPS_TUI_C_DEFAULT, 0, " %6.1f%% %6.1f%%",
                                  100 * t->idle_frac, 100 * wait);
        for (int k = 0; phases && k < PPS_PHASE_COUNT; k++)
            x += pps_tui_frame_printf(f, x, y, r.x + r.w - x, PPS_TUI_C_DIM, 0, " %6.1f%%",
                                      100 * t->phase_idle_ns[k] / rep->total_window_ns);
        y++;
    }
    draw_flag_list(m, f, r.x + 1, &y, r.w - 2, end, 0, " (Tab: the flags pane)");
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

/* Where the view holds part of a finished run: the bubble and the window of every iteration of
 * the run, from its summary (the model's run_iters), below the charts of what is held (as rows
 * are left: they never push those out). */
static void draw_run_charts(const struct pps_tui_model *m, struct pps_tui_frame *f, int x, int *y,
                            int end, int w)
{
    const struct pps_summary_series *all = &m->run_iters;
    double *pct;

    if (all->n <= (size_t)(m->rep ? m->rep->n_iters : 0) || all->n > INT32_MAX)
        return;
    if (*y < end && (pct = malloc(all->n * sizeof(*pct)))) {
        for (size_t i = 0; i < all->n; i++)
            pct[i] = 100 * all->bubble[i];
        draw_chart(f, x, (*y)++, w, "bubble % (run)", pct, (int)all->n, 0);
        free(pct);
    }
    if (*y < end)
        draw_chart(f, x, (*y)++, w, "window (run)", all->window_ns, (int)all->n, 1);
}

static void draw_flags(struct pps_tui *ui, struct pps_tui_frame *f, struct pps_tui_rect r)
{
    const struct pps_tui_model *m = &ui->models[pane_model(ui)];
    const struct pps_report *rep = m->rep;
    char none[200];
    int y = r.y + 1, end = r.y + r.h, name_w = 10;

    /* Only what was checked: links and the host where the run measured them, the bubble where
     * there is a prediction to judge it by. */
    snprintf(none, sizeof(none), "no flags: %s%s%s%s",
             rep->n_present > 1 ? "stages balanced" : "one stage",
             rep->n_links > 0 ? ", no slow link" : "",
             rep->host.known ? ", no host contention" : "",
             rep->have_prediction ? ", no stall, bubble as predicted"
                                  : "; no prediction to judge the bubble by");
    double *times = NULL, *loss = NULL;

    if (m->flags.n == 0 && y < end) {
        int lines = pps__tui_wrap_lines(r.w - 2, none);
        if (y + lines <= end - 2)
            y += pps__tui_wrap(f, r.x + 1, y, r.w - 2, lines, none, PPS_TUI_C_GOOD, 0);
        else
            pps__tui_text_fit(f, r.x + 1, y++, r.w - 2, none, PPS_TUI_C_GOOD, 0, ui->opts.ascii);
    }
    /* The kinds' names in a column as wide as the longest and a space. */
    for (size_t i = 0; i < m->flags.n; i++)
        if ((int)strlen(pps_flag_kind_name(m->flags.items[i].kind)) + 1 > name_w)
            name_w = (int)strlen(pps_flag_kind_name(m->flags.items[i].kind)) + 1;
    /* Two rows are kept for the charts. */
    draw_flag_list(m, f, r.x + 1, &y, r.w - 2, end - 2, name_w, " (a taller terminal shows them)");
    if (y + 1 >= end + 1 || rep->n_iters < 1)
        return;
    times = malloc((size_t)rep->n_iters * sizeof(*times));
    if (times) {
        for (int i = 0; i < rep->n_iters; i++)
            times[i] = rep->iters[i].window_ns;
        if (y < end)
            draw_chart(f, r.x + 1, y++, r.w - 2, "window", times, rep->n_iters, 1);
    }
    if (y < end && pps__tui_losses(m, &loss) == 0)
        draw_chart(f, r.x + 1, y++, r.w - 2, "loss", loss, loss ? rep->n_iters : 0, 0);
    /* The bubble as a training metric, per iteration beside its time and loss; then each
     * stage's pending W's, where the schedule holds any, as far as rows are left. */
    if (times && y < end) {
        for (int i = 0; i < rep->n_iters; i++)
            times[i] = 100 * rep->iters[i].bubble;
        draw_chart(f, r.x + 1, y++, r.w - 2, "bubble %", times, rep->n_iters, 0);
    }
    for (int s = 0; s < rep->n_stages && y < end; s++) {
        double *pw = NULL;
        char label[24];

        if (pps__tui_pending_w(m, s, &pw) != 0 || !pw)
            continue;
        snprintf(label, sizeof(label), "pending W s%d", s);
        draw_chart(f, r.x + 1, y++, r.w - 2, label, pw, rep->n_iters, 0);
        free(pw);
    }
    draw_run_charts(m, f, r.x + 1, &y, end, r.w - 2);
    free(times);
    free(loss);
}

/* The iteration time of a report (analysis.h: its one definition), NaN without iterations. */
static double mean_iter(const struct pps_report *rep)
{
    return rep->iter_ns; /* the report's one definition (analysis.h) */
}

/* Peak activations: measured bytes from the metrics, else the prediction's microbatches. */
enum { PEAK_NONE, PEAK_BYTES, PEAK_MB };

static int peak_act(const struct pps_tui_model *m, double *value)
{
    int64_t bytes = pps__tui_peak_act(m);

    *value = 0;
    if (bytes >= 0) {
        *value = (double)bytes / 1048576.0;
        return PEAK_BYTES;
    }
    if (!m->rep->have_prediction || !m->rep->pred.peak_act)
        return PEAK_NONE;
    for (int s = 0; s < m->rep->pred.p; s++)
        *value = m->rep->pred.peak_act[s] > *value ? m->rep->pred.peak_act[s] : *value;
    return PEAK_MB;
}

/* A peak v in its unit, with its sign where it is a difference (sign); "n/a" for none. */
static void peak_text(int unit, double v, int sign, char *buf, size_t len)
{
    if (unit == PEAK_NONE)
        snprintf(buf, len, "n/a");
    else
        snprintf(buf, len, sign ? "%+.2f %s" : "%.2f %s", v,
                 unit == PEAK_BYTES ? "MiB" : "mb (pred.)");
}

/* A run's schedule; "unknown" where the run does not say, as `ppscope report` puts it. */

/* 1 where b is less than a (B is better: less time, idle, memory), -1 where more, 0 where equal
 * or either is unknown. */
static int less_is_better(double a, double b)
{
    if (isnan(a) || isnan(b))
        return 0;
    return b < a ? 1 : b > a ? -1 : 0;
}

/* One row of the delta table: what, A, B, B - A and whether B is better (the colour of B - A). */
struct delta_row {
    char name[24], a[48], b[48], d[64];
    int better;
};

/* A figure of compare.h in its unit: a duration, a fraction, bytes or a count. */
static void cmp_value(int figure, double v, int sign, char *buf, size_t len)
{
    char t[32];

    if (isnan(v)) {
        snprintf(buf, len, "n/a");
    } else if (figure == PPS_CMP_BUBBLE || figure == PPS_CMP_STEADY_BUBBLE) {
        snprintf(buf, len, sign ? "%+.1f pp" : "%.1f%%", 100 * v);
    } else if (figure == PPS_CMP_ACT) {
        snprintf(buf, len, sign ? "%+.2f MiB" : "%.2f MiB", v / 1048576.0);
    } else if (figure == PPS_CMP_PENDING_W) {
        snprintf(buf, len, sign ? "%+.0f" : "%.0f", v);
    } else {
        pps_tui_format_ns(v, t, sizeof(t));
        snprintf(buf, len, "%s%s", sign && v > 0 ? "+" : "", t);
    }
}

/* A row from compare's row c: B - A with its relative change, coloured only where the change is
 * beyond the runs' own spread ("~": within it, noise as far as the runs can tell). */
static void cmp_row(const struct pps_cmp_row *c, const char *name, struct delta_row *r)
{
    int frac = c->figure == PPS_CMP_BUBBLE || c->figure == PPS_CMP_STEADY_BUBBLE;

    snprintf(r->name, sizeof(r->name), "%s", name);
    cmp_value(c->figure, c->a, 0, r->a, sizeof(r->a));
    cmp_value(c->figure, c->b, 0, r->b, sizeof(r->b));
    cmp_value(c->figure, c->diff, 1, r->d, sizeof(r->d));
    if (!frac && !isnan(c->ratio) && !isnan(c->diff)) {
        size_t used = strlen(r->d);
        snprintf(r->d + used, sizeof(r->d) - used, " (%+.1f%%)", 100 * (c->ratio - 1));
    }
    if (c->beyond == 0) {
        size_t used = strlen(r->d);
        snprintf(r->d + used, sizeof(r->d) - used, " ~");
    }
    r->better = c->beyond == 0 ? 0 : less_is_better(c->a, c->b);
}

static const char *const cmp_names[PPS_CMP_FIGURE_COUNT] = {
    "iteration", "window", "bubble",   "steady bubble", "busy",
    "idle",      "wait",   "peak act", "pending W"};

/*
 * Rows of the delta table (at most max): the schedules, then the figures `ppscope compare`
 * gives (compare.h: iteration, window, bubble, steady bubble, pending W's; per stage busy, idle
 * and wait per iteration, each stage's peak activations), with peak activations from the
 * prediction's microbatches where neither run measured its bytes. Returns how many.
 */
static int delta_rows(const struct pps_tui *ui, const struct pps_compare *cmp,
                      struct delta_row *rows, int max)
{
    const struct pps_report *ra = ui->models[0].rep, *rb = ui->models[1].rep;
    double pa, pb;
    int n = 0, ua, ub;
    struct delta_row *r;

    if (n < max) {
        r = &rows[n++];
        snprintf(r->name, sizeof(r->name), "schedule");
        snprintf(r->a, sizeof(r->a), "%s", run_or(pps_report_schedule_name(ui->models[0].run, ra)));
        snprintf(r->b, sizeof(r->b), "%s", run_or(pps_report_schedule_name(ui->models[1].run, rb)));
        r->d[0] = '\0';
        r->better = 0;
    }
    if (!cmp)
        return n; /* out of memory: the schedules only */
    for (int k = PPS_CMP_ITER; k <= PPS_CMP_STEADY_BUBBLE && n < max; k++) {
        const struct pps_cmp_row *c = pps_compare_find(cmp, k, -1);
        if (c)
            cmp_row(c, cmp_names[k], &rows[n++]);
    }
    if (n < max) {
        r = &rows[n++];
        snprintf(r->name, sizeof(r->name), "peak activations");
        ua = peak_act(&ui->models[0], &pa);
        ub = peak_act(&ui->models[1], &pb);
        peak_text(ua, pa, 0, r->a, sizeof(r->a));
        peak_text(ub, pb, 0, r->b, sizeof(r->b));
        /* A difference only of figures in one unit: bytes measured, or both predictions. */
        peak_text(ua == ub ? ua : PEAK_NONE, pb - pa, 1, r->d, sizeof(r->d));
        r->better = ua == ub && ua != PEAK_NONE ? less_is_better(pa, pb) : 0;
    }
    if (n < max) {
        const struct pps_cmp_row *c = pps_compare_find(cmp, PPS_CMP_PENDING_W, -1);
        if (c && !isnan(c->a) && !isnan(c->b))
            cmp_row(c, cmp_names[PPS_CMP_PENDING_W], &rows[n++]);
    }
    for (int s = 0; cmp->per_stage && s < cmp->p_a; s++)
        for (int k = PPS_CMP_BUSY; k <= PPS_CMP_PENDING_W && n < max; k++) {
            const struct pps_cmp_row *c = pps_compare_find(cmp, k, s);
            char name[24];

            if (!c || (isnan(c->a) && isnan(c->b)))
                continue;
            snprintf(name, sizeof(name), "%s stage %d", cmp_names[k], s);
            cmp_row(c, name, &rows[n++]);
        }
    return n;
}

static int max_i(int a, int b)
{
    return a > b ? a : b;
}

static void draw_delta(struct pps_tui *ui, struct pps_tui_frame *f, struct pps_tui_rect r)
{
    const struct pps_report *ra = ui->models[0].rep, *rb = ui->models[1].rep;
    double ia = mean_iter(ra), ib = mean_iter(rb);
    int y = r.y + 1, end = r.y + r.h, x = r.x + 1, w = r.w - 2, n, nw = 0, aw = 1, bw = 1, dw = 5;
    struct delta_row rows[128];
    char a[48], b[48], line[200];
    struct pps_compare_side sa, sb;
    struct pps_compare *cmp = NULL;
    struct pps_err err = {0, ""};
    const struct pps_cmp_row *it;
    int noise;

    if (ui->n_models < 2)
        return;
    sa = (struct pps_compare_side){ui->models[0].run, ra, &ui->models[0].flags};
    sb = (struct pps_compare_side){ui->models[1].run, rb, &ui->models[1].flags};
    if (pps_compare_runs(&sa, &sb, &cmp, &err) < 0)
        cmp = NULL; /* out of memory: the sentence and the schedules only */
    /* A difference within the runs' own spread is not one the runs can tell: said so. */
    it = cmp ? pps_compare_find(cmp, PPS_CMP_ITER, -1) : NULL;
    noise = it && it->beyond == 0;
    if (!isnan(ia) && !isnan(ib) && ia > 0 && ib > 0) {
        double gain = (ia - ib) / ia;
        pps_tui_format_ns(ia, a, sizeof(a));
        pps_tui_format_ns(ib, b, sizeof(b));
        if (fabs(gain) < 0.005)
            snprintf(line, sizeof(line), "A and B take the same time per iteration (%s vs %s)", a,
                     b);
        else
            snprintf(
                line, sizeof(line), "%c is %.1f%% faster than %c: %s vs %s per iteration (%.2fx)%s",
                gain > 0 ? 'B' : 'A', 100 * fabs(gain) / (gain > 0 ? 1 - gain : 1),
                gain > 0 ? 'A' : 'B', gain > 0 ? b : a, gain > 0 ? a : b,
                gain > 0 ? ia / ib : ib / ia, noise ? ", within the runs' own spread (~)" : "");
        y += pps__tui_wrap(f, x, y, w, end - y > 1 ? 2 : 1, line,
                           fabs(gain) < 0.005 || noise ? PPS_TUI_C_DEFAULT : PPS_TUI_C_GOOD,
                           PPS_TUI_A_BOLD);
    } else if (y < end) {
        pps_tui_frame_text(f, x, y++, w, "no iterations to compare", PPS_TUI_C_DIM, 0);
    }
    if (y >= end) {
        pps_compare_free(cmp);
        return;
    }
    n = delta_rows(ui, cmp, rows, end - y - 1 < 128 ? end - y - 1 : 128);
    pps_compare_free(cmp);
    for (int i = 0; i < n; i++) {
        nw = max_i(nw, (int)strlen(rows[i].name));
        aw = max_i(aw, pps__tui_text_w(rows[i].a));
        bw = max_i(bw, pps__tui_text_w(rows[i].b));
        dw = max_i(dw, pps__tui_text_w(rows[i].d));
    }
    /* 16-wide columns where they fit, else as wide as what they hold; and if that is still too
     * wide, B - A without what it says in brackets (the relative change, the unit's source). */
    if (16 + 1 + 16 + 1 + 16 + 1 + dw <= w)
        nw = aw = bw = 16;
    else if (nw + 1 + aw + 1 + bw + 1 + dw > w)
        for (int i = 0; i < n; i++) {
            char *br = strstr(rows[i].d, " (");
            if (br)
                *br = '\0';
        }
    pps_tui_frame_printf(f, x, y++, w, PPS_TUI_C_DIM, PPS_TUI_A_BOLD, "%-*s %*s %*s %s", nw, "", aw,
                         "A", bw, "B", "B - A");
    for (int i = 0; i < n && y < end; i++, y++) {
        int c = rows[i].better > 0   ? PPS_TUI_C_GOOD
                : rows[i].better < 0 ? PPS_TUI_C_WARN
                                     : PPS_TUI_C_DEFAULT;
        int k = pps_tui_frame_printf(f, x, y, w, PPS_TUI_C_DEFAULT, 0, "%-*s %*s %*s ", nw,
                                     rows[i].name, aw, rows[i].a, bw, rows[i].b);

        pps_tui_frame_text(f, x + k, y, w - k, rows[i].d, c, 0);
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
