/*
 * frame.c - the frame: a grid of cells that the view draws into, and the text renderer that
 * writes it out (`ppscope view --once`, tests). Drawing never reaches outside the grid.
 */
#include <stdarg.h>
#include <stdlib.h>

#include "tui_core.h"

int pps_tui_frame_init(struct pps_tui_frame *f, int cols, int rows)
{
    f->cols = cols > 0 ? cols : 1;
    f->rows = rows > 0 ? rows : 1;
    f->cells = malloc((size_t)f->cols * (size_t)f->rows * sizeof(*f->cells));
    if (!f->cells) {
        f->cols = f->rows = 0;
        return PPS_ENOMEM;
    }
    pps_tui_frame_clear(f);
    return 0;
}

void pps_tui_frame_release(struct pps_tui_frame *f)
{
    free(f->cells);
    f->cells = NULL;
    f->cols = f->rows = 0;
}

void pps_tui_frame_clear(struct pps_tui_frame *f)
{
    size_t n = (size_t)f->cols * (size_t)f->rows;

    for (size_t i = 0; i < n; i++) {
        f->cells[i].ch = ' ';
        f->cells[i].color = PPS_TUI_C_DEFAULT;
        f->cells[i].attr = 0;
    }
}

struct pps_tui_cell *pps_tui_frame_at(struct pps_tui_frame *f, int x, int y)
{
    if (x < 0 || y < 0 || x >= f->cols || y >= f->rows)
        return NULL;
    return &f->cells[(size_t)y * (size_t)f->cols + (size_t)x];
}

void pps_tui_frame_put(struct pps_tui_frame *f, int x, int y, uint32_t ch, int color, int attr)
{
    struct pps_tui_cell *c = pps_tui_frame_at(f, x, y);

    if (!c)
        return;
    c->ch = ch;
    c->color = (uint8_t)color;
    c->attr = (uint8_t)attr;
}

/* Decodes one UTF-8 code point from *s, advancing it; '?' for a malformed sequence. */
static uint32_t utf8_next(const char **s)
{
    const unsigned char *p = (const unsigned char *)*s;
    uint32_t c = p[0];
    int n = 0;

    if (c < 0x80)
        n = 0;
    else if ((c & 0xE0) == 0xC0)
        n = 1, c &= 0x1F;
    else if ((c & 0xF0) == 0xE0)
        n = 2, c &= 0x0F;
    else if ((c & 0xF8) == 0xF0)
        n = 3, c &= 0x07;
    else {
        *s += 1;
        return '?';
    }
    for (int i = 1; i <= n; i++) {
        if ((p[i] & 0xC0) != 0x80) {
            *s += i;
            return '?';
        }
        c = (c << 6) | (p[i] & 0x3F);
    }
    *s += n + 1;
    return c;
}

int pps_tui_frame_text(struct pps_tui_frame *f, int x, int y, int max_w, const char *utf8,
                       int color, int attr)
{
    int w = 0;

    if (max_w < 0)
        max_w = f->cols - x;
    while (utf8 && *utf8 && w < max_w) {
        uint32_t c = utf8_next(&utf8);
        pps_tui_frame_put(f, x + w, y, c, color, attr);
        w++;
    }
    return w;
}

int pps_tui_frame_printf(struct pps_tui_frame *f, int x, int y, int max_w, int color, int attr,
                         const char *fmt, ...)
{
    char buf[512];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    return pps_tui_frame_text(f, x, y, max_w, buf, color, attr);
}

void pps_tui_frame_paint(struct pps_tui_frame *f, int x, int y, int w, int color, int attr)
{
    for (int i = 0; i < w; i++) {
        struct pps_tui_cell *c = pps_tui_frame_at(f, x + i, y);
        if (c) {
            c->color = (uint8_t)color;
            c->attr = (uint8_t)attr;
        }
    }
}

