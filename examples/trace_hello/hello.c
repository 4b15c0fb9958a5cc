/*
 * hello.c - the smallest program that records a pipeline-parallel run with libppscope_trace:
 * two stages, four microbatches, GPipe order (all forwards, then all backwards), run one op
 * after the other in this one process. `ppscope report RUN` then shows the stages' busy and idle
 * time.
 *
 *   cmake -S . -B build -DCMAKE_PREFIX_PATH=/where/ppscope/is && cmake --build build
 *   or: cc hello.c $(pkg-config --cflags --libs ppscope-trace) -o hello
 *   ./hello runs/hello && ppscope report runs/hello
 */
#include <stdio.h>

#include <ppscope/trace.h>

enum { STAGES = 2, MICROBATCHES = 4, ITERATIONS = 2 };

/* Stands in for a stage's forward or backward: some arithmetic the compiler cannot drop. */
static volatile double sink;

static void work(int amount)
{
    double x = 0;

    for (int i = 0; i < amount * 20000; i++)
        x += (double)i * 1e-9;
    sink = x;
}

int main(int argc, char **argv)
{
    struct pps_trace_options o;
    struct pps_tracer *t;
    struct pps_err err;

    if (argc != 2) {
        fprintf(stderr, "usage: hello RUN_DIR\n");
        return 2;
    }
    pps_trace_options_init(&o);
    o.run_dir = argv[1];
    o.rank = 0;
    o.world = 1;
    if (pps_trace_open(&o, &t, &err) != 0) {
        fprintf(stderr, "hello: %s\n", err.msg);
        return 1;
    }
    pps_trace_meta(t, "schedule", "gpipe");
    pps_trace_meta_int(t, "p", STAGES);
    pps_trace_meta_int(t, "m", MICROBATCHES);
    pps_trace_meta_int(t, "v", 1);
    pps_trace_meta(t, "source", "ppscope");
    for (int it = 0; it < ITERATIONS; it++) {
        pps_trace_iteration(t, it);
        for (int mb = 0; mb < MICROBATCHES; mb++) {
            for (int stage = 0; stage < STAGES; stage++) {
                pps_trace_begin(t, PPS_TRACE_F, stage, 0, mb);
                work(1);
                pps_trace_end(t);
            }
        }
        for (int mb = 0; mb < MICROBATCHES; mb++) {
            for (int stage = STAGES - 1; stage >= 0; stage--) {
                pps_trace_begin(t, PPS_TRACE_BW, stage, 0, mb);
                work(2);
                pps_trace_end(t);
            }
        }
    }
    if (pps_trace_close(t, &err) != 0) {
        fprintf(stderr, "hello: %s\n", err.msg);
        return 1;
    }
    printf("hello: wrote %s\n", argv[1]);
    return 0;
}
