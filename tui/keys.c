/*
 * keys.c - the one key table: the key handler, the help screen and the key bar all read it, so
 * they cannot drift apart. Also the mouse, and key scripts (`--keys`) for scripts and tests.
 */
#include <limits.h>
#include <string.h>
#include <strings.h>

#include "tui_int.h"

/* The view's centre: where zooming by key keeps its place and where Enter selects. */
static int64_t centre(const struct pps_tui *ui)
{
    return ui->t0 + (ui->t1 - ui->t0) / 2;
}

/* A move waiting for its read is given up, with the page's first step it waits for: what the
 * user did since is not undone when the read comes in. A second step under way goes on. */
static void give_up_wait(struct pps_tui *ui)
{
    if (!ui->step_wait.on)
        return;
    ui->step_wait.on = 0;
    if (ui->n_models == 1)
        pps__tui_model_page_cancel(&ui->models[0]);
}

/* Where nothing lies past what is held in dir: the run's own first or last iteration, or one
 * that cannot be read (A/B, no summary of the run as it is, a live run). */
static void say_none(struct pps_tui *ui, int dir)
{
    const struct pps_run *run = ui->models[0].run;
    int edge = dir < 0 ? run->first_iter <= 0 : run->end_iter <= 0;

    if (edge)
        pps__tui_say(ui, "no %s iteration", dir > 0 ? "later" : "earlier");
    else if (ui->n_models != 1)
        pps__tui_say(ui, "no %s iteration held (A/B reads no others)",
                     dir > 0 ? "later" : "earlier");
    else
        pps__tui_say(ui, "no %s iteration held: the run's others cannot be read through the index",
                     dir > 0 ? "later" : "earlier");
}

static void do_quit(struct pps_tui *ui)
{
    ui->quit = 1;
}

static void do_help(struct pps_tui *ui)
{
    ui->help = !ui->help;
    ui->help_page = 0;
}

/* A key while the help is up: PgDn (or Space) and PgUp turn its pages where there are more; any
 * other key closes it, and q still quits from there. */
static void help_key(struct pps_tui *ui, int key)
{
    struct pps__tui_help_layout l;

    /* The pages of the help as the last frame drew it (none where the view was too small). */
    pps__tui_help_layout(ui->layout.ok ? ui->layout.cols : 0, ui->layout.rows, ui->help_page, &l);
    if ((key == PPS_TUI_KEY_PGDN || key == ' ') && l.page + 1 < l.pages) {
        ui->help_page = l.page + 1;
        return;
    }
    if (key == PPS_TUI_KEY_PGUP && l.page > 0) {
        ui->help_page = l.page - 1;
        return;
    }
    ui->help = 0;
    if (key == 'q' || key == 'Q')
        ui->quit = 1;
}

static void do_zoom_in(struct pps_tui *ui)
{
    pps__tui_zoom(ui, 0.5, centre(ui));
}

static void do_zoom_out(struct pps_tui *ui)
{
    pps__tui_zoom(ui, 2.0, centre(ui));
}

static void do_pan_left(struct pps_tui *ui)
{
    pps__tui_pan(ui, -(ui->t1 - ui->t0) / 8);
}

static void do_pan_right(struct pps_tui *ui)
{
    pps__tui_pan(ui, (ui->t1 - ui->t0) / 8);
}

static void do_page_left(struct pps_tui *ui)
{
    pps__tui_pan(ui, -(ui->t1 - ui->t0) * 7 / 8);
}

static void do_page_right(struct pps_tui *ui)
{
    pps__tui_pan(ui, (ui->t1 - ui->t0) * 7 / 8);
}

/* The start of what is held (with a margin of a fiftieth of the view). */
static void home_held(struct pps_tui *ui)
{
    int64_t w = ui->t1 - ui->t0;

    pps__tui_pan(ui, -ui->t0 - w / 50);
}

