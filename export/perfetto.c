/*
 * perfetto.c - the run as Chrome trace JSON (the Trace Event Format's object form), which
 * ui.perfetto.dev, chrome://tracing and speedscope open.
 *
 * Every span is one "X" (complete) event, so the trace is the run, whole. A process per rank
 * (pid = rank) holds a track (tid) per stage and chunk for the ops, and one per stage for its
 * messages, device spans and named ranges, since those overlap the ops and a track must nest.
 * Spans of one track that overlap without nesting (a trace is not always clean) would be
 * misdrawn or dropped by the viewers, so each track is split into lanes in which no two spans
 * overlap: a clean run has one lane per track. tids are numbered across the whole trace,
 * because Perfetto, like Linux, takes a tid for one thread wherever it appears.
 *
 * Messages are flows: "s" at the middle of the SEND, "f" with "bp":"e" (bound to the enclosing
 * slice) at the middle of the RECV, each pair matched as analysis/links.c matches them (the
 * link's two stages and the message id, span.corr). A flow event binds to the slice that is
 * open at its time on its track, which the middle of a span always is; for a span of no
 * duration, its start is its middle, and both viewers bind to it there.
 *
 * Times are microseconds with three decimals (nanoseconds exactly), counted from the run's
 * first span (otherData.t0_ns says where that is on rank 0's clock): small numbers stay exact
 * in a JSON reader's doubles.
 *
 * Perfetto reads JSON in chunks with a reader of its own, which shapes the file: "otherData"
 * comes first (Perfetto fails a trace whose otherData straddles two chunks), there is no
 * "displayTimeUnit" (Perfetto takes "ns" there for the unit of ts, against the format's word),
 * and strings hold no \u escapes.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "export_int.h"

/* Tracks of a stage besides its chunks' op tracks. */
enum {
    GROUP_MSG = -1,    /* SEND, RECV, WAIT */
    GROUP_DEVICE = -2, /* KERNEL, MEMCPY */
    GROUP_RANGE = -3,  /* RANGE */
};

struct track {
    int rank, stage, group, lane;
    int64_t end; /* the latest end of a span in it, while the lanes are made */
    int tid;
};

/* One end of a message, for pairing (analysis/links.c pairs by the same key). */
struct msg_end {
    int from, to;
    int64_t corr;
    int64_t start, mid;
    int pid, tid;
};

struct trace {
    FILE *f;
    const struct pps_run *run;
    const struct pps_report *rep;
    struct track *tracks;
    size_t n_tracks, cap_tracks;
    uint32_t *track_of; /* per span, stage by stage as the run holds them: its track */
    size_t n_events, n_slices, n_flows, n_counters;
};

static int span_group(const struct pps_span *sp)
{
    switch (sp->kind) {
    case PPS_SPAN_SEND:
    case PPS_SPAN_RECV:
    case PPS_SPAN_WAIT:
        return GROUP_MSG;
    case PPS_SPAN_KERNEL:
    case PPS_SPAN_MEMCPY:
        return GROUP_DEVICE;
    case PPS_SPAN_RANGE:
        return GROUP_RANGE;
    default:
        return sp->chunk > 0 ? sp->chunk : 0;
    }
}

/* Track order within a stage: its chunks, then messages, device and ranges; lanes in order. */
static int group_rank(int group)
{
    return group >= 0 ? group : 0x7fff - group;
}

static int track_cmp(const void *a, const void *b)
{
    const struct track *x = a, *y = b;

    if (x->rank != y->rank)
        return x->rank < y->rank ? -1 : 1;
    if (x->stage != y->stage)
        return x->stage < y->stage ? -1 : 1;
    if (x->group != y->group)
        return group_rank(x->group) < group_rank(y->group) ? -1 : 1;
    return (x->lane > y->lane) - (x->lane < y->lane);
}

/* Puts every span on a track: the first lane of its (rank, stage, group) that is free at its
 * start, or a new lane. Then numbers the tracks in display order (tid 1, 2, ...). */
