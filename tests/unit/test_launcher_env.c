/*
 * test_launcher_env.c - pps__launcher_rank(): each launcher's variables, which one wins when
 * several are set, and the strict parsing that ignores a variable rather than trusting a
 * malformed one. Table-driven: each row sets an environment and says what must come out.
 */
#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "tracer_int.h"

#define MAX_VARS 6

/* Every variable pps__launcher_rank() may read; each row starts from none of them set. */
static const char *const all_vars[] = {
    "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "PMI_RANK", "PMI_SIZE",   "PMIX_RANK",
    "SLURM_PROCID",         "SLURM_NTASKS",         "RANK",     "WORLD_SIZE", "TORCHELASTIC_RUN_ID",
};

struct env_row {
    const char *name;
    const char *vars[MAX_VARS][2]; /* name, value; until a NULL name */
    int rc;                        /* 0: found, -1: none */
    int rank, world;
};

/* rank and world start at this, so a "none found" row also checks they are left alone. */
#define UNTOUCHED 12345

static void run_rows(const struct env_row *rows, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const struct env_row *row = &rows[i];
        int rank = UNTOUCHED, world = UNTOUCHED, rc;

        for (size_t v = 0; v < sizeof(all_vars) / sizeof(all_vars[0]); v++)
            unsetenv(all_vars[v]);
        for (int v = 0; v < MAX_VARS && row->vars[v][0]; v++)
            setenv(row->vars[v][0], row->vars[v][1], 1);
        rc = pps__launcher_rank(&rank, &world);
        if (rc != row->rc || rank != row->rank || world != row->world) {
            fprintf(stderr, "  %s: got rc %d rank %d world %d, expected rc %d rank %d world %d\n",
                    row->name, rc, rank, world, row->rc, row->rank, row->world);
            test_failures_++;
        }
    }
    for (size_t v = 0; v < sizeof(all_vars) / sizeof(all_vars[0]); v++)
        unsetenv(all_vars[v]);
}

#define RUN_ROWS(rows) run_rows(rows, sizeof(rows) / sizeof(rows[0]))

static void test_each_launcher(void)
{
    static const struct env_row rows[] = {
        {"nothing set", {{NULL, NULL}}, -1, UNTOUCHED, UNTOUCHED},
        {"Open MPI", {{"OMPI_COMM_WORLD_RANK", "3"}, {"OMPI_COMM_WORLD_SIZE", "8"}}, 0, 3, 8},
        {"PMI", {{"PMI_RANK", "2"}, {"PMI_SIZE", "4"}}, 0, 2, 4},
        {"PMIx: a rank only", {{"PMIX_RANK", "5"}}, 0, 5, -1},
        {"Slurm", {{"SLURM_PROCID", "1"}, {"SLURM_NTASKS", "2"}}, 0, 1, 2},
        {"torchrun", {{"RANK", "7"}, {"WORLD_SIZE", "16"}}, 0, 7, 16},
        {"rank 0 of 1", {{"RANK", "0"}, {"WORLD_SIZE", "1"}}, 0, 0, 1},
        {"a size without its rank is nothing",
         {{"OMPI_COMM_WORLD_SIZE", "8"}, {"PMI_SIZE", "4"}, {"SLURM_NTASKS", "2"}},
         -1,
         UNTOUCHED,
         UNTOUCHED},
    };
    RUN_ROWS(rows);
}

static void test_first_match_wins(void)
{
    static const struct env_row rows[] = {
        {"Open MPI before the rest",
         {{"OMPI_COMM_WORLD_RANK", "1"},
          {"OMPI_COMM_WORLD_SIZE", "2"},
          {"PMI_RANK", "6"},
          {"SLURM_PROCID", "0"},
          {"RANK", "5"},
          {"WORLD_SIZE", "9"}},
         0,
         1,
         2},
        {"PMI before PMIx", {{"PMI_RANK", "2"}, {"PMI_SIZE", "4"}, {"PMIX_RANK", "9"}}, 0, 2, 4},
        {"PMIx before Slurm",
         {{"PMIX_RANK", "3"}, {"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "1"}},
         0,
         3,
         -1},
        {"Slurm before a bare RANK",
         {{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "4"}, {"RANK", "3"}, {"WORLD_SIZE", "8"}},
         0,
         0,
         4},
        /* torchrun under srun: the worker's RANK, not the node's SLURM_PROCID. */
        {"torchrun before Slurm",
         {{"SLURM_PROCID", "0"},
          {"SLURM_NTASKS", "4"},
          {"RANK", "3"},
          {"WORLD_SIZE", "8"},
          {"TORCHELASTIC_RUN_ID", "none"}},
         0,
         3,
         8},
        /* The sizes never mix: the winner's size or none, not another launcher's. */
        {"no size from another launcher",
         {{"PMIX_RANK", "1"}, {"PMI_SIZE", "4"}, {"WORLD_SIZE", "4"}},
         0,
         1,
         -1},
    };
    RUN_ROWS(rows);
}

static void test_strict_parsing(void)
{
    static const struct env_row rows[] = {
        {"empty rank falls through", {{"OMPI_COMM_WORLD_RANK", ""}, {"RANK", "2"}}, 0, 2, -1},
        {"trailing garbage", {{"OMPI_COMM_WORLD_RANK", "1x"}, {"RANK", "2"}}, 0, 2, -1},
        {"trailing space", {{"OMPI_COMM_WORLD_RANK", "1 "}, {"RANK", "2"}}, 0, 2, -1},
        {"leading space", {{"PMI_RANK", " 1"}, {"RANK", "2"}}, 0, 2, -1},
        {"negative", {{"PMI_RANK", "-1"}, {"RANK", "2"}}, 0, 2, -1},
        {"plus sign", {{"PMIX_RANK", "+1"}, {"RANK", "2"}}, 0, 2, -1},
        {"decimal point", {{"SLURM_PROCID", "1.0"}, {"RANK", "2"}}, 0, 2, -1},
        {"hexadecimal", {{"SLURM_PROCID", "0x1"}, {"RANK", "2"}}, 0, 2, -1},
        {"beyond int", {{"SLURM_PROCID", "2147483648"}, {"RANK", "2"}}, 0, 2, -1},
        {"far beyond int", {{"SLURM_PROCID", "99999999999999999999999"}, {"RANK", "2"}}, 0, 2, -1},
        {"largest int", {{"RANK", "2147483647"}}, 0, 2147483647, -1},
        {"leading zeros are decimal", {{"RANK", "010"}, {"WORLD_SIZE", "012"}}, 0, 10, 12},
        {"only malformed ranks",
         {{"OMPI_COMM_WORLD_RANK", "x"}, {"RANK", "-3"}},
         -1,
         UNTOUCHED,
         UNTOUCHED},
        {"malformed size", {{"RANK", "4"}, {"WORLD_SIZE", "8 ranks"}}, 0, 4, -1},
        {"size 0", {{"RANK", "0"}, {"WORLD_SIZE", "0"}}, 0, 0, -1},
        {"size not above the rank", {{"PMI_RANK", "4"}, {"PMI_SIZE", "4"}}, 0, 4, -1},
    };
    RUN_ROWS(rows);
}

static const struct test_case cases[] = {
    TEST(test_each_launcher),
    TEST(test_first_match_wins),
    TEST(test_strict_parsing),
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    return test_main(cases, argc, argv);
}
