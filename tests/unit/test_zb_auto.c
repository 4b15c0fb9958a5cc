/* test_zb_auto.c - zb-auto (schedule/auto.c) against the handcrafted schedules. */
#include "schedule.h"
#include "test.h"

/* Costs for p stages: tf = tb = 1, tw, tcomm, and stage s's three times by mult[s % 4]. */
static void costs_init(struct pps_sim_costs *c, int p, double tw, double tcomm, const double *mult)
{
    CHECK_EQ_INT(pps_sim_costs_init(c, p, 1, 1, tw), 0);
    c->tcomm = tcomm;
    for (int s = 0; mult && s < p; s++) {
        c->tf[s] *= mult[s % 4];
        c->tb[s] *= mult[s % 4];
        c->tw[s] *= mult[s % 4];
    }
}

/* sched's simulated makespan under c; also checks it is a valid schedule. */
static double makespan(const struct pps_schedule *sched, const struct pps_sim_costs *c)
{
    struct pps_sim_result r;
    struct pps_err err = {0};
    double ms;

    if (pps_schedule_validate(sched, NULL, &err) || pps_simulate(sched, c, &r, &err)) {
        fprintf(stderr, "  %s p=%d m=%d: %s\n", pps_sched_kind_name(sched->kind), sched->p,
                sched->m, err.msg);
        CHECK(0);
    }
    ms = r.makespan;
    pps_sim_result_release(&r);
    return ms;
}

/* zb-auto for c, m, limit: valid, within the limit, of its kind; returns its makespan. */
static double auto_makespan(struct pps_schedule *out, const struct pps_sim_costs *c, int m,
                            int limit)
{
    struct pps_err err = {0};

    if (pps_schedule_auto(out, c, m, limit, &err)) {
        fprintf(stderr, "  zb-auto p=%d m=%d limit %d: %s\n", c->p, m, limit, err.msg);
        CHECK(0);
    }
    CHECK_EQ_INT(out->kind, PPS_SCHED_ZB_AUTO);
    CHECK_EQ_INT(out->v, 1);
    CHECK(pps_schedule_live_peak(out) <= limit);
    return makespan(out, c);
}

/* The makespan of handcrafted kind under c, or -1 when its live peak is over limit. */
static double handcrafted_makespan(int kind, const struct pps_sim_costs *c, int m, int limit)
{
    struct pps_schedule s = PPS_SCHEDULE_INIT;
    struct pps_err err = {0};
    double ms = -1;

    CHECK_EQ_INT(pps_schedule_generate(&s, kind, c->p, m, 1, &err), 0);
    if (pps_schedule_live_peak(&s) <= limit)
        ms = makespan(&s, c);
    pps_schedule_release(&s);
    return ms;
}

/* tF = tB = tW: ZB-H1's bubble at a limit of p, ZB-H2's at 2p-1, which are the best there are
 * (ZB-H2's is stage p-1's own work after its first F arrives). */
static void test_equal_costs_match_zb_h1_at_p_and_zb_h2_at_2p_minus_1(void)
{
    const int ps[] = {2, 3, 4, 6, 8}, mm[] = {1, 2, 3, 4};
    for (size_t i = 0; i < sizeof(ps) / sizeof(ps[0]); i++) {
        for (size_t j = 0; j < sizeof(mm) / sizeof(mm[0]); j++) {
            int p = ps[i], m = mm[j] * p;
            struct pps_sim_costs c;
            struct pps_schedule a = PPS_SCHEDULE_INIT;

            costs_init(&c, p, 1, 0, NULL);
            for (int h2 = 0; h2 < 2; h2++) {
                int limit = h2 ? 2 * p - 1 : p;
                double hand =
                    handcrafted_makespan(h2 ? PPS_SCHED_ZB_H2 : PPS_SCHED_ZB_H1, &c, m, limit);
                double ms = auto_makespan(&a, &c, m, limit);

                CHECK(hand > 0);
                if (fabs(ms - hand) > 1e-9)
                    fprintf(stderr, "  p=%d m=%d limit %d: zb-auto %g, %s %g\n", p, m, limit, ms,
                            h2 ? "zb-h2" : "zb-h1", hand);
                CHECK_NEAR(ms, hand, 1e-9);
                pps_schedule_release(&a);
            }
            pps_sim_costs_release(&c);
        }
    }
}

