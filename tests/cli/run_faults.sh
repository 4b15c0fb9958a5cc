#!/bin/sh
# run_faults.sh - a run that meets a fault keeps what it wrote and counts what it lost, exactly:
#   full disk  a 2 MiB tmpfs (or, where it cannot be mounted, the tracer's injected full disk,
#              PPSCOPE_TRACE_FULL_AFTER): training goes on to the end, the run exits 1 with one
#              line naming the spans it could not write (of all it recorded) and their
#              iterations; the report names the planned iterations with no span, text and --json
#   SIGTERM    a threads run stops cleanly: exit 1, one line with the spans kept (every one in
#              the shards) and dropped (0), the shards marked incomplete, every iteration before
#              a shard's last one whole, the rest named missing
#   SIGKILL    nothing is closed: what the flusher committed stays readable, each shard's
#              iterations before its last one whole, the report names the rest missing
# With "mpi": the full disk under mpirun -np 2 (every rank exits 1, one line, no summary), and a
# rank killed mid-run (mpirun ends the job, non-zero; the report names the missing iterations).
# Needs sqlite3 to count what the shards hold (exits 77 without).
# Usage: run_faults.sh PATH/TO/ppscope [mpi HAVE_MPI MPIEXEC]
set -u
. "$(dirname "$0")/lib.sh"
cli_init run_faults "$1"
MODE=${2:-threads}

if ! command -v sqlite3 >/dev/null 2>&1 || ! command -v timeout >/dev/null 2>&1; then
    echo "skipped: no sqlite3 (or no timeout)"
    exit 77
fi
EMU="--backend emu --emu-tf 0.01 --emu-tb 0.01 --emu-tw 0.01"

# q DB SQL: one query on a shard, read-only (a killed run's shard is opened as it was left).
q() {
    sqlite3 "file:$1?mode=ro" "$2"
}

# json_int KEY: KEY's integer in $T/out (report --json)
json_int() {
    grep -o "\"$1\":-\?[0-9]*" "$T/out" | head -n 1 | cut -d: -f2
}

# check_missing RUN PLANNED: report and report --json name the planned iterations the shards do
# not hold (computed here from the shards), and say the run is incomplete.
check_missing() {
    run=$1
    planned=$2
    # An iteration is there when one of its ops is (F, B, W, BW, OPT: kinds 1-4 and 8); a wait
    # of the next one is not.
    ops="iter >= 0 and kind in (1, 2, 3, 4, 8)"
    have=$(for db in "$run"/rank-*.db; do q "$db" "select distinct iter from spans where $ops"; done |
        sort -un | wc -l)
    first=$(for db in "$run"/rank-*.db; do q "$db" "select max(iter) from spans where $ops"; done |
        sort -n | tail -n 1)
    first=$((first + 1))
    n=$((planned - have))
    [ "$first" -eq "$have" ] || fail "$run: the shards hold $have iterations, not 0..$((first - 1))"
    expect_exit 0 report "$run" || return
    want="missing   iterations $first-$((planned - 1)) ($n of $planned planned): none of their ops (F, B, W, optimizer steps) is in the run: it stopped before them, or its tracer could not write them (a full disk)"
    grep -qxF "$want" "$T/out" || fail "$run: report lacks '$want': $(cat "$T/out")"
    grep -q "^status    INCOMPLETE" "$T/out" || fail "$run: report does not say incomplete"
    expect_exit 0 report --json "$run" || return
    [ "$(json_int planned_iterations)" = "$planned" ] || fail "$run: planned_iterations"
    [ "$(json_int missing_iterations)" = "$n" ] || fail "$run: missing_iterations != $n"
    [ "$(json_int missing_first)" = "$first" ] || fail "$run: missing_first != $first"
    [ "$(json_int missing_last)" = "$((planned - 1))" ] || fail "$run: missing_last"
    grep -q '"complete":false' "$T/out" || fail "$run: --json says complete"
    # the view says it too, in its header, once no writer is left to write them (a launcher
    # that ended the job may leave a rank dying a moment longer: while it runs, it is [LIVE])
    i=0
    while pgrep -f -- "--out $run\$" >/dev/null 2>&1 && [ $i -lt 100 ]; do
        sleep 0.1
        i=$((i + 1))
    done
    expect_exit 0 view --once --size 200x30 "$run" || return
    head -n 1 "$T/out" | grep -qF "[MISSING $n ITERS]" ||
        fail "$run: the view's header lacks [MISSING $n ITERS]: $(head -n 1 "$T/out")"
    ok
}

# kept RUN: spans in every shard of RUN
kept() {
    for db in "$1"/rank-*.db; do q "$db" "select count(*) from spans"; done |
        awk '{ n += $1 } END { print n + 0 }'
}

# A full disk: mounted where this machine lets us, else the injected one. Never skipped.
MNT=$T/mnt
mkdir -p "$MNT"
if mount -t tmpfs -o size=2m tmpfs "$MNT" 2>/dev/null; then
    trap 'umount "$MNT" 2>/dev/null; rm -rf "$T"' EXIT INT TERM
    FULL="env"
    TMPFS=1
    echo "full disk: a 2 MiB tmpfs"
