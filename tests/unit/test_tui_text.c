/*
 * test_tui_text.c - the view never cuts a text mid-word and never shows a value the trace does
 * not know as if it were one: a selected op with only the fields that apply to it; unknown
 * schedule, p and m as the report words them; the stats table's header and the status line whole
 * at every width; flags whole or counted; the A/B delta of peak activations; long paths
 * shortened from the left. (The help screen: test_tui_help.c.)
 */
#include <sys/stat.h>

#include "test.h"
#include "test_tui_fixture.h"
#include "test_tui_read.h"
#include "tui_int.h"

static char tmp[4096];

static void open_ui(struct pps_tui *ui, const char *a, const char *b)
{
    struct pps_tui_opts o = {1, 0, 0.5, 0, 0, NULL};
    struct pps_err err = {0, ""};

    pps_tui_init(ui, &o);
    CHECK(pps_tui_open(ui, a, b, &err) == 0);
}

static struct pps_span span_of(int kind, int stage, int chunk, int mb, int iter, int64_t t0,
                               int64_t t1)
{
    struct pps_span s;

    memset(&s, 0, sizeof(s));
    s.kind = (uint8_t)kind;
    s.stage = (int16_t)stage;
    s.chunk = (int16_t)chunk;
    s.mb = mb;
    s.iter = iter;
    s.start_ns = t0;
    s.end_ns = t1;
    s.peer = -1;
    s.name_id = -1;
    return s;
}

/*
 * A run as the real runtime writes it, 2 stages, 4 microbatches, iters iterations: each
 * microbatch's F and backward (fused BW, or B and W with zb), a SEND and a RECV of 32 KiB
 * between the stages (no chunk: -1), a WAIT before each receive (no microbatch, no peer), and
 * the optimizer (no chunk, no microbatch) at the end of the iteration.
 */
static const char *runtime_run(const char *name, int zb, int iters)
{
    static char paths[4][4400];
    static int next;
    char *path = paths[next++ % 4];
    struct pps_store_writer *w = NULL;
    struct pps_span sp[512];
    int64_t ms = 1000000, t = 0;

    snprintf(path, 4400, "%s/%s", tmp, name);
    CHECK(pps_store_writer_open(path, 0, &w, NULL) == 0);
    pps_store_writer_meta(w, "schedule", zb ? "zb-h1" : "1f1b", NULL);
    pps_store_writer_meta_int(w, "p", 2, NULL);
    pps_store_writer_meta_int(w, "m", 4, NULL);
    pps_store_writer_meta_int(w, "v", 1, NULL);
    for (int it = 0; it < iters; it++) {
        size_t n = 0;

        for (int s = 0; s < 2; s++) {
            int64_t at = t + s * ms;
            for (int mb = 0; mb < 4; mb++) {
                struct pps_span x;
                if (s == 1) {
                    sp[n++] = span_of(PPS_SPAN_WAIT, s, -1, -1, it, at, at + ms / 10);
                    x = span_of(PPS_SPAN_RECV, s, -1, mb, it, at + ms / 10, at + ms / 5);
                    x.peer = 0;
                    x.bytes = 32768;
                    sp[n++] = x;
                    at += ms / 5;
                }
                sp[n++] = span_of(PPS_SPAN_F, s, 0, mb, it, at, at + ms);
                at += ms;
                if (s == 0) {
                    x = span_of(PPS_SPAN_SEND, s, -1, mb, it, at, at + ms / 20);
                    x.peer = 1;
                    x.bytes = 32768;
                    sp[n++] = x;
                    at += ms / 20;
                }
            }
            for (int mb = 0; mb < 4; mb++) {
                if (zb) {
                    sp[n++] = span_of(PPS_SPAN_B, s, 0, mb, it, at, at + ms);
                    sp[n++] = span_of(PPS_SPAN_W, s, 0, mb, it, at + ms, at + 2 * ms);
                } else {
                    sp[n++] = span_of(PPS_SPAN_BW, s, 0, mb, it, at, at + 2 * ms);
                }
                at += 2 * ms;
            }
            sp[n++] = span_of(PPS_SPAN_OPT, s, -1, -1, it, at, at + ms / 4);
        }
        CHECK(pps_store_writer_spans(w, sp, n, NULL) == 0);
        t += 16 * ms;
    }
    CHECK(pps_store_writer_close(w, 1, NULL) == 0);
    return path;
}

