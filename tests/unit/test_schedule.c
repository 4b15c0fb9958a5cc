/* test_schedule.c - generation and validation of every schedule kind, and the faults the
 * validator must catch with the right message. */
#include "schedule.h"
#include "test.h"

static int gen(struct pps_schedule *s, int kind, int p, int m, int v)
{
    struct pps_err err = {0};
    int rc = pps_schedule_generate(s, kind, p, m, v, &err);
    if (rc)
        fprintf(stderr, "  generate %s p=%d m=%d v=%d: %s\n", pps_sched_kind_name(kind), p, m, v,
                err.msg);
    return rc;
}

/* Every kind over p 1..16, m 1..64 and each v that fits: generated and valid, the right length. */
static void test_sweep_every_schedule_is_valid(void)
{
    long checked = 0;
    for (int kind = 0; kind < PPS_SCHED_KIND_COUNT; kind++) {
        for (int p = 1; p <= 16; p++) {
            for (int m = 1; m <= 64; m++) {
                for (int v = 1; v <= 4; v++) { /* those the kind takes: check_params says */
                    if (pps_schedule_check_params(kind, p, m, v, NULL))
                        continue;
                    struct pps_schedule s = PPS_SCHEDULE_INIT;
                    struct pps_err err = {0};
                    if (gen(&s, kind, p, m, v)) {
                        CHECK(0);
                        continue;
                    }
                    int split = pps_sched_kind_split(kind);
                    for (int st = 0; st < p; st++) {
                        long want = (long)m * v * (split ? 3 : 2);
                        if (kind == PPS_SCHED_DUALPIPEV) /* 2p-st-1 backwards split */
                            want = 4L * m + 2 * p - st - 1;
                        CHECK_EQ_INT(pps_schedule_len(&s, st), want);
                    }
                    int rc = pps_schedule_validate(&s, NULL, &err);
                    if (rc)
                        fprintf(stderr, "  %s p=%d m=%d v=%d: %s\n", pps_sched_kind_name(kind), p,
                                m, v, err.msg);
                    CHECK_EQ_INT(rc, 0);
                    checked++;
                    pps_schedule_release(&s);
                }
            }
        }
    }
    /* 5 kinds x 16 x 64 (zb-v at v=2) plus interleaved's (m % p == 0) cases for 4 values of v. */
    CHECK(checked > 5 * 16 * 64);
}

static void test_params_name_the_constraint(void)
{
    struct pps_err err = {0};
    CHECK_EQ_INT(pps_schedule_check_params(PPS_SCHED_1F1B, 0, 8, 1, &err), PPS_EINVAL);
    CHECK_STR_CONTAINS(err.msg, "p=0");
    CHECK_EQ_INT(pps_schedule_check_params(PPS_SCHED_GPIPE, 4, 0, 1, &err), PPS_EINVAL);
    CHECK_STR_CONTAINS(err.msg, "m=0");
    CHECK_EQ_INT(pps_schedule_check_params(PPS_SCHED_ZB_H1, 4, 8, 2, &err), PPS_EINVAL);
    CHECK_STR_CONTAINS(err.msg, "only interleaved");
    CHECK_EQ_INT(pps_schedule_check_params(PPS_SCHED_INTERLEAVED, 4, 6, 2, &err), PPS_EINVAL);
    CHECK_STR_CONTAINS(err.msg, "multiple of p");
    CHECK_EQ_INT(pps_schedule_check_params(PPS_SCHED_INTERLEAVED, 4, 8, 0, &err), PPS_EINVAL);
    CHECK_STR_CONTAINS(err.msg, "v=0");
    struct pps_schedule s = PPS_SCHEDULE_INIT;
    CHECK_EQ_INT(pps_schedule_generate(&s, PPS_SCHED_INTERLEAVED, 3, 4, 2, &err), PPS_EINVAL);
    CHECK(s.actions == NULL);
    CHECK_EQ_INT(pps_sched_kind_parse("zb-h2"), PPS_SCHED_ZB_H2);
    CHECK_EQ_INT(pps_sched_kind_parse("zb-h3"), -1);
}

/* Validates s and checks the fault's stage, step and message. */
static void expect_fault(const struct pps_schedule *s, int stage, long pos, const char *text)
{
    struct pps_err err = {0};
    struct pps_sched_fault f = {-2, -2, {0, 0, 0}, NULL, -1, {0, 0, 0}};
    CHECK_EQ_INT(pps_schedule_validate(s, &f, &err), PPS_ESCHEDULE);
    CHECK_EQ_INT(f.stage, stage);
    CHECK_EQ_INT(f.pos, pos);
    CHECK_STR_CONTAINS(err.msg, text);
}