/* A jump (g, G) whose read through the index (rc, its error in err) changed the model: onto the
 * start or the end of what is held now, as wide as the view was when the key came (width; what
 * a first step holds may have narrowed it). */
static void jumped(struct pps_tui *ui, int kind, int rc, const struct pps_err *err, int64_t width)
{
    ui->sel.valid = 0;
    pps__tui_updated(ui, 0, NULL);
    if (rc < 0) {
        pps__tui_say(ui, "%s", err->msg);
        return;
    }
    pps__tui_say_read(ui, 0);
    ui->follow = 0;
    if (width > 0)
        pps__tui_set_range(ui, ui->t0, ui->t0 + width);
    if (kind == PPS__TUI_MOVE_END)
        pps__tui_follow(ui);
    else
        home_held(ui);
}

/* g or G where the run's own first (last) iteration is not held (--max-spans left it out): the
 * run's first (newest) iterations read through the index, as a page is, then the same move. 1
 * when it did or is doing so, 0 where there is nothing to read (no summary, A/B, a live run). */
static int jump(struct pps_tui *ui, int kind)
{
    struct pps_tui_model *m = &ui->models[0];
    struct pps_err err = {0, ""};
    int end = kind == PPS__TUI_MOVE_END, rc;

    if (ui->n_models != 1 || !m->run || (end ? m->run->end_iter <= 0 : m->run->first_iter <= 0))
        return 0;
    /* The first: from below every label on; the last: the newest, as the open reads them. */
    if ((rc = pps__tui_model_page(m, end ? 0 : INT_MIN, end ? 0 : 1, &err)) == 0)
        return 0;
    if (rc == 2) {
        pps__tui_say(ui, "reading the run's %s iterations through the index",
                     end ? "last" : "first");
        ui->step_wait = (struct pps__tui_step_wait){1, kind, 0, 0, 0, 0, ui->t1 - ui->t0};
        ui->step_seq++;
        return 1;
    }
    jumped(ui, kind, rc, &err, 0);
    return 1;
}

/* g and G mean where they go: one with nothing to read gives up a move waiting for its read. */
static void do_home(struct pps_tui *ui)
{
    if (!jump(ui, PPS__TUI_MOVE_HOME)) {
        give_up_wait(ui);
        home_held(ui);
    }
}

static void do_end(struct pps_tui *ui)
{
    if (!jump(ui, PPS__TUI_MOVE_END)) {
        give_up_wait(ui);
        pps__tui_follow(ui);
    }
}

/* Past the iterations held of a finished run (--max-spans dropped the others): the next ones
 * in dir, read through the index, holding the one at hand too. The index in the new report of
 * the iteration after label in dir; -1 where there is nothing to read (the run's own first or
 * last, a live run, A/B, no summary), -2 where reading failed (said on the status line), -3
 * where the read is under way on a thread (on the screen: pps__tui_step_taken() moves on once
 * its first step is in). The view stays on the same time (its run's first span moved). */
static int page_onto(struct pps_tui *ui, int label, int dir, int rc, const struct pps_err *err);

static int page(struct pps_tui *ui, int label, int dir)
{
    struct pps_tui_model *m = &ui->models[0];
    struct pps_err err = {0, ""};
    int rc;

    if (ui->n_models != 1 || (dir < 0 && m->run->first_iter <= 0) ||
        (dir > 0 && m->run->end_iter <= 0))
        return -1;
    rc = pps__tui_model_page(m, label, dir, &err);
    if (rc == 0)
        return -1;
    if (rc == 2) {
        pps__tui_say(ui, "reading the iterations %s %d through the index",
                     dir < 0 ? "before" : "after", label);
        return -3;
    }
    return page_onto(ui, label, dir, rc, &err);
}

/* page()'s answer, once the page (rc, its error in err) has changed the model: the index in its
 * report of the iteration after label in dir. */
