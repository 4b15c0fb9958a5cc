/*
 * text_read.c - a schedule from text: PyTorch pipelining's pipeline-order CSV or ppscope's grid
 * (schedule.h), keeping where each action stood so that a fault is said in the file's terms
 * (text_fault.c).
 *
 * Both go the same way: the text is cut into rows of cells (a copy, cut in place), each cell
 * read as zero or more raw actions, then p, m, v and the placement taken from what the rows hold
 * and the schedule filled rank by rank. Nothing here checks the schedule itself: the validator
 * does, on the result.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "pps_grow.h"

/* One action as the text says it, before p, v and the placement are known. */
struct raw {
    long vs;   /* CSV: the virtual stage; grid: the chunk */
    char type; /* 'F', 'I' (input gradient), 'W', 'B' (CSV: full or input, resolved later),
                  'X' (full backward, BW) */
    long mb;
    size_t cell; /* index into src->cell */
};

struct reader {
    struct pps_sched_text *src;
    size_t n_cells, cap_cells;
    size_t cap_rows, cap_lines;
    struct raw *raw;
    size_t n_raw, cap_raw;
    size_t *raw_row; /* n_rows + 1 offsets into raw */
    size_t cap_raw_row;
    struct pps_err *err;
};

static int oom(struct reader *r)
{
    return pps_err_set(r->err, PPS_ENOMEM, "out of memory reading the schedule");
}

static int add_cell(struct reader *r, const char *text)
{
    struct pps_sched_text *src = r->src;

    if (pps_grow((void **)&src->cell, &r->cap_cells, r->n_cells + 1, sizeof(*src->cell)))
        return oom(r);
    src->cell[r->n_cells++] = text;
    return 0;
}

static int add_row(struct reader *r, int line)
{
    struct pps_sched_text *src = r->src;

    if (pps_grow((void **)&src->row, &r->cap_rows, (size_t)src->n_rows + 2, sizeof(*src->row)) ||
        pps_grow((void **)&src->line, &r->cap_lines, (size_t)src->n_rows + 2, sizeof(*src->line)) ||
        pps_grow((void **)&r->raw_row, &r->cap_raw_row, (size_t)src->n_rows + 2, sizeof(size_t)))
        return oom(r);
    src->row[src->n_rows] = r->n_cells;
    src->line[src->n_rows] = line;
    r->raw_row[src->n_rows] = r->n_raw;
    src->n_rows++;
    return 0;
}

static int add_raw(struct reader *r, long vs, char type, long mb)
{
    if (pps_grow((void **)&r->raw, &r->cap_raw, r->n_raw + 1, sizeof(*r->raw)))
        return oom(r);
    r->raw[r->n_raw++] = (struct raw){vs, type, mb, r->n_cells - 1};
    return 0;
}

/* The row, rank (or stage) and step of the cell being read, for an error. */
static int bad_cell(struct reader *r, const char *what, const char *cell, const char *expect)
{
    struct pps_sched_text *src = r->src;
    int row = src->n_rows - 1;

    return pps_err_set(r->err, PPS_EFORMAT, "line %d, %s %d, step %zu: '%.40s' %s (%s)",
                       src->line[row], src->syntax == PPS_SYNTAX_CSV ? "rank" : "stage", row,
                       r->n_cells - 1 - src->row[row], cell, what, expect);
}

#define TOO_LARGE "has a number of more than 9 digits"

static char *trim(char *s, char *end)
{
    while (s < end && (*s == ' ' || *s == '\t'))
        s++;
    while (end > s && (end[-1] == ' ' || end[-1] == '\t'))
        end--;
    *end = '\0';
    return s;
}

/* A count of at most 9 digits at *s (so that it fits every index), moving *s past it: 0, -1
 * where there is none, -2 where it has more digits. */
static int read_count(const char **s, long *out)
{
    long x = 0;
    int n = 0;

    while (**s >= '0' && **s <= '9') {
        if (++n > 9)
            return -2;
        x = x * 10 + (**s - '0');
        (*s)++;
    }
    *out = x;
    return n ? 0 : -1;
}

/* ---- PyTorch's pipeline-order CSV -------------------------------------------------------- */

