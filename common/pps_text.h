/*
 * pps_text.h - text out of a run (metadata, span and thread names, host and file names, paths)
 * on its way to a terminal or a file meant for people. A run file is foreign input: a name that
 * holds ESC ] 0;... BEL retitles the terminal that prints it, ESC [31m changes its colours, and
 * a byte that is not UTF-8 makes a JSON or XML document invalid. Every writer of such text goes
 * through the one sequence rule here, so that they cannot disagree about what is valid.
 *
 * Header-only (static inline) because common/ is.
 *
 *   pps_text_put(stdout, run->path);       // "/tmp/r\x1b[31m" for a path holding ESC [31m
 */
#ifndef PPS_TEXT_H
#define PPS_TEXT_H

#include <stdint.h>
#include <stdio.h>

/*
 * The length of the valid UTF-8 sequence at s (1 to 4), or 0 when s does not start one: a
 * continuation byte, a sequence cut short (by the end of the string too: its NUL is not a
 * continuation byte), overlong forms, surrogates and code points above U+10FFFF are not valid.
 */
static inline int pps_utf8_len(const char *str)
{
    const unsigned char *s = (const unsigned char *)str;
    unsigned c = s[0];
    uint32_t cp;
    int n;

    if (c < 0x80)
        return 1;
    if (c >= 0xc2 && c <= 0xdf) {
        n = 2;
        cp = c & 0x1f;
    } else if (c >= 0xe0 && c <= 0xef) {
        n = 3;
        cp = c & 0x0f;
    } else if (c >= 0xf0 && c <= 0xf4) {
        n = 4;
        cp = c & 0x07;
    } else {
        return 0;
    }
    for (int i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        cp = cp << 6 | (s[i] & 0x3f);
    }
    if ((n == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
        (n == 4 && (cp < 0x10000 || cp > 0x10ffff)))
        return 0;
    return n;
}

/* The code point of the valid sequence of n bytes (pps_utf8_len) at s. */
static inline uint32_t pps_utf8_code(const char *str, int n)
{
    const unsigned char *s = (const unsigned char *)str;
    static const unsigned char lead_mask[] = {0, 0x7f, 0x1f, 0x0f, 0x07};
    uint32_t cp = s[0] & lead_mask[n];

    for (int i = 1; i < n; i++)
        cp = cp << 6 | (s[i] & 0x3f);
    return cp;
}

/*
 * Writes s (NULL writes nothing) for a terminal: every byte a terminal would act on, and every
 * byte that is not part of a valid UTF-8 sequence, as a visible escape \xNN, so that
 * "\x1b]0;title\x07" is what a reader sees; everything else as it is, so that names in other
 * scripts still read. Escaped: the C0 controls (LF and tab too: a name must not start a line of
 * its own), DEL, and the C1 controls U+0080..U+009F (U+009B is CSI to some terminals), those as
 * their two bytes, "\xc2\x9b". A backslash is written as it is.
 */
static inline void pps_text_put(FILE *f, const char *s)
{
    static const char hex[] = "0123456789abcdef";

    while (s && *s) {
        int n = pps_utf8_len(s);
        unsigned char c = (unsigned char)*s;
        int visible = n > 1 ? pps_utf8_code(s, n) >= 0xa0 : n == 1 && c >= 0x20 && c != 0x7f;

        if (visible) {
            fwrite(s, 1, (size_t)n, f);
            s += n;
            continue;
        }
        for (int i = 0; i < (n ? n : 1); i++, s++) {
            fputs("\\x", f);
            fputc(hex[(unsigned char)*s >> 4], f);
            fputc(hex[(unsigned char)*s & 15], f);
        }
    }
}

#endif
