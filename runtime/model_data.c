/*
 * model_data.c - the training text and the microbatch sampler.
 *
 * The text is read whole (it is small: the built-in one is 14 kB, compiled into the library so
 * that a run needs no file from any directory, installed or not). Sequences are drawn with a
 * counter-based generator from (seed, iteration, microbatch, sequence): no state is carried from
 * one draw to the next, so the first virtual stage (which needs the tokens) and the last (which
 * needs the targets) compute the same microbatch independently, in whatever order their schedule
 * runs them, with nothing sent between them.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "model_int.h"

/* The most a training text may hold: it is read whole into memory. */
#define DATA_MAX_MIB 256
#define DATA_MAX     ((size_t)DATA_MAX_MIB << 20)

/* The sampler's stream of draws, apart from the init's. */
#define DOMAIN_DATA 0x6461746173616dull /* "datasam" */

/* The built-in text, copied so that every text is freed the same way (14 kB, once per run). */
static int copy_builtin(struct pps_model_data *d, struct pps_err *err)
{
    d->bytes = malloc(pps__model_text_len + 1);
    if (!d->bytes)
        return pps_err_set(err, PPS_ENOMEM, "model data: out of memory");
    memcpy(d->bytes, pps__model_text, pps__model_text_len + 1);
    d->len = pps__model_text_len;
    return 0;
}

/* Reads the file at path whole into d->bytes and d->len. */
static int read_file(struct pps_model_data *d, const char *path, struct pps_err *err)
{
    FILE *f = NULL;
    struct stat st;
    size_t cap = 1 << 16;
    int rc = 0;

    f = fopen(path, "rb");
    if (!f)
        return pps_err_set(err, PPS_ENOENT, "%s: cannot read the training text: %s", path,
                           strerror(errno));
    /* Only a regular file has an end to read to (/dev/zero has none) and a size to check first. */
    if (fstat(fileno(f), &st) != 0) {
        rc = pps_err_set(err, PPS_EIO, "%s: cannot read the training text: %s", path,
                         strerror(errno));
        goto out;
    }
    if (!S_ISREG(st.st_mode)) {
        rc = pps_err_set(err, PPS_EINVAL, "%s: not a regular file", path);
        goto out;
    }
    if ((uintmax_t)st.st_size > DATA_MAX) {
        rc = pps_err_set(err, PPS_EINVAL,
                         "%s: %ju MiB is more than the %d MiB a training text may have", path,
                         ((uintmax_t)st.st_size + (1u << 20) - 1) >> 20, DATA_MAX_MIB);
        goto out;
    }
    for (;;) {
        size_t got;
        if (d->len == 0 || d->len == cap) {
            unsigned char *bigger;
            if (d->len)
                cap *= 2;
            bigger = realloc(d->bytes, cap);
            if (!bigger) {
                rc = pps_err_set(err, PPS_ENOMEM, "%s: out of memory reading it", path);
                goto out;
            }
            d->bytes = bigger;
        }
        got = fread(d->bytes + d->len, 1, cap - d->len, f);
        d->len += got;
        if (got == 0)
            break;
        if (d->len > DATA_MAX) { /* it grew while being read */
            rc = pps_err_set(err, PPS_EINVAL, "%s: more than the %d MiB a training text may have",
                             path, DATA_MAX_MIB);
            goto out;
        }
    }
    if (ferror(f))
        rc = pps_err_set(err, PPS_EIO, "%s: read failed: %s", path, strerror(errno));
out:
    fclose(f);
    return rc;
}

int pps_model_data_new(const struct pps_model_spec *s, struct pps_model_data **out,
                       struct pps_err *err)
{
    const char *path = s && s->data_path ? s->data_path : PPS_MODEL_BUILTIN_TEXT;
    struct pps_model_data *d = NULL;
    int rc;

    if (!out)
        return pps_err_set(err, PPS_EINVAL, "model data: no output");
    *out = NULL;
    if (!s || s->seq_len < 1)
        return pps_err_set(err, PPS_EINVAL, "model data: need a spec with seq_len >= 1");

    d = calloc(1, sizeof(*d));
    if (!d)
        return pps_err_set(err, PPS_ENOMEM, "model data: out of memory");
    snprintf(d->path, sizeof(d->path), "%s", path);
    rc = s->data_path ? read_file(d, path, err) : copy_builtin(d, err);
    if (rc == 0 && d->len < (size_t)s->seq_len + 1)
        rc = pps_err_set(err, PPS_EINVAL,
                         "%s: %zu bytes of text, need at least seq_len + 1 = %d for one sequence",
                         path, d->len, s->seq_len + 1);
    if (rc < 0)
        pps_model_data_free(d);
    else
        *out = d;
    return rc;
}

void pps_model_data_free(struct pps_model_data *d)
{
    if (!d)
        return;
    free(d->bytes);
    free(d);
}

size_t pps_model_data_offset(const struct pps_model_data *d, const struct pps_model_spec *s,
                             int iter, int mb, int seq)
{
    size_t starts = d->len - (size_t)s->seq_len; /* >= 1, checked by the callers */
    uint64_t r = pps__model_draw(DOMAIN_DATA, s->seed, (uint64_t)(int64_t)iter,
                                 (uint64_t)(int64_t)mb, (uint64_t)(int64_t)seq);
    /* The modulo's bias is below starts / 2^64: nothing a text could show. */
    return (size_t)(r % starts);
}

int pps_model_data_sample(const struct pps_model_data *d, const struct pps_model_spec *s, int iter,
                          int mb, int32_t *ids, int32_t *targets, struct pps_err *err)
{
    int t_len = s->seq_len;

    if (d->len < (size_t)t_len + 1)
        return pps_err_set(err, PPS_EINVAL, "%s: %zu bytes of text, need seq_len + 1 = %d", d->path,
                           d->len, t_len + 1);
    for (int b = 0; b < s->micro_batch; b++) {
        const unsigned char *seq = d->bytes + pps_model_data_offset(d, s, iter, mb, b);
        for (int t = 0; t < t_len; t++) {
            if (ids)
                ids[(size_t)b * t_len + t] = seq[t];
            if (targets)
                targets[(size_t)b * t_len + t] = seq[t + 1];
        }
    }
    return 0;
}