static int page_onto(struct pps_tui *ui, int label, int dir, int rc, const struct pps_err *err)
{
    const struct pps_report *rep;
    int k;

    /* Changed, also where the read then failed (a second step taken first). */
    ui->sel.valid = 0;
    pps__tui_updated(ui, 0, NULL);
    if (rc < 0) {
        pps__tui_say(ui, "%s", err->msg);
        return -2;
    }
    rep = ui->models[0].rep;
    if (!rep || rep->n_iters < 1)
        return -1;
    pps__tui_say_read(ui, 0);
    /* The one after label in dir: the last below it, or the first above it. */
    k = dir < 0 ? rep->n_iters - 1 : 0;
    while (k >= 0 && k < rep->n_iters &&
           (dir < 0 ? rep->iters[k].iter >= label : rep->iters[k].iter <= label))
        k += dir < 0 ? -1 : 1;
    return k < rep->n_iters ? k : -1;
}

/* The move of step_iter() from the report's iteration it (-1: of a report replaced since) onto
 * to, keeping the offset into the iteration; from_t0: where it starts (rank 0's clock). */
static void step_onto(struct pps_tui *ui, int it, int to, int64_t from_t0, int dir)
{
    const struct pps_report *rep = ui->models[0].rep;

    if (it < 0 || dir < 0)
        ui->follow = 0;
    pps__tui_pan(ui, rep->iters[to].t0 - from_t0);
    /* A view wider than an iteration shows the next one whole instead. */
    if (to == it || 2 * (ui->t1 - ui->t0) > 3 * (rep->iters[to].t1 - rep->iters[to].t0))
        pps__tui_fit_iter(ui, to);
}

/*
 * At a centre past the iterations held (a view zoomed out from the run's summary, lod.c), n and p
 * (dir 1, -1) step through the summary's iterations as they step through held ones (same zoom and
 * offset into the iteration; a view wider than one fits the next), and f (dir 0) fits the one at
 * the centre: 1. 0 where the centre is in what is held, which the spans answer.
 */
static int summary_move(struct pps_tui *ui, int dir)
{
    const struct pps_tui_model *m = &ui->models[0];
    const struct pps_summary_series *s = &m->run_iters;
    int k = ui->n_models == 1 ? pps__tui_lod_iter_at(m, centre(ui)) : -1, to = k + dir;
    int64_t base, w, a, b;

    if (k < 0)
        return 0;
    if (to < 0 || to >= (int)s->n) {
        pps__tui_say(ui, "no %s iteration", dir > 0 ? "later" : "earlier");
        return 1;
    }
    base = m->run->t_min;
    a = s->t0[to] - base;
    b = s->t1[to] - base;
    w = ui->t1 - ui->t0;
    ui->follow = 0;
    if (dir == 0 || w > b - a)
        pps__tui_set_range(ui, a - (b - a) / 50, b + (b - a) / 50 + 1);
    else
        pps__tui_pan(ui, s->t0[to] - s->t0[k]);
    return 1;
}