/* ---- the selected op ------------------------------------------------------------------------ */

/* Selects the first span of kind on lane and returns the status line at cols columns. */
static void select_kind(struct pps_tui *ui, int lane, int kind, int cols, char *row, size_t len)
{
    struct pps_tui_frame f;
    const struct pps_tui_index *ix = ui->models[0].index;
    size_t n = pps_tui_index_lane_spans(ix, lane), i;

    for (i = 0; i < n && pps_tui_index_span(ix, lane, i)->kind != kind; i++)
        ;
    CHECK(i < n);
    ui->sel.valid = 1;
    ui->sel.model = 0;
    ui->sel.lane = lane;
    ui->sel.pos = i;
    CHECK(pps_tui_frame_init(&f, cols, 24) == 0);
    pps_tui_draw(ui, &f);
    row_text(&f, ui->layout.status.y, row, len);
    pps_tui_frame_release(&f);
}

/* Every part of row (split at double spaces) is one of full's: nothing is cut. */
static int parts_whole(const char *row, const char *full)
{
    char buf[512];

    snprintf(buf, sizeof(buf), "%s", row);
    for (char *p = buf, *e; *p; p = e) {
        char want[520];
        e = strstr(p, "  ");
        if (e)
            *e = '\0';
        snprintf(want, sizeof(want), "%s%s", p == buf ? "" : "  ", p);
        if (!strstr(full, p == buf ? p : want) && strcmp(p, "0.03 MiB"))
            return 0;
        if (!e)
            break;
        for (e++; *e == ' '; e++)
            ;
    }
    return 1;
}

static void test_selection_shows_only_known_fields(void)
{
    struct pps_tui ui;
    char row[512], full[512];

    open_ui(&ui, runtime_run("sel", 0, 2), NULL);
    select_kind(&ui, 1, PPS_SPAN_RECV, 200, row, sizeof(row));
    CHECK_STARTS(row, "[RECV] stage 1  mb 0  iter 0  start ");
    CHECK_STR_CONTAINS(row, "  peer s0  32768 bytes (0.03 MiB)");
    CHECK(!strstr(row, "chunk") && !strstr(row, "-1"));
    snprintf(full, sizeof(full), "%s", row);
    select_kind(&ui, 0, PPS_SPAN_SEND, 200, row, sizeof(row));
    CHECK_STARTS(row, "[SEND] stage 0  mb 0  iter 0  start ");
    CHECK_STR_CONTAINS(row, "  peer s1  32768 bytes");
    select_kind(&ui, 1, PPS_SPAN_OPT, 200, row, sizeof(row));
    CHECK_STARTS(row, "[OPT] stage 1  iter 0  start ");
    CHECK(!strstr(row, "chunk") && !strstr(row, "mb") && !strstr(row, "-1") &&
          !strstr(row, "peer"));
    select_kind(&ui, 1, PPS_SPAN_WAIT, 200, row, sizeof(row));
    CHECK_STARTS(row, "[WAIT] stage 1  iter 0  start ");
    CHECK(!strstr(row, "-1"));
    /* An op with a chunk keeps it. */
    select_kind(&ui, 0, PPS_SPAN_F, 200, row, sizeof(row));
    CHECK_STARTS(row, "[F] stage 0 chunk 0  mb 0  iter 0  start ");
    /* Narrower: fields drop whole, never cut. */
    for (int cols = PPS_TUI_MIN_COLS; cols < 100; cols++) {
        select_kind(&ui, 1, PPS_SPAN_RECV, cols, row, sizeof(row));
        if (!parts_whole(row, full)) {
            fprintf(stderr, "  at %d columns: '%s'\n  is not made of whole parts of '%s'\n", cols,
                    row, full);
            CHECK(0);
        }
    }
    pps_tui_release(&ui);
}

/* ---- unknown values ------------------------------------------------------------------------- */