else
    FULL="env PPSCOPE_TRACE_FULL_AFTER=4000"
    TMPFS=0
    echo "full disk: injected (PPSCOPE_TRACE_FULL_AFTER=4000; cannot mount a tmpfs here)"
fi

# free_disk: room on the full tmpfs again, as a user frees a disk before reading the run: a shard
# its rank could not take out of WAL mode (no room to checkpoint) is read through its -shm index,
# which SQLite must be able to create (on a full disk: "disk I/O error", exit 1).
free_disk() {
    [ "$TMPFS" = 1 ] && mount -o remount,size=64m "$MNT"
    return 0
}

# check_full RUN RECORDED ITERS WHOLE: the run's one line and what its shards hold. RECORDED: the
# spans the run records in all (its kinds are deterministic); WHOLE: spans of a whole iteration,
# over all stages.
check_full() {
    run=$1
    recorded=$2
    iters=$3
    whole=$4
    k=$(kept "$run")
    lost=$((recorded - k))
    # The iterations with spans lost: those the shards hold less than whole of.
    part=$(for db in "$run"/rank-*.db; do q "$db" "select iter from spans where iter >= 0"; done |
        sort -n | uniq -c | awk -v w="$whole" '$1 < w { print $2 }' | head -n 1)
    [ -n "$part" ] || part=$(for db in "$run"/rank-*.db; do q "$db" "select max(iter) + 1 from spans"; done |
        sort -n | tail -n 1)
    want="ppscope run: $run: the tracer could not write $lost of $recorded spans (iterations $part-$((iters - 1)) of $iters, in whole or in part): "
    line=$(grep -v '^ppscope run: warning:' "$T/err")
    [ "$(printf '%s\n' "$line" | wc -l)" -eq 1 ] || fail "$run: not one line: $(cat "$T/err")"
    case $line in
    "$want"*"database or disk is full"*) ok ;;
    *) fail "$run: the line is '$line', expected '$want...database or disk is full'" ;;
    esac
    [ "$lost" -gt 0 ] || fail "$run: nothing was lost: the disk did not fill"
    grep -q "^schedule" "$T/out" && fail "$run: the normal summary was printed"
    check_missing "$run" "$iters"
}

if [ "$MODE" = mpi ]; then
    HAVE_MPI=${3:-}
    MPIEXEC=${4:-}
    [ -n "$MPIEXEC" ] || MPIEXEC=$(command -v mpirun || command -v mpiexec || true)
    if [ "$HAVE_MPI" != 1 ] && [ "$HAVE_MPI" != ON ] && [ "$HAVE_MPI" != TRUE ]; then
        echo "skipped: ppscope was built without MPI"
        exit 77
    fi
    if [ -z "$MPIEXEC" ] || ! [ -x "$MPIEXEC" ]; then
        echo "skipped: no mpirun"
        exit 77
    fi
    LAUNCH=""
    if "$MPIEXEC" --version 2>/dev/null | grep -qiE "open ?mpi|openrte|open-mpi"; then
        LAUNCH="--allow-run-as-root --oversubscribe -x PPSCOPE_TRACE_FULL_AFTER"
    fi
    # p=2, m=128, 100 iterations, 1f1b: each stage records per iteration F, BW, SEND, RECV m
    # each, OPT once, and WAITs as they come: the total is the tracer's, so the line is checked
    # against the shards (kept) and itself (lost = recorded - kept).
    # shellcheck disable=SC2086
    timeout -k 10 300 $FULL "$MPIEXEC" $LAUNCH -np 2 "$PPS" run --transport mpi -p 2 -m 128 \
        --iters 100 $EMU --out "$MNT/mpi" >"$T/out" 2>"$T/err"
    rc=$?
    [ $rc -ne 0 ] && [ $rc -ne 124 ] && [ $rc -ne 137 ] || fail "mpi full disk: mpirun exit $rc"
    line=$(grep '^ppscope run:' "$T/err")
    [ "$(printf '%s\n' "$line" | grep -c .)" -eq 1 ] || fail "mpi: not one line: $(cat "$T/err")"
    free_disk
    k=$(kept "$MNT/mpi")
    case $line in
    "ppscope run: $MNT/mpi: the tracer could not write "*" of "*" spans (iterations "*"-99 of 100, in whole or in part): "*"database or disk is full"*)
        lost=$(echo "$line" | sed 's/.*could not write \([0-9]*\) of \([0-9]*\) spans.*/\1 \2/')
        set -- $lost
        [ $(($2 - $1)) -eq "$k" ] || fail "mpi: the line's $2 - $1 is not the $k spans kept"
        ok
        ;;
    *) fail "mpi: the line is '$line'" ;;
    esac
    grep -q "^schedule" "$T/out" && fail "mpi: the normal summary was printed"
    check_missing "$MNT/mpi" 100

    # A killed rank: mpirun notices and ends the job (not a hang), and what every rank committed
    # is read, the run incomplete and its missing iterations named.
    "$MPIEXEC" $LAUNCH -np 2 "$PPS" run --transport mpi -p 2 -m 8 --iters 100000 --backend emu \
        --emu-tf 0.1 --emu-tb 0.1 --emu-tw 0.1 --out "$T/mpikill" >"$T/out" 2>"$T/err" &
    mpid=$!
    i=0
    while [ $i -lt 300 ]; do
        got=$(q "$T/mpikill/rank-00001.db" "select max(iter) from spans" 2>/dev/null)
        [ -n "$got" ] && [ "$got" -ge 3 ] && break
        sleep 0.1
        i=$((i + 1))
    done
    victim=$(pgrep -f -- "--out $T/mpikill" | grep -v "^$mpid\$" | tail -n 1)
    if [ -n "$victim" ] && [ $i -lt 300 ]; then
        kill -KILL "$victim"
        # mpirun ends the job by itself; the watchdog only stops a hang (and says so).
        (sleep 60 && kill -KILL $mpid 2>/dev/null && echo hang >"$T/hang") &
        dog=$!
        wait $mpid
        rc=$?
        kill $dog 2>/dev/null
        [ ! -e "$T/hang" ] || fail "killed rank: mpirun did not end the job in 60 s"
        [ $rc -ne 0 ] || fail "killed rank: mpirun exit 0"
        check_missing "$T/mpikill" 100000
    else
        kill -KILL $mpid 2>/dev/null
        fail "killed rank: the run did not reach iteration 3 in 30 s"
    fi
    cli_finish
