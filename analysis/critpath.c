/*
 * critpath.c - the critical path of each iteration: the chain of ops, and of the transfers
 * between them, that sets its length.
 *
 * The walk starts at the op that ends last in the iteration and goes back: at each op, its
 * predecessor is whichever op it depends on ended latest, the previous op on its own stage or
 * the neighbouring stage's op whose output it consumed (for an OPT with an optimizer barrier,
 * the last op of every stage). That op is what the op waited for last, so shortening an op on
 * the chain (or a gap in it) is what can end the iteration sooner; shortening one off it cannot,
 * until another chain becomes the longest. The time between two steps is split into what a
 * transfer covers (a message in flight while its receiver waited for it, the sends and receives
 * themselves) and the rest: waiting, idle, overhead.
 *
 * Each iteration's ops are gathered per stage (labelled with the iteration, as the report labels
 * them), found by binary search on start inside its window, with a sorted key (kind, chunk,
 * microbatch) for finding the op a neighbouring stage consumed: a walk costs its steps times a
 * binary search, and only one iteration's spans are held at a time.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis_int.h"

/* One iteration's spans on one stage: its compute ops by start, the keys that find an F or a
 * backward among them, and its messages' spans (SEND, RECV and the WAITs for them) by start. */
struct key {
    int cls, chunk, mb; /* cls 0: F, 1: B or BW */
    size_t op;          /* index into ops */
};

struct lane {
    const struct pps_span **ops;
    size_t n_ops;
    struct key *keys;
    size_t n_keys;
    const struct pps_span **msgs;
    size_t n_msgs;
};

struct walk {
    const struct pps_report *rep;
    int p, v;
    int placement; /* the schedule's (enum pps_placement): which virtual stage a chunk is */
    int barrier;  /* the optimizer step waits for every stage (not post-validated) */
    int messages; /* the run records SEND and RECV spans */
};

static int span_ptr_cmp(const void *a, const void *b)
{
    const struct pps_span *x = *(const struct pps_span *const *)a;
    const struct pps_span *y = *(const struct pps_span *const *)b;

    if (x->start_ns != y->start_ns)
        return x->start_ns < y->start_ns ? -1 : 1;
    if (x->end_ns != y->end_ns)
        return x->end_ns < y->end_ns ? -1 : 1;
    return 0;
}

static int key_cmp(const void *a, const void *b)
{
    const struct key *x = a, *y = b;

    if (x->cls != y->cls)
        return x->cls < y->cls ? -1 : 1;
    if (x->chunk != y->chunk)
        return x->chunk < y->chunk ? -1 : 1;
    if (x->mb != y->mb)
        return x->mb < y->mb ? -1 : 1;
    return (x->op > y->op) - (x->op < y->op);
}

static int op_class(int kind)
{
    if (kind == PPS_SPAN_F)
        return 0;
    if (kind == PPS_SPAN_B || kind == PPS_SPAN_BW)
        return 1;
    return -1;
}

static int is_msg(int kind)
{
    return kind == PPS_SPAN_SEND || kind == PPS_SPAN_RECV || kind == PPS_SPAN_WAIT;
}

/* A stage's spans in order of start: the run's own array where it is sorted (the reader's
 * promise), else an order of our own. */
struct stage_view {
    const struct pps_span *spans;
    const struct pps_span **order; /* NULL where spans is sorted */
    size_t n;
};

/* How far back before an iteration's window gather() looks for the WAIT of its first message:
 * spans, at most (a stage thread's WAIT is among the last few spans before its next op). */
#define WAIT_LOOKBACK 256

static const struct pps_span *view_at(const struct stage_view *v, size_t i)
{
    return v->order ? v->order[i] : &v->spans[i];
}