/* Next (dir 1) or previous iteration, keeping the zoom and the offset into the iteration. */
static void step_iter(struct pps_tui *ui, int dir)
{
    const struct pps_report *rep = ui->models[0].rep;
    int it = pps__tui_iter_at(ui, 0, centre(ui)), to = it + dir;
    int64_t base = ui->models[0].run->t_min, c = base + centre(ui), from_t0;

    /* Again while a step the same way waits for its read: one more step once it is in; the
     * other way, one step fewer (none left: the move and its read are given up). */
    if (ui->step_wait.on && ui->step_wait.kind == PPS__TUI_MOVE_STEP) {
        if (ui->step_wait.dir == dir)
            ui->step_wait.more++;
        else if (ui->step_wait.more > 0)
            ui->step_wait.more--;
        else {
            give_up_wait(ui);
            return;
        }
        pps__tui_say(ui, "reading the iterations %s %d through the index (%d step%s to make)",
                     ui->step_wait.dir < 0 ? "before" : "after", ui->step_wait.label,
                     ui->step_wait.more + 1, ui->step_wait.more ? "s" : "");
        return;
    }
    if (summary_move(ui, dir))
        return;

    if (it < 0 && !rep) {
        pps__tui_say(ui, "iterations are known once the run is loaded");
        return;
    }
    if (it < 0) {
        pps__tui_say(ui, "this run has no iterations");
        return;
    }
    /* Before the first window or after the last, the first step lands on the nearest. */
    if ((dir > 0 && c < rep->iters[it].t0) || (dir < 0 && c >= rep->iters[it].t1))
        to = it;
    from_t0 = rep->iters[it].t0;
    if (to < 0 || to >= rep->n_iters) {
        /* Beyond what is held: the next iterations read, and the same move onto them. */
        if ((to = page(ui, rep->iters[it].iter, dir)) < 0) {
            if (to == -1)
                say_none(ui, dir);
            if (to == -3) {
                ui->step_wait = (struct pps__tui_step_wait){
                    1, PPS__TUI_MOVE_STEP, rep->iters[it].iter, dir, from_t0, 0, 0};
                ui->step_seq++;
            }
            return;
        }
        it = -1; /* no longer in this report */
    }
    step_onto(ui, it, to, from_t0, dir);
}

void pps__tui_step_taken(struct pps_tui *ui, int rc, const struct pps_err *err)
{
    struct pps__tui_step_wait w = ui->step_wait;
    int to;

    ui->step_wait.on = 0;
    if (!w.on)
        return;
    if (w.kind != PPS__TUI_MOVE_STEP) {
        int end = w.kind == PPS__TUI_MOVE_END;

        if (rc != 0) {
            jumped(ui, w.kind, rc, err, w.width);
            /* A first step: the same again once the second is in (what it holds is wider). */
            if (rc == 2 && ui->models[0].grow) {
                ui->step_wait = w;
                ui->step_seq++;
            }
            return;
        }
        /* Nothing read (no summary of the run as it is now, or no map of its labels). */
        if (end)
            pps__tui_follow(ui);
        else
            home_held(ui);
        pps__tui_say(ui,
                     "the %s of what is held: the run's %s iterations cannot be read through "
                     "the index",
                     end ? "end" : "start", end ? "later" : "earlier");
        return;
    }
    if (rc == 0) {
        say_none(ui, w.dir);
        return;
    }
    if ((to = page_onto(ui, w.label, w.dir, rc, err)) < 0) {
        if (to == -1)
            say_none(ui, w.dir);
        return;
    }
    /* The steps asked for again meanwhile, as far as what is held now goes; those beyond it wait
     * for the second step, where one is under way. */
    {
        const struct pps_report *rep = ui->models[0].rep;
        int want = to + w.dir * w.more, left;

        to = want < 0 ? 0 : want >= rep->n_iters ? rep->n_iters - 1 : want;
        left = want > to ? want - to : to - want;
        step_onto(ui, -1, to, w.from_t0, w.dir);
        /* Steps left: after the second step, where one is under way, else from a new page. */
        if (left > 0 && (ui->models[0].grow || page(ui, rep->iters[to].iter, w.dir) == -3)) {
            ui->step_wait = (struct pps__tui_step_wait){
                1, PPS__TUI_MOVE_STEP, rep->iters[to].iter, w.dir, rep->iters[to].t0, left - 1, 0};
            ui->step_seq++;
        } else if (left > 0) {
            say_none(ui, w.dir);
        }
    }
}

/* After a key or the mouse (the view was t0, t1 and step_seq seq before it): a move waiting for
 * its read is given up, with the page's first step it waits for, where the view has moved and
 * no new move waits: what the user did is not undone when the read comes in. */
