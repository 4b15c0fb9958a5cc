/*
 * test_tui_flags.c - analysis/flags.c on runs with a known fault: a slow last stage is an
 * imbalance that names the LM head, a slow first stage the embedding (where the run's metadata
 * places them, and not where it does not); waits for data beyond the schedule's idle are a
 * communication stall with its peer; a balanced run has no flags.
 */
#include "analysis.h"
#include "test.h"
#include "test_tui_fixture.h"

static char dir[4096];

/* Writes x (iters iterations) to a fresh directory, loads it and computes report and flags. */
static void flags_of(struct fx_sim *x, int iters, struct pps_flag_list *fl, struct pps_report **rep)
{
    struct pps_run *run = NULL;
    char path[4200];

    fl->items = NULL;
    fl->n = 0;
    *rep = NULL;
    if (!fx_tmpdir(dir, sizeof(dir))) {
        CHECK(0);
        return;
    }
    snprintf(path, sizeof(path), "%s/run", dir);
    CHECK(fx_write_run(path, x, iters) == 0);
    CHECK(pps_run_load(path, &run, NULL) == 0);
    CHECK(run && pps_analysis_report(run, rep, NULL) == 0);
    CHECK(*rep && pps_analysis_flags(run, *rep, fl, NULL) == 0);
    pps_run_free(run);
    fx_sim_release(x);
    fx_rmrf(dir);
}

static void test_flags_balanced_run_has_none(void)
{
    struct fx_sim x;
    struct pps_flag_list fl;
    struct pps_report *rep;

    fx_sim_defaults(&x, PPS_SCHED_1F1B, 4, 8);
    x.waits = 1; /* waiting through the schedule's own bubble is not a stall */
    flags_of(&x, 2, &fl, &rep);
    CHECK_EQ_INT(fl.n, 0);
    for (size_t i = 0; i < fl.n; i++)
        fprintf(stderr, "  unexpected flag: %s\n", fl.items[i].text);
    pps_flag_list_release(&fl);
    pps_report_free(rep);
}

static void test_flags_slow_last_stage_holds_lm_head(void)
{
    struct fx_sim x;
    struct pps_flag_list fl;
    struct pps_report *rep;

    fx_sim_defaults(&x, PPS_SCHED_1F1B, 4, 8);
    x.slow_stage = 3;
    x.slow_mult = 1.5;
    x.model_ends = 1;
    flags_of(&x, 2, &fl, &rep);
    CHECK(fl.n >= 1);
    if (fl.n >= 1) {
        CHECK_EQ_INT(fl.items[0].kind, PPS_FLAG_IMBALANCE);
        CHECK_EQ_INT(fl.items[0].stage, 3);
        /* 1.5 against the other stages' 1: the factor the stage was made slower by */
        CHECK_NEAR(fl.items[0].value, 1.5, 1e-6);
        CHECK_STR_CONTAINS(fl.items[0].text, "stage 3 computes 1.50x the other stages' mean");
        CHECK_STR_CONTAINS(fl.items[0].text, "LM head");
        CHECK_STR_CONTAINS(fl.items[0].text, "balanced stages would give a bubble of");
    }
    for (size_t i = 1; i < fl.n; i++)
        CHECK(fl.items[i].kind != PPS_FLAG_IMBALANCE);
    pps_flag_list_release(&fl);
    pps_report_free(rep);
}

static void test_flags_slow_first_stage_holds_embedding(void)
{
    struct fx_sim x;
    struct pps_flag_list fl;
    struct pps_report *rep;

    fx_sim_defaults(&x, PPS_SCHED_ZB_H1, 4, 8);
    x.slow_stage = 0;
    x.slow_mult = 1.2;
    x.model_ends = 1;
    flags_of(&x, 1, &fl, &rep);
    CHECK(fl.n >= 1 && fl.items[0].kind == PPS_FLAG_IMBALANCE && fl.items[0].stage == 0);
    if (fl.n >= 1)
        CHECK_STR_CONTAINS(fl.items[0].text, "embedding");
    pps_flag_list_release(&fl);
    pps_report_free(rep);
}

/* A run that does not say where the model's ends are gets no claim about them: the first and
 * the last stage are only stages. */
