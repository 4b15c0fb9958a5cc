/*
 * svg.c - the run's timeline as a picture (SVG 1.1), for a paper, a bug report or a wiki page:
 * a row per stage (a row per chunk within it where v > 1), each op a rect in the viewer's colour
 * for its kind, the stage's messages in a thin strip under its rows, idle shaded inside each
 * iteration's window, a mark at each window's start, a time axis, and a legend with the
 * report's bubble, steady bubble, prediction, theory and verdict.
 *
 * A picture of a long window would hold more ops than it has pixels. Rects are made per row in
 * the order the spans start: a span a pixel wide or more gets a rect of its own, a thinner one
 * joins the rect before it when that is less than a pixel away and no wider than two pixels;
 * each rect says how many spans it stands for (data-spans), takes the colour of the kind that
 * covers most of it, and is as opaque as its spans cover it. A row so
 * holds about one rect per pixel, and the whole picture never more than PPS_SVG_MAX_RECTS.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "export_int.h"

/* The layout, in pixels. */
#define WIDTH   1200
#define LABEL_W 96 /* the row labels, left of the timeline */
#define RIGHT_W 24
#define TOP     44 /* title, then iteration labels */
#define ROW_H   18 /* a chunk's row */
#define MSG_H   6  /* the messages' strip under a stage's rows */
#define GAP     8  /* between stages */
#define AXIS_H  28
#define LINE_H  16  /* a line of the legend */
#define WRAP    160 /* characters per legend line */
#define MERGE_W 2.0 /* the widest a rect of merged thin spans grows */
#define TL_W    (WIDTH - LABEL_W - RIGHT_W)

#define IDLE_COLOR "#e4e4e4"

/* The viewer's colours (tui/draw.c: pps__tui_kind_color), in shades that read on white. */
static const char *kind_color(int kind)
{
    switch (kind) {
    case PPS_SPAN_F:
        return "#3f6fd8"; /* blue */
    case PPS_SPAN_B:
        return "#2f9e4f"; /* green */
    case PPS_SPAN_W:
        return "#e0b400"; /* yellow */
    case PPS_SPAN_BW:
        return "#1fa9bd"; /* cyan */
    case PPS_SPAN_SEND:
    case PPS_SPAN_RECV:
    case PPS_SPAN_MEMCPY:
        return "#b23fb8"; /* magenta: communication */
    case PPS_SPAN_WAIT:
        return "#d83a3a"; /* red */
    case PPS_SPAN_OPT:
    case PPS_SPAN_ROLLBACK:
        return "#6b6b6b"; /* the optimizer: white on a terminal, grey on paper */
    default:
        return NULL; /* not drawn: kernels and named ranges */
    }
}

/* Where a drawn kind goes: the ops in their chunk's row, the messages in the strip. */
static int is_message(int kind)
{
    return kind == PPS_SPAN_SEND || kind == PPS_SPAN_RECV || kind == PPS_SPAN_WAIT ||
           kind == PPS_SPAN_MEMCPY;
}

/* A rect being made: the spans it has taken so far, and how much of it each kind covers (the
 * rect takes the colour of the kind that covers most: where F and B alternate faster than the
 * pixels, the busier one shows). */
struct pending {
    int kind; /* the first span's kind; 0: no rect */
    double x0, x1;
    long n;
    double px[PPS_SPAN_KIND_COUNT];
};

struct svg {
    FILE *f;
    const struct pps_run *run;
    const struct pps_report *rep;
    const struct pps_flag_list *flags;
    const struct pps_svg_view *view;
    double scale; /* px per ns */
    int n_chunks; /* rows per stage */
    int n_rows;   /* stages drawn */
    size_t n_rects, n_kept, n_dropped;
    int kinds_seen[PPS_SPAN_KIND_COUNT];
};

static double x_of(const struct svg *g, int64_t t)
{
    return LABEL_W + (double)(t - g->view->t0) * g->scale;
}

static int stage_height(const struct svg *g)
{
    return g->n_chunks * ROW_H + MSG_H;
}

