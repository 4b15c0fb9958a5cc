/*
 * test_text.c - common/pps_text.h: which byte sequences are valid UTF-8, and what a terminal is
 * sent for text out of a run (terminal escapes, other controls, stray and truncated bytes, C1
 * controls shown as visible \xNN; valid text in any script as it is). Table-driven: each row an
 * input and the exact output.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pps_text.h"
#include "test.h"

static void test_utf8_len_takes_only_valid_sequences(void)
{
    static const struct {
        const char *s;
        int len;
    } rows[] = {
        {"a", 1},
        {"\x1b", 1},             /* a control is a valid sequence; pps_text_put escapes it */
        {"\xc3\xbc", 2},         /* u with diaeresis */
        {"\xe5\x90\x8d", 3},     /* a CJK character */
        {"\xf0\x9f\x98\x80", 4}, /* U+1F600 */
        {"\xff", 0},             /* never a UTF-8 byte */
        {"\x82", 0},             /* a continuation byte alone */
        {"\xe2\x82", 0},         /* cut short by the end of the string */
        {"\xe2\x82x", 0},        /* cut short by another character */
        {"\xc0\xaf", 0},         /* overlong '/' */
        {"\xe0\x80\xaf", 0},     /* overlong, three bytes */
        {"\xed\xa0\x80", 0},     /* a surrogate, U+D800 */
        {"\xf4\x90\x80\x80", 0}, /* U+110000, past the last code point */
    };

    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        if (pps_utf8_len(rows[i].s) != rows[i].len)
            fprintf(stderr, "row %zu\n", i);
        CHECK_EQ_INT(pps_utf8_len(rows[i].s), rows[i].len);
    }
    CHECK_EQ_INT((int)pps_utf8_code("\xf0\x9f\x98\x80", 4), 0x1f600);
    CHECK_EQ_INT((int)pps_utf8_code("\xc2\x9b", 2), 0x9b);
}

static void test_text_put_escapes_what_a_terminal_acts_on(void)
{
    static const struct {
        const char *in, *out;
    } rows[] = {
        {"plain 1f1b", "plain 1f1b"},
        {"\x1b]0;title\x07", "\\x1b]0;title\\x07"},     /* retitles an xterm */
        {"\x1b[31mred\x1b[0m", "\\x1b[31mred\\x1b[0m"}, /* colours */
        {"a\nb\tc\rd", "a\\x0ab\\x09c\\x0dd"},          /* no line of its own, no overwrite */
        {"del\x7f", "del\\x7f"},
        {"csi\xc2\x9b", "csi\\xc2\\x9b"}, /* U+009B: CSI to some terminals */
        {"lone\xff", "lone\\xff"},
        {"cut\xe2\x82", "cut\\xe2\\x82"},
        {"cut\xe2\x82x", "cut\\xe2\\x82x"},
        {"\xc2\xa0nbsp", "\xc2\xa0nbsp"}, /* U+00A0, the first character past C1 */
        {"名前 \xc3\xbc \xf0\x9f\x98\x80", "名前 \xc3\xbc \xf0\x9f\x98\x80"},
        {"back\\slash", "back\\slash"},
        {"", ""},
    };

    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);

        CHECK(f != NULL);
        pps_text_put(f, rows[i].in);
        fclose(f);
        if (strcmp(buf, rows[i].out) != 0)
            fprintf(stderr, "row %zu: got '%s', want '%s'\n", i, buf, rows[i].out);
        CHECK(strcmp(buf, rows[i].out) == 0);
        free(buf);
    }
}

/* A long hostile string is written whole: no buffer of a fixed size between it and the file. */
static void test_text_put_writes_long_strings_whole(void)
{
    char in[1001];
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);

    CHECK(f != NULL);
    for (int i = 0; i < 1000; i += 2) {
        in[i] = 'x';
        in[i + 1] = '\x1b';
    }
    in[1000] = '\0';
    pps_text_put(f, in);
    pps_text_put(f, NULL); /* nothing */
    fclose(f);
    CHECK_EQ_INT((int)len, 500 * 5);
    CHECK(strncmp(buf, "x\\x1bx\\x1b", 10) == 0);
    CHECK(strchr(buf, '\x1b') == NULL);
    free(buf);
}

static const struct test_case cases[] = {
    TEST(test_utf8_len_takes_only_valid_sequences),
    TEST(test_text_put_escapes_what_a_terminal_acts_on),
    TEST(test_text_put_writes_long_strings_whole),
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    return test_main(cases, argc, argv);
}
