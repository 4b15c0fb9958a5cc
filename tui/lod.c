/*
 * lod.c - the timeline zoomed out past what a view holds: the level of detail above the spans,
 * as Tracy and Perfetto keep one. A finished run read through its index holds some iterations;
 * its summary (the model's run_iters) has every iteration's window and each stage's compute time
 * in it. Where a column lies wholly outside the time held, a lane shows its stage's share of the
 * column spent computing (device lanes: on the device), each iteration's time spread evenly over
 * its window: exact for a column that covers whole iterations, which is what a zoomed-out view
 * is made of, and the share of a whole iteration inside one.
 */
#include <string.h>

#include "tui_int.h"

/* Column of t in n columns over [t0, t1) (t inside it). */
static int col_of(int64_t t0, int64_t t1, int n, int64_t t)
{
    int c = (int)((__int128)(t - t0) * n / (t1 - t0));

    return c < 0 ? 0 : c >= n ? n - 1 : c;
}

static int64_t edge(int64_t t0, int64_t t1, int j, int n)
{
    return t0 + (int64_t)((__int128)(t1 - t0) * j / n);
}

void pps__tui_lod_columns(const struct pps_summary_series *s, int stage, int device,
                          int64_t held_t0, int64_t held_t1, int64_t t0, int64_t t1, int n,
                          struct pps__tui_lod_col *out)
{
    double busy[PPS__TUI_MAX_COLS], most[PPS__TUI_MAX_COLS];
    unsigned char any[PPS__TUI_MAX_COLS];

    for (int j = 0; j < n; j++)
        out[j].level = -1, out[j].kind = 0;
    if (!s || !s->n || stage < 0 || stage >= s->n_stages || t1 <= t0 || n <= 0 ||
        n > PPS__TUI_MAX_COLS)
        return;
    memset(busy, 0, (size_t)n * sizeof(*busy));
    memset(most, 0, (size_t)n * sizeof(*most));
    memset(any, 0, (size_t)n);
    for (size_t k = 0; k < s->n; k++) {
        size_t c = k * (size_t)s->n_stages + (size_t)stage;
        int64_t a = s->t0[k], b = s->t1[k];
        double ns = device ? s->device_ns[c] : s->compute_ns[c];

        /* Held iterations are drawn from their spans; an empty window has nowhere to spread. */
        if (b <= a || b <= t0 || a >= t1 || (a < held_t1 && b > held_t0))
            continue;
        if (ns > (double)(b - a))
            ns = (double)(b - a); /* kernels and copies counted apart may overlap */
        for (int j = col_of(t0, t1, n, a > t0 ? a : t0), last = col_of(t0, t1, n, b - 1); j <= last;
             j++) {
            int64_t lo = edge(t0, t1, j, n), hi = edge(t0, t1, j + 1, n);
            double part;
            if (lo < a)
                lo = a;
            if (hi > b)
                hi = b;
            if (hi <= lo)
                continue;
            part = ns * (double)(hi - lo) / (double)(b - a);
            busy[j] += part;
            any[j] = 1;
            if (part > most[j] && !device) {
                most[j] = part;
                out[j].kind = s->kind[c];
            }
        }
    }
    for (int j = 0; j < n; j++) {
        int64_t lo = edge(t0, t1, j, n), hi = edge(t0, t1, j + 1, n);
        double share;
        int level;

        /* A column that meets the time held shows its spans; one no iteration reaches, idle. */
        if (!any[j] || (lo < held_t1 && hi > held_t0) || hi <= lo)
            continue;
        share = busy[j] / (double)(hi - lo);
        level = (int)(share * 8 + 0.5);
        if (level < 1 && busy[j] > 0)
            level = 1; /* some work shows, as a span's column does */
        out[j].level = level > 8 ? 8 : level;
        if (device)
            out[j].kind = PPS_SPAN_KERNEL;
    }
}

int pps__tui_lod_iter_at(const struct pps_tui_model *m, int64_t t)
{
    const struct pps_summary_series *s = &m->run_iters;
    int64_t abs;

    if (!m->run || !s->n)
        return -1;
    abs = m->run->t_min + t;
    if (abs >= m->run->t_min && abs <= m->run->t_max)
        return -1;
    for (size_t k = 0; k < s->n; k++)
        if (s->t0[k] <= abs && abs < s->t1[k])
            return (int)k;
    return -1;
}
