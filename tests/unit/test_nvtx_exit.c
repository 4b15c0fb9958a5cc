/*
 * test_nvtx_exit.c - an NVTX-annotated program that ends badly on purpose, for the NVTX test
 * (tests/cli/nvtx_inject.sh) to run under the injection. Each mode is one way a real program
 * leaves ranges behind; the test checks that the program still exits 0 and the run is whole.
 *
 *   threads     8 threads push, pop, start and end ranges in a loop; main exits under them.
 *   fork        the parent holds a range open across fork(); the child records ranges and exits
 *               through exit() (atexit handlers run in it too); the parent then ends its range.
 *   deep        200 nested pushes, then 201 pops: what is too deep is dropped and counted.
 *   threadexit  a thread pushes "left open" and exits without popping it.
 */
#include <nvtx3/nvToolsExt.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static atomic_int started;

static void *spin(void *arg)
{
    int t = (int)(intptr_t)arg;
    char name[32];
    atomic_fetch_add(&started, 1);
    for (unsigned i = 0;; i++) {
        snprintf(name, sizeof(name), "PP:%dF%u", t, i % 4);
        nvtxRangePushA(name);
        nvtxRangePushA("worker");
        nvtxRangeId_t id = nvtxRangeStartA("async");
        nvtxRangePop();
        nvtxRangeEnd(id);
        nvtxRangePop();
    }
    return NULL;
}

static int run_threads(void)
{
    pthread_t th;
    for (int t = 0; t < 8; t++)
        if (pthread_create(&th, NULL, spin, (void *)(intptr_t)t) == 0)
            pthread_detach(th);
    while (atomic_load(&started) < 8)
        sleep_ms(1);
    sleep_ms(30);
    nvtxRangePushA("main");
    exit(0); /* the workers are still inside NVTX */
}

static int run_fork(void)
{
    int status = 0;
    nvtxRangePushA("parent");
    pid_t pid = fork();
    if (pid < 0) {
        perror("fork");
        return 1;
    }
    if (pid == 0) {
        nvtxRangePushA("child");
        nvtxRangePop();
        nvtxMarkA("child mark");
        nvtxRangePushA("child left open");
        exit(0);
    }
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "test_nvtx_exit: the child failed (status %d)\n", status);
        return 1;
    }
    nvtxRangePop();
    return 0;
}

static int run_deep(void)
{
    char name[32];
    for (int i = 0; i < 200; i++) {
        snprintf(name, sizeof(name), "level %d", i);
        nvtxRangePushA(name);
    }
    for (int i = 0; i < 201; i++) /* one pop too many */
        nvtxRangePop();
    return 0;
}

static void *leave_open(void *arg)
{
    (void)arg;
    nvtxRangePushA("left open");
    return NULL;
}

static int run_threadexit(void)
{
    pthread_t th;
    if (pthread_create(&th, NULL, leave_open, NULL) != 0)
        return 1;
    pthread_join(th, NULL);
    nvtxRangePushA("after");
    nvtxRangePop();
    return 0;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    if (!strcmp(mode, "threads"))
        return run_threads();
    if (!strcmp(mode, "fork"))
        return run_fork();
    if (!strcmp(mode, "deep"))
        return run_deep();
    if (!strcmp(mode, "threadexit"))
        return run_threadexit();
    fprintf(stderr, "usage: test_nvtx_exit threads|fork|deep|threadexit\n");
    return 2;
}
