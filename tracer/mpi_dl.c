/*
 * mpi_dl.c - the MPI already in the process, looked up with dlopen and dlsym; mpi_dl.h says why
 * the tracer never links MPI.
 */
#include "mpi_dl.h"

#ifdef PPS_HAVE_MPI

#include <dlfcn.h>
#include <stddef.h>
#include <string.h>

/* Sonames of the MPIs in use: Open MPI 3.0 to 5.x; MPICH 3.1 on, Intel MPI and MVAPICH; Open MPI
 * 2.x; older MPICH. With RTLD_NOLOAD, dlopen only finds one that is already loaded, under any
 * path, and never loads it. */
static const char *const mpi_sonames[] = {"libmpi.so.40", "libmpi.so.12", "libmpi.so.20",
                                          "libmpich.so.12"};

/* What dlsym returns for a function is stored into a function pointer with memcpy, since ISO C
 * leaves the cast from void * undefined; POSIX guarantees the two have one representation. */
_Static_assert(sizeof(void *) == sizeof(void (*)(void)),
               "dlsym needs function pointers of the size of void *");

/* Looks up MPI_<fn> into m->fn, or names the first missing one in *missing. The comparison under
 * sizeof is never evaluated: it makes the compiler check that m->fn has the type mpi.h declares
 * for MPI_<fn> (a distinct pointer type is a warning, an error with PPS_WERROR), and leaves no
 * reference to MPI_<fn> for the linker. */
#define FIND_FN(m, fn, missing)                                                                    \
    do {                                                                                           \
        void *sym_ = dlsym((m)->lib, "MPI_" #fn);                                                  \
        (void)sizeof((m)->fn == MPI_##fn);                                                         \
        if (sym_)                                                                                  \
            memcpy(&(m)->fn, &sym_, sizeof(sym_));                                                 \
        else if (!*(missing))                                                                      \
            *(missing) = "MPI_" #fn;                                                               \
    } while (0)

/* The library that defines MPI_Initialized, as a handle: the program's global scope, else an MPI
 * loaded by one of the usual sonames; NULL when there is none. */
static void *open_loaded_mpi(void)
{
    void *lib;

    /* The global scope first: that is where the program's own references to MPI resolve. A
     * program that uses MPI_COMM_WORLD may hold its own copy of Open MPI's ompi_mpi_comm_world (a
     * copy relocation), which Open MPI then uses too, and only this lookup finds the copy. An MPI
     * loaded with RTLD_LOCAL (by a plugin, say) is not in it, and is found by its soname. */
    lib = dlopen(NULL, RTLD_LAZY);
    if (lib && dlsym(lib, "MPI_Initialized"))
        return lib;
    if (lib)
        dlclose(lib);
    for (size_t i = 0; i < sizeof(mpi_sonames) / sizeof(mpi_sonames[0]); i++)
        if ((lib = dlopen(mpi_sonames[i], RTLD_LAZY | RTLD_NOLOAD)))
            return lib;
    return NULL;
}

int pps__mpi_find(struct pps__mpi *m, struct pps_err *err)
{
    const char *missing = NULL;

    memset(m, 0, sizeof(*m));
    if (!(m->lib = open_loaded_mpi()))
        return pps_err_set(err, PPS_EINVAL,
                           "clock_sync needs MPI, and no MPI library is loaded in this process");
    FIND_FN(m, Initialized, &missing);
    FIND_FN(m, Finalized, &missing);
    FIND_FN(m, Query_thread, &missing);
    FIND_FN(m, Is_thread_main, &missing);
    FIND_FN(m, Comm_dup, &missing);
    FIND_FN(m, Comm_set_errhandler, &missing);
    FIND_FN(m, Comm_rank, &missing);
    FIND_FN(m, Comm_size, &missing);
    FIND_FN(m, Comm_free, &missing);
    FIND_FN(m, Send, &missing);
    FIND_FN(m, Recv, &missing);
    FIND_FN(m, Error_string, &missing);
    if (missing)
        return pps_err_set(err, PPS_EINVAL,
                           "clock sync: the MPI library loaded in this process has no %s", missing);

#ifdef OPEN_MPI
    /* Open MPI's predefined handles are the addresses of its data objects (MPI_COMM_WORLD is
     * &ompi_mpi_comm_world): looked up like the functions. An MPI without them is another
     * family, whose handles mean something else. */
    if (!(m->comm_world = dlsym(m->lib, "ompi_mpi_comm_world")) ||
        !(m->int_type = dlsym(m->lib, "ompi_mpi_int")) ||
        !(m->int64_type = dlsym(m->lib, "ompi_mpi_int64_t")) ||
        !(m->errors_return = dlsym(m->lib, "ompi_mpi_errors_return")))
        return pps_err_set(err, PPS_EINVAL,
                           "clock sync: the MPI loaded in this process is not Open MPI, which this "
                           "ppscope was built with");
#else
    /* MPICH and its derivatives define the handles as numbers in mpi.h, which the library
     * agrees with; Open MPI's library would take them for addresses. */
    if (dlsym(m->lib, "ompi_mpi_comm_world"))
        return pps_err_set(err, PPS_EINVAL,
                           "clock sync: the MPI loaded in this process is Open MPI, and this "
                           "ppscope was built with MPICH's mpi.h");
    m->comm_world = MPI_COMM_WORLD;
    m->int_type = MPI_INT;
    m->int64_type = MPI_INT64_T;
    m->errors_return = MPI_ERRORS_RETURN;
#endif
    return 0;
}

void pps__mpi_release(struct pps__mpi *m)
{
    if (m->lib)
        dlclose(m->lib);
    m->lib = NULL;
}

#endif /* PPS_HAVE_MPI */
