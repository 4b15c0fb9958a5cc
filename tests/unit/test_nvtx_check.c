/*
 * test_nvtx_check.c - a helper of the NVTX end-to-end test (tests/cli/nvtx_inject.sh): loads a
 * run with pps_run_load and prints each span the way examples/nvtx_pipeline --print says what it
 * emitted, one per line, so that the two can be sorted and compared:
 *
 *     F stage=1 chunk=0 mb=3                  F, B, W, BW, OPT
 *     SEND stage=1 peer=2 mb=3 bytes=65536    SEND, RECV, WAIT
 *     RANGE stage=1 name=data loading         named ranges
 *
 * With --iter, pipeline ops also print " iter=N". With --complete it prints only
 * "complete=C shards=N". Usage: test_nvtx_check RUN [--iter|--complete]. Exits 1 with the reason
 * when the run does not load.
 */
#include <stdio.h>
#include <string.h>

#include "storage.h"

static int is_p2p(int kind)
{
    return kind == PPS_SPAN_SEND || kind == PPS_SPAN_RECV || kind == PPS_SPAN_WAIT;
}

int main(int argc, char **argv)
{
    struct pps_run *run = NULL;
    struct pps_err err = {0};
    int with_iter = argc > 2 && strcmp(argv[2], "--iter") == 0;
    int complete = argc > 2 && strcmp(argv[2], "--complete") == 0;

    if (argc < 2 || (argc > 2 && !with_iter && !complete) || argc > 3) {
        fprintf(stderr, "usage: test_nvtx_check RUN [--iter|--complete]\n");
        return 2;
    }
    if (pps_run_load(argv[1], &run, &err)) {
        fprintf(stderr, "test_nvtx_check: %s\n", err.msg);
        return 1;
    }
    if (complete) {
        printf("complete=%d shards=%d\n", run->complete, run->n_shards);
        pps_run_free(run);
        return 0;
    }
    for (int st = 0; st < run->n_stages; st++) {
        for (size_t i = 0; i < run->stages[st].n; i++) {
            const struct pps_span *s = &run->stages[st].spans[i];
            const char *kind = pps_span_kind_name(s->kind);
            if (s->kind == PPS_SPAN_RANGE) {
                const char *name = pps_run_span_name(run, s);
                printf("RANGE stage=%d name=%s\n", s->stage, name ? name : "(none)");
                continue;
            }
            if (is_p2p(s->kind))
                printf("%s stage=%d peer=%d mb=%d bytes=%lld", kind, s->stage, s->peer, s->mb,
                       (long long)s->bytes);
            else if (pps_span_kind_is_compute(s->kind))
                printf("%s stage=%d chunk=%d mb=%d", kind, s->stage, s->chunk, s->mb);
            else
                printf("%s stage=%d", kind, s->stage);
            if (with_iter)
                printf(" iter=%d", s->iter);
            putchar('\n');
        }
    }
    pps_run_free(run);
    return 0;
}
