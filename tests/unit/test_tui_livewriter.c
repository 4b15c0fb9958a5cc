/*
 * test_tui_livewriter.c - writes a run slowly, as a training job would, for the live tests of
 * `ppscope view` (tests/cli/view_tmux_live.sh). Not a test itself.
 *
 *   test_tui_livewriter DIR ITERS INTERVAL_MS
 *
 * Writes 1F1B p=4 m=8 (1 ms ops) into DIR, one iteration every INTERVAL_MS, then closes the
 * shard complete. Exit 0, or 1 with a message.
 */
#include <stdio.h>
#include <time.h>

#include "test_tui_fixture.h"

int main(int argc, char **argv)
{
    struct fx_sim x;
    struct pps_store_writer *w;
    struct timespec pause;
    int iters, ms;

    if (argc != 4 || (iters = atoi(argv[2])) < 1 || (ms = atoi(argv[3])) < 0) {
        fprintf(stderr, "usage: test_tui_livewriter DIR ITERS INTERVAL_MS\n");
        return 1;
    }
    pause.tv_sec = ms / 1000;
    pause.tv_nsec = (long)(ms % 1000) * 1000000L;
    fx_sim_defaults(&x, PPS_SCHED_1F1B, 4, 8);
    x.waits = 1;
    if (fx_sim_prepare(&x) < 0 || !(w = fx_writer(argv[1], &x))) {
        fprintf(stderr, "test_tui_livewriter: cannot write %s\n", argv[1]);
        return 1;
    }
    for (int it = 0; it < iters; it++) {
        if (fx_write_iters(w, &x, it, it + 1) < 0) {
            fprintf(stderr, "test_tui_livewriter: writing iteration %d failed\n", it);
            return 1;
        }
        nanosleep(&pause, NULL);
    }
    fx_sim_release(&x);
    return pps_store_writer_close(w, 1, NULL) < 0;
}