/* tW = tF/2, a message half an F, stages out of balance: under every limit zb-auto is no
 * slower than each handcrafted v=1 schedule that fits the limit. */
static void test_unequal_costs_never_worse_than_handcrafted(void)
{
    static const int kinds[] = {PPS_SCHED_1F1B, PPS_SCHED_ZB_H1, PPS_SCHED_ZB_H2};
    const double mult[2][4] = {{1, 1, 1, 1}, {1, 1.3, 0.8, 1.1}};
    const int ps[] = {2, 3, 4, 8}, ms_[] = {3, 8, 16, 24};
    int fitted = 0;

    for (size_t i = 0; i < sizeof(ps) / sizeof(ps[0]); i++) {
        for (size_t j = 0; j < sizeof(ms_) / sizeof(ms_[0]); j++) {
            for (int im = 0; im < 2; im++) {
                int p = ps[i], m = ms_[j];
                const int limits[] = {1, p - 1 > 0 ? p - 1 : 1, p, (3 * p) / 2, 2 * p - 1, 2 * p};
                struct pps_sim_costs c;

                costs_init(&c, p, 0.5, 0.5, mult[im]);
                for (size_t l = 0; l < sizeof(limits) / sizeof(limits[0]); l++) {
                    struct pps_schedule a = PPS_SCHEDULE_INIT;
                    double ms = auto_makespan(&a, &c, m, limits[l]);

                    for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
                        double hand = handcrafted_makespan(kinds[k], &c, m, limits[l]);

                        if (hand < 0)
                            continue;
                        fitted++;
                        if (ms > hand + 1e-9)
                            fprintf(stderr, "  p=%d m=%d limit %d: zb-auto %g, %s %g\n", p, m,
                                    limits[l], ms, pps_sched_kind_name(kinds[k]), hand);
                        CHECK(ms <= hand + 1e-9);
                    }
                    pps_schedule_release(&a);
                }
                pps_sim_costs_release(&c);
            }
        }
    }
    CHECK(fitted > 100); /* the comparisons happened */
}

/* Between ZB-H1's limit and ZB-H2's, zb-auto puts the extra memory to use: strictly faster than
 * ZB-H1 (ZB-H2 does not fit). And it is faster than ZB-H2 itself where costs are unequal. */
static void test_uses_memory_between_h1_and_h2(void)
{
    struct pps_sim_costs c;
    struct pps_schedule a = PPS_SCHEDULE_INIT;
    int p = 4, m = 12;

    costs_init(&c, p, 0.5, 0.5, NULL);
    CHECK(handcrafted_makespan(PPS_SCHED_ZB_H2, &c, m, 2 * p - 2) < 0);
    CHECK(auto_makespan(&a, &c, m, 2 * p - 2) <
          handcrafted_makespan(PPS_SCHED_ZB_H1, &c, m, p) - 1e-6);
    pps_schedule_release(&a);
    CHECK(auto_makespan(&a, &c, m, 2 * p - 1) <
          handcrafted_makespan(PPS_SCHED_ZB_H2, &c, m, 2 * p - 1) - 1e-6);
    pps_schedule_release(&a);
    pps_sim_costs_release(&c);
}

/* Limits from 1 (one microbatch at a time) to past m all give valid schedules within them;
 * one microbatch at a time is the serial pipeline, the slowest there is. */
