/*
 * compare.c - run B against run A: the report's figures of both, per stage where their stages
 * match, each with the spread of its per-iteration values, and the flags only one raises; and the
 * regression gates of `ppscope compare --fail-if`. No I/O (compare.h).
 */
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compare.h"

static const char *const figure_names[PPS_CMP_FIGURE_COUNT] = {
    "iter", "window", "bubble", "steady_bubble", "busy", "idle", "wait", "act", "pending_w",
};

const char *pps_compare_figure_name(int figure)
{
    return figure >= 0 && figure < PPS_CMP_FIGURE_COUNT ? figure_names[figure] : NULL;
}

static int is_time(int figure)
{
    return figure == PPS_CMP_ITER || figure == PPS_CMP_WINDOW || figure == PPS_CMP_BUSY ||
           figure == PPS_CMP_IDLE || figure == PPS_CMP_WAIT;
}

static int is_fraction(int figure)
{
    return figure == PPS_CMP_BUBBLE || figure == PPS_CMP_STEADY_BUBBLE;
}

/* Figures that exist only per stage: a gate without [STAGE] takes their worst stage. */
static int stage_only(int figure)
{
    return figure == PPS_CMP_BUSY || figure == PPS_CMP_IDLE || figure == PPS_CMP_WAIT;
}

/* ---- one run's figures, with their spread -------------------------------------------------- */

/* A figure of one run: its value and the standard deviation of its per-iteration values. */
struct fig {
    double value, spread;
};

/* The sample standard deviation of x[first..n-1], the first value left out with three values or
 * more (the first iteration warms up: the report's bubble spread does the same). NaN with fewer
 * than two values counted. */
static double spread_of(const double *x, int n)
{
    int first = n >= 3;
    double mean = 0, m2 = 0;

    if (n - first < 2)
        return NAN;
    for (int i = first; i < n; i++)
        mean += x[i];
    mean /= n - first;
    for (int i = first; i < n; i++)
        m2 += (x[i] - mean) * (x[i] - mean);
    return sqrt(m2 / (n - first - 1));
}

static double mean_of(const double *x, int n)
{
    double s = 0;

    for (int i = 0; i < n; i++)
        s += x[i];
    return n > 0 ? s / n : NAN;
}

/* The whole iterations with a window, in order: those every figure here counts. */
static int full_iters(const struct pps_report *rep, int *idx)
{
    int n = 0;

    for (int it = 0; it < rep->n_iters; it++)
        if (!rep->iters[it].partial && rep->iters[it].window_ns > 0)
            idx[n++] = it;
    return n;
}

/*
 * The run-level time figures. iter is the report's iteration time; its spread is that of the
 * periods from one whole iteration's end to the next's, over the whole iterations up to the first
 * partial one (those the steady period counts), or the windows' with a single iteration.
 */
static void run_times(const struct pps_report *rep, const int *idx, int n, double *x,
                      struct fig *iter, struct fig *window)
{
    int k = 0;

    for (int i = 0; i < n; i++)
        x[i] = rep->iters[idx[i]].window_ns;
    window->value = mean_of(x, n);
    window->spread = spread_of(x, n);
    iter->value = rep->iter_ns;
    iter->spread = window->spread;
    if (n < 2)
        return;
    for (int it = 1; it < rep->n_iters && !rep->iters[it].partial; it++)
        if (!rep->iters[it - 1].partial)
            x[k++] = (double)(rep->iters[it].t1 - rep->iters[it - 1].t1);
    /* Periods have no warm-up to leave out: the first already starts at iteration 0's end. */
    iter->spread = NAN;
    if (k >= 2) {
        double m = mean_of(x, k), m2 = 0;
        for (int i = 0; i < k; i++)
            m2 += (x[i] - m) * (x[i] - m);
        iter->spread = sqrt(m2 / (k - 1));
    }
}

/* Stage s's busy, idle or wait time per whole iteration. */
static struct fig stage_time(const struct pps_report *rep, const int *idx, int n, double *x, int s,
                             int figure)
{
    struct fig f;

    for (int i = 0; i < n; i++) {
        const struct pps_stage_stats *st = &rep->iters[idx[i]].stages[s];
        x[i] = figure == PPS_CMP_BUSY   ? st->compute_ns
               : figure == PPS_CMP_IDLE ? st->idle_ns
                                        : st->wait_ns;
    }
    f.value = mean_of(x, n);
    f.spread = spread_of(x, n);
    return f;
}

