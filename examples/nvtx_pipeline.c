/*
 * nvtx_pipeline.c - a program that knows nothing of ppscope: it pretends to be one stage of a
 * pipeline (a few iterations; forward, backward and weight gradient per microbatch, sends and
 * receives between them, tiny busy loops for work) and says so with NVTX only. Traced by
 * ppscope's NVTX injection without a code change (docs/nvtx.md):
 *
 *     NVTX_INJECTION64_PATH=/path/to/libppscope_nvtx.so PPSCOPE_RUN=run PPSCOPE_STAGE=1 \
 *         ./nvtx_pipeline torch --stage 1
 *     ppscope report run
 *
 * The pipeline ops are named in one of three styles, chosen by the first argument:
 *
 *   torch  PyTorch pipelining's labels through nvtxRangePushA: "PP:1F3", "PP:1I3" (input
 *          backward), "PP:1W3", "PP:1B3" (full backward, odd iterations), "PP:1SEND_F3" ...
 *   pps    ppscope's names, registered in a domain "ppscope" and pushed with
 *          nvtxDomainRangePushEx: "pps:iter=0" around each iteration, "pps:F stage=1 mb=3
 *          chunk=0", "pps:B ..." (registered as a wide string), "pps:SEND stage=1 peer=2 mb=3"
 *          (bytes in the event's payload), "pps:OPT stage=1" ...
 *   regex  names of the program's own, "fwd_s1_mb3", "bgrad_s1_mb3", "wgrad_s1_mb3",
 *          "send_s1_mb3", "recv_s1_mb3", through nvtxRangeStartA/End (the weight gradients end
 *          on a helper thread), for the injection's user regex:
 *          PPSCOPE_NVTX_REGEX='^(fwd|bgrad|wgrad|send|recv)_s([0-9]+)_mb([0-9]+)$'
 *          PPSCOPE_NVTX_GROUPS=kind,stage,mb
 *
 * In every style there are also ranges that are not pipeline ops and must come out as named
 * ranges: "data loading" each iteration, the optimizer step where the style has no name for it,
 * a "checkpoint" mark, and "main", which is never popped (the injection ends it at exit).
 *
 * --print writes, one per line, each span the program means a tracer to record, as ppscope sees
 * it: "F stage=1 chunk=0 mb=3 iter=0", "SEND stage=1 peer=2 mb=3 bytes=65536 iter=0", "RANGE
 * stage=1 name=data loading". The NVTX test compares these lines with the run the injection
 * wrote. Without an injection the program runs the same and writes nothing.
 */
#include <nvtx3/nvToolsExt.h>

#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <wchar.h>

#define MAX_MBS   64
#define MAX_ITERS 64
#define MSG_BYTES 65536 /* what one activation or gradient transfer moves */

enum style { TORCH, PPS, REGEX };

struct opts {
    enum style style;
    int stage, stages, iters, mbs, print;
};

static struct opts o;

/*
 * The iteration the tracer is in, as the injection sees it: the pps style marks each iteration
 * ("pps:iter=N"); in the others the injection starts iteration N at its first forward (a forward
 * of a microbatch seen before), so what ends before that, such as the receive of microbatch 0,
 * still counts in the previous one (-1 before the first).
 */
static int traced_iter = -1;

/* What the program emits, for --print. */
static void expect(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void expect(const char *fmt, ...)
{
    va_list ap;
    if (!o.print)
        return;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    putchar('\n');
}

/* Pretends to work for about us microseconds. */
static void busy(int us)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do {
        clock_gettime(CLOCK_MONOTONIC, &t);
    } while ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) < us * 1000L);
}

static int first(void)
{
    return o.stage == 0;
}

static int last(void)
{
    return o.stage == o.stages - 1;
}

/* ---- torch: PyTorch pipelining's action labels ------------------------------------------- */

static void torch_op(const char *type, int mb, int us)
{
    char name[64];
    snprintf(name, sizeof(name), "PP:%d%s%d", o.stage, type, mb);
    nvtxRangePushA(name);
    busy(us);
    nvtxRangePop();
}

