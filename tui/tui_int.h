/*
 * tui_int.h - what the tui module's files share, and nobody else uses.
 */
#ifndef PPS_TUI_INT_H
#define PPS_TUI_INT_H

#include "tui_core.h"

/* ---- model.c: one run loaded for the view ---- */

/* Loads path into m (fresh or released): run, report, flags, index and the files' signature.
 * first_rows 0: the whole run; else about that many spans, and m->loading = 1 when the run has
 * more (no report until the rest is applied). max_spans (0: all): the spans m keeps, the newest
 * whole iterations (pps_run_drop_before()), read a chunk at a time so that memory stays near it;
 * a finished run past it that has a summary (unless no_summary) is read by those iterations
 * alone, through the index (m->windowed). Read whole, a finished run ends holding the same. */
int pps__tui_model_load(struct pps_tui_model *m, const char *path, size_t first_rows,
                        size_t max_spans, int no_summary, struct pps_err *err);
void pps__tui_model_release(struct pps_tui_model *m);
/*
 * Replaces what m holds of a finished run with other whole iterations, read through the index
 * where the run's summary says where they lie (pps_summary_pick): those ending at anchor (dir
 * -1) or starting at it (dir 1), within max_spans / 2, with the report and index of them. 1 when
 * it did; 0 where it cannot (no budget, a live run, no summary of the run as it is): m is as
 * it was. Negative on an error that leaves m as it was too. On the screen (m->progressive) it
 * reads nothing itself: 2, the read is under way on a thread (m->grow), and its taking says
 * what came of it (pps__tui_model_grow_take()); 0 where no thread can be had.
 */
int pps__tui_model_page(struct pps_tui_model *m, int anchor, int dir, struct pps_err *err);
/* Takes the read under way on a thread, the second step of a progressive open through the index
 * or either step of a page (the run, its index, report and flags, all at once), once it is done,
 * or waits for it (wait): 1 when the model changed; 2 when it changed to a page's first step,
 * whose second is then under way; 0 when there is none, it is not done (m->grow is still
 * there), or it read nothing (the files changed, or nothing lies in the page's direction: the
 * model stays as it is); < 0 its error. */
int pps__tui_model_grow_take(struct pps_tui_model *m, int wait, struct pps_err *err);
/* Gives up a page's first step under way (the move it was for was given up): m keeps what it
 * holds. A second step under way goes on. */
void pps__tui_model_page_cancel(struct pps_tui_model *m);
/* The rows a load reads at a time where spans are kept within max_spans (a quarter of them). */
size_t pps__tui_chunk_of(size_t max_spans);
/* Reads what was added to m's run since it was loaded or last updated (when its files' signature
 * changed) and updates the index, and the report when it is due: 1 when something was read, 0
 * when nothing changed, or an error (what was on screen stays usable). */
int pps__tui_model_update(struct pps_tui_model *m, struct pps_err *err);
/* The second half of an update, after m->follow was fetched (by the reloader's thread): moves the
 * rows into the run, updates the index and, when due, the report; sig becomes m->sig. more != 0:
 * the fetch stopped before the end of a progressive open (m stays loading, no report). */
int pps__tui_model_apply(struct pps_tui_model *m, uint64_t sig, int more, struct pps_err *err);
/* Takes the report a thread made after a progressive open: waits for it when wait != 0, else only
 * when it is done. 1 when one was taken, 0 when none is pending or it is still being made (then
 * m->job is not NULL: the run must not change), or the report's error. */
int pps__tui_model_report_take(struct pps_tui_model *m, int wait, struct pps_err *err);
/* Sizes and modification times of a run's files (the shards and their WALs), folded into one
 * number: it changes when a writer commits. 0 when nothing can be read. */
uint64_t pps__tui_signature(const char *path);
/* The mean loss of each iteration (NaN where none), for iters[0..n_iters-1] of the report:
 * *out is malloc'ed (NULL when the report has no iteration). 0 or PPS_ENOMEM. */
int pps__tui_losses(const struct pps_tui_model *m, double **out);
/* Stage's peak pending W's per report iteration (NaN where no metrics row says) into *out
 * (malloc'd, rep->n_iters entries), NULL when the stage never held one. 0 or PPS_ENOMEM. */
int pps__tui_pending_w(const struct pps_tui_model *m, int stage, double **out);
/* Peak activation bytes over the run's metrics (-1 when none). */
int64_t pps__tui_peak_act(const struct pps_tui_model *m);

/* ---- lod.c: the timeline past what is held, from the run's summary ---- */

/* The most columns a lane is drawn in. */
#define PPS__TUI_MAX_COLS 1024

struct pps__tui_lod_col {
    int level;          /* -1: drawn from the spans held; 0 idle .. 8 busy the whole column */
    unsigned char kind; /* the kind it shows in (colour) */
};
/*
 * Columns of stage's lane (its device row where device) of model m over [t0, t1) (ns on the
 * run's own clock) in n <= PPS__TUI_MAX_COLS columns, from its summary's iterations (run_iters):
 * level -1 for a column that meets the iterations held (pps__tui_lod_held()) or that no other
 * iteration reaches; else the eighths of the column the stage computed (on the device), each
 * iteration's share of its window spread over the part of it no earlier window covers, and the
 * kind with most of it.
 */
