/*
 * mpi_dl.h - the MPI already in the process, reached at run time (tracer/ only; pps__ names).
 *
 * The tracer's libraries are loaded into other programs (libppscope_trace.so, the NVTX injection
 * library), which may have no MPI, or another MPI than the one ppscope was built with: a NEEDED
 * libmpi would fail their load, or bring a second MPI into the process. So nothing in tracer/
 * links MPI. The one user, clock sync, runs in a program that has initialised MPI, so that
 * program's MPI is already loaded: pps__mpi_find() looks up there, with dlsym, the functions clock
 * sync calls and the predefined handles it passes. mpi.h gives the types, at build time only.
 *
 * Only with PPS_HAVE_MPI, and only for clock_sync.c.
 */
#ifndef PPS_TRACER_MPI_DL_H
#define PPS_TRACER_MPI_DL_H

#include "pps_config.h"

#ifdef PPS_HAVE_MPI

#include <mpi.h>

#include "pps_error.h"

/* The MPI calls and handles of clock sync, as the process's MPI defines them. Each function
 * pointer has the type mpi.h declares for the function of its name (checked at build time). */
struct pps__mpi {
    void *lib; /* what dlopen returned, for pps__mpi_release() */
    int (*Initialized)(int *flag);
    int (*Finalized)(int *flag);
    int (*Query_thread)(int *provided);
    int (*Is_thread_main)(int *flag);
    int (*Comm_dup)(MPI_Comm comm, MPI_Comm *newcomm);
    int (*Comm_set_errhandler)(MPI_Comm comm, MPI_Errhandler errhandler);
    int (*Comm_rank)(MPI_Comm comm, int *rank);
    int (*Comm_size)(MPI_Comm comm, int *size);
    int (*Comm_free)(MPI_Comm *comm);
    int (*Send)(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm);
    int (*Recv)(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
                MPI_Status *status);
    int (*Error_string)(int code, char *msg, int *len);
    MPI_Comm comm_world;
    MPI_Datatype int_type;
    MPI_Datatype int64_type;
    MPI_Errhandler errors_return;
};

/*
 * Finds the MPI loaded in this process: first in the program's global scope (an MPI the program
 * links, or one dlopen'ed with RTLD_GLOBAL), then by the usual sonames among the libraries
 * already loaded (libmpi.so.40 for Open MPI, libmpi.so.12 for MPICH and its derivatives); it never
 * loads one. Fills *m; the caller releases it with pps__mpi_release() (also after a failure).
 *
 * Returns PPS_EINVAL with a reason when no MPI library is loaded in this process, or when the one
 * loaded lacks a function or handle, or is of another family than the mpi.h ppscope was built
 * with (Open MPI's handles are addresses, MPICH's are numbers: the two are not interchangeable).
 * It does not say whether MPI is initialised: call m->Initialized.
 */
int pps__mpi_find(struct pps__mpi *m, struct pps_err *err);

/* Lets go of what pps__mpi_find() took. *m must not be used afterwards. */
void pps__mpi_release(struct pps__mpi *m);

#endif /* PPS_HAVE_MPI */

#endif
