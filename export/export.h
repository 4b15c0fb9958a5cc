/*
 * export.h - a run, and what the analysis says about it, in other programs' formats:
 *
 *   Perfetto   Chrome trace JSON (ui.perfetto.dev, chrome://tracing): a process per rank, a
 *              track per stage and chunk, an arrow from each SEND to its RECV, counters for
 *              the peak pending W's and activation bytes, the report's figures in its metadata
 *   SVG        the timeline as a picture: a row per stage (and chunk), kinds coloured, idle
 *              shaded, iteration marks, the measured and predicted bubble and the verdict
 *   CSV        one row per span
 *   OpenMetrics  per iteration bubble and time, per stage idle, the steady bubble, the
 *              prediction and the theory, for the dashboards where the loss already lives
 *
 * docs/export.md says what each file holds and how to open it. Every writer only reads the run,
 * its report (pps_analysis_report) and its flags (pps_analysis_flags); none of them changes a
 * figure: where a number is shown, it is the report's.
 *
 *   struct pps_export_input in = {run, rep, &flags, NULL};
 *   char what[128];
 *   if (pps_export_file("trace.json", PPS_EXPORT_PERFETTO, &in, 0, what, sizeof(what), &err) < 0)
 *       ...err.msg says why...
 *
 * Times: every exported time is on rank 0's clock, as pps_run_load() aligns them. The Perfetto
 * trace and the SVG count from the run's first span (run->t_min); the CSV keeps the aligned
 * nanoseconds as they are.
 */
#ifndef PPS_EXPORT_H
#define PPS_EXPORT_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "analysis.h"
#include "pps_error.h"
#include "storage.h"

enum pps_export_format {
    PPS_EXPORT_PERFETTO = 0,
    PPS_EXPORT_SVG,
    PPS_EXPORT_CSV,
    PPS_EXPORT_OPENMETRICS,
    PPS_EXPORT_FORMAT_COUNT,
};

/* "Perfetto JSON", "SVG", "CSV", "OpenMetrics"; "?" for a format out of range. */
const char *pps_export_format_name(int format);

/* ---- what the SVG shows -------------------------------------------------------------------- */

/* How many iterations the SVG shows when it is not told: enough to see the pattern, few enough
 * that ops stay wider than a pixel. */
#define PPS_SVG_DEFAULT_ITERS 3
/* The most rects one picture holds: past it the rest of each row is left out, and the legend
 * says how many spans. Merging what falls within a pixel keeps a picture below it. */
#define PPS_SVG_MAX_RECTS 50000

/* What the user asked to see; a field left at its unset value is not asked for. */
struct pps_svg_range {
    double from_ms, to_ms; /* ms since the run's first span; NaN: unset */
    int iter;              /* one iteration, by its number; -1: unset */
};

#define PPS_SVG_RANGE_INIT                                                                         \
    {                                                                                              \
        NAN, NAN, -1                                                                               \
    }

/* The window the SVG draws, and which iterations' windows lie in it. */
struct pps_svg_view {
    int64_t t0, t1;                     /* ns on rank 0's clock, t0 < t1 */
    int first_iter, last_iter, n_iters; /* the iterations whose windows lie in [t0, t1] at
                                           least in part: their numbers and how many (0: none) */
    int n_run_iters;                    /* the run's iterations (the report's n_iters) */
    int defaulted; /* 1: no range was asked for, the view is the first few iterations */
};

/*
 * Resolves range against the run: --iter N is iteration N's window; --from/--to (either may be
 * unset: the run's start, its end) the ms since the run's first span; neither, the first
 * PPS_SVG_DEFAULT_ITERS iterations (the whole run when it has none). PPS_EINVAL with a one-line
 * reason for a range the run cannot show: an iteration it does not have, from >= to, a from
 * past the run's end, --iter with --from or --to, a run without spans.
 */
int pps_export_svg_view(const struct pps_run *run, const struct pps_report *rep,
                        const struct pps_svg_range *range, struct pps_svg_view *out,
                        struct pps_err *err);

/* ---- the writers --------------------------------------------------------------------------- */

/* What the writers draw on. rep and flags are those of run; view is the SVG's (NULL: the
 * default view); the other writers ignore it. */
struct pps_export_input {
    const struct pps_run *run;
    const struct pps_report *rep;
    const struct pps_flag_list *flags;
    const struct pps_svg_view *view;
};

