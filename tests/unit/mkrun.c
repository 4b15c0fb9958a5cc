/*
 * mkrun.c - writes a tiny run with the writer API, for the CLI tests that need a run on disk
 * without the simulator or the runtime.
 *
 *   pps_mkrun DIR [--ranks N] [--incomplete]
 *
 * Each rank r writes stage r: F, B and W of 4 microbatches over 2 iterations, a SEND, a KERNEL
 * with a name, a metric per iteration, and meta schedule=1f1b, p=N, m=4, v=1. Rank 1 has a clock
 * offset of +1000 ns. Exit 0, or 1 with a message.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "storage.h"

static int write_rank(const char *dir, int rank, int ranks, int complete, struct pps_err *err)
{
    struct pps_store_writer *w = NULL;
    struct pps_span spans[64];
    struct pps_metric metrics[2];
    size_t n = 0;
    int32_t kernel = -1;
    int64_t t = 1000000;
    int rc;

    if ((rc = pps_store_writer_open(dir, rank, &w, err)) ||
        (rc = pps_store_writer_meta(w, "schedule", "1f1b", err)) ||
        (rc = pps_store_writer_meta_int(w, "p", ranks, err)) ||
        (rc = pps_store_writer_meta_int(w, "m", 4, err)) ||
        (rc = pps_store_writer_meta_int(w, "v", 1, err)) ||
        (rc = pps_store_writer_meta(w, "backend", "emu", err)) ||
        (rc = pps_store_writer_name(w, "gemm", &kernel, err)))
        goto out;
    if (rank == 1 && (rc = pps_store_writer_meta_int(w, "clock_offset_start_ns", 1000, err)))
        goto out;
    for (int it = 0; it < 2; it++) {
        for (int mb = 0; mb < 4; mb++) {
            static const int kinds[] = {PPS_SPAN_F, PPS_SPAN_B, PPS_SPAN_W};
            for (int k = 0; k < 3; k++) {
                struct pps_span *s = &spans[n++];
                memset(s, 0, sizeof(*s));
                s->kind = (uint8_t)kinds[k];
                s->stage = (int16_t)rank;
                s->iter = it;
                s->mb = mb;
                s->peer = -1;
                s->name_id = -1;
                s->start_ns = t;
                s->end_ns = t + 900;
                t += 1000;
            }
        }
        metrics[it] = (struct pps_metric){.iter = it,
                                          .stage = rank,
                                          .loss = 2.0 - it,
                                          .grad_norm = 1.0,
                                          .act_bytes = 4096,
                                          .pending_w = 0,
                                          .dropped = 0};
    }
    spans[n++] = (struct pps_span){.kind = PPS_SPAN_SEND,
                                   .stage = (int16_t)rank,
                                   .iter = 0,
                                   .mb = 0,
                                   /* the next stage, the last one's the one before */
                                   .peer = rank + 1 < ranks ? rank + 1 : rank > 0 ? rank - 1 : -1,
                                   .bytes = 1 << 20,
                                   .name_id = -1,
                                   .start_ns = t,
                                   .end_ns = t + 100};
    spans[n++] = (struct pps_span){.kind = PPS_SPAN_KERNEL,
                                   .stage = (int16_t)rank,
                                   .iter = 0,
                                   .mb = 0,
                                   .peer = -1,
                                   .name_id = kernel,
                                   .corr = 1,
                                   .clock = PPS_CLOCK_DEVICE,
                                   .start_ns = t,
                                   .end_ns = t + 50};
    if ((rc = pps_store_writer_spans(w, spans, n, err)) ||
        (rc = pps_store_writer_metrics(w, metrics, 2, err)))
        goto out;
out:
    if (w) {
        int crc = pps_store_writer_close(w, complete && !rc, rc ? NULL : err);
        if (!rc)
            rc = crc;
    }
    return rc;
}

int main(int argc, char **argv)
{
    struct pps_err err = {0};
    const char *dir = NULL;
    int ranks = 2, complete = 1;

    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--incomplete"))
            complete = 0;
        else if (!strcmp(argv[i], "--ranks") && i + 1 < argc)
            ranks = atoi(argv[++i]);
        else if (!dir && argv[i][0] != '-')
            dir = argv[i];
        else
            dir = NULL, i = argc;
    }
    if (!dir || ranks < 1 || ranks > 64) {
        fprintf(stderr, "usage: pps_mkrun DIR [--ranks N] [--incomplete]\n");
        return 1;
    }
    for (int r = 0; r < ranks; r++) {
        if (write_rank(dir, r, ranks, complete, &err)) {
            fprintf(stderr, "pps_mkrun: %s\n", err.msg);
            return 1;
        }
    }
    return 0;
}
