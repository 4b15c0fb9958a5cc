/*
 * csv.c - the run's spans as CSV (RFC 4180), one row per span, for spreadsheets, pandas and
 * DuckDB: a header naming the columns, then each stage's spans in the order they started.
 *
 * Kinds and clocks are written by name so that a reader needs no table to make sense of a row;
 * times are the aligned nanoseconds the reader gives (rank 0's clock), whole, so that the rows
 * join with a query on the SQLite file after the same alignment.
 */
#include <inttypes.h>

#include "export_int.h"

int pps_export_csv(FILE *f, const struct pps_export_input *in, char *what, size_t len,
                   struct pps_err *err)
{
    const struct pps_run *run = in->run;
    size_t rows = 0;

    fputs("kind,stage,chunk,mb,iter,start_ns,end_ns,dur_ns,peer,bytes,name,rank,clock,corr\n", f);
    for (int s = 0; s < run->n_stages; s++)
        for (size_t i = 0; i < run->stages[s].n; i++) {
            const struct pps_span *sp = &run->stages[s].spans[i];

            fprintf(f, "%s,%d,%d,%d,%d,%" PRId64 ",%" PRId64 ",%" PRId64 ",%d,%" PRId64 ",",
                    pps_span_kind_name(sp->kind), sp->stage, sp->chunk, sp->mb, sp->iter,
                    sp->start_ns, sp->end_ns, sp->end_ns - sp->start_ns, sp->peer, sp->bytes);
            pps__export_csv_field(f, pps_run_span_name(run, sp));
            fprintf(f, ",%d,%s,%" PRId64 "\n", sp->rank,
                    sp->clock == PPS_CLOCK_DEVICE ? "device" : "host", sp->corr);
            rows++;
        }
    pps__export_what(what, len, "%zu rows", rows);
    return pps__export_finish(f, err);
}