static void run_torch(int it)
{
    int full_backward = it % 2 == 1;
    char name[64];

    /* UNSHARD is an action but not a pipeline op: a named range. */
    snprintf(name, sizeof(name), "PP:%dUNSHARD", o.stage);
    nvtxRangePushA(name);
    busy(5);
    nvtxRangePop();
    expect("RANGE stage=%d name=%s", o.stage, name);

    for (int mb = 0; mb < o.mbs; mb++) {
        if (!first()) {
            torch_op("RECV_F", mb, 10);
            expect("RECV stage=%d peer=%d mb=%d bytes=0 iter=%d", o.stage, o.stage - 1, mb,
                   traced_iter);
        }
        if (mb == 0) {
            traced_iter = it;
            /* As PyTorch's emit_nvtx decorates it: the op_id is not part of the name. */
            snprintf(name, sizeof(name), "PP:%dF%d, op_id = %d", o.stage, mb, 40 + it);
            nvtxRangePushA(name);
            busy(30);
            nvtxRangePop();
        } else {
            torch_op("F", mb, 30);
        }
        expect("F stage=%d chunk=0 mb=%d iter=%d", o.stage, mb, traced_iter);
        if (!last()) {
            torch_op("SEND_F", mb, 10);
            expect("SEND stage=%d peer=%d mb=%d bytes=0 iter=%d", o.stage, o.stage + 1, mb,
                   traced_iter);
        }
    }
    for (int mb = 0; mb < o.mbs; mb++) {
        if (!last()) {
            torch_op("RECV_B", mb, 10);
            expect("RECV stage=%d peer=%d mb=%d bytes=0 iter=%d", o.stage, o.stage + 1, mb,
                   traced_iter);
        }
        if (full_backward) {
            torch_op("B", mb, 60);
            expect("BW stage=%d chunk=0 mb=%d iter=%d", o.stage, mb, traced_iter);
        } else {
            torch_op("I", mb, 30);
            expect("B stage=%d chunk=0 mb=%d iter=%d", o.stage, mb, traced_iter);
        }
        if (!first()) {
            torch_op("SEND_B", mb, 10);
            expect("SEND stage=%d peer=%d mb=%d bytes=0 iter=%d", o.stage, o.stage - 1, mb,
                   traced_iter);
        }
        if (!full_backward) {
            torch_op("W", mb, 30);
            expect("W stage=%d chunk=0 mb=%d iter=%d", o.stage, mb, traced_iter);
        }
    }
    nvtxRangePushA("optimizer.step");
    busy(20);
    nvtxRangePop();
    expect("RANGE stage=%d name=optimizer.step", o.stage);
}

/* ---- pps: ppscope's names, registered in a domain ----------------------------------------- */

static nvtxDomainHandle_t domain;
static nvtxStringHandle_t s_iter[MAX_ITERS], s_opt;
static nvtxStringHandle_t s_f[MAX_MBS], s_b[MAX_MBS], s_w[MAX_MBS];
static nvtxStringHandle_t s_send_f[MAX_MBS], s_recv_f[MAX_MBS], s_send_b[MAX_MBS],
    s_recv_b[MAX_MBS];

static nvtxStringHandle_t reg(const char *fmt, int a, int b, int c)
{
    char name[128];
    snprintf(name, sizeof(name), fmt, a, b, c);
    return nvtxDomainRegisterStringA(domain, name);
}

static void pps_register(void)
{
    int s = o.stage;
    domain = nvtxDomainCreateA("ppscope");
    for (int it = 0; it < o.iters; it++)
        s_iter[it] = reg("pps:iter=%d", it, 0, 0);
    s_opt = reg("pps:OPT stage=%d", s, 0, 0);
    for (int mb = 0; mb < o.mbs; mb++) {
        wchar_t wide[128];
        s_f[mb] = reg("pps:F stage=%d mb=%d chunk=%d", s, mb, 0);
        /* A wide string: the injection converts it to UTF-8. */
        swprintf(wide, sizeof(wide) / sizeof(wide[0]), L"pps:B mb=%d stage=%d", mb, s);
        s_b[mb] = nvtxDomainRegisterStringW(domain, wide);
        /* No stage: it comes from PPSCOPE_STAGE, or the launcher's rank. */
        s_w[mb] = reg("pps:W mb=%d", mb, 0, 0);
        if (!last()) {
            s_send_f[mb] = reg("pps:SEND stage=%d peer=%d mb=%d", s, s + 1, mb);
            s_recv_b[mb] = reg("pps:RECV stage=%d peer=%d mb=%d bytes=65536", s, s + 1, mb);
        }
        if (!first()) {
            s_recv_f[mb] = reg("pps:RECV stage=%d peer=%d mb=%d bytes=65536", s, s - 1, mb);
            s_send_b[mb] = reg("pps:SEND stage=%d peer=%d mb=%d", s, s - 1, mb);
        }
    }
}

