/*
 * app.c - the interactive view: the loop that reads keys and the mouse, follows resizes, reloads
 * a live run every --delay seconds and draws. With screen.c, the only file that includes curses.
 *
 * Signal handlers only set a flag (SIGINT, SIGTERM, SIGHUP: quit cleanly); a resize arrives from
 * ncurses as KEY_RESIZE. A live run is re-read on a thread of its own (reload.c), from read-only
 * connections that never block the run's writer; the loop takes the result between keys, so a
 * key never waits for a load.
 */
#include <curses.h>
#include <locale.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "tui_int.h"

static volatile sig_atomic_t quit_signal;

static void on_quit_signal(int sig)
{
    (void)sig;
    quit_signal = 1;
}

/* The longest the loop sleeps in getch(): how soon a reloaded run reaches the screen. */
#define POLL_MS 50

/* A curses key as the view's key code; 0 for one the view does not know. */
static int view_key(int ch)
{
    switch (ch) {
    case KEY_UP:
        return PPS_TUI_KEY_UP;
    case KEY_DOWN:
        return PPS_TUI_KEY_DOWN;
    case KEY_LEFT:
        return PPS_TUI_KEY_LEFT;
    case KEY_RIGHT:
        return PPS_TUI_KEY_RIGHT;
    case KEY_SLEFT:
        return PPS_TUI_KEY_SLEFT;
    case KEY_SRIGHT:
        return PPS_TUI_KEY_SRIGHT;
    case KEY_PPAGE:
        return PPS_TUI_KEY_PGUP;
    case KEY_NPAGE:
        return PPS_TUI_KEY_PGDN;
    case KEY_HOME:
        return PPS_TUI_KEY_HOME;
    case KEY_END:
        return PPS_TUI_KEY_END;
    case KEY_F(1):
        return PPS_TUI_KEY_F1;
    case KEY_ENTER:
    case '\r':
        return PPS_TUI_KEY_ENTER;
    default:
        return ch > 0 && ch < 256 ? ch : 0;
    }
}

static void handle_mouse(struct pps_tui *ui)
{
    MEVENT ev;

    if (getmouse(&ev) != OK)
        return;
    if (ev.bstate & BUTTON4_PRESSED)
        pps_tui_mouse(ui, ev.x, ev.y, PPS_TUI_MOUSE_WHEEL_UP);
    else if (ev.bstate & BUTTON5_PRESSED)
        pps_tui_mouse(ui, ev.x, ev.y, PPS_TUI_MOUSE_WHEEL_DOWN);
    else if (ev.bstate & (BUTTON1_CLICKED | BUTTON1_PRESSED))
        pps_tui_mouse(ui, ev.x, ev.y, PPS_TUI_MOUSE_CLICK);
}

static void install_signals(void)
{
    struct sigaction sa;

    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_quit_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
}

/* Takes the reads through the index once they are done (the second step of an open, the steps
 * of a page or a jump the user asked for, paused or not), and what the reloader read since the
 * last look unless the view is paused. */
static void adopt_reloads(struct pps_tui *ui, struct pps__tui_reloader *r)
{
    for (int m = 0; m < ui->n_models; m++) {
        struct pps_span old;
        struct pps_err err = {0, ""};
        int had_sel = pps__tui_sel_span(ui, m, &old);

        int reading = ui->models[m].grow != NULL;
        int grown = pps__tui_model_grow_take(&ui->models[m], 0, &err);
        /* A page's first step in, or a read that ended with nothing: the step waiting on it. */
        int ended = reading && (grown != 0 || !ui->models[m].grow);

        if (m == 0 && ended && ui->step_wait.on && grown >= 0) {
            pps__tui_step_taken(ui, grown, &err); /* the model's change, and the move */
            continue;
        }
        if (m == 0 && ended)
            ui->step_wait.on = 0;
        if (grown < 0) {
            pps__tui_say(ui, "reading more iterations failed, showing those held: %s", err.msg);
            continue;
        }
        if (grown)
            pps__tui_say_read(ui, m);
        if (grown || (!ui->paused && pps__tui_reloader_take(r, m, &ui->models[m], &err)))
            pps__tui_updated(ui, m, had_sel ? &old : NULL);
        else if (err.code)
            pps__tui_say(ui, "reload failed, showing the last data: %s", err.msg);
    }
}

/* Draws, waits for a key (at most POLL_MS), handles it and takes reloaded runs; until the user
 * quits. */
static int loop(struct pps_tui *ui, struct pps__tui_reloader *r, struct pps_err *err)
{
    struct pps_tui_frame f = {0, 0, NULL};
    int poll_ms = ui->opts.delay_s * 1000 < POLL_MS ? (int)(ui->opts.delay_s * 1000) : POLL_MS;
    int rc = 0;

    timeout(poll_ms > 0 ? poll_ms : 1);
    while (!ui->quit && !quit_signal) {
        int cols, rows, ch;

        pps__tui_screen_size(&cols, &rows);
        if (cols != f.cols || rows != f.rows) {
            pps_tui_frame_release(&f);
            if ((rc = pps_tui_frame_init(&f, cols, rows)) < 0) {
                pps_err_set(err, rc, "out of memory for a %dx%d screen", cols, rows);
                break;
            }
        }
        pps_tui_draw(ui, &f);
        pps__tui_screen_draw(&f, ui->opts.ascii);

        ch = getch();
        if (ch == KEY_MOUSE)
            handle_mouse(ui);
        else if (ch != ERR && ch != KEY_RESIZE && view_key(ch))
            pps_tui_key(ui, view_key(ch));
        adopt_reloads(ui, r);
    }
    pps_tui_frame_release(&f);
    return rc;
}

int pps_tui_interactive(const char *path_a, const char *path_b, const struct pps_tui_opts *opts,
                        struct pps_err *err)
{
    struct pps_tui ui;
    struct pps__tui_reloader *reloader = NULL;
    int rc, color = opts->color;

    setlocale(LC_ALL, "");
    pps_tui_init(&ui, opts);
    /* Load the first rows before the screen starts, so a bad run is reported on a normal
     * terminal; the reloader reads the rest while the first frames are up. */
    rc = pps_tui_open_progressive(&ui, path_a, path_b, 0, err);
    if (rc < 0)
        return rc;
    if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
        pps_tui_release(&ui);
        return pps_err_set(err, PPS_EINVAL, "not a terminal: --once prints a frame as text");
    }
    install_signals();
    rc = pps__tui_reloader_start(&ui, &reloader, err);
    if (rc == 0)
        rc = pps__tui_screen_open(&color, err);
    if (rc == 0) {
        ui.opts.color = color;
        rc = loop(&ui, reloader, err);
        pps__tui_screen_close();
    }
    pps__tui_reloader_stop(reloader);
    pps_tui_release(&ui);
    return rc;
}