void pps__tui_lod_columns(const struct pps_tui_model *m, int stage, int device, int64_t t0,
                          int64_t t1, int n, struct pps__tui_lod_col *out);
/* From the first window of the iterations m holds (by label) to the end of the last, on the
 * run's clock, into *t0, *t1: 1; 0 (the held spans' extent in them) where the model has no
 * summary's iterations or holds none of them. */
int pps__tui_lod_held(const struct pps_tui_model *m, int64_t *t0, int64_t *t1);
/* The summary's iteration (an index into m->run_iters) whose window holds view time t of model
 * m (relative to its first span held), or the nearest, where t lies outside the iterations held;
 * -1 otherwise. */
int pps__tui_lod_iter_at(const struct pps_tui_model *m, int64_t t);

/* ---- view.c: the visible range and what moves it ---- */

int pps__tui_lanes(const struct pps_tui *ui, int model);
/* Model and lane of the cursor. */
void pps__tui_cursor_lane(const struct pps_tui *ui, int *model, int *lane);
/* Where model's time 0 of the view lies on its own clock (ns). */
int64_t pps__tui_base(const struct pps_tui *ui, int model);
/* Length of the longest run, ns from its first span to its last. */
int64_t pps__tui_extent(const struct pps_tui *ui);
/* The time the view may show, relative as the view's: [0, extent] of what is held, and of a
 * lone run held in part, its whole summary's iterations too (*lo below 0 for those before). */
void pps__tui_bounds(const struct pps_tui *ui, int64_t *lo, int64_t *hi);
/* Index into model's report iterations of the iteration at view time t (ns, relative), or the
 * nearest; -1 when the run has none. */
int pps__tui_iter_at(const struct pps_tui *ui, int model, int64_t t);
/* Sets the range to [t0, t1) after clamping the width and the position. */
void pps__tui_set_range(struct pps_tui *ui, int64_t t0, int64_t t1);
/* Zooms by factor (< 1 in, > 1 out) keeping view time t where it is on screen. */
void pps__tui_zoom(struct pps_tui *ui, double factor, int64_t t);
void pps__tui_pan(struct pps_tui *ui, int64_t dt);
/* Fits what is held (whole 0), or the whole run (1): what is held and, for a run held in part,
 * its summary's iterations (pps__tui_bounds()). */
void pps__tui_fit_all(struct pps_tui *ui, int whole);
void pps__tui_fit_iter(struct pps_tui *ui, int it);
/* Follows the run's end: the range ends at the latest span. */
void pps__tui_follow(struct pps_tui *ui);
/* Selects the op of (model, lane) at view time t within tol ns; 1 if one was found. */
int pps__tui_select_at(struct pps_tui *ui, int model, int lane, int64_t t, int64_t tol);
/* Moves the selection to the next (dir 1) or previous (-1) op on the cursor's lane. */
void pps__tui_select_step(struct pps_tui *ui, int dir);
/* The selected op, when it is in model m: 1 and a copy in *out, else 0. */
int pps__tui_sel_span(const struct pps_tui *ui, int m, struct pps_span *out);
/* After model m was updated: the selected op old (NULL: none) is found again, the cursor kept on
 * a lane, and a following view moves to the new end. */
void pps__tui_updated(struct pps_tui *ui, int m, const struct pps_span *old);
/* Whether any of the view's runs is still loading (progressive open). */
int pps__tui_loading(const struct pps_tui *ui);
/* "loading... 42%", or "loading... report" while its report is made (ASCII dots with ascii), for
 * model m into buf. */
