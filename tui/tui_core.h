/*
 * tui_core.h - the viewer's layers, for the tui/ files, their unit tests and bench_view; what
 * the rest of ppscope sees of the viewer is tui.h. The module is built in layers, each testable
 * without a terminal:
 *
 *   layout    a pure function: terminal size and what is shown -> rectangles, or "too small"
 *   index     per lane (stage, or stage and chunk) and span kind, the spans' starts and running
 *             sums of their durations, so the busy time of any time range is two binary searches:
 *             a frame costs the screen's width, not the trace's size
 *   ruler     tick spacing in 1-2-5 steps that follows the zoom, labels in ns/us/ms/s
 *   frame     a grid of cells (a Unicode code point, a colour, attributes); one renderer writes it
 *             as text (`--once`, tests), another to ncurses (screen.c)
 *   ui        the state of a view (runs, visible time range, follow, pause, selection, pane) and
 *             the one key table that both the key handler and the help screen read
 *
 * Only screen.c and app.c include curses. docs/view.md describes the view for users.
 */
#ifndef PPS_TUI_CORE_H
#define PPS_TUI_CORE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "analysis.h"
#include "pps_error.h"
#include "storage.h"
#include "tui.h"

/* ------------------------------------------------------------------------------------------- */
/* Layout                                                                                      */
/* ------------------------------------------------------------------------------------------- */

/* The smallest terminal the view draws in; below it, it says what it has and what it needs. */
#define PPS_TUI_MIN_COLS 60
#define PPS_TUI_MIN_ROWS 16
/* Lanes of one run that must be visible at least (more scroll); panes' smallest height. */
#define PPS_TUI_MIN_LANES 2
#define PPS_TUI_PANE_MIN  3
/* A pane this tall is worth more than showing every lane at once. */
#define PPS_TUI_PANE_WANT 9
/* From this width on, the pane area is split in two side by side. */
#define PPS_TUI_SPLIT_COLS 140

struct pps_tui_rect {
    int x, y, w, h;
};

struct pps_tui_layout_req {
    int cols, rows; /* the terminal */
    int lanes_a;    /* lanes (timeline rows) run A has: stages, or stages x chunks */
    int lanes_b;    /* run B's; 0 when there is no run B */
    int label_w;    /* columns of a lane's label ("s3.1 "); bars start after it */
};

/*
 * What goes where, top to bottom: header (1 row), lanes of A, lanes of B, the time ruler, a
 * status line (selection, messages), the pane (and a side pane on wide terminals), the key bar
 * (1 row). Every rectangle lies inside the terminal and none overlaps another; a rectangle that
 * is not shown has w = h = 0.
 */
struct pps_tui_layout {
    int ok;                   /* 0: the terminal is too small: need_cols x need_rows */
    int cols, rows;           /* what the terminal has */
    int need_cols, need_rows; /* what it takes, for these lanes */
    struct pps_tui_rect header;
    struct pps_tui_rect lanes_a; /* h = lanes of A shown (the rest scroll) */
    struct pps_tui_rect lanes_b;
    struct pps_tui_rect ruler;
    struct pps_tui_rect status;
    struct pps_tui_rect pane;
    struct pps_tui_rect side; /* w = 0 below PPS_TUI_SPLIT_COLS */
    struct pps_tui_rect keybar;
    int label_w; /* as requested, clamped so that bars keep at least 20 columns */
    int bars_x;  /* first column of the bars, = lanes_a.x + label_w */
    int bars_w;  /* columns of the bars */
};

/* Computes the layout for req into *out. Pure: no I/O, no allocation. Returns out->ok. */
int pps_tui_layout(const struct pps_tui_layout_req *req, struct pps_tui_layout *out);

/* ------------------------------------------------------------------------------------------- */
/* Frame: cells, colours, glyphs                                                               */
/* ------------------------------------------------------------------------------------------- */

