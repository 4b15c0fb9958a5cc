/*
 * help.c - the help screen (`?`, F1): a box over the view listing every entry of the key table,
 * the same table the key handler reads; in two columns when one does not fit the terminal.
 */
#include <string.h>

#include "tui_int.h"

void pps__tui_draw_help(struct pps_tui *ui, struct pps_tui_frame *f)
{
    const struct pps_tui_keydef *keys = pps_tui_keytab();
    struct pps_tui_rect r;
    int n = 0, name_w = 0, help_w = 0, per_col, n_cols, col_w;

    (void)ui;
    for (const struct pps_tui_keydef *k = keys; k->fn; k++, n++) {
        if ((int)strlen(k->name) > name_w)
            name_w = (int)strlen(k->name);
        if ((int)strlen(k->help) > help_w)
            help_w = (int)strlen(k->help);
    }
    /* Rows inside the box: entries, a blank and the footer; two columns when one is too tall. */
    n_cols = n + 3 <= f->rows - 4 ? 1 : 2;
    per_col = (n + n_cols - 1) / n_cols;
    col_w = name_w + 1 + help_w;
    r.w = n_cols * col_w + (n_cols - 1) + 4;
    if (r.w > f->cols - 2)
        r.w = f->cols - 2;
    r.h = per_col + 4 < f->rows - 1 ? per_col + 4 : f->rows - 1;
    r.x = (f->cols - r.w) / 2;
    r.y = (f->rows - r.h) / 2;
    if (r.w < 20 || r.h < 4)
        return;
    col_w = (r.w - 4 - (n_cols - 1)) / n_cols;
    pps_tui_frame_box(f, r, PPS_TUI_C_TITLE);
    pps_tui_frame_text(f, r.x + 2, r.y, r.w - 4, " ppscope view: keys ", PPS_TUI_C_TITLE,
                       PPS_TUI_A_BOLD);
    for (int i = 0; i < n; i++) {
        const struct pps_tui_keydef *k = &keys[i];
        int x = r.x + 2 + (i / per_col) * (col_w + 1), y = r.y + 1 + i % per_col;

        if (y >= r.y + r.h - 2)
            continue;
        pps_tui_frame_text(f, x, y, name_w, k->name, PPS_TUI_C_KEY, PPS_TUI_A_BOLD);
        pps_tui_frame_text(f, x + name_w + 1, y, col_w - name_w - 1, k->help, PPS_TUI_C_DEFAULT, 0);
    }
    pps_tui_frame_text(f, r.x + 2, r.y + r.h - 2, r.w - 4,
                       "mouse: the wheel zooms, a click selects an op. Any key closes this.",
                       PPS_TUI_C_DIM, 0);
}
