/*
 * once.c - `ppscope view --once`: one frame of the view as plain text on stdout, for scripts
 * and tests. The frame is drawn without colours (a text file has none), so every kind shows as
 * its letter.
 */
#include "tui_int.h"

int pps_tui_once(const char *path_a, const char *path_b, const struct pps_tui_opts *opts, int cols,
                 int rows, const char *keys, FILE *out, struct pps_err *err)
{
    struct pps_tui ui;
    struct pps_tui_opts o = *opts;
    struct pps_tui_frame f = {0, 0, NULL};
    int rc;

    o.color = 0;
    pps_tui_init(&ui, &o);
    rc = pps_tui_open(&ui, path_a, path_b, err);
    if (rc < 0)
        return rc;
    for (int m = 0; o.log && m < ui.n_models; m++) {
        const struct pps_run *run = ui.models[m].run;
        fprintf(o.log, "view: %s: %s, %zu spans held", m ? "B" : "A",
                ui.models[m].windowed
                    ? "its newest iterations through the index (the run's summary)"
                    : "read whole",
                run->n_spans);
        if (run->first_iter > 0)
            fprintf(o.log, " (iterations %d on, of %zu spans)", run->first_iter,
                    run->n_spans + run->n_dropped);
        fputc('\n', o.log);
    }
    rc = pps_tui_frame_init(&f, cols, rows);
    if (rc < 0) {
        pps_err_set(err, rc, "out of memory for a %dx%d frame", cols, rows);
        goto out;
    }
    /* A first frame gives the keys the layout (the bars' width) they work with. */
    pps_tui_draw(&ui, &f);
    rc = pps_tui_keys(&ui, keys, err);
    if (rc < 0)
        goto out;
    pps_tui_draw(&ui, &f);
    rc = pps_tui_frame_write(&f, out, o.ascii);
    if (rc < 0)
        pps_err_set(err, rc, "could not write the frame");
out:
    pps_tui_frame_release(&f);
    pps_tui_release(&ui);
    return rc;
}
