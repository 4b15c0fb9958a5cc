/*
 * identity.c - which shards make one run: the run id every shard of a run carries, the check
 * that refuses shards of two runs side by side (a directory that holds 1f1b beside gpipe, p=4
 * beside p=8, a simulation beside an emulated run), and the ranks a run's world has that no
 * shard holds.
 *
 * Everything here reads the run's metadata only (sorted by rank, then key), so the loader, the
 * follower and merge share one check however they read the rows.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "storage_int.h"

/* ---- one run or two ----------------------------------------------------------------------- */

/*
 * The keys that are the same on every rank of one run. The run id says it for runs written
 * since it exists; for older ones, the schedule, the sizes, the world and where the run came
 * from catch most shards copied between runs. A key is compared only where both ranks have it:
 * a rank killed before it wrote its metadata is not another run.
 */
enum {
    ID_SOURCE,
    ID_BACKEND,
    ID_SCHEDULE,
    ID_P,
    ID_M,
    ID_V,
    ID_WORLD,
    ID_ITERS,
    ID_RUN_ID,
    N_IDENT
};
/* In the order a difference is named: what a user tells runs apart by first, the run id last. */
static const char *const ident_keys[N_IDENT] = {"source", "backend", "schedule", "p",     "m",
                                                "v",      "world",   "iters",    "run_id"};

struct ident {
    int rank;
    int closed; /* complete = 1: the rank closed its shard, every key it would write is there */
    const char *v[N_IDENT];
};

/* The identity of the rank whose meta rows start at meta[*i]; *i moves past them. */
static void ident_read(const struct pps_run *run, size_t *i, struct ident *id)
{
    const char *complete = NULL;

    memset(id, 0, sizeof(*id));
    id->rank = run->meta[*i].rank;
    for (; *i < run->n_meta && run->meta[*i].rank == id->rank; (*i)++) {
        if (!strcmp(run->meta[*i].key, "complete"))
            complete = run->meta[*i].value;
        for (size_t k = 0; k < N_IDENT; k++)
            if (!strcmp(run->meta[*i].key, ident_keys[k]))
                id->v[k] = run->meta[*i].value;
    }
    /* The tracer says "tracer" when it opens a shard; the program that opened the tracer says
     * what the run is a moment later ("ppscope" and its run id). A live rank caught in between
     * has not written its run's metadata yet: it is not another run. */
    if (id->v[ID_SOURCE] && !strcmp(id->v[ID_SOURCE], "tracer") && !id->v[ID_RUN_ID] && complete &&
        !strcmp(complete, "0"))
        id->v[ID_SOURCE] = NULL;
    id->closed = complete && !strcmp(complete, "1");
}

/* The first key both have and on which they differ, or -1. */
static int ident_differs(const struct ident *a, const struct ident *b)
{
    for (size_t k = 0; k < N_IDENT; k++)
        if (a->v[k] && b->v[k] && strcmp(a->v[k], b->v[k]) != 0)
            return (int)k;
    return -1;
}

static const char *or_q(const char *s)
{
    return s ? s : "?";
}

/* Where a rank's rows are: its shard in a directory, the rank in one file. */
static void rank_where(const struct pps_run *run, int rank, char *buf, size_t len)
{
    if (run->merged)
        snprintf(buf, len, "rank %d", rank);
    else
        snprintf(buf, len, PPS__SHARD_FMT, rank);
}

/* "1f1b p=4 m=4 (ppscope, run 5e0c9a1b2d3f4a5b)": what a user tells two runs apart by. */
static void ident_text(const struct ident *id, char *buf, size_t len)
{
    const char *run_id = id->v[ID_RUN_ID];

    snprintf(buf, len, "%.40s p=%.12s m=%.12s (%.20s, %s%.40s)", or_q(id->v[ID_SCHEDULE]),
             or_q(id->v[ID_P]), or_q(id->v[ID_M]), or_q(id->v[ID_SOURCE]),
             run_id ? "run " : "no run id", run_id ? run_id : "");
}