static void test_header_unknown_schedule_p_m(void)
{
    struct pps_store_writer *w = NULL;
    struct pps_tui ui;
    struct pps_tui_frame f;
    struct pps_span sp[4];
    struct fx_sim x;
    const char *a, *b;
    char path[4200], row[512];

    /* A run that does not say its schedule, p or m: read from its order, and said so. */
    fx_sim_defaults(&x, PPS_SCHED_1F1B, 4, 8);
    x.no_meta = 1;
    a = fx_sim_run_x(tmp, "nometa", &x, 2);
    open_ui(&ui, a, NULL);
    CHECK_EQ_INT(ui.models[0].rep->p, 4);
    CHECK(ui.models[0].rep->inferred & PPS_INFERRED_P);
    CHECK(pps_tui_frame_init(&f, 100, 30) == 0);
    pps_tui_draw(&ui, &f);
    row_text(&f, 0, row, sizeof(row));
    CHECK_STARTS(row, "ppscope view  1f1b p=4 m=8 v=1  2 iters  bubble ");
    pps_tui_release(&ui);

    /* One that no order tells: stage 1 alone, ops without microbatches. */
    snprintf(path, sizeof(path), "%s/unknown", tmp);
    CHECK(pps_store_writer_open(path, 0, &w, NULL) == 0);
    for (int i = 0; i < 4; i++)
        sp[i] = span_of(i % 2 ? PPS_SPAN_BW : PPS_SPAN_F, 1, -1, -1, -1, i * 1000000,
                        i * 1000000 + 900000);
    CHECK(pps_store_writer_spans(w, sp, 4, NULL) == 0);
    CHECK(pps_store_writer_close(w, 1, NULL) == 0);
    open_ui(&ui, path, NULL);
    CHECK_EQ_INT(ui.models[0].rep->p, 0);
    pps_tui_draw(&ui, &f);
    row_text(&f, 0, row, sizeof(row));
    CHECK_STARTS(row, "ppscope view  schedule unknown p=? m=? v=1  2 iters  bubble ");
    CHECK(!strstr(row, "p=0") && !strstr(row, "m=0") && !strstr(row, "schedule ?"));
    pps_tui_release(&ui);

    /* A/B: the header and the delta table's schedule row say unknown too. */
    b = fx_sim_run(tmp, "known", PPS_SCHED_1F1B, 4, 8, 2);
    open_ui(&ui, path, b);
    pps_tui_draw(&ui, &f);
    row_text(&f, 0, row, sizeof(row));
    CHECK_STR_CONTAINS(row, "(schedule unknown)  vs  B ");
    CHECK_STR_CONTAINS(frame_text(&f), " schedule                  unknown             1f1b");
    pps_tui_frame_release(&f);
    pps_tui_release(&ui);
}

/* A run whose spans carry no iteration: no bubble to show, not 0%. */
static void test_header_no_iterations_bubble_na(void)
{
    struct pps_store_writer *w = NULL;
    struct pps_tui ui;
    struct pps_tui_frame f;
    struct pps_span sp[4];
    char path[4200], row[512];

    snprintf(path, sizeof(path), "%s/noiter", tmp);
    CHECK(pps_store_writer_open(path, 0, &w, NULL) == 0);
    pps_store_writer_meta(w, "schedule", "1f1b", NULL);
    pps_store_writer_meta_int(w, "p", 2, NULL);
    pps_store_writer_meta_int(w, "m", 2, NULL);
    /* Backwards alone: no forward starts an iteration to count them by. */
    for (int i = 0; i < 4; i++)
        sp[i] = span_of(PPS_SPAN_B, i % 2, 0, i / 2, -1, i * 1000000, i * 1000000 + 900000);
    CHECK(pps_store_writer_spans(w, sp, 4, NULL) == 0);
    CHECK(pps_store_writer_close(w, 1, NULL) == 0);
    open_ui(&ui, path, NULL);
    CHECK_EQ_INT(ui.models[0].rep->n_iters, 0);
    CHECK(pps_tui_frame_init(&f, 100, 30) == 0);
    pps_tui_draw(&ui, &f);
    row_text(&f, 0, row, sizeof(row));
    CHECK_STR_CONTAINS(row, "p=2 m=2 v=1  0 iters  bubble n/a  ");
    CHECK(!strstr(row, "0.0%"));
    pps_tui_frame_release(&f);
    pps_tui_release(&ui);
}

