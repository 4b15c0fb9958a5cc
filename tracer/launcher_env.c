/*
 * launcher_env.c - the rank and world size a launcher (mpirun, srun, torchrun) gave this
 * process, read from its environment variables, so that a tracer opened with rank -1 names its
 * shard after the right rank without the program passing it.
 */
#include <limits.h>
#include <stdlib.h>

#include "tracer_int.h"

/* One launcher's variables; size is NULL where the launcher has no size variable of its own;
 * marker, when set, is a variable that must also be present for the entry to apply. */
struct launcher {
    const char *rank;
    const char *size;
    const char *marker;
};

/*
 * First match wins, in this order (tracer_int.h's contract): the MPI launchers' own names first;
 * then torchrun's RANK and WORLD_SIZE when torchrun's own TORCHELASTIC_RUN_ID says it set them,
 * before Slurm, because torchrun started by srun sees SLURM_PROCID too, and that is the node's
 * task, not the worker's rank; then Slurm; then RANK and WORLD_SIZE alone, last, since other
 * software sets those names too.
 */
static const struct launcher launchers[] = {
    {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", NULL},
    {"PMI_RANK", "PMI_SIZE", NULL},
    {"PMIX_RANK", NULL, NULL},
    {"RANK", "WORLD_SIZE", "TORCHELASTIC_RUN_ID"},
    {"SLURM_PROCID", "SLURM_NTASKS", NULL},
    {"RANK", "WORLD_SIZE", NULL},
};

/*
 * Parses a whole variable as a decimal integer >= 0 that fits in an int: digits only, no sign,
 * no spaces, nothing after them. A value that is anything else is not trusted at all: better
 * to ignore the variable than to write rank 0's shard from rank 12 because of "12 ".
 */
static int parse_count(const char *s, int *out)
{
    long long v = 0;

    if (!s || !*s)
        return -1;
    for (; *s; s++) {
        if (*s < '0' || *s > '9')
            return -1;
        v = v * 10 + (*s - '0');
        if (v > INT_MAX)
            return -1;
    }
    *out = (int)v;
    return 0;
}

int pps__launcher_rank(int *rank, int *world)
{
    for (size_t i = 0; i < sizeof(launchers) / sizeof(launchers[0]); i++) {
        int r, w;

        if (launchers[i].marker && !getenv(launchers[i].marker))
            continue;
        if (parse_count(getenv(launchers[i].rank), &r) != 0)
            continue;
        /* A size that does not parse, or that cannot hold the rank, is unknown; the rank alone
         * is still worth having: it names the shard. */
        if (!launchers[i].size || parse_count(getenv(launchers[i].size), &w) != 0 || w <= r)
            w = -1;
        *rank = r;
        *world = w;
        return 0;
    }
    return -1;
}
