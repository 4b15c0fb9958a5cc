/*
 * test_tui_view.c - the view without a terminal: frames and the ruler, the key table (handler,
 * help screen and key bar agree), moves (zoom, pan, iterations, fit), selection by key and by
 * mouse, drawing at many sizes, pause and live reload of a run being written, A/B alignment,
 * interleaved lanes and --once text.
 */
#include <time.h>

#include "test.h"
#include "test_tui_fixture.h"
#include "tui_int.h"

static char tmp[4096];

/* The text of a whole frame, rows joined by newlines (static buffer). */
static const char *frame_text(const struct pps_tui_frame *f, int ascii)
{
    static char buf[1 << 17];
    size_t n = 0;

    for (int y = 0; y < f->rows && n + 4096 < sizeof(buf); y++) {
        pps_tui_frame_row(f, y, ascii, buf + n, 4096);
        n += strlen(buf + n);
        buf[n++] = '\n';
    }
    buf[n] = '\0';
    return buf;
}

static void row_text(const struct pps_tui_frame *f, int y, char *buf, size_t len)
{
    pps_tui_frame_row(f, y, 1, buf, len);
}

/* What `ppscope view --once` (100x30, opts o) writes for path, through a file named name in tmp
 * (malloc'd; NULL, and a failed check, where it cannot be had). */
static char *once_text(const char *path, const struct pps_tui_opts *o, const char *name)
{
    struct pps_err err = {0, ""};
    char out[4200], *text = NULL;
    size_t len;
    FILE *fp;

    snprintf(out, sizeof(out), "%s/%s.txt", tmp, name);
    fp = fopen(out, "w+");
    CHECK(fp && pps_tui_once(path, NULL, o, 100, 30, NULL, fp, &err) == 0);
    if (fp) {
        len = (size_t)ftell(fp);
        text = calloc(1, len + 1);
        rewind(fp);
        CHECK(text && fread(text, 1, len, fp) == len);
        fclose(fp);
    }
    return text;
}

static void open_ui(struct pps_tui *ui, const char *a, const char *b)
{
    struct pps_tui_opts o = {1, 0, 0.5, 0, 0, NULL};
    struct pps_err err = {0, ""};

    pps_tui_init(ui, &o);
    CHECK(pps_tui_open(ui, a, b, &err) == 0);
    if (err.msg[0])
        fprintf(stderr, "  %s\n", err.msg);
}

/* ---- frame and ruler ----------------------------------------------------------------------- */

static void test_frame_text_clip_and_ascii(void)
{
    struct pps_tui_frame f;
    char row[256];

    CHECK(pps_tui_frame_init(&f, 10, 3) == 0);
    CHECK_EQ_INT(pps_tui_frame_text(&f, 7, 0, -1, "abcdef", 0, 0), 3);
    CHECK_EQ_INT(pps_tui_frame_text(&f, -2, 1, 5, "xyz", 0, 0), 5 > 3 ? 3 : 5);
    pps_tui_frame_text(&f, 0, 2, -1, "\xe2\x96\x88\xc2\xb7\xff!", 0, 0); /* block, dot, bad */
    pps_tui_frame_put(&f, 99, 99, 'Q', 0, 0);                            /* ignored */
    pps_tui_frame_row(&f, 0, 0, row, sizeof(row));
    CHECK(!strcmp(row, "       abc"));
    pps_tui_frame_row(&f, 1, 0, row, sizeof(row));
    CHECK(!strcmp(row, "z"));
    pps_tui_frame_row(&f, 2, 0, row, sizeof(row));
    CHECK(!strcmp(row, "\xe2\x96\x88\xc2\xb7?!"));
    pps_tui_frame_row(&f, 2, 1, row, sizeof(row));
    CHECK(!strcmp(row, "#.?!"));
    CHECK(pps_tui_frame_at(&f, 10, 0) == NULL && pps_tui_frame_at(&f, 0, -1) == NULL);
    /* A row cut to a small buffer stays NUL-terminated, never splits a glyph. */
    pps_tui_frame_row(&f, 2, 0, row, 4);
    CHECK(!strcmp(row, "\xe2\x96\x88"));
    pps_tui_frame_release(&f);
    CHECK(pps_tui_glyph_ascii(PPS_TUI_G_SPARK0) == '_' && pps_tui_glyph_ascii('a') == 'a');
}

static void test_ruler_ticks_follow_zoom(void)
{
    struct pps_tui_frame f;
    char buf[64], row[512];

    CHECK_EQ_INT(pps_tui_tick_step(0.5), 1);
    CHECK_EQ_INT(pps_tui_tick_step(1), 1);
    CHECK_EQ_INT(pps_tui_tick_step(1.5), 2);
    CHECK_EQ_INT(pps_tui_tick_step(3), 5);
    CHECK_EQ_INT(pps_tui_tick_step(7), 10);
    CHECK_EQ_INT(pps_tui_tick_step(1000001), 2000000);
    CHECK_EQ_INT(pps_tui_tick_step(4e9), 5000000000LL);
    pps_tui_format_tick(0, 100, 1000, buf, sizeof(buf));
    CHECK(!strcmp(buf, "0"));
    pps_tui_format_tick(300, 100, 1000, buf, sizeof(buf));
    CHECK(!strcmp(buf, "0.3us"));
    pps_tui_format_tick(300, 100, 999, buf, sizeof(buf));
    CHECK(!strcmp(buf, "300ns"));
    pps_tui_format_tick(250000, 50000, 900000, buf, sizeof(buf));
    CHECK(!strcmp(buf, "250us"));
    pps_tui_format_tick(1500000, 500000, 3000000, buf, sizeof(buf));
    CHECK(!strcmp(buf, "1.5ms"));
    pps_tui_format_tick(-2000000000LL, 1000000000LL, -3000000000LL, buf, sizeof(buf));
    CHECK(!strcmp(buf, "-2s"));
    /* A fine step far from 0: the far end's unit, with the step's decimals. */
    pps_tui_format_tick(25020, 20, 25100, buf, sizeof(buf));
    CHECK(!strcmp(buf, "25.02us"));
    /* Too many decimals in the far end's unit: a smaller unit. */
    pps_tui_format_tick(5000001000LL, 1000, 5000002000LL, buf, sizeof(buf));
    CHECK(!strcmp(buf, "5000.001ms"));
    pps_tui_format_ns(812, buf, sizeof(buf));
    CHECK(!strcmp(buf, "812ns"));
    pps_tui_format_ns(1234567, buf, sizeof(buf));
    CHECK(!strcmp(buf, "1.23ms"));
    pps_tui_format_ns(45.6e9, buf, sizeof(buf));
    CHECK(!strcmp(buf, "45.6s"));
    pps_tui_format_ns(NAN, buf, sizeof(buf));
    CHECK(!strcmp(buf, "n/a"));

    /* 100 columns over 1 us: ticks every 100 ns, 10 columns apart. */
    CHECK(pps_tui_frame_init(&f, 100, 1) == 0);
    pps_tui_ruler_draw(&f, 0, 0, 100, 0, 1000, -1);
    pps_tui_frame_row(&f, 0, 1, row, sizeof(row));
    CHECK(!strncmp(row, "+0--------+0.1us", 16));
    CHECK_STR_CONTAINS(row, "+0.9us");
    /* Zoomed out a thousand times: ticks every 100 us. */
    pps_tui_ruler_draw(&f, 0, 0, 100, 0, 1000000, 50);
    pps_tui_frame_row(&f, 0, 1, row, sizeof(row));
    CHECK_STR_CONTAINS(row, "+0.1ms");
    CHECK_EQ_INT(row[50], 'v'); /* the cursor, not covered by a label */
    pps_tui_frame_release(&f);
}

/* ---- the key table ------------------------------------------------------------------------- */