static void swap_actions(struct pps_schedule *s, int stage, size_t a, size_t b)
{
    struct pps_action t = s->actions[s->start[stage] + a];
    s->actions[s->start[stage] + a] = s->actions[s->start[stage] + b];
    s->actions[s->start[stage] + b] = t;
}

static void test_backward_before_forward_is_caught(void)
{
    struct pps_schedule s = PPS_SCHEDULE_INIT;
    if (gen(&s, PPS_SCHED_1F1B, 4, 8, 1))
        return;
    /* Stage 3 runs F0 BW0 F1 ...: put BW0 first. */
    swap_actions(&s, 3, 0, 1);
    expect_fault(&s, 3, 0, "stage 3, step 0: BW0 comes before the microbatch's forward");
    pps_schedule_release(&s);
}

static void test_w_before_b_and_duplicates_are_caught(void)
{
    struct pps_schedule s = PPS_SCHEDULE_INIT;
    if (gen(&s, PPS_SCHED_ZB_H1, 4, 8, 1))
        return;
    /* Find stage 0's first W and move it before its B. */
    size_t w = 0, b = 0;
    for (size_t k = 0; k < pps_schedule_len(&s, 0); k++)
        if (pps_schedule_at(&s, 0, k)->op == PPS_OP_W) {
            w = k;
            break;
        }
    for (size_t k = 0; k < w; k++)
        if (pps_schedule_at(&s, 0, k)->op == PPS_OP_B && pps_schedule_at(&s, 0, k)->mb == 0)
            b = k;
    swap_actions(&s, 0, b, w);
    expect_fault(&s, 0, (long)b, "W0 comes before the microbatch's split backward");
    swap_actions(&s, 0, b, w);
    CHECK_EQ_INT(pps_schedule_validate(&s, NULL, NULL), 0);

    /* A duplicated forward in place of F1 on stage 2. */
    s.actions[s.start[2] + 1] = s.actions[s.start[2]];
    expect_fault(&s, 2, 1, "F0 repeats the microbatch's forward");
    pps_schedule_release(&s);
}

static void test_missing_and_out_of_range_are_caught(void)
{
    struct pps_schedule s = PPS_SCHEDULE_INIT;
    if (gen(&s, PPS_SCHED_GPIPE, 2, 3, 1))
        return;
    s.actions[s.start[1] + 4].mb = 7; /* stage 1's BW1 becomes BW7 */
    expect_fault(&s, 1, 4, "BW7 is out of range (m=3");
    s.actions[s.start[1] + 4].mb = 1;
    s.actions[s.start[1] + 4].op = PPS_OP_B; /* a split B without its W */
    expect_fault(&s, 1, -1, "microbatch 1 (chunk 0) is missing its W after a split B");
    s.actions[s.start[1] + 4].op = PPS_OP_F; /* now F1 twice */
    expect_fault(&s, 1, 4, "F1 repeats");
    pps_schedule_release(&s);
}

/* Stage 1 runs F1 before F0; stage 0 runs BW0 before F1: each waits for the other. */
static void test_deadlock_is_caught_and_named(void)
{
    struct pps_schedule s = PPS_SCHEDULE_INIT;
    CHECK_EQ_INT(pps_schedule_alloc(&s, 2, 2, 1, 8), 0);
    const struct pps_action a[8] = {
        {PPS_OP_F, 0, 0}, {PPS_OP_BW, 0, 0}, {PPS_OP_F, 0, 1},  {PPS_OP_BW, 0, 1},
        {PPS_OP_F, 0, 1}, {PPS_OP_F, 0, 0},  {PPS_OP_BW, 0, 0}, {PPS_OP_BW, 0, 1},
    };
    for (int k = 0; k < 8; k++)
        s.actions[k] = a[k];
    s.start[0] = 0;
    s.start[1] = 4;
    s.start[2] = 8;
    struct pps_err err = {0};
    struct pps_sched_fault f;
    CHECK_EQ_INT(pps_schedule_validate(&s, &f, &err), PPS_ESCHEDULE);
    CHECK_STR_CONTAINS(err.msg, "deadlock");
    CHECK_STR_CONTAINS(err.msg, "stage 0 at step 1 (BW0) waits for B/BW0 of stage 1");
    CHECK_STR_CONTAINS(err.msg, "stage 1 at step 0 (F1) waits for F1 of stage 0");
    CHECK_EQ_INT(f.stage, 0);
    CHECK_EQ_INT(f.pos, 1);
    CHECK_EQ_INT(f.action.op, PPS_OP_BW);

    /* The grid shows the whole schedule with the stuck step marked. */
    char grid[256];
    size_t need = pps_schedule_format(&s, f.stage, f.pos, grid, sizeof(grid));
    CHECK(need < sizeof(grid));
    CHECK_STR_CONTAINS(grid, "s0  : F0 [BW0] F1 BW1\n");
    CHECK_STR_CONTAINS(grid, "s1  : F1 F0 BW0 BW1\n");
    pps_schedule_release(&s);
}

