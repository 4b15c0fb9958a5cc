/*
 * fuzz_import_kineto.c - libFuzzer target of the Kineto importer: each input is written to a
 * file and imported with pps_import_kineto (as plain JSON, or decompressed where it is gzip)
 * into a run that is removed again. Every input must end in 0 or a PPS_E... code with a one-line
 * reason that leaves no run: a crash, a leak or a sanitizer report is a bug.
 *
 * Built with clang's -fsanitize=fuzzer under PPS_FUZZ=ON (tests/import_kineto.cmake); the seeds
 * are tests/fuzz/corpus/kineto (make_corpus_kineto.sh), the tokens tests/fuzz/kineto.dict:
 *
 *   CC=clang CXX=clang++ cmake -S . -B build-fuzz -DPPS_FUZZ=ON
 *   cmake --build build-fuzz --target fuzz_import_kineto
 *   build-fuzz/tests/fuzz_import_kineto -max_total_time=30 -dict=tests/fuzz/kineto.dict \
 *       NEW_DIR tests/fuzz/corpus/kineto
 *
 * Without libFuzzer the same file builds a replayer (fuzz_common.h's, the harness the targets
 * share), which ctest runs over the corpus (fuzz_replay_kineto), so the seeds and what fuzzing
 * found stay importable.
 */
#define FUZZ_NAME  "kineto"
#define FUZZ_INPUT "in.json"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct pps_import_stats st;
    struct pps_err err = {0};

    fuzz_write_input(data, size);
    int rc = fuzz_import(pps_import_kineto, &st, &err);
    /* One file is one rank, whatever it holds. */
    if (rc == 0 && st.ranks != 1) {
        fprintf(stderr, "fuzz_import_kineto: a success with %d ranks\n", st.ranks);
        abort();
    }
    fuzz_remove_run();
    return 0;
}
