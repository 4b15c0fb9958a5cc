/*
 * kineto_gen.c - writes a large PyTorch profiler (Kineto) Chrome trace of one pipeline rank, for
 * the JSON and import benchmarks: the layout, field order and event mix of a real Kineto trace of
 * a GPU job (the HolisticTraceAnalysis trace in shared/traces/kineto_hta/nccl_data.json.gz: cpu
 * ops with their External ids, CUDA runtime launches, kernels with their launch parameters,
 * copies, ac2g and fwdbwd flows, about 240 bytes an event), with PyTorch pipelining's "PP:"
 * labels around the ops and ProfilerStep#N around each step, so every path of the importer runs.
 *
 * usage: kineto_gen OUT.json[.gz] MEGABYTES [RANK [WORLD]]
 *
 * MEGABYTES of JSON (before compression: a name ending in .gz is written through zlib, level 1).
 * Deterministic: the same arguments write the same bytes. Prints the events written on stdout.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#define MB_PER_STEP 8 /* microbatches per step */

struct gen {
    FILE *f;
    gzFile gz;
    int64_t bytes, events;
    int64_t t_ns; /* the next event's start, ns since the trace's base */
    int64_t ext_id, corr, flow_id;
    int pid, tid_main, tid_bwd, rank;
    uint32_t rnd;
};

/* A small LCG: deterministic durations without libc's rand() state. */
static unsigned next_rnd(struct gen *g, unsigned mod)
{
    g->rnd = g->rnd * 1664525u + 1013904223u;
    return (g->rnd >> 8) % mod;
}

