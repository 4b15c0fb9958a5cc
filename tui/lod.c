/*
 * lod.c - the timeline zoomed out past what a view holds: the level of detail above the spans,
 * as Tracy and Perfetto keep one. A finished run read through its index holds some iterations;
 * its summary (the model's run_iters) has every iteration's window and each stage's compute time
 * in it. Where a column lies wholly outside the iterations held, a stage's lane shows the share
 * of the column it spent computing (a device row: on the device), each iteration's share of its
 * window spread evenly over it: exact for a column that covers whole iterations, which is what a
 * zoomed-out view is made of, and the share of a whole iteration inside one. Where windows
 * overlap (post-validated iterations run into each other), the overlap takes the earlier
 * iteration's share, so no time counts twice.
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

/* Whether the model holds the spans of the summary's iteration k (by its label). */
static int held(const struct pps_tui_model *m, size_t k)
{
    const struct pps_run *run = m->run;
    int label = m->run_iters.iter[k];

    return label >= run->first_iter && (run->end_iter <= 0 || label < run->end_iter);
}

int pps__tui_lod_held(const struct pps_tui_model *m, int64_t *t0, int64_t *t1)
{
    const struct pps_summary_series *s = &m->run_iters;
    int any = 0;

    *t0 = m->run ? m->run->t_min : 0;
    *t1 = m->run ? m->run->t_max : 0;
    if (!m->run || !s->n)
        return 0;
    for (size_t k = 0; k < s->n; k++) {
        if (!held(m, k))
            continue;
        if (!any || s->t0[k] < *t0)
            *t0 = s->t0[k];
        if (!any || s->t1[k] > *t1)
            *t1 = s->t1[k];
        any = 1;
    }
    return any;
}

void pps__tui_lod_columns(const struct pps_tui_model *m, int stage, int device, int64_t t0,
                          int64_t t1, int n, struct pps__tui_lod_col *out)
{
    const struct pps_summary_series *s = &m->run_iters;
    double busy[PPS__TUI_MAX_COLS], most[PPS__TUI_MAX_COLS];
    unsigned char any[PPS__TUI_MAX_COLS];
    int64_t h0, h1, done = INT64_MIN;

    for (int j = 0; j < n; j++)
        out[j].level = -1, out[j].kind = 0;
    if (!m->run || !s->n || stage < 0 || stage >= s->n_stages || t1 <= t0 || n <= 0 ||
        n > PPS__TUI_MAX_COLS || !pps__tui_lod_held(m, &h0, &h1))
        return;
    memset(busy, 0, (size_t)n * sizeof(*busy));
    memset(most, 0, (size_t)n * sizeof(*most));
    memset(any, 0, (size_t)n);
    for (size_t k = 0; k < s->n; k++) {
        size_t c = k * (size_t)s->n_stages + (size_t)stage;
        int64_t a = s->t0[k], b = s->t1[k];
        double share;

        /* The part of the window no earlier iteration's covers: its own. */
        if (done > a)
            a = done < b ? done : b;
        if (s->t1[k] > done)
            done = s->t1[k];
        /* Held iterations are drawn from their spans; an empty window has nowhere to spread. */
        if (held(m, k) || s->t1[k] <= s->t0[k] || b <= a || b <= t0 || a >= t1)
            continue;
        share = (device ? s->device_ns[c] : s->compute_ns[c]) / (double)(s->t1[k] - s->t0[k]);
        if (share > 1)
            share = 1; /* kernels and copies counted apart may overlap */
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
            part = share * (double)(hi - lo);
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

        /* A column that meets the iterations held shows their spans; one no other iteration
         * reaches, idle. */
        if (!any[j] || (lo < h1 && hi > h0) || hi <= lo)
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
    int64_t abs, h0, h1, best = INT64_MAX;
    int near = -1;

    if (!m->run || !s->n || !pps__tui_lod_held(m, &h0, &h1))
        return -1;
    abs = m->run->t_min + t;
    if (abs >= h0 && abs < h1)
        return -1;
    /* The window that holds it, else the nearest (a gap between windows, or past the run). */
    for (size_t k = 0; k < s->n; k++) {
        int64_t d = abs < s->t0[k] ? s->t0[k] - abs : abs >= s->t1[k] ? abs - s->t1[k] + 1 : 0;
        if (held(m, k) || d >= best)
            continue;
        best = d;
        near = (int)k;
    }
    return near;
}
