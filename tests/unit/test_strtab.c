/*
 * test_strtab.c - common/pps_strtab.h, the interned-string table that the tracer and the store's
 * writer share: ids in first-seen order, the same id for the same string across growth, and the
 * writer's find / reserve / add path giving what intern gives.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pps_strtab.h"
#include "test.h"

static void test_strtab_ids_in_first_seen_order(void)
{
    struct pps_strtab t = {0};

    CHECK_EQ_INT(pps_strtab_find(&t, "gemm"), -1); /* an empty table has no slots yet */
    CHECK_EQ_INT(pps_strtab_intern(&t, "gemm"), 0);
    CHECK_EQ_INT(pps_strtab_intern(&t, "softmax"), 1);
    CHECK_EQ_INT(pps_strtab_intern(&t, "gemm"), 0);
    CHECK_EQ_INT(pps_strtab_intern(&t, ""), 2);
    CHECK_EQ_INT(pps_strtab_find(&t, "softmax"), 1);
    CHECK_EQ_INT(pps_strtab_find(&t, "soft"), -1);
    CHECK_EQ_INT((int)t.n, 3);
    pps_strtab_release(&t);
    CHECK(t.strs == NULL && t.slots == NULL && t.n == 0);
    pps_strtab_release(&t); /* twice is harmless */
}

/* Past the first table (128 slots, 64 strings): every id survives each rehash. */
static void test_strtab_ids_survive_growth(void)
{
    struct pps_strtab t = {0};
    char name[32];
    int bad = 0;

    for (int i = 0; i < 5000; i++) {
        snprintf(name, sizeof(name), "kernel_%d", i);
        if (pps_strtab_intern(&t, name) != i)
            bad++;
    }
    for (int i = 0; i < 5000; i++) {
        snprintf(name, sizeof(name), "kernel_%d", i);
        if (pps_strtab_find(&t, name) != i || strcmp(t.strs[i], name) != 0)
            bad++;
    }
    CHECK_EQ_INT(bad, 0);
    CHECK(t.n_slots >= 2 * t.n);
    pps_strtab_release(&t);
}

/* The writer's path: the id is the n before add, and the table owns the copy. */
static void test_strtab_reserve_then_add(void)
{
    struct pps_strtab t = {0};

    CHECK_EQ_INT(pps_strtab_intern(&t, "a"), 0);
    CHECK_EQ_INT(pps_strtab_reserve(&t), 0);
    CHECK_EQ_INT((int)t.n, 1);
    CHECK_EQ_INT(pps_strtab_add(&t, strdup("b")), 1);
    CHECK_EQ_INT(pps_strtab_find(&t, "b"), 1);
    CHECK_EQ_INT(pps_strtab_intern(&t, "b"), 1);
    pps_strtab_release(&t);
}

static const struct test_case cases[] = {
    TEST(test_strtab_ids_in_first_seen_order),
    TEST(test_strtab_ids_survive_growth),
    TEST(test_strtab_reserve_then_add),
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    return test_main(cases, argc, argv);
}