static void flush(struct svg *g, struct pending *p, double y, double h)
{
    double w = p->x1 - p->x0, covered = 0, opacity = 1;
    int kind = p->kind;

    if (!p->kind)
        return;
    for (int k = 1; k < PPS_SPAN_KIND_COUNT; k++) {
        covered += p->px[k];
        if (p->px[k] > p->px[kind])
            kind = k;
    }
    /* Merged spans that leave gaps between them are drawn as pale as the gaps are wide, so
     * that idle time finer than a pixel still shows; an instant stays visible. */
    if (p->n > 1 && w > 0) {
        opacity = covered / w;
        opacity = opacity > 1 ? 1 : opacity < 0.3 ? 0.3 : opacity;
    }
    if (g->n_rects >= PPS_SVG_MAX_RECTS) {
        g->n_dropped += (size_t)p->n;
    } else {
        if (w < 1.0)
            w = 1.0; /* an instant, or a span thinner than a pixel, still shows */
        else if (w >= 3.0)
            w -= 0.5; /* a hairline between ops that follow each other */
        fprintf(g->f,
                "<rect class=\"span %s\" data-spans=\"%ld\" x=\"%.2f\" y=\"%.1f\" "
                "width=\"%.2f\" height=\"%.1f\" fill=\"%s\"",
                pps_span_kind_name(kind), p->n, p->x0, y, w, h, kind_color(kind));
        if (opacity < 0.995)
            fprintf(g->f, " fill-opacity=\"%.2f\"", opacity);
        fputs("/>\n", g->f);
        g->n_rects++;
    }
    p->kind = 0;
}

/* Adds a span (already clipped to the view, in px) to the row's rect, or starts a new one. A
 * span of a pixel or more has a rect of its own, so that ops stay apart where there is room; a
 * thinner one joins the rect before it when it is less than a pixel away and the rect stays
 * within MERGE_W pixels (so a row of thin spans is a rect per two pixels, each as busy as its
 * spans), as does a span of the rect's kind after a rect still thinner than a pixel. */
static void add(struct svg *g, struct pending *p, int kind, double x0, double x1, double y,
                double h)
{
    int near = p->kind && x0 - p->x1 < 1.0;

    if (near && ((x1 - x0 < 1.0 && x1 - p->x0 <= MERGE_W) ||
                 (p->x1 - p->x0 < 1.0 && kind_color(kind) == kind_color(p->kind)))) {
        if (x1 > p->x1)
            p->x1 = x1;
        p->n++;
        p->px[kind] += x1 - x0;
        return;
    }
    flush(g, p, y, h);
    *p = (struct pending){.kind = kind, .x0 = x0, .x1 = x1, .n = 1};
    p->px[kind] = x1 - x0;
}

/* Where row r of a stage at y lies: each chunk's row, the whole stage's ops (chunk -1: the
 * optimizer steps the stage, not a chunk), the messages' strip. */
static void row_geom(const struct svg *g, int r, double y, double *ry, double *rh)
{
    if (r == g->n_chunks + 1) {
        *ry = y + g->n_chunks * ROW_H;
        *rh = MSG_H;
    } else if (r == g->n_chunks) {
        *ry = y;
        *rh = g->n_chunks * ROW_H;
    } else {
        *ry = y + r * ROW_H + 1;
        *rh = ROW_H - 2;
    }
}

static int span_row(const struct svg *g, const struct pps_span *sp)
{
    if (is_message(sp->kind))
        return g->n_chunks + 1;
    if (sp->chunk < 0)
        return g->n_chunks;
    return sp->chunk < g->n_chunks ? sp->chunk : g->n_chunks - 1;
}

static void idle_rect(struct svg *g, double x0, double x1, double y)
{
    fprintf(g->f,
            "<rect class=\"idle\" x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%d\" "
            "fill=\"" IDLE_COLOR "\"/>\n",
            x0, y, x1 - x0 > 1.0 ? x1 - x0 : 1.0, g->n_chunks * ROW_H);
}

/* Idle: each window shaded across the stage's op rows, the ops drawn over it. Windows closer
 * than a pixel share a rect. */