/* PyTorch's actions that move data, not compute: a "compute_comms" dump has them. */
static const char *const comm_types[] = {
    "SEND_F",      "RECV_F",           "SEND_B",  "RECV_B",  "WAIT_SEND_F", "WAIT_SEND_B",
    "REDUCE_GRAD", "WAIT_REDUCE_GRAD", "UNSHARD", "RESHARD", NULL};

#define CSV_EXPECT                                                                                 \
    "read as a pipeline-order CSV: STAGE TYPE MICROBATCH, 0F0, 1I3, 2W1, 3B0, or empty"

/* One action "1I3" at s (the whole of it); comm actions counted and left out. */
static int csv_action(struct reader *r, const char *s, const char *cell)
{
    long vs, mb;
    char type;
    int rc;

    if ((rc = read_count(&s, &vs)))
        return bad_cell(r, rc == -2 ? TOO_LARGE : "is not an action", cell, CSV_EXPECT);
    for (int k = 0; comm_types[k]; k++) {
        size_t n = strlen(comm_types[k]);
        if (!strncmp(s, comm_types[k], n)) {
            s += n;
            if (*s && (read_count(&s, &mb) || *s))
                return bad_cell(r, "is not an action", cell, CSV_EXPECT);
            r->src->skipped++;
            return 0;
        }
    }
    if (s[0] == 'B' && s[1] == 'W') {
        type = 'X'; /* the releases before I: BW, the full backward */
        s += 2;
    } else if (*s == 'F' || *s == 'I' || *s == 'W' || *s == 'B') {
        type = *s++;
    } else {
        return bad_cell(r, "is not an action", cell, CSV_EXPECT);
    }
    if ((rc = read_count(&s, &mb)))
        return bad_cell(r, rc == -2 ? TOO_LARGE : "has no microbatch", cell, CSV_EXPECT);
    if (*s)
        return bad_cell(r, "is not an action", cell, CSV_EXPECT);
    return add_raw(r, vs, type, mb);
}

/* A cell: empty, one action, or "(a;b;...)OVERLAP_F_B", its actions in order. */
static int csv_cell(struct reader *r, char *cell)
{
    if (!*cell)
        return 0;
    if (*cell == '(') {
        char *close = strchr(cell, ')');
        char buf[128];
        const char *what;

        if (!close || strcmp(close + 1, "OVERLAP_F_B"))
            return bad_cell(r, "is not an overlapped pair", cell,
                            "(0F7;7B3)OVERLAP_F_B, its actions run in order");
        r->src->overlapped++;
        for (char *a = cell + 1; a < close;) {
            char *semi = memchr(a, ';', (size_t)(close - a));
            char *end = semi ? semi : close;
            size_t n = (size_t)(end - a);
            int rc;

            if (n >= sizeof(buf))
                return bad_cell(r, "is not an action", cell, CSV_EXPECT);
            memcpy(buf, a, n);
            buf[n] = '\0';
            what = trim(buf, buf + n);
            if (*what && (rc = csv_action(r, what, cell)))
                return rc;
            a = end + 1;
        }
        return 0;
    }
    return csv_action(r, cell, cell);
}

/*
 * Cuts line [s, end) into cells as Python's csv reader does: fields split at commas, a field in
 * double quotes may hold commas, and "" in it is one quote. Each cell trimmed.
 */
static int csv_line(struct reader *r, char *s, char *end)
{
    for (;;) {
        char *start = s, *w = s, *cell;
        int rc;

        while (s < end && (*s == ' ' || *s == '\t'))
            s++;
        if (s < end && *s == '"') {
            start = w = s++;
            while (s < end) {
                if (*s == '"' && s + 1 < end && s[1] == '"') {
                    *w++ = '"';
                    s += 2;
                } else if (*s == '"') {
                    s++;
                    break;
                } else {
                    *w++ = *s++;
                }
            }
            while (s < end && *s != ',')
                s++; /* what follows a closing quote, as csv does: kept out */
        } else {
            while (s < end && *s != ',')
                s++;
            w = s;
        }
        int last = s >= end;
        cell = trim(start, w);
        if ((rc = add_cell(r, cell)) || (rc = csv_cell(r, cell)))
            return rc;
        if (last)
            return 0;
        s++;
    }
}