void pps_tui_frame_box(struct pps_tui_frame *f, struct pps_tui_rect r, int color)
{
    if (r.w < 2 || r.h < 2)
        return;
    for (int y = r.y; y < r.y + r.h; y++)
        for (int x = r.x; x < r.x + r.w; x++)
            pps_tui_frame_put(f, x, y, ' ', PPS_TUI_C_DEFAULT, 0);
    for (int x = r.x + 1; x < r.x + r.w - 1; x++) {
        pps_tui_frame_put(f, x, r.y, PPS_TUI_G_HLINE, color, 0);
        pps_tui_frame_put(f, x, r.y + r.h - 1, PPS_TUI_G_HLINE, color, 0);
    }
    for (int y = r.y + 1; y < r.y + r.h - 1; y++) {
        pps_tui_frame_put(f, r.x, y, PPS_TUI_G_VLINE, color, 0);
        pps_tui_frame_put(f, r.x + r.w - 1, y, PPS_TUI_G_VLINE, color, 0);
    }
    pps_tui_frame_put(f, r.x, r.y, PPS_TUI_G_TL, color, 0);
    pps_tui_frame_put(f, r.x + r.w - 1, r.y, PPS_TUI_G_TR, color, 0);
    pps_tui_frame_put(f, r.x, r.y + r.h - 1, PPS_TUI_G_BL, color, 0);
    pps_tui_frame_put(f, r.x + r.w - 1, r.y + r.h - 1, PPS_TUI_G_BR, color, 0);
}

char pps_tui_glyph_ascii(uint32_t c)
{
    if (c < 0x80)
        return (char)c;
    if (c >= PPS_TUI_G_SPARK0 && c <= PPS_TUI_G_SPARK0 + 7) /* sparkline heights */
        return "_.,-=+*#"[c - PPS_TUI_G_SPARK0];
    switch (c) {
    case PPS_TUI_G_FULL:
        return '#';
    case PPS_TUI_G_LIGHT:
        return ':';
    case PPS_TUI_G_IDLE:
        return '.';
    case PPS_TUI_G_HLINE:
        return '-';
    case PPS_TUI_G_VLINE:
        return '|';
    case PPS_TUI_G_TL:
    case PPS_TUI_G_TR:
    case PPS_TUI_G_BL:
    case PPS_TUI_G_BR:
    case PPS_TUI_G_TICK:
        return '+';
    case PPS_TUI_G_CURSOR:
        return 'v';
    case PPS_TUI_G_LEFT:
        return '<';
    case PPS_TUI_G_RIGHT:
        return '>';
    case PPS_TUI_G_FLAG:
        return '!';
    default:
        return '?';
    }
}

/* Encodes c as UTF-8 into buf (at least 5 bytes); returns the bytes written. */
static int utf8_put(uint32_t c, char *buf)
{
    if (c < 0x80) {
        buf[0] = (char)c;
        return 1;
    }
    if (c < 0x800) {
        buf[0] = (char)(0xC0 | (c >> 6));
        buf[1] = (char)(0x80 | (c & 0x3F));
        return 2;
    }
    if (c < 0x10000) {
        buf[0] = (char)(0xE0 | (c >> 12));
        buf[1] = (char)(0x80 | ((c >> 6) & 0x3F));
        buf[2] = (char)(0x80 | (c & 0x3F));
        return 3;
    }
    buf[0] = (char)(0xF0 | (c >> 18));
    buf[1] = (char)(0x80 | ((c >> 12) & 0x3F));
    buf[2] = (char)(0x80 | ((c >> 6) & 0x3F));
    buf[3] = (char)(0x80 | (c & 0x3F));
    return 4;
}

void pps_tui_frame_row(const struct pps_tui_frame *f, int y, int ascii, char *buf, size_t len)
{
    size_t n = 0, keep = 0;

    if (!len)
        return;
    for (int x = 0; y >= 0 && y < f->rows && x < f->cols; x++) {
        uint32_t c = f->cells[(size_t)y * (size_t)f->cols + (size_t)x].ch;
        char enc[5];
        int k;

        if (pps_tui_is_control(c))
            c = ' ';
        else if (ascii)
            c = (uint32_t)pps_tui_glyph_ascii(c);
        k = utf8_put(c, enc);
        if (n + (size_t)k + 1 > len)
            break;
        for (int i = 0; i < k; i++)
            buf[n++] = enc[i];
        if (c != ' ')
            keep = n;
    }
    buf[keep] = '\0';
}

int pps_tui_frame_write(const struct pps_tui_frame *f, FILE *out, int ascii)
{
    size_t len = (size_t)f->cols * 4 + 1;
    char *line = malloc(len);

    if (!line)
        return PPS_ENOMEM;
    for (int y = 0; y < f->rows; y++) {
        pps_tui_frame_row(f, y, ascii, line, len);
        fputs(line, out);
        fputc('\n', out);
    }
    free(line);
    return ferror(out) ? PPS_EIO : 0;
}
