/* test_sched_text.c - schedules as text (schedule/text_*.c): PyTorch's pipeline-order CSV and
 * ppscope's grid read back to the same schedule for every kind, the CSV's columns in lockstep,
 * PyTorch's dialects, text that is no schedule refused with its line, rank and step, and a
 * validation fault said in the file's terms. */
#include "schedule.h"
#include "test.h"

/* text read in syntax into s (fresh), which must succeed. */
static void read_ok(const char *text, int syntax, struct pps_schedule *s,
                    struct pps_sched_text *src)
{
    struct pps_err err = {0, ""};
    int rc = pps_schedule_read(s, src, text, strlen(text), syntax, &err);

    if (rc)
        fprintf(stderr, "  read: %s\n  of: %.300s\n", err.msg, text);
    CHECK_EQ_INT(rc, 0);
}

/* text must be refused, saying want. */
static void read_bad(const char *text, const char *want)
{
    struct pps_schedule s = PPS_SCHEDULE_INIT;
    struct pps_err err = {0, ""};
    int rc = pps_schedule_read(&s, NULL, text, strlen(text), PPS_SYNTAX_AUTO, &err);

    if (rc != PPS_EFORMAT)
        fprintf(stderr, "  read %d: %s\n  of: %s\n", rc, err.msg, text);
    CHECK_EQ_INT(rc, PPS_EFORMAT);
    CHECK_STR_CONTAINS(err.msg, want);
    CHECK(s.actions == NULL);
}

static char *write_text(const struct pps_schedule *s, int csv)
{
    size_t need = csv ? pps_schedule_write_csv(s, NULL, 0) : pps_schedule_write_grid(s, NULL, 0);
    char *buf = malloc(need + 1);

    CHECK(buf != NULL);
    CHECK_EQ_INT(csv ? pps_schedule_write_csv(s, buf, need + 1)
                     : pps_schedule_write_grid(s, buf, need + 1),
                 need);
    CHECK(need > 0);
    return buf;
}

/*
 * Every action's inputs sit in an earlier column of the CSV than the action: PyTorch reads the
 * columns in lockstep. Checked on the text itself, cell by cell.
 */
static void check_lockstep(const char *csv, const struct pps_schedule *s)
{
    int V = s->p * s->v;
    long *fcol = malloc(sizeof(long) * (size_t)V * (size_t)s->m);
    long *bcol = malloc(sizeof(long) * (size_t)V * (size_t)s->m);
    const char *c = csv;

    CHECK(fcol && bcol);
    for (int k = 0; k < V * s->m; k++)
        fcol[k] = bcol[k] = -1;
    /* Two passes: where each output is made, then whether each input came earlier. */
    for (int pass = 0; pass < 2; pass++) {
        c = csv;
        for (int row = 0; row < s->p; row++) {
            for (long col = 0;; col++) {
                int vs = 0, mb = 0, n = 0;
                char t = 0;

                if (sscanf(c, "%d%c%d%n", &vs, &t, &mb, &n) == 3 && n > 0) {
                    size_t self = (size_t)vs * (size_t)s->m + (size_t)mb;
                    if (pass == 0 && t == 'F')
                        fcol[self] = col;
                    if (pass == 0 && (t == 'I' || t == 'B'))
                        bcol[self] = col;
                    if (pass == 1 && t == 'F' && vs > 0)
                        CHECK(fcol[self - (size_t)s->m] >= 0 && fcol[self - (size_t)s->m] < col);
                    if (pass == 1 && (t == 'I' || t == 'B') && vs < V - 1)
                        CHECK(bcol[self + (size_t)s->m] >= 0 && bcol[self + (size_t)s->m] < col);
                    c += n;
                }
                if (*c == ',') {
                    c++;
                    continue;
                }
                CHECK(c[0] == '\r' && c[1] == '\n');
                c += 2;
                break;
            }
        }
        CHECK(*c == '\0');
    }
    free(fcol);
    free(bcol);
}

/* Every kind over a sweep: written as CSV and as the grid, each read back to the same schedule
 * (the placement found from the CSV's virtual stages), the CSV's columns in lockstep. */
