/*
 * report_memory.c - the report's memory section: each stage's measured peak activation bytes
 * and pending W's beside what its schedule holds op by op (analysis/memory.h).
 */
#include <math.h>

#include "report_memory.h"

static void bytes_text(double b, char *buf, size_t len)
{
    if (isnan(b) || b < 0)
        snprintf(buf, len, "-");
    else if (b >= 1024.0 * 1024 * 1024)
        snprintf(buf, len, "%.2f GiB", b / (1024.0 * 1024 * 1024));
    else if (b >= 1024.0 * 1024)
        snprintf(buf, len, "%.2f MiB", b / (1024.0 * 1024));
    else if (b >= 1024.0)
        snprintf(buf, len, "%.1f KiB", b / 1024.0);
    else
        snprintf(buf, len, "%.0f B", b);
}

static void count_text(long long n, char *buf, size_t len)
{
    if (n < 0)
        snprintf(buf, len, "-");
    else
        snprintf(buf, len, "%lld", n);
}

void pps_report_memory_text(FILE *f, const struct pps_memory *mem)
{
    if (!mem->have_measured)
        return;
    fprintf(f,
            "\nmemory    peak activations and pending W per stage: measured (the runtime's "
            "samples after\n          each op), and as the schedule holds them%s%s\n",
            mem->have_predicted ? "" : " (not known: ", mem->have_predicted ? "" : mem->note);
    if (!mem->have_predicted)
        fputs("          )\n", f);
    fprintf(f, "%5s %12s %12s %9s %10s\n", "stage", "act measured", "schedule", "pending W",
            "schedule");
    for (int s = 0; s < mem->n_stages; s++) {
        const struct pps_memory_stage *st = &mem->stages[s];
        char a[32], b[32], c[32], d[32];

        bytes_text((double)st->act_peak, a, sizeof(a));
        bytes_text(st->pred_act, b, sizeof(b));
        count_text(st->pw_peak, c, sizeof(c));
        count_text(st->pred_pw, d, sizeof(d));
        fprintf(f, "%5d %12s %12s %9s %10s\n", st->stage, a, b, c, d);
    }
}

void pps_report_memory_json(struct pps_json *j, const struct pps_memory *mem)
{
    if (!mem->have_measured) {
        pps_json_null(j, "memory");
        return;
    }
    pps_json_begin_object(j, "memory");
    pps_json_bool(j, "predicted", mem->have_predicted);
    if (mem->note[0])
        pps_json_string(j, "note", mem->note);
    else
        pps_json_null(j, "note");
    pps_json_begin_array(j, "stages");
    for (int s = 0; s < mem->n_stages; s++) {
        const struct pps_memory_stage *st = &mem->stages[s];

        pps_json_begin_object(j, NULL);
        pps_json_int(j, "stage", st->stage);
        pps_json_int(j, "act_peak_bytes", st->act_peak);
        if (isnan(st->pred_act))
            pps_json_null(j, "schedule_act_bytes");
        else
            pps_json_int(j, "schedule_act_bytes", llround(st->pred_act)); /* whole bytes */
        pps_json_int(j, "pending_w_peak", st->pw_peak);
        pps_json_int(j, "schedule_pending_w", st->pred_pw);
        pps_json_end_object(j);
    }
    pps_json_end_array(j);
    pps_json_end_object(j);
}