static int make_tracks(struct trace *t, struct pps_err *err)
{
    const struct pps_run *run = t->run;
    size_t k = 0, *order = NULL;
    int *tid_of = NULL;
    int rc = 0;

    t->track_of = malloc((run->n_spans ? run->n_spans : 1) * sizeof(*t->track_of));
    if (!t->track_of)
        goto oom;
    for (int s = 0; s < run->n_stages; s++) {
        size_t first = t->n_tracks; /* a stage's tracks are made together */

        for (size_t i = 0; i < run->stages[s].n; i++, k++) {
            const struct pps_span *sp = &run->stages[s].spans[i];
            int group = span_group(sp), lane = 0;
            size_t j;

            for (j = first; j < t->n_tracks; j++) {
                struct track *tr = &t->tracks[j];

                if (tr->rank != sp->rank || tr->group != group)
                    continue;
                if (tr->end <= sp->start_ns)
                    break;
                lane++;
            }
            if (j == t->n_tracks) {
                if (pps_grow((void **)&t->tracks, &t->cap_tracks, t->n_tracks + 1,
                             sizeof(*t->tracks)))
                    goto oom;
                t->tracks[t->n_tracks++] = (struct track){sp->rank, s, group, lane, sp->end_ns, 0};
            } else if (sp->end_ns > t->tracks[j].end) {
                t->tracks[j].end = sp->end_ns;
            }
            t->track_of[k] = (uint32_t)j;
        }
    }
    /* Sort a copy of the order, so that track_of (made in creation order) stays valid. */
    order = malloc((t->n_tracks ? t->n_tracks : 1) * sizeof(*order));
    tid_of = malloc((t->n_tracks ? t->n_tracks : 1) * sizeof(*tid_of));
    if (!order || !tid_of)
        goto oom;
    for (size_t j = 0; j < t->n_tracks; j++)
        t->tracks[j].tid = (int)j; /* remember where each came from */
    qsort(t->tracks, t->n_tracks, sizeof(*t->tracks), track_cmp);
    for (size_t j = 0; j < t->n_tracks; j++)
        tid_of[t->tracks[j].tid] = (int)j + 1;
    for (size_t j = 0; j < t->n_tracks; j++)
        t->tracks[j].tid = (int)j + 1;
    for (size_t i = 0; i < k; i++)
        t->track_of[i] = (uint32_t)(tid_of[t->track_of[i]] - 1);
    goto out;
oom:
    rc = pps_err_set(err, PPS_ENOMEM, "out of memory laying out the trace's tracks");
out:
    free(order);
    free(tid_of);
    return rc;
}

/* Starts an event: the comma between events, and the fields every event has. */
static void event_begin(struct trace *t, const char *name, const char *ph)
{
    fputs(t->n_events++ ? ",\n" : "\n", t->f);
    fputs("{\"name\":", t->f);
    pps__export_json_string(t->f, name);
    fprintf(t->f, ",\"ph\":\"%s\"", ph);
}

static void put_ts(struct trace *t, const char *key, int64_t ns)
{
    fprintf(t->f, ",\"%s\":", key);
    pps__export_put_us(t->f, ns);
}

static void put_double(FILE *f, const char *key, double x)
{
    if (isfinite(x))
        fprintf(f, ",\"%s\":%.6g", key, x);
    else
        fprintf(f, ",\"%s\":null", key);
}

static int stage_chunks(const struct trace *t, int rank, int stage)
{
    int n = 0;

    for (size_t j = 0; j < t->n_tracks; j++)
        if (t->tracks[j].rank == rank && t->tracks[j].stage == stage && t->tracks[j].group >= 0 &&
            t->tracks[j].lane == 0)
            n++;
    return n;
}