static void test_keytab_one_table_for_handler_help_and_bar(void)
{
    const struct pps_tui_keydef *k = pps_tui_keytab(), *j;
    struct pps_tui ui;
    struct pps_tui_frame f;
    const char *text;
    char want[40];
    int n = 0;

    for (; k->fn; k++, n++) {
        CHECK(k->name && k->name[0] && k->help && k->help[0]);
        for (int i = 0; i < 4 && k->keys[i]; i++)
            for (j = k + 1; j->fn; j++)
                for (int m = 0; m < 4 && j->keys[m]; m++)
                    if (j->keys[m] == k->keys[i]) {
                        fprintf(stderr, "  key %d bound twice: %s, %s\n", k->keys[i], k->name,
                                j->name);
                        CHECK(0);
                    }
    }
    CHECK(n >= 20);

    open_ui(&ui, fx_sim_run(tmp, "keys", PPS_SCHED_1F1B, 4, 8, 2), NULL);
    CHECK(pps_tui_frame_init(&f, 200, 60) == 0);
    pps_tui_key(&ui, '?');
    CHECK(ui.help);
    pps_tui_draw(&ui, &f);
    text = frame_text(&f, 1);
    for (k = pps_tui_keytab(); k->fn; k++) {
        CHECK_STR_CONTAINS(text, k->name);
        snprintf(want, sizeof(want), "%.30s", k->help);
        CHECK_STR_CONTAINS(text, want);
    }
    pps_tui_key(&ui, 'x'); /* any key closes the help */
    CHECK(!ui.help && !ui.quit);
    pps_tui_key(&ui, PPS_TUI_KEY_F1);
    CHECK(ui.help);
    pps_tui_key(&ui, PPS_TUI_KEY_F1);
    pps_tui_draw(&ui, &f);
    text = frame_text(&f, 1);
    for (k = pps_tui_keytab(); k->fn; k++)
        if (k->bar && k->bar[0] != '\xe2')
            CHECK_STR_CONTAINS(text, k->bar);
    CHECK_EQ_INT(pps_tui_key(&ui, 'q'), 1);
    CHECK(ui.quit);
    CHECK_EQ_INT(pps_tui_key(&ui, '#'), 0);
    pps_tui_frame_release(&f);
    pps_tui_release(&ui);
}

static void test_keys_script_names(void)
{
    struct pps_tui ui;
    struct pps_err err = {0, ""};

    open_ui(&ui, fx_sim_run(tmp, "script", PPS_SCHED_1F1B, 2, 4, 1), NULL);
    CHECK(pps_tui_keys(&ui, "<down><tab><space>", &err) == 0);
    CHECK_EQ_INT(ui.cursor, 1);
    CHECK_EQ_INT(ui.pane, PPS_TUI_PANE_FLAGS);
    CHECK(ui.paused);
    CHECK(pps_tui_keys(&ui, "<bogus>", &err) == PPS_EINVAL);
    CHECK_STR_CONTAINS(err.msg, "<bogus>");
    CHECK(pps_tui_keys(&ui, "<left", &err) == PPS_EINVAL);
    pps_tui_release(&ui);
}

/* ---- moves --------------------------------------------------------------------------------- */

static void test_view_zoom_pan_fit_iterate(void)
{
    struct pps_tui ui;
    struct pps_tui_frame f;
    const struct pps_report *rep;
    int64_t w, c, base;

    open_ui(&ui, fx_sim_run(tmp, "moves", PPS_SCHED_1F1B, 4, 8, 3), NULL);
    CHECK(pps_tui_frame_init(&f, 100, 30) == 0);
    pps_tui_draw(&ui, &f);
    rep = ui.models[0].rep;
    base = ui.models[0].run->t_min;
    CHECK_EQ_INT(rep->n_iters, 3);
    /* Opened on the whole run. */
    CHECK(ui.t0 <= 0 && ui.t1 >= pps__tui_extent(&ui));
    CHECK(!ui.follow);

    w = ui.t1 - ui.t0;
    c = ui.t0 + w / 2;
    pps_tui_key(&ui, '+');
    CHECK_NEAR((double)(ui.t1 - ui.t0), w / 2.0, 2);
    CHECK_NEAR((double)(ui.t0 + (ui.t1 - ui.t0) / 2), (double)c, 2);
    pps_tui_key(&ui, '-');
    CHECK_NEAR((double)(ui.t1 - ui.t0), (double)w, 4);

    pps_tui_key(&ui, '+');
    w = ui.t1 - ui.t0;
    c = ui.t0;
    pps_tui_key(&ui, PPS_TUI_KEY_RIGHT);
    CHECK_EQ_INT(ui.t0 - c, w / 8);
    pps_tui_key(&ui, 'h');
    CHECK_EQ_INT(ui.t0, c);

    /* f fits the iteration at the centre (iteration 1 of 0..2), with a 2% margin. */
    pps_tui_key(&ui, 'f');
    CHECK(ui.t0 <= rep->iters[1].t0 - base && ui.t1 >= rep->iters[1].t1 - base);
    CHECK((ui.t1 - ui.t0) < (rep->iters[1].t1 - rep->iters[1].t0) * 105 / 100);
    /* n and p: the next and previous iteration, same zoom. */
    w = ui.t1 - ui.t0;
    pps_tui_key(&ui, 'n');
    CHECK(ui.t0 <= rep->iters[2].t0 - base && ui.t1 >= rep->iters[2].t1 - base);
    CHECK_EQ_INT(ui.t1 - ui.t0, w);
    pps_tui_key(&ui, 'n');
    CHECK_STR_CONTAINS(ui.message, "no later iteration");
    pps_tui_key(&ui, 'p');
    pps_tui_key(&ui, 'p');
    CHECK(ui.t0 <= rep->iters[0].t0 - base && ui.t1 >= rep->iters[0].t1 - base);
    /* End and Home; zooming far out stops at a few times the run. */
    pps_tui_key(&ui, 'G');
    CHECK(ui.t1 >= pps__tui_extent(&ui));
    pps_tui_key(&ui, 'g');
    CHECK(ui.t0 <= 0);
    for (int i = 0; i < 40; i++)
        pps_tui_key(&ui, '-');
    CHECK(ui.t1 - ui.t0 <= 4 * pps__tui_extent(&ui) + 1);
    for (int i = 0; i < 80; i++)
        pps_tui_key(&ui, '+');
    CHECK(ui.t1 - ui.t0 >= 64);
    pps_tui_key(&ui, 'a');
    CHECK(ui.t0 <= 0 && ui.t1 >= pps__tui_extent(&ui));
    pps_tui_frame_release(&f);
    pps_tui_release(&ui);
}

static void test_view_select_by_key_and_mouse(void)
{
    struct pps_tui ui;
    struct pps_tui_frame f;
    const struct pps_span *s, *prev;
    char row[256];
    int y;

    open_ui(&ui, fx_sim_run(tmp, "select", PPS_SCHED_1F1B, 4, 8, 1), NULL);
    CHECK(pps_tui_frame_init(&f, 100, 30) == 0);
    pps_tui_draw(&ui, &f);
    pps_tui_key(&ui, PPS_TUI_KEY_ENTER);
    CHECK(ui.sel.valid && ui.sel.model == 0 && ui.sel.lane == 0);
    s = pps_tui_index_span(ui.models[0].index, 0, ui.sel.pos);
    CHECK(s->start_ns - ui.models[0].run->t_min <=
          ui.t0 + (ui.t1 - ui.t0) / 2 + (ui.t1 - ui.t0) / 40);
    pps_tui_draw(&ui, &f);
    row_text(&f, ui.layout.status.y, row, sizeof(row));
    CHECK_STR_CONTAINS(row, "stage 0");
    CHECK_STR_CONTAINS(row, s->kind == PPS_SPAN_F ? "[F]" : "[BW]");
    CHECK_STR_CONTAINS(row, s->kind == PPS_SPAN_F ? "dur 1.00ms" : "dur 2.00ms");
    prev = s;
    pps_tui_key(&ui, ']');
    s = pps_tui_index_span(ui.models[0].index, 0, ui.sel.pos);
    CHECK(s->start_ns >= prev->end_ns);
    pps_tui_key(&ui, '[');
    CHECK(pps_tui_index_span(ui.models[0].index, 0, ui.sel.pos) == prev);
    pps_tui_key(&ui, PPS_TUI_KEY_ESC);
    CHECK(!ui.sel.valid);

    /* A click on lane 2, at the first column where that stage is busy. */
    y = ui.layout.lanes_a.y + 2;
    for (int x = ui.layout.bars_x; x < ui.layout.bars_x + ui.layout.bars_w; x++) {
        uint32_t ch = pps_tui_frame_at(&f, x, y)->ch;
        if (ch == 'F') {
            pps_tui_mouse(&ui, x, y, PPS_TUI_MOUSE_CLICK);
            break;
        }
    }
    CHECK(ui.sel.valid && ui.sel.lane == 2 && ui.cursor == 2);
    CHECK_EQ_INT(pps_tui_index_span(ui.models[0].index, 2, ui.sel.pos)->kind, PPS_SPAN_F);
    /* The wheel zooms around the pointer. */
    {
        int64_t w = ui.t1 - ui.t0;
        pps_tui_mouse(&ui, ui.layout.bars_x + 3, y, PPS_TUI_MOUSE_WHEEL_UP);
        CHECK_NEAR((double)(ui.t1 - ui.t0), w / 2.0, 2);
        pps_tui_mouse(&ui, ui.layout.bars_x + 3, y, PPS_TUI_MOUSE_WHEEL_DOWN);
        CHECK_NEAR((double)(ui.t1 - ui.t0), (double)w, 4);
    }
    /* Clicks outside the lanes do nothing. */
    pps_tui_mouse(&ui, 0, 0, PPS_TUI_MOUSE_CLICK);
    CHECK(ui.sel.lane == 2);
    pps_tui_frame_release(&f);
    pps_tui_release(&ui);
}

