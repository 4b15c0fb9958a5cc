/*
 * test_tui_help.c - the help screen (`?`) at every size the view draws in, from its minimum to
 * 300x100: read back from the frame's cells, every entry of the key table whole in its column
 * (wrapped lines read on), in order, on one page or over several, and its last line whole; the
 * keys that turn its pages; and its layout, a pure function, inside the frame at every size.
 */
#include "test.h"
#include "test_tui_fixture.h"
#include "test_tui_read.h"
#include "tui_int.h"

static char tmp[4096];

static const char help_footer[] =
    "mouse: the wheel zooms, a click selects an op. Any key closes this.";

static void open_ui(struct pps_tui *ui, const char *a)
{
    struct pps_tui_opts o = {1, 0, 0.5, 0, 0, NULL};
    struct pps_err err = {0, ""};

    pps_tui_init(ui, &o);
    CHECK(pps_tui_open(ui, a, NULL, &err) == 0);
}

/*
 * The help as drawn at cols x rows, every page of it, read back from the frame's cells (not from
 * its layout): each column's text, top to bottom, must read exactly as the key table's entries
 * in order ("keys help keys help ..."), so an entry cut, lost or split across columns fails; and
 * the footer must read whole on each page. 0, or 1 with the reason in why.
 */
static int help_whole(struct pps_tui *ui, int cols, int rows, char *why, size_t len)
{
    static char got[8192], want[8192];
    struct pps_tui_frame f;
    int bad = 0, pages = 1;

    got[0] = want[0] = '\0';
    for (const struct pps_tui_keydef *k = pps_tui_keytab(); k->fn; k++) {
        stream_add(want, sizeof(want), k->name);
        stream_add(want, sizeof(want), k->help);
    }
    CHECK(pps_tui_frame_init(&f, cols, rows) == 0);
    ui->help = 0;
    pps_tui_draw(ui, &f);
    pps_tui_key(ui, '?');
    for (int page = 0; page < pages && !bad; page++) {
        int x0 = -1, y0 = -1, x1 = -1, y1 = -1, starts[8], ns = 0, label_page = 0;
        char footer[1024] = "", text[1024];

        if (page > 0)
            pps_tui_key(ui, PPS_TUI_KEY_PGDN);
        pps_tui_draw(ui, &f);
        for (int y = 0; y < rows && y0 < 0; y++)
            for (int x = 0; x < cols && y0 < 0; x++)
                if (cell(&f, x, y)->ch == PPS_TUI_G_TL)
                    x0 = x, y0 = y;
        for (int x = x0 + 1; y0 >= 0 && x < cols && x1 < 0; x++)
            if (cell(&f, x, y0)->ch == PPS_TUI_G_TR)
                x1 = x;
        for (int y = y0 + 1; y0 >= 0 && y < rows && y1 < 0; y++)
            if (cell(&f, x0, y)->ch == PPS_TUI_G_BL)
                y1 = y;
        if (y0 < 0 || x1 < 0 || y1 < 0 || cell(&f, x1, y1)->ch != PPS_TUI_G_BR) {
            snprintf(why, len, "page %d: no whole box", page + 1);
            bad = 1;
            break;
        }
        /* Columns start where a key name (the key colour) starts. */
        for (int y = y0 + 1; y < y1; y++)
            for (int x = x0 + 1; x < x1; x++) {
                const struct pps_tui_cell *c = cell(&f, x, y);
                int seen = 0;
                if (c->color != PPS_TUI_C_KEY || c->ch == ' ' ||
                    cell(&f, x - 1, y)->color == PPS_TUI_C_KEY)
                    continue;
                for (int i = 0; i < ns; i++)
                    seen |= starts[i] == x;
                if (!seen && ns < 8)
                    starts[ns++] = x;
            }
        for (int i = 1; i < ns; i++)
            for (int j = i; j > 0 && starts[j] < starts[j - 1]; j--) {
                int t = starts[j];
                starts[j] = starts[j - 1];
                starts[j - 1] = t;
            }
        /* The footer's rows are dim; the others hold the entries. */
        for (int c = 0; c < ns; c++)
            for (int y = y0 + 1; y < y1; y++) {
                int dim = 0;
                for (int x = x0 + 1; x < x1; x++)
                    dim |= cell(&f, x, y)->color == PPS_TUI_C_DIM && cell(&f, x, y)->ch != ' ';
                if (dim && c == 0) {
                    cells_text(&f, y, x0 + 1, x1, text, sizeof(text));
                    stream_add(footer, sizeof(footer), text);
                }
                if (dim)
                    continue;
                cells_text(&f, y, starts[c], c + 1 < ns ? starts[c + 1] : x1, text, sizeof(text));
                stream_add(got, sizeof(got), text);
            }
        stream_end(footer);
        if (strcmp(footer, help_footer)) {
            snprintf(why, len, "page %d: the footer reads '%s'", page + 1, footer);
            bad = 1;
        }
        /* Pages: "N/M" on the bottom border. */
        cells_text(&f, y1, x0 + 1, x1, text, sizeof(text));
        for (char *p = text; *p && !label_page; p++)
            if (*p >= '0' && *p <= '9' && (p == text || p[-1] == ' '))
                if (sscanf(p, "%d/%d", &label_page, &pages) != 2)
                    label_page = 0, pages = 1;
        if (label_page && label_page != page + 1) {
            snprintf(why, len, "page %d says it is page %d", page + 1, label_page);
            bad = 1;
        }
    }
    stream_end(got);
    stream_end(want);
    if (!bad && strcmp(got, want)) {
        snprintf(why, len, "the entries read\n    '%s'\n  instead of\n    '%s'", got, want);
        bad = 1;
    }
    pps_tui_frame_release(&f);
    ui->help = 0;
    return bad;
}

