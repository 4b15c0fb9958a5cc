/*
 * test_tui_layout.c - the view's layout over every terminal size from 1x1 to 300x100: inside
 * the screen, no overlap, minimums kept, "too small" exactly below the minimum, and what each
 * part gets as the terminal grows.
 */
#include "test.h"
#include "tui_core.h"

struct lanes_case {
    int a, b, label_w;
};

static const struct lanes_case lane_cases[] = {
    {1, 0, 4}, {4, 0, 4},   {8, 0, 6}, {16, 0, 5}, {32, 0, 7},
    {4, 4, 6}, {16, 16, 8}, {2, 3, 6}, {0, 0, 4},  {64, 64, 9},
};
#define N_CASES ((int)(sizeof(lane_cases) / sizeof(lane_cases[0])))

static int inside(struct pps_tui_rect r, int cols, int rows)
{
    if (r.w == 0 && r.h == 0)
        return 1;
    return r.w > 0 && r.h > 0 && r.x >= 0 && r.y >= 0 && r.x + r.w <= cols && r.y + r.h <= rows;
}

static int overlap(struct pps_tui_rect a, struct pps_tui_rect b)
{
    if (!a.w || !a.h || !b.w || !b.h)
        return 0;
    return a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;
}

static int min_i(int a, int b)
{
    return a < b ? a : b;
}

/* Everything a layout must hold at any size; returns the failures found (reported once). */
static int check_one(const struct lanes_case *c, int cols, int rows)
{
    struct pps_tui_layout_req req = {cols, rows, c->a, c->b, c->label_w};
    struct pps_tui_layout l;
    struct pps_tui_rect r[8];
    int ok = pps_tui_layout(&req, &l), bad = 0, n = 8;

    if (ok != l.ok)
        bad++;
    if (l.need_cols < PPS_TUI_MIN_COLS || l.need_rows < PPS_TUI_MIN_ROWS)
        bad++;
    if (!ok)
        return bad + !(cols < l.need_cols || rows < l.need_rows);
    if (cols < l.need_cols || rows < l.need_rows)
        bad++;
    r[0] = l.header, r[1] = l.lanes_a, r[2] = l.lanes_b, r[3] = l.ruler;
    r[4] = l.status, r[5] = l.pane, r[6] = l.side, r[7] = l.keybar;
    for (int i = 0; i < n; i++) {
        bad += !inside(r[i], cols, rows);
        for (int j = i + 1; j < n; j++)
            bad += overlap(r[i], r[j]);
    }
    /* The fixed rows, top and bottom. */
    bad += l.header.y != 0 || l.header.h != 1 || l.keybar.y != rows - 1 || l.keybar.h != 1;
    bad += l.ruler.h != 1 || l.status.h != 1;
    /* Every row is used: the parts stack without gaps. */
    bad +=
        l.header.h + l.lanes_a.h + l.lanes_b.h + l.ruler.h + l.status.h + l.pane.h + l.keybar.h !=
        rows;
    /* Lanes: at least the minimum of each run, never more than it has. */
    bad += l.lanes_a.h < min_i(c->a, PPS_TUI_MIN_LANES) || l.lanes_a.h > c->a;
    bad += l.lanes_b.h < min_i(c->b, PPS_TUI_MIN_LANES) || l.lanes_b.h > c->b;
    bad += l.pane.h < PPS_TUI_PANE_MIN;
    bad += l.bars_w < 20 || l.bars_x + l.bars_w != cols || l.bars_x != l.label_w;
    /* Room for every lane and a full pane: every lane is shown. */
    if (rows >= 4 + c->a + c->b + PPS_TUI_PANE_WANT)
        bad += l.lanes_a.h != c->a || l.lanes_b.h != c->b;
    /* Lanes hidden only when the pane is down to what it wants. */
    if (l.lanes_a.h < c->a || l.lanes_b.h < c->b)
        bad += l.pane.h > PPS_TUI_PANE_WANT;
    /* The side pane exactly from the split width, the same height as the pane. */
    bad += (cols >= PPS_TUI_SPLIT_COLS) != (l.side.w > 0);
    if (l.side.w > 0)
        bad += l.side.h != l.pane.h || l.side.y != l.pane.y || l.pane.w + l.side.w != cols;
    return bad;
}