/* ---- ppscope's grid ---------------------------------------------------------------------- */

#define GRID_EXPECT "read as a grid: F3, B3, W3, BW3; F3.1 for chunk 1"

static int grid_token(struct reader *r, const char *tok)
{
    const char *s = tok;
    long mb, chunk = 0;
    char type;
    int rc;

    if (s[0] == 'B' && s[1] == 'W') {
        type = 'X';
        s += 2;
    } else if (*s == 'F' || *s == 'B' || *s == 'W') {
        type = *s == 'B' ? 'I' : *s;
        s++;
    } else {
        return bad_cell(r, "is not an action", tok, GRID_EXPECT);
    }
    if ((rc = read_count(&s, &mb)))
        return bad_cell(r, rc == -2 ? TOO_LARGE : "has no microbatch", tok, GRID_EXPECT);
    if (*s == '.') {
        s++;
        if ((rc = read_count(&s, &chunk)))
            return bad_cell(r, rc == -2 ? TOO_LARGE : "has no chunk after its '.'", tok,
                            GRID_EXPECT);
    }
    if (*s)
        return bad_cell(r, "is not an action", tok, GRID_EXPECT);
    return add_raw(r, chunk, type, mb);
}

/* Whether line s (trimmed) starts a stage's row "s12:" or "s12  :"; *rest after the colon. */
static int grid_row_start(char *s, long *stage, char **rest)
{
    const char *p = s + 1;

    if (*s != 's' || read_count(&p, stage))
        return 0;
    while (*p == ' ' || *p == '\t')
        p++;
    if (*p != ':')
        return 0;
    *rest = (char *)p + 1;
    return 1;
}

static int grid_line(struct reader *r, char *s, int line, int *placement)
{
    long stage;
    char *rest;
    int rc;

    if (!*s || *s == '#' || !strcmp(s, "actions:"))
        return 0;
    if (!strncmp(s, "placement:", 10)) {
        char *name = trim(s + 10, s + strlen(s));

        if ((*placement = pps_placement_parse(name)) < 0)
            return pps_err_set(r->err, PPS_EFORMAT,
                               "line %d: placement '%.40s' (loop or v: stage s holds s and "
                               "2p-1-s)",
                               line, name);
        return 0;
    }
    if (!grid_row_start(s, &stage, &rest))
        return pps_err_set(r->err, PPS_EFORMAT,
                           "line %d: '%.40s' is no stage's row (s0: F0 F1 B0 W0 ...), "
                           "'placement: v' or a # comment",
                           line, s);
    if (stage != r->src->n_rows)
        return pps_err_set(r->err, PPS_EFORMAT,
                           "line %d: s%ld where s%d comes next (rows go s0, s1, ... in order)",
                           line, stage, r->src->n_rows);
    if ((rc = add_row(r, line)))
        return rc;
    for (char *tok = rest;;) {
        char *end;

        while (*tok == ' ' || *tok == '\t')
            tok++;
        if (!*tok)
            return 0;
        end = tok;
        while (*end && *end != ' ' && *end != '\t')
            end++;
        int last = !*end;
        *end = '\0';
        if (end - tok >= 2 && tok[0] == '[' && end[-1] == ']') { /* marked, as a fault prints it */
            end[-1] = '\0';
            tok++;
        }
        if ((rc = add_cell(r, tok)) || (rc = grid_token(r, tok)))
            return rc;
        if (last)
            return 0;
        tok = end + 1;
    }
}

/* ---- rows to a schedule ------------------------------------------------------------------ */

/* The length of a UTF-8 byte order mark at the start of text (an editor's, before the first
 * cell), or 0. */
static size_t bom(const char *text, size_t len)
{
    return len >= 3 && !memcmp(text, "\xef\xbb\xbf", 3) ? 3 : 0;
}

/* The end of the line that starts at s (before end): its first '\n' or '\r'; *next where the
 * next line starts ("\r\n" is one end), NULL after the last. */