static void test_every_kind_reads_back_from_csv_and_grid(void)
{
    long checked = 0;

    for (int kind = 0; kind < PPS_SCHED_KIND_COUNT; kind++)
        for (int p = 1; p <= 8; p++)
            for (int m = 1; m <= 20; m += (m < 8 ? 1 : 3))
                for (int v = 1; v <= 3; v++) {
                    struct pps_schedule s = PPS_SCHEDULE_INIT;

                    if (pps_schedule_check_params(kind, p, m, v, NULL) ||
                        pps_schedule_generate(&s, kind, p, m, v, NULL))
                        continue;
                    for (int csv = 0; csv < 2; csv++) {
                        struct pps_schedule back = PPS_SCHEDULE_INIT;
                        char *text = write_text(&s, csv);

                        if (csv)
                            check_lockstep(text, &s);
                        read_ok(text, PPS_SYNTAX_AUTO, &back, NULL);
                        if (!pps_schedule_equal(&s, &back))
                            fprintf(stderr, "  %s p=%d m=%d v=%d %s\n", pps_sched_kind_name(kind),
                                    p, m, v, csv ? "csv" : "grid");
                        CHECK(pps_schedule_equal(&s, &back));
                        CHECK_EQ_INT(back.kind, -1);
                        CHECK_EQ_INT(pps_schedule_validate(&back, NULL, NULL), 0);
                        pps_schedule_release(&back);
                        free(text);
                        checked++;
                    }
                    pps_schedule_release(&s);
                }
    CHECK(checked > 1000);
}

/* 1F1B on 2 ranks as PyTorch writes it (I, W split; a B is the full backward), and as its
 * releases before I did (B the input gradient beside W; BW full), and DualPipeV's overlapped
 * pairs with communication cells and quotes: all the same schedules. */
static void test_pytorch_dialects_read_alike(void)
{
    struct pps_schedule want = PPS_SCHEDULE_INIT, a = PPS_SCHEDULE_INIT, b = PPS_SCHEDULE_INIT;
    struct pps_sched_text src = PPS_SCHED_TEXT_INIT;

    /* ZB-H1's order on 2 stages, 2 microbatches, in each dialect. */
    CHECK_EQ_INT(pps_schedule_generate(&want, PPS_SCHED_ZB_H1, 2, 2, 1, NULL), 0);
    read_ok("0F0,0F1,,0I0,0W0,0I1,0W1\r\n,1F0,1I0,1F1,1I1,1W0,1W1\r\n", PPS_SYNTAX_AUTO, &a, NULL);
    CHECK(pps_schedule_equal(&want, &a));
    read_ok("0F0,0F1,,0B0,0W0,0B1,0W1\n,1F0,1B0,1F1,1B1,1W0,1W1\n\n\n", PPS_SYNTAX_CSV, &b, NULL);
    CHECK(pps_schedule_equal(&want, &b));
    pps_schedule_release(&a);
    pps_schedule_release(&b);

    /* A full backward: B in the new dialect, BW in the old; "B" with no W is the full one. */
    read_ok("0F0,,0B0\n,1F0,1B0\n", PPS_SYNTAX_AUTO, &a, NULL);
    read_ok("0F0,,0BW0\n,1F0,1BW0\n", PPS_SYNTAX_AUTO, &b, NULL);
    CHECK(pps_schedule_equal(&a, &b));
    CHECK_EQ_INT(a.actions[1].op, PPS_OP_BW);
    pps_schedule_release(&a);
    pps_schedule_release(&b);

    /* An editor's byte order mark, and lines that end in a lone CR (Python's csv reads both). */
    read_ok("\xef\xbb\xbf"
            "0F0,0F1,,0I0,0W0,0I1,0W1\r,1F0,1I0,1F1,1I1,1W0,1W1\r",
            PPS_SYNTAX_AUTO, &a, NULL);
    CHECK(pps_schedule_equal(&want, &a));
    pps_schedule_release(&a);
    read_ok("\xef\xbb\xbf"
            "s0: F0 F1 B0 W0 B1 W1\rs1: F0 B0 F1 B1 W0 W1\r",
            PPS_SYNTAX_AUTO, &a, NULL);
    CHECK(pps_schedule_equal(&want, &a));
    pps_schedule_release(&a);

    /* Overlapped pairs as their actions in order; communication left out; quoted cells. */
    read_ok("0F0,0SEND_F0,,\"(0F1;0B0)OVERLAP_F_B\",0B1\r\n"
            "1RECV_F0,1F0,1B0,1UNSHARD,1F1,1B1, 1REDUCE_GRAD \r\n",
            PPS_SYNTAX_AUTO, &a, &src);
    read_ok("0F0,0F1,0B0,0B1\n1F0,1B0,1F1,1B1\n", PPS_SYNTAX_AUTO, &b, NULL);
    CHECK(pps_schedule_equal(&a, &b));
    CHECK_EQ_INT(src.skipped, 4);
    CHECK_EQ_INT(src.overlapped, 1);
    /* Each action remembers its cell: the pair's two actions, the one cell. */
    CHECK_EQ_INT(src.at[1], src.at[2]);
    CHECK(!strcmp(src.cell[src.at[1]], "(0F1;0B0)OVERLAP_F_B"));
    CHECK(!strcmp(src.cell[src.at[3]], "0B1"));
    CHECK_EQ_INT(src.line[1], 2);
    pps_sched_text_release(&src);
    pps_schedule_release(&a);
    pps_schedule_release(&b);
    pps_schedule_release(&want);
}

