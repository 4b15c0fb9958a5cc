/* json.c - the streaming JSON writer behind every --json output. */
#include <inttypes.h>
#include <math.h>

#include "cli.h"
#include "pps_text.h"

void pps_json_init(struct pps_json *j, FILE *f)
{
    j->f = f;
    j->depth = 0;
    j->need_comma[0] = 0;
}

/*
 * A JSON string, valid whatever s holds (run files are foreign input): ", \ and the control
 * characters escaped (\n, \t, else \u00XX, DEL and the C1 controls U+0080..U+009F too, so that
 * a document printed on a terminal sends it nothing to act on), and each byte that does not
 * start a valid UTF-8 sequence as U+FFFD, as export/ writes it: \u00XX would claim the byte was
 * the character U+00XX, which it was not.
 */
static void put_string(FILE *f, const char *s)
{
    fputc('"', f);
    while (*s) {
        int n = pps_utf8_len(s);
        uint32_t c = n ? pps_utf8_code(s, n) : 0xfffd;

        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", (int)c);
        else if (c == '\n')
            fputs("\\n", f);
        else if (c == '\t')
            fputs("\\t", f);
        else if (c < 0x20 || (c >= 0x7f && c < 0xa0))
            fprintf(f, "\\u%04x", (unsigned)c);
        else if (n == 0)
            fputs("\xef\xbf\xbd", f); /* U+FFFD */
        else
            fwrite(s, 1, (size_t)n, f);
        s += n ? n : 1;
    }
    fputc('"', f);
}

/* Writes the comma and the key (if any) that come before a value. */
static void prefix(struct pps_json *j, const char *key)
{
    if (j->need_comma[j->depth])
        fputc(',', j->f);
    j->need_comma[j->depth] = 1;
    if (key) {
        put_string(j->f, key);
        fputc(':', j->f);
    }
}

static void open_nest(struct pps_json *j, const char *key, char c)
{
    prefix(j, key);
    fputc(c, j->f);
    if (j->depth < 31)
        j->depth++;
    j->need_comma[j->depth] = 0;
}

void pps_json_begin_object(struct pps_json *j, const char *key)
{
    open_nest(j, key, '{');
}

void pps_json_end_object(struct pps_json *j)
{
    j->depth--;
    fputc('}', j->f);
}

void pps_json_begin_array(struct pps_json *j, const char *key)
{
    open_nest(j, key, '[');
}

void pps_json_end_array(struct pps_json *j)
{
    j->depth--;
    fputc(']', j->f);
}

void pps_json_string(struct pps_json *j, const char *key, const char *value)
{
    prefix(j, key);
    if (value)
        put_string(j->f, value);
    else
        fputs("null", j->f);
}

void pps_json_int(struct pps_json *j, const char *key, int64_t value)
{
    prefix(j, key);
    fprintf(j->f, "%" PRId64, value);
}

void pps_json_double(struct pps_json *j, const char *key, double value)
{
    prefix(j, key);
    if (isfinite(value))
        fprintf(j->f, "%.6g", value);
    else
        fputs("null", j->f);
}

void pps_json_bool(struct pps_json *j, const char *key, int value)
{
    prefix(j, key);
    fputs(value ? "true" : "false", j->f);
}

void pps_json_null(struct pps_json *j, const char *key)
{
    prefix(j, key);
    fputs("null", j->f);
}

void pps_json_finish(struct pps_json *j)
{
    fputc('\n', j->f);
    fflush(j->f);
}
