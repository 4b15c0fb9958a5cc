/*
 * fuzz_import_nsys.c - libFuzzer target of the Nsight Systems importer: each input is written to
 * a file and imported (pps_import_detect, then pps_import_nsys whatever it said), into a run that
 * is removed again. Every input must end in 0 or a PPS_E... code with a one-line reason: a crash,
 * a leak or a sanitizer report is a bug.
 *
 * Built with clang's -fsanitize=fuzzer by `make fuzz` (tests/fuzz.cmake, PPS_FUZZ=ON); the seeds
 * are tests/fuzz/corpus/nsys. Without libFuzzer the same file builds a replayer (fuzz_common.h's,
 * the harness the targets share), which ctest runs over the corpus (fuzz_replay_nsys): the seeds
 * stay importable, and what a fuzzing run found and saved there stays fixed.
 */
#define FUZZ_NAME  "nsys"
#define FUZZ_INPUT "in.sqlite"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct pps_import_stats st;
    struct pps_err err = {0};
    int format = 0;

    fuzz_write_input(data, size);
    /* Whatever detection says, the import runs: both must take any input. */
    pps_import_detect(fuzz_input, &format, &err);
    fuzz_import(pps_import_nsys, &st, &err);
    fuzz_remove_run();
    return 0;
}
