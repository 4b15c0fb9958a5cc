/*
 * escape.c - text in each exported format's quoting (JSON, XML, OpenMetrics, CSV), and the small
 * things every writer needs at its end: checking the stream, growing an array, saying what it
 * wrote.
 *
 * Names come from other programs (kernel names, NVTX ranges, imported traces) and a path is
 * whatever the user typed: all four formats must be valid UTF-8, so each escaper walks the
 * text by UTF-8 sequence and writes U+FFFD for a byte that does not start a valid one.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "export_int.h"

static const char replacement[] = "\xef\xbf\xbd"; /* U+FFFD */

/* The length of the valid UTF-8 sequence at s (1 to 4), or 0 when s does not start one:
 * overlong forms, surrogates and code points above U+10FFFF are not valid. */
static int utf8_len(const unsigned char *s)
{
    unsigned c = s[0];
    int n;
    uint32_t cp;

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

/* Writes the UTF-8 sequence at *s (or U+FFFD) and moves *s past it. */
static void put_utf8(FILE *f, const unsigned char **s)
{
    int n = utf8_len(*s);

    if (n == 0) {
        fputs(replacement, f);
        (*s)++;
        return;
    }
    fwrite(*s, 1, (size_t)n, f);
    *s += n;
}

void pps__export_json_string(FILE *f, const char *str)
{
    const unsigned char *s = (const unsigned char *)(str ? str : "");

    fputc('"', f);
    while (*s) {
        if (*s == '"' || *s == '\\') {
            fputc('\\', f);
            fputc(*s++, f);
        } else if (*s == '\n') {
            fputs("\\n", f);
            s++;
        } else if (*s == '\t') {
            fputs("\\t", f);
            s++;
        } else if (*s < 0x20) {
            /* Not \u00XX: Perfetto's JSON reader takes no \u escapes in the strings it reads
             * itself (an event's name), and fails the whole trace on one. */
            fputs(replacement, f);
            s++;
        } else {
            put_utf8(f, &s);
        }
    }
    fputc('"', f);
}

void pps__export_xml_text(FILE *f, const char *str)
{
    const unsigned char *s = (const unsigned char *)(str ? str : "");

    while (*s) {
        switch (*s) {
        case '&':
            fputs("&amp;", f);
            break;
        case '<':
            fputs("&lt;", f);
            break;
        case '>':
            fputs("&gt;", f);
            break;
        case '"':
            fputs("&quot;", f);
            break;
        case '\t':
        case '\n':
        case '\r':
            fputc(*s, f);
            break;
        default:
            if (*s < 0x20) {
                fputs(replacement, f);
                break;
            }
            put_utf8(f, &s);
            continue;
        }
        s++;
    }
}

void pps__export_om_string(FILE *f, const char *str)
{
    const unsigned char *s = (const unsigned char *)(str ? str : "");

    while (*s) {
        if (*s == '\\' || *s == '"') {
            fputc('\\', f);
            fputc(*s++, f);
        } else if (*s == '\n') {
            fputs("\\n", f);
            s++;
        } else {
            put_utf8(f, &s);
        }
    }
}

void pps__export_csv_field(FILE *f, const char *str)
{
    const unsigned char *s = (const unsigned char *)(str ? str : "");

    if (!strpbrk((const char *)s, ",\"\r\n")) {
        while (*s)
            put_utf8(f, &s);
        return;
    }
    fputc('"', f);
    while (*s) {
        if (*s == '"') {
            fputs("\"\"", f);
            s++;
        } else {
            put_utf8(f, &s);
        }
    }
    fputc('"', f);
}

void pps__export_put_us(FILE *f, int64_t ns)
{
    /* Through unsigned, so that INT64_MIN has a magnitude too. */
    uint64_t mag = ns < 0 ? 0 - (uint64_t)ns : (uint64_t)ns;

    fprintf(f, "%s%" PRIu64 ".%03" PRIu64, ns < 0 ? "-" : "", mag / 1000, mag % 1000);
}

int pps__export_finish(FILE *f, struct pps_err *err)
{
    if (fflush(f) != 0 || ferror(f))
        return pps_err_set(err, PPS_EIO, "write failed: %s", strerror(errno ? errno : EIO));
    return 0;
}

int pps__export_grow(void **p, size_t *cap, size_t need, size_t size)
{
    size_t n = *cap ? *cap : 16;
    void *q;

    if (need <= *cap)
        return 0;
    while (n < need) {
        if (n > SIZE_MAX / 2 / size)
            return PPS_ENOMEM;
        n *= 2;
    }
    q = realloc(*p, n * size);
    if (!q)
        return PPS_ENOMEM;
    *p = q;
    *cap = n;
    return 0;
}

void pps__export_what(char *what, size_t len, const char *fmt, ...)
{
    va_list ap;

    if (!what || len == 0)
        return;
    va_start(ap, fmt);
    vsnprintf(what, len, fmt, ap);
    va_end(ap);
}
