/* format.c - a schedule as text: one row of actions per stage, one step optionally marked. */
#include <stdio.h>

#include "internal.h"

void pps__emit(char *buf, size_t len, size_t *need, const char *s)
{
    for (; *s; s++, (*need)++)
        if (*need + 1 < len)
            buf[*need] = *s;
}

size_t pps__emit_end(char *buf, size_t len, size_t need)
{
    if (len)
        buf[need < len ? need : len - 1] = '\0';
    return need;
}

size_t pps_schedule_format(const struct pps_schedule *sched, int mark_stage, long mark_pos,
                           char *buf, size_t len)
{
    size_t need = 0;
    char tok[48];
    for (int s = 0; s < sched->p; s++) {
        snprintf(tok, sizeof(tok), "s%-3d:", s);
        pps__emit(buf, len, &need, tok);
        for (size_t k = 0; k < pps_schedule_len(sched, s); k++) {
            char a[32];
            pps__action_str(pps_schedule_at(sched, s, k), sched->v, a, sizeof(a));
            int marked = s == mark_stage && (long)k == mark_pos;
            snprintf(tok, sizeof(tok), marked ? " [%s]" : " %s", a);
            pps__emit(buf, len, &need, tok);
        }
        if (s == mark_stage && mark_pos < 0)
            pps__emit(buf, len, &need, "  <-- here");
        pps__emit(buf, len, &need, "\n");
    }
    return pps__emit_end(buf, len, need);
}

size_t pps_schedule_format_row(const struct pps_schedule *sched, int stage, char *buf, size_t len)
{
    size_t need = 0;
    char tok[48];

    snprintf(tok, sizeof(tok), "s%d:", stage);
    pps__emit(buf, len, &need, tok);
    for (size_t k = 0; k < pps_schedule_len(sched, stage); k++) {
        tok[0] = ' ';
        pps__action_str(pps_schedule_at(sched, stage, k), sched->v, tok + 1, sizeof(tok) - 1);
        pps__emit(buf, len, &need, tok);
    }
    return pps__emit_end(buf, len, need);
}