/* Pushes a registered name; bytes > 0 goes in the payload. */
static void pps_push(nvtxStringHandle_t h, uint64_t bytes)
{
    nvtxEventAttributes_t a;
    memset(&a, 0, sizeof(a));
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
    a.message.registered = h;
    if (bytes) {
        a.payloadType = NVTX_PAYLOAD_TYPE_UNSIGNED_INT64;
        a.payload.ullValue = bytes;
    }
    nvtxDomainRangePushEx(domain, &a);
}

static void pps_op(nvtxStringHandle_t h, uint64_t bytes, int us)
{
    pps_push(h, bytes);
    busy(us);
    nvtxDomainRangePop(domain);
}

static void run_pps(int it)
{
    int s = o.stage;
    nvtxEventAttributes_t a;

    pps_push(s_iter[it], 0);
    traced_iter = it;
    expect("RANGE stage=%d name=pps:iter=%d", s, it);

    /* A wide message, not registered. */
    memset(&a, 0, sizeof(a));
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a.messageType = NVTX_MESSAGE_TYPE_UNICODE;
    a.message.unicode = L"data loading";
    nvtxDomainRangePushEx(domain, &a);
    busy(20);
    nvtxDomainRangePop(domain);
    expect("RANGE stage=%d name=data loading", s);

    for (int mb = 0; mb < o.mbs; mb++) {
        if (!first()) {
            pps_op(s_recv_f[mb], 0, 10);
            expect("RECV stage=%d peer=%d mb=%d bytes=%d iter=%d", s, s - 1, mb, MSG_BYTES,
                   traced_iter);
        }
        pps_op(s_f[mb], 0, 30);
        expect("F stage=%d chunk=0 mb=%d iter=%d", s, mb, traced_iter);
        if (!last()) {
            pps_op(s_send_f[mb], MSG_BYTES, 10);
            expect("SEND stage=%d peer=%d mb=%d bytes=%d iter=%d", s, s + 1, mb, MSG_BYTES,
                   traced_iter);
        }
    }
    for (int mb = 0; mb < o.mbs; mb++) {
        if (!last()) {
            pps_op(s_recv_b[mb], 0, 10);
            expect("RECV stage=%d peer=%d mb=%d bytes=%d iter=%d", s, s + 1, mb, MSG_BYTES,
                   traced_iter);
        }
        pps_op(s_b[mb], 0, 30);
        expect("B stage=%d chunk=0 mb=%d iter=%d", s, mb, traced_iter);
        if (!first()) {
            pps_op(s_send_b[mb], MSG_BYTES, 10);
            expect("SEND stage=%d peer=%d mb=%d bytes=%d iter=%d", s, s - 1, mb, MSG_BYTES,
                   traced_iter);
        }
        pps_op(s_w[mb], 0, 30);
        expect("W stage=%d chunk=0 mb=%d iter=%d", s, mb, traced_iter);
    }
    pps_op(s_opt, 0, 20);
    expect("OPT stage=%d chunk=0 mb=-1 iter=%d", s, traced_iter);
    nvtxDomainRangePop(domain); /* pps:iter */
}

/* ---- regex: the program's own names, start/end ranges ------------------------------------ */

static nvtxRangeId_t regex_start(const char *kind, int mb)
{
    char name[64];
    snprintf(name, sizeof(name), "%s_s%d_mb%d", kind, o.stage, mb);
    return nvtxRangeStartA(name);
}

static void regex_op(const char *kind, int mb, int us)
{
    nvtxRangeId_t id = regex_start(kind, mb);
    busy(us);
    nvtxRangeEnd(id);
}

/* The weight gradient is deferred to a helper thread, which ends the range the main thread
 * started. */
static void *finish_wgrad(void *arg)
{
    nvtxRangeId_t *id = arg;
    busy(30);
    nvtxRangeEnd(*id);
    return NULL;
}