/*
 * The peak of a metric (act_bytes or pending_w) of stage s (-1: the largest over the stages)
 * over the run, and the spread of its per-iteration peaks. Metrics come sorted by iteration;
 * negative values are unknown. NaN where the run has none.
 */
static struct fig metric_peak(const struct pps_run *run, int s, int pending, double *x, int cap)
{
    struct fig f = {NAN, NAN};
    int n = 0, cur = INT32_MIN;

    for (size_t i = 0; i < run->n_metrics; i++) {
        const struct pps_metric *mt = &run->metrics[i];
        int64_t v = pending ? mt->pending_w : mt->act_bytes;

        if (mt->stage < 0 || (s >= 0 && mt->stage != s) || v < 0 || mt->iter < 0)
            continue;
        if (mt->iter != cur) {
            if (n == cap)
                break;
            cur = mt->iter;
            x[n++] = (double)v;
        } else if ((double)v > x[n - 1]) {
            x[n - 1] = (double)v;
        }
        if (isnan(f.value) || (double)v > f.value)
            f.value = (double)v;
    }
    f.spread = spread_of(x, n);
    return f;
}

/* The distinct iterations among a run's metrics: room for metric_peak's per-iteration peaks. */
static int metric_iters(const struct pps_run *run)
{
    int n = 0, cur = INT32_MIN;

    for (size_t i = 0; i < run->n_metrics; i++)
        if (run->metrics[i].iter != cur) {
            cur = run->metrics[i].iter;
            n++;
        }
    return n;
}

/* ---- the comparison ------------------------------------------------------------------------ */

static void add_row(struct pps_compare *c, int figure, int stage, struct fig a, struct fig b)
{
    struct pps_cmp_row *r = &c->rows[c->n_rows++];

    r->figure = figure;
    r->stage = stage;
    r->a = a.value;
    r->b = b.value;
    r->spread_a = a.spread;
    r->spread_b = b.spread;
    r->diff = b.value - a.value;
    r->ratio = a.value != 0 ? b.value / a.value : NAN;
    if (isnan(r->diff) || isnan(a.spread) || isnan(b.spread))
        r->beyond = -1;
    else
        r->beyond =
            fabs(r->diff) > PPS_COMPARE_SIGMAS * sqrt(a.spread * a.spread + b.spread * b.spread);
}

static int stages_of(const struct pps_report *rep)
{
    return rep->p > 0 ? rep->p : rep->n_present;
}

/* The same flag: kind, stage and peer (the evidence's numbers may differ). */
static int has_flag(const struct pps_flag_list *l, const struct pps_flag *f)
{
    for (size_t i = 0; l && i < l->n; i++)
        if (l->items[i].kind == f->kind && l->items[i].stage == f->stage &&
            l->items[i].peer == f->peer)
            return 1;
    return 0;
}

static void diff_flags(struct pps_compare *c, const struct pps_flag_list *from,
                       const struct pps_flag_list *other, int in_b)
{
    for (size_t i = 0; from && i < from->n; i++) {
        const struct pps_flag *f = &from->items[i];
        struct pps_cmp_flag *x;

        if (has_flag(other, f)) {
            c->n_flags_common += in_b;
            continue;
        }
        x = &c->flags[c->n_flags++];
        x->in_b = in_b;
        x->kind = f->kind;
        x->stage = f->stage;
        x->peer = f->peer;
        memcpy(x->text, f->text, sizeof(x->text));
    }
}