static char *line_end(char *s, char *end, char **next)
{
    char *e = s;

    while (e < end && *e != '\n' && *e != '\r')
        e++;
    *next = e >= end ? NULL : e + 1 + (e[0] == '\r' && e + 1 < end && e[1] == '\n');
    return e;
}

/* Whether the first line that says something is the grid's. */
static int looks_like_grid(const char *text, size_t len)
{
    const char *s = text + bom(text, len), *end = text + len;

    while (s && s < end) {
        char line[64], *t, *rest, *next;
        const char *e = line_end((char *)s, (char *)end, &next);
        size_t n = (size_t)(e - s) < sizeof(line) - 1 ? (size_t)(e - s) : sizeof(line) - 1;
        long stage;

        memcpy(line, s, n);
        t = trim(line, line + n);
        if (*t)
            return t[0] == '#' || !strncmp(t, "actions:", 8) || !strncmp(t, "placement:", 10) ||
                   grid_row_start(t, &stage, &rest);
        s = next;
    }
    return 0;
}

/* The chunk of CSV action a (virtual stage a->vs) on rank r under placement, or -1. */
static long csv_chunk(const struct raw *a, int placement, int p, int r)
{
    if (placement == PPS_PLACE_LOOP)
        return a->vs % p == r ? a->vs / p : -1;
    return a->vs == r ? 0 : a->vs == 2L * p - 1 - r ? 1 : -1;
}

/* The raw action at index i, on row row, said for an error: its line, rank and step, its cell
 * and what is wrong with it. */
static int bad_raw(struct reader *r, size_t i, int row, const char *what)
{
    const struct pps_sched_text *src = r->src;
    const struct raw *x = &r->raw[i];

    return pps_err_set(r->err, PPS_EFORMAT, "line %d, %s %d, step %zu: %s %s", src->line[row],
                       src->syntax == PPS_SYNTAX_CSV ? "rank" : "stage", row,
                       x->cell - src->row[row], src->cell[x->cell], what);
}

