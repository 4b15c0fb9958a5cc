#!/bin/sh
# gather.sh - `ppscope gather`: a job whose ranks write into one directory per host, emulated by
# one mpirun of two programs (MPMD): ranks 0, 1 write host-a/, ranks 2, 3 host-b/, as two nodes'
# local disks would hold them. Checked:
#   bad input     --help, no -o, a destination that exists, a source that is not a directory, an
#                 unknown option, two runs' shards: exit 2 with one line (no MPI needed)
#   live          gather runs beside the job: the view of the gathered run shows all four stages
#                 while the job is still writing, and gather ends by itself when the ranks close
#   exact         the gathered run's report is the report of the shards copied side by side, and
#                 merge of it reads back the same
#   killed        the job killed mid-run (SIGKILL): gather copies what was committed and ends
#                 (every writer gone), the copy incomplete and equal to the sources
# Exits 77 after the bad-input checks without MPI, mpirun or sqlite3.
# Usage: gather.sh PATH/TO/ppscope HAVE_MPI [MPIEXEC]
set -u
. "$(dirname "$0")/lib.sh"
cli_init gather "$1"
HAVE_MPI=${2:-}
MPIEXEC=${3:-}
EMU="--backend emu --emu-tf 0.002 --emu-tb 0.002 --emu-tw 0.002"

# ---- bad input ---------------------------------------------------------------------------------
expect_exit 0 gather --help && grep -q "^usage: ppscope gather" "$T/out" || fail "gather --help"
mkdir -p "$T/empty" "$T/exists"
: >"$T/file"
expect_exit 2 gather "$T/empty" && stderr_has "give -o RUN"
expect_exit 2 gather "$T/empty" -o "$T/exists" && stderr_has "already exists"
expect_exit 2 gather "$T/file" -o "$T/x1" && stderr_has "not a run directory"
expect_exit 2 gather --bogus "$T/empty" -o "$T/x3" && stderr_has "unknown option"
[ ! -e "$T/x1" ] && [ ! -e "$T/x3" ] || fail "a refused gather left its output"
# Two runs' shards, each in a directory of its own: refused before anything is copied.
expect_exit 0 run -p 2 -m 2 --iters 1 $EMU --out "$T/one"
expect_exit 0 run -p 2 -m 2 --iters 1 $EMU --out "$T/two"
mkdir -p "$T/two-b" && mv "$T/two/rank-00001.db" "$T/two-b/"
rm -f "$T/one/rank-00001.db"
expect_exit 2 gather "$T/one" "$T/two-b" -o "$T/x4" && stderr_has "two runs in these directories"
[ ! -e "$T/x4" ] || fail "gather of two runs left $T/x4"
expect_exit 2 gather "$T/empty" "$T/empty/." -o "$T/x5" && stderr_has "one directory named twice"
expect_exit 2 gather "$T/x6" -o "$T/x6" && stderr_has "is the destination"
expect_exit 2 gather --interval nan "$T/empty" -o "$T/x7" && stderr_has "--interval needs seconds"
[ ! -e "$T/x5" ] && [ ! -e "$T/x6" ] && [ ! -e "$T/x7" ] || fail "a refused gather left its output"
# A job of world 2 whose rank 1 never shows: gather waits for it; Ctrl-C stops it (exit 130),
# the rank it found copied whole.
if command -v timeout >/dev/null 2>&1; then
    timeout -s INT 2 "$PPS" gather "$T/one" -o "$T/x8" >"$T/out" 2>"$T/err"
    rc=$?
    [ "$rc" -eq 124 ] && ok || fail "gather of a job missing a rank ended by itself: exit $rc"
    stderr_has "copied whole, while waiting for more of the job's ranks"
    expect_exit 0 report "$T/x8" && grep -q "^status    missing rank 1:" "$T/out" && ok ||
        fail "the copy of a job missing rank 1: $(head -3 "$T/out")"
fi

[ "$HAVE_MPI" = 1 ] || { echo "skipped the job: ppscope built without MPI"; cli_finish_77=1; }
[ -n "$MPIEXEC" ] || MPIEXEC=$(command -v mpirun || command -v mpiexec || true)
if [ "${cli_finish_77:-0}" = 1 ] || [ -z "$MPIEXEC" ] || ! command -v sqlite3 >/dev/null 2>&1 ||
    ! command -v timeout >/dev/null 2>&1; then
    echo "$cli_passed passed, $cli_failed failed; the job's checks skipped (no MPI, mpirun," \
        "sqlite3 or timeout)"
    [ "$cli_failed" -eq 0 ] || exit 1
    exit 77
fi
LAUNCH=
if "$MPIEXEC" --version 2>/dev/null | grep -qiE "open ?mpi|openrte|open-mpi"; then
    LAUNCH="--allow-run-as-root --oversubscribe"