static void draw_idle(struct svg *g, double y)
{
    const struct pps_svg_view *v = g->view;
    double x0 = -1, x1 = -1;

    for (int i = 0; i < g->rep->n_iters; i++) {
        const struct pps_iter_stats *is = &g->rep->iters[i];
        double a, b;

        if (is->t1 < v->t0 || is->t0 > v->t1)
            continue;
        a = x_of(g, is->t0 > v->t0 ? is->t0 : v->t0);
        b = x_of(g, is->t1 < v->t1 ? is->t1 : v->t1);
        if (x0 >= 0 && a - x1 < 1.0) {
            if (b > x1)
                x1 = b;
            continue;
        }
        if (x0 >= 0)
            idle_rect(g, x0, x1, y);
        x0 = a;
        x1 = b;
    }
    if (x0 >= 0)
        idle_rect(g, x0, x1, y);
}

/* One stage: its labels, the idle shade, then its spans, merged row by row. */
static int draw_stage(struct svg *g, int s, double y)
{
    const struct pps_stage_spans *ss = &g->run->stages[s];
    const struct pps_svg_view *v = g->view;
    int n_pend = g->n_chunks + 2;
    struct pending *pend = calloc((size_t)n_pend, sizeof(*pend));
    double ry, rh;

    if (!pend)
        return PPS_ENOMEM;
    fprintf(g->f, "<g class=\"stage\" data-stage=\"%d\" data-rows=\"%d\">\n", s, g->n_chunks);
    for (int c = 0; c < g->n_chunks; c++) {
        if (g->n_chunks > 1)
            fprintf(g->f, "<text class=\"label\" x=\"8\" y=\"%.1f\">stage %d.%d</text>\n",
                    y + c * ROW_H + ROW_H - 5, s, c);
        else
            fprintf(g->f, "<text class=\"label\" x=\"8\" y=\"%.1f\">stage %d</text>\n",
                    y + ROW_H - 5, s);
    }
    draw_idle(g, y);
    for (size_t i = 0; i < ss->n; i++) {
        const struct pps_span *sp = &ss->spans[i];
        int64_t a = sp->start_ns, b = sp->end_ns > sp->start_ns ? sp->end_ns : sp->start_ns;
        int r;

        if (!kind_color(sp->kind) || b < v->t0 || a > v->t1)
            continue;
        a = a < v->t0 ? v->t0 : a;
        b = b > v->t1 ? v->t1 : b;
        r = span_row(g, sp);
        row_geom(g, r, y, &ry, &rh);
        g->kinds_seen[sp->kind] = 1;
        g->n_kept++;
        add(g, &pend[r], sp->kind, x_of(g, a), x_of(g, b), ry, rh);
    }
    for (int r = 0; r < n_pend; r++) {
        row_geom(g, r, y, &ry, &rh);
        flush(g, &pend[r], ry, rh);
    }
    fputs("</g>\n", g->f);
    free(pend);
    return 0;
}

/* A step of 1, 2 or 5 times a power of ten that cuts span_ms into about eight. */
static double tick_step(double span_ms)
{
    double raw = span_ms / 8, p = pow(10, floor(log10(raw)));

    if (raw / p >= 5)
        return 5 * p;
    if (raw / p >= 2)
        return 2 * p;
    return p;
}

/* Ticks in ms since the run's first span, as --from and --to take them. */
static void draw_axis(struct svg *g, double y)
{
    const struct pps_svg_view *v = g->view;
    double from = (double)(v->t0 - g->run->t_min) / 1e6, to = (double)(v->t1 - g->run->t_min) / 1e6;
    double step = tick_step(to - from);
    int decimals = step >= 1 ? 0 : (int)ceil(-log10(step) - 1e-9);

    fprintf(g->f,
            "<g class=\"axis\">\n<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" "
            "stroke=\"#444\"/>\n",
            LABEL_W, y, LABEL_W + TL_W, y);
    for (double t = ceil(from / step) * step; t <= to + step * 1e-9; t += step) {
        double x = LABEL_W + (t - from) / (to - from) * TL_W;

        fprintf(g->f, "<line x1=\"%.2f\" y1=\"%.1f\" x2=\"%.2f\" y2=\"%.1f\" stroke=\"#444\"/>\n",
                x, y, x, y + 4);
        fprintf(g->f, "<text x=\"%.2f\" y=\"%.1f\" text-anchor=\"middle\">%.*f ms</text>\n", x,
                y + 16, decimals, t);
    }
    fputs("</g>\n", g->f);
}