/* Run-level rows, then stage by stage where the stages match. */
static void fill_rows(struct pps_compare *c, const struct pps_compare_side *sa,
                      const struct pps_compare_side *sb, int *idx_a, int *idx_b, double *x)
{
    const struct pps_report *ra = sa->rep, *rb = sb->rep;
    int na = full_iters(ra, idx_a), nb = full_iters(rb, idx_b);
    struct fig ia, wa, ib, wb;
    struct fig ba = {ra->bubble, ra->bubble_spread}, bb = {rb->bubble, rb->bubble_spread};
    struct fig ta = {ra->steady_bubble, ra->steady_spread};
    struct fig tb = {rb->steady_bubble, rb->steady_spread};
    int cap = metric_iters(sa->run) > metric_iters(sb->run) ? metric_iters(sa->run)
                                                            : metric_iters(sb->run);
    double *y = x + (ra->n_iters > rb->n_iters ? ra->n_iters : rb->n_iters);

    run_times(ra, idx_a, na, x, &ia, &wa);
    run_times(rb, idx_b, nb, x, &ib, &wb);
    add_row(c, PPS_CMP_ITER, -1, ia, ib);
    add_row(c, PPS_CMP_WINDOW, -1, wa, wb);
    add_row(c, PPS_CMP_BUBBLE, -1, ba, bb);
    add_row(c, PPS_CMP_STEADY_BUBBLE, -1, ta, tb);
    for (int pending = 0; pending <= 1; pending++) {
        struct fig ma = metric_peak(sa->run, -1, pending, y, cap);
        struct fig mb = metric_peak(sb->run, -1, pending, y, cap);
        if (!isnan(ma.value) || !isnan(mb.value))
            add_row(c, pending ? PPS_CMP_PENDING_W : PPS_CMP_ACT, -1, ma, mb);
    }
    if (!c->per_stage)
        return;
    for (int s = 0; s < ra->n_stages && s < rb->n_stages; s++) {
        if (!ra->total[s].present || !rb->total[s].present)
            continue;
        for (int fg = PPS_CMP_BUSY; fg <= PPS_CMP_WAIT; fg++)
            add_row(c, fg, s, stage_time(ra, idx_a, na, x, s, fg),
                    stage_time(rb, idx_b, nb, x, s, fg));
        for (int pending = 0; pending <= 1; pending++) {
            struct fig ma = metric_peak(sa->run, s, pending, y, cap);
            struct fig mb = metric_peak(sb->run, s, pending, y, cap);
            if (!isnan(ma.value) || !isnan(mb.value))
                add_row(c, pending ? PPS_CMP_PENDING_W : PPS_CMP_ACT, s, ma, mb);
        }
    }
}

int pps_compare_runs(const struct pps_compare_side *a, const struct pps_compare_side *b,
                     struct pps_compare **out, struct pps_err *err)
{
    struct pps_compare *c = NULL;
    int *idx_a = NULL, *idx_b = NULL, n_stage_max, n_iter_max, cap;
    double *x = NULL;
    size_t n_fl;
    int rc = 0;

    if (!out)
        return pps_err_set(err, PPS_EINVAL, "compare: no place for the result");
    *out = NULL;
    if (!a || !b || !a->run || !a->rep || !b->run || !b->rep)
        return pps_err_set(err, PPS_EINVAL, "compare: a run or its report is missing");
    n_stage_max = a->rep->n_stages > b->rep->n_stages ? a->rep->n_stages : b->rep->n_stages;
    n_iter_max = a->rep->n_iters > b->rep->n_iters ? a->rep->n_iters : b->rep->n_iters;
    cap = metric_iters(a->run) > metric_iters(b->run) ? metric_iters(a->run) : metric_iters(b->run);
    n_fl = (a->flags ? a->flags->n : 0) + (b->flags ? b->flags->n : 0);
    c = calloc(1, sizeof(*c));
    idx_a = malloc(((size_t)n_iter_max + 1) * sizeof(*idx_a));
    idx_b = malloc(((size_t)n_iter_max + 1) * sizeof(*idx_b));
    x = malloc(((size_t)n_iter_max + (size_t)cap + 1) * sizeof(*x));
    if (c) {
        /* 6 run-level rows, 5 per stage. */
        c->rows = calloc(6 + 5 * (size_t)n_stage_max, sizeof(*c->rows));
        c->flags = calloc(n_fl + 1, sizeof(*c->flags));
    }
    if (!c || !idx_a || !idx_b || !x || !c->rows || !c->flags) {
        rc = pps_err_set(err, PPS_ENOMEM, "out of memory comparing two runs");
        goto out;
    }
    c->p_a = stages_of(a->rep);
    c->p_b = stages_of(b->rep);
    c->per_stage = c->p_a == c->p_b && a->rep->n_present == b->rep->n_present;
    if (!c->per_stage)
        snprintf(c->note, sizeof(c->note),
                 "per-stage figures skipped: A has %d stages, B %d; only run-level figures compare",
                 c->p_a, c->p_b);
    fill_rows(c, a, b, idx_a, idx_b, x);
    diff_flags(c, a->flags, b->flags, 0);
    diff_flags(c, b->flags, a->flags, 1);
    *out = c;
    c = NULL;
out:
    pps_compare_free(c);
    free(idx_a);
    free(idx_b);
    free(x);
    return rc;
}