void pps__tui_loading_text(const struct pps_tui *ui, int m, char *buf, size_t len);
/* Sets the message shown once in the status line. */
void pps__tui_say(struct pps_tui *ui, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Says which iterations model m holds after a read through the index ("read iterations A-B
 * through the index"). */
void pps__tui_say_read(struct pps_tui *ui, int m);
/* A page's first step was taken (rc: pps__tui_model_grow_take()'s answer, 2, or 0 where it read
 * nothing; err its error): the step waiting for it (ui->step_wait), if any, is made (keys.c). */
void pps__tui_step_taken(struct pps_tui *ui, int rc, const struct pps_err *err);

/* ---- draw.c, pane.c ---- */

int pps__tui_kind_color(int kind);
/* A letter for a kind in text ('F', 'B', 'W', 'X' for BW, '>' send, '<' recv, '~' wait, 'O'
 * optimizer, 'R' rollback, 'K' kernel, 'M' memcpy, '-' range); lower case where partial. */
char pps__tui_kind_letter(int kind, int partial);
/* Draws text wrapped at spaces into lines of width w from (x, y), at most max_lines; returns the
 * lines used. */
int pps__tui_wrap(struct pps_tui_frame *f, int x, int y, int w, int max_lines, const char *text,
                  int color, int attr);
/* The lines pps__tui_wrap() takes for the whole of text in width w (0 for an empty text). */
int pps__tui_wrap_lines(int w, const char *text);
/* Columns text takes: one per code point. */
int pps__tui_text_w(const char *text);
/* Draws text in at most w columns from (x, y): whole where it fits, else cut at a space and ended
 * with an ellipsis ("..." with ascii), so no word is cut without saying so. Returns the columns
 * written. */
int pps__tui_text_fit(struct pps_tui_frame *f, int x, int y, int w, const char *text, int color,
                      int attr, int ascii);
/* Draws the pane kind into r (title row first). */
void pps__tui_draw_pane(struct pps_tui *ui, struct pps_tui_frame *f, struct pps_tui_rect r,
                        int pane);

/* ---- path.c: the critical path over the lanes ---- */

/* Model m's critical path, made from its report when it has none yet; NULL without a report
 * (still loading) or where it cannot be made. */
const struct pps_critpath *pps__tui_path(struct pps_tui *ui, int m);
/* With the highlight on: dims the ops drawn in row y (lane of model, the columns for [a, b) on
 * the model's clock) and makes bold, undimmed, the columns of the path's ops and transfers. */
void pps__tui_path_paint(struct pps_tui *ui, struct pps_tui_frame *f, int model, int lane, int y,
                         int64_t a, int64_t b);
/* "critical path 36.0ms of the 36.0ms window: s2 88.9%, F 50.0%, ..." for the iteration at the
 * view's centre in run A; 0 (buf empty) where there is none. */
int pps__tui_path_text(struct pps_tui *ui, char *buf, size_t len);

/* ---- help.c: the help screen ---- */

/* Entries the key table may hold, at most; columns of entries the help may use. */
#define PPS__TUI_HELP_MAX      48
#define PPS__TUI_HELP_MAX_COLS 3

/*
 * Where the help screen goes on a cols x rows frame: a box of the key table's entries in one to
 * PPS__TUI_HELP_MAX_COLS columns, each entry's help wrapped whole into its column, then the
 * footer wrapped into the box. The fewest pages, then the fewest columns, win; entries that do
 * not all fit are split into pages (PgDn, PgUp). A pure function of the size and the key table,
 * like pps_tui_layout(). box.w = 0 when the frame is too small for any.
 */
struct pps__tui_help_layout {
    struct pps_tui_rect box;
    int n_cols, col_w, name_w; /* columns; each one's width; the keys' part of it */
    int page, pages;           /* page shown (the one asked for, clamped), and how many */
    int first, last;           /* the page's entries: [first, last) of the key table */
    int x[PPS__TUI_HELP_MAX];  /* where entry i of the page starts (first <= i < last) */
    int y[PPS__TUI_HELP_MAX];
    int lines[PPS__TUI_HELP_MAX]; /* rows its help takes */
    int footer_y, footer_lines;
};
void pps__tui_help_layout(int cols, int rows, int page, struct pps__tui_help_layout *out);
/* The help's last line: the mouse, and how to close it. */
extern const char pps__tui_help_footer[];
/* Draws the help screen over the frame, from the key table, at page ui->help_page (clamped). */
void pps__tui_draw_help(struct pps_tui *ui, struct pps_tui_frame *f);

/* ---- reload.c: live runs re-read on a thread of their own ---- */

/*
 * A thread that, every delay_s, looks at the runs' files and, when they changed since it last
 * read them (or since ui loaded them), fetches the new rows through the model's follower (a
 * model still loading after a progressive open: the rest of it, a chunk at a time, each as soon
 * as the UI took the last one); they
 * wait there until the UI takes them, which only copies them into its run. The UI's own thread
 * never waits for the files, so keys are handled at once. The follower is used by one thread at
 * a time (a mutex held while fetching, tried by take); the run belongs to the UI thread.
 */
struct pps__tui_reloader;

int pps__tui_reloader_start(const struct pps_tui *ui, struct pps__tui_reloader **out,
                            struct pps_err *err);
/* Applies to model (the view's model m, whose follower the reloader fetches for) what was read
 * since the last call: 1, or 0 when there is nothing (or a read is under way, or the last one
 * failed: then err says why, and 0 is returned with err->code set). */
int pps__tui_reloader_take(struct pps__tui_reloader *r, int m, struct pps_tui_model *model,
                           struct pps_err *err);
/* Stops the thread (waiting for a load in progress) and frees what was not taken. NULL: no-op. */
void pps__tui_reloader_stop(struct pps__tui_reloader *r);

/* ---- screen.c: the frame on a curses terminal (app.c drives it) ---- */

/* Starts curses on the terminal: raw keys, mouse, colours when color != 0 and the terminal has
 * them (the effective choice goes back through *color). 0 or PPS_EIO. */
int pps__tui_screen_open(int *color, struct pps_err *err);
void pps__tui_screen_close(void);
void pps__tui_screen_size(int *cols, int *rows);
/* Puts the frame on the terminal (ascii: stand-ins for every glyph) and refreshes it. */
void pps__tui_screen_draw(const struct pps_tui_frame *f, int ascii);

#endif