/* A dashed line at each window's start across the stages, labelled where there is room; where
 * windows are closer than a few pixels (a long range), only every so many. */
static void draw_marks(struct svg *g, double y0, double y1)
{
    const struct pps_svg_view *v = g->view;
    double last_label = -1e9, last_line = -1e9;

    fputs("<g class=\"iterations\">\n", g->f);
    for (int i = 0; i < g->rep->n_iters; i++) {
        const struct pps_iter_stats *is = &g->rep->iters[i];
        double x;

        if (is->t0 < v->t0 || is->t0 > v->t1)
            continue;
        x = x_of(g, is->t0);
        if (x - last_line < 6)
            continue;
        last_line = x;
        fprintf(g->f,
                "<line class=\"iteration\" data-iter=\"%d\" x1=\"%.2f\" y1=\"%.1f\" x2=\"%.2f\" "
                "y2=\"%.1f\" stroke=\"#555\" stroke-dasharray=\"3,3\"/>\n",
                is->iter, x, y0 - 4, x, y1);
        if (x - last_label >= 48) {
            fprintf(g->f, "<text x=\"%.2f\" y=\"%.1f\">iter %d%s</text>\n", x + 2, y0 - 6, is->iter,
                    is->partial ? " (partial)" : "");
            last_label = x;
        }
    }
    fputs("</g>\n", g->f);
}

/* A line of the legend; long text (the verdict) wraps at a space. Returns the lines used. */
static int legend_text(struct svg *g, double y, const char *head, const char *text)
{
    size_t n = strlen(text), at = 0;
    int lines = 0;

    while (at < n || lines == 0) {
        size_t cut = n - at;

        if (cut > WRAP) {
            cut = WRAP;
            while (cut > WRAP / 2 && text[at + cut] != ' ')
                cut--;
            /* Never inside a UTF-8 sequence. */
            while (cut > 1 && ((unsigned char)text[at + cut] & 0xc0) == 0x80)
                cut--;
        }
        fprintf(g->f, "<text x=\"8\" y=\"%.1f\"><tspan font-weight=\"bold\">", y + lines * LINE_H);
        pps__export_xml_text(g->f, lines == 0 ? head : "");
        fprintf(g->f, "</tspan><tspan x=\"%d\">", LABEL_W);
        {
            char *part = strndup(text + at, cut);

            pps__export_xml_text(g->f, part ? part : "");
            free(part);
        }
        fputs("</tspan></text>\n", g->f);
        at += cut;
        while (at < n && text[at] == ' ')
            at++;
        lines++;
    }
    return lines;
}

static void pct(char *buf, size_t len, double x)
{
    if (isfinite(x))
        snprintf(buf, len, "%.1f%%", 100 * x);
    else
        snprintf(buf, len, "n/a");
}