static void out(struct gen *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void out(struct gen *g, const char *fmt, ...)
{
    char buf[8192];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    if (n <= 0 || (size_t)n >= sizeof(buf))
        return;
    if (g->gz)
        gzwrite(g->gz, buf, (unsigned)n);
    else
        fwrite(buf, 1, (size_t)n, g->f);
    g->bytes += n;
}

/* Kineto writes times in microseconds with three decimals. */
#define US(ns) (ns) / 1000, (int)((ns) % 1000)

static void sep(struct gen *g)
{
    out(g, g->events ? ",\n  {\n" : "\n  {\n");
    g->events++;
}

static void ev_cpu(struct gen *g, const char *cat, const char *name, int tid, int64_t ts,
                   int64_t dur, int64_t ext)
{
    sep(g);
    out(g,
        "    \"ph\": \"X\", \"cat\": \"%s\", \"name\": \"%s\", \"pid\": %d, \"tid\": %d,\n"
        "    \"ts\": %" PRId64 ".%03d, \"dur\": %" PRId64 ".%03d,\n"
        "    \"args\": {\n"
        "      \"External id\": %" PRId64 ",\"Record function id\": %" PRId64
        ", \"Sequence number\": %" PRId64 ", \"Fwd thread id\": 1, \"Ev Idx\": %" PRId64 "\n"
        "    }\n  }",
        cat, name, g->pid, tid, US(ts), US(dur), ext, ext - 140, ext / 2, ext % 4096);
}

static void ev_runtime(struct gen *g, int tid, int64_t ts, int64_t dur, int64_t ext, int64_t corr)
{
    sep(g);
    out(g,
        "    \"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": "
        "%d, \"tid\": %d,\n"
        "    \"ts\": %" PRId64 ".%03d, \"dur\": %" PRId64 ".%03d,\n"
        "    \"args\": {\n"
        "      \"External id\": %" PRId64 ",\"cbid\": 211, \"correlation\": %" PRId64 "\n"
        "    }\n  }",
        g->pid, tid, US(ts), US(dur), ext, corr);
}

static void ev_flow(struct gen *g, char ph, int pid, int tid, int64_t ts, int64_t id)
{
    sep(g);
    out(g,
        "    \"ph\": \"%c\", \"id\": %" PRId64 ", \"pid\": %d, \"tid\": %d, \"ts\": %" PRId64
        ".%03d,\n    \"cat\": \"ac2g\", \"name\": \"ac2g\"%s\n  }",
        ph, id, pid, tid, US(ts), ph == 'f' ? ", \"bp\": \"e\"" : "");
}

static void ev_kernel(struct gen *g, const char *name, int64_t ts, int64_t dur, int64_t ext,
                      int64_t corr)
{
    sep(g);
    out(g,
        "    \"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"%s\", \"pid\": 0, \"tid\": 7,\n"
        "    \"ts\": %" PRId64 ".%03d, \"dur\": %" PRId64 ".%03d,\n"
        "    \"args\": {\n"
        "      \"External id\": %" PRId64 ",\n"
        "      \"queued\": 0, \"device\": 0, \"context\": 1,\n"
        "      \"stream\": 7, \"correlation\": %" PRId64 ",\n"
        "      \"registers per thread\": 40, \"shared memory\": 400,\n"
        "      \"blocks per SM\": 4.740741, \"warps per SM\": 75.851852,\n"
        "      \"grid\": [512, 1, 1], \"block\": [512, 1, 1],\n"
        "      \"est. achieved occupancy %%\": 100\n"
        "    }\n  }",
        name, US(ts), US(dur), ext, corr);
}

static void ev_memcpy(struct gen *g, int64_t ts, int64_t dur, int64_t ext, int64_t corr)
{
    sep(g);
    out(g,
        "    \"ph\": \"X\", \"cat\": \"gpu_memcpy\", \"name\": \"Memcpy DtoD (Device -> Device)\", "
        "\"pid\": 0, \"tid\": 7,\n"
        "    \"ts\": %" PRId64 ".%03d, \"dur\": %" PRId64 ".%03d,\n"
        "    \"args\": {\n"
        "      \"External id\": %" PRId64 ",\n"
        "      \"device\": 0, \"context\": 1,\n"
        "      \"stream\": 7, \"correlation\": %" PRId64 ",\n"
        "      \"bytes\": 4000, \"memory bandwidth (GB/s)\": 0.7861635220125787\n"
        "    }\n  }",
        US(ts), US(dur), ext, corr);
}

static const char *const fwd_ops[] = {"aten::linear", "aten::addmm", "aten::gelu",
                                      "aten::layer_norm"};
static const char *const bwd_ops[] = {"autograd::engine::evaluate_function: AddmmBackward0",
                                      "AddmmBackward0", "aten::mm", "aten::sum"};
static const char *const kernels[] = {
    "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_128x128_32x3_nn_align4>(Params)",
    "void at::native::vectorized_elementwise_kernel<4, at::native::GeluCUDAKernelImpl>(int, "
    "at::native::GeluCUDAKernelImpl, at::detail::Array<char*, 2>)",
    "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<float, float>(int, "
    "float, float const*, float const*, float const*, float*, float*, float*)",
    "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::func_wrapper_t"
    "<float, at::native::sum_functor<float, float, float>::operator()>, unsigned int, float, 4>>"
    "(at::native::ReduceOp<float, at::native::func_wrapper_t<float, at::native::sum_functor<float, "
    "float, float>::operator()>, unsigned int, float, 4>)"};

/* One pipeline action: its label, then four ops, each launching a kernel (and a copy now and
 * then), with the flows that tie launch to kernel. */
static void action(struct gen *g, const char *label, int bwd)
{
    int tid = bwd ? g->tid_bwd : g->tid_main;
    int64_t t0 = g->t_ns, t = t0 + 3000;
    int64_t ann = g->ext_id++;

    for (int k = 0; k < 4; k++) {
        int64_t dur = 20000 + next_rnd(g, 30000), ext = g->ext_id++, corr = g->corr++;
        ev_cpu(g, "cpu_op", bwd ? bwd_ops[k] : fwd_ops[k], tid, t, dur, ext);
        ev_runtime(g, tid, t + 4000, 6000, ext, corr);
        ev_flow(g, 's', g->pid, tid, t + 4000, corr);
        ev_kernel(g, kernels[k], t + 12000, dur - 5000, ext, corr);
        ev_flow(g, 'f', 0, 7, t + 12000, corr);
        if (next_rnd(g, 8) == 0) {
            int64_t c2 = g->corr++;
            ev_runtime(g, tid, t + 11000, 3000, ext, c2);
            ev_memcpy(g, t + dur + 8000, 2500, ext, c2);
        }
        t += dur + 2000;
    }
    sep(g);
    out(g,
        "    \"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"%s\", \"pid\": %d, \"tid\": "
        "%d,\n    \"ts\": %" PRId64 ".%03d, \"dur\": %" PRId64 ".%03d,\n"
        "    \"args\": {\n      \"External id\": %" PRId64
        ",\"Record function id\": 0, \"Ev Idx\": %" PRId64 "\n    }\n  }",
        label, g->pid, tid, US(t0), US(t - t0 + 1000), ann, ann % 4096);
    g->t_ns = t + 2000;
}

int main(int argc, char **argv)
{
    struct gen g = {0};
    int64_t limit;
    int world;
    char label[64];

    if (argc < 3 || argc > 5) {
        fprintf(stderr, "usage: kineto_gen OUT.json MEGABYTES [RANK [WORLD]]\n");
        return 2;
    }
    limit = (int64_t)(atof(argv[2]) * 1e6);
    g.rank = argc > 3 ? atoi(argv[3]) : 0;
    world = argc > 4 ? atoi(argv[4]) : 4;
    size_t len = strlen(argv[1]);
    if (len > 3 && !strcmp(argv[1] + len - 3, ".gz"))
        g.gz = gzopen(argv[1], "wb1");
    else
        g.f = fopen(argv[1], "w");
    if (!g.f && !g.gz) {
        perror(argv[1]);
        return 1;
    }
    g.pid = 2910249 + g.rank;
    g.tid_main = g.pid;
    g.tid_bwd = g.pid + 9503;
    g.t_ns = 4458676416788066;
    g.ext_id = 2049;
    g.corr = 57532;
    g.rnd = 12345u + (unsigned)g.rank;

    out(&g,
        "{\n  \"schemaVersion\": 1,\n  \"deviceProperties\": [\n    {\n      \"id\": 0, "
        "\"name\": \"NVIDIA A100-PG509-200\", \"totalGlobalMem\": 42297524224,\n      "
        "\"computeMajor\": 8, \"computeMinor\": 0, \"numSms\": 108\n    }\n  ],\n"
        "  \"distributedInfo\": {\"backend\": \"nccl\", \"rank\": %d, \"world_size\": %d},\n"
        "  \"record_shapes\": 1,\n  \"traceEvents\": [",
        g.rank, world);
    for (int step = 1; g.bytes < limit; step++) {
        int64_t s0 = g.t_ns;
        for (int mb = 0; mb < MB_PER_STEP; mb++) {
            snprintf(label, sizeof(label), "PP:%dF%d", g.rank, mb);
            action(&g, label, 0);
            snprintf(label, sizeof(label), "PP:%dSEND_F%d", g.rank, mb);
            action(&g, label, 0);
        }
        for (int mb = 0; mb < MB_PER_STEP; mb++) {
            snprintf(label, sizeof(label), "PP:%dB%d", g.rank, mb);
            action(&g, label, 1);
        }
        sep(&g);
        out(&g,
            "    \"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#%d\", "
            "\"pid\": %d, \"tid\": %d,\n    \"ts\": %" PRId64 ".%03d, \"dur\": %" PRId64
            ".%03d,\n    \"args\": {\n      \"External id\": %" PRId64 "\n    }\n  }",
            step, g.pid, g.tid_main, US(s0 - 1000), US(g.t_ns - s0 + 1500), g.ext_id++);
        g.t_ns += 5000;
    }
    sep(&g);
    out(&g,
        "    \"name\": \"process_name\", \"ph\": \"M\", \"ts\": %" PRId64 ".%03d, \"pid\": %d,"
        " \"tid\": 0,\n    \"args\": {\n      \"name\": \"python3.10\"\n    }\n  }",
        US((int64_t)4458676416431397), g.pid);
    out(&g, "\n  ],\n  \"traceName\": \"/tmp/kineto_gen.json\",\n  \"displayTimeUnit\": \"ms\",\n"
            "  \"baseTimeNanoseconds\": 1711964646000000000\n}\n");
    if (g.gz ? gzclose(g.gz) != Z_OK : fclose(g.f) != 0) {
        perror(argv[1]);
        return 1;
    }
    printf("%" PRId64 "\n", g.events);
    return 0;
}