/* The placement is found from which virtual stages each rank runs: V where a loop cannot hold
 * them. */
static void test_csv_placement_is_found(void)
{
    struct pps_schedule s = PPS_SCHEDULE_INIT;

    /* Rank 0 holds 0 and 3, rank 1 holds 1 and 2: V on 2 ranks. */
    read_ok("0F0,,,3F0,3B0,,,0B0\n,1F0,2F0,,,2B0,1B0\n", PPS_SYNTAX_AUTO, &s, NULL);
    CHECK_EQ_INT(s.placement, PPS_PLACE_V);
    CHECK_EQ_INT(s.v, 2);
    CHECK_EQ_INT(pps_schedule_validate(&s, NULL, NULL), 0);
    pps_schedule_release(&s);
    /* Rank 0 holds 0 and 2, rank 1 holds 1 and 3: a loop. */
    read_ok("0F0,,2F0,,,2B0,,0B0\n,1F0,,3F0,3B0,,1B0\n", PPS_SYNTAX_AUTO, &s, NULL);
    CHECK_EQ_INT(s.placement, PPS_PLACE_LOOP);
    CHECK_EQ_INT(pps_schedule_validate(&s, NULL, NULL), 0);
    pps_schedule_release(&s);
}

static void test_text_that_is_no_schedule_is_refused_where_it_is(void)
{
    read_bad("", "empty");
    read_bad("\n\n", "empty");
    read_bad("0F0,0X1\n", "line 1, rank 0, step 1: '0X1' is not an action");
    read_bad("0F0,,0I\n", "line 1, rank 0, step 2: '0I' has no microbatch");
    read_bad("0F0,0F1x\n", "'0F1x' is not an action");
    read_bad("0F0\n1F0,(1F1;1B0)OVERLAP\n", "line 2, rank 1, step 1");
    read_bad("0F0,1F0,1B0,0B0\n2F0\n", "virtual stages 0..2: 3 stages, not a multiple of the 2");
    /* Virtual stage 3 on rank 0 of 2: a loop puts it on rank 1, and with v = 3 no V does. */
    read_bad("0F0,3F0,4F0\n1F0,2F0,5F0\n",
             "line 1, rank 0, step 1: 3F0 is virtual stage 3, "
             "which a loop puts on rank 1 (stage % ranks), not on rank 0");
    read_bad("0F0,3F0\n1F0,0F1\n", "line 2, rank 1, step 1: 0F1 is virtual stage 0, which "
                                   "neither a loop (rank 0: stage % ranks) nor a V (rank 1 "
                                   "holds 1 and 2) puts on rank 1");
    /* Each cell fits a placement, no placement fits every cell (found by fuzzing). */
    read_bad("0F0,3F0\n1F0,3F1\n", "line 1, rank 0, step 1: 3F0 is virtual stage 3, where only "
                                   "a V puts it, and line 2's 3F1 (rank 1) is where only a loop");
    read_bad("0F1234567890\n", "'0F1234567890' has a number of more than 9 digits");
    read_bad("s0: F0 Q1\n", "line 1, stage 0, step 1: 'Q1' is not an action");
    read_bad("# mine\ns0: F0 BW0\ns2: F0 BW0\n", "line 3: s2 where s1 comes next");
    read_bad("s0: F0 BW0\nplacement: w\n", "line 2: placement 'w'");
    read_bad("placement: v\ns0: F0 F0.2\n", "chunk 2 or more");
    read_bad("s0: F0\nhello\n", "line 2: 'hello' is no stage's row");
    {
        struct pps_schedule s = PPS_SCHEDULE_INIT;
        struct pps_err err = {0, ""};

        CHECK_EQ_INT(pps_schedule_read(&s, NULL, "0F0,\0,0B0\n", 9, PPS_SYNTAX_AUTO, &err),
                     PPS_EFORMAT);
        CHECK_STR_CONTAINS(err.msg, "NUL");
    }
}

/* The grid as the validator marks it, a fault there, and "actions:" and comments said nothing. */
static void test_grid_reads_what_sim_prints(void)
{
    struct pps_schedule s = PPS_SCHEDULE_INIT, g = PPS_SCHEDULE_INIT;

    read_ok("actions:\n# a comment\n\ns0  : F0 F1 [BW0] BW1\ns1  : F0 BW0 F1 BW1\n",
            PPS_SYNTAX_AUTO, &s, NULL);
    CHECK_EQ_INT(pps_schedule_generate(&g, PPS_SCHED_1F1B, 2, 2, 1, NULL), 0);
    CHECK(pps_schedule_equal(&s, &g));
    pps_schedule_release(&s);
    pps_schedule_release(&g);
}

