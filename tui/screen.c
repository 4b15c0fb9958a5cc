/*
 * screen.c - puts a frame on a curses terminal: colours for what a cell shows, attributes, and
 * UTF-8 through ncursesw (or ASCII stand-ins). With app.c, the only file that includes curses.
 *
 * Cells are written in runs of equal colour and attributes, one string each; curses sends only
 * what changed since the last refresh.
 */
#include <curses.h>
#include <string.h>

#include "tui_int.h"

static int use_color;

/* Colour of each enum pps_tui_color (foreground; bars draw it reversed). -1: the default. */
static const short palette[PPS_TUI_C_COUNT] = {
    [PPS_TUI_C_DEFAULT] = -1,     [PPS_TUI_C_F] = COLOR_BLUE,     [PPS_TUI_C_B] = COLOR_GREEN,
    [PPS_TUI_C_W] = COLOR_YELLOW, [PPS_TUI_C_BW] = COLOR_CYAN,    [PPS_TUI_C_COMM] = COLOR_MAGENTA,
    [PPS_TUI_C_WAIT] = COLOR_RED, [PPS_TUI_C_OPT] = COLOR_WHITE,  [PPS_TUI_C_OTHER] = COLOR_WHITE,
    [PPS_TUI_C_IDLE] = -1,        [PPS_TUI_C_TITLE] = COLOR_CYAN, [PPS_TUI_C_KEY] = COLOR_CYAN,
    [PPS_TUI_C_WARN] = COLOR_RED, [PPS_TUI_C_GOOD] = COLOR_GREEN, [PPS_TUI_C_DIM] = -1,
};

int pps__tui_screen_open(int *color, struct pps_err *err)
{
    if (!initscr())
        return pps_err_set(err, PPS_EIO, "cannot start the terminal (is TERM set?)");
    cbreak();
    noecho();
    nonl();
    keypad(stdscr, TRUE);
    set_escdelay(25);
    curs_set(0);
    mousemask(BUTTON1_CLICKED | BUTTON1_PRESSED | BUTTON4_PRESSED | BUTTON5_PRESSED, NULL);
    mouseinterval(0);
    use_color = *color && has_colors();
    if (use_color) {
        start_color();
        use_default_colors();
        for (int i = 1; i < PPS_TUI_C_COUNT && i < COLOR_PAIRS; i++)
            init_pair((short)i, palette[i], -1);
    }
    *color = use_color;
    return 0;
}

void pps__tui_screen_close(void)
{
    if (!isendwin())
        endwin();
}

void pps__tui_screen_size(int *cols, int *rows)
{
    getmaxyx(stdscr, *rows, *cols);
}

static attr_t attrs_of(const struct pps_tui_cell *c)
{
    attr_t a = 0;

    if (c->attr & PPS_TUI_A_BOLD)
        a |= A_BOLD;
    if (c->attr & PPS_TUI_A_REVERSE)
        a |= A_REVERSE;
    if ((c->attr & PPS_TUI_A_DIM) || c->color == PPS_TUI_C_DIM || c->color == PPS_TUI_C_IDLE)
        a |= A_DIM;
    if (c->attr & PPS_TUI_A_UNDER)
        a |= A_UNDERLINE;
    if (use_color && c->color > 0 && c->color < PPS_TUI_C_COUNT)
        a |= COLOR_PAIR(c->color);
    return a;
}

/* Appends c to buf as UTF-8 (or its ASCII stand-in); returns the bytes written. */
static int put_utf8(uint32_t c, int ascii, char *buf)
{
    if (ascii || c < 0x80 || pps_tui_is_control(c)) {
        buf[0] = pps_tui_is_control(c) ? ' ' : pps_tui_glyph_ascii(c);
        return 1;
    }
    if (c < 0x800) {
        buf[0] = (char)(0xC0 | (c >> 6));
        buf[1] = (char)(0x80 | (c & 0x3F));
        return 2;
    }
    buf[0] = (char)(0xE0 | (c >> 12));
    buf[1] = (char)(0x80 | ((c >> 6) & 0x3F));
    buf[2] = (char)(0x80 | (c & 0x3F));
    return 3;
}

void pps__tui_screen_draw(const struct pps_tui_frame *f, int ascii)
{
    char buf[4096];

    erase();
    for (int y = 0; y < f->rows; y++) {
        int x = 0;
        while (x < f->cols) {
            const struct pps_tui_cell *c = &f->cells[(size_t)y * (size_t)f->cols + (size_t)x];
            attr_t a = attrs_of(c);
            int x0 = x, n = 0, last = 0;

            /* A run of cells that look alike, as one string. */
            while (x < f->cols && n + 4 < (int)sizeof(buf)) {
                const struct pps_tui_cell *d = &f->cells[(size_t)y * (size_t)f->cols + (size_t)x];
                if (attrs_of(d) != a)
                    break;
                last = put_utf8(d->ch, ascii, buf + n);
                n += last;
                x++;
            }
            buf[n] = '\0';
            attrset(a);
            /* The bottom-right cell makes curses scroll: leave it out. */
            if (y == f->rows - 1 && x == f->cols && n > 0)
                buf[n - last] = '\0';
            mvaddstr(y, x0, buf);
        }
    }
    attrset(A_NORMAL);
    refresh();
}