/* Colours name what a cell shows, not an RGB value; screen.c maps them to curses colours. */
enum pps_tui_color {
    PPS_TUI_C_DEFAULT = 0,
    PPS_TUI_C_F,
    PPS_TUI_C_B,
    PPS_TUI_C_W,
    PPS_TUI_C_BW,
    PPS_TUI_C_COMM, /* send, receive, device copies */
    PPS_TUI_C_WAIT,
    PPS_TUI_C_OPT,   /* optimizer and rollback */
    PPS_TUI_C_OTHER, /* kernels, named ranges */
    PPS_TUI_C_IDLE,
    PPS_TUI_C_TITLE,
    PPS_TUI_C_KEY,
    PPS_TUI_C_WARN,
    PPS_TUI_C_GOOD,
    PPS_TUI_C_DIM,
    PPS_TUI_C_COUNT,
};

#define PPS_TUI_A_BOLD    0x01
#define PPS_TUI_A_REVERSE 0x02
#define PPS_TUI_A_DIM     0x04
#define PPS_TUI_A_UNDER   0x08

/* Glyphs beyond ASCII the view draws; each has an ASCII stand-in (pps_tui_glyph_ascii). */
#define PPS_TUI_G_FULL   0x2588 /* full block */
#define PPS_TUI_G_LIGHT  0x2591 /* light shade: a column an op covers less than half of */
#define PPS_TUI_G_IDLE   0x00B7 /* middle dot: idle */
#define PPS_TUI_G_HLINE  0x2500
#define PPS_TUI_G_VLINE  0x2502
#define PPS_TUI_G_TL     0x250C
#define PPS_TUI_G_TR     0x2510
#define PPS_TUI_G_BL     0x2514
#define PPS_TUI_G_BR     0x2518
#define PPS_TUI_G_TICK   0x2534 /* a ruler tick */
#define PPS_TUI_G_CURSOR 0x25BC /* the cursor over the ruler */
#define PPS_TUI_G_LEFT   0x2190
#define PPS_TUI_G_RIGHT  0x2192
#define PPS_TUI_G_SPARK0 0x2581 /* lower one eighth block; SPARK0 + 7 is the full block */
#define PPS_TUI_G_FLAG   0x25B2 /* a flag's marker */

struct pps_tui_cell {
    uint32_t ch;   /* a Unicode code point drawn one column wide */
    uint8_t color; /* enum pps_tui_color */
    uint8_t attr;  /* PPS_TUI_A_... */
};

/* A grid of cells; caller-held. Coordinates outside it are ignored by every drawing call. */
struct pps_tui_frame {
    int cols, rows;
    struct pps_tui_cell *cells;
};

/* Allocates a cols x rows frame of blanks (cols, rows >= 1). 0 or PPS_ENOMEM. */
int pps_tui_frame_init(struct pps_tui_frame *f, int cols, int rows);
void pps_tui_frame_release(struct pps_tui_frame *f);
/* Blanks every cell. */
void pps_tui_frame_clear(struct pps_tui_frame *f);
struct pps_tui_cell *pps_tui_frame_at(struct pps_tui_frame *f, int x, int y);
void pps_tui_frame_put(struct pps_tui_frame *f, int x, int y, uint32_t ch, int color, int attr);
/* Writes UTF-8 text from (x, y), at most max_w columns (-1: to the frame's edge), one column per
 * code point; returns the columns written. Invalid UTF-8 draws '?'. */
int pps_tui_frame_text(struct pps_tui_frame *f, int x, int y, int max_w, const char *utf8,
                       int color, int attr);
int pps_tui_frame_printf(struct pps_tui_frame *f, int x, int y, int max_w, int color, int attr,
                         const char *fmt, ...) __attribute__((format(printf, 7, 8)));
/* Sets colour and attributes of w cells from (x, y), keeping their characters. */
void pps_tui_frame_paint(struct pps_tui_frame *f, int x, int y, int w, int color, int attr);
/* Draws a box border around r (single lines) and blanks its inside. */
void pps_tui_frame_box(struct pps_tui_frame *f, struct pps_tui_rect r, int color);