fi

# Threads, p=1 m=128: 2m+2 spans an iteration (F, BW per microbatch, the optimizer's WAIT and
# OPT), 25800 over 100 iterations: more than 2 MiB with the journal.
# shellcheck disable=SC2086
timeout -k 5 120 $FULL "$PPS" run -p 1 -m 128 --iters 100 $EMU --out "$MNT/threads" \
    >"$T/out" 2>"$T/err"
rc=$?
[ $rc -eq 1 ] || fail "full disk: exit $rc, expected 1: $(cat "$T/err")"
free_disk
check_full "$MNT/threads" 25800 100 258
umount "$MNT" 2>/dev/null

# start_long RUN: a threads run of many iterations in the background (pid in $pid), returned once
# its shard 0 holds iteration 3 (the flusher commits every 20 ms).
start_long() {
    "$PPS" run -p 4 -m 8 --iters 100000 --backend emu --emu-tf 0.1 --emu-tb 0.1 --emu-tw 0.1 \
        --out "$1" >"$T/out" 2>"$T/err" &
    pid=$!
    i=0
    while [ $i -lt 300 ]; do
        got=$(q "$1/rank-00000.db" "select max(iter) from spans" 2>/dev/null)
        [ -n "$got" ] && [ "$got" -ge 3 ] && return 0
        sleep 0.1
        i=$((i + 1))
    done
    kill -KILL $pid
    return 1
}

# whole_before_last RUN: in each shard, every iteration before its last holds its 8 F and its OPT.
whole_before_last() {
    for db in "$1"/rank-*.db; do
        last=$(q "$db" "select max(iter) from spans")
        f=$(q "$db" "select count(*) from spans where kind = 1 and iter >= 0 and iter < $last")
        o=$(q "$db" "select count(*) from spans where kind = 8 and iter >= 0 and iter < $last")
        [ "$f" -eq $((8 * last)) ] && [ "$o" -eq "$last" ] ||
            fail "$db: $f F and $o OPT before iteration $last, expected $((8 * last)) and $last"
    done
}

# SIGTERM: a clean close; SIGHUP (the terminal went away) the same.
for sig in TERM HUP; do
    if start_long "$T/$sig"; then
        kill -$sig $pid
        wait $pid
        rc=$?
        [ $rc -eq 1 ] || fail "SIG$sig: exit $rc, expected 1"
        k=$(kept "$T/$sig")
        want="ppscope run: stopped by SIG$sig: $T/$sig is incomplete: $k spans kept, 0 dropped"
        line=$(grep -v '^ppscope run: warning:' "$T/err")
        [ "$line" = "$want" ] || fail "SIG$sig: '$line', expected '$want'"
        for db in "$T/$sig"/rank-*.db; do
            [ "$(q "$db" "select value from meta where key = 'complete'")" = 0 ] ||
                fail "SIG$sig: $db is not marked incomplete"
        done
        whole_before_last "$T/$sig"
        check_missing "$T/$sig" 100000
    else
        fail "SIG$sig: the run did not reach iteration 3 in 30 s"
    fi
done

# SIGKILL: nothing closed, what was committed kept.
if start_long "$T/kill"; then
    kill -KILL $pid
    wait $pid
    rc=$?
    [ $rc -eq 137 ] || fail "SIGKILL: exit $rc, expected 137"
    whole_before_last "$T/kill"
    check_missing "$T/kill" 100000
    expect_exit 0 report --json "$T/kill"
    [ "$(json_int dropped)" = 0 ] || fail "SIGKILL: dropped is not 0"
else
    fail "SIGKILL: the run did not reach iteration 3 in 30 s"
fi
cli_finish
