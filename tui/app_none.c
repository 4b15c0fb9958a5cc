/*
 * app_none.c - the interactive view of a ppscope built without ncursesw: it says so, and
 * `--once` still works.
 */
#include "tui_core.h"

int pps_tui_interactive(const char *path_a, const char *path_b, const struct pps_tui_opts *opts,
                        struct pps_err *err)
{
    (void)path_a;
    (void)path_b;
    (void)opts;
    return pps_err_set(err, PPS_EINVAL,
                       "this ppscope was built without ncursesw: only --once is available");
}
