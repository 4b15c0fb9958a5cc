/*
 * ruler.c - the time ruler under the lanes: ticks 1, 2 or 5 times a power of ten apart, so that
 * labels stay round and about a dozen columns apart at any zoom, and durations in ns/us/ms/s.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "tui_core.h"

/* Columns between ticks at least: room for a label like "12.5ms" and a gap. */
#define TICK_MIN_COLS 10

int64_t pps_tui_tick_step(double min_ns)
{
    int64_t p = 1;

    if (!(min_ns > 1))
        return 1;
    while (p <= INT64_MAX / 10) {
        if ((double)p >= min_ns)
            return p;
        if ((double)(2 * p) >= min_ns)
            return 2 * p;
        if ((double)(5 * p) >= min_ns)
            return 5 * p;
        p *= 10;
    }
    return p;
}

static const struct {
    int64_t ns;
    const char *name;
} tick_units[] = {{1000000000, "s"}, {1000000, "ms"}, {1000, "us"}, {1, "ns"}};
#define N_UNITS ((int)(sizeof(tick_units) / sizeof(tick_units[0])))

/* Decimals a step needs in a unit: 250us in ms needs 2 (0.25). */
static int decimals_of(int64_t step, int64_t unit)
{
    int d = 0;

    for (int64_t s = unit; s > 1 && step % s != 0; s /= 10)
        d++;
    return d;
}

void pps_tui_format_tick(int64_t t, int64_t step, int64_t far, char *buf, size_t len)
{
    int u = 0;

    if (t == 0) {
        snprintf(buf, len, "0");
        return;
    }
    if (far < 0)
        far = -far;
    if (step < 1)
        step = 1;
    while (u + 1 < N_UNITS && tick_units[u].ns > far)
        u++;
    while (u + 1 < N_UNITS && decimals_of(step, tick_units[u].ns) > 3)
        u++;
    snprintf(buf, len, "%.*f%s", decimals_of(step, tick_units[u].ns),
             (double)t / (double)tick_units[u].ns, tick_units[u].name);
}

void pps_tui_format_ns(double ns, char *buf, size_t len)
{
    static const struct {
        double ns;
        const char *unit;
    } units[] = {{1e9, "s"}, {1e6, "ms"}, {1e3, "us"}, {1, "ns"}};
    double a = fabs(ns), v;
    size_t u = 0;

    if (isnan(ns)) {
        snprintf(buf, len, "n/a");
        return;
    }
    while (u + 1 < sizeof(units) / sizeof(units[0]) && a < units[u].ns)
        u++;
    v = ns / units[u].ns;
    if (u == 3)
        snprintf(buf, len, "%.0fns", v);
    else
        snprintf(buf, len, "%.*f%s", fabs(v) >= 100 ? 0 : fabs(v) >= 10 ? 1 : 2, v, units[u].unit);
}

/* Floor division for possibly negative times. */
static int64_t floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;

    return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

void pps_tui_ruler_draw(struct pps_tui_frame *f, int x, int y, int w, int64_t t0, int64_t t1,
                        int cursor)
{
    double ns_per_col;
    int64_t step, k;
    int free_from = x; /* first column a label may use */

    if (w < 1 || t1 <= t0)
        return;
    for (int i = 0; i < w; i++)
        pps_tui_frame_put(f, x + i, y, PPS_TUI_G_HLINE, PPS_TUI_C_DIM, 0);
    ns_per_col = (double)(t1 - t0) / w;
    step = pps_tui_tick_step(ns_per_col * TICK_MIN_COLS);
    for (k = floor_div(t0, step); k * step < t1; k++) {
        int64_t t = k * step;
        int col = (int)floor((double)(t - t0) / ns_per_col);
        char label[32];
        int len;

        if (t < t0 || col < 0 || col >= w)
            continue;
        pps_tui_frame_put(f, x + col, y, PPS_TUI_G_TICK, PPS_TUI_C_DIM, 0);
        pps_tui_format_tick(t, step, (t0 < 0 && -t0 > t1) ? t0 : t1, label, sizeof(label));
        len = (int)strlen(label);
        if (x + col + 1 >= free_from && col + 1 + len <= w &&
            !(cursor >= col + 1 && cursor < col + 1 + len)) {
            pps_tui_frame_text(f, x + col + 1, y, len, label, PPS_TUI_C_DEFAULT, 0);
            free_from = x + col + 1 + len + 1;
        }
    }
    if (cursor >= 0 && cursor < w)
        pps_tui_frame_put(f, x + cursor, y, PPS_TUI_G_CURSOR, PPS_TUI_C_KEY, PPS_TUI_A_BOLD);
}
