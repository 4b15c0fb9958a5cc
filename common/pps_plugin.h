/*
 * pps_plugin.h - opening one of ppscope's own GPU libraries (libppscope_cuda.so: the cuda
 * kernels with cuBLAS; libppscope_nccl.so: the NCCL transport) when a command first needs it.
 *
 * They are libraries rather than part of the program because what they link is large: cuBLAS,
 * cuBLASLt and NCCL are 800 MB, and loading them adds about 125 ms to every process start on a
 * 2-core machine, where all of `ppscope --help` takes 7 ms: every command but a GPU run would pay
 * it for nothing. A library is looked for in the running program's folder (the build's ppscope, or
 * an installed one beside its libraries), then PPS_PLUGIN_INSTALL_RELDIR from there (an installed
 * tree, wherever it was moved), then in PPS_PLUGIN_INSTALL_DIR, then in PPS_PLUGIN_BUILD_DIR
 * (pps_config.h); the first that exists is loaded, and a failure to load it (its cuBLAS or NCCL
 * missing) is reported, not passed over.
 */
#ifndef PPS_PLUGIN_H
#define PPS_PLUGIN_H

#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "pps_config.h"
#include "pps_dl.h"

/* Opens file ("libppscope_cuda.so") with RTLD_NOW | RTLD_LOCAL, or returns NULL with why (the
 * dlerror() of the copy that exists, or the places looked in). */
static inline void *pps_plugin_open(const char *file, char *why, size_t len)
{
    char exe[PATH_MAX], rel[PATH_MAX + 64], path[PATH_MAX + 128];
    const char *dirs[4] = {NULL, NULL, PPS_PLUGIN_INSTALL_DIR, PPS_PLUGIN_BUILD_DIR};
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

    if (n > 0) {
        char *slash;
        exe[n] = '\0';
        slash = strrchr(exe, '/');
        if (slash) {
            *slash = '\0';
            dirs[0] = exe;
            n = snprintf(rel, sizeof(rel), "%s/%s", exe, PPS_PLUGIN_INSTALL_RELDIR);
            dirs[1] = n > 0 && (size_t)n < sizeof(rel) ? rel : NULL;
        }
    }
    if (dirs[0] && strcmp(dirs[0], PPS_PLUGIN_BUILD_DIR) == 0)
        dirs[3] = NULL; /* the build's ppscope: said once */
    for (int i = 0; i < 4; i++) {
        void *lib;
        if (!dirs[i])
            continue;
        int w = snprintf(path, sizeof(path), "%s/%s", dirs[i], file);
        if (w < 0 || (size_t)w >= sizeof(path) || access(path, F_OK) != 0)
            continue;
        lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        if (!lib) {
            const char *e = dlerror();
            snprintf(why, len, "cannot load %.250s: %.200s", path, e ? e : "dlopen failed");
        }
        return lib;
    }
    snprintf(why, len, "%.40s is in none of %.150s%s%.150s%s%.150s%s%.150s", file,
             dirs[0] ? dirs[0] : "", dirs[0] ? ", " : "", dirs[1] ? dirs[1] : "",
             dirs[1] ? ", " : "", PPS_PLUGIN_INSTALL_DIR, dirs[3] ? ", " : "",
             dirs[3] ? dirs[3] : "");
    return NULL;
}

/*
 * Loads file and calls its one exported function, entry (declared in the library's header: the
 * compiler checks get against it), as get(abi) into result; the library stays loaded. On failure
 * result is NULL and why_not (a char array) says why: the library missing or not loading, or not
 * this build's (no entry, or entry refusing abi: another layout of what the two share).
 */
#define PPS_PLUGIN_LOAD(file, get, entry, abi, result, why_not)                                    \
    do {                                                                                           \
        const char *missing_ = NULL;                                                               \
        void *lib_ = pps_plugin_open((file), (why_not), sizeof(why_not));                          \
        (result) = NULL;                                                                           \
        if (lib_) {                                                                                \
            PPS_DL_FIND(lib_, get, entry, &missing_);                                              \
            (result) = (get) ? (get)(abi) : NULL;                                                  \
            if (!(result)) {                                                                       \
                snprintf((why_not), sizeof(why_not),                                               \
                         "%s is not this build's (%s): rebuild or reinstall ppscope", (file),      \
                         missing_ ? "no " #entry : "another layout of what they share");           \
                dlclose(lib_);                                                                     \
            }                                                                                      \
        }                                                                                          \
    } while (0)

#endif