static void metadata(struct trace *t)
{
    char name[96];

    for (size_t j = 0; j < t->n_tracks; j++) {
        const struct track *tr = &t->tracks[j];
        int chunked = t->run->v > 1 || stage_chunks(t, tr->rank, tr->stage) > 1;

        if (j == 0 || tr->rank != t->tracks[j - 1].rank) {
            snprintf(name, sizeof(name), "rank %d", tr->rank);
            event_begin(t, "process_name", "M");
            fprintf(t->f, ",\"pid\":%d,\"args\":{\"name\":\"%s\"}}", tr->rank, name);
            event_begin(t, "process_sort_index", "M");
            fprintf(t->f, ",\"pid\":%d,\"args\":{\"sort_index\":%d}}", tr->rank, tr->rank);
        }
        if (tr->group >= 0 && chunked)
            snprintf(name, sizeof(name), "stage %d chunk %d", tr->stage, tr->group);
        else if (tr->group >= 0)
            snprintf(name, sizeof(name), "stage %d", tr->stage);
        else
            snprintf(name, sizeof(name), "stage %d %s", tr->stage,
                     tr->group == GROUP_MSG      ? "messages"
                     : tr->group == GROUP_DEVICE ? "device"
                                                 : "ranges");
        if (tr->lane > 0)
            snprintf(name + strlen(name), sizeof(name) - strlen(name), " (%d)", tr->lane + 1);
        event_begin(t, "thread_name", "M");
        fprintf(t->f, ",\"pid\":%d,\"tid\":%d,\"args\":{\"name\":\"%s\"}}", tr->rank, tr->tid,
                name);
        event_begin(t, "thread_sort_index", "M");
        fprintf(t->f, ",\"pid\":%d,\"tid\":%d,\"args\":{\"sort_index\":%d}}", tr->rank, tr->tid,
                tr->tid);
    }
}

static const char *span_cat(int kind)
{
    if (pps_span_kind_is_compute(kind) || kind == PPS_SPAN_ROLLBACK)
        return "compute";
    if (kind == PPS_SPAN_SEND || kind == PPS_SPAN_RECV || kind == PPS_SPAN_WAIT)
        return "p2p";
    return kind == PPS_SPAN_RANGE ? "range" : "device";
}

static void slice(struct trace *t, const struct pps_span *sp, const struct track *tr)
{
    const char *name = pps_run_span_name(t->run, sp);
    int64_t dur = sp->end_ns - sp->start_ns;

    /* A span that ends before it starts (a broken clock) is drawn as an instant: the viewers
     * refuse a negative duration, and the span must still be there. */
    event_begin(t, name ? name : pps_span_kind_name(sp->kind), "X");
    fprintf(t->f, ",\"cat\":\"%s\"", span_cat(sp->kind));
    put_ts(t, "ts", sp->start_ns - t->run->t_min);
    put_ts(t, "dur", dur > 0 ? dur : 0);
    fprintf(t->f, ",\"pid\":%d,\"tid\":%d,\"args\":{\"kind\":\"%s\",\"stage\":%d", tr->rank,
            tr->tid, pps_span_kind_name(sp->kind), sp->stage);
    if (sp->chunk >= 0)
        fprintf(t->f, ",\"chunk\":%d", sp->chunk);
    if (sp->mb >= 0)
        fprintf(t->f, ",\"mb\":%d", sp->mb);
    if (sp->iter >= 0)
        fprintf(t->f, ",\"iter\":%d", sp->iter);
    if (sp->peer >= 0)
        fprintf(t->f, ",\"peer\":%d", sp->peer);
    if (sp->bytes != 0 || sp->kind == PPS_SPAN_SEND || sp->kind == PPS_SPAN_RECV)
        fprintf(t->f, ",\"bytes\":%" PRId64, sp->bytes);
    if (sp->corr != 0)
        fprintf(t->f, ",\"%s\":%" PRId64,
                sp->kind == PPS_SPAN_SEND || sp->kind == PPS_SPAN_RECV || sp->kind == PPS_SPAN_WAIT
                    ? "msg"
                    : "corr",
                sp->corr);
    if (sp->clock == PPS_CLOCK_DEVICE)
        fputs(",\"clock\":\"device\"", t->f);
    fputs("}}", t->f);
    t->n_slices++;
}

static void slices(struct trace *t)
{
    size_t k = 0;

    for (int s = 0; s < t->run->n_stages; s++)
        for (size_t i = 0; i < t->run->stages[s].n; i++, k++)
            slice(t, &t->run->stages[s].spans[i], &t->tracks[t->track_of[k]]);
}

static int msg_cmp(const void *a, const void *b)
{
    const struct msg_end *x = a, *y = b;

    if (x->from != y->from)
        return x->from < y->from ? -1 : 1;
    if (x->to != y->to)
        return x->to < y->to ? -1 : 1;
    if (x->corr != y->corr)
        return x->corr < y->corr ? -1 : 1;
    return (x->start > y->start) - (x->start < y->start);
}