static void moved_since(struct pps_tui *ui, int64_t t0, int64_t t1, unsigned seq)
{
    if (ui->step_wait.on && ui->step_seq == seq && (ui->t0 != t0 || ui->t1 != t1))
        give_up_wait(ui);
}

static void do_next_iter(struct pps_tui *ui)
{
    step_iter(ui, 1);
}

static void do_prev_iter(struct pps_tui *ui)
{
    step_iter(ui, -1);
}

static void do_fit_iter(struct pps_tui *ui)
{
    int it = pps__tui_iter_at(ui, 0, centre(ui));

    if (summary_move(ui, 0))
        return;
    if (it < 0 && !ui->models[0].rep) {
        pps__tui_say(ui, "iterations are known once the run is loaded");
        return;
    }
    if (it < 0) {
        pps__tui_say(ui, "this run has no iterations");
        return;
    }
    ui->follow = 0;
    pps__tui_fit_iter(ui, it);
}

static void do_fit_all(struct pps_tui *ui)
{
    pps__tui_fit_all(ui, 1);
}

static void do_follow(struct pps_tui *ui)
{
    ui->follow = !ui->follow;
    if (ui->follow)
        pps__tui_follow(ui);
    pps__tui_say(ui, "follow %s", ui->follow ? "on: the view keeps the run's end" : "off");
}

static void do_pause(struct pps_tui *ui)
{
    ui->paused = !ui->paused;
    pps__tui_say(ui, "%s",
                 ui->paused ? "paused: the view is frozen, the run is still recorded" : "resumed");
}

static void do_select(struct pps_tui *ui)
{
    int model, lane;
    int64_t tol = (ui->t1 - ui->t0) / (ui->layout.bars_w > 0 ? ui->layout.bars_w : 80);

    pps__tui_cursor_lane(ui, &model, &lane);
    if (!pps__tui_select_at(ui, model, lane, centre(ui), tol * 2))
        pps__tui_say(ui, "no op under the cursor (the centre column of the cursor's lane)");
}

static void do_unselect(struct pps_tui *ui)
{
    ui->sel.valid = 0;
}

static void do_next_op(struct pps_tui *ui)
{
    pps__tui_select_step(ui, 1);
}

static void do_prev_op(struct pps_tui *ui)
{
    pps__tui_select_step(ui, -1);
}

static void do_lane_up(struct pps_tui *ui)
{
    if (ui->cursor > 0)
        ui->cursor--;
}

static void do_lane_down(struct pps_tui *ui)
{
    if (ui->cursor + 1 < pps__tui_lanes(ui, 0) + pps__tui_lanes(ui, 1))
        ui->cursor++;
}

static void do_pane(struct pps_tui *ui)
{
    ui->pane = (ui->pane + 1) % PPS_TUI_PANE_COUNT;
    if (ui->pane == PPS_TUI_PANE_DELTA && ui->n_models < 2)
        ui->pane = (ui->pane + 1) % PPS_TUI_PANE_COUNT;
}

static void do_critpath(struct pps_tui *ui)
{
    char text[160];

    ui->critpath = !ui->critpath;
    if (!ui->critpath) {
        pps__tui_say(ui, "critical path off");
        return;
    }
    if (!ui->models[0].rep) {
        pps__tui_say(ui, "critical path on: shown once the run is loaded");
        return;
    }
    if (!pps__tui_path(ui, 0) || !pps__tui_path_text(ui, text, sizeof(text))) {
        pps__tui_say(ui, "critical path on: this run has no iterations to walk");
        return;
    }
    pps__tui_say(ui, "%s", text);
}