void pps_compare_free(struct pps_compare *cmp)
{
    if (!cmp)
        return;
    free(cmp->rows);
    free(cmp->flags);
    free(cmp);
}

const struct pps_cmp_row *pps_compare_find(const struct pps_compare *cmp, int figure, int stage)
{
    for (int i = 0; cmp && i < cmp->n_rows; i++)
        if (cmp->rows[i].figure == figure && cmp->rows[i].stage == stage)
            return &cmp->rows[i];
    return NULL;
}

/* ---- gates --------------------------------------------------------------------------------- */

/* Units a gate may end with: the factor to the figure's own unit (ns, bytes) and which figures
 * take it. */
static const struct {
    const char *name;
    int unit;
    double factor;
    int kind; /* 0 any figure, 1 fractions, 2 times, 3 bytes, 4 counts */
} units[] = {
    {"%", PPS_GATE_PCT, 1, 0},         {"pp", PPS_GATE_PP, 1, 1},
    {"ns", PPS_GATE_ABS, 1, 2},        {"us", PPS_GATE_ABS, 1e3, 2},
    {"ms", PPS_GATE_ABS, 1e6, 2},      {"s", PPS_GATE_ABS, 1e9, 2},
    {"B", PPS_GATE_ABS, 1, 3},         {"KiB", PPS_GATE_ABS, 1024, 3},
    {"MiB", PPS_GATE_ABS, 1 << 20, 3}, {"GiB", PPS_GATE_ABS, 1 << 30, 3},
    {"", PPS_GATE_ABS, 1, 4},
};

static int unit_fits(int kind, int figure)
{
    switch (kind) {
    case 0:
        return 1;
    case 1:
        return is_fraction(figure);
    case 2:
        return is_time(figure);
    case 3:
        return figure == PPS_CMP_ACT;
    default:
        return figure == PPS_CMP_PENDING_W;
    }
}

static const char *units_of(int figure)
{
    if (is_fraction(figure))
        return "% or pp";
    if (is_time(figure))
        return "%, ns, us, ms or s";
    if (figure == PPS_CMP_ACT)
        return "%, B, KiB, MiB or GiB";
    return "% or none (a count)";
}