/* The ASCII stand-in of a glyph ('#', '.', '-', ...); c itself when c is ASCII. */
char pps_tui_glyph_ascii(uint32_t c);
/* Whether a terminal would act on c rather than draw it: C0, DEL and C1 (U+0080-U+009F, which
 * UTF-8 terminals take as CSI, OSC, ...). Such a cell is drawn as a space. */
static inline int pps_tui_is_control(uint32_t c)
{
    return c < 0x20 || (c >= 0x7f && c < 0xa0);
}
/* Writes the frame as text, one line per row with trailing blanks cut: UTF-8, or with ascii != 0
 * every glyph replaced by its stand-in. Colours and attributes are not written. 0 or PPS_EIO. */
int pps_tui_frame_write(const struct pps_tui_frame *f, FILE *out, int ascii);
/* Row y as text into buf (len bytes, NUL-terminated, cut to fit); for tests. */
void pps_tui_frame_row(const struct pps_tui_frame *f, int y, int ascii, char *buf, size_t len);

/* ------------------------------------------------------------------------------------------- */
/* Timeline index: what each screen column of a lane shows                                     */
/* ------------------------------------------------------------------------------------------- */

/*
 * A lane is one timeline row: a stage, or with interleaved schedules (v > 1) a stage's chunk;
 * a stage that recorded device spans (KERNEL, MEMCPY: CUPTI, or an import's GPU) gets one more
 * lane below its own for them, the device row, and its host lanes keep the host's spans alone.
 * The stages are those the run has, as the report counts them: with p known 0..p-1 and any that
 * recorded spans, without p only those that recorded spans (pps_tui_index_lane_id says which).
 * For each lane and each span kind it holds the spans' starts (sorted) and the running sum of
 * their durations. The time a kind covers in [a, b) is then the sum between the first span
 * starting at or after a and the first starting at or after b, corrected at both edges for the
 * spans that straddle them (exact when a kind's spans on a lane do not overlap each other, as a
 * stage's ops do not). Building it is one pass over the run; a frame costs lanes x kinds x
 * columns binary searches, whatever the trace's size.
 */
struct pps_tui_index;

/* Summary of one screen column of a lane. */
struct pps_tui_col {
    uint8_t kind;  /* the kind that covers most of the column; 0 when nothing does (idle) */
    uint8_t cover; /* how much of the column that kind's class covers, 1..255 (0 when idle) */
};

int pps_tui_index_build(const struct pps_run *run, struct pps_tui_index **out, struct pps_err *err);
void pps_tui_index_free(struct pps_tui_index *ix);
/*
 * Brings *ix up to date with run after spans were added to it. When moved is 0 (the spans that
 * were indexed kept their positions: new ones went to the ends of their stages) and lanes are
 * one per stage, the new spans are appended to the tracks, costing only them; otherwise *ix is
 * rebuilt (and replaced). 0, or PPS_ENOMEM: then *ix is freed and NULL (it would point into
 * spans the run has moved), which the view shows as a run without lanes.
 */
int pps_tui_index_update(struct pps_tui_index **ix, const struct pps_run *run, int moved,
                         struct pps_err *err);
int pps_tui_index_lanes(const struct pps_tui_index *ix);
/* The stage and chunk lane shows (chunk 0 when the run is not interleaved). */
void pps_tui_index_lane_id(const struct pps_tui_index *ix, int lane, int *stage, int *chunk);
/* Whether lanes are per chunk (the run is interleaved). */
int pps_tui_index_chunked(const struct pps_tui_index *ix);
/* Whether lane is a stage's device row (its kernels and copies). */
int pps_tui_index_lane_device(const struct pps_tui_index *ix, int lane);
/* Time kind covers on lane inside [a, b), in ns. */
int64_t pps_tui_index_busy(const struct pps_tui_index *ix, int lane, int kind, int64_t a,
                           int64_t b);