/* ---- drawing ------------------------------------------------------------------------------- */

static void test_view_draws_at_every_size(void)
{
    struct pps_tui ui;
    struct pps_tui_frame f;
    char row[512];

    open_ui(&ui, fx_sim_run(tmp, "sizes", PPS_SCHED_ZB_H1, 4, 8, 2), NULL);
    for (int cols = 1; cols <= 200; cols += 7)
        for (int rows = 1; rows <= 60; rows += 3) {
            CHECK(pps_tui_frame_init(&f, cols, rows) == 0);
            pps_tui_key(&ui, rows % 2 ? '+' : '-');
            pps_tui_draw(&ui, &f);
            if (!ui.layout.ok && cols >= 30 && rows >= 3) {
                const char *t = frame_text(&f, 1);
                snprintf(row, sizeof(row), "have %dx%d, need %dx%d", cols, rows,
                         ui.layout.need_cols, ui.layout.need_rows);
                CHECK_STR_CONTAINS(t, row);
            }
            pps_tui_frame_release(&f);
        }
    /* 80x24: header, 4 lanes, the ruler, the key bar. */
    CHECK(pps_tui_frame_init(&f, 80, 24) == 0);
    pps_tui_key(&ui, 'a');
    pps_tui_draw(&ui, &f);
    row_text(&f, 0, row, sizeof(row));
    CHECK_STR_CONTAINS(row, "zb-h1 p=4 m=8 v=1  2 iters  bubble 11.1%");
    row_text(&f, 1, row, sizeof(row));
    CHECK(!strncmp(row, "s0 >", 4));
    CHECK(strchr(row, 'F') && strchr(row, 'B') && strchr(row, 'W') && strchr(row, '.'));
    row_text(&f, 4, row, sizeof(row));
    CHECK(!strncmp(row, "s3  ", 4));
    row_text(&f, 5, row, sizeof(row));
    CHECK(!strncmp(row, "    +0", 6));
    row_text(&f, 23, row, sizeof(row));
    CHECK(!strncmp(row, "q Quit ? Help", 13));
    CHECK_STR_CONTAINS(frame_text(&f, 1), "predicted 11.1%");
    pps_tui_frame_release(&f);
    pps_tui_release(&ui);
}

/* Interleaved runs get a lane per stage and chunk, labelled s<stage>.<chunk>. */
static void test_view_interleaved_lanes(void)
{
    struct pps_tui ui;
    struct pps_tui_frame f;
    char row[256];

    open_ui(&ui, fx_sim_run(tmp, "inter", PPS_SCHED_INTERLEAVED, 2, 4, 1), NULL);
    CHECK_EQ_INT(pps__tui_lanes(&ui, 0), 4);
    CHECK(pps_tui_frame_init(&f, 80, 24) == 0);
    pps_tui_draw(&ui, &f);
    row_text(&f, 2, row, sizeof(row));
    CHECK(!strncmp(row, "s0.1", 4));
    row_text(&f, 4, row, sizeof(row));
    CHECK(!strncmp(row, "s1.1", 4));
    CHECK_STR_CONTAINS(frame_text(&f, 1), "(p-1)/(v*m+p-1)");
    pps_tui_frame_release(&f);
    pps_tui_release(&ui);
}

/* Counts the cells of row y's bars that show an op, and of them those bold and those dimmed. */
static void lane_attrs(const struct pps_tui *ui, struct pps_tui_frame *f, int y, int *ops,
                       int *bold, int *dim)
{
    *ops = *bold = *dim = 0;
    for (int x = 0; x < ui->layout.bars_w; x++) {
        const struct pps_tui_cell *c = pps_tui_frame_at(f, ui->layout.bars_x + x, y);
        if (!c || c->ch == PPS_TUI_G_IDLE)
            continue;
        (*ops)++;
        *bold += (c->attr & PPS_TUI_A_BOLD) != 0;
        *dim += (c->attr & PPS_TUI_A_DIM) != 0;
    }
}

/* Key c: with tf = tb = 1 (BW = tb + tw = 1) and stage 2 twice as slow as the others, every one
 * of its ops is on the critical path (it sets the pace: its 2m ops of 2 units, 32 of the 36),
 * stage 3's none (it is done before stage 2 needs it), stages 0 and 1 only their first F and
 * last B. The highlight makes exactly those bold and dims the rest; c again clears it. */
static void test_view_critical_path_key(void)
{
    struct pps_tui ui;
    struct pps_tui_frame f;
    struct fx_sim x;
    int ops, bold, dim, y0;

    fx_sim_defaults(&x, PPS_SCHED_1F1B, 4, 8);
    x.tw = 0;
    x.slow_stage = 2;
    x.slow_mult = 2;
    open_ui(&ui, fx_sim_run_x(tmp, "critpath", &x, 1), NULL);
    CHECK(pps_tui_frame_init(&f, 160, 40) == 0);
    pps_tui_draw(&ui, &f);
    y0 = ui.layout.lanes_a.y;
    lane_attrs(&ui, &f, y0 + 2, &ops, &bold, &dim);
    CHECK(ops > 0 && dim == 0);
    CHECK_EQ_INT(pps_tui_key(&ui, 'c'), 1);
    CHECK(ui.critpath);
    CHECK_STR_CONTAINS(ui.message, "critical path");
    CHECK_STR_CONTAINS(ui.message, "s2 88.9%");
    pps_tui_draw(&ui, &f);
    lane_attrs(&ui, &f, y0 + 2, &ops, &bold, &dim);
    CHECK(ops > 0 && bold == ops && dim == 0);
    lane_attrs(&ui, &f, y0 + 3, &ops, &bold, &dim);
    CHECK(ops > 0 && bold == 0 && dim == ops);
    lane_attrs(&ui, &f, y0, &ops, &bold, &dim);
    CHECK(bold > 0 && dim > 0 && bold + dim == ops && bold < ops / 2);
    ui.message[0] = '\0';
    pps_tui_draw(&ui, &f);
    CHECK_STR_CONTAINS(frame_text(&f, 1), "critical path 36.0ms of the 36.0ms window");
    pps_tui_key(&ui, 'c');
    CHECK(!ui.critpath);
    pps_tui_draw(&ui, &f);
    for (int lane = 0; lane < 4; lane++) {
        lane_attrs(&ui, &f, y0 + lane, &ops, &bold, &dim);
        CHECK(dim == 0);
    }
    pps_tui_frame_release(&f);
    pps_tui_release(&ui);

    /* Interleaved (p = 2, m = 4): lanes per chunk. The path begins with the first microbatch's
     * F up the four virtual stages s0.0, s1.0, s0.1, s1.1 (chunk 0 on the last stage feeds
     * chunk 1 on stage 0) and comes back down with the last one's B, so every lane has ops on
     * it, each drawn bold on its own lane (the others dimmed). */
    open_ui(&ui, fx_sim_run(tmp, "critpath_v2", PPS_SCHED_INTERLEAVED, 2, 4, 1), NULL);
    CHECK(pps_tui_frame_init(&f, 160, 40) == 0);
    pps_tui_key(&ui, 'c');
    pps_tui_draw(&ui, &f);
    y0 = ui.layout.lanes_a.y;
    for (int lane = 0; lane < 4; lane++) {
        lane_attrs(&ui, &f, y0 + lane, &ops, &bold, &dim);
        CHECK(ops > 0 && bold > 0 && bold + dim == ops);
    }
    pps_tui_frame_release(&f);
    pps_tui_release(&ui);
}

