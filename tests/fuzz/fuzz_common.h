/*
 * fuzz_common.h - the harness the importers' fuzz targets (fuzz_import_*.c) share: a private
 * directory for each target's input file and run, each input written there and imported, the
 * contract every failed import must keep (checked, or abort()), the run removed again, and, where
 * the target is built without libFuzzer, the replayer's main() that ctest runs. One harness, so
 * that the targets cannot come to check different things.
 *
 * A target defines FUZZ_NAME (the importer, "nsys") and FUZZ_INPUT (the input's file name, in
 * the form the importer expects, "in.sqlite"), then includes this header:
 *
 *   int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
 *   {
 *       struct pps_import_stats st;
 *       struct pps_err err = {0};
 *       fuzz_write_input(data, size);                      // the first call makes the directory
 *       int rc = fuzz_import(pps_import_nsys, &st, &err);  // aborts if a failure breaks the rule
 *       ... what else the target checks ...
 *       fuzz_remove_run();
 *       return 0;
 *   }
 *
 * Only the fuzz targets include this, once each: everything here is static but the replayer's
 * main().
 */
#ifndef PPS_FUZZ_COMMON_H
#define PPS_FUZZ_COMMON_H

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "import.h"

#if !defined(FUZZ_NAME) || !defined(FUZZ_INPUT)
#error "define FUZZ_NAME and FUZZ_INPUT before including fuzz_common.h"
#endif

/* The program's name, for its messages (a target that is no importer names itself). */
#ifndef FUZZ_PROG
#define FUZZ_PROG "fuzz_import_" FUZZ_NAME
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The directory (made on the first input), the input file in it and the run an import makes. */
static char fuzz_dir[64], fuzz_input[96], fuzz_run[96];

/* The importer under test: pps_import_nsys, pps_import_kineto. */
typedef int (*fuzz_import_fn)(const char *const *paths, int n, const struct pps_import_opts *o,
                              struct pps_import_stats *st, struct pps_err *err);

/* Removes the run an import made (its shards only: nothing else writes there). */
static inline void fuzz_remove_run(void)
{
    DIR *d = opendir(fuzz_run);
    struct dirent *e;
    char path[sizeof(fuzz_run) + 256 + 2];

    if (!d)
        return;
    while ((e = readdir(d)))
        if (e->d_name[0] != '.') {
            snprintf(path, sizeof(path), "%.*s/%.*s", (int)sizeof(fuzz_run), fuzz_run, 255,
                     e->d_name);
            unlink(path);
        }
    closedir(d);
    rmdir(fuzz_run);
}

static inline void fuzz_cleanup(void)
{
    fuzz_remove_run();
    unlink(fuzz_input);
    rmdir(fuzz_dir);
}

static inline void fuzz_setup(void)
{
    /* /dev/shm where there is one: the importer reads and writes files, memory is faster. */
    const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    snprintf(fuzz_dir, sizeof(fuzz_dir), "%s/pps-fuzz-" FUZZ_NAME "-XXXXXX", base);
    if (!mkdtemp(fuzz_dir)) {
        perror(FUZZ_PROG ": mkdtemp");
        exit(1);
    }
    snprintf(fuzz_input, sizeof(fuzz_input), "%s/" FUZZ_INPUT, fuzz_dir);
    snprintf(fuzz_run, sizeof(fuzz_run), "%s/run", fuzz_dir);
}

/* Writes an input to fuzz_input, making the directory (removed at exit) on the first call. */
static inline void fuzz_write_input(const uint8_t *data, size_t size)
{
    FILE *f;

    if (!fuzz_dir[0]) {
        fuzz_setup();
        atexit(fuzz_cleanup);
    }
    if (!(f = fopen(fuzz_input, "wb")) || fwrite(data, 1, size, f) != size || fclose(f) != 0) {
        perror(FUZZ_PROG ": cannot write the input");
        exit(1);
    }
}

/* Imports fuzz_input into fuzz_run with import; import's return, after the contract's check. */
static inline int fuzz_import(fuzz_import_fn import, struct pps_import_stats *st,
                              struct pps_err *err)
{
    struct pps_import_opts o = {fuzz_run, 0};
    const char *paths[1] = {fuzz_input};
    int rc = import(paths, 1, &o, st, err);

    /* The contract: a failure says why in one line, and leaves no run. */
    if (rc != 0 && (!err->msg[0] || strchr(err->msg, '\n') || access(fuzz_run, F_OK) == 0)) {
        fprintf(stderr, FUZZ_PROG ": bad failure %d: '%s'\n", rc, err->msg);
        abort();
    }
    return rc;
}

#ifndef PPS_LIBFUZZER
/* The replayer: one file through LLVMFuzzerTestOneInput; 1 when it cannot be read. */
static inline int fuzz_replay(const char *path)
{
    uint8_t *buf = NULL;
    long n;
    FILE *f = fopen(path, "rb");

    if (!f || fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0 ||
        !(buf = malloc((size_t)n + 1)) || fread(buf, 1, (size_t)n, f) != (size_t)n) {
        fprintf(stderr, FUZZ_PROG ": cannot read %s\n", path);
        if (f)
            fclose(f);
        free(buf);
        return 1;
    }
    fclose(f);
    LLVMFuzzerTestOneInput(buf, (size_t)n);
    free(buf);
    return 0;
}

/* The replayer: each argument a file, or a directory of them; fails when one could not be read,
 * or there was none. */
int main(int argc, char **argv)
{
    int n = 0, failed = 0;

    for (int i = 1; i < argc; i++) {
        DIR *d = opendir(argv[i]);
        struct dirent *e;
        if (!d) {
            failed |= fuzz_replay(argv[i]);
            n++;
            continue;
        }
        while ((e = readdir(d))) {
            char path[1024];
            if (e->d_name[0] == '.')
                continue;
            snprintf(path, sizeof(path), "%.*s/%.*s", 700, argv[i], 255, e->d_name);
            failed |= fuzz_replay(path);
            n++;
        }
        closedir(d);
    }
    printf(FUZZ_PROG ": %d inputs replayed%s\n", n, failed ? ", some unreadable" : "");
    return failed || n == 0;
}
#endif

#endif