/* ---- the stats table ------------------------------------------------------------------------ */

/* The stats pane's table at cols columns: its header whole (every word one the table has, the
 * idle-by-phase columns' where they fit, the unit's note whole or absent) and each stage's row
 * whole (every value, idle and wait). */
static void stats_table_whole(struct pps_tui *ui, int cols, int n_kinds)
{
    static const char *const words[] = {
        "stage", "F",   "B",   "W",          "BW",        "OPT",  "SEND",   "RECV", "idle",
        "wait",  "(ms", "per", "iteration)", "(ms/iter)", "warm", "steady", "cool", "barrier"};
    struct pps_tui_frame f;
    char row[1024];
    int hy = -1;
    const char *h = NULL;

    CHECK(pps_tui_frame_init(&f, cols, 40) == 0);
    pps_tui_draw(ui, &f);
    for (int y = ui->layout.pane.y; y < ui->layout.pane.y + ui->layout.pane.h && hy < 0; y++) {
        row_text(&f, y, row, sizeof(row));
        if ((h = strstr(row, " stage ")) && h == row)
            hy = y;
    }
    if (hy < 0) {
        fprintf(stderr, "  %d columns: no table header in\n%s", cols, frame_text(&f));
        CHECK(0);
    }
    /* Only the pane's part of the row (on wide terminals a side pane follows). */
    cells_text(&f, hy, 0, ui->layout.pane.w, row, sizeof(row));
    {
        char buf[1024], *tok, *save = NULL;
        int n = 0, note = 0;
        snprintf(buf, sizeof(buf), "%s", row);
        for (tok = strtok_r(buf, " ", &save); tok; tok = strtok_r(NULL, " ", &save), n++) {
            int known = 0;
            for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
                known |= !strcmp(tok, words[i]);
            note += !strcmp(tok, "(ms") || !strcmp(tok, "per") || !strcmp(tok, "iteration)");
            if (!known) {
                fprintf(stderr, "  %d columns: the header's '%s' is cut: '%s'\n", cols, tok, row);
                CHECK(0);
            }
        }
        if (note != 0 && note != 3) {
            fprintf(stderr, "  %d columns: the unit's note is cut: '%s'\n", cols, row);
            CHECK(0);
        }
        CHECK(n >= 1 + n_kinds + 2);
    }
    for (int s = 0; s < 2; s++) {
        char buf[1024], *tok, *save = NULL, *last = NULL;
        int n = 0;
        cells_text(&f, hy + 1 + s, 0, ui->layout.pane.w, buf, sizeof(buf));
        snprintf(row, sizeof(row), "%s", buf);
        for (tok = strtok_r(buf, " ", &save); tok; tok = strtok_r(NULL, " ", &save), n++)
            last = tok;
        /* The idle by phase's four columns come whole, or none of them. */
        if ((n != 1 + n_kinds + 2 && n != 1 + n_kinds + 2 + 4) || !last ||
            last[strlen(last) - 1] != '%') {
            fprintf(stderr, "  %d columns: stage %d's row is cut: '%s'\n", cols, s, row);
            CHECK(0);
        }
    }
    pps_tui_frame_release(&f);
}

