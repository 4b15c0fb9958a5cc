/*
 * export_int.h - what the exporters share between their files: the quoting of text for each
 * format (escape.c), the end of a document, an array that grows, and the wording of what was
 * written. Not part of the module's interface (export.h).
 */
#ifndef PPS_EXPORT_INT_H
#define PPS_EXPORT_INT_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "export.h"
#include "pps_grow.h"

/*
 * Text out of a run (kernel and range names, metadata, paths, the verdict) in each format's
 * quoting. Every one writes valid UTF-8 and no control character the format does not escape: a
 * byte that does not start a valid sequence, and a control character (C0, DEL, C1; U+FFFE and
 * U+FFFF too) the format has no escape for, are written as U+FFFD, so a name with a stray byte
 * or an ESC does not make the whole document unreadable, nor drive a terminal that prints it.
 */
/* A JSON string with its quotes: ", \, LF and tab escaped, other control characters as U+FFFD
 * (no \u escapes: Perfetto's reader refuses them). */
void pps__export_json_string(FILE *f, const char *s);
/* XML character data or an attribute value in double quotes (no quotes written): &, <, > and "
 * as entities; control characters XML 1.0 forbids (all below 0x20 but tab, LF, CR) as U+FFFD. */
void pps__export_xml_text(FILE *f, const char *s);
/* An OpenMetrics escaped-string (label value, help): \ as \\, " as \", LF as \n, other
 * control characters as U+FFFD. */
void pps__export_om_string(FILE *f, const char *s);
/* An RFC 4180 field: as it is, or in quotes with its quotes doubled where it holds a comma, a
 * quote, CR or LF; control characters but CR, LF and tab as U+FFFD. */
void pps__export_csv_field(FILE *f, const char *s);

/* Times for the Perfetto trace: ns as microseconds with three decimals ("-12.345" too). */
void pps__export_put_us(FILE *f, int64_t ns);

/* Flushes f and returns 0, or PPS_EIO ("write failed: <why>") when f had or has an error. */
int pps__export_finish(FILE *f, struct pps_err *err);

/* printf into what (len bytes; nothing when what is NULL or len 0). */
void pps__export_what(char *what, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
