/*
 * report_load.c - the report from the run's summary, or from its spans (report_load.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report_load.h"

/* The report of the summary kept for run (its metadata), or 0 where none is of the run as it
 * is: a summary that cannot be read is none. */
static int from_summary(const struct pps_run *run, struct pps_report **rep,
                        struct pps_critpath **cp, char *from, size_t from_len)
{
    struct pps_err why = {0, ""};
    void *data = NULL;
    size_t len = 0;
    int rc = pps_run_summary_get(run->path, PPS_SUMMARY_NAME, run->stamp, &data, &len, &why);

    /* Whatever goes wrong with the summary (out of memory too: its sizes may be damaged), the
     * spans are read instead. */
    if (rc == 1 && (rc = pps_summary_decode(run, data, len, rep, cp, &why)) == 0) {
        rc = 1;
        snprintf(from, from_len, "from the run's summary (%zu bytes)", len);
    }
    if (rc <= 0 && why.msg[0])
        snprintf(from, from_len, "summary not used: %s", why.msg);
    free(data);
    return rc == 1;
}

/* Keeps the summary of rep and cp for the next report: where the run's writers are done. */
static void keep(const struct pps_run *run, const struct pps_report *rep,
                 const struct pps_critpath *cp, char *from, size_t from_len)
{
    struct pps_err why = {0, ""};
    void *data = NULL;
    size_t len = 0;
    size_t used = strlen(from);

    if (!pps_run_finished(run)) {
        snprintf(from + used, from_len - used, "; no summary kept: the run is still written");
        return;
    }
    if (pps_summary_encode(run, rep, cp, &data, &len, &why) == 0 &&
        pps_run_summary_put(run->path, PPS_SUMMARY_NAME, run->stamp, data, len, &why) == 0)
        snprintf(from + used, from_len - used, "; summary kept (%zu bytes)", len);
    else
        snprintf(from + used, from_len - used, "; no summary kept: %s", why.msg);
    free(data);
}

int pps_report_load(const char *path, int use, struct pps_run **run, struct pps_report **rep,
                    struct pps_critpath **cp, char *from, size_t from_len, struct pps_err *err)
{
    char scratch[1];
    int rc;

    *run = NULL;
    *rep = NULL;
    *cp = NULL;
    if (!from || from_len == 0) {
        from = scratch;
        from_len = sizeof(scratch);
    }
    from[0] = '\0';
    if (use != PPS_SUMMARY_NONE) {
        if ((rc = pps_run_load_meta(path, run, err)) < 0)
            return rc;
        if ((rc = from_summary(*run, rep, cp, from, from_len)) != 0)
            goto out; /* done */
        pps_run_free(*run);
        *run = NULL;
    }
    /* The critical path: for the report, and for the summary it keeps; compare and sim do not
     * need it. */
    if ((rc = pps_run_load(path, run, err)) < 0 || (rc = pps_analysis_report(*run, rep, err)) < 0 ||
        (use != PPS_SUMMARY_READ && (rc = pps_analysis_critpath(*run, *rep, cp, err)) < 0))
        goto out;
    {
        size_t used = strlen(from);
        snprintf(from + used, from_len - used, "%sfrom %zu spans", used ? "; " : "",
                 (*run)->n_spans);
    }
    if (use == PPS_SUMMARY_USE)
        keep(*run, *rep, *cp, from, from_len);
    rc = 0;
out:
    if (rc < 0) {
        pps_critpath_free(*cp);
        pps_report_free(*rep);
        pps_run_free(*run);
        *cp = NULL;
        *rep = NULL;
        *run = NULL;
        return rc;
    }
    return 0;
}
