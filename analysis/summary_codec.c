/*
 * summary_codec.c - writes and reads the named arrays of a summary (summary_codec.h).
 */
#include <stdlib.h>
#include <string.h>

#include "pps_hash.h"
#include "summary_codec.h"

static const char magic[8] = "ppsSUMM";
#define FORMAT          1u
#define BYTE_ORDER_MARK 0x01020304u

static void put(struct pps__sum_out *o, const void *p, size_t n)
{
    if (o->failed)
        return;
    if (o->n + n > o->cap) {
        size_t cap = o->cap ? o->cap : 4096;
        unsigned char *b;

        while (cap < o->n + n)
            cap *= 2;
        if (!(b = realloc(o->buf, cap))) {
            o->failed = 1;
            return;
        }
        o->buf = b;
        o->cap = cap;
    }
    memcpy(o->buf + o->n, p, n);
    o->n += n;
}

void pps__sum_finish(struct pps__sum_out *o)
{
    uint64_t h = o->failed ? 0 : pps_fnv1a_more(PPS_FNV_OFFSET, o->buf, o->n);

    put(o, &h, sizeof(h));
}

void pps__sum_begin(struct pps__sum_out *o)
{
    uint32_t format = FORMAT, order = BYTE_ORDER_MARK;

    memset(o, 0, sizeof(*o));
    put(o, magic, sizeof(magic));
    put(o, &format, sizeof(format));
    put(o, &order, sizeof(order));
}

static void field(struct pps__sum_out *o, const char *name, char type, const void *v, uint64_t n,
                  size_t size)
{
    size_t len = strlen(name);
    uint16_t name_len = (uint16_t)len;

    if (len > UINT16_MAX) {
        o->failed = 1;
        return;
    }
    put(o, &name_len, sizeof(name_len));
    put(o, name, len);
    put(o, &type, 1);
    put(o, &n, sizeof(n));
    if (n)
        put(o, v, (size_t)n * size);
}

void pps__sum_i64s(struct pps__sum_out *o, const char *name, const int64_t *v, size_t n)
{
    field(o, name, 'i', v, n, sizeof(*v));
}

void pps__sum_f64s(struct pps__sum_out *o, const char *name, const double *v, size_t n)
{
    field(o, name, 'd', v, n, sizeof(*v));
}

void pps__sum_text(struct pps__sum_out *o, const char *name, const char *s)
{
    field(o, name, 's', s, s ? strlen(s) : 0, 1);
}

void pps__sum_i64(struct pps__sum_out *o, const char *name, int64_t v)
{
    pps__sum_i64s(o, name, &v, 1);
}

void pps__sum_f64(struct pps__sum_out *o, const char *name, double v)
{
    pps__sum_f64s(o, name, &v, 1);
}

int pps__sum_parse(const void *buf, size_t len, struct pps__sum_in *in, struct pps_err *err)
{
    const unsigned char *p = buf, *end;
    uint32_t format, order;
    uint64_t sum;
    size_t cap = 0;

    memset(in, 0, sizeof(*in));
    if (!buf || len < sizeof(magic) + 16 || memcmp(p, magic, sizeof(magic)) != 0)
        return pps_err_set(err, PPS_EFORMAT, "not a ppscope summary");
    /* The last 8 bytes check the rest: a summary cut short or changed anywhere is refused. */
    end = p + len - sizeof(sum);
    memcpy(&sum, end, sizeof(sum));
    if (sum != pps_fnv1a_more(PPS_FNV_OFFSET, p, len - sizeof(sum)))
        return pps_err_set(err, PPS_EFORMAT, "a damaged summary (its check does not match)");
    memcpy(&format, p + sizeof(magic), 4);
    memcpy(&order, p + sizeof(magic) + 4, 4);
    if (format != FORMAT || order != BYTE_ORDER_MARK)
        return pps_err_set(err, PPS_EFORMAT, "a summary of format %u or of another byte order",
                           (unsigned)format);
    p += sizeof(magic) + 8;
    while (p < end) {
        struct pps__sum_field f;
        uint16_t name_len;
        size_t size;

        if ((size_t)(end - p) < 2)
            goto bad;
        memcpy(&name_len, p, 2);
        p += 2;
        if ((size_t)(end - p) < (size_t)name_len + 9)
            goto bad;
        f.name = (const char *)p;
        f.name_len = name_len;
        p += name_len;
        f.type = (char)*p++;
        memcpy(&f.count, p, 8);
        p += 8;
        size = f.type == 's' ? 1 : 8;
        if ((f.type != 'i' && f.type != 'd' && f.type != 's') ||
            f.count > (uint64_t)(end - p) / size)
            goto bad;
        f.data = p;
        p += (size_t)f.count * size;
        if (in->n == cap) {
            struct pps__sum_field *grown;
            cap = cap ? 2 * cap : 64;
            if (!(grown = realloc(in->fields, cap * sizeof(*grown)))) {
                pps__sum_in_release(in);
                return pps_err_set(err, PPS_ENOMEM, "out of memory reading a summary");
            }
            in->fields = grown;
        }
        in->fields[in->n++] = f;
    }
    return 0;
bad:
    pps__sum_in_release(in);
    return pps_err_set(err, PPS_EFORMAT, "a damaged summary (a field runs past its end)");
}

void pps__sum_in_release(struct pps__sum_in *in)
{
    free(in->fields);
    in->fields = NULL;
    in->n = 0;
}

static const struct pps__sum_field *find(const struct pps__sum_in *in, const char *name, char type)
{
    size_t len = strlen(name);

    for (size_t i = 0; i < in->n; i++)
        if (in->fields[i].name_len == len && !memcmp(in->fields[i].name, name, len))
            return in->fields[i].type == type ? &in->fields[i] : NULL;
    return NULL;
}

int64_t pps__sum_count(const struct pps__sum_in *in, const char *name, char type)
{
    const struct pps__sum_field *f = find(in, name, type);

    return f && f->count <= INT64_MAX ? (int64_t)f->count : -1;
}

static int get(const struct pps__sum_in *in, const char *name, char type, void *out, size_t n,
               struct pps_err *err)
{
    const struct pps__sum_field *f = find(in, name, type);

    if (!f || f->count != n)
        return pps_err_set(err, PPS_EFORMAT, "the summary's %s is %s", name,
                           f ? "of another size" : "missing");
    if (n)
        memcpy(out, f->data, n * 8);
    return 0;
}

int pps__sum_get_i64s(const struct pps__sum_in *in, const char *name, int64_t *out, size_t n,
                      struct pps_err *err)
{
    return get(in, name, 'i', out, n, err);
}

int pps__sum_get_f64s(const struct pps__sum_in *in, const char *name, double *out, size_t n,
                      struct pps_err *err)
{
    return get(in, name, 'd', out, n, err);
}

int pps__sum_get_text(const struct pps__sum_in *in, const char *name, char *out, size_t len,
                      struct pps_err *err)
{
    const struct pps__sum_field *f = find(in, name, 's');
    size_t n;

    if (!f)
        return pps_err_set(err, PPS_EFORMAT, "the summary's %s is missing", name);
    n = f->count < len ? (size_t)f->count : len ? len - 1 : 0;
    if (len) {
        memcpy(out, f->data, n);
        out[n] = '\0';
    }
    return 0;
}