static void test_stats_header_whole_at_every_width(void)
{
    struct pps_tui ui;
    struct pps_tui_frame f;
    char row[512];

    /* 1f1b as the runtime writes it: F, BW, OPT, SEND, RECV. */
    open_ui(&ui, runtime_run("stats-1f1b", 0, 2), NULL);
    for (int cols = PPS_TUI_MIN_COLS; cols <= 300; cols++)
        stats_table_whole(&ui, cols, 5);
    /* Where it fits, the note as it always was, after the idle by phase where that fits too. */
    CHECK(pps_tui_frame_init(&f, 120, 40) == 0);
    pps_tui_draw(&ui, &f);
    CHECK_STR_CONTAINS(frame_text(&f), " stage        F       BW      OPT     SEND     RECV    idle"
                                       "    wait    warm  steady    cool barrier  (ms per "
                                       "iteration)");
    pps_tui_frame_release(&f);
    CHECK(pps_tui_frame_init(&f, 100, 40) == 0);
    pps_tui_draw(&ui, &f);
    CHECK_STR_CONTAINS(frame_text(&f), " stage        F       BW      OPT     SEND     RECV    idle"
                                       "    wait  (ms per iteration)");
    pps_tui_frame_release(&f);
    CHECK(pps_tui_frame_init(&f, 80, 24) == 0);
    pps_tui_draw(&ui, &f);
    for (int y = 0; y < 24; y++) {
        row_text(&f, y, row, sizeof(row));
        if (!strncmp(row, " stage", 6))
            CHECK(strstr(row, "wait  (ms/iter)") || strstr(row, "wait  (ms per iteration)"));
    }
    pps_tui_frame_release(&f);
    pps_tui_release(&ui);
    /* zb as the runtime writes it: F, B, W, OPT, SEND, RECV. */
    open_ui(&ui, runtime_run("stats-zb", 1, 2), NULL);
    for (int cols = PPS_TUI_MIN_COLS; cols <= 300; cols++)
        stats_table_whole(&ui, cols, 6);
    pps_tui_release(&ui);
}

/* ---- the status line, flags, paths ---------------------------------------------------------- */

/* One part of the status line is whole: it reads as one of the parts the line has. */
static int status_part_whole(const char *p)
{
    char a[64], b[64], c[64], tail[8];
    int i, j, k;
    size_t n;

    if (sscanf(p, "view %63s of %63s%7s", a, b, tail) == 2 && strstr(a, ".."))
        return 1;
    if (sscanf(p, "1 col = %63s%7s", c, tail) == 1 && c[strlen(c) - 1] == 's')
        return 1;
    if (sscanf(p, "iteration %d (%d of %d%7s", &i, &j, &k, tail) == 4 && !strcmp(tail, ")"))
        return 1;
    return sscanf(p, "%zu flag%7s", &n, tail) >= 1 && (strstr(p, " flags") || !strchr(p + 2, 's'));
}

static void test_status_line_parts_whole(void)
{
    struct pps_tui ui;
    struct pps_tui_frame f;
    struct fx_sim x;
    char row[512], msg[200];

    fx_sim_defaults(&x, PPS_SCHED_1F1B, 4, 8);
    x.slow_stage = 3;
    x.slow_mult = 1.5;
    open_ui(&ui, fx_sim_run_x(tmp, "status", &x, 3), NULL);
    CHECK(ui.models[0].flags.n > 0);
    for (int cols = PPS_TUI_MIN_COLS; cols <= 300; cols++) {
        CHECK(pps_tui_frame_init(&f, cols, 40) == 0);
        pps_tui_draw(&ui, &f);
        row_text(&f, ui.layout.status.y, row, sizeof(row));
        if (cols >= 120)
            CHECK_STR_CONTAINS(row, "  iteration 1 (2 of 3)  ");
        for (char *p = row, *e; p; p = e ? e + 2 : NULL) {
            if ((e = strstr(p, "  ")))
                *e = '\0';
            if (!status_part_whole(p)) {
                fprintf(stderr, "  at %d columns the status line's '%s' is cut\n", cols, p);
                CHECK(0);
            }
        }
        pps_tui_frame_release(&f);
    }
    /* A message too long for the line ends at a word, with an ellipsis. */
    CHECK(pps_tui_frame_init(&f, 60, 24) == 0);
    pps__tui_say(&ui, "%s", "no op under the cursor (the centre column of the cursor's lane)");
    pps_tui_draw(&ui, &f);
    row_text(&f, ui.layout.status.y, row, sizeof(row));
    CHECK(strlen(row) <= 60 && strlen(row) > 3 && !strcmp(row + strlen(row) - 3, "..."));
    snprintf(msg, sizeof(msg), "%.*s ", (int)strlen(row) - 3, row);
    CHECK_STR_CONTAINS("no op under the cursor (the centre column of the cursor's lane)", msg);
    pps_tui_frame_release(&f);
    pps_tui_release(&ui);
}

/* The flags in the stats and flags panes: each whole (wrapped), or a line that says how many
 * more there are; never a flag cut short. */