static void test_view_open_errors(void)
{
    struct pps_tui ui;
    struct pps_err err = {0, ""};
    char path[4200];
    FILE *fp;

    pps_tui_init(&ui, NULL);
    snprintf(path, sizeof(path), "%s/no-such-run", tmp);
    CHECK(pps_tui_open(&ui, path, NULL, &err) == PPS_ENOENT);
    CHECK_STR_CONTAINS(err.msg, "no-such-run");
    snprintf(path, sizeof(path), "%s/garbage.db", tmp);
    fp = fopen(path, "w");
    fputs("not a trace at all, not even close\n", fp);
    fclose(fp);
    CHECK(pps_tui_open(&ui, fx_sim_run(tmp, "good", PPS_SCHED_1F1B, 2, 2, 1), path, &err) ==
          PPS_EFORMAT);
    CHECK_STR_CONTAINS(err.msg, "garbage.db");
    CHECK_EQ_INT(ui.n_models, 0);
    pps_tui_release(&ui);
}

/* ---- live and pause ------------------------------------------------------------------------ */

static void test_view_live_follow_and_pause(void)
{
    struct fx_sim x;
    struct pps_store_writer *w;
    struct pps_tui ui;
    struct pps_tui_frame f;
    struct pps_err err = {0, ""};
    char path[4200], row[256];
    int64_t e1, e2;

    fx_sim_defaults(&x, PPS_SCHED_1F1B, 4, 8);
    snprintf(path, sizeof(path), "%s/live", tmp);
    CHECK(fx_sim_prepare(&x) == 0);
    w = fx_writer(path, &x);
    CHECK(w && fx_write_iters(w, &x, 0, 1) == 0);

    open_ui(&ui, path, NULL);
    CHECK(ui.follow); /* a run still being written is followed */
    CHECK(pps_tui_frame_init(&f, 100, 30) == 0);
    pps_tui_draw(&ui, &f);
    row_text(&f, 0, row, sizeof(row));
    CHECK_STR_CONTAINS(row, "[LIVE] [FOLLOW]");
    e1 = pps__tui_extent(&ui);
    CHECK_EQ_INT(pps_tui_refresh(&ui, &err), 0); /* nothing new */

    CHECK(fx_write_iters(w, &x, 1, 3) == 0);
    CHECK_EQ_INT(pps_tui_refresh(&ui, &err), 1);
    e2 = pps__tui_extent(&ui);
    CHECK(e2 > 2 * e1);
    CHECK(ui.t1 >= e2); /* following: the end is in view */
    CHECK_EQ_INT(ui.models[0].rep->n_iters, 3);

    /* Paused: the view keeps what it has while the run grows. */
    pps_tui_key(&ui, ' ');
    CHECK(fx_write_iters(w, &x, 3, 4) == 0);
    CHECK_EQ_INT(pps_tui_refresh(&ui, &err), 0);
    CHECK_EQ_INT(pps__tui_extent(&ui), e2);
    pps_tui_draw(&ui, &f);
    row_text(&f, 0, row, sizeof(row));
    CHECK_STR_CONTAINS(row, "[PAUSED]");
    row_text(&f, ui.layout.status.y, row, sizeof(row));
    CHECK(!strncmp(row, "[PAUSED]", 8));
    pps_tui_key(&ui, ' ');
    CHECK_EQ_INT(pps_tui_refresh(&ui, &err), 1);
    CHECK_EQ_INT(ui.models[0].rep->n_iters, 4);

    /* Panning back stops following; the writer finishing ends [LIVE]. */
    pps_tui_key(&ui, PPS_TUI_KEY_LEFT);
    CHECK(!ui.follow);
    CHECK(pps_store_writer_close(w, 1, NULL) == 0);
    CHECK_EQ_INT(pps_tui_refresh(&ui, &err), 1);
    CHECK(ui.models[0].run->complete);
    pps_tui_draw(&ui, &f);
    row_text(&f, 0, row, sizeof(row));
    CHECK(!strstr(row, "[LIVE]"));
    pps_tui_frame_release(&f);
    pps_tui_release(&ui);
    fx_sim_release(&x);
}

/* The reload thread: reads what a growing run adds on its own; the view takes it when it asks. */
static void test_view_reloader_thread(void)
{
    struct fx_sim x;
    struct pps_store_writer *w;
    struct pps_tui ui;
    struct pps__tui_reloader *r = NULL;
    struct pps_err err = {0, ""};
    struct timespec tick = {0, 20000000};
    char path[4200];
    int got = 0;

    fx_sim_defaults(&x, PPS_SCHED_ZB_H1, 2, 4);
    snprintf(path, sizeof(path), "%s/reload", tmp);
    CHECK(fx_sim_prepare(&x) == 0);
    w = fx_writer(path, &x);
    CHECK(w && fx_write_iters(w, &x, 0, 1) == 0);
    open_ui(&ui, path, NULL);
    ui.opts.delay_s = 0.02;
    CHECK(pps__tui_reloader_start(&ui, &r, &err) == 0);
    /* Nothing changed: nothing to take. */
    nanosleep(&tick, NULL);
    nanosleep(&tick, NULL);
    CHECK_EQ_INT(pps__tui_reloader_take(r, 0, &ui.models[0], &err), 0);
    CHECK(fx_write_iters(w, &x, 1, 3) == 0);
    /* The writer commits in pieces: a look may catch the first; the last brings all three. */
    for (int i = 0; i < 250 && !(got && ui.models[0].rep->n_iters == 3); i++) {
        if (pps__tui_reloader_take(r, 0, &ui.models[0], &err)) {
            got = 1;
            pps__tui_updated(&ui, 0, NULL);
        } else {
            nanosleep(&tick, NULL);
        }
    }
    CHECK(got);
    if (got)
        CHECK_EQ_INT(ui.models[0].rep->n_iters, 3);
    CHECK_EQ_INT(pps__tui_reloader_take(r, 1, &ui.models[1], &err), 0); /* no model B */
    pps__tui_reloader_stop(r);
    pps__tui_reloader_stop(NULL);
    CHECK(pps_store_writer_close(w, 1, NULL) == 0);
    pps_tui_release(&ui);
    fx_sim_release(&x);
}

/* A progressive open draws its first frame from the first rows, saying it is loading; once the
 * reloader brought the rest, the frame is the one --once prints of the whole run. */
static void test_view_progressive_open_ends_as_once(void)
{
    struct pps_tui_opts o = {1, 0, 0.02, 0, 0, NULL};
    struct pps_tui ui;
    struct pps_tui_frame f;
    struct pps__tui_reloader *r = NULL;
    struct pps_err err = {0, ""};
    struct timespec tick = {0, 10000000};
    const char *path = fx_sim_run(tmp, "progressive", PPS_SCHED_1F1B, 4, 8, 3);
    char *once = NULL;

    pps_tui_init(&ui, &o);
    CHECK(pps_tui_open_progressive(&ui, path, NULL, 16, &err) == 0);
    CHECK(ui.models[0].loading);
    CHECK(ui.models[0].rep == NULL);
    CHECK(ui.models[0].load_read > 0 && ui.models[0].load_read < ui.models[0].load_total);
    CHECK(pps_tui_frame_init(&f, 100, 30) == 0);
    pps_tui_draw(&ui, &f);
    CHECK_STR_CONTAINS(frame_text(&f, 1), "loading...");
    CHECK(pps__tui_reloader_start(&ui, &r, &err) == 0);
    /* The last chunk ends the loading; the report is then made on a thread, and taken. */
    for (int i = 0; i < 500 && (ui.models[0].loading || !ui.models[0].rep); i++) {
        if (pps__tui_reloader_take(r, 0, &ui.models[0], &err))
            pps__tui_updated(&ui, 0, NULL);
        else
            nanosleep(&tick, NULL);
    }
    pps__tui_reloader_stop(r);
    CHECK(!ui.models[0].loading);
    CHECK(ui.models[0].rep != NULL);
    pps_tui_draw(&ui, &f);
    once = once_text(path, &o, "progressive");
    CHECK(once && !strcmp(frame_text(&f, 1), once));
    CHECK(!strstr(frame_text(&f, 1), "loading"));
    free(once);
    pps_tui_frame_release(&f);
    pps_tui_release(&ui);
}

