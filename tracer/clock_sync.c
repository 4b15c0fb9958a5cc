/*
 * clock_sync.c - this rank's clock offset to rank 0, measured by ping-pong over MPI (Cristian's
 * method): rank r stamps t0 and sends, rank 0 replies with its clock t1 read on receipt, rank r
 * stamps t2. Rank 0 read t1 somewhere between t0 and t2 on r's clock, so rank 0's clock minus
 * r's is t1 - (t0 + t2) / 2, off by at most (t2 - t0) / 2. Of several exchanges the one with the
 * smallest round trip has the tightest bound, and is kept.
 *
 * MPI is called through the program's own MPI library, found at run time (mpi_dl.h): the tracer
 * links no MPI, so that the libraries built from it load where there is none. A sync in a
 * process without MPI fails with PPS_EINVAL and says so.
 */
#include "pps_config.h"
#include "tracer_int.h"

#ifdef PPS_HAVE_MPI

#include "mpi_dl.h"

/* Exchanges per rank. The first few pay for connection set-up and cold caches; the minimum of
 * 32 round trips is stable to a few hundred nanoseconds on one machine or a fast network. */
#define SYNC_EXCHANGES 32

enum { TAG_GO = 1, TAG_PING = 2, TAG_PONG = 3 };

static int mpi_fail(const struct pps__mpi *m, struct pps_err *err, int rc, const char *what)
{
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;

    if (m->Error_string(rc, msg, &len) != MPI_SUCCESS)
        snprintf(msg, sizeof(msg), "MPI error %d", rc);
    return pps_err_set(err, PPS_EIO, "clock sync: %s failed: %s", what, msg);
}

/* Rank 0's side of the exchanges with peer: let it start, then answer each ping with the time
 * it arrived. The go message keeps a peer's first ping from waiting in rank 0's queue while
 * rank 0 serves the peers before it, which would only waste that exchange. */
static int serve(const struct pps__mpi *m, MPI_Comm comm, int peer, struct pps_err *err)
{
    int go = 0, rc;

    if ((rc = m->Send(&go, 1, m->int_type, peer, TAG_GO, comm)) != MPI_SUCCESS)
        return mpi_fail(m, err, rc, "MPI_Send");
    for (int k = 0; k < SYNC_EXCHANGES; k++) {
        int64_t t0, t1;

        if ((rc = m->Recv(&t0, 1, m->int64_type, peer, TAG_PING, comm, MPI_STATUS_IGNORE)) !=
            MPI_SUCCESS)
            return mpi_fail(m, err, rc, "MPI_Recv");
        t1 = pps_trace_now();
        if ((rc = m->Send(&t1, 1, m->int64_type, peer, TAG_PONG, comm)) != MPI_SUCCESS)
            return mpi_fail(m, err, rc, "MPI_Send");
    }
    return 0;
}

/* A peer's side: wait for rank 0's go, then ping and keep the tightest exchange. */
static int measure(const struct pps__mpi *m, MPI_Comm comm, struct pps__clock_sample *out,
                   struct pps_err *err)
{
    int go, rc;
    struct pps__clock_sample best = {0, INT64_MAX, 0};

    if ((rc = m->Recv(&go, 1, m->int_type, 0, TAG_GO, comm, MPI_STATUS_IGNORE)) != MPI_SUCCESS)
        return mpi_fail(m, err, rc, "MPI_Recv");
    for (int k = 0; k < SYNC_EXCHANGES; k++) {
        int64_t t0, t1, t2;

        t0 = pps_trace_now();
        if ((rc = m->Send(&t0, 1, m->int64_type, 0, TAG_PING, comm)) != MPI_SUCCESS)
            return mpi_fail(m, err, rc, "MPI_Send");
        if ((rc = m->Recv(&t1, 1, m->int64_type, 0, TAG_PONG, comm, MPI_STATUS_IGNORE)) !=
            MPI_SUCCESS)
            return mpi_fail(m, err, rc, "MPI_Recv");
        t2 = pps_trace_now();
        if (t2 - t0 < best.rtt_ns) {
            best.rtt_ns = t2 - t0;
            best.at_ns = t0 + (t2 - t0) / 2;
            best.offset_ns = t1 - best.at_ns;
        }
    }
    *out = best;
    return 0;
}

