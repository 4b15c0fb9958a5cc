/*
 * runner_selftest.c - a unit binary whose cases fail and skip on purpose, for runner_stops.sh to
 * check the runner: a failed CHECK stops its case (nothing after it runs, also when it fails in
 * a helper the case calls), the next case still runs, and TEST_SKIP from a helper skips only its
 * case. Not a test on its own: ctest runs it through the script.
 */
#include "test.h"

static int helper_check(int x)
{
    CHECK(x > 0); /* stops the calling case */
    return x;
}

static void helper_skip(void)
{
    TEST_SKIP("a helper has nothing to test with");
}

static void test_fails_in_the_case(void)
{
    CHECK_EQ_INT(1 + 1, 3);
    fprintf(stderr, "REACHED after a failed check\n");
}

static void test_fails_in_a_helper(void)
{
    (void)helper_check(-1);
    fprintf(stderr, "REACHED after a failed check in a helper\n");
}

static void test_skips_in_a_helper(void)
{
    helper_skip();
    fprintf(stderr, "REACHED after a skip\n");
}

static void test_passes(void)
{
    CHECK(helper_check(2) == 2);
    CHECK_NEAR(0.1 + 0.2, 0.3, 1e-12);
}

static const struct test_case cases[] = {
    TEST(test_fails_in_the_case),
    TEST(test_fails_in_a_helper),
    TEST(test_skips_in_a_helper),
    TEST(test_passes),
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    return test_main(cases, argc, argv);
}