/*
 * Summarises lane over [t0, t1) cut into n equal columns into out[0..n-1]. A column shows the
 * first of three classes that covers any of it: work (F, B, W, BW, SEND, RECV, OPT, ROLLBACK),
 * then WAIT, then device spans and named ranges; its kind is the one of that class covering most
 * of it, its cover that class's share. So work shows at every zoom, never hidden by the waits
 * around it or a range around it.
 */
void pps_tui_index_columns(const struct pps_tui_index *ix, int lane, int64_t t0, int64_t t1, int n,
                           struct pps_tui_col *out);
/*
 * The spans of lane that overlap [t0, t1), in order of start, through *first and *count as
 * positions for pps_tui_index_span(); at most max (count is then max + 1: "too many to list").
 */
void pps_tui_index_visible(const struct pps_tui_index *ix, int lane, int64_t t0, int64_t t1,
                           size_t max, size_t *first, size_t *count);
/* The pos-th span of lane in order of start (pos < spans on the lane). */
const struct pps_span *pps_tui_index_span(const struct pps_tui_index *ix, int lane, size_t pos);
size_t pps_tui_index_lane_spans(const struct pps_tui_index *ix, int lane);
/* The pipeline op of lane at time t, or failing that the nearest within tol ns; its position in
 * *pos. Returns NULL when there is none. */
const struct pps_span *pps_tui_index_pick(const struct pps_tui_index *ix, int lane, int64_t t,
                                          int64_t tol, size_t *pos);

/* ------------------------------------------------------------------------------------------- */
/* Time ruler                                                                                  */
/* ------------------------------------------------------------------------------------------- */

/* A tick step of 1, 2 or 5 times a power of ten ns, at least min_ns. */
int64_t pps_tui_tick_step(double min_ns);
/*
 * Formats t (ns) for a ruler whose ticks are step apart and whose labels reach up to |far| ns:
 * "0", "250us", "1.5ms", "25.02us". The unit is the largest that far reaches (so all labels of
 * a ruler share it), made smaller while a step would need more than 3 decimals in it.
 */
void pps_tui_format_tick(int64_t t, int64_t step, int64_t far, char *buf, size_t len);
/* Formats a duration with 3 significant figures and a unit: "812ns", "1.23ms", "45.6s". */
void pps_tui_format_ns(double ns, char *buf, size_t len);
/* Draws the ruler for [t0, t1) (ns, as labelled) in w columns from (x, y): ticks every step
 * with labels where they fit, and the cursor mark at column cursor (-1: none), which no label
 * covers. */
void pps_tui_ruler_draw(struct pps_tui_frame *f, int x, int y, int w, int64_t t0, int64_t t1,
                        int cursor);

/* ------------------------------------------------------------------------------------------- */
/* The view                                                                                    */
/* ------------------------------------------------------------------------------------------- */

enum pps_tui_pane {
    PPS_TUI_PANE_STATS = 0, /* per stage busy/idle/wait, bubble against theory and prediction */
    PPS_TUI_PANE_FLAGS,     /* flags with their evidence, loss and iteration time charts */
    PPS_TUI_PANE_DELTA,     /* A/B: the delta table */
    PPS_TUI_PANE_COUNT,
};

/* Keys beyond characters: the input loop turns curses' codes into these. */
enum {
    PPS_TUI_KEY_UP = 0x110001,
    PPS_TUI_KEY_DOWN,
    PPS_TUI_KEY_LEFT,
    PPS_TUI_KEY_RIGHT,
    PPS_TUI_KEY_SLEFT, /* shift-left */
    PPS_TUI_KEY_SRIGHT,
    PPS_TUI_KEY_PGUP,
    PPS_TUI_KEY_PGDN,
    PPS_TUI_KEY_HOME,
    PPS_TUI_KEY_END,
    PPS_TUI_KEY_F1,
    PPS_TUI_KEY_ENTER = '\n',
    PPS_TUI_KEY_TAB = '\t',
    PPS_TUI_KEY_ESC = 27,
};

