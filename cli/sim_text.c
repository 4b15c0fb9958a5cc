/*
 * sim_text.c - a simulated timeline as rows of characters, one row per stage: one character per
 * time unit while the iteration fits the width, scaled to the width when it does not. Each
 * column shows the op that fills most of it, or idle.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim_text.h"

static const char op_glyph[] = {'F', 'B', 'W', 'X'};

int pps_sim_text_timeline(FILE *f, const struct pps_schedule *sc, const struct pps_sim_result *r,
                          int width, double topt)
{
    if (width < 10)
        width = 10;
    double span = r->makespan > 0 ? r->makespan : 1;
    double unit = span <= width && span == floor(span) ? 1.0 : span / width;
    int cols = (int)ceil(span / unit - 1e-9);
    double *cover = malloc(sizeof(double) * 4 * (size_t)cols);
    char *row = malloc((size_t)cols + 1);
    if (!cover || !row) {
        free(cover);
        free(row);
        return PPS_ENOMEM;
    }
    fprintf(f, "         ");
    for (int c = 0; c < cols; c += 10) {
        char tick[16];
        int n = snprintf(tick, sizeof(tick), "%-10g", c * unit);
        fwrite(tick, 1, (size_t)(c + 10 <= cols ? 10 : (n < cols - c ? n : cols - c)), f);
    }
    fputc('\n', f);
    for (int s = 0; s < sc->p; s++) {
        memset(cover, 0, sizeof(double) * 4 * (size_t)cols);
        for (size_t k = sc->start[s]; k < sc->start[s + 1]; k++) {
            const struct pps_sim_span *sp = &r->spans[k];
            int op = sc->actions[k].op;
            for (int c = (int)(sp->start / unit); c < cols && c * unit < sp->end; c++) {
                double lo = fmax(sp->start, c * unit), hi = fmin(sp->end, (c + 1) * unit);
                if (hi > lo)
                    cover[(size_t)c * 4 + op] += hi - lo;
            }
        }
        for (int c = 0; c < cols; c++) {
            double best = 0, total = 0;
            char g = '.';
            for (int op = 0; op < 4; op++) {
                double x = cover[(size_t)c * 4 + op];
                total += x;
                if (x > best) {
                    best = x;
                    g = op_glyph[op];
                }
            }
            row[c] = total >= 0.5 * unit ? g : '.';
            /* The optimizer step closes the iteration on every stage. */
            if (topt > 0 && (c + 0.5) * unit >= r->makespan - topt)
                row[c] = 'O';
        }
        row[cols] = '\0';
        fprintf(f, "stage %-2d %s\n", s, row);
    }
    fprintf(f,
            "         (one column = %g unit%s)  F forward  B input-grad  W weight-grad  "
            "X fused B+W  O optimizer  . idle\n",
            unit, unit == 1 ? "" : "s");
    free(cover);
    free(row);
    return 0;
}