static int two_runs(const struct pps_run *run, const char *place, const struct ident *a,
                    const struct ident *b, int key, struct pps_err *err)
{
    char wa[32], wb[32], ta[160], tb[160], values[64] = "";

    rank_where(run, a->rank, wa, sizeof(wa));
    rank_where(run, b->rank, wb, sizeof(wb));
    ident_text(a, ta, sizeof(ta));
    ident_text(b, tb, sizeof(tb));
    /* ident_text() shows the schedule, p, m, the source and the run id; any other key's two
     * values are named after it. */
    if (key == ID_BACKEND || key == ID_V || key == ID_WORLD || key == ID_ITERS)
        snprintf(values, sizeof(values), ": %.24s and %.24s", a->v[key], b->v[key]);
    return pps_err_set(
        err, PPS_EFORMAT, "%s: two runs in %s: %s is %s, %s is %s (their %s differs%s)", run->path,
        place, wa, ta, wb, tb, key == ID_RUN_ID ? "run id" : ident_keys[key], values);
}

/* The run's world (meta world of its lowest rank that has one); 0 when it has none or it is not
 * a count of ranks. */
static int run_world(const struct pps_run *run)
{
    const char *s = pps_run_meta(run, "world");
    int64_t w;

    if (!s || pps__parse_i64(s, &w) != 0 || w < 1 || w > (int64_t)INT16_MAX + 1)
        return 0;
    return (int)w;
}

int pps__run_identity_check(const struct pps_run *run, struct pps_err *err)
{
    return pps__run_identity_check_in(run, run->merged ? "one file" : "one directory", err);
}

int pps__run_identity_check_in(const struct pps_run *run, const char *place, struct pps_err *err)
{
    struct ident first, id;
    size_t i = 0;
    int world = run_world(run), key;

    struct ident with = {-1, 0, {NULL}}; /* the first rank with a run id */
    int lacking = -1;                    /* a closed rank without one */

    if (run->n_meta == 0)
        return 0;
    ident_read(run, &i, &first);
    if (first.v[ID_RUN_ID])
        with = first;
    else if (first.closed)
        lacking = first.rank;
    while (i < run->n_meta) {
        ident_read(run, &i, &id);
        if ((key = ident_differs(&first, &id)) >= 0)
            return two_runs(run, place, &first, &id, key, err);
        if (id.v[ID_RUN_ID] && with.rank < 0)
            with = id;
        else if (!id.v[ID_RUN_ID] && id.closed && lacking < 0)
            lacking = id.rank;
    }
    /* A run id is written with a run's first metadata: a rank that closed its shard without
     * one, beside ranks that have one, is another run's (written before run ids) or damaged. */
    if (with.rank >= 0 && lacking >= 0) {
        char wa[32], wl[32];
        rank_where(run, lacking, wl, sizeof(wl));
        rank_where(run, with.rank, wa, sizeof(wa));
        return pps_err_set(err, PPS_EFORMAT,
                           "%s: %s has no run id but %s is of run %.40s: a shard of another run, "
                           "or its metadata damaged",
                           run->path, wl, wa, with.v[ID_RUN_ID]);
    }
    /* Every rank agrees on the world: one beyond it came from a larger run. */
    for (i = 0; world > 0 && i < run->n_meta; i++) {
        if (run->meta[i].rank >= world) {
            char where[32];
            rank_where(run, run->meta[i].rank, where, sizeof(where));
            return pps_err_set(err, PPS_EFORMAT,
                               "%s: %s holds rank %d, outside the run's world of %d rank%s "
                               "(a shard of another run?)",
                               run->path, where, run->meta[i].rank, world, world == 1 ? "" : "s");
        }
    }
    return 0;
}

/* ---- missing ranks ------------------------------------------------------------------------ */