/*
 * Each writer writes one whole document to f and says in what (at most len bytes, may be NULL
 * when len is 0) what it wrote: "96 slices, 24 flows, 8 counter samples". 0, or PPS_EINVAL (a
 * NULL input, an SVG view the run cannot show), PPS_ENOMEM, or PPS_EIO when f reports an error
 * (the reason says "write failed"; pps_export_file names the file).
 *
 * Perfetto: the Trace Event Format's JSON object form, {"traceEvents": [...], ...}. One "X"
 * (complete) event per span, ts and dur in microseconds with three decimals (ns precision),
 * counted from the run's first span; pid = rank, a tid per stage and chunk (and per stage for
 * its messages, device spans and named ranges), named by "M" metadata events; a span's mb,
 * iter, chunk, peer, bytes and message id in its args. A flow ("s" on the SEND, "f" bound to
 * the enclosing RECV) per message: a SEND and a RECV of one link with the same id (span.corr).
 * Counters ("C") per rank: each iteration's peak pending W's and activation bytes per stage
 * (run->metrics), from the iteration's window start. Global instant events mark the
 * iterations. "otherData", first in the file, holds the report's figures: bubble, steady
 * bubble, prediction, theory, verdict.
 */
int pps_export_perfetto(FILE *f, const struct pps_export_input *in, char *what, size_t len,
                        struct pps_err *err);
/*
 * SVG 1.1, standalone: a row per stage (a row per chunk within it where v > 1), the compute
 * spans as rects coloured by kind (the viewer's colours: F blue, B green, W yellow, BW cyan,
 * optimizer grey), the messages (SEND, RECV: magenta; WAIT: red) in a strip under each stage's
 * rows, idle shaded inside each iteration's window, a mark at each window's start, a time axis,
 * and a legend: the kinds, the measured bubble, the steady one, the prediction, the theory
 * (p-1)/(m+p-1) (or (p-1)/(v*m+p-1)), the verdict, and what the picture shows. Each stage is a
 * <g class="stage" data-stage="S">; each rect of spans is class "span KIND" with
 * data-spans="N", the spans it stands for: a span a pixel wide or more has its own rect, a
 * thinner one joins the rect before it when that is less than a pixel away (up to two pixels
 * wide, in the colour of the kind that covers most of it, as opaque as its spans cover it), so
 * a long window is not a million rects (and never more than PPS_SVG_MAX_RECTS; past it the
 * legend says how many spans were left out). KERNEL and RANGE spans are not drawn.
 */
int pps_export_svg(FILE *f, const struct pps_export_input *in, char *what, size_t len,
                   struct pps_err *err);
/*
 * CSV (RFC 4180): a header, then one row per span, stage by stage, each stage's spans by start:
 * kind,stage,chunk,mb,iter,start_ns,end_ns,dur_ns,peer,bytes,name,rank,clock,corr. kind by
 * name (F, SEND, ...), clock host or device, times aligned to rank 0's clock; name empty where
 * the span has none, quoted (its quotes doubled) where it holds a comma, a quote or a line
 * break. Lines end with LF.
 */
int pps_export_csv(FILE *f, const struct pps_export_input *in, char *what, size_t len,
                   struct pps_err *err);
/*
 * OpenMetrics 1.0 text: gauges, each family with # TYPE, # UNIT (where it has one) and # HELP,
 * and "# EOF" at the end. Labelled by run (its path as given) and where it applies iter or
 * stage: ppscope_bubble_ratio and ppscope_iteration_seconds and ppscope_iteration_window_seconds
 * per whole iteration, ppscope_stage_idle_ratio per stage, ppscope_mean_bubble_ratio,
 * ppscope_steady_bubble_ratio, ppscope_predicted_bubble_ratio,
 * ppscope_predicted_steady_bubble_ratio, ppscope_theory_bubble_ratio{formula=...},
 * ppscope_run_iteration_seconds, ppscope_predicted_iteration_seconds, ppscope_flag{kind,...}
 * and ppscope_run_info at 1, labelled with the run's schedule, p, m, v and verdict (a gauge, as
 * Prometheus writes info metrics, so that the Prometheus text format's readers take the file
 * too). A figure the run has not got (NaN) is left out, its family kept. Label values and help
 * escaped as the spec says.
 */
int pps_export_openmetrics(FILE *f, const struct pps_export_input *in, char *what, size_t len,
                           struct pps_err *err);

/* The writer of format, by number. PPS_EINVAL for a format out of range. */
int pps_export_write(FILE *f, int format, const struct pps_export_input *in, char *what, size_t len,
                     struct pps_err *err);

/*
 * Writes format to path whole or not at all: into "PATH.tmp.PID" beside it, then renamed onto
 * path, so a failed export (a full disk, a bad view) leaves neither a half file nor the
 * temporary one. Without force an existing path is PPS_EINVAL ("exists: use --force to replace
 * it") and is left alone; with force it is replaced. A path that cannot be created (no such
 * directory, no permission) is PPS_EINVAL; an error while writing, PPS_EIO; both name path.
 */
int pps_export_file(const char *path, int format, const struct pps_export_input *in, int force,
                    char *what, size_t len, struct pps_err *err);

#endif