static void test_layout_every_size(void)
{
    long checked = 0;

    for (int k = 0; k < N_CASES; k++) {
        int reported = 0;
        for (int cols = 1; cols <= 300; cols++)
            for (int rows = 1; rows <= 100; rows++) {
                int bad = check_one(&lane_cases[k], cols, rows);
                checked++;
                if (bad && !reported) {
                    fprintf(stderr, "  lanes %d+%d label %d: %dx%d breaks %d rule(s)\n",
                            lane_cases[k].a, lane_cases[k].b, lane_cases[k].label_w, cols, rows,
                            bad);
                    reported = 1;
                }
                CHECK(bad == 0);
            }
    }
    CHECK_EQ_INT(checked, 300L * 100 * N_CASES);
}

/* Growing the terminal never makes a layout that fit stop fitting. */
static void test_layout_monotonic(void)
{
    for (int k = 0; k < N_CASES; k++)
        for (int cols = 1; cols < 300; cols += 3)
            for (int rows = 1; rows < 100; rows++) {
                struct pps_tui_layout_req q = {cols, rows, lane_cases[k].a, lane_cases[k].b,
                                               lane_cases[k].label_w};
                struct pps_tui_layout l, wider, taller;
                int ok = pps_tui_layout(&q, &l);

                q.cols++;
                pps_tui_layout(&q, &wider);
                q.cols--;
                q.rows++;
                pps_tui_layout(&q, &taller);
                if (ok) {
                    CHECK(wider.ok && taller.ok);
                    CHECK(taller.lanes_a.h + taller.lanes_b.h >= l.lanes_a.h + l.lanes_b.h);
                }
            }
}

/* The sizes the brief names: what fits where. */
static void test_layout_named_sizes(void)
{
    struct pps_tui_layout_req q = {80, 24, 4, 0, 4};
    struct pps_tui_layout l;

    CHECK(pps_tui_layout(&q, &l));
    CHECK_EQ_INT(l.lanes_a.h, 4);
    CHECK_EQ_INT(l.pane.h, 24 - 4 - 4);
    CHECK_EQ_INT(l.side.w, 0);

    q.cols = 120, q.rows = 40, q.lanes_a = 16, q.lanes_b = 16, q.label_w = 7;
    CHECK(pps_tui_layout(&q, &l));
    CHECK_EQ_INT(l.lanes_a.h + l.lanes_b.h, 40 - 4 - PPS_TUI_PANE_WANT);
    CHECK_EQ_INT(l.lanes_a.h, l.lanes_b.h + 1);

    q.cols = 60, q.rows = 15, q.lanes_a = 4, q.lanes_b = 0;
    CHECK(!pps_tui_layout(&q, &l));
    CHECK_EQ_INT(l.need_cols, PPS_TUI_MIN_COLS);
    CHECK_EQ_INT(l.need_rows, PPS_TUI_MIN_ROWS);
    CHECK_EQ_INT(l.lanes_a.h, 0);

    /* A label so wide that the bars would starve raises the width needed. */
    q.cols = 200, q.rows = 50, q.label_w = 190;
    CHECK(!pps_tui_layout(&q, &l));
    CHECK_EQ_INT(l.need_cols, 210);

    q.cols = 160, q.label_w = 5;
    CHECK(pps_tui_layout(&q, &l));
    CHECK_EQ_INT(l.pane.w, 80);
    CHECK_EQ_INT(l.side.x, 80);
}

static const struct test_case cases[] = {
    TEST(test_layout_every_size),
    TEST(test_layout_monotonic),
    TEST(test_layout_named_sizes),
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    return test_main(cases, argc, argv);
}