static void test_flags_whole_or_counted(void)
{
    struct pps_tui ui;
    struct pps_tui_frame f;
    struct fx_sim x;
    static const int sizes[][2] = {{80, 24}, {60, 16}, {100, 30}, {200, 60}, {61, 30}};

    fx_sim_defaults(&x, PPS_SCHED_1F1B, 4, 8);
    x.slow_stage = 3;
    x.slow_mult = 1.5;
    x.wait_extra = 0.5;
    open_ui(&ui, fx_sim_run_x(tmp, "flags", &x, 3), NULL);
    CHECK(ui.models[0].flags.n >= 2);
    for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++)
        for (int pane = 0; pane < 2; pane++) {
            static char text[1 << 16];
            struct pps_tui_rect r;
            size_t shown = 0, more = 0;

            CHECK(pps_tui_frame_init(&f, sizes[k][0], sizes[k][1]) == 0);
            ui.pane = pane;
            pps_tui_draw(&ui, &f);
            r = ui.layout.pane;
            text[0] = '\0';
            for (int y = r.y + 1; y < r.y + r.h; y++) {
                char row[512];
                cells_text(&f, y, r.x, r.x + r.w, row, sizeof(row));
                stream_add(text, sizeof(text), row);
                if (strstr(row, " more flag"))
                    more = strtoul(strstr(row, " more flag") - 2, NULL, 10);
            }
            for (size_t i = 0; i < ui.models[0].flags.n; i++) {
                char want[1024] = "", *sp = want;
                stream_add(want, sizeof(want), ui.models[0].flags.items[i].text);
                stream_end(want);
                if (strstr(text, want)) {
                    shown++;
                    continue;
                }
                /* Not whole: then not begun either. */
                for (int w = 0; w < 6 && sp; w++)
                    sp = strchr(sp + 1, ' ');
                if (sp)
                    *sp = '\0';
                if (strstr(text, want)) {
                    fprintf(stderr, "  %dx%d, pane %d: a flag is cut:\n%s\n", sizes[k][0],
                            sizes[k][1], pane, frame_text(&f));
                    CHECK(0);
                }
            }
            /* Where any flag shows, the rest are counted; at 80x24 and larger, some show. */
            if ((shown || more || sizes[k][1] >= 24) && shown + more != ui.models[0].flags.n) {
                fprintf(stderr, "  %dx%d, pane %d: %zu flags whole, %zu counted, of %zu:\n%s\n",
                        sizes[k][0], sizes[k][1], pane, shown, more, ui.models[0].flags.n,
                        frame_text(&f));
                CHECK(0);
            }
            pps_tui_frame_release(&f);
        }
    pps_tui_release(&ui);
}

/* A long path loses its first directories, with an ellipsis, never the run's own name. */
static void test_header_long_path_shortened(void)
{
    struct pps_tui ui;
    struct pps_tui_frame f;
    char name[200], row[512], tail[256];
    const char *a;

    snprintf(name, sizeof(name), "a-rather-long-directory-name-for-runs-%s", "0123456789");
    {
        char dir[4400];
        snprintf(dir, sizeof(dir), "%s/%s", tmp, name);
        CHECK(mkdir(dir, 0700) == 0);
    }
    snprintf(tail, sizeof(tail), "%s/run-7", name);
    a = fx_sim_run(tmp, tail, PPS_SCHED_1F1B, 4, 8, 1);
    open_ui(&ui, a, NULL);
    CHECK(pps_tui_frame_init(&f, 120, 30) == 0);
    pps_tui_draw(&ui, &f);
    row_text(&f, 0, row, sizeof(row));
    snprintf(tail, sizeof(tail), ".../%s/run-7", name);
    CHECK_STR_CONTAINS(row, tail);
    pps_tui_frame_release(&f);
    CHECK(pps_tui_frame_init(&f, 80, 24) == 0);
    pps_tui_draw(&ui, &f);
    row_text(&f, 0, row, sizeof(row));
    CHECK_STR_CONTAINS(row, ".../run-7");
    pps_tui_frame_release(&f);
    pps_tui_release(&ui);

    /* A/B at 120 columns: both runs' names. */
    open_ui(&ui, a, fx_sim_run(tmp, "b-run", PPS_SCHED_ZB_H1, 4, 8, 1));
    CHECK(pps_tui_frame_init(&f, 120, 40) == 0);
    pps_tui_draw(&ui, &f);
    row_text(&f, 0, row, sizeof(row));
    CHECK_STR_CONTAINS(row, "/run-7 (1f1b)  vs  B ");
    CHECK_STR_CONTAINS(row, "/b-run (zb-h1)");
    pps_tui_frame_release(&f);
    pps_tui_release(&ui);
}