static void test_format_truncates_like_snprintf(void)
{
    struct pps_schedule s = PPS_SCHEDULE_INIT;
    if (gen(&s, PPS_SCHED_INTERLEAVED, 2, 2, 2))
        return;
    char small[8];
    size_t need = pps_schedule_format(&s, -1, -1, small, sizeof(small));
    CHECK(need > sizeof(small));
    CHECK_EQ_INT(strlen(small), sizeof(small) - 1);
    char big[512];
    CHECK_EQ_INT(pps_schedule_format(&s, -1, -1, big, sizeof(big)), need);
    CHECK_EQ_INT(strlen(big), need);
    CHECK_STR_CONTAINS(big, "F0.1"); /* chunks are shown when v > 1 */
    pps_schedule_release(&s);
}

/* Most pending W's (B done, W not) a stage holds while running its list. */
static int max_pending(const struct pps_schedule *s, int stage)
{
    int pending = 0, peak = 0;
    for (size_t k = 0; k < pps_schedule_len(s, stage); k++) {
        int op = pps_schedule_at(s, stage, k)->op;
        pending += op == PPS_OP_B ? 1 : op == PPS_OP_W ? -1 : 0;
        peak = pending > peak ? pending : peak;
    }
    return peak;
}

static void test_w_budget_bounds_pending_and_keeps_w_order(void)
{
    struct pps_schedule s = PPS_SCHEDULE_INIT, b = PPS_SCHEDULE_INIT;
    const int budget[4] = {1, 0, 2, 3};
    struct pps_err err = {0};
    if (gen(&s, PPS_SCHED_ZB_H2, 4, 8, 1))
        return;
    /* ZB-H2 banks W's for the tail: the later stages hold many, so the bounds below could fail. */
    CHECK(max_pending(&s, 2) > 2);
    CHECK(max_pending(&s, 3) > 3);
    CHECK_EQ_INT(pps_schedule_apply_w_budget(&s, budget, &b, NULL, &err), 0);
    CHECK_EQ_INT(pps_schedule_validate(&b, NULL, &err), 0);
    CHECK_EQ_INT(max_pending(&b, 0), 1);
    CHECK_EQ_INT(max_pending(&b, 1), max_pending(&s, 1)); /* 0: untouched */
    CHECK_EQ_INT(max_pending(&b, 2), 2);
    CHECK_EQ_INT(max_pending(&b, 3), 3);
    for (int st = 0; st < 4; st++) {
        unsigned next_w = 0;
        CHECK_EQ_INT(pps_schedule_len(&b, st), pps_schedule_len(&s, st));
        for (size_t k = 0; k < pps_schedule_len(&b, st); k++)
            if (pps_schedule_at(&b, st, k)->op == PPS_OP_W)
                CHECK_EQ_INT(pps_schedule_at(&b, st, k)->mb, next_w++);
        CHECK_EQ_INT(next_w, 8);
    }
    CHECK(memcmp(&b.actions[b.start[1]], &s.actions[s.start[1]],
                 pps_schedule_len(&s, 1) * sizeof(*s.actions)) == 0);
    pps_schedule_release(&b);

    /* W's out of their B's order cannot be budgeted without changing the gradients' sums. */
    swap_actions(&s, 3, pps_schedule_len(&s, 3) - 1, pps_schedule_len(&s, 3) - 2);
    if (pps_schedule_at(&s, 3, pps_schedule_len(&s, 3) - 1)->op == PPS_OP_W &&
        pps_schedule_at(&s, 3, pps_schedule_len(&s, 3) - 2)->op == PPS_OP_W) {
        CHECK_EQ_INT(pps_schedule_apply_w_budget(&s, budget, &b, NULL, &err), PPS_ESCHEDULE);
        CHECK_STR_CONTAINS(err.msg, "out of its B's order");
    } else {
        CHECK(0); /* zb-h2's last stage ends with W's */
    }
    pps_schedule_release(&s);
}

static const struct test_case cases[] = {
    TEST(test_sweep_every_schedule_is_valid),
    TEST(test_params_name_the_constraint),
    TEST(test_backward_before_forward_is_caught),
    TEST(test_w_before_b_and_duplicates_are_caught),
    TEST(test_missing_and_out_of_range_are_caught),
    TEST(test_deadlock_is_caught_and_named),
    TEST(test_format_truncates_like_snprintf),
    TEST(test_w_budget_bounds_pending_and_keeps_w_order),
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    return test_main(cases, argc, argv);
}
