/*
 * escape.c - text in each exported format's quoting (JSON, XML, OpenMetrics, CSV), and the small
 * things every writer needs at its end: checking the stream, growing an array, saying what it
 * wrote.
 *
 * Names come from other programs (kernel names, NVTX ranges, imported traces) and a run's
 * metadata, and a path is whatever the user typed: all four formats must be valid UTF-8 and
 * hold no control character (a terminal acts on ESC and BEL when the file is printed, and XML
 * forbids most of them even as references), so each escaper walks the text by UTF-8 sequence
 * (pps_text.h) and writes U+FFFD for a byte that does not start a valid one and for a control
 * character its format has no escape for.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "export_int.h"
#include "pps_text.h"

static const char replacement[] = "\xef\xbf\xbd"; /* U+FFFD */

/* The code point at *s and the length of its sequence in *n: U+FFFD and 1 for a byte that does
 * not start a valid sequence. */
static uint32_t next_code(const unsigned char *s, int *n)
{
    *n = pps_utf8_len((const char *)s);
    if (*n == 0) {
        *n = 1;
        return 0xfffd;
    }
    return pps_utf8_code((const char *)s, *n);
}

/* A control character: C0, DEL or C1. XML 1.0 also forbids U+FFFE and U+FFFF (not characters),
 * which no format here needs either. */
static int is_control(uint32_t c)
{
    return c < 0x20 || (c >= 0x7f && c < 0xa0) || c == 0xfffe || c == 0xffff;
}

/* Writes the character at *s, U+FFFD for an invalid byte or a control character, and moves *s
 * past it. */
static void put_char(FILE *f, const unsigned char **s)
{
    int n;
    uint32_t c = next_code(*s, &n);

    if (c == 0xfffd || is_control(c))
        fputs(replacement, f);
    else
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
        } else {
            /* Other control characters as U+FFFD, not \u00XX: Perfetto's JSON reader takes no
             * \u escapes in the strings it reads itself (an event's name), and fails the whole
             * trace on one. */
            put_char(f, &s);
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
            put_char(f, &s);
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
            put_char(f, &s);
        }
    }
}

void pps__export_csv_field(FILE *f, const char *str)
{
    const unsigned char *s = (const unsigned char *)(str ? str : "");
    int quote = strpbrk((const char *)s, ",\"\r\n") != NULL;

    /* CR, LF and tab are data in a quoted field (RFC 4180); other control characters are not
     * text a spreadsheet or a terminal should get. */
    if (quote)
        fputc('"', f);
    while (*s) {
        if (*s == '"') {
            fputs("\"\"", f);
            s++;
        } else if (*s == '\r' || *s == '\n' || *s == '\t') {
            fputc(*s++, f);
        } else {
            put_char(f, &s);
        }
    }
    if (quote)
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

void pps__export_what(char *what, size_t len, const char *fmt, ...)
{
    va_list ap;

    if (!what || len == 0)
        return;
    va_start(ap, fmt);
    vsnprintf(what, len, fmt, ap);
    va_end(ap);
}