/* Whether MPI may be called here, and on this thread: 0, or the reason it may not. */
static int check_usable(const struct pps__mpi *m, struct pps_err *err)
{
    int inited = 0, finalized = 0, level, is_main, rc;

    if ((rc = m->Initialized(&inited)) != MPI_SUCCESS)
        return mpi_fail(m, err, rc, "MPI_Initialized");
    if (!inited)
        return pps_err_set(err, PPS_EINVAL, "clock sync needs MPI to be initialised");
    if ((rc = m->Finalized(&finalized)) != MPI_SUCCESS)
        return mpi_fail(m, err, rc, "MPI_Finalized");
    if (finalized)
        return pps_err_set(err, PPS_EINVAL, "clock sync needs MPI, which was already finalised");
    if ((rc = m->Query_thread(&level)) != MPI_SUCCESS)
        return mpi_fail(m, err, rc, "MPI_Query_thread");
    if ((rc = m->Is_thread_main(&is_main)) != MPI_SUCCESS)
        return mpi_fail(m, err, rc, "MPI_Is_thread_main");
    if (level < MPI_THREAD_SERIALIZED && !is_main)
        return pps_err_set(err, PPS_EINVAL,
                           "clock sync must run on the thread that initialised MPI (MPI was "
                           "initialised without MPI_THREAD_SERIALIZED)");
    return 0;
}

/* The exchanges on our own communicator, which is freed before returning. */
static int sync_on_dup(const struct pps__mpi *m, struct pps__clock_sample *out, struct pps_err *err)
{
    MPI_Comm comm;
    int rank, size, rc, ret = 0;

    /* Our own communicator: the program's messages on MPI_COMM_WORLD can never match ours. Its
     * errors come back as codes: tracing must not abort the job. */
    if ((rc = m->Comm_dup(m->comm_world, &comm)) != MPI_SUCCESS)
        return mpi_fail(m, err, rc, "MPI_Comm_dup");
    if ((rc = m->Comm_set_errhandler(comm, m->errors_return)) != MPI_SUCCESS) {
        ret = mpi_fail(m, err, rc, "MPI_Comm_set_errhandler");
        goto out;
    }
    if ((rc = m->Comm_rank(comm, &rank)) != MPI_SUCCESS ||
        (rc = m->Comm_size(comm, &size)) != MPI_SUCCESS) {
        ret = mpi_fail(m, err, rc, "MPI_Comm_rank/size");
        goto out;
    }
    if (rank == 0) {
        /* One peer at a time: two peers pinging at once would queue behind each other and
         * widen every round trip. */
        for (int peer = 1; peer < size && !ret; peer++)
            ret = serve(m, comm, peer, err);
        out->at_ns = pps_trace_now();
    } else {
        ret = measure(m, comm, out, err);
    }

out:
    if ((rc = m->Comm_free(&comm)) != MPI_SUCCESS && !ret)
        ret = mpi_fail(m, err, rc, "MPI_Comm_free");
    return ret;
}

int pps__clock_sync(struct pps__clock_sample *out, struct pps_err *err)
{
    struct pps__mpi m;
    struct pps__clock_sample s = {0, 0, 0};
    int ret;

    /* The program's MPI, looked up at each sync (twice a run): cheap next to the exchanges, and
     * an MPI the program loaded after an earlier failed sync is found. */
    if (!(ret = pps__mpi_find(&m, err)) && !(ret = check_usable(&m, err)))
        ret = sync_on_dup(&m, &s, err);
    pps__mpi_release(&m);
    if (!ret)
        *out = s;
    return ret;
}

#else /* !PPS_HAVE_MPI */

int pps__clock_sync(struct pps__clock_sample *out, struct pps_err *err)
{
    return pps_err_set(err, PPS_EINVAL, "this ppscope was built without MPI (PPS_WITH_MPI)");
}

#endif