/* Keeps path's summary, as `ppscope report` does; a --max-spans that holds half its spans. */
static size_t keep_summary(const char *path)
{
    struct pps_run *run = NULL;
    struct pps_report *rep = NULL;
    struct pps_err err = {0, ""};
    void *data = NULL;
    size_t len = 0, max;

    CHECK(pps_run_load(path, &run, &err) == 0);
    CHECK(run && pps_analysis_report(run, &rep, &err) == 0);
    CHECK(rep && pps_summary_encode(run, rep, NULL, &data, &len, &err) == 0);
    CHECK(data && pps_run_summary_put(path, PPS_SUMMARY_NAME, run->stamp, data, len, &err) == 0);
    max = run ? run->n_spans / 2 : 1000;
    free(data);
    pps_report_free(rep);
    pps_run_free(run);
    return max;
}

/* A summarised run past --max-spans, opened progressively: its first frame holds the newest
 * iterations within a sixteenth of the budget and says it is reading more ([READING]); once the
 * second step is taken it holds what --once holds (the newest within half), frame for frame.
 * A page comes in two steps too, and ends as the one-step page. */
static void test_view_progressive_open_through_the_index(void)
{
    struct pps_tui_opts o = {1, 0, 0.02, 0, 0, NULL};
    struct pps_tui ui, one;
    struct pps_tui_frame f;
    struct pps_err err = {0, ""};
    const char *path = fx_sim_run(tmp, "indexed", PPS_SCHED_ZB_H1, 4, 8, 64);
    char out[64], *once = NULL;
    int first_small, held;

    o.max_spans = keep_summary(path);

    pps_tui_init(&ui, &o);
    CHECK(pps_tui_open_progressive(&ui, path, NULL, 16, &err) == 0);
    CHECK(ui.models[0].windowed);
    CHECK(ui.models[0].grow != NULL);
    CHECK(ui.models[0].rep != NULL);
    first_small = ui.models[0].run->first_iter;
    /* The first holds a sixteenth of the budget: an iteration or two of the 64. */
    CHECK(first_small >= 60);
    CHECK(pps_tui_frame_init(&f, 100, 30) == 0);
    pps_tui_draw(&ui, &f);
    CHECK_STR_CONTAINS(frame_text(&f, 1), "[READING]");
    snprintf(out, sizeof(out), "iters %d-63 of 64", first_small);
    CHECK_STR_CONTAINS(frame_text(&f, 1), out);
    /* The second step: the newest within half the budget, taken whole. */
    CHECK_EQ_INT(pps__tui_model_grow_take(&ui.models[0], 1, &err), 1);
    CHECK(ui.models[0].grow == NULL);
    pps__tui_updated(&ui, 0, NULL);
    CHECK(ui.models[0].run->first_iter < first_small);
    pps_tui_draw(&ui, &f);
    CHECK(!strstr(frame_text(&f, 1), "[READING]"));
    once = once_text(path, &o, "indexed");
    CHECK(once && !strcmp(frame_text(&f, 1), once));
    free(once);
    /* A page back (p past the first held) comes in the same two steps, both on a thread (no
     * frame waits for a read), and ends holding what the one step of a view not opened for the
     * screen holds. */
    pps_tui_init(&one, &o);
    CHECK(pps_tui_open(&one, path, NULL, &err) == 0);
    held = ui.models[0].run->first_iter;
    CHECK_EQ_INT(pps__tui_model_page(&ui.models[0], held, -1, &err), 2);
    CHECK(ui.models[0].grow != NULL);
    CHECK_EQ_INT(ui.models[0].run->first_iter, held); /* nothing read yet */
    CHECK_EQ_INT(pps__tui_model_page(&ui.models[0], held, -1, &err), 2); /* the same, reading */
    CHECK_EQ_INT(pps__tui_model_page(&one.models[0], one.models[0].run->first_iter, -1, &err), 1);
    CHECK(one.models[0].grow == NULL);
    CHECK_EQ_INT(pps__tui_model_grow_take(&ui.models[0], 1, &err), 2); /* the first step */
    CHECK(ui.models[0].grow != NULL);
    CHECK(ui.models[0].run->first_iter < held);
    CHECK(ui.models[0].run->first_iter > one.models[0].run->first_iter);
    CHECK_EQ_INT(pps__tui_model_grow_take(&ui.models[0], 1, &err), 1);
    CHECK_EQ_INT(ui.models[0].run->first_iter, one.models[0].run->first_iter);
    CHECK_EQ_INT(ui.models[0].run->end_iter, one.models[0].run->end_iter);
    CHECK_EQ_INT(ui.models[0].run->n_spans, one.models[0].run->n_spans);
    CHECK(ui.models[0].rep && one.models[0].rep &&
          ui.models[0].rep->bubble == one.models[0].rep->bubble);
    pps_tui_release(&one);
    pps_tui_frame_release(&f);
    pps_tui_release(&ui);
}

/* path summarised, opened twice within half its spans: for the screen (ui, its second step
 * taken) and in one step (one). */
static void open_pair(const char *path, struct pps_tui_opts *o, struct pps_tui *ui,
                      struct pps_tui *one)
{
    struct pps_err err = {0, ""};

    o->max_spans = keep_summary(path);
    pps_tui_init(ui, o);
    pps_tui_init(one, o);
    CHECK(pps_tui_open_progressive(ui, path, NULL, 16, &err) == 0);
    CHECK(pps_tui_open(one, path, NULL, &err) == 0);
    CHECK_EQ_INT(pps__tui_model_grow_take(&ui->models[0], 1, &err), 1);
    pps__tui_updated(ui, 0, NULL);
}

/* Where the centre of ui's view is, on rank 0's clock, and the label of the iteration there. */
static int64_t view_centre(const struct pps_tui *ui, int *label)
{
    int64_t c = (ui->t0 + ui->t1) / 2;
    int it = pps__tui_iter_at(ui, 0, c);

    *label = it >= 0 ? ui->models[0].rep->iters[it].iter : -1;
    return ui->models[0].run->t_min + c;
}

/* p past the first iteration held, on the screen: no read while the key is handled (the step
 * waits for its page's first step, read on a thread), and once that is in, the view stands
 * where a view that reads in one step stands after the same key; the second step then changes
 * nothing of where it is. Another key meanwhile gives the step up. */
