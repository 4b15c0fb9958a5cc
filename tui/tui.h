/*
 * tui.h - `ppscope view`: per-stage timelines of a run (live or finished) or of two runs (A/B),
 * the measured bubble beside the theory and the prediction, and the flags that say why. This is
 * what the command sees of the viewer; its layers (layout, index, ruler, frame, the view's state
 * and key table) are tui_core.h. docs/view.md describes the view for users.
 */
#ifndef PPS_TUI_H
#define PPS_TUI_H

#include <stdio.h>

#include "pps_error.h"

struct pps_tui_opts {
    int ascii;      /* ASCII stand-ins for every glyph */
    int color;      /* colours (0 under NO_COLOR or --no-color) */
    double delay_s; /* live refresh interval */
    /* Spans each run keeps in memory: past it, the oldest whole iterations are dropped (the view
     * says which it holds), so that a run of days is followed in bounded memory. 0: all. */
    size_t max_spans;
    /* Read every run whole, even a finished one whose summary says where its newest iterations
     * begin (by default those alone are read, through the index, where max_spans drops the rest).
     */
    int no_summary;
    /* With --once: where each run was read from, one line per run (NULL: nothing). */
    FILE *log;
};

/* The default of --max-spans: about 200 MB of spans, index and report (202 MB peak measured on a
 * 10M-span run, docs/view.md). */
#define PPS_TUI_MAX_SPANS 2000000

/* ------------------------------------------------------------------------------------------- */
/* Entry points for `ppscope view`                                                             */
/* ------------------------------------------------------------------------------------------- */

/*
 * Opens the run(s), applies the key script (may be NULL), draws one cols x rows frame and
 * writes it to out as text. 0, or an error with its reason in err.
 */
int pps_tui_once(const char *path_a, const char *path_b, const struct pps_tui_opts *opts, int cols,
                 int rows, const char *keys, FILE *out, struct pps_err *err);
/*
 * The interactive view on the terminal until the user quits: keys, mouse, resize, live reload
 * every opts->delay_s. The runs are loaded first (a bad run fails like pps_run_load); then stdin
 * and stdout must be a terminal (PPS_EINVAL otherwise). 0, or an error (the terminal is
 * restored before returning).
 */
int pps_tui_interactive(const char *path_a, const char *path_b, const struct pps_tui_opts *opts,
                        struct pps_err *err);

#endif