/* The ends of messages of one kind (SEND or RECV): count when ends is NULL. */
static size_t collect_ends(const struct trace *t, int kind, struct msg_end *ends)
{
    const struct pps_run *run = t->run;
    size_t n = 0, k = 0;

    for (int s = 0; s < run->n_stages; s++)
        for (size_t i = 0; i < run->stages[s].n; i++, k++) {
            const struct pps_span *sp = &run->stages[s].spans[i];
            const struct track *tr = &t->tracks[t->track_of[k]];
            int64_t dur = sp->end_ns > sp->start_ns ? sp->end_ns - sp->start_ns : 0;

            if (sp->kind != kind || sp->corr <= 0 || sp->peer < 0 || sp->peer == s)
                continue;
            if (ends)
                ends[n] = (struct msg_end){kind == PPS_SPAN_SEND ? s : sp->peer,
                                           kind == PPS_SPAN_SEND ? sp->peer : s,
                                           sp->corr,
                                           sp->start_ns,
                                           sp->start_ns + dur / 2,
                                           tr->rank,
                                           tr->tid};
            n++;
        }
    return n;
}

static void flow_event(struct trace *t, const char *ph, size_t id, const struct msg_end *e)
{
    event_begin(t, "message", ph);
    fprintf(t->f, ",\"cat\":\"p2p\",\"id\":%zu", id);
    if (ph[0] == 'f')
        fputs(",\"bp\":\"e\"", t->f);
    put_ts(t, "ts", e->mid - t->run->t_min);
    fprintf(t->f, ",\"pid\":%d,\"tid\":%d}", e->pid, e->tid);
}

/* An arrow from each SEND to its RECV; where one id stands on several messages of a link, the
 * k-th send by time goes to the k-th receive. */
static int flows(struct trace *t, struct pps_err *err)
{
    size_t ns = collect_ends(t, PPS_SPAN_SEND, NULL), nr = collect_ends(t, PPS_SPAN_RECV, NULL);
    struct msg_end *send = malloc((ns ? ns : 1) * sizeof(*send));
    struct msg_end *recv = malloc((nr ? nr : 1) * sizeof(*recv));
    size_t i = 0, j = 0;

    if (!send || !recv) {
        free(send);
        free(recv);
        return pps_err_set(err, PPS_ENOMEM, "out of memory pairing the run's messages");
    }
    collect_ends(t, PPS_SPAN_SEND, send);
    collect_ends(t, PPS_SPAN_RECV, recv);
    qsort(send, ns, sizeof(*send), msg_cmp);
    qsort(recv, nr, sizeof(*recv), msg_cmp);
    while (i < ns && j < nr) {
        const struct msg_end *a = &send[i], *b = &recv[j];
        int c = a->from != b->from   ? (a->from < b->from ? -1 : 1)
                : a->to != b->to     ? (a->to < b->to ? -1 : 1)
                : a->corr != b->corr ? (a->corr < b->corr ? -1 : 1)
                                     : 0;

        if (c < 0) {
            i++;
        } else if (c > 0) {
            j++;
        } else {
            t->n_flows++;
            flow_event(t, "s", t->n_flows, a);
            flow_event(t, "f", t->n_flows, b);
            i++;
            j++;
        }
    }
    free(send);
    free(recv);
    return 0;
}