/* ---- A/B delta ------------------------------------------------------------------------------ */

/* The delta table's row for what at cols x rows, and the colour of its B - A. */
static void delta_row_of(struct pps_tui *ui, const char *what, int cols, int rows, char *row,
                         size_t len, int *color)
{
    struct pps_tui_frame f;
    int found = 0;

    CHECK(pps_tui_frame_init(&f, cols, rows) == 0);
    ui->pane = PPS_TUI_PANE_DELTA;
    pps_tui_draw(ui, &f);
    for (int y = ui->layout.pane.y; y < ui->layout.pane.y + ui->layout.pane.h && !found; y++) {
        row_text(&f, y, row, len);
        if (!strncmp(row + 1, what, strlen(what))) {
            found = 1;
            *color = cell(&f, (int)strlen(row) - 1, y)->color;
        }
    }
    if (!found)
        fprintf(stderr, "  no '%s' row in\n%s", what, frame_text(&f));
    CHECK(found);
    pps_tui_frame_release(&f);
}

static void test_delta_peak_activations(void)
{
    struct pps_tui ui;
    struct fx_sim x;
    const char *a1, *b2, *an, *bn;
    char row[512];
    int c;

    fx_sim_defaults(&x, PPS_SCHED_1F1B, 4, 8);
    a1 = fx_sim_run_x(tmp, "act-1mib", &x, 2);
    fx_sim_defaults(&x, PPS_SCHED_ZB_H1, 4, 8);
    x.act_bytes = 2 << 20;
    b2 = fx_sim_run_x(tmp, "act-2mib", &x, 2);
    fx_sim_defaults(&x, PPS_SCHED_1F1B, 4, 8);
    x.act_bytes = -1;
    an = fx_sim_run_x(tmp, "act-none-1f1b", &x, 2);
    fx_sim_defaults(&x, PPS_SCHED_GPIPE, 4, 8);
    x.act_bytes = -1;
    bn = fx_sim_run_x(tmp, "act-none-gpipe", &x, 2);

    /* Bytes measured in both: B - A in MiB, worse (more) in the warning colour. */
    open_ui(&ui, a1, b2);
    delta_row_of(&ui, "peak activations", 120, 40, row, sizeof(row), &c);
    CHECK_STR_CONTAINS(row, "1.00 MiB         2.00 MiB +1.00 MiB");
    CHECK_EQ_INT(c, PPS_TUI_C_WARN);
    pps_tui_release(&ui);
    open_ui(&ui, b2, a1);
    delta_row_of(&ui, "peak activations", 120, 40, row, sizeof(row), &c);
    CHECK_STR_CONTAINS(row, "-1.00 MiB");
    CHECK_EQ_INT(c, PPS_TUI_C_GOOD);
    pps_tui_release(&ui);
    /* Neither measured: the predictions' microbatches, GPipe holding all 8 against 1F1B's 4. */
    open_ui(&ui, an, bn);
    delta_row_of(&ui, "peak activations", 120, 40, row, sizeof(row), &c);
    CHECK_STR_CONTAINS(row, "mb (pred.)");
    CHECK(strstr(row, " +") && strstr(strstr(row, " +"), " mb (pred.)"));
    CHECK_EQ_INT(c, PPS_TUI_C_WARN);
    pps_tui_release(&ui);
    /* Bytes against microbatches: no difference to take. */
    open_ui(&ui, a1, bn);
    delta_row_of(&ui, "peak activations", 120, 40, row, sizeof(row), &c);
    CHECK(strlen(row) > 4 && !strcmp(row + strlen(row) - 4, " n/a"));
    CHECK_EQ_INT(c, PPS_TUI_C_DEFAULT);
    pps_tui_release(&ui);
}

