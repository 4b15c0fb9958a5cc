/*
 * help.c - the help screen (`?`, F1): a box over the view listing every entry of the key table,
 * the same table the key handler reads. Its layout is a pure function of the terminal's size
 * (tested at every size the view draws in): each entry's help is wrapped whole into its column,
 * in as many columns as it takes to fit, and where the entries cannot all fit they are split
 * into pages, so no line is ever cut.
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "tui_int.h"

/* Columns between two columns of entries; the narrowest help text a column may wrap into. */
#define GAP      2
#define MIN_TEXT 12

const char pps__tui_help_footer[] =
    "mouse: the wheel zooms, a click selects an op. Any key closes this.";

static int min_i(int a, int b)
{
    return a < b ? a : b;
}

/*
 * Places entries from first on into n_cols columns of h rows (entry i taking lines[i] rows, an
 * entry never split between columns), recording positions (column, row) in l when l is not
 * NULL. Returns the first entry that did not fit.
 */
static int fill(const int *lines, int n, int first, int n_cols, int h,
                struct pps__tui_help_layout *l)
{
    int col = 0, row = 0, i;

    for (i = first; i < n; i++) {
        int lh = min_i(lines[i], h);

        if (row + lh > h) {
            col++;
            row = 0;
        }
        if (col == n_cols)
            break;
        if (l) {
            l->x[i] = col;
            l->y[i] = row;
        }
        row += lh;
    }
    return i > first ? i : first + 1; /* each page takes at least one entry */
}

void pps__tui_help_layout(int cols, int rows, int page, struct pps__tui_help_layout *out)
{
    const struct pps_tui_keydef *keys = pps_tui_keytab();
    int n = 0, name_w = 0, help_w = 0, max_w = cols - 2, max_h = rows - 2;
    int best = 0, best_pages = INT_MAX, lines[PPS__TUI_HELP_MAX];
    int col_w = 0, inner = 0, fl = 0, h = 0, total = 0;

    memset(out, 0, sizeof(*out));
    for (const struct pps_tui_keydef *k = keys; k->fn && n < PPS__TUI_HELP_MAX; k++, n++) {
        if (pps__tui_text_w(k->name) > name_w)
            name_w = pps__tui_text_w(k->name);
        if (pps__tui_text_w(k->help) > help_w)
            help_w = pps__tui_text_w(k->help);
    }
    /* Each way of laying the entries out, from one column up: the fewest pages win. */
    for (int nc = 1; nc <= PPS__TUI_HELP_MAX_COLS; nc++) {
        int cw = min_i(name_w + 1 + help_w, (max_w - 4 - (nc - 1) * GAP) / nc);
        int in = nc * cw + (nc - 1) * GAP, f_lines, er, pages = 0, tallest = 0;

        if (cw - name_w - 1 < MIN_TEXT)
            break;
        f_lines = pps__tui_wrap_lines(in, pps__tui_help_footer);
        /* Rows for entries: inside the borders, less a blank row and the footer. */
        er = max_h - 3 - f_lines;
        for (int i = 0; i < n; i++) {
            lines[i] = pps__tui_wrap_lines(cw - name_w - 1, keys[i].help);
            tallest = lines[i] > tallest ? lines[i] : tallest;
        }
        if (er < tallest)
            continue;
        for (int i = 0; i < n; pages++)
            i = fill(lines, n, i, nc, er, NULL);
        if (pages < best_pages) {
            best = nc;
            best_pages = pages;
        }
    }
    if (!best)
        return;
    col_w = min_i(name_w + 1 + help_w, (max_w - 4 - (best - 1) * GAP) / best);
    inner = best * col_w + (best - 1) * GAP;
    fl = pps__tui_wrap_lines(inner, pps__tui_help_footer);
    h = max_h - 3 - fl;
    for (int i = 0; i < n; i++) {
        lines[i] = pps__tui_wrap_lines(col_w - name_w - 1, keys[i].help);
        total += lines[i];
    }
    /* On one page, columns as even as they go: the shortest height that still holds all. */
    if (best_pages == 1)
        for (int t = (total + best - 1) / best; t < h; t++)
            if (fill(lines, n, 0, best, t, NULL) >= n) {
                h = t;
                break;
            }
    out->n_cols = best;
    out->col_w = col_w;
    out->name_w = name_w;
    out->pages = best_pages;
    out->page = page < 0 ? 0 : page >= best_pages ? best_pages - 1 : page;
    for (int p = 0; p < out->page; p++)
        out->first = fill(lines, n, out->first, best, h, NULL);
    out->last = fill(lines, n, out->first, best, h, out);
    out->box.w = inner + 4;
    out->box.h = h + 3 + fl;
    out->box.x = (cols - out->box.w) / 2;
    out->box.y = (rows - out->box.h) / 2;
    for (int i = out->first; i < out->last; i++) {
        out->x[i] = out->box.x + 2 + out->x[i] * (col_w + GAP);
        out->y[i] += out->box.y + 1;
        out->lines[i] = min_i(lines[i], h);
    }
    out->footer_y = out->box.y + 1 + h + 1;
    out->footer_lines = fl;
}

void pps__tui_draw_help(struct pps_tui *ui, struct pps_tui_frame *f)
{
    const struct pps_tui_keydef *keys = pps_tui_keytab();
    struct pps__tui_help_layout l;
    struct pps_tui_rect r;
    char label[48];

    pps__tui_help_layout(f->cols, f->rows, ui->help_page, &l);
    ui->help_page = l.page; /* a terminal grown since holds fewer pages */
    r = l.box;
    if (r.w == 0)
        return;
    pps_tui_frame_box(f, r, PPS_TUI_C_TITLE);
    pps_tui_frame_text(f, r.x + 2, r.y, r.w - 4, " ppscope view: keys ", PPS_TUI_C_TITLE,
                       PPS_TUI_A_BOLD);
    for (int i = l.first; i < l.last; i++) {
        pps_tui_frame_text(f, l.x[i], l.y[i], l.name_w, keys[i].name, PPS_TUI_C_KEY,
                           PPS_TUI_A_BOLD);
        pps__tui_wrap(f, l.x[i] + l.name_w + 1, l.y[i], l.col_w - l.name_w - 1, l.lines[i],
                      keys[i].help, PPS_TUI_C_DEFAULT, 0);
    }
    pps__tui_wrap(f, r.x + 2, l.footer_y, r.w - 4, l.footer_lines, pps__tui_help_footer,
                  PPS_TUI_C_DIM, 0);
    if (l.pages > 1) {
        /* Which page, and the keys that turn it, on the bottom border. */
        snprintf(label, sizeof(label), " %d/%d %s ", l.page + 1, l.pages,
                 l.page + 1 < l.pages ? "PgDn: next page" : "PgUp: previous page");
        if (pps__tui_text_w(label) <= r.w - 4)
            pps_tui_frame_text(f, r.x + 2, r.y + r.h - 1, r.w - 4, label, PPS_TUI_C_TITLE,
                               PPS_TUI_A_BOLD);
    }
}