/* At every size the view draws in, from its minimum to 300x100: the help whole. */
static void test_help_whole_at_every_size(void)
{
    struct pps_tui ui;
    char why[20000];

    open_ui(&ui, fx_sim_run(tmp, "help", PPS_SCHED_ZB_H1, 4, 8, 1));
    for (int cols = PPS_TUI_MIN_COLS; cols <= 300; cols++)
        for (int rows = PPS_TUI_MIN_ROWS; rows <= 100; rows++)
            if (help_whole(&ui, cols, rows, why, sizeof(why))) {
                fprintf(stderr, "  help at %dx%d: %s\n", cols, rows, why);
                CHECK(0);
            }
    pps_tui_release(&ui);
}

/* Where the help takes pages: PgDn and Space turn them, PgUp goes back, and any other key, or
 * PgDn on the last page, closes it. Where it fits on one, PgDn closes it as any key does. */
static void test_help_pages_turn_and_close(void)
{
    struct pps_tui ui;
    struct pps_tui_frame f;
    char row[512];
    struct pps__tui_help_layout l;

    open_ui(&ui, fx_sim_run(tmp, "help-pages", PPS_SCHED_1F1B, 4, 8, 1));
    CHECK(pps_tui_frame_init(&f, 60, 16) == 0);
    pps_tui_draw(&ui, &f);
    pps_tui_key(&ui, '?');
    pps__tui_help_layout(60, 16, 0, &l);
    CHECK(l.pages >= 2);
    pps_tui_draw(&ui, &f);
    row_text(&f, l.box.y + l.box.h - 1, row, sizeof(row));
    CHECK(strstr(row, " 1/") && strstr(row, "PgDn: next page"));
    pps_tui_key(&ui, PPS_TUI_KEY_PGDN);
    CHECK(ui.help && ui.help_page == 1);
    pps_tui_key(&ui, PPS_TUI_KEY_PGUP);
    CHECK(ui.help && ui.help_page == 0);
    for (int i = 1; i < l.pages; i++)
        pps_tui_key(&ui, ' ');
    CHECK(ui.help && ui.help_page == l.pages - 1);
    pps_tui_draw(&ui, &f);
    CHECK_STR_CONTAINS(frame_text(&f), "Tab     next pane");
    CHECK_STR_CONTAINS(frame_text(&f), "PgUp: previous page");
    pps_tui_key(&ui, PPS_TUI_KEY_PGDN); /* the last page: closes */
    CHECK(!ui.help && !ui.quit);
    pps_tui_key(&ui, '?');
    pps_tui_key(&ui, PPS_TUI_KEY_PGDN);
    pps_tui_key(&ui, 'x');
    CHECK(!ui.help);
    pps_tui_frame_release(&f);

    /* One page at 120x40: PgDn closes, and no page label shows. */
    CHECK(pps_tui_frame_init(&f, 120, 40) == 0);
    pps_tui_draw(&ui, &f);
    pps_tui_key(&ui, '?');
    pps_tui_draw(&ui, &f);
    CHECK(!strstr(frame_text(&f), "PgDn: next page"));
    pps_tui_key(&ui, PPS_TUI_KEY_PGDN);
    CHECK(!ui.help);
    pps_tui_frame_release(&f);
    pps_tui_release(&ui);
}

/* The help's layout, a pure function, at every size: the box inside the frame, every entry on
 * one page only and in order, inside the box, above the footer, none on another. */
static void test_help_layout_every_size(void)
{
    int n = 0;

    for (const struct pps_tui_keydef *k = pps_tui_keytab(); k->fn; k++)
        n++;
    for (int cols = PPS_TUI_MIN_COLS; cols <= 300; cols++)
        for (int rows = PPS_TUI_MIN_ROWS; rows <= 100; rows++) {
            struct pps__tui_help_layout l;
            int next = 0;

            for (int page = 0; page < 64; page++) {
                pps__tui_help_layout(cols, rows, page, &l);
                CHECK(l.box.w > 0 && l.pages >= 1 &&
                      l.page == (page < l.pages ? page : l.pages - 1));
                CHECK(l.box.x >= 0 && l.box.y >= 0 && l.box.x + l.box.w <= cols &&
                      l.box.y + l.box.h <= rows);
                if (page >= l.pages)
                    break;
                CHECK_EQ_INT(l.first, next);
                CHECK(l.last > l.first && l.last <= n);
                for (int i = l.first; i < l.last; i++) {
                    CHECK(l.x[i] >= l.box.x + 2 && l.x[i] + l.col_w <= l.box.x + l.box.w - 2);
                    CHECK(l.y[i] >= l.box.y + 1 && l.y[i] + l.lines[i] < l.footer_y);
                    CHECK(l.lines[i] ==
                          pps__tui_wrap_lines(l.col_w - l.name_w - 1, pps_tui_keytab()[i].help));
                    for (int j = l.first; j < i; j++) /* entries in one column do not overlap */
                        CHECK(l.x[j] != l.x[i] || l.y[j] + l.lines[j] <= l.y[i]);
                }
                CHECK(l.footer_y + l.footer_lines <= l.box.y + l.box.h - 1);
                next = l.last;
            }
            CHECK_EQ_INT(next, n);
        }
}

static const struct test_case cases[] = {
    TEST(test_help_whole_at_every_size),
    TEST(test_help_pages_turn_and_close),
    TEST(test_help_layout_every_size),
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    return fx_test_main_in_tmpdir(cases, argc, argv, tmp, sizeof(tmp));
}