static void run_regex(int it)
{
    for (int mb = 0; mb < o.mbs; mb++) {
        if (!first()) {
            regex_op("recv", mb, 10);
            expect("RECV stage=%d peer=-1 mb=%d bytes=0 iter=%d", o.stage, mb, traced_iter);
        }
        if (mb == 0)
            traced_iter = it;
        regex_op("fwd", mb, 30);
        expect("F stage=%d chunk=0 mb=%d iter=%d", o.stage, mb, traced_iter);
        if (!last()) {
            regex_op("send", mb, 10);
            expect("SEND stage=%d peer=-1 mb=%d bytes=0 iter=%d", o.stage, mb, traced_iter);
        }
    }
    for (int mb = 0; mb < o.mbs; mb++) {
        regex_op("bgrad", mb, 30);
        expect("B stage=%d chunk=0 mb=%d iter=%d", o.stage, mb, traced_iter);
        nvtxRangeId_t id = regex_start("wgrad", mb);
        pthread_t helper;
        if (pthread_create(&helper, NULL, finish_wgrad, &id) == 0) {
            pthread_join(helper, NULL);
        } else {
            busy(30);
            nvtxRangeEnd(id);
        }
        expect("W stage=%d chunk=0 mb=%d iter=%d", o.stage, mb, traced_iter);
    }
    nvtxRangeId_t id = nvtxRangeStartA("optimizer.step");
    busy(20);
    nvtxRangeEnd(id);
    expect("RANGE stage=%d name=optimizer.step", o.stage);
}

/* ---- main --------------------------------------------------------------------------------- */

static int usage(FILE *f, int code)
{
    fprintf(f, "usage: nvtx_pipeline torch|pps|regex [--stage S] [--stages P] [--iters N] "
               "[--mbs M] [--print]\n"
               "Pretends to be stage S (default 1) of a P-stage (default 4) pipeline for N "
               "iterations (default 3) of M microbatches (default 4), annotated with NVTX.\n");
    return code;
}

/* Reads argv[i + 1] as an integer in [lo, hi] into *out; 0 on success. */
static int int_arg(int argc, char **argv, int i, int lo, int hi, int *out)
{
    char *end;
    long v;
    if (i + 1 >= argc)
        return -1;
    v = strtol(argv[i + 1], &end, 10);
    if (*end != '\0' || end == argv[i + 1] || v < lo || v > hi)
        return -1;
    *out = (int)v;
    return 0;
}

int main(int argc, char **argv)
{
    o = (struct opts){TORCH, 1, 4, 3, 4, 0};
    if (argc < 2)
        return usage(stderr, 2);
    if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))
        return usage(stdout, 0);
    if (!strcmp(argv[1], "torch"))
        o.style = TORCH;
    else if (!strcmp(argv[1], "pps"))
        o.style = PPS;
    else if (!strcmp(argv[1], "regex"))
        o.style = REGEX;
    else
        return usage(stderr, 2);
    for (int i = 2; i < argc; i++) {
        int rc = 0;
        if (!strcmp(argv[i], "--stage"))
            rc = int_arg(argc, argv, i++, 0, 1000, &o.stage);
        else if (!strcmp(argv[i], "--stages"))
            rc = int_arg(argc, argv, i++, 1, 1000, &o.stages);
        else if (!strcmp(argv[i], "--iters"))
            rc = int_arg(argc, argv, i++, 1, MAX_ITERS, &o.iters);
        else if (!strcmp(argv[i], "--mbs"))
            rc = int_arg(argc, argv, i++, 1, MAX_MBS, &o.mbs);
        else if (!strcmp(argv[i], "--print"))
            o.print = 1;
        else
            rc = -1;
        if (rc)
            return usage(stderr, 2);
    }
    if (o.stage >= o.stages) {
        fprintf(stderr, "nvtx_pipeline: --stage %d is not below --stages %d\n", o.stage, o.stages);
        return 2;
    }

    nvtxNameOsThreadA((uint32_t)getpid(), "main"); /* thread names go into the run's meta */
    nvtxRangePushA("main"); /* never popped: ended by the injection at exit */
    expect("RANGE stage=%d name=main", o.stage);
    if (o.style == PPS)
        pps_register();

    for (int it = 0; it < o.iters; it++) {
        if (o.style != PPS) {
            nvtxRangeId_t id = nvtxRangeStartA("data loading");
            busy(20);
            nvtxRangeEnd(id);
            expect("RANGE stage=%d name=data loading", o.stage);
        }
        if (o.style == TORCH)
            run_torch(it);
        else if (o.style == PPS)
            run_pps(it);
        else
            run_regex(it);
    }
    nvtxMarkA("checkpoint");
    expect("RANGE stage=%d name=checkpoint", o.stage);
    return 0;
}
