/*
 * layout.c - where each part of the view goes for a terminal size: a pure function, tested over
 * every size from 1x1 up, so that a resize can never draw outside the screen or on top of
 * another part.
 *
 * Rows, top to bottom: header, run A's lanes, run B's lanes, ruler, status line, pane, key bar.
 * Lanes come first: all of them while the pane keeps PPS_TUI_PANE_WANT rows, otherwise as many
 * as leave it that (at least PPS_TUI_MIN_LANES of each run; the rest scroll).
 */
#include <string.h>

#include "tui_core.h"

/* Rows that are always there: header, ruler, status line, key bar. */
#define FIXED_ROWS 4
/* Bars keep at least this many columns beside the labels. */
#define MIN_BARS 20

static int min_i(int a, int b)
{
    return a < b ? a : b;
}

static int max_i(int a, int b)
{
    return a > b ? a : b;
}

static struct pps_tui_rect rect(int x, int y, int w, int h)
{
    struct pps_tui_rect r = {x, y, w, h};

    if (w <= 0 || h <= 0) {
        r.w = 0;
        r.h = 0;
    }
    return r;
}

/* Splits room lanes between A and B: each gets at least its minimum, then half, then the rest. */
static void share_lanes(int room, int lanes_a, int lanes_b, int *a, int *b)
{
    int min_a = min_i(lanes_a, PPS_TUI_MIN_LANES), min_b = min_i(lanes_b, PPS_TUI_MIN_LANES);

    *a = min_i(lanes_a, max_i(min_a, (room + 1) / 2));
    *b = min_i(lanes_b, max_i(min_b, room - *a));
    if (*a + *b > room)
        *a = max_i(min_a, room - *b);
    *a = min_i(lanes_a, *a + max_i(0, room - *a - *b));
    *b = min_i(lanes_b, *b + max_i(0, room - *a - *b));
}

int pps_tui_layout(const struct pps_tui_layout_req *req, struct pps_tui_layout *out)
{
    int lanes_a = max_i(0, req->lanes_a), lanes_b = max_i(0, req->lanes_b);
    int lanes_min = min_i(lanes_a, PPS_TUI_MIN_LANES) + min_i(lanes_b, PPS_TUI_MIN_LANES);
    int cols = req->cols, rows = req->rows;
    int avail, room, a, b, y, pane_h;

    memset(out, 0, sizeof(*out));
    out->cols = cols;
    out->rows = rows;
    out->label_w = max_i(1, req->label_w);
    out->need_cols = max_i(PPS_TUI_MIN_COLS, out->label_w + MIN_BARS);
    out->need_rows = max_i(PPS_TUI_MIN_ROWS, FIXED_ROWS + lanes_min + PPS_TUI_PANE_MIN);
    if (cols < out->need_cols || rows < out->need_rows)
        return 0;

    avail = rows - FIXED_ROWS;
    room = avail - PPS_TUI_PANE_WANT;
    room = min_i(lanes_a + lanes_b, max_i(lanes_min, room));
    share_lanes(room, lanes_a, lanes_b, &a, &b);
    pane_h = avail - a - b;

    y = 0;
    out->header = rect(0, y++, cols, 1);
    out->lanes_a = rect(0, y, cols, a);
    y += a;
    out->lanes_b = rect(0, y, cols, b);
    y += b;
    out->ruler = rect(0, y++, cols, 1);
    out->status = rect(0, y++, cols, 1);
    if (cols >= PPS_TUI_SPLIT_COLS) {
        out->pane = rect(0, y, cols / 2, pane_h);
        out->side = rect(cols / 2, y, cols - cols / 2, pane_h);
    } else {
        out->pane = rect(0, y, cols, pane_h);
    }
    y += pane_h;
    out->keybar = rect(0, y, cols, 1);
    out->bars_x = out->label_w;
    out->bars_w = cols - out->label_w;
    out->ok = 1;
    return 1;
}