/* The window of iteration iter in the report, or NULL. */
static const struct pps_iter_stats *find_iter(const struct pps_report *rep, int iter)
{
    int lo = 0, hi = rep->n_iters - 1;

    while (lo <= hi) {
        int mid = lo + (hi - lo) / 2;

        if (rep->iters[mid].iter == iter)
            return &rep->iters[mid];
        if (rep->iters[mid].iter < iter)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return NULL;
}

/* Per rank, per stage: each iteration's peak pending W's and activation bytes, as steps from
 * the iteration's window start (the metrics are peaks over the iteration, not samples). */
static void counters(struct trace *t)
{
    const struct pps_run *run = t->run;

    for (size_t i = 0; i < run->n_metrics; i++) {
        const struct pps_metric *m = &run->metrics[i];
        const struct pps_iter_stats *is = m->stage >= 0 ? find_iter(t->rep, m->iter) : NULL;

        if (!is)
            continue;
        if (m->pending_w >= 0) {
            event_begin(t, "pending W (peak)", "C");
            put_ts(t, "ts", is->t0 - run->t_min);
            fprintf(t->f, ",\"pid\":%d,\"args\":{\"stage %d\":%" PRId64 "}}", m->rank, m->stage,
                    m->pending_w);
            t->n_counters++;
        }
        if (m->act_bytes >= 0) {
            event_begin(t, "activation bytes (peak)", "C");
            put_ts(t, "ts", is->t0 - run->t_min);
            fprintf(t->f, ",\"pid\":%d,\"args\":{\"stage %d\":%" PRId64 "}}", m->rank, m->stage,
                    m->act_bytes);
            t->n_counters++;
        }
    }
}

/* A global mark at each iteration's window start, with its bubble. */
static void iteration_marks(struct trace *t)
{
    char name[32];

    for (int i = 0; i < t->rep->n_iters; i++) {
        const struct pps_iter_stats *is = &t->rep->iters[i];

        snprintf(name, sizeof(name), "iteration %d", is->iter);
        event_begin(t, name, "i");
        fputs(",\"cat\":\"iteration\",\"s\":\"g\"", t->f);
        put_ts(t, "ts", is->t0 - t->run->t_min);
        fprintf(t->f, ",\"pid\":%d,\"args\":{\"window_ms\":%.6f", t->tracks[0].rank,
                is->window_ns / 1e6);
        put_double(t->f, "bubble", is->bubble);
        fprintf(t->f, ",\"partial\":%s}}", is->partial ? "true" : "false");
    }
}

/* The report's figures, which chrome://tracing shows under "Metadata". */
static void other_data(struct trace *t)
{
    const struct pps_report *rep = t->rep;
    const struct pps_run *run = t->run;
    char verdict[512];
    int kind = pps_report_verdict(rep, verdict, sizeof(verdict));

    fputs("\"otherData\":{\"producer\":\"ppscope\",\"run\":", t->f);
    pps__export_json_string(t->f, run->path);
    fputs(",\"schedule\":", t->f);
    pps__export_json_string(t->f, run->schedule ? run->schedule : "");
    fprintf(t->f, ",\"p\":%d,\"m\":%d,\"v\":%d,\"t0_ns\":%" PRId64 ",\"spans\":%zu", rep->p, rep->m,
            rep->v, run->t_min, run->n_spans);
    put_double(t->f, "bubble", rep->bubble);
    put_double(t->f, "steady_bubble", rep->steady_bubble);
    put_double(t->f, "predicted_bubble", rep->have_prediction ? rep->pred.bubble : NAN);
    put_double(t->f, "predicted_steady_bubble",
               rep->have_prediction ? rep->pred_steady_bubble : NAN);
    put_double(t->f, "bubble_quoted", rep->bubble_quoted);
    put_double(t->f, "bubble_exact", rep->bubble_exact);
    put_double(t->f, "iteration_ms", rep->iter_ns / 1e6);
    fprintf(t->f, ",\"verdict\":\"%s\",\"verdict_text\":", pps_verdict_name(kind));
    pps__export_json_string(t->f, verdict);
    fputs("}", t->f);
}

int pps_export_perfetto(FILE *f, const struct pps_export_input *in, char *what, size_t len,
                        struct pps_err *err)
{
    struct trace t = {.f = f, .run = in->run, .rep = in->rep};
    int rc;

    if ((rc = make_tracks(&t, err)))
        goto out;
    fputs("{", f);
    other_data(&t);
    fputs(",\"traceEvents\":[", f);
    metadata(&t);
    slices(&t);
    if ((rc = flows(&t, err)))
        goto out;
    counters(&t);
    if (t.n_tracks > 0)
        iteration_marks(&t);
    fputs("\n]}\n", f);
    pps__export_what(what, len, "%zu slices, %zu flows, %zu counter samples", t.n_slices, t.n_flows,
                     t.n_counters);
    rc = pps__export_finish(f, err);
out:
    free(t.tracks);
    free(t.track_of);
    return rc;
}