/* The delta table at the narrowest width: its sentence wrapped whole, its rows whole. */
static void test_delta_whole_at_60_columns(void)
{
    struct pps_tui ui;
    struct pps_tui_frame f;
    struct fx_sim x;
    static char text[1 << 16];
    char row[512];
    const char *a;
    int c;

    open_ui(&ui, fx_sim_run(tmp, "d-1f1b", PPS_SCHED_1F1B, 4, 8, 3),
            fx_sim_run(tmp, "d-zb", PPS_SCHED_ZB_H1, 4, 8, 3));
    CHECK(pps_tui_frame_init(&f, 60, 40) == 0);
    pps_tui_draw(&ui, &f);
    text[0] = '\0';
    for (int y = ui.layout.pane.y; y < ui.layout.pane.y + ui.layout.pane.h; y++) {
        row_text(&f, y, row, sizeof(row));
        stream_add(text, sizeof(text), row);
    }
    CHECK_STR_CONTAINS(text, "B is 22.2% faster than A: 27.0ms vs 33.0ms per iteration (1.22x)");
    pps_tui_frame_release(&f);
    delta_row_of(&ui, "iteration", 60, 40, row, sizeof(row), &c);
    CHECK_STR_CONTAINS(row, "-6.00ms (-18.2%)");
    CHECK_EQ_INT(c, PPS_TUI_C_GOOD);
    /* idle per iteration, as `ppscope compare` gives it: 9 ms against 3 (its bracket kept where
     * the columns leave room for it) */
    delta_row_of(&ui, "idle stage 3", 60, 40, row, sizeof(row), &c);
    CHECK((strlen(row) > 7 && !strcmp(row + strlen(row) - 7, "-6.00ms")) ||
          strstr(row, " -6.00ms (-66.7%)"));
    CHECK_STR_CONTAINS(row, "9.00ms");
    CHECK_EQ_INT(c, PPS_TUI_C_GOOD);
    delta_row_of(&ui, "bubble", 60, 40, row, sizeof(row), &c);
    CHECK(strlen(row) > 8 && !strcmp(row + strlen(row) - 8, "-16.2 pp"));
    pps_tui_release(&ui);

    /* Without metrics the peaks are the predictions', in microbatches: wider columns, and B - A
     * loses its bracket rather than be cut. */
    fx_sim_defaults(&x, PPS_SCHED_1F1B, 4, 8);
    x.act_bytes = -1;
    a = fx_sim_run_x(tmp, "d-pred-1f1b", &x, 3);
    fx_sim_defaults(&x, PPS_SCHED_ZB_H1, 4, 8);
    x.act_bytes = -1;
    open_ui(&ui, a, fx_sim_run_x(tmp, "d-pred-zb", &x, 3));
    for (int cols = PPS_TUI_MIN_COLS; cols < 100; cols++) {
        delta_row_of(&ui, "iteration", cols, 40, row, sizeof(row), &c);
        CHECK((strstr(row, " -6.00ms") && !strcmp(row + strlen(row) - 2, "ms")) ||
              strstr(row, " -6.00ms (-18.2%)"));
        delta_row_of(&ui, "peak activations", cols, 40, row, sizeof(row), &c);
        CHECK(!strcmp(row + strlen(row) - 3, " mb") ||
              !strcmp(row + strlen(row) - 10, "mb (pred.)"));
    }
    pps_tui_release(&ui);
}

static const struct test_case cases[] = {
    TEST(test_selection_shows_only_known_fields), TEST(test_header_unknown_schedule_p_m),
    TEST(test_header_no_iterations_bubble_na),    TEST(test_stats_header_whole_at_every_width),
    TEST(test_status_line_parts_whole),           TEST(test_flags_whole_or_counted),
    TEST(test_header_long_path_shortened),        TEST(test_delta_peak_activations),
    TEST(test_delta_whole_at_60_columns),         {NULL, NULL},
};

int main(int argc, char **argv)
{
    return fx_test_main_in_tmpdir(cases, argc, argv, tmp, sizeof(tmp));
}