/* The kinds' swatches, the figures, the verdict, what the picture shows. Returns its height. */
static int draw_legend(struct svg *g, double y)
{
    static const int kinds[] = {PPS_SPAN_F,   PPS_SPAN_B,    PPS_SPAN_W,   PPS_SPAN_BW,
                                PPS_SPAN_OPT, PPS_SPAN_SEND, PPS_SPAN_WAIT};
    static const char *const names[] = {"F", "B", "W", "BW", "optimizer", "send/recv", "wait"};
    const struct pps_report *rep = g->rep;
    const struct pps_svg_view *v = g->view;
    char line[1024], a[16], b[16], c[16], d[16], verdict[512];
    double x = LABEL_W;
    int lines = 0;

    fputs("<g class=\"legend\">\n", g->f);
    fprintf(g->f, "<text x=\"8\" y=\"%.1f\" font-weight=\"bold\">kinds</text>\n", y + 10);
    for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
        fprintf(g->f,
                "<rect class=\"swatch\" x=\"%.0f\" y=\"%.1f\" width=\"12\" height=\"12\" "
                "fill=\"%s\"/><text x=\"%.0f\" y=\"%.1f\">%s</text>\n",
                x, y, kind_color(kinds[k]), x + 16, y + 10, names[k]);
        x += 24 + 8 * strlen(names[k]);
    }
    fprintf(g->f,
            "<rect class=\"swatch\" x=\"%.0f\" y=\"%.1f\" width=\"12\" height=\"12\" "
            "fill=\"" IDLE_COLOR "\" stroke=\"#aaa\"/><text x=\"%.0f\" y=\"%.1f\">idle "
            "(inside an iteration's window)</text>\n",
            x, y, x + 16, y + 10);
    y += 18 + LINE_H;

    pct(a, sizeof(a), rep->bubble);
    pct(b, sizeof(b), rep->steady_bubble);
    pct(c, sizeof(c), rep->bubble_exact);
    pct(d, sizeof(d), rep->bubble_quoted);
    snprintf(line, sizeof(line), "measured %s (mean of %d whole iteration%s), steady %s", a,
             rep->n_full, rep->n_full == 1 ? "" : "s", b);
    lines += legend_text(g, y + lines * LINE_H, "bubble", line);
    if (rep->have_prediction) {
        pct(a, sizeof(a), rep->pred.bubble);
        pct(b, sizeof(b), rep->pred_steady_bubble);
        snprintf(line, sizeof(line), "%s, steady %s: %s simulated with the run's measured op costs",
                 a, b, g->run->schedule);
    } else {
        snprintf(line, sizeof(line), "none: %s", rep->prediction_note);
    }
    lines += legend_text(g, y + lines * LINE_H, "predicted", line);
    snprintf(line, sizeof(line), "%s %s, (p-1)/m %s (p=%d m=%d v=%d)",
             pps_report_theory_v(rep) > 1 ? "(p-1)/(v*m+p-1)" : "(p-1)/(m+p-1)", c, d, rep->p,
             rep->m, rep->v);
    lines += legend_text(g, y + lines * LINE_H, "theory", line);
    pps_report_verdict(rep, verdict, sizeof(verdict));
    lines += legend_text(g, y + lines * LINE_H, "verdict", verdict);
    for (size_t i = 0; g->flags && i < g->flags->n && i < 4; i++) {
        snprintf(line, sizeof(line), "%s: %s", pps_flag_kind_name(g->flags->items[i].kind),
                 g->flags->items[i].text);
        lines += legend_text(g, y + lines * LINE_H, i == 0 ? "flags" : "", line);
    }

    if (v->n_iters == 0)
        snprintf(line, sizeof(line), "no iteration's window of %d", v->n_run_iters);
    else if (v->n_iters == 1)
        snprintf(line, sizeof(line), "iteration %d of %d", v->first_iter, v->n_run_iters);
    else
        snprintf(line, sizeof(line), "iterations %d to %d of %d", v->first_iter, v->last_iter,
                 v->n_run_iters);
    snprintf(line + strlen(line), sizeof(line) - strlen(line),
             "%s, %.3f to %.3f ms after the run's first span; %zu spans in %zu rects",
             v->defaulted && v->n_run_iters > v->n_iters
                 ? " (the first few: --iter N or --from/--to MS show others)"
                 : "",
             (double)(v->t0 - g->run->t_min) / 1e6, (double)(v->t1 - g->run->t_min) / 1e6,
             g->n_kept, g->n_rects);
    if (g->n_dropped)
        snprintf(line + strlen(line), sizeof(line) - strlen(line),
                 "; %zu more spans left out (over %d rects)", g->n_dropped, PPS_SVG_MAX_RECTS);
    lines += legend_text(g, y + lines * LINE_H, "shown", line);
    fputs("</g>\n", g->f);
    return 18 + LINE_H + lines * LINE_H;
}

/* The chunks a stage's rows are for: v, or more where the run has spans of higher chunks. */
static int count_chunks(const struct pps_run *run)
{
    int n = run->v > 1 ? run->v : 1;

    for (int s = 0; s < run->n_stages; s++)
        for (size_t i = 0; i < run->stages[s].n; i++) {
            const struct pps_span *sp = &run->stages[s].spans[i];

            if (!is_message(sp->kind) && kind_color(sp->kind) && sp->chunk >= n && sp->chunk < 64)
                n = sp->chunk + 1;
        }
    return n;
}