struct pps__tui_report_job;
struct pps__tui_grow_job;

/* One run as the view holds it. */
struct pps_tui_model {
    char *path;
    struct pps_run *run;
    struct pps_report *rep;
    struct pps_flag_list flags;
    struct pps_tui_index *index;
    uint64_t sig;  /* the run's files' sizes and times when loaded: a change means new spans */
    double load_s; /* seconds the last load took (run, report, flags, index) */
    struct pps_run_follow *follow; /* reads what is added to the run, and only that */
    double rep_at, rep_s;          /* when the report was last made, and what it cost (s) */
    size_t rep_spans;              /* the run's spans when it was made */
    /* Opened progressively: only the first rows are in and the rest is being read (rep is NULL,
     * flags empty, until the whole run is in). */
    int loading;
    int64_t load_read, load_total;   /* spans read, and spans the files held (loading... N%) */
    struct pps__tui_report_job *job; /* the report being made on a thread once loading ended */
    /* Its critical path (analysis' critpath.c), made from rep the first time the view shows it
     * and dropped whenever rep is replaced. */
    struct pps_critpath *cp;
    /* The spans kept (0: all; pps__tui_model_load()), and the run's first span when the view's
     * times were last made relative to it (a drop moves it: pps__tui_updated() keeps the view
     * where it was). */
    size_t max_spans;
    int64_t base_ns;
    /* A finished run opened by its newest iterations through the index (its summary said
     * which): follow is NULL, nothing more is read. */
    int windowed;
    int no_summary; /* read whole, and never paged through the summary (--no-summary) */
    /* The second step of a progressive open through the index (model.c): the newest iterations
     * within max_spans / 2 being read on a thread, taken by pps__tui_model_grow_take(). */
    struct pps__tui_grow_job *grow;
    /* Every iteration of a finished run held in part, from its summary (the whole run's charts
     * beside those of what is held); n 0 where it holds all, or has no summary. */
    struct pps_summary_series run_iters;
    int progressive; /* opened for the screen (not --once): its reads through the index, pages
                        too, come in those two steps */
};

/* The end of a window that reaches past every span a run can hold (times are within 2^62 ns). */
#define PPS_TUI_TIME_END ((int64_t)1 << 62)

/* The selected op: a model, a lane and the op's position in the lane. */
struct pps_tui_sel {
    int valid;
    int model;
    int lane;
    size_t pos;
};

/* A move past the iterations held, waiting on the screen for the first step of its read through
 * the index (keys.c): on; a step to the next or previous iteration (the iteration it steps
 * from, dir, and where that one starts), or a jump to the run's start or end (g, G). */
enum { PPS__TUI_MOVE_STEP, PPS__TUI_MOVE_HOME, PPS__TUI_MOVE_END };
struct pps__tui_step_wait {
    int on, kind, label, dir;
    int64_t from_t0; /* a step: where the iteration it steps from starts (rank 0's clock) */
    int more;        /* a step: steps asked for again meanwhile, made with it */
    int64_t width;   /* a jump: the view's width when the key came */
};

/* The state of a view. Caller-held: pps_tui_init, pps_tui_open, ..., pps_tui_release. */
struct pps_tui {
    struct pps_tui_opts opts;
    struct pps_tui_model models[2];
    int n_models; /* 1, or 2 for A/B */

    /* Visible time range [t0, t1), ns relative to run A's first span. Run B is drawn shifted so
     * that the iteration the view's centre falls in starts where A's does (same time scale). */
    int64_t t0, t1;
    int follow;    /* keep the latest span in view as the run grows */
    int paused;    /* keep showing what was loaded; the writer is never affected */
    int help;      /* the help screen is up */
    int help_page; /* its page, where it takes more than one */
    int quit;
    int pane;        /* enum pps_tui_pane */
    int lane_top[2]; /* each run's first lane shown, when not all fit */
    int cursor;      /* the cursor's lane, counting A's lanes then B's */
    struct pps_tui_sel sel;
    char message[160]; /* shown once in the status line */
    int refit;         /* fit all again as a progressive open brings rows, until a key moves */
    int critpath;      /* highlight the critical path: its ops bold, every other op dimmed */
    struct pps__tui_step_wait step_wait;
    unsigned step_seq; /* raised each time a move starts waiting */