/* The row raw action i is on. */
static int row_of(const struct reader *r, size_t i)
{
    int lo = 0, hi = r->src->n_rows - 1; /* raw_row[lo] <= i < raw_row[hi + 1] */

    while (lo < hi) {
        int mid = lo + (hi - lo + 1) / 2;

        if (r->raw_row[mid] <= i)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

/* p, v, m and the placement from the rows; each action's chunk into raw[].vs. */
static int shape(struct reader *r, int grid_placement, struct pps_schedule *out)
{
    struct pps_sched_text *src = r->src;
    int p = src->n_rows, placement = PPS_PLACE_LOOP;
    long max_vs = 0, max_mb = -1, v;

    if (p < 1)
        return pps_err_set(r->err, PPS_EFORMAT, "no %s: the text holds no schedule",
                           src->syntax == PPS_SYNTAX_CSV ? "rows" : "stage rows (s0: F0 ...)");
    if (p > MAX_P)
        return pps_err_set(r->err, PPS_EFORMAT, "%d %s, more than the %d ppscope runs", p,
                           src->syntax == PPS_SYNTAX_CSV ? "ranks" : "stages", MAX_P);
    for (size_t i = 0; i < r->n_raw; i++) {
        if (r->raw[i].vs > max_vs)
            max_vs = r->raw[i].vs;
        if (r->raw[i].mb > max_mb)
            max_mb = r->raw[i].mb;
    }
    if (max_mb < 0)
        return pps_err_set(r->err, PPS_EFORMAT, "no action in any row: the text holds no schedule");
    if (src->syntax == PPS_SYNTAX_GRID) {
        placement = grid_placement;
        v = max_vs + 1;
        if (placement == PPS_PLACE_V) {
            for (size_t i = 0; i < r->n_raw; i++)
                if (r->raw[i].vs > 1)
                    return bad_raw(r, i, row_of(r, i),
                                   "is of chunk 2 or more: the V placement holds chunks 0 and 1");
            v = 2;
        }
    } else {
        if ((max_vs + 1) % p)
            return pps_err_set(r->err, PPS_EFORMAT,
                               "the cells run virtual stages 0..%ld: %ld stages, not a multiple "
                               "of the %d ranks (rows)",
                               max_vs, max_vs + 1, p);
        v = (max_vs + 1) / p;
        /* A loop where every action fits one, else V where every action fits that: the first
         * action each does not hold, found in one pass. */
        size_t no_loop = r->n_raw, no_v = v == 2 ? r->n_raw : 0, neither = r->n_raw;
        int row = 0;

        for (size_t i = 0; i < r->n_raw; i++) {
            int in_loop, in_v;

            while (r->raw_row[row + 1] <= i)
                row++;
            in_loop = csv_chunk(&r->raw[i], PPS_PLACE_LOOP, p, row) >= 0;
            in_v = v == 2 && csv_chunk(&r->raw[i], PPS_PLACE_V, p, row) >= 0;
            if (!in_loop && no_loop == r->n_raw)
                no_loop = i;
            if (!in_v && no_v == r->n_raw)
                no_v = i;
            if (!in_loop && !in_v && neither == r->n_raw)
                neither = i;
        }
        if (no_loop < r->n_raw && no_v < r->n_raw) {
            char what[200];
            size_t i = neither < r->n_raw ? neither : no_loop;

            row = row_of(r, i);
            if (neither == r->n_raw) /* each fits one placement, none fits all */
                snprintf(what, sizeof(what),
                         "is virtual stage %ld, where only a V puts it, and line %d's %.20s "
                         "(rank %d) is where only a loop puts it: one placement holds all",
                         r->raw[i].vs, src->line[row_of(r, no_v)], src->cell[r->raw[no_v].cell],
                         row_of(r, no_v));
            else if (v == 2)
                snprintf(what, sizeof(what),
                         "is virtual stage %ld, which neither a loop (rank %ld: stage %% "
                         "ranks) nor a V (rank %d holds %d and %ld) puts on rank %d",
                         r->raw[i].vs, r->raw[i].vs % p, row, row, 2L * p - 1 - row, row);
            else
                snprintf(what, sizeof(what),
                         "is virtual stage %ld, which a loop puts on rank %ld (stage %% "
                         "ranks), not on rank %d",
                         r->raw[i].vs, r->raw[i].vs % p, row);
            return bad_raw(r, i, row, what);
        }
        placement = no_loop == r->n_raw ? PPS_PLACE_LOOP : PPS_PLACE_V;
    }
    if (v > MAX_V || max_mb + 1 > MAX_M || (long)p * v * (max_mb + 1) > MAX_CELLS)
        return pps_err_set(r->err, PPS_EFORMAT,
                           "p=%d, v=%ld, m=%ld: more than the %ld microbatch-stage pairs (v at "
                           "most %d, m %d) ppscope schedules",
                           p, v, max_mb + 1, MAX_CELLS, MAX_V, MAX_M);
    out->p = p;
    out->v = (int)v;
    out->m = (int)(max_mb + 1);
    out->placement = placement;
    if (src->syntax == PPS_SYNTAX_CSV)
        for (int row = 0; row < p; row++)
            for (size_t i = r->raw_row[row]; i < r->raw_row[row + 1]; i++)
                r->raw[i].vs = csv_chunk(&r->raw[i], placement, p, row);
    return 0;
}

/* The schedule from the raw actions, shaped: a CSV 'B' is ours B where its microbatch has a W on
 * its stage and chunk (the releases before I), BW where not. */
static int fill(struct reader *r, struct pps_schedule *out)
{
    struct pps_schedule s = PPS_SCHEDULE_INIT;
    unsigned char *has_w = NULL;
    size_t slots = (size_t)out->v * (size_t)out->m;

    if (pps_schedule_alloc(&s, out->p, out->m, out->v, r->n_raw) ||
        !(r->src->at = malloc((r->n_raw ? r->n_raw : 1) * sizeof(size_t))) ||
        !(has_w = calloc(slots, 1))) {
        pps_schedule_release(&s);
        return oom(r);
    }
    s.placement = out->placement;
    for (int row = 0; row < out->p; row++) {
        for (size_t i = r->raw_row[row]; i < r->raw_row[row + 1]; i++)
            if (r->raw[i].type == 'W')
                has_w[(size_t)r->raw[i].vs * (size_t)out->m + (size_t)r->raw[i].mb] = 1;
        for (size_t i = r->raw_row[row]; i < r->raw_row[row + 1]; i++) {
            const struct raw *x = &r->raw[i];
            struct pps_action *a = &s.actions[i];

            a->op = x->type == 'F'                                          ? PPS_OP_F
                    : x->type == 'I'                                        ? PPS_OP_B
                    : x->type == 'W'                                        ? PPS_OP_W
                    : x->type == 'X'                                        ? PPS_OP_BW
                    : has_w[(size_t)x->vs * (size_t)out->m + (size_t)x->mb] ? PPS_OP_B
                                                                            : PPS_OP_BW;
            a->chunk = (uint16_t)x->vs;
            a->mb = (uint32_t)x->mb;
            r->src->at[i] = x->cell;
        }
        for (size_t i = r->raw_row[row]; i < r->raw_row[row + 1]; i++)
            if (r->raw[i].type == 'W')
                has_w[(size_t)r->raw[i].vs * (size_t)out->m + (size_t)r->raw[i].mb] = 0;
        s.start[row + 1] = r->raw_row[row + 1];
    }
    free(has_w);
    *out = s;
    return 0;
}

int pps_schedule_read(struct pps_schedule *out, struct pps_sched_text *src, const char *text,
                      size_t len, int syntax, struct pps_err *err)
{
    struct pps_sched_text own = PPS_SCHED_TEXT_INIT;
    struct reader r = {0};
    int rc = 0, line = 0, placement = PPS_PLACE_LOOP;
    char *s, *end;

    *out = (struct pps_schedule)PPS_SCHEDULE_INIT;
    if (!src)
        src = &own;
    *src = (struct pps_sched_text)PPS_SCHED_TEXT_INIT;
    r.src = src;
    r.err = err;
    if (syntax == PPS_SYNTAX_AUTO)
        syntax = looks_like_grid(text, len) ? PPS_SYNTAX_GRID : PPS_SYNTAX_CSV;
    src->syntax = syntax;
    if (!(src->buf = malloc(len + 1))) {
        rc = oom(&r);
        goto out;
    }
    memcpy(src->buf, text, len);
    src->buf[len] = '\0';
    if (memchr(src->buf, '\0', len)) {
        rc = pps_err_set(err, PPS_EFORMAT, "a NUL byte: the text is no schedule (binary?)");
        goto out;
    }
    /* Lines end in "\n", "\r\n" or "\r", as Python's csv reads them; CSV's blank lines at the
     * end are no ranks. */
    end = src->buf + len;
    while (end > src->buf &&
           (end[-1] == '\n' || end[-1] == '\r' || end[-1] == ' ' || end[-1] == '\t'))
        end--;
    *end = '\0';
    if (end == src->buf) {
        rc = pps_err_set(err, PPS_EFORMAT, "the text is empty: no schedule");
        goto out;
    }
    for (s = src->buf + bom(src->buf, len); !rc && s <= end;) {
        char *next, *e = line_end(s, end, &next);

        line++;
        *e = '\0';
        if (syntax == PPS_SYNTAX_CSV) {
            if (!(rc = add_row(&r, line)))
                rc = csv_line(&r, s, e);
        } else {
            rc = grid_line(&r, trim(s, e), line, &placement);
        }
        if (!next)
            break;
        s = next;
    }
    if (!rc && src->n_rows > 0) {
        /* The ends of the last row (add_row keeps room for them). */
        src->row[src->n_rows] = r.n_cells;
        r.raw_row[src->n_rows] = r.n_raw;
    }
    if (!rc)
        rc = shape(&r, placement, out);
    if (!rc)
        rc = fill(&r, out);
out:
    free(r.raw);
    free(r.raw_row);
    if (rc || src == &own)
        pps_sched_text_release(src);
    if (rc)
        pps_schedule_release(out);
    return rc;
}

void pps_sched_text_release(struct pps_sched_text *src)
{
    free(src->buf);
    free(src->cell);
    free(src->row);
    free(src->line);
    free(src->at);
    *src = (struct pps_sched_text)PPS_SCHED_TEXT_INIT;
}
