/*
 * text_fault.c - a validation fault of a schedule read from text, said in the text's terms: the
 * line, the rank (the grid: stage) and the step a user finds it at in the file, the action in the
 * file's own notation, and the rows around it with the cell marked.
 */
#include <stdio.h>
#include <string.h>

#include "internal.h"

/* Cells shown on either side of the marked one where a row is longer than twice that. */
#define CONTEXT 8

/* Action a of stage s in the text's notation: "5I3" (CSV) or "B3.1" (grid). */
static void notation(const struct pps_sched_text *src, const struct pps_schedule *sc, int s,
                     const struct pps_action *a, char *out, size_t len)
{
    static const char letter[] = {'F', 'I', 'W', 'B'};

    if (src->syntax == PPS_SYNTAX_CSV)
        snprintf(out, len, "%d%c%u", pps_schedule_vstage(sc, s, a->chunk), letter[a->op & 3],
                 (unsigned)a->mb);
    else
        pps__action_str(a, sc->v, out, len);
}

/* A backward of microbatch mb through chunk c of stage s, in either form, in the notation. */
static void backward(const struct pps_sched_text *src, const struct pps_schedule *sc, int s, int c,
                     unsigned mb, char *out, size_t len)
{
    struct pps_action b = {PPS_OP_B, (uint16_t)c, mb}, bw = {PPS_OP_BW, (uint16_t)c, mb};
    char x[32], y[32];

    notation(src, sc, s, &b, x, sizeof(x));
    notation(src, sc, s, &bw, y, sizeof(y));
    snprintf(out, len, "%s or %s", y, x);
}

/* The first line: where, what, why. */
static void headline(const struct pps_sched_text *src, const struct pps_schedule *sc,
                     const struct pps_sched_fault *f, const char *msg, char *out, size_t len)
{
    const char *who = src->syntax == PPS_SYNTAX_CSV ? "rank" : "stage";
    char act[48], dep[80], where[96];

    if (f->stage < 0 || f->stage >= src->n_rows) {
        snprintf(out, len, "%s", msg);
        return;
    }
    notation(src, sc, f->stage, &f->action, act, sizeof(act));
    if (f->pos < 0) {
        snprintf(where, sizeof(where), "line %d, %s %d", src->line[f->stage], who, f->stage);
        if (f->action.op == PPS_OP_F)
            snprintf(out, len, "%s never runs %s, microbatch %u's forward", where, act,
                     (unsigned)f->action.mb);
        else if (f->action.op == PPS_OP_W)
            snprintf(out, len, "%s never runs %s, the W after microbatch %u's split backward",
                     where, act, (unsigned)f->action.mb);
        else {
            backward(src, sc, f->stage, f->action.chunk, f->action.mb, dep, sizeof(dep));
            snprintf(out, len, "%s never runs microbatch %u's backward (%s)", where,
                     (unsigned)f->action.mb, dep);
        }
        return;
    }
    size_t cell = src->at[sc->start[f->stage] + (size_t)f->pos];
    const char *text = src->cell[cell];

    snprintf(where, sizeof(where), "line %d, %s %d, step %zu", src->line[f->stage], who, f->stage,
             cell - src->row[f->stage]);
    if (strcmp(text, act)) /* an overlapped pair, or a B of the releases before I */
        snprintf(act + strlen(act), sizeof(act) - strlen(act), " (in '%.20s')", text);
    if (f->why) {
        snprintf(out, len, "%s: %s %s", where, act, f->why);
    } else if (f->dep_stage >= 0) {
        if (f->dep.op == PPS_OP_F)
            notation(src, sc, f->dep_stage, &f->dep, dep, sizeof(dep));
        else
            backward(src, sc, f->dep_stage, f->dep.chunk, f->dep.mb, dep, sizeof(dep));
        snprintf(out, len,
                 "%s: %s waits for %s %d's %s of microbatch %u (%s), which never comes: the "
                 "%ss wait for each other (deadlock)",
                 where, act, who, f->dep_stage, f->dep.op == PPS_OP_F ? "forward" : "backward",
                 (unsigned)f->dep.mb, dep, who);
    } else {
        snprintf(out, len, "%s: %s: %s", where, act, msg);
    }
}

/*
 * Where a missing action may come from a stray microbatch number: m is the file's largest + 1,
 * so one cell that says 9 where 3 was meant makes microbatches 4..9 "missing" everywhere. Where
 * the largest microbatch runs fewer actions than microbatch 0, says where it is.
 */