    struct pps_tui_layout layout; /* of the last frame drawn */
};

void pps_tui_init(struct pps_tui *ui, const struct pps_tui_opts *opts);
/*
 * Loads run A (and run B when path_b is not NULL) with their reports, flags and indexes, and
 * shows all of A. A run that does not exist or is not a trace fails as pps_run_load() does,
 * with its one-line reason in err. An incomplete run (still being written) starts following.
 */
int pps_tui_open(struct pps_tui *ui, const char *path_a, const char *path_b, struct pps_err *err);
void pps_tui_release(struct pps_tui *ui);

/* Spans a progressive open reads before the first frame (0 to pps_tui_open_progressive). */
#define PPS_TUI_FIRST_ROWS 1000000
/* A progressive open through the index draws its first frame from the newest iterations within
 * this share of --max-spans (1/16: 125,000 spans of the default), then holds those within half. */
#define PPS_TUI_FIRST_KEEP 16

/*
 * As pps_tui_open(), but reads only about first_rows spans of each run (0: PPS_TUI_FIRST_ROWS)
 * before it returns, so a first frame can be drawn at once. A run with more is left loading
 * (its model's loading is 1: no report yet, the panes say "loading... N%"), the view fits the
 * rows as they arrive until a key moves it; the rest comes through pps_tui_refresh() or the
 * interactive view's reloader, and the report is made on a thread of its own when the whole run
 * is in (the run is not changed meanwhile).
 */
int pps_tui_open_progressive(struct pps_tui *ui, const char *path_a, const char *path_b,
                             size_t first_rows, struct pps_err *err);

/* Reloads each run whose files changed since it was loaded (unless paused); the view follows
 * when asked to. Returns 1 when something was reloaded, 0 when nothing changed, or an error
 * (the old data stays on screen). */
int pps_tui_refresh(struct pps_tui *ui, struct pps_err *err);

/* Handles a key through the key table; returns 1 when a key was bound, 0 otherwise. */
int pps_tui_key(struct pps_tui *ui, int key);
/* Parses a key script ("++ll<enter>q": characters, and <left> <right> <up> <down> <enter>
 * <tab> <esc> <space> <f1> <home> <end> <pgup> <pgdn> <sleft> <sright>) and feeds each key to
 * pps_tui_key(). Returns 0, or PPS_EINVAL naming an unknown <name>. */
int pps_tui_keys(struct pps_tui *ui, const char *script, struct pps_err *err);

enum pps_tui_mouse {
    PPS_TUI_MOUSE_CLICK = 1, /* select the op under the pointer */
    PPS_TUI_MOUSE_WHEEL_UP,  /* zoom in around the pointer */
    PPS_TUI_MOUSE_WHEEL_DOWN,
};
/* A mouse event at cell (x, y) of the last frame drawn. */
void pps_tui_mouse(struct pps_tui *ui, int x, int y, int event);

/* Draws the whole view into f (its size is the terminal's). */
void pps_tui_draw(struct pps_tui *ui, struct pps_tui_frame *f);

/* One entry of the key table: the handler and the help screen both read it. */
struct pps_tui_keydef {
    int keys[4];      /* key codes that trigger it, 0-terminated */
    const char *name; /* the keys as the help screen shows them */
    const char *bar;  /* "KEY Label" for the key bar, or NULL */
    const char *help; /* one line for the help screen */
    void (*fn)(struct pps_tui *ui);
};
/* The key table, ended by an entry whose fn is NULL. */
const struct pps_tui_keydef *pps_tui_keytab(void);

#endif