static void test_view_step_past_the_held_waits_for_its_read(void)
{
    struct pps_tui_opts o = {1, 0, 0.02, 0, 0, NULL};
    struct pps_tui ui, one;
    struct pps_err err = {0, ""};
    const char *path = fx_sim_run(tmp, "stepping", PPS_SCHED_1F1B, 4, 8, 64);
    int held, at_ui, at_one;
    int64_t c_ui, c_one;

    open_pair(path, &o, &ui, &one);
    held = ui.models[0].run->first_iter;
    CHECK(held > 0);
    CHECK_EQ_INT(one.models[0].run->first_iter, held);
    pps__tui_fit_iter(&ui, 0);
    pps__tui_fit_iter(&one, 0);

    CHECK(pps_tui_key(&ui, 'p') == 1);
    CHECK(ui.step_wait.on);
    CHECK_EQ_INT(ui.models[0].run->first_iter, held); /* nothing read by the key */
    CHECK_STR_CONTAINS(ui.message, "reading the iterations before");
    CHECK(pps_tui_key(&one, 'p') == 1);
    c_one = view_centre(&one, &at_one);
    CHECK_EQ_INT(at_one, held - 1);

    CHECK_EQ_INT(pps__tui_model_grow_take(&ui.models[0], 1, &err), 2);
    pps__tui_step_taken(&ui, 2, &err);
    CHECK(!ui.step_wait.on);
    c_ui = view_centre(&ui, &at_ui);
    CHECK_EQ_INT(at_ui, held - 1);
    CHECK(c_ui == c_one);
    CHECK(ui.t1 - ui.t0 == one.t1 - one.t0);
    CHECK_EQ_INT(pps__tui_model_grow_take(&ui.models[0], 1, &err), 1);
    pps__tui_updated(&ui, 0, NULL);
    c_ui = view_centre(&ui, &at_ui);
    CHECK(c_ui == c_one);

    /* A key that moves the view while the read is under way gives up the step and the read
     * (what the user did is not undone when it comes in); one that does not move it keeps
     * both; the same step again makes one more once the read is in. */
    pps__tui_fit_iter(&ui, 0);
    held = ui.models[0].run->first_iter;
    CHECK(pps_tui_key(&ui, 'p') == 1);
    CHECK(ui.step_wait.on);
    CHECK(pps_tui_key(&ui, 'c') == 1); /* the critical path: the view stays */
    CHECK(ui.step_wait.on && ui.models[0].grow != NULL);
    CHECK(pps_tui_key(&ui, '+') == 1); /* a zoom: it moves */
    CHECK(!ui.step_wait.on);
    CHECK(ui.models[0].grow == NULL);
    CHECK_EQ_INT(ui.models[0].run->first_iter, held);
    pps__tui_fit_iter(&ui, 0);
    CHECK(pps_tui_key(&ui, 'p') == 1);
    CHECK(pps_tui_key(&ui, 'p') == 1);
    CHECK(pps_tui_key(&ui, 'p') == 1);
    CHECK_STR_CONTAINS(ui.message, "(3 steps to make)");
    CHECK_EQ_INT(pps__tui_model_grow_take(&ui.models[0], 1, &err), 2);
    pps__tui_step_taken(&ui, 2, &err);
    view_centre(&ui, &at_ui);
    /* The first step holds an iteration or two: the steps beyond it wait for the second. */
    CHECK(at_ui == held - 3 || (at_ui > held - 3 && ui.step_wait.on));
    CHECK_EQ_INT(pps__tui_model_grow_take(&ui.models[0], 1, &err), 1);
    pps__tui_step_taken(&ui, 1, &err);
    view_centre(&ui, &at_ui);
    CHECK_EQ_INT(at_ui, held - 3);
    CHECK(!ui.step_wait.on);

    /* g: the run's own start, read through the index, the view at its start once the first step
     * is in, as in one step; G: back to its newest, the view at its end. */
    CHECK(pps_tui_key(&ui, 'g') == 1);
    CHECK(ui.step_wait.on && ui.models[0].run->first_iter > 0);
    CHECK_STR_CONTAINS(ui.message, "reading the run's first iterations");
    CHECK(pps_tui_key(&one, 'g') == 1);
    CHECK_EQ_INT(one.models[0].run->first_iter, 0);
    CHECK_EQ_INT(pps__tui_model_grow_take(&ui.models[0], 1, &err), 2);
    pps__tui_step_taken(&ui, 2, &err);
    CHECK_EQ_INT(ui.models[0].run->first_iter, 0);
    view_centre(&ui, &at_ui);
    CHECK_EQ_INT(at_ui, 0);
    CHECK(ui.t0 < 0 && ui.t0 == one.t0 && ui.t1 == one.t1);
    CHECK_EQ_INT(pps__tui_model_grow_take(&ui.models[0], 1, &err), 1);
    CHECK_EQ_INT(ui.models[0].run->end_iter, one.models[0].run->end_iter);
    CHECK(pps_tui_key(&ui, 'G') == 1);
    CHECK(ui.step_wait.on);
    CHECK_EQ_INT(pps__tui_model_grow_take(&ui.models[0], 1, &err), 2);
    pps__tui_step_taken(&ui, 2, &err);
    CHECK_EQ_INT(ui.models[0].run->end_iter, 0); /* the newest held */
    view_centre(&ui, &at_ui);
    CHECK_EQ_INT(at_ui, 63);
    CHECK(ui.t1 > pps__tui_extent(&ui));
    CHECK_EQ_INT(pps__tui_model_grow_take(&ui.models[0], 1, &err), 1);
    pps_tui_release(&one);
    pps_tui_release(&ui);
}

/* g on a wide view: where the first step's few iterations narrowed it, the second gives it its
 * width back, and the view stands where one read in one step stands; G with nothing to read,
 * and p then n, give up what waits (nothing of it comes in later). */
static void test_view_jump_keeps_its_width_and_gives_way(void)
{
    struct pps_tui_opts o = {1, 0, 0.02, 0, 0, NULL};
    const char *path = fx_sim_run(tmp, "jumping", PPS_SCHED_1F1B, 4, 8, 64);
    struct pps_err err = {0, ""};
    struct pps_tui ui, one;
    int held, at;
    int64_t t0, t1;

    open_pair(path, &o, &ui, &one);
    CHECK(pps_tui_key(&ui, 'a') == 1 && pps_tui_key(&one, 'a') == 1);
    CHECK(ui.t1 - ui.t0 == one.t1 - one.t0);
    CHECK(pps_tui_key(&ui, 'g') == 1 && pps_tui_key(&one, 'g') == 1);
    CHECK_EQ_INT(one.models[0].run->first_iter, 0);
    CHECK_EQ_INT(pps__tui_model_grow_take(&ui.models[0], 1, &err), 2);
    pps__tui_step_taken(&ui, 2, &err);
    CHECK(ui.step_wait.on); /* the jump again, with the second step */
    CHECK_EQ_INT(pps__tui_model_grow_take(&ui.models[0], 1, &err), 1);
    pps__tui_step_taken(&ui, 1, &err);
    CHECK(!ui.step_wait.on);
    CHECK(ui.t0 == one.t0 && ui.t1 == one.t1);

    /* G at once: the newest are not held, so it reads; g then G where G has nothing to read
     * (the newest held, the view at the end) gives g's read up. */
    CHECK(pps_tui_key(&ui, 'G') == 1);
    CHECK(ui.step_wait.on);
    CHECK_EQ_INT(pps__tui_model_grow_take(&ui.models[0], 1, &err), 2);
    pps__tui_step_taken(&ui, 2, &err);
    CHECK_EQ_INT(pps__tui_model_grow_take(&ui.models[0], 1, &err), 1);
    pps__tui_step_taken(&ui, 1, &err);
    CHECK_EQ_INT(ui.models[0].run->end_iter, 0);
    t0 = ui.t0;
    t1 = ui.t1;
    CHECK(pps_tui_key(&ui, 'g') == 1 && ui.step_wait.on);
    CHECK(pps_tui_key(&ui, 'G') == 1);
    CHECK(!ui.step_wait.on && ui.models[0].grow == NULL);
    CHECK(ui.t0 == t0 && ui.t1 == t1);
    CHECK_EQ_INT(ui.models[0].run->end_iter, 0);

    /* p then n at the first held: nothing moves, nothing is read. */
    pps__tui_fit_iter(&ui, 0);
    held = ui.models[0].run->first_iter;
    t0 = ui.t0;
    CHECK(pps_tui_key(&ui, 'p') == 1 && ui.step_wait.on);
    CHECK(pps_tui_key(&ui, 'n') == 1);
    CHECK(!ui.step_wait.on && ui.models[0].grow == NULL);
    CHECK(ui.t0 == t0);
    view_centre(&ui, &at);
    CHECK_EQ_INT(at, held);
    pps_tui_release(&one);
    pps_tui_release(&ui);
}

/* The level stage s's lane shows over one column that is iteration k's window exactly: the
 * eighths of it the stage computed, as the run's own report measures them. */
static int lod_level_of(const struct pps_iter_stats *it, int s)
{
    double w = (double)(it->t1 - it->t0), c = it->stages[s].compute_ns;
    int level = (int)(c / w * 8 + 0.5);

    if (c > w)
        level = 8;
    return level < 1 && c > 0 ? 1 : level;
}

/* Zoomed out past the time held (a: the whole run), the timeline shows the run's other
 * iterations from its summary: where a column is one iteration's window, each stage's share
 * of it computed and the kind it spent most on, figure for figure what the run's report of
 * every span says; a column that meets the time held shows the spans held; the status line
 * gives the whole run's length and, at a centre not held, the summary's iteration there. */