static void test_flags_no_model_parts_without_metadata(void)
{
    struct fx_sim x;
    struct pps_flag_list fl;
    struct pps_report *rep;

    for (int s = 0; s < 4; s += 3) {
        fx_sim_defaults(&x, PPS_SCHED_1F1B, 4, 8);
        x.slow_stage = s;
        x.slow_mult = 1.5;
        flags_of(&x, 1, &fl, &rep);
        CHECK(fl.n >= 1 && fl.items[0].kind == PPS_FLAG_IMBALANCE && fl.items[0].stage == s);
        CHECK(!strstr(fl.items[0].text, "LM head") && !strstr(fl.items[0].text, "embedding"));
        pps_flag_list_release(&fl);
        pps_report_free(rep);
    }
}

/* Below the margin: 5% slower is not an imbalance. */
static void test_flags_small_imbalance_is_not_flagged(void)
{
    struct fx_sim x;
    struct pps_flag_list fl;
    struct pps_report *rep;

    fx_sim_defaults(&x, PPS_SCHED_1F1B, 4, 8);
    x.slow_stage = 2;
    x.slow_mult = 1.05;
    flags_of(&x, 1, &fl, &rep);
    for (size_t i = 0; i < fl.n; i++)
        CHECK(fl.items[i].kind != PPS_FLAG_IMBALANCE);
    pps_flag_list_release(&fl);
    pps_report_free(rep);
}

/* Every op waits half an op for its data on top of the schedule: a stall on every stage, and
 * a measured bubble above the prediction. */
static void test_flags_comm_stall_and_bubble(void)
{
    struct fx_sim x;
    struct pps_flag_list fl;
    struct pps_report *rep;
    int stalls = 0, bubble = 0;

    fx_sim_defaults(&x, PPS_SCHED_1F1B, 4, 8);
    x.waits = 1;
    x.wait_extra = 0.5;
    flags_of(&x, 2, &fl, &rep);
    for (size_t i = 0; i < fl.n; i++) {
        if (fl.items[i].kind == PPS_FLAG_COMM_STALL) {
            stalls++;
            CHECK(fl.items[i].value >= PPS_FLAG_STALL_RATIO);
            CHECK_STR_CONTAINS(fl.items[i].text, "for data");
            CHECK(fl.items[i].peer >= 0);
        }
        if (fl.items[i].kind == PPS_FLAG_BUBBLE_ABOVE) {
            bubble++;
            CHECK_STR_CONTAINS(fl.items[i].text, "not the schedule, nor the links or the host");
        }
    }
    CHECK_EQ_INT(stalls, 4);
    CHECK_EQ_INT(bubble, 1);
    /* Stalls come after imbalances and before the bubble. */
    if (fl.n)
        CHECK_EQ_INT(fl.items[fl.n - 1].kind, PPS_FLAG_BUBBLE_ABOVE);
    pps_flag_list_release(&fl);
    pps_report_free(rep);
}

static void test_flags_names_and_null(void)
{
    struct pps_flag_list fl = PPS_FLAG_LIST_INIT;

    CHECK(!strcmp(pps_flag_kind_name(PPS_FLAG_IMBALANCE), "imbalance"));
    CHECK(!strcmp(pps_flag_kind_name(PPS_FLAG_COMM_STALL), "stall"));
    CHECK(!strcmp(pps_flag_kind_name(PPS_FLAG_BUBBLE_ABOVE), "bubble"));
    CHECK(!strcmp(pps_flag_kind_name(PPS_FLAG_SLOW_LINK), "link"));
    CHECK(!strcmp(pps_flag_kind_name(PPS_FLAG_CONTENTION), "contention"));
    CHECK(!strcmp(pps_flag_kind_name(0), "?"));
    CHECK(pps_analysis_flags(NULL, NULL, &fl, NULL) == 0 && fl.n == 0);
    CHECK(pps_analysis_flags(NULL, NULL, NULL, NULL) == PPS_EINVAL);
    pps_flag_list_release(&fl);
    pps_flag_list_release(NULL);
}

static const struct test_case cases[] = {
    TEST(test_flags_balanced_run_has_none),
    TEST(test_flags_slow_last_stage_holds_lm_head),
    TEST(test_flags_slow_first_stage_holds_embedding),
    TEST(test_flags_no_model_parts_without_metadata),
    TEST(test_flags_small_imbalance_is_not_flagged),
    TEST(test_flags_comm_stall_and_bubble),
    TEST(test_flags_names_and_null),
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    return test_main(cases, argc, argv);
}
