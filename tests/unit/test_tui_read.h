/*
 * test_tui_read.h - reading a drawn frame back in the view's tests: rows as text, cells, and
 * texts as streams of words (runs of blanks as one space), so that a text wrapped over several
 * rows compares equal to the text it wraps.
 */
#ifndef PPS_TEST_TUI_READ_H
#define PPS_TEST_TUI_READ_H

#include <stdio.h>
#include <string.h>

#include "test.h"
#include "tui_core.h"

/* Each test uses some of these helpers. */
#define RD_FN static __attribute__((unused))

/* Row y of the frame as ASCII text (trailing blanks cut). */
RD_FN void row_text(const struct pps_tui_frame *f, int y, char *buf, size_t len)
{
    pps_tui_frame_row(f, y, 1, buf, len);
}

/* The text of a whole frame, rows joined by newlines (static buffer). */
RD_FN const char *frame_text(const struct pps_tui_frame *f)
{
    static char buf[1 << 17];
    size_t n = 0;

    for (int y = 0; y < f->rows && n + 4096 < sizeof(buf); y++) {
        pps_tui_frame_row(f, y, 1, buf + n, 4096);
        n += strlen(buf + n);
        buf[n++] = '\n';
    }
    buf[n] = '\0';
    return buf;
}

#define CHECK_STARTS(s, prefix)                                                                    \
    do {                                                                                           \
        if (strncmp((s), (prefix), strlen(prefix))) {                                              \
            fprintf(stderr, "  '%s' does not start with '%s'\n", (s), (prefix));                   \
            CHECK(0);                                                                              \
        }                                                                                          \
    } while (0)

RD_FN const struct pps_tui_cell *cell(const struct pps_tui_frame *f, int x, int y)
{
    return &f->cells[(size_t)y * (size_t)f->cols + (size_t)x];
}

/* Appends text to the stream s (len bytes) as words: runs of blanks become one space. */
RD_FN void stream_add(char *s, size_t len, const char *text)
{
    size_t n = strlen(s);

    for (const char *c = text; *c && n + 2 < len; c++) {
        if (*c == ' ') {
            if (n > 0 && s[n - 1] != ' ')
                s[n++] = ' ';
        } else {
            if (c == text && n > 0 && s[n - 1] != ' ')
                s[n++] = ' ';
            s[n++] = *c;
        }
    }
    s[n] = '\0';
}

RD_FN void stream_end(char *s)
{
    size_t n = strlen(s);

    while (n > 0 && s[n - 1] == ' ')
        s[--n] = '\0';
}

/* Cells [x0, x1) of row y as ASCII text. */
RD_FN void cells_text(const struct pps_tui_frame *f, int y, int x0, int x1, char *buf, size_t len)
{
    size_t n = 0;

    for (int x = x0; x < x1 && n + 1 < len; x++)
        buf[n++] = pps_tui_glyph_ascii(cell(f, x, y)->ch);
    buf[n] = '\0';
}

#endif
