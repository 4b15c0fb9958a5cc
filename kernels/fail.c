/*
 * fail.c - a context's first error (kernels_int.h), in a file of its own: the cuda backend's
 * library (libppscope_cuda.so) carries a copy, since the program that loads it exports nothing.
 */
#include <stdarg.h>
#include <stdio.h>

#include "kernels_int.h"

int pps__kernels_fail(struct pps_kernels *k, int code, const char *fmt, ...)
{
    if (k->err.code == 0) {
        va_list ap;
        va_start(ap, fmt);
        k->err.code = code;
        vsnprintf(k->err.msg, sizeof(k->err.msg), fmt, ap);
        va_end(ap);
    }
    return code;
}
