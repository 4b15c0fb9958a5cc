#!/bin/sh
# clock_sync_mpi.sh - clock offsets between MPI ranks (tests/unit/test_clock_sync.c) as two ranks
# of one mpirun on this machine, rank 1 with a clock faked PPSCOPE_CLOCK_SKEW_NS ahead of rank 0's.
# Exits 77 (skipped) when ppscope was built without MPI, after checking that clock sync then says
# so, or when there is no mpirun. Usage: clock_sync_mpi.sh TEST_PROGRAM HAVE_MPI [MPIEXEC]
set -u
PROG=${1:?usage: clock_sync_mpi.sh TEST_PROGRAM HAVE_MPI [MPIEXEC]}
HAVE_MPI=${2:?usage: clock_sync_mpi.sh TEST_PROGRAM HAVE_MPI [MPIEXEC]}
MPIEXEC=${3:-}
SKEW=250000000

if [ "$HAVE_MPI" != 1 ]; then
    "$PROG" || exit 1
    echo "skipped: ppscope was built without MPI" >&2
    exit 77
fi
[ -n "$MPIEXEC" ] || MPIEXEC=$(command -v mpirun || command -v mpiexec || true)
if [ -z "$MPIEXEC" ] || ! [ -x "$MPIEXEC" ]; then
    echo "skipped: no mpirun" >&2
    exit 77
fi

TMP=$(mktemp -d "${TMPDIR:-/tmp}/pps-clock-sync-XXXXXX") || exit 1
trap 'rm -rf "$TMP"' EXIT INT TERM

export PPS_TEST_SKEW_NS=$SKEW PPS_TEST_RUN_DIR="$TMP/run"
# Under PPS_SANITIZE, Open MPI's own allocations (many in plugins it unloads, so no suppression can
# name them) read as leaks; the sanitizers' other checks stay on.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
# Open MPI refuses root without the first two, may find fewer cores than ranks, and passes on only
# the variables it is told to; MPICH's mpiexec passes the whole environment and needs none of it.
if "$MPIEXEC" --version 2>/dev/null | grep -qiE "open ?mpi|openrte|open-mpi"; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    set -- --oversubscribe -x PPS_TEST_SKEW_NS -x PPS_TEST_RUN_DIR -x ASAN_OPTIONS
else
    set --
fi
# Rank 1 alone gets the skewed clock: a second application context started through env(1).
"$MPIEXEC" "$@" -np 1 "$PROG" : -np 1 env PPSCOPE_CLOCK_SKEW_NS=$SKEW "$PROG"
