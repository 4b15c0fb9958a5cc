/*
 * pps_dl.h - looking up a library's functions by name (dlsym) into typed pointers, for the
 * libraries ppscope loads at run time rather than links (cuBLAS, CUPTI): one macro, so the type
 * check and the memcpy are written once.
 */
#ifndef PPS_DL_H
#define PPS_DL_H

#include <dlfcn.h>
#include <string.h>

/* dlsym's void * stored into a function pointer with memcpy, since ISO C leaves the cast from
 * void * undefined; POSIX guarantees the two have one representation. */
_Static_assert(sizeof(void *) == sizeof(void (*)(void)),
               "dlsym needs function pointers of the size of void *");

/*
 * Looks up sym in lib into dst (a function pointer lvalue), or names the first missing symbol
 * in *missing (a const char *). The comparison under sizeof is never evaluated: the compiler
 * checks that dst has the type the library's header declares for sym (a warning, an error with
 * PPS_WERROR), and no reference to sym is left for the linker.
 */
#define PPS_DL_FIND(lib, dst, sym, missing)                                                        \
    do {                                                                                           \
        void *sym_ = dlsym((lib), #sym);                                                           \
        (void)sizeof((dst) == sym);                                                                \
        if (sym_)                                                                                  \
            memcpy(&(dst), &sym_, sizeof(sym_));                                                   \
        else if (!*(missing))                                                                      \
            *(missing) = #sym;                                                                     \
    } while (0)

#endif