static const struct pps_tui_keydef keytab[] = {
    {{'q', 'Q'}, "q", "q Quit", "quit", do_quit},
    {{'?', PPS_TUI_KEY_F1}, "? F1", "? Help", "this help (any key closes)", do_help},
    {{'+', '='}, "+ =", "+- Zoom", "zoom in (or mouse wheel)", do_zoom_in},
    {{'-', '_'}, "- _", NULL, "zoom out", do_zoom_out},
    {{PPS_TUI_KEY_LEFT, 'h'},
     "Left h",
     "\xe2\x86\x90\xe2\x86\x92 Pan",
     "pan left 1/8 screen",
     do_pan_left},
    {{PPS_TUI_KEY_RIGHT, 'l'}, "Right l", NULL, "pan right 1/8 screen", do_pan_right},
    {{PPS_TUI_KEY_PGUP, PPS_TUI_KEY_SLEFT, 'H'}, "PgUp H", NULL, "pan left a screen", do_page_left},
    {{PPS_TUI_KEY_PGDN, PPS_TUI_KEY_SRIGHT, 'L'},
     "PgDn L",
     NULL,
     "pan right a screen",
     do_page_right},
    {{PPS_TUI_KEY_HOME, 'g'}, "Home g", NULL, "go to the start of the run", do_home},
    {{PPS_TUI_KEY_END, 'G'}, "End G", NULL, "go to the end of the run", do_end},
    {{'n'}, "n", "n/p Iter", "next iteration, same zoom", do_next_iter},
    {{'p'}, "p", NULL, "previous iteration", do_prev_iter},
    {{'f'}, "f", "f Fit", "fit the iteration at centre", do_fit_iter},
    {{'a', '0'}, "a 0", NULL, "fit the whole run", do_fit_all},
    {{'F'}, "F", "F Follow", "follow the live run on/off", do_follow},
    {{' ', 'z'}, "Space z", "Spc Pause", "pause view (not the run)", do_pause},
    {{PPS_TUI_KEY_UP, 'k'}, "Up k", NULL, "cursor to the lane above", do_lane_up},
    {{PPS_TUI_KEY_DOWN, 'j'}, "Down j", NULL, "cursor to the lane below", do_lane_down},
    {{PPS_TUI_KEY_ENTER, '\r'}, "Enter", "Ent Select", "select the op at the cursor", do_select},
    {{']'}, "]", NULL, "select the next op", do_next_op},
    {{'['}, "[", NULL, "select the previous op", do_prev_op},
    {{PPS_TUI_KEY_ESC}, "Esc", NULL, "clear the selection", do_unselect},
    {{PPS_TUI_KEY_TAB}, "Tab", "Tab Pane", "next pane: stats, flags, A/B", do_pane},
    {{'c'}, "c", "c Path", "critical path on/off: its ops bold, the rest dimmed", do_critpath},
    {{0}, NULL, NULL, NULL, NULL},
};

/* The keys that leave a move waiting for its read as it is: those that do not move the view,
 * and the steps and jumps, which decide themselves (step_iter(), do_home(), do_end()). */
static int keeps_wait(void (*fn)(struct pps_tui *))
{
    static void (*const keep[])(struct pps_tui *) = {
        do_critpath, do_help,      do_lane_down, do_lane_up, do_next_op,
        do_pane,     do_pause,     do_prev_op,   do_quit,    do_select,
        do_unselect, do_next_iter, do_prev_iter, do_home,    do_end,
    };
    for (size_t i = 0; i < sizeof(keep) / sizeof(keep[0]); i++)
        if (keep[i] == fn)
            return 1;
    return 0;
}

const struct pps_tui_keydef *pps_tui_keytab(void)
{
    return keytab;
}

int pps_tui_key(struct pps_tui *ui, int key)
{
    ui->message[0] = '\0';
    if (ui->help) {
        help_key(ui, key);
        return 1;
    }
    for (const struct pps_tui_keydef *k = keytab; k->fn; k++)
        for (int i = 0; i < 4 && k->keys[i]; i++)
            if (k->keys[i] == key) {
                int64_t t0 = ui->t0, t1 = ui->t1;
                unsigned seq = ui->step_seq;

                ui->refit = 0; /* the user moves the view from now on */
                /* A key that goes somewhere of its own (a pan, a zoom, a fit, follow) gives up
                 * a move waiting for its read, even where it has nowhere to go. */
                if (!keeps_wait(k->fn))
                    give_up_wait(ui);
                k->fn(ui);
                moved_since(ui, t0, t1, seq);
                return 1;
            }
    return 0;
}