static void title(struct svg *g)
{
    const struct pps_run *run = g->run;

    fputs("<title>ppscope: ", g->f);
    pps__export_xml_text(g->f, run->path);
    fputs("</title>\n<text x=\"8\" y=\"18\" font-size=\"14\" font-weight=\"bold\">", g->f);
    pps__export_xml_text(g->f, run->path);
    fputs("  ", g->f);
    pps__export_xml_text(g->f, run->schedule && run->schedule[0] ? run->schedule : "unknown");
    fprintf(g->f, " p=%d m=%d v=%d, %d stage%s</text>\n", g->rep->p, g->rep->m, g->rep->v,
            g->n_rows, g->n_rows == 1 ? "" : "s");
}

int pps_export_svg(FILE *f, const struct pps_export_input *in, char *what, size_t len,
                   struct pps_err *err)
{
    struct svg g = {.f = f, .run = in->run, .rep = in->rep, .flags = in->flags};
    struct pps_svg_view view;
    char *legend = NULL;
    size_t legend_len = 0;
    FILE *mem = NULL;
    double y, rows_y1;
    int legend_h, height, rc = 0;

    if (in->view)
        view = *in->view;
    else if ((rc = pps_export_svg_view(in->run, in->rep, NULL, &view, err)))
        return rc;
    if (view.t1 <= view.t0)
        return pps_err_set(err, PPS_EINVAL, "an SVG view must end after it starts");
    g.view = &view;
    g.scale = (double)TL_W / (double)(view.t1 - view.t0);
    g.n_chunks = count_chunks(in->run);
    for (int s = 0; s < in->rep->n_stages && s < in->run->n_stages; s++)
        g.n_rows += in->rep->total[s].present;
    rows_y1 = TOP + g.n_rows * (stage_height(&g) + GAP) - GAP;

    /* The legend is made first, in memory: the picture's height, in its first line, needs its
     * lines. It needs the spans' counts too, so the stages are drawn into memory as well. */
    mem = open_memstream(&legend, &legend_len);
    if (!mem) {
        rc = pps_err_set(err, PPS_ENOMEM, "out of memory drawing the SVG");
        goto out;
    }
    g.f = mem;
    y = TOP;
    for (int s = 0; s < in->rep->n_stages && s < in->run->n_stages; s++) {
        if (!in->rep->total[s].present)
            continue;
        if (draw_stage(&g, s, y) < 0) {
            rc = pps_err_set(err, PPS_ENOMEM, "out of memory drawing the SVG");
            goto out;
        }
        y += stage_height(&g) + GAP;
    }
    draw_marks(&g, TOP, rows_y1);
    draw_axis(&g, rows_y1 + 6);
    legend_h = draw_legend(&g, rows_y1 + AXIS_H + 10);
    if (fclose(mem) != 0) {
        mem = NULL;
        rc = pps_err_set(err, PPS_ENOMEM, "out of memory drawing the SVG");
        goto out;
    }
    mem = NULL;
    height = (int)rows_y1 + AXIS_H + 10 + legend_h + 8;

    g.f = f;
    fprintf(f,
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
            "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%d\" "
            "height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"12\" "
            "data-t0-ns=\"%" PRId64 "\" data-t1-ns=\"%" PRId64 "\" data-stages=\"%d\" "
            "data-rows=\"%d\">\n",
            WIDTH, height, WIDTH, height, view.t0, view.t1, g.n_rows, g.n_rows * g.n_chunks);
    fprintf(f, "<rect class=\"background\" width=\"%d\" height=\"%d\" fill=\"#ffffff\"/>\n", WIDTH,
            height);
    title(&g);
    fwrite(legend, 1, legend_len, f);
    fputs("</svg>\n", f);
    pps__export_what(what, len, "%d stage%s, %zu spans in %zu rects", g.n_rows,
                     g.n_rows == 1 ? "" : "s", g.n_kept, g.n_rects);
    rc = pps__export_finish(f, err);
out:
    if (mem)
        fclose(mem);
    free(legend);
    return rc;
}