int pps_compare_gate_parse(const char *s, struct pps_gate *g, struct pps_err *err)
{
    char buf[64], *p, *end;
    size_t n = 0, len;

    memset(g, 0, sizeof(*g));
    g->figure = -1;
    g->stage = -1;
    if (!s)
        return pps_err_set(err, PPS_EINVAL, "empty --fail-if expression");
    snprintf(g->text, sizeof(g->text), "%s", s);
    /* Spaces mean nothing: "bubble > +2 pp" is "bubble>+2pp". */
    for (const char *q = s; *q; q++) {
        if (isspace((unsigned char)*q))
            continue;
        if (n + 1 >= sizeof(buf))
            return pps_err_set(err, PPS_EINVAL, "--fail-if '%s': too long", s);
        buf[n++] = *q;
    }
    buf[n] = '\0';
    len = strcspn(buf, "[>");
    for (int f = 0; f < PPS_CMP_FIGURE_COUNT; f++)
        if (strlen(figure_names[f]) == len && !strncmp(buf, figure_names[f], len))
            g->figure = f;
    if (g->figure < 0)
        return pps_err_set(err, PPS_EINVAL,
                           "--fail-if '%s': the figure must be one of iter, window, bubble, "
                           "steady_bubble, busy, idle, wait, act, pending_w",
                           s);
    p = buf + len;
    if (*p == '[') {
        long st;
        if (!stage_only(g->figure) && g->figure != PPS_CMP_ACT && g->figure != PPS_CMP_PENDING_W)
            return pps_err_set(err, PPS_EINVAL, "--fail-if '%s': %s is a figure of the whole run",
                               s, figure_names[g->figure]);
        st = strtol(p + 1, &end, 10);
        if (end == p + 1 || *end != ']' || st < 0 || st > 32767)
            return pps_err_set(err, PPS_EINVAL, "--fail-if '%s': [STAGE] takes a stage number", s);
        g->stage = (int)st;
        p = end + 1;
    }
    if (*p != '>')
        return pps_err_set(err, PPS_EINVAL,
                           "--fail-if '%s': expected FIGURE[STAGE]>THRESHOLD, e.g. bubble>+2pp", s);
    p++;
    g->threshold = strtod(p, &end);
    if (end == p || !isfinite(g->threshold) || isalpha((unsigned char)*p))
        return pps_err_set(err, PPS_EINVAL, "--fail-if '%s': the threshold must be a number", s);
    for (size_t u = 0; u < sizeof(units) / sizeof(units[0]); u++)
        if (!strcmp(end, units[u].name) && unit_fits(units[u].kind, g->figure)) {
            g->unit = units[u].unit;
            g->threshold *= units[u].factor;
            return 0;
        }
    return pps_err_set(err, PPS_EINVAL, "--fail-if '%s': %s takes the units %s, not '%s'", s,
                       figure_names[g->figure], units_of(g->figure), end);
}

/* A row's change in the gate's unit; NaN where it has none. */
static double change_of(const struct pps_cmp_row *r, int unit)
{
    if (isnan(r->a) || isnan(r->b))
        return NAN;
    if (unit == PPS_GATE_PP)
        return 100 * r->diff;
    if (unit == PPS_GATE_ABS)
        return r->diff;
    if (r->a != 0)
        return 100 * r->diff / r->a;
    /* From nothing to something is an increase beyond any percentage. */
    return r->diff > 0 ? INFINITY : 0;
}

int pps_compare_gate_check(const struct pps_compare *cmp, const struct pps_gate *g, double *change,
                           int *stage, struct pps_err *err)
{
    const char *name = pps_compare_figure_name(g->figure);
    double worst = NAN;
    int worst_stage = -1;

    *change = NAN;
    *stage = -1;
    if (g->stage >= 0 || stage_only(g->figure)) {
        int seen = 0;
        if (!cmp->per_stage)
            return pps_err_set(err, PPS_EINVAL,
                               "--fail-if '%s': cannot be judged: A has %d stages, B %d", g->text,
                               cmp->p_a, cmp->p_b);
        for (int i = 0; i < cmp->n_rows; i++) {
            const struct pps_cmp_row *r = &cmp->rows[i];
            double ch;
            if (r->figure != g->figure || r->stage < 0 || (g->stage >= 0 && r->stage != g->stage))
                continue;
            seen = 1;
            ch = change_of(r, g->unit);
            if (isnan(ch))
                return pps_err_set(err, PPS_EINVAL,
                                   "--fail-if '%s': cannot be judged: stage %d's %s is not in "
                                   "both runs",
                                   g->text, r->stage, name);
            if (isnan(worst) || ch > worst) {
                worst = ch;
                worst_stage = r->stage;
            }
        }
        if (!seen && g->stage >= 0)
            return pps_err_set(err, PPS_EINVAL,
                               "--fail-if '%s': cannot be judged: no %s of stage %d in both runs",
                               g->text, name, g->stage);
        if (!seen)
            return pps_err_set(err, PPS_EINVAL,
                               "--fail-if '%s': cannot be judged: no stage has its %s in both runs",
                               g->text, name);
    } else {
        const struct pps_cmp_row *r = pps_compare_find(cmp, g->figure, -1);
        worst = r ? change_of(r, g->unit) : NAN;
        if (isnan(worst))
            return pps_err_set(err, PPS_EINVAL,
                               "--fail-if '%s': cannot be judged: the %s is not in both runs",
                               g->text, name);
    }
    *change = worst;
    *stage = worst_stage;
    return worst > g->threshold;
}