fi

# job DIR ITERS: the 4-rank job, its ranks 0, 1 writing DIR/host-a, 2, 3 DIR/host-b.
job() {
    args="run --transport mpi -p 4 -m 8 --iters $2 $EMU"
    timeout -k 10 200 "$MPIEXEC" $LAUNCH -np 2 "$PPS" $args --out "$1/host-a" : \
        -np 2 "$PPS" $args --out "$1/host-b" >"$1.job.out" 2>&1
}

# same_report A B: reports of A and B, the first line (the path) aside, are the same.
same_report() {
    "$PPS" report "$1" | tail -n +2 >"$T/ra" 2>&1
    "$PPS" report "$2" | tail -n +2 >"$T/rb" 2>&1
    if cmp -s "$T/ra" "$T/rb"; then ok; else fail "report $1 differs from $2: $(diff "$T/ra" "$T/rb" | head -20)"; fi
}

# start DIR ITERS: the job in the background (jobpid), and gather of its two hosts into DIR/all
# (gpid; its output in DIR.g.out and DIR.g.err).
start() {
    mkdir -p "$1"
    job "$1" "$2" &
    jobpid=$!
    "$PPS" gather --interval 0.1 "$1/host-a" "$1/host-b" -o "$1/all" >"$1.g.out" 2>"$1.g.err" &
    gpid=$!
}

# gather_ends PID ERR WHEN: the gather in the background ends by itself within 60 s, exit 0.
gather_ends() {
    if timeout 60 sh -c "while kill -0 $1 2>/dev/null; do sleep 0.1; done"; then
        wait "$1"
        grc=$?
        [ "$grc" -eq 0 ] && ok || fail "gather $3: exit $grc: $(cat "$2")"
    else
        kill "$1"
        fail "gather did not end $3"
    fi
}

# ---- live, then exact ----------------------------------------------------------------------------
# A stage shows in the frame by its compute ops' letters: F, or at a zoom too coarse for one op a
# column, the fused backward's X that fills most of it (a job slowed by a busy machine has
# hundreds of iterations in by the time both hosts' shards are copied).
J=$T/live
start "$J" 400
seen=0
for _ in $(seq 1 200); do
    if kill -0 "$jobpid" 2>/dev/null &&
        "$PPS" view --once --ascii --size 100x30 "$J/all" >"$T/frame" 2>/dev/null &&
        grep -q "^s3 .*[FfBbWwXx]" "$T/frame" && grep -q "^s0 .*[FfBbWwXx]" "$T/frame" &&
        kill -0 "$jobpid" 2>/dev/null; then
        seen=1
        break
    fi
    sleep 0.1
done
[ "$seen" = 1 ] && ok || fail "the view of the gathered run never showed stages 0 and 3 while the job ran"
wait "$jobpid" || fail "the job failed: $(cat "$J.job.out")"
gather_ends "$gpid" "$J.g.err" "after the job closed its shards"
grep -q "wrote $J/all: 4 ranks" "$J.g.out" && ok || fail "gather said: $(cat "$J.g.out")"
mkdir -p "$J/copy" && cp "$J"/host-a/rank-* "$J"/host-b/rank-* "$J/copy/"
same_report "$J/all" "$J/copy"
grep -q "^status    complete" "$T/ra" && ok || fail "the gathered run is not complete: $(head -3 "$T/ra")"
expect_exit 0 merge -q "$J/all" -o "$J/all.db"
same_report "$J/all.db" "$J/copy"

# ---- killed -------------------------------------------------------------------------------------
K=$T/killed
start "$K" 100000
pid=
for _ in $(seq 1 200); do
    pid=$(sqlite3 "file:$K/host-b/rank-00003.db?mode=ro" \
        "select value from meta where key = 'writer_pid'" 2>/dev/null) || pid=
    n=$(sqlite3 "file:$K/host-b/rank-00003.db?mode=ro" "select count(*) from spans" 2>/dev/null) ||
        n=0
    [ -n "$pid" ] && [ "${n:-0}" -gt 500 ] && break
    sleep 0.1
done
[ -n "$pid" ] && kill -9 "$pid" 2>/dev/null && ok || fail "no rank 3 to kill"
wait "$jobpid" && fail "the killed job exited 0"
gather_ends "$gpid" "$K.g.err" "after the job was killed"
grep -q "whose writer is gone: incomplete" "$K.g.out" && ok || fail "gather said: $(cat "$K.g.out")"
mkdir -p "$K/copy" && cp "$K"/host-a/rank-* "$K"/host-b/rank-* "$K/copy/"
same_report "$K/all" "$K/copy"
grep -q "^status    INCOMPLETE" "$T/ra" && ok || fail "the killed run's copy says: $(head -3 "$T/ra")"

cli_finish