static void test_view_zoomed_out_shows_the_run_past_what_it_holds(void)
{
    struct pps_tui_opts o = {1, 0, 0.02, 0, 0, NULL};
    const char *path = fx_sim_run(tmp, "zoomed", PPS_SCHED_1F1B, 4, 8, 64);
    struct pps_run *run = NULL;
    struct pps_report *rep = NULL;
    struct pps_err err = {0, ""};
    struct pps_tui ui;
    struct pps_tui_frame f;
    struct pps__tui_lod_col c;
    const struct pps_summary_series *all;
    const struct pps_run *held;
    char want[96], len[32];
    int checked = 0, lod_cells = 0;
    int64_t lo, hi;

    o.max_spans = keep_summary(path);
    CHECK(pps_run_load(path, &run, &err) == 0);
    CHECK(run && pps_analysis_report(run, &rep, &err) == 0);
    pps_tui_init(&ui, &o);
    CHECK(pps_tui_open(&ui, path, NULL, &err) == 0);
    all = &ui.models[0].run_iters;
    held = ui.models[0].run;
    CHECK(held->first_iter > 2);
    CHECK_EQ_INT((int)all->n, rep->n_iters);
    CHECK_EQ_INT(all->n_stages, rep->n_stages);
    for (int k = 1; k < held->first_iter - 1; k++) {
        const struct pps_iter_stats *it = &rep->iters[k];
        /* Neighbours' windows that reach into k's would add to its column. */
        if (rep->iters[k - 1].t1 > it->t0 || rep->iters[k + 1].t0 < it->t1)
            continue;
        for (int s = 0; s < rep->n_stages; s++) {
            int kind = 0;
            double best = 0;
            for (int kk = 1; kk < PPS_SPAN_KIND_COUNT; kk++)
                if (pps_span_kind_is_compute(kk) && it->stages[s].busy_ns[kk] > best) {
                    best = it->stages[s].busy_ns[kk];
                    kind = kk;
                }
            pps__tui_lod_columns(&ui.models[0], s, 0, it->t0, it->t1, 1, &c);
            CHECK_EQ_INT(c.level, lod_level_of(it, s));
            CHECK_EQ_INT(c.kind, kind);
            checked++;
        }
    }
    CHECK(checked >= 4);
    /* A column that meets the time held is drawn from the spans. */
    pps__tui_lod_columns(&ui.models[0], 0, 0, held->t_min - 1000, held->t_min + 1000, 1, &c);
    CHECK_EQ_INT(c.level, -1);

    /* Opened, the view fits what is held; a fits the whole run. */
    CHECK(ui.t0 > all->t0[0] - held->t_min);
    CHECK(pps_tui_keys(&ui, "a", &err) == 0);
    pps__tui_bounds(&ui, &lo, &hi);
    CHECK(lo == rep->iters[0].t0 - held->t_min);
    CHECK(hi == rep->iters[rep->n_iters - 1].t1 - held->t_min);
    CHECK(ui.t0 < lo && ui.t1 > hi);
    CHECK(pps_tui_frame_init(&f, 120, 40) == 0);
    pps_tui_draw(&ui, &f);
    /* o.ascii: eighths as digits, where no ASCII ramp would be told from the idle dot. */
    for (int x = 0; x < f.cols; x++) {
        uint32_t ch = pps_tui_frame_at(&f, x, 1)->ch;
        lod_cells += ch >= '1' && ch <= '8';
        CHECK(ch < PPS_TUI_G_SPARK0 || ch > PPS_TUI_G_SPARK0 + 7);
    }
    CHECK(lod_cells > 60); /* most of the run is not held */
    pps_tui_format_ns((double)(hi - lo), len, sizeof(len));
    snprintf(want, sizeof(want), " of %s ", len);
    CHECK_STR_CONTAINS(frame_text(&f, 0), want);
    /* The centre is an iteration not held: the status line names it from the summary. */
    snprintf(want, sizeof(want), "iteration %d (from the summary; not held)",
             all->iter[pps__tui_lod_iter_at(&ui.models[0], (ui.t0 + ui.t1) / 2)]);
    CHECK(pps__tui_lod_iter_at(&ui.models[0], (ui.t0 + ui.t1) / 2) >= 0);
    CHECK_STR_CONTAINS(frame_text(&f, 0), want);

    /* f, n and p go by the iteration the status line names: f fits its window, n and p step
     * to the next and previous at the same width (a view wider than one fits it). */
    {
        int k = pps__tui_lod_iter_at(&ui.models[0], (ui.t0 + ui.t1) / 2), k2;
        int64_t base = held->t_min, w;
        CHECK(pps_tui_keys(&ui, "f", &err) == 0);
        CHECK(ui.t0 < all->t0[k] - base && ui.t1 > all->t1[k] - base);
        CHECK(ui.t1 - ui.t0 < (all->t1[k] - all->t0[k]) * 11 / 10);
        w = ui.t1 - ui.t0;
        CHECK(pps_tui_keys(&ui, "n", &err) == 0);
        k2 = pps__tui_lod_iter_at(&ui.models[0], (ui.t0 + ui.t1) / 2);
        CHECK_EQ_INT(all->iter[k2], all->iter[k] + 1);
        CHECK(ui.t1 - ui.t0 == w);
        CHECK(pps_tui_keys(&ui, "pp", &err) == 0);
        k2 = pps__tui_lod_iter_at(&ui.models[0], (ui.t0 + ui.t1) / 2);
        CHECK_EQ_INT(all->iter[k2], all->iter[k] - 1);
        pps_tui_draw(&ui, &f);
        snprintf(want, sizeof(want), "iteration %d (from the summary; not held)", all->iter[k2]);
        CHECK_STR_CONTAINS(frame_text(&f, 0), want);
    }
    /* Without --ascii, eighth blocks. */
    ui.opts.ascii = 0;
    CHECK(pps_tui_keys(&ui, "a", &err) == 0);
    pps_tui_draw(&ui, &f);
    lod_cells = 0;
    for (int x = 0; x < f.cols; x++) {
        uint32_t ch = pps_tui_frame_at(&f, x, 1)->ch;
        lod_cells += ch >= PPS_TUI_G_SPARK0 && ch <= PPS_TUI_G_SPARK0 + 7;
    }
    CHECK(lod_cells > 60);
    pps_tui_frame_release(&f);
    pps_tui_release(&ui);
    pps_report_free(rep);
    pps_run_free(run);
}

/* Where windows overlap (post-validated iterations), the overlap takes the earlier iteration's
 * share, so a column never counts time twice; held iterations (by label) and the time between
 * them are drawn from the spans; a chunk lane past the first of a stage gets nothing. */
static void test_lod_counts_overlapping_windows_once(void)
{
    static int iter[3] = {0, 1, 2};
    static int64_t t0[3] = {0, 50, 200}, t1[3] = {100, 150, 300};
    static double compute[3] = {50, 100, 80}, device[3] = {0, 0, 0};
    static unsigned char kind[3] = {PPS_SPAN_F, PPS_SPAN_B, PPS_SPAN_F};
    struct pps_run run;
    struct pps_tui_model m;
    struct pps__tui_lod_col c[3];
    int64_t h0, h1;

    memset(&run, 0, sizeof(run));
    memset(&m, 0, sizeof(m));
    run.first_iter = 2;
    run.t_min = 190; /* a straggler of iteration 1 held with iteration 2 */
    run.t_max = 300;
    m.run = &run;
    m.run_iters = (struct pps_summary_series){3, iter, NULL, NULL, 1, t0, t1, compute, device, kind,
                                              0, 300};
    CHECK_EQ_INT(pps__tui_lod_held(&m, &h0, &h1), 1);
    CHECK(h0 == 200 && h1 == 300);
    pps__tui_lod_columns(&m, 0, 0, 0, 150, 1, c);
    CHECK_EQ_INT(c[0].level, 5); /* (0.5 * 100 + 1.0 * 50) / 150, not (50 + 100) / 150 */
    pps__tui_lod_columns(&m, 0, 0, 0, 150, 3, c);
    CHECK_EQ_INT(c[0].level, 4);
    CHECK_EQ_INT(c[0].kind, PPS_SPAN_F);
    CHECK_EQ_INT(c[1].level, 4); /* [50, 100): iteration 0's own */
    CHECK_EQ_INT(c[2].level, 8); /* [100, 150): iteration 1's own */
    CHECK_EQ_INT(c[2].kind, PPS_SPAN_B);
    /* [150, 200) is no iteration's: idle; [200, 300) is held. */
    pps__tui_lod_columns(&m, 0, 0, 100, 300, 4, c);
    CHECK_EQ_INT(c[0].level, 8);
    CHECK_EQ_INT(c[1].level, -1);
    CHECK_EQ_INT(c[2].level, -1);
    pps__tui_lod_columns(&m, -1, 0, 0, 150, 1, c);
    CHECK_EQ_INT(c[0].level, -1);
    /* The status line's iteration: the window holding the time, else the nearest not held. */
    CHECK_EQ_INT(pps__tui_lod_iter_at(&m, 10 - 190), 0);
    CHECK_EQ_INT(pps__tui_lod_iter_at(&m, 120 - 190), 1);
    CHECK_EQ_INT(pps__tui_lod_iter_at(&m, 170 - 190), 1);
    CHECK_EQ_INT(pps__tui_lod_iter_at(&m, 250 - 190), -1);
}

