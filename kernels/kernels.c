/*
 * kernels.c - contexts: choosing a backend by name, opening and closing it, and the error that a
 * context keeps until pps_kernels_sync() reports it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels_int.h"
#include "pps_config.h"

/* The backends built in, the one this build loads from its library (cuda: cuda_load.c), and the
 * names of those that a build may lack, for a clear message when one is asked for. */
#if defined(PPS_HAVE_CUDA) && defined(PPS_HAVE_CUBLAS)
#define HAVE_CUDA_BACKEND 1
#endif
static const struct pps__kernels_ops *const backends[] = {
    &pps__kernels_cpu,
};
static const struct {
    const char *name;
    const char *needs;
} optional_backends[] = {
#ifndef HAVE_CUDA_BACKEND
    {"cuda", "CUDA (with nvcc) and cuBLAS"},
#endif
    {NULL, NULL}};

static void list_backends(char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < sizeof(backends) / sizeof(backends[0]) && used < len; i++) {
        int w = snprintf(buf + used, len - used, "%s%s", i ? ", " : "", backends[i]->name);
        if (w < 0)
            break;
        used += (size_t)w;
    }
#ifdef HAVE_CUDA_BACKEND
    if (used < len)
        snprintf(buf + used, len - used, ", cuda");
#endif
}

/* The table of backend: built in, or loaded (NULL, with why, when its library does not load);
 * NULL with why empty for a name this build does not know. */
static const struct pps__kernels_ops *find_backend(const char *backend, char *why, size_t len)
{
    why[0] = '\0';
    for (size_t i = 0; i < sizeof(backends) / sizeof(backends[0]); i++)
        if (strcmp(backends[i]->name, backend) == 0)
            return backends[i];
#ifdef HAVE_CUDA_BACKEND
    if (strcmp(backend, "cuda") == 0)
        return pps__kernels_cuda_load(why, len);
#endif
    return NULL;
}

/* Opens backend as part of parts (parts < 2: on its own). */
static int kernels_open(const char *backend, int part, int parts, struct pps_kernels **out,
                        struct pps_err *err)
{
    const struct pps__kernels_ops *ops = NULL;
    struct pps_kernels *k = NULL;
    char have[128], why[512];
    int rc;

    *out = NULL;
    list_backends(have, sizeof(have));
    if (!backend)
        return pps_err_set(err, PPS_EINVAL, "no kernels backend named (have: %s)", have);
    ops = find_backend(backend, why, sizeof(why));
    if (!ops && why[0])
        return pps_err_set(err, PPS_EIO, "%s: %s", backend, why);
    if (!ops) {
        for (size_t i = 0; optional_backends[i].name; i++)
            if (strcmp(optional_backends[i].name, backend) == 0)
                return pps_err_set(err, PPS_ENOENT,
                                   "kernels backend '%s' is not in this build (it needs %s; "
                                   "have: %s)",
                                   backend, optional_backends[i].needs, have);
        return pps_err_set(err, PPS_EINVAL, "unknown kernels backend '%s' (have: %s)", backend,
                           have);
    }

    k = calloc(1, sizeof(*k));
    if (!k)
        return pps_err_set(err, PPS_ENOMEM, "out of memory opening the %s kernels", backend);
    k->ops = ops;
    rc = parts >= 2 && ops->open_part ? ops->open_part(k, part, parts, err) : ops->open(k, err);
    if (rc < 0) {
        free(k);
        return rc;
    }
    *out = k;
    return 0;
}

int pps_kernels_new(const char *backend, struct pps_kernels **out, struct pps_err *err)
{
    return kernels_open(backend, 0, 1, out, err);
}

int pps_kernels_new_part(const char *backend, int part, int parts, struct pps_kernels **out,
                         struct pps_err *err)
{
    if (out)
        *out = NULL;
    if (parts >= 2 && (part < 0 || part >= parts))
        return pps_err_set(err, PPS_EINVAL, "kernels: part %d of %d", part, parts);
    return kernels_open(backend, part, parts, out, err);
}

int pps_kernels_partition(const struct pps_kernels *k, char *buf, size_t len)
{
    if (k && k->ops->partition)
        return k->ops->partition(k, buf, len);
    if (len)
        snprintf(buf, len, "the whole device");
    return 0;
}

void pps_kernels_free(struct pps_kernels *k)
{
    if (!k)
        return;
    k->ops->close(k);
    free(k);
}

const char *pps_kernels_backend(const struct pps_kernels *k)
{
    return k->ops->name;
}

void pps_kernels_describe(const char *backend, char *buf, size_t len)
{
    const struct pps__kernels_ops *ops;
    char why[512];

    if (!len)
        return;
    ops = backend ? find_backend(backend, why, sizeof(why)) : NULL;
    if (ops)
        ops->describe(buf, len);
    else if (backend && why[0])
        snprintf(buf, len, "%s (%s)", backend, why);
    else
        snprintf(buf, len, "%s (not in this build)", backend ? backend : "no backend");
}

int pps_kernels_sync(struct pps_kernels *k, struct pps_err *err)
{
    int code;

    if (!k)
        return pps_err_set(err, PPS_EINVAL, "kernels: no context");
    k->ops->sync(k);
    code = k->err.code;
    if (code < 0)
        pps_err_set(err, code, "%s", k->err.msg);
    k->err.code = 0;
    k->err.msg[0] = '\0';
    return code;
}

void pps_kernels_wait(struct pps_kernels *k)
{
    if (k)
        k->ops->sync(k); /* records what it finds in k->err, which only sync clears */
}
