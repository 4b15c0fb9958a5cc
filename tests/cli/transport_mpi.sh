#!/bin/sh
# transport_mpi.sh - the MPI transport's tests (tests/unit/test_transport_mpi.c) as NP ranks of
# one mpirun on this machine, or, with CASE peer_exit, a 2-rank job in which rank 1 exits without
# sending what rank 0 waits for. That job must END, and with a failure: Open MPI's mpirun (v4)
# kills the job when a rank exits without MPI_Finalize, before rank 0's recv could say anything;
# an MPI with fault tolerance lets the recv fail with PPS_EPEER instead (rank 0 then prints it and
# exits 4). Either passes; a job still running after the timeout, or one that succeeds, fails.
# Exits 77 (skipped) when ppscope was built without MPI, after the program has checked that the
# transport then says so, or when there is no mpirun.
# CASE peer_abort: rank 1 fails through pps_transport_mpi_abort(): the job must end, with a
# failure, and the reason on stderr.
# Usage: transport_mpi.sh TEST_PROGRAM HAVE_MPI MPIEXEC NP [peer_exit|peer_abort]
set -u
USAGE="usage: transport_mpi.sh TEST_PROGRAM HAVE_MPI MPIEXEC NP [peer_exit|peer_abort]"
PROG=${1:?$USAGE}
HAVE_MPI=${2:-}
MPIEXEC=${3:-}
NP=${4:?$USAGE}
CASE=${5:-}

if [ "$HAVE_MPI" != 1 ]; then
    "$PROG"
    exit $? # 77 once it has checked the "built without MPI" error, 1 if that was wrong
fi
[ -n "$MPIEXEC" ] || MPIEXEC=$(command -v mpirun || command -v mpiexec || true)
if [ -z "$MPIEXEC" ] || ! [ -x "$MPIEXEC" ]; then
    echo "skipped: no mpirun" >&2
    exit 77
fi
if ! command -v timeout >/dev/null 2>&1; then
    echo "skipped: no timeout(1) to stop a hung job" >&2
    exit 77
fi

TMP=$(mktemp -d "${TMPDIR:-/tmp}/pps-transport-mpi-XXXXXX") || exit 1
trap 'rm -rf "$TMP"' EXIT INT TERM
mkdir "$TMP/run" || exit 1
export PPS_TEST_RUN_DIR="$TMP/run"
# Under PPS_SANITIZE, Open MPI's own allocations read as leaks; the other checks stay on.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
# Open MPI refuses root without --allow-run-as-root, may find fewer cores than ranks, and passes on
# only the variables it is told to; MPICH's mpiexec passes the whole environment.
if "$MPIEXEC" --version 2>/dev/null | grep -qiE "open ?mpi|openrte|open-mpi"; then
    set -- --allow-run-as-root --oversubscribe -x PPS_TEST_RUN_DIR -x ASAN_OPTIONS
else
    set --
fi

if [ -z "$CASE" ]; then
    timeout -k 10 240 "$MPIEXEC" "$@" -np "$NP" "$PROG"
    rc=$?
    if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
        echo "FAIL: $NP ranks still running after 240 s: a send or recv hung" >&2
        exit 1
    fi
    exit $rc
fi

if [ "$CASE" = peer_abort ]; then
    timeout -k 10 120 "$MPIEXEC" "$@" -np 2 "$PROG" peer_abort >"$TMP/out" 2>"$TMP/err"
    rc=$?
    cat "$TMP/out" "$TMP/err"
    if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
        echo "FAIL: rank 1 called pps_transport_mpi_abort and the job still hung after 120 s" >&2
        exit 1
    fi
    if [ $rc -eq 0 ]; then
        echo "FAIL: rank 1 aborted, yet the job succeeded" >&2
        exit 1
    fi
    if ! grep -q "ppscope: stage 1 (rank 1) failed: injected failure; aborting the MPI job" \
        "$TMP/err"; then
        echo "FAIL: the aborting rank did not say who failed and why" >&2
        exit 1
    fi
    echo "ok: pps_transport_mpi_abort ended the job (exit $rc) with its reason"
    exit 0
fi
if [ "$CASE" != peer_exit ]; then
    echo "$USAGE" >&2
    exit 2
fi

timeout -k 10 120 "$MPIEXEC" "$@" -np 2 "$PROG" peer_exit >"$TMP/out" 2>"$TMP/err"
rc=$?
cat "$TMP/out" "$TMP/err"
if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
    echo "FAIL: rank 1 exited without sending and the job still hung after 120 s" >&2
    exit 1
fi
if [ $rc -eq 0 ]; then
    echo "FAIL: rank 1 exited without MPI_Finalize, yet the job succeeded" >&2
    exit 1
fi
if grep -q "rank 0: recv returned" "$TMP/out"; then
    if ! grep -q "recv returned -8: stage 1 (rank 1) failed" "$TMP/out"; then
        echo "FAIL: rank 0's recv returned, but not PPS_EPEER naming stage 1" >&2
        exit 1
    fi
    echo "ok: rank 0's recv failed with PPS_EPEER naming stage 1 (job exit $rc)"
else
    echo "ok: the MPI launcher ended the job (exit $rc) before rank 0's recv returned"
fi
exit 0