static void test_every_limit_is_kept(void)
{
    const double mult[4] = {1.2, 1, 0.7, 1.4};
    struct pps_sim_costs c;
    double serial = 0;
    int p = 5, m = 10;

    costs_init(&c, p, 0.5, 0.25, mult);
    for (int limit = 1; limit <= m + 2; limit++) {
        struct pps_schedule a = PPS_SCHEDULE_INIT;
        double ms = auto_makespan(&a, &c, m, limit);

        if (limit == 1) {
            /* Each microbatch down and back up, and stage 0's W, before the next starts (the
             * other stages' W's fit in the wait for it): m times the chain and that W. */
            for (int s = 0; s < p; s++)
                serial += m * (c.tf[s] + c.tb[s]) + (s < p - 1 ? 2 * m * c.tcomm : 0);
            serial += m * c.tw[0];
            CHECK_NEAR(ms, serial, 1e-9);
        } else {
            CHECK(ms < serial);
        }
        pps_schedule_release(&a);
    }
    pps_sim_costs_release(&c);
}

static void test_deterministic(void)
{
    const double mult[4] = {1, 1.3, 0.8, 1.1};
    struct pps_sim_costs c;
    struct pps_schedule a = PPS_SCHEDULE_INIT, b = PPS_SCHEDULE_INIT;
    struct pps_err err = {0};

    costs_init(&c, 8, 0.5, 0.5, mult);
    CHECK_EQ_INT(pps_schedule_auto(&a, &c, 32, 10, &err), 0);
    CHECK_EQ_INT(pps_schedule_auto(&b, &c, 32, 10, &err), 0);
    CHECK(pps_schedule_equal(&a, &b));
    pps_schedule_release(&a);
    pps_schedule_release(&b);
    pps_sim_costs_release(&c);
}

/* pps_schedule_generate's zb-auto is the one for unit costs and a limit of p. */
static void test_generate_is_unit_costs_at_limit_p(void)
{
    struct pps_sim_costs c;
    struct pps_schedule a = PPS_SCHEDULE_INIT, g = PPS_SCHEDULE_INIT;
    struct pps_err err = {0};

    costs_init(&c, 6, 1, 0, NULL);
    CHECK_EQ_INT(pps_schedule_auto(&a, &c, 15, 6, &err), 0);
    CHECK_EQ_INT(pps_schedule_generate(&g, PPS_SCHED_ZB_AUTO, 6, 15, 1, &err), 0);
    CHECK_EQ_INT(g.kind, PPS_SCHED_ZB_AUTO);
    CHECK(pps_schedule_equal(&a, &g));
    pps_schedule_release(&g);
    CHECK_EQ_INT(pps_schedule_generate(&g, PPS_SCHED_ZB_AUTO, 6, 15, 2, &err), PPS_EINVAL);
    CHECK_STR_CONTAINS(err.msg, "v=1");
    pps_schedule_release(&a);
    pps_sim_costs_release(&c);
}

static void test_bad_limits_and_costs_are_refused(void)
{
    struct pps_sim_costs c;
    struct pps_schedule a = PPS_SCHEDULE_INIT;
    struct pps_err err = {0};

    costs_init(&c, 4, 1, 0, NULL);
    CHECK_EQ_INT(pps_schedule_auto(&a, &c, 8, 0, &err), PPS_EINVAL);
    CHECK_STR_CONTAINS(err.msg, "at least 1");
    CHECK_EQ_INT(pps_schedule_auto(&a, &c, 0, 4, &err), PPS_EINVAL);
    c.tw[2] = -1;
    CHECK_EQ_INT(pps_schedule_auto(&a, &c, 8, 4, &err), PPS_EINVAL);
    CHECK_STR_CONTAINS(err.msg, "stage 2");
    CHECK(a.actions == NULL);
    pps_sim_costs_release(&c);
}

static const struct test_case cases[] = {
    TEST(test_equal_costs_match_zb_h1_at_p_and_zb_h2_at_2p_minus_1),
    TEST(test_unequal_costs_never_worse_than_handcrafted),
    TEST(test_uses_memory_between_h1_and_h2),
    TEST(test_every_limit_is_kept),
    TEST(test_deterministic),
    TEST(test_generate_is_unit_costs_at_limit_p),
    TEST(test_bad_limits_and_costs_are_refused),
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    return test_main(cases, argc, argv);
}
