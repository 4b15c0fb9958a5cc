/*
 * summary_codec.h - the bytes of a summary (summary.c): named arrays of 64-bit integers, doubles
 * or text, each found again by its name, so a reader takes the fields it knows and a field it
 * does not know is no error. docs/schema.md gives the layout.
 *
 *   header  "ppsSUMM\0", uint32 format (1), uint32 0x01020304 (the writer's byte order)
 *   field   uint16 name length, name, uint8 type ('i', 'd' or 's'), uint64 count, count values
 *           (8 bytes each for 'i' and 'd', 1 for 's')
 *   check   uint64 FNV-1a of every byte before it: a summary cut short or changed is refused
 *
 * Values are in the writer's byte order; a reader of the other order takes the summary for none.
 */
#ifndef PPS_SUMMARY_CODEC_H
#define PPS_SUMMARY_CODEC_H

#include <stddef.h>
#include <stdint.h>

#include "pps_error.h"

/* ---- writing: fields appended to one growing buffer; the first failure sticks -------------- */
struct pps__sum_out {
    unsigned char *buf;
    size_t n, cap;
    int failed; /* out of memory: every later put is a no-op */
};

void pps__sum_begin(struct pps__sum_out *o);
/* The check of everything before it (FNV-1a, 64 bits), last: after the last field. */
void pps__sum_finish(struct pps__sum_out *o);
void pps__sum_i64s(struct pps__sum_out *o, const char *name, const int64_t *v, size_t n);
void pps__sum_f64s(struct pps__sum_out *o, const char *name, const double *v, size_t n);
void pps__sum_text(struct pps__sum_out *o, const char *name, const char *s);
void pps__sum_i64(struct pps__sum_out *o, const char *name, int64_t v);
void pps__sum_f64(struct pps__sum_out *o, const char *name, double v);

/* ---- reading: the fields of one buffer, looked up by name ---------------------------------- */
struct pps__sum_field {
    const char *name; /* not NUL-terminated: name_len bytes */
    size_t name_len;
    char type;
    uint64_t count;
    const unsigned char *data;
};

struct pps__sum_in {
    struct pps__sum_field *fields;
    size_t n;
};

/* Parses buf (which must outlive in). PPS_EFORMAT for bytes that are not a summary of this
 * format and byte order, PPS_ENOMEM. */
int pps__sum_parse(const void *buf, size_t len, struct pps__sum_in *in, struct pps_err *err);
void pps__sum_in_release(struct pps__sum_in *in);
/* How many values the field name holds (-1 where there is none, or not of that type). */
int64_t pps__sum_count(const struct pps__sum_in *in, const char *name, char type);
/* The n values of name into out: PPS_EFORMAT where the field is missing or holds another count
 * or type. */
int pps__sum_get_i64s(const struct pps__sum_in *in, const char *name, int64_t *out, size_t n,
                      struct pps_err *err);
int pps__sum_get_f64s(const struct pps__sum_in *in, const char *name, double *out, size_t n,
                      struct pps_err *err);
/* At most len - 1 bytes of the text, NUL-terminated. */
int pps__sum_get_text(const struct pps__sum_in *in, const char *name, char *out, size_t len,
                      struct pps_err *err);

#endif