static const struct {
    const char *name;
    int key;
} key_names[] = {
    {"left", PPS_TUI_KEY_LEFT},
    {"right", PPS_TUI_KEY_RIGHT},
    {"up", PPS_TUI_KEY_UP},
    {"down", PPS_TUI_KEY_DOWN},
    {"sleft", PPS_TUI_KEY_SLEFT},
    {"sright", PPS_TUI_KEY_SRIGHT},
    {"pgup", PPS_TUI_KEY_PGUP},
    {"pgdn", PPS_TUI_KEY_PGDN},
    {"home", PPS_TUI_KEY_HOME},
    {"end", PPS_TUI_KEY_END},
    {"f1", PPS_TUI_KEY_F1},
    {"enter", PPS_TUI_KEY_ENTER},
    {"tab", PPS_TUI_KEY_TAB},
    {"esc", PPS_TUI_KEY_ESC},
    {"space", ' '},
    {"lt", '<'},
};

int pps_tui_keys(struct pps_tui *ui, const char *script, struct pps_err *err)
{
    for (const char *p = script; p && *p && !ui->quit; p++) {
        int key = (unsigned char)*p;

        if (*p == '<') {
            const char *end = strchr(p, '>');
            size_t len = end ? (size_t)(end - p - 1) : 0;
            size_t i, n = sizeof(key_names) / sizeof(key_names[0]);

            for (i = 0; i < n; i++)
                if (len == strlen(key_names[i].name) && !strncasecmp(p + 1, key_names[i].name, len))
                    break;
            if (!end || i == n)
                return pps_err_set(err, PPS_EINVAL,
                                   "unknown key '%.*s' in the key script (see --help)",
                                   end ? (int)(end - p + 1) : (int)strlen(p), p);
            key = key_names[i].key;
            p = end;
        }
        pps_tui_key(ui, key);
    }
    return 0;
}

void pps_tui_mouse(struct pps_tui *ui, int x, int y, int event)
{
    const struct pps_tui_layout *l = &ui->layout;
    int64_t t;
    int model = -1, lane = -1;

    if (!l->ok || x < l->bars_x || x >= l->bars_x + l->bars_w)
        return;
    ui->refit = 0;
    t = ui->t0 + (int64_t)((double)(ui->t1 - ui->t0) * ((double)(x - l->bars_x) + 0.5) / l->bars_w);
    if (event == PPS_TUI_MOUSE_WHEEL_UP || event == PPS_TUI_MOUSE_WHEEL_DOWN) {
        int64_t t0 = ui->t0, t1 = ui->t1;

        ui->message[0] = '\0';
        pps__tui_zoom(ui, event == PPS_TUI_MOUSE_WHEEL_UP ? 0.5 : 2.0, t);
        moved_since(ui, t0, t1, ui->step_seq);
        return;
    }
    if (y >= l->lanes_a.y && y < l->lanes_a.y + l->lanes_a.h) {
        model = 0;
        lane = ui->lane_top[0] + (y - l->lanes_a.y);
    } else if (y >= l->lanes_b.y && y < l->lanes_b.y + l->lanes_b.h) {
        model = 1;
        lane = ui->lane_top[1] + (y - l->lanes_b.y);
    }
    if (model < 0 || lane >= pps__tui_lanes(ui, model))
        return;
    ui->message[0] = '\0';
    ui->cursor = model == 0 ? lane : pps__tui_lanes(ui, 0) + lane;
    if (!pps__tui_select_at(ui, model, lane, t, (ui->t1 - ui->t0) / l->bars_w))
        pps__tui_say(ui, "no op there");
}