/* A view that holds part of a summarised run charts the whole run too: every iteration's
 * bubble and window from the summary, figure for figure those of the run's own report, beside
 * the held iterations' charts; on the screen they come with the second step. */
static void test_view_charts_the_whole_run_it_holds_part_of(void)
{
    struct pps_tui_opts o = {1, 0, 0.02, 0, 0, NULL};
    const char *path = fx_sim_run(tmp, "charted", PPS_SCHED_ZB_H1, 4, 8, 64);
    struct pps_run *run = NULL;
    struct pps_report *rep = NULL;
    struct pps_err err = {0, ""};
    struct pps_tui ui, screen;
    struct pps_tui_frame f;
    const struct pps_summary_series *all;
    double lo = 1e300, hi = -1e300;
    char want[64];

    o.max_spans = keep_summary(path);
    CHECK(pps_run_load(path, &run, &err) == 0);
    CHECK(run && pps_analysis_report(run, &rep, &err) == 0);
    pps_tui_init(&ui, &o);
    CHECK(pps_tui_open(&ui, path, NULL, &err) == 0);
    all = &ui.models[0].run_iters;
    CHECK(rep && ui.models[0].rep && ui.models[0].rep->n_iters < rep->n_iters);
    CHECK_EQ_INT((int)all->n, rep ? rep->n_iters : -1);
    for (size_t i = 0; rep && i < all->n && i < (size_t)rep->n_iters; i++) {
        CHECK_EQ_INT(all->iter[i], rep->iters[i].iter);
        CHECK(all->window_ns[i] == rep->iters[i].window_ns);
        CHECK(all->bubble[i] == rep->iters[i].bubble);
        lo = 100 * rep->iters[i].bubble < lo ? 100 * rep->iters[i].bubble : lo;
        hi = 100 * rep->iters[i].bubble > hi ? 100 * rep->iters[i].bubble : hi;
    }
    snprintf(want, sizeof(want), "bubble %% (run)  %.4g..%.4g ", lo, hi);
    CHECK(pps_tui_frame_init(&f, 120, 40) == 0);
    ui.pane = PPS_TUI_PANE_FLAGS;
    pps_tui_draw(&ui, &f);
    CHECK_STR_CONTAINS(frame_text(&f, 1), want);
    CHECK_STR_CONTAINS(frame_text(&f, 1), "window (run)");

    /* On the screen: not in the first step (its frame reads no more than it must), then in. */
    pps_tui_init(&screen, &o);
    CHECK(pps_tui_open_progressive(&screen, path, NULL, 16, &err) == 0);
    CHECK_EQ_INT((int)screen.models[0].run_iters.n, 0);
    CHECK_EQ_INT(pps__tui_model_grow_take(&screen.models[0], 1, &err), 1);
    CHECK_EQ_INT((int)screen.models[0].run_iters.n, (int)all->n);
    /* A run held whole has no charts of its own beside them. */
    pps_tui_release(&screen);
    o.max_spans = 0;
    pps_tui_init(&screen, &o);
    CHECK(pps_tui_open(&screen, path, NULL, &err) == 0);
    CHECK_EQ_INT((int)screen.models[0].run_iters.n, 0);
    screen.pane = PPS_TUI_PANE_FLAGS;
    pps_tui_draw(&screen, &f);
    CHECK(!strstr(frame_text(&f, 1), "(run)"));
    pps_tui_release(&screen);
    pps_tui_frame_release(&f);
    pps_tui_release(&ui);
    pps_report_free(rep);
    pps_run_free(run);
}

/* ---- A/B ------------------------------------------------------------------------------------ */

static void test_view_ab_aligned_by_iteration(void)
{
    struct pps_tui ui;
    struct pps_tui_frame f;
    const char *a = fx_sim_run(tmp, "ab-1f1b", PPS_SCHED_1F1B, 4, 8, 3);
    const char *b = fx_sim_run(tmp, "ab-zb", PPS_SCHED_ZB_H1, 4, 8, 3);
    const char *text;

    open_ui(&ui, a, b);
    CHECK_EQ_INT(ui.pane, PPS_TUI_PANE_DELTA);
    CHECK(pps_tui_frame_init(&f, 120, 40) == 0);
    pps_tui_draw(&ui, &f);
    for (int it = 0; it < 3; it++) {
        const struct pps_report *ra = ui.models[0].rep, *rb = ui.models[1].rep;
        pps__tui_fit_iter(&ui, it);
        /* Iteration it of B starts where iteration it of A does, on the view's time scale. */
        CHECK_EQ_INT(rb->iters[it].t0 - pps__tui_base(&ui, 1),
                     ra->iters[it].t0 - pps__tui_base(&ui, 0));
        /* And the view holds the longer of the two. */
        CHECK(ui.t1 - ui.t0 >= ra->iters[it].t1 - ra->iters[it].t0);
    }
    pps_tui_draw(&ui, &f);
    text = frame_text(&f, 1);
    CHECK_STR_CONTAINS(text, "B is 22.2% faster than A: 27.0ms vs 33.0ms per iteration");
    CHECK_STR_CONTAINS(text, "bubble                      27.3%            11.1% -16.2 pp");
    CHECK_STR_CONTAINS(text, "A s0");
    CHECK_STR_CONTAINS(text, "B s3");
    /* The cursor on B's lanes: the stats pane shows run B. */
    for (int i = 0; i < 4; i++)
        pps_tui_key(&ui, PPS_TUI_KEY_DOWN);
    pps_tui_key(&ui, PPS_TUI_KEY_TAB);
    pps_tui_draw(&ui, &f);
    text = frame_text(&f, 1);
    CHECK_STR_CONTAINS(text, "run B");
    CHECK_STR_CONTAINS(text, "predicted 11.1% (zb-h1");
    pps_tui_frame_release(&f);
    pps_tui_release(&ui);
}

/* ---- --once -------------------------------------------------------------------------------- */

static void test_once_writes_the_frame(void)
{
    struct pps_tui_opts o = {0, 1, 0.5, 0, 0, NULL};
    struct pps_err err = {0, ""};
    char path[4200], line[512];
    FILE *fp;
    int n = 0;

    snprintf(path, sizeof(path), "%s/once.txt", tmp);
    fp = fopen(path, "w+");
    CHECK(pps_tui_once(fx_sim_run(tmp, "once", PPS_SCHED_GPIPE, 2, 4, 1), NULL, &o, 70, 20, "<tab>",
                       fp, &err) == 0);
    rewind(fp);
    while (fgets(line, sizeof(line), fp)) {
        if (n == 1)
            CHECK(!strncmp(line, "s0 >", 4));
        if (n == 5) /* header, 2 lanes, ruler, status, then the pane */
            CHECK_STR_CONTAINS(line, "[Flags+charts]");
        n++;
    }
    CHECK_EQ_INT(n, 20);
    fclose(fp);
    fp = fopen(path, "w");
    CHECK(pps_tui_once(path, NULL, &o, 70, 20, NULL, fp, &err) == PPS_EFORMAT);
    fclose(fp);
}

static const struct test_case cases[] = {
    TEST(test_frame_text_clip_and_ascii),
    TEST(test_ruler_ticks_follow_zoom),
    TEST(test_keytab_one_table_for_handler_help_and_bar),
    TEST(test_keys_script_names),
    TEST(test_view_zoom_pan_fit_iterate),
    TEST(test_view_select_by_key_and_mouse),
    TEST(test_view_draws_at_every_size),
    TEST(test_view_interleaved_lanes),
    TEST(test_view_critical_path_key),
    TEST(test_view_open_errors),
    TEST(test_view_live_follow_and_pause),
    TEST(test_view_reloader_thread),
    TEST(test_view_progressive_open_ends_as_once),
    TEST(test_view_progressive_open_through_the_index),
    TEST(test_view_step_past_the_held_waits_for_its_read),
    TEST(test_view_charts_the_whole_run_it_holds_part_of),
    TEST(test_view_zoomed_out_shows_the_run_past_what_it_holds),
    TEST(test_lod_counts_overlapping_windows_once),
    TEST(test_view_jump_keeps_its_width_and_gives_way),
    TEST(test_view_ab_aligned_by_iteration),
    TEST(test_once_writes_the_frame),
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    return fx_test_main_in_tmpdir(cases, argc, argv, tmp, sizeof(tmp));
}