static void stray_hint(const struct pps_sched_text *src, const struct pps_schedule *sc, char *out,
                       size_t len)
{
    size_t n = sc->start[sc->p], first = 0, n_max = 0, n_zero = 0;
    uint32_t top = (uint32_t)sc->m - 1;
    int stage = 0;

    out[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        if (sc->actions[i].mb == top && n_max++ == 0)
            first = i;
        n_zero += sc->actions[i].mb == 0;
    }
    if (!n_max || n_max >= n_zero)
        return;
    while (sc->start[stage + 1] <= first)
        stage++;
    snprintf(
        out, len, "  (m=%d is the file's largest microbatch + 1: %s at line %d, %s %d, step %zu)\n",
        sc->m, src->cell[src->at[first]], src->line[stage],
        src->syntax == PPS_SYNTAX_CSV ? "rank" : "stage", stage, src->at[first] - src->row[stage]);
}

/* Appends line to buf without its trailing spaces. */
static void emit_line(char *buf, size_t len, size_t *need, char *line, size_t n)
{
    while (n > 0 && line[n - 1] == ' ')
        n--;
    line[n] = '\0';
    pps__emit(buf, len, need, line);
    pps__emit(buf, len, need, "\n");
}

size_t pps_sched_text_explain(const struct pps_sched_text *src, const struct pps_schedule *sc,
                              const struct pps_sched_fault *f, const char *msg, char *buf,
                              size_t len)
{
    char line[1024];
    size_t need = 0, mark = (size_t)-1, lo = 0, hi = 0, widest = 0;
    int mark_row = f->stage >= 0 && f->stage < src->n_rows ? f->stage : -1;

    headline(src, sc, f, msg, line, sizeof(line));
    pps__emit(buf, len, &need, line);
    pps__emit(buf, len, &need, "\n");
    if (mark_row < 0)
        goto done;
    if (f->pos < 0) {
        stray_hint(src, sc, line, sizeof(line));
        pps__emit(buf, len, &need, line);
    }
    /* The columns shown: around the marked cell, or a missing action's row end. */
    for (int r = 0; r < src->n_rows; r++)
        if (src->row[r + 1] - src->row[r] > widest)
            widest = src->row[r + 1] - src->row[r];
    if (f->pos >= 0)
        mark = src->at[sc->start[f->stage] + (size_t)f->pos] - src->row[mark_row];
    size_t centre = f->pos >= 0 ? mark : src->row[mark_row + 1] - src->row[mark_row];
    lo = centre > CONTEXT ? centre - CONTEXT : 0;
    hi = centre + CONTEXT + 1 < widest ? centre + CONTEXT + 1 : widest;
    if (widest <= 2 * CONTEXT + 1)
        lo = 0, hi = widest;
    int digits = snprintf(NULL, 0, "%d", src->n_rows - 1);
    for (int r = 0; r < src->n_rows; r++) {
        size_t n = src->row[r + 1] - src->row[r], used;

        used = (size_t)snprintf(line, sizeof(line), "  %s%*d:%s",
                                src->syntax == PPS_SYNTAX_CSV ? "rank " : "s", digits, r,
                                lo > 0 ? " ..." : "");
        for (size_t c = lo; c < hi && c < n && used < sizeof(line) - 64; c++) {
            const char *cell = src->cell[src->row[r] + c];
            const char *shown = *cell ? cell : ".";
            size_t w = 0, k;

            /* Each column as wide as its widest cell in the rows shown, as PyTorch's grid. */
            for (int q = 0; q < src->n_rows; q++)
                if (c < src->row[q + 1] - src->row[q] && strlen(src->cell[src->row[q] + c]) > w)
                    w = strlen(src->cell[src->row[q] + c]);
            used += (size_t)snprintf(line + used, sizeof(line) - used,
                                     r == mark_row && c == mark ? "[%.40s]" : " %.40s ", shown);
            for (k = strlen(shown); k < w && k < 40 && used < sizeof(line) - 1; k++)
                line[used++] = ' ';
            line[used] = '\0';
        }
        if (hi < n && used < sizeof(line) - 16)
            used += (size_t)snprintf(line + used, sizeof(line) - used, " ...");
        if (r == mark_row && f->pos < 0 && used < sizeof(line) - 16)
            used += (size_t)snprintf(line + used, sizeof(line) - used, "  <-- here");
        emit_line(buf, len, &need, line, used);
    }
done:
    return pps__emit_end(buf, len, need);
}