int pps_run_missing_ranks(const struct pps_run *run, int *ranks, int max)
{
    struct pps__rank_set *seen;
    int world = run ? run_world(run) : 0, n = 0;

    if (world == 0 || !(seen = calloc(1, sizeof(*seen))))
        return 0;
    for (size_t i = 0; i < run->n_meta; i++)
        if (run->meta[i].rank >= 0 && run->meta[i].rank <= INT16_MAX)
            seen->bits[run->meta[i].rank / 8] |= (unsigned char)(1u << (run->meta[i].rank % 8));
    for (int r = 0; r < world; r++) {
        if (seen->bits[r / 8] & (1u << (r % 8)))
            continue;
        if (ranks && n < max)
            ranks[n] = r;
        n++;
    }
    free(seen);
    return n;
}

int pps_run_missing_text(const struct pps_run *run, char *buf, size_t len)
{
    enum { SHOWN = 8 };
    int ranks[SHOWN], n = pps_run_missing_ranks(run, ranks, SHOWN);
    size_t used = 0;

    if (len)
        buf[0] = '\0';
    for (int k = 0; k < n && k < SHOWN && used < len; k++)
        used += (size_t)snprintf(buf + used, len - used, "%s%d", k ? ", " : "", ranks[k]);
    if (n > SHOWN && used < len)
        snprintf(buf + used, len - used, ", ... (%d in all)", n);
    return n;
}

/* ---- writers ------------------------------------------------------------------------------ */

/* Whether pid has exited and waits to be reaped (Linux's /proc; elsewhere, never said): a dead
 * writer whose parent has not collected it, as a job launcher that ended may leave. */
static int is_zombie(pid_t pid)
{
    char path[64], buf[512];
    const char *paren;
    size_t n;
    FILE *f;

    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    if (!(f = fopen(path, "r")))
        return 0;
    n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    /* "pid (comm) S ...": comm may hold spaces and parentheses, the state follows the last ')'. */
    if (!(paren = strrchr(buf, ')')) || paren[1] != ' ')
        return 0;
    return paren[2] == 'Z' || paren[2] == 'X';
}

/* Whether the process that wrote a rank (meta writer_pid, on meta host) is known to be gone:
 * on this host, and no process has its id (or only a zombie does). */
int pps__writer_gone(const char *host, const char *writer_host, const char *pid_text)
{
    /* A gathered copy's writer is the gather, on its own host (writer_host); a rank's shard is
     * written on the rank's host. */
    if (writer_host)
        host = writer_host;
    char here[256];
    int64_t pid;

    if (!host || !pid_text || pps__parse_i64(pid_text, &pid) != 0 || pid < 1 || pid > INT32_MAX)
        return 0;
    if (gethostname(here, sizeof(here)) != 0)
        return 0;
    here[sizeof(here) - 1] = '\0';
    if (strcmp(here, host) != 0)
        return 0;
    /* EPERM: a process of another user has the id, perhaps the writer itself. */
    if (kill((pid_t)pid, 0) != 0)
        return errno == ESRCH;
    return is_zombie((pid_t)pid);
}

int pps_run_writers_gone(const struct pps_run *run)
{
    int incomplete = 0;

    if (!run || run->complete)
        return 0;
    for (size_t i = 0; i < run->n_meta;) {
        const char *complete = NULL, *host = NULL, *writer_host = NULL, *pid = NULL;
        int rank = run->meta[i].rank;

        for (; i < run->n_meta && run->meta[i].rank == rank; i++) {
            const struct pps_meta_entry *e = &run->meta[i];
            if (!strcmp(e->key, "complete"))
                complete = e->value;
            else if (!strcmp(e->key, "host"))
                host = e->value;
            else if (!strcmp(e->key, "writer_host"))
                writer_host = e->value;
            else if (!strcmp(e->key, "writer_pid"))
                pid = e->value;
        }
        if (complete && !strcmp(complete, "1"))
            continue;
        if (!pps__writer_gone(host, writer_host, pid))
            return 0;
        incomplete = 1;
    }
    return incomplete;
}

int pps_run_finished(const struct pps_run *run)
{
    return run && (run->complete || pps_run_writers_gone(run));
}