/* The explanation of text's fault, which must contain each of want (NULL-ended). */
static void explain(const char *text, const char *const *want)
{
    struct pps_schedule s = PPS_SCHEDULE_INIT;
    struct pps_sched_text src = PPS_SCHED_TEXT_INIT;
    struct pps_sched_fault f;
    struct pps_err err = {0, ""};
    char out[4096];

    read_ok(text, PPS_SYNTAX_AUTO, &s, &src);
    CHECK_EQ_INT(pps_schedule_validate(&s, &f, &err), PPS_ESCHEDULE);
    size_t need = pps_sched_text_explain(&src, &s, &f, err.msg, out, sizeof(out));
    CHECK(need < sizeof(out));
    CHECK_EQ_INT(strlen(out), need);
    for (int k = 0; want[k]; k++) {
        if (!strstr(out, want[k]))
            fprintf(stderr, "  explained:\n%s", out);
        CHECK_STR_CONTAINS(out, want[k]);
    }
    /* Truncated like snprintf. */
    char small[16];
    CHECK_EQ_INT(pps_sched_text_explain(&src, &s, &f, err.msg, small, sizeof(small)), need);
    CHECK_EQ_INT(strlen(small), sizeof(small) - 1);
    pps_sched_text_release(&src);
    pps_schedule_release(&s);
}

static void test_a_fault_is_said_in_the_files_terms(void)
{
    /* CSV: the file's step (empty cells counted), its notation, the cell marked. */
    explain("0F0,0F1,,0I0,0W0,0I1,0W1\n,1I0,1F0,1F1,1I1,1W0,1W1\n",
            (const char *const[]){"line 2, rank 1, step 1: 1I0 comes before the microbatch's "
                                  "forward\n",
                                  "  rank 1: .   [1I0] 1F0", NULL});
    /* The old dialect's B beside its W is an I: said so, with the cell as written. */
    explain("0F0,0F1,,0W0,0B0,0B1,0W1\n,1F0,1B0,1F1,1B1,1W0,1W1\n",
            (const char *const[]){"line 1, rank 0, step 3: 0W0 comes before the microbatch's "
                                  "split backward",
                                  NULL});
}

static void test_missing_and_deadlock_are_said_in_the_files_terms(void)
{
    /* A stray microbatch number: m is the largest + 1; where it is, said. */
    explain("0F0,0F1,,0I0,0W0,0I1,0W1\n,1F0,1I0,1F9,1I1,1W0,1W1\n",
            (const char *const[]){"line 1, rank 0 never runs 0F2, microbatch 2's forward",
                                  "(m=10 is the file's largest microbatch + 1: 1F9 at line 2, "
                                  "rank 1, step 3)",
                                  "<-- here", NULL});
    explain("s0: F0 F1 BW0 BW1\ns1: F0 BW0 F1 B1\n",
            (const char *const[]){"line 2, stage 1 never runs W1, the W after microbatch 1's "
                                  "split backward",
                                  NULL});
    /* Each waits for the other. */
    explain("s0: F0 BW0 F1 BW1\ns1: F0 F1 BW0 BW1\n",
            (const char *const[]){"line 1, stage 0, step 1: BW0 waits for stage 1's backward of "
                                  "microbatch 0 (BW0 or B0), which never comes",
                                  "deadlock", "  s0: F0 [BW0] F1", NULL});
}

/* A long row shows the cells around the fault, "..." on either side. */
static void test_a_long_row_is_shown_around_the_fault(void)
{
    struct pps_schedule g = PPS_SCHEDULE_INIT;
    CHECK_EQ_INT(pps_schedule_generate(&g, PPS_SCHED_1F1B, 2, 40, 1, NULL), 0);
    char *grid = write_text(&g, 0);
    char *at = strstr(grid, "F30 ");

    CHECK(at != NULL);
    memcpy(at, "F31 ", 4); /* F30 goes missing and F31 repeats */
    explain(grid, (const char *const[]){"line 1, stage 0, step ",
                                        ": F31 repeats the "
                                        "microbatch's forward",
                                        "  s0: ... ", "[F31] ", " ...\n", NULL});
    free(grid);
    pps_schedule_release(&g);
}

static const struct test_case cases[] = {
    TEST(test_every_kind_reads_back_from_csv_and_grid),
    TEST(test_pytorch_dialects_read_alike),
    TEST(test_csv_placement_is_found),
    TEST(test_text_that_is_no_schedule_is_refused_where_it_is),
    TEST(test_grid_reads_what_sim_prints),
    TEST(test_a_fault_is_said_in_the_files_terms),
    TEST(test_missing_and_deadlock_are_said_in_the_files_terms),
    TEST(test_a_long_row_is_shown_around_the_fault),
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    return test_main(cases, argc, argv);
}
