/*
 * pid.c - the process's id, read once (tracer_core.h, pps__pid()): getpid() is a system call on
 * every use (glibc keeps no copy), a microsecond on a virtual machine with its mitigations on, and
 * the tracer asks at every call that must know whether it runs in a forked child
 * (pps__foreign()), pps_trace_iteration() among them, which the NVTX injection makes once per
 * iteration it infers. A fork() clears the copy in the child (a pthread_atfork() handler,
 * registered with the first read), whose next read takes its own id.
 */
#include <pthread.h>
#include <unistd.h>

#include "tracer_core.h"

_Atomic pid_t pps__pid_copy;

static pthread_once_t pid_once = PTHREAD_ONCE_INIT;

static void pid_forget(void)
{
    atomic_store_explicit(&pps__pid_copy, 0, memory_order_relaxed);
}

static void pid_watch_forks(void)
{
    /* Without the handler (no memory for it), every read asks the kernel: slower, still right. */
    if (pthread_atfork(NULL, NULL, pid_forget) != 0)
        atomic_store_explicit(&pps__pid_copy, -1, memory_order_relaxed);
}

pid_t pps__pid_read(void)
{
    pid_t p;

    pthread_once(&pid_once, pid_watch_forks);
    p = getpid();
    if (atomic_load_explicit(&pps__pid_copy, memory_order_relaxed) == 0)
        atomic_store_explicit(&pps__pid_copy, p, memory_order_relaxed);
    return p;
}
