/*
 * gz_ahead.h - a file read through zlib (gzip or plain, as gzread tells them apart) by a thread
 * of its own, a few chunks ahead of its reader: on two cores, decompression (or the read
 * system calls of a plain file) overlaps the parse of what came before.
 */
#ifndef PPS_GZ_AHEAD_H
#define PPS_GZ_AHEAD_H

#include <stddef.h>
#include <stdint.h>

#include "pps_error.h"

/* What one read hands over at the most; a read's buffer must hold this much. */
#define PPS__GZAHEAD_CHUNK (1u << 20)

struct pps__gzahead;

/* Opens path and starts reading ahead; 0, or PPS_EIO/PPS_ENOMEM with the reason in err. */
int pps__gzahead_open(const char *path, struct pps__gzahead **out, struct pps_err *err);

/*
 * The next chunk into buf (room for PPS__GZAHEAD_CHUNK bytes): its length, 0 at the end of the
 * data, or -1 on failure, with zlib's error code in *zerr (Z_ERRNO with errno's value in *sys
 * for a failed read) and its words in why. A stream cut short ends with 0 and *zerr
 * Z_BUF_ERROR (zlib says so only at the end), else *zerr is Z_OK there.
 */
long pps__gzahead_read(struct pps__gzahead *g, char *buf, int *zerr, int *sys, char *why,
                       size_t why_len);

/* Bytes of the file (compressed) behind what was handed over so far. */
int64_t pps__gzahead_offset(const struct pps__gzahead *g);

/* Stops the thread and closes the file; safe on NULL. */
void pps__gzahead_close(struct pps__gzahead *g);

#endif