/* The first span of v starting at or after t. */
static size_t view_lower(const struct stage_view *v, int64_t t)
{
    size_t lo = 0, hi = v->n;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (view_at(v, mid)->start_ns < t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Views of the run's first ns stages; *messages: the run has a SEND or a RECV. */
static int make_views(const struct pps_run *run, int ns, struct stage_view *views, int *messages,
                      struct pps_err *err)
{
    *messages = 0;
    for (int s = 0; s < ns; s++) {
        struct stage_view *v = &views[s];
        int sorted = 1;

        if (s >= run->n_stages || !run->stages[s].spans)
            continue;
        v->spans = run->stages[s].spans;
        v->n = run->stages[s].n;
        for (size_t i = 0; i < v->n; i++) {
            const struct pps_span *sp = &v->spans[i];
            *messages |= sp->kind == PPS_SPAN_SEND || sp->kind == PPS_SPAN_RECV;
            if (i > 0 &&
                (v->spans[i - 1].start_ns > sp->start_ns ||
                 (v->spans[i - 1].start_ns == sp->start_ns && v->spans[i - 1].end_ns > sp->end_ns)))
                sorted = 0;
        }
        if (sorted)
            continue;
        v->order = malloc(v->n * sizeof(*v->order));
        if (!v->order)
            return pps_err_set(err, PPS_ENOMEM, "out of memory for the critical path");
        for (size_t i = 0; i < v->n; i++)
            v->order[i] = &v->spans[i];
        qsort(v->order, v->n, sizeof(*v->order), span_ptr_cmp);
    }
    return 0;
}

/* Appends sp to a growing array of pointers. */
static int push(const struct pps_span ***arr, size_t *n, size_t *cap, const struct pps_span *sp)
{
    if (*n == *cap) {
        size_t c = *cap ? 2 * *cap : 64;
        const struct pps_span **a = realloc(*arr, c * sizeof(**arr));
        if (!a)
            return PPS_ENOMEM;
        *arr = a;
        *cap = c;
    }
    (*arr)[(*n)++] = sp;
    return 0;
}

/* Fills lanes[0..ns-1] with the ops and messages of the iteration is describes, on each stage:
 * its compute spans (labelled with it, so inside its window [t0, t1]) and the message spans
 * labelled with it that start in the window, in order of start; and before the window, the
 * WAITs labelled with it that reach into it (a stage waiting for the iteration's first input),
 * found by looking back from the window's start to the stage's last op before it. The lanes'
 * arrays are reused from one iteration to the next (caps: their sizes). */
static int gather(const struct stage_view *views, int ns, const struct pps_iter_stats *is,
                  struct lane *lanes, size_t *caps, struct pps_err *err)
{
    for (int s = 0; s < ns; s++) {
        const struct stage_view *v = &views[s];
        struct lane *l = &lanes[s];
        size_t nk = 0, lo = view_lower(v, is->t0), back = 0;
        int rc = 0;

        l->n_ops = l->n_msgs = l->n_keys = 0;
        for (size_t j = lo; j-- > 0 && back < WAIT_LOOKBACK && !rc; back++) {
            const struct pps_span *sp = view_at(v, j);
            if (pps_span_kind_is_compute(sp->kind))
                break;
            if (sp->kind == PPS_SPAN_WAIT && sp->iter == is->iter && sp->stage == s &&
                sp->end_ns >= is->t0)
                rc = push(&l->msgs, &l->n_msgs, &caps[3 * s + 1], sp);
        }
        /* Found backwards: put them in order of start. */
        for (size_t a = 0, b = l->n_msgs; a + 1 < b; a++, b--) {
            const struct pps_span *t = l->msgs[a];
            l->msgs[a] = l->msgs[b - 1];
            l->msgs[b - 1] = t;
        }
        for (size_t i = lo; i < v->n && !rc; i++) {
            const struct pps_span *sp = view_at(v, i);

            if (sp->start_ns > is->t1)
                break;
            /* A span filed under another stage than its own is not trusted with either. */
            if (sp->iter != is->iter || sp->stage != s)
                continue;
            if (pps_span_kind_is_compute(sp->kind))
                rc = push(&l->ops, &l->n_ops, &caps[3 * s], sp);
            else if (is_msg(sp->kind))
                rc = push(&l->msgs, &l->n_msgs, &caps[3 * s + 1], sp);
        }
        if (rc)
            return pps_err_set(err, PPS_ENOMEM, "out of memory for the critical path");
        if (l->n_ops > caps[3 * s + 2]) {
            struct key *k = realloc(l->keys, l->n_ops * sizeof(*k));
            if (!k)
                return pps_err_set(err, PPS_ENOMEM, "out of memory for the critical path");
            l->keys = k;
            caps[3 * s + 2] = l->n_ops;
        }
        for (size_t i = 0; i < l->n_ops; i++) {
            int cls = op_class(l->ops[i]->kind);
            if (cls < 0)
                continue;
            l->keys[nk].cls = cls;
            l->keys[nk].chunk = l->ops[i]->chunk;
            l->keys[nk].mb = l->ops[i]->mb;
            l->keys[nk].op = i;
            nk++;
        }
        l->n_keys = nk;
        /* keys is NULL on a lane without ops: qsort wants a valid array even for none. */
        if (l->n_keys > 1)
            qsort(l->keys, l->n_keys, sizeof(*l->keys), key_cmp);
    }
    return 0;
}

/* The first op of class cls, chunk and mb on lane l (the lowest index when it repeats); -1. */
static long find_op(const struct lane *l, int cls, int chunk, int mb)
{
    size_t lo = 0, hi = l->n_keys;
    struct key want = {cls, chunk, mb, 0};

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (key_cmp(&l->keys[mid], &want) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < l->n_keys && l->keys[lo].cls == cls && l->keys[lo].chunk == chunk &&
        l->keys[lo].mb == mb)
        return (long)l->keys[lo].op;
    return -1;
}

/* Whether cand can come before cur on the path: it starts no later and ends no later, and one
 * of them earlier (so the walk always moves back). */
static int before(const struct pps_span *cand, const struct pps_span *cur)
{
    return cand->start_ns <= cur->start_ns && cand->end_ns <= cur->end_ns &&
           (cand->start_ns < cur->start_ns || cand->end_ns < cur->end_ns);
}

/* The op that produced cur's input on the neighbouring stage, or NULL: in the virtual stage
 * order (the schedule's placement), an F takes the F of k-1, a B or BW the backward of k+1. Its
 * stage and its index there go to *stage and *idx. */
static const struct pps_span *input_of(const struct walk *w, const struct lane *lanes,
                                       const struct pps_span *cur, int *stage, long *idx)
{
    int cls = op_class(cur->kind), k, from, chunk;
    long i;

    if (cls < 0 || cur->chunk < 0 || cur->mb < 0 || cur->stage >= w->p)
        return NULL;
    if (cur->chunk >= w->v)
        return NULL;
    k = pps_place_vstage(w->placement, w->p, cur->stage, cur->chunk);
    from = cls == 0 ? k - 1 : k + 1;
    if (from < 0 || from >= w->p * w->v)
        return NULL;
    *stage = pps_place_stage(w->placement, w->p, from);
    chunk = pps_place_chunk(w->placement, w->p, from);
    if (*stage >= w->rep->n_stages)
        return NULL;
    i = find_op(&lanes[*stage], cls, chunk, cur->mb);
    *idx = i;
    return i >= 0 ? lanes[*stage].ops[i] : NULL;
}

/* The time [a, b) has inside the union of the SEND and RECV spans among spans (sorted by
 * start): a stage's own communication. */
static double covered(const struct pps_span *const *spans, size_t n, int64_t a, int64_t b)
{
    int64_t mark = a;
    double t = 0;

    for (size_t i = 0; i < n && spans[i]->start_ns < b; i++) {
        int64_t s = spans[i]->start_ns > mark ? spans[i]->start_ns : mark;
        int64_t e = spans[i]->end_ns < b ? spans[i]->end_ns : b;
        if (spans[i]->kind == PPS_SPAN_WAIT)
            continue;
        if (e > s) {
            t += (double)(e - s);
            mark = e;
        }
    }
    return t;
}

static double overlap(int64_t a, int64_t b, int64_t c, int64_t d)
{
    int64_t s = a > c ? a : c, e = b < d ? b : d;

    return e > s ? (double)(e - s) : 0.0;
}

/* The message that carried prod's output (on stage ps) to cur: the first SEND on ps to cur's
 * stage for its microbatch after prod began, and the RECV of the same id on cur's stage (without
 * ids, the last one from ps for that microbatch before cur started); and whether cur's stage
 * waited for it (a WAIT of the same id, or from ps for that microbatch, that ends where the
 * receive starts). */
static void find_msg(const struct lane *lanes, const struct pps_span *prod, int ps,
                     const struct pps_span *cur, struct pps_critpath_step *st)
{
    const struct lane *a = &lanes[ps], *b = &lanes[cur->stage];
    const struct pps_span *send = NULL, *recv = NULL;

    for (size_t i = 0; i < a->n_msgs && !send; i++) {
        const struct pps_span *m = a->msgs[i];
        if (m->kind == PPS_SPAN_SEND && m->peer == cur->stage && m->mb == cur->mb &&
            m->start_ns >= prod->start_ns && m->start_ns <= cur->start_ns)
            send = m;
    }
    for (size_t i = 0; i < b->n_msgs; i++) {
        const struct pps_span *m = b->msgs[i];
        if (m->kind != PPS_SPAN_RECV || m->peer != ps || m->mb != cur->mb)
            continue;
        if (send && send->corr > 0 && m->corr > 0) {
            if (m->corr == send->corr) {
                recv = m;
                break;
            }
        } else if (m->end_ns <= cur->start_ns) {
            recv = m;
        }
    }
    for (size_t i = 0; recv && i < b->n_msgs; i++) {
        const struct pps_span *m = b->msgs[i];
        /* The runtime's WAIT ends where its RECV starts; with ids, the same id. */
        if (m->kind == PPS_SPAN_WAIT && m->peer == ps && m->mb == cur->mb &&
            m->end_ns == recv->start_ns &&
            (m->corr <= 0 || recv->corr <= 0 || m->corr == recv->corr))
            st->waited = 1;
    }
    if (send) {
        st->has_send = 1;
        st->send_start_ns = send->start_ns;
        st->send_end_ns = send->end_ns;
    }
    if (recv) {
        st->has_recv = 1;
        st->recv_start_ns = recv->start_ns;
        st->recv_end_ns = recv->end_ns;
    }
}

static void fill_step(struct pps_critpath_step *st, const struct pps_span *sp)
{
    memset(st, 0, sizeof(*st));
    st->stage = sp->stage;
    st->chunk = sp->chunk;
    st->mb = sp->mb;
    st->kind = sp->kind;
    st->start_ns = sp->start_ns;
    st->end_ns = sp->end_ns;
    st->via = PPS_CRITPATH_FIRST;
}

/* Splits the gap between prev's end and st's start into transfer and the rest. */
static void split_gap(const struct walk *w, const struct lane *lanes, const struct pps_span *prev,
                      struct pps_critpath_step *st)
{
    int64_t a = prev->end_ns, b = st->start_ns;
    double gap = b > a ? (double)(b - a) : 0.0, comm = 0;

    if (gap <= 0)
        return;
    if (st->via == PPS_CRITPATH_INPUT && !w->messages) {
        comm = gap;
    } else if (st->via == PPS_CRITPATH_INPUT && st->waited && st->has_send && st->has_recv) {
        /* The receiver was there first: the message was in flight until it arrived. */
        comm = overlap(a, b, st->send_start_ns, st->recv_end_ns);
    } else if (st->via == PPS_CRITPATH_INPUT) {
        /* The receiver came when the message was there: sending and copying it are the
         * transfer; the time it sat waiting is not. */
        if (st->has_send)
            comm += overlap(a, b, st->send_start_ns, st->send_end_ns);
        if (st->has_recv)
            comm += overlap(a, b, st->recv_start_ns, st->recv_end_ns);
        if (st->has_send && st->has_recv)
            comm -= overlap(
                a, b, st->send_start_ns > st->recv_start_ns ? st->send_start_ns : st->recv_start_ns,
                st->send_end_ns < st->recv_end_ns ? st->send_end_ns : st->recv_end_ns);
    } else if (st->via != PPS_CRITPATH_INPUT) {
        /* The stage's own sends and receives between its two ops. */
        const struct lane *l = &lanes[st->stage];
        comm = covered(l->msgs, l->n_msgs, a, b);
    }
    st->comm_ns = comm;
    st->wait_ns = gap - comm;
}

/* The last op of every stage but cur's that can come before it: for an OPT behind a barrier.
 * Its stage and index go to *stage and *idx. */
static const struct pps_span *barrier_of(const struct walk *w, const struct lane *lanes,
                                         const struct pps_span *cur, int *stage, long *idx)
{
    const struct pps_span *best = NULL;

    for (int s = 0; s < w->rep->n_stages; s++) {
        const struct lane *l = &lanes[s];
        if (s == cur->stage)
            continue;
        for (size_t i = l->n_ops; i-- > 0;) {
            const struct pps_span *sp = l->ops[i];
            if (sp->kind == PPS_SPAN_OPT || !before(sp, cur))
                continue;
            if (!best || sp->end_ns > best->end_ns) {
                best = sp;
                *stage = s;
                *idx = (long)i;
            }
            break;
        }
    }
    return best;
}

/* Walks one iteration (its lanes) back from the op that ends last; steps end up in time order. */
static int walk_iter(const struct walk *w, const struct lane *lanes, struct pps_critpath_iter *ci,
                     struct pps_err *err)
{
    const struct pps_span *cur = NULL;
    size_t total = 0, n = 0;
    long cur_i = -1;
    struct pps_critpath_step *steps;

    for (int s = 0; s < w->rep->n_stages; s++) {
        const struct lane *l = &lanes[s];
        total += l->n_ops;
        for (size_t i = 0; i < l->n_ops; i++) {
            const struct pps_span *sp = l->ops[i];
            if (!cur || sp->end_ns > cur->end_ns ||
                (sp->end_ns == cur->end_ns && sp->start_ns > cur->start_ns)) {
                cur = sp;
                cur_i = (long)i;
            }
        }
    }
    if (!cur)
        return 0;
    steps = calloc(total, sizeof(*steps));
    if (!steps)
        return pps_err_set(err, PPS_ENOMEM, "out of memory for the critical path");
    /* Backwards: steps[0] is the last op, each one's via and gap filled when its predecessor is
     * found; reversed at the end. */
    fill_step(&steps[n++], cur);
    while (n < total) {
        const struct lane *l = &lanes[cur->stage];
        const struct pps_span *best = NULL, *c;
        struct pps_critpath_step *st = &steps[n - 1];
        int via = PPS_CRITPATH_FIRST, cs = -1;
        long best_i = -1, cand_i = -1;

        /* The stage's previous op: the nearest before it (a span repeated at the same times
         * is not one). */
        for (long j = cur_i - 1; j >= 0 && !best; j--)
            if (before(l->ops[j], cur)) {
                best = l->ops[j];
                best_i = j;
                via = PPS_CRITPATH_STAGE;
            }
        if ((c = input_of(w, lanes, cur, &cs, &cand_i)) && before(c, cur) &&
            (!best || c->end_ns > best->end_ns)) {
            best = c;
            best_i = cand_i;
            via = PPS_CRITPATH_INPUT;
        }
        if (cur->kind == PPS_SPAN_OPT && w->barrier &&
            (c = barrier_of(w, lanes, cur, &cs, &cand_i)) && (!best || c->end_ns > best->end_ns)) {
            best = c;
            best_i = cand_i;
            via = PPS_CRITPATH_BARRIER;
        }
        if (!best || best_i < 0)
            break;
        st->via = via;
        if (via == PPS_CRITPATH_INPUT && w->messages)
            find_msg(lanes, best, best->stage, cur, st);
        split_gap(w, lanes, best, st);
        fill_step(&steps[n++], best);
        cur = best;
        cur_i = best_i;
    }
    for (size_t i = 0; i < n / 2; i++) {
        struct pps_critpath_step t = steps[i];
        steps[i] = steps[n - 1 - i];
        steps[n - 1 - i] = t;
    }
    ci->steps = steps;
    ci->n_steps = n;
    ci->length_ns = (double)(steps[n - 1].end_ns - steps[0].start_ns);
    for (size_t i = 0; i < n; i++) {
        struct pps_critpath_step *st = &steps[i];
        int64_t end =
            i + 1 < n && steps[i + 1].start_ns < st->end_ns ? steps[i + 1].start_ns : st->end_ns;

        st->on_path_ns = (double)(end - st->start_ns);
        ci->kind_ns[st->kind] += st->on_path_ns;
        if (st->stage >= 0 && st->stage < w->rep->n_stages)
            ci->stage_ns[st->stage] += st->on_path_ns;
        ci->comm_ns += st->comm_ns;
        ci->wait_ns += st->wait_ns;
    }
    return 0;
}

static int length_cmp(const void *a, const void *b)
{
    const double *x = a, *y = b;

    if (x[0] != y[0])
        return x[0] < y[0] ? -1 : 1;
    return (x[1] > y[1]) - (x[1] < y[1]);
}

/* Sums the whole iterations and picks the typical one: the median path length (the lower of
 * two), the earliest iteration among equals. */
static int sum_full(struct pps_critpath *cp, struct pps_err *err)
{
    double *order = malloc((cp->n_iters ? (size_t)cp->n_iters : 1) * 2 * sizeof(double));
    int n = 0;

    if (!order)
        return pps_err_set(err, PPS_ENOMEM, "out of memory for the critical path");
    for (int it = 0; it < cp->n_iters; it++) {
        const struct pps_critpath_iter *ci = &cp->iters[it];
        if (ci->partial || ci->n_steps == 0)
            continue;
        cp->length_ns += ci->length_ns;
        cp->window_ns += ci->window_ns;
        cp->comm_ns += ci->comm_ns;
        cp->wait_ns += ci->wait_ns;
        for (int k = 0; k < PPS_SPAN_KIND_COUNT; k++)
            cp->kind_ns[k] += ci->kind_ns[k];
        for (int s = 0; s < cp->n_stages; s++)
            cp->stage_ns[s] += ci->stage_ns[s];
        order[2 * n] = ci->length_ns;
        order[2 * n + 1] = it;
        n++;
    }
    cp->n_full = n;
    if (n > 0) {
        qsort(order, (size_t)n, 2 * sizeof(double), length_cmp);
        cp->typical = (int)order[2 * ((n - 1) / 2) + 1];
    }
    free(order);
    return 0;
}

int pps_analysis_critpath(const struct pps_run *given, const struct pps_report *rep,
                          struct pps_critpath **out, struct pps_err *err)
{
    struct pps_run *labelled = NULL;
    const struct pps_run *run = given;
    struct pps_critpath *cp = NULL;
    struct stage_view *views = NULL;
    struct lane *lanes = NULL;
    size_t *caps = NULL, ns = 0;
    struct walk w;
    int ret = 0;

    if (out)
        *out = NULL;
    if (!run || !rep || !out) {
        ret = pps_err_set(err, PPS_EINVAL, "no run to analyse");
        goto out;
    }
    ns = rep->n_stages > 0 ? (size_t)rep->n_stages : 0;
    /* The report labels an unlabelled run's spans by the iterations its order shows: the same
     * labels here. */
    if (rep->inferred & PPS_INFERRED_ITERS) {
        ret = pps__analysis_infer_iters(given, &labelled, err);
        if (ret < 0)
            goto out;
        if (labelled)
            run = labelled;
    }
    cp = calloc(1, sizeof(*cp));
    views = calloc(ns ? ns : 1, sizeof(*views));
    lanes = calloc(ns ? ns : 1, sizeof(*lanes));
    caps = calloc(ns ? 3 * ns : 1, sizeof(*caps));
    if (!cp || !views || !lanes || !caps || !(cp->stage_ns = calloc(ns ? ns : 1, sizeof(double)))) {
        ret = pps_err_set(err, PPS_ENOMEM, "out of memory for the critical path");
        goto out;
    }
    cp->n_stages = (int)ns;
    cp->typical = -1;
    cp->p = rep->p > 0 ? rep->p : (int)ns;
    cp->v = rep->v > 0 ? rep->v : 1;
    cp->n_iters = rep->n_iters;
    cp->iters = calloc(rep->n_iters > 0 ? (size_t)rep->n_iters : 1, sizeof(*cp->iters));
    if (!cp->iters) {
        ret = pps_err_set(err, PPS_ENOMEM, "out of memory for the critical path");
        goto out;
    }
    if ((ret = make_views(run, (int)ns, views, &cp->messages, err)) < 0)
        goto out;
    w.rep = rep;
    w.p = cp->p;
    w.v = cp->v;
    w.placement = pps__analysis_placement(run, rep);
    w.barrier = !rep->postval;
    w.messages = cp->messages;
    for (int it = 0; it < rep->n_iters; it++) {
        struct pps_critpath_iter *ci = &cp->iters[it];

        ci->iter = rep->iters[it].iter;
        ci->partial = rep->iters[it].partial;
        ci->t0 = rep->iters[it].t0;
        ci->t1 = rep->iters[it].t1;
        ci->window_ns = rep->iters[it].window_ns;
        ci->stage_ns = calloc(ns ? ns : 1, sizeof(double));
        if (!ci->stage_ns) {
            ret = pps_err_set(err, PPS_ENOMEM, "out of memory for the critical path");
            goto out;
        }
        if ((ret = gather(views, (int)ns, &rep->iters[it], lanes, caps, err)) < 0 ||
            (ret = walk_iter(&w, lanes, ci, err)) < 0)
            goto out;
    }
    if ((ret = sum_full(cp, err)) < 0)
        goto out;
    *out = cp;
    cp = NULL;
out:
    for (size_t s = 0; s < ns; s++) {
        if (lanes) {
            free(lanes[s].ops);
            free(lanes[s].keys);
            free(lanes[s].msgs);
        }
        if (views)
            free(views[s].order);
    }
    free(lanes);
    free(views);
    free(caps);
    pps__analysis_free_copy(labelled);
    pps_critpath_free(cp);
    return ret;
}

void pps_critpath_free(struct pps_critpath *cp)
{
    if (!cp)
        return;
    for (int it = 0; cp->iters && it < cp->n_iters; it++) {
        free(cp->iters[it].stage_ns);
        free(cp->iters[it].steps);
    }
    free(cp->iters);
    free(cp->stage_ns);
    free(cp);
}

void pps_critpath_step_name(const struct pps_critpath *cp, const struct pps_critpath_step *st,
                            char *buf, size_t len)
{
    char mb[16] = "", chunk[16] = "";

    if (st->mb >= 0)
        snprintf(mb, sizeof(mb), "%d", st->mb);
    if (cp->v > 1 && st->chunk >= 0 && st->kind != PPS_SPAN_OPT)
        snprintf(chunk, sizeof(chunk), "c%d", st->chunk);
    snprintf(buf, len, "%s%s%s@s%d", pps_span_kind_name(st->kind), mb, chunk, st->stage);
}

/* Appends text to buf (at *at of len); 0 when it did not fit. */
static int append(char *buf, size_t len, size_t *at, const char *text)
{
    size_t n = strlen(text);

    if (*at + n + 1 > len)
        return 0;
    memcpy(buf + *at, text, n + 1);
    *at += n;
    return 1;
}

void pps_critpath_chain(const struct pps_critpath *cp, int it, char *buf, size_t len)
{
    const struct pps_critpath_iter *ci;
    size_t at = 0;
    int fits = 1;

    if (!buf || len == 0)
        return;
    buf[0] = '\0';
    if (!cp || it < 0 || it >= cp->n_iters)
        return;
    ci = &cp->iters[it];
    for (size_t i = 0; ci->steps && i < ci->n_steps && fits;) {
        const struct pps_critpath_step *st = &ci->steps[i];
        size_t j = i + 1;
        char a[48], b[48], part[128];

        /* The run of steps on this stage. */
        while (j < ci->n_steps && ci->steps[j].stage == st->stage)
            j++;
        if (j - i < 3)
            j = i + 1;
        pps_critpath_step_name(cp, st, a, sizeof(a));
        if (j - i >= 3) {
            const struct pps_critpath_step *e = &ci->steps[j - 1];
            char first[48];

            /* "F0..B7@s2 (16 ops)": the stage said once. */
            snprintf(first, sizeof(first), "%s", a);
            *strchr(first, '@') = '\0';
            pps_critpath_step_name(cp, e, b, sizeof(b));
            snprintf(part, sizeof(part), "%s%s..%s (%zu ops)", i ? " -> " : "", first, b, j - i);
        } else {
            snprintf(part, sizeof(part), "%s%s", i ? " -> " : "", a);
        }
        fits = append(buf, len > 8 ? len - 4 : len, &at, part);
        i = j;
    }
    if (!fits)
        append(buf, len, &at, " ...");
}

const char *pps_critpath_via_name(int via)
{
    switch (via) {
    case PPS_CRITPATH_STAGE:
        return "stage";
    case PPS_CRITPATH_INPUT:
        return "input";
    case PPS_CRITPATH_BARRIER:
        return "barrier";
    default:
        return "first";
    }
}
