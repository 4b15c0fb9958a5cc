#!/bin/sh
# run_check_grads.sh - `ppscope run --check-grads`: the gradients of every schedule (gpipe, 1f1b,
# interleaved, zb-h1, zb-h2, zb-v, dualpipev, interleaved-zb, zb-auto), at several p, m and v, even
# and uneven partitions (an empty chunk included), are bitwise those of the same model run in one
# process over the same microbatches.
# Usage: run_check_grads.sh PATH/TO/ppscope                       (threads transport)
#        run_check_grads.sh PATH/TO/ppscope mpi HAVE_MPI MPIEXEC  (one rank per stage; exits 77
#                                                                  without MPI or mpirun)
set -u
. "$(dirname "$0")/lib.sh"
cli_init run_check_grads "$1"
MODE=${2:-threads}
SMALL="--hidden 32 --seq-len 16 --microbatch-size 2"

if [ "$MODE" = mpi ]; then
    HAVE_MPI=${3:-}
    MPIEXEC=${4:-}
    if [ "$HAVE_MPI" != 1 ]; then
        expect_exit 2 run --transport mpi -p 1 -m 1 --check-grads
        stderr_has "built without MPI"
        echo "skipped: ppscope was built without MPI"
        exit 77
    fi
    [ -n "$MPIEXEC" ] || MPIEXEC=$(command -v mpirun || command -v mpiexec || true)
    if [ -z "$MPIEXEC" ] || ! [ -x "$MPIEXEC" ] || ! command -v timeout >/dev/null 2>&1; then
        echo "skipped: no mpirun (or no timeout)"
        exit 77
    fi
    # Under PPS_SANITIZE, Open MPI's own allocations read as leaks; the other checks stay on.
    ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
    export ASAN_OPTIONS
    if "$MPIEXEC" --version 2>/dev/null | grep -qiE "open ?mpi|openrte|open-mpi"; then
        LAUNCH="--allow-run-as-root --oversubscribe -x ASAN_OPTIONS"
    else
        LAUNCH=""
    fi
    # check NP ARGS...: NP ranks, one per stage, must all say ok
    check() {
        np=$1
        shift
        # shellcheck disable=SC2086
        timeout -k 10 120 "$MPIEXEC" $LAUNCH -np "$np" "$PPS" run --check-grads $SMALL "$@" \
            >"$T/out" 2>"$T/err"
        rc=$?
        n=$(grep -c "^check-grads .*(mpi): ok" "$T/out")
        want=$(echo "$*" | sed 's/.*--schedule \([^ ]*\).*/\1/' | tr ',' '\n' | wc -l)
        if [ $rc -ne 0 ] || [ "$n" -ne "$want" ]; then
            fail "mpirun -np $np ppscope run --check-grads $*: exit $rc, $n of $want ok: $(cat "$T/out" "$T/err")"
        else
            ok
        fi
    }
    check 2 --schedule gpipe,1f1b,zb-h1,zb-h2 -p 2 -m 4
    check 3 --schedule 1f1b,zb-h2,interleaved -p 3 -m 6 --layers 7 --partition 3,0,4 -v 1
    check 4 --schedule interleaved,zb-h1 -p 4 -m 8 --layers 8
    check 4 --schedule interleaved -p 4 -m 4 -v 2 --layers 5 --partition 1,0,1,0,1,1,0,1
    check 4 --schedule zb-h2,zb-h1 -p 4 -m 8 --w-budget 1
    # ZB-V: two chunks a stage, down the ranks and back up (rank 0 computes the loss).
    check 3 --schedule zb-v -p 3 -m 5 --layers 7 --partition 2,0,1,1,2,1
    # DualPipeV: BW and B/W mixed on each rank, at its smallest m (2p) and past it, unevenly.
    check 3 --schedule dualpipev -p 3 -m 6 --layers 7 --partition 2,0,1,1,2,1
    check 4 --schedule dualpipev,zb-v -p 4 -m 9 --layers 8
    # Interleaved zero bubble: W's deferred across chunks, groups of 4 (m/(m/p)) microbatches on 3 ranks.
    check 3 --schedule interleaved-zb -p 3 -m 8 -v 2 --layers 7 --partition 2,0,1,1,2,1
    check 3 --schedule zb-auto -p 3 -m 6 --mem-limit 5
    # World size must equal p: one line, exit 2, from one rank.
    timeout -k 10 60 "$MPIEXEC" $LAUNCH -np 3 "$PPS" run --check-grads $SMALL -p 4 -m 4 \
        >"$T/out" 2>"$T/err"
    rc=$?
    if [ $rc -ne 2 ] || [ "$(grep -c "launcher started 3 ranks, but p=4" "$T/err")" -ne 1 ]; then
        fail "mpirun -np 3 with p=4: exit $rc, stderr: $(cat "$T/err")"
    else
        ok
    fi
    # A failing rank ends the job with a line naming it, and its run stays readable.
    timeout -k 10 60 "$MPIEXEC" $LAUNCH -np 4 "$PPS" run --backend emu -p 4 -m 8 --iters 10 \
        --out "$T/fail" --inject-fail 2:3 >"$T/out" 2>"$T/err"
    rc=$?
    if [ $rc -eq 0 ] || [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
        fail "an injected failure under mpirun: exit $rc"
    else
        ok
    fi
    stderr_has "stage 2 (rank 2) failed: injected failure at iteration 3"
    run_pps report "$T/fail"
    if [ "$rc" -ne 0 ] || ! grep -q "INCOMPLETE" "$T/out"; then
        fail "report of the failed MPI run: exit $rc: $(cat "$T/out" "$T/err")"
    else
        ok
    fi
    cli_finish
fi

# check ARGS...: every schedule listed must be reported ok, exit 0.
check() {
    # shellcheck disable=SC2086
    run_pps run --check-grads $SMALL "$@"
    n=$(grep -c "^check-grads .*(threads): ok" "$T/out")
    want=$(echo "$*" | sed 's/.*--schedule \([^ ]*\).*/\1/' | tr ',' '\n' | wc -l)
    if [ "$rc" -ne 0 ] || [ "$n" -ne "$want" ]; then
        fail "ppscope run --check-grads $*: exit $rc, $n of $want ok: $(cat "$T/out" "$T/err")"
    else
        ok
    fi
}

check --schedule gpipe,1f1b,interleaved,zb-h1,zb-h2 -p 2 -m 4
check --schedule gpipe,1f1b,zb-h1,zb-h2 -p 4 -m 8
check --schedule 1f1b,zb-h1,zb-h2 -p 3 -m 5 --layers 8 --partition 3,5,0
check --schedule zb-h2,gpipe -p 4 -m 3 --layers 6 --partition 0,2,3,1
check --schedule interleaved -p 4 -m 8 -v 2 --layers 8
check --schedule interleaved -p 3 -m 6 -v 3 --layers 10 --partition 2,0,1,1,2,0,1,1,2
check --schedule 1f1b,interleaved -p 1 -m 3 --layers 3
check --schedule zb-h1,zb-h2 -p 6 -m 12 --layers 6
# zb-auto: its own order at the default limit (p), under it, and with a W budget on top.
check --schedule zb-auto,zb-h1 -p 4 -m 8 --layers 6 --partition 1,2,0,3
check --schedule zb-auto -p 4 -m 8 --mem-limit 2 --w-budget 1
# ZB-V: the V placement, with fewer microbatches than its order pads to (2p-1), an empty chunk, one
# stage holding both ends (every hop a copy to itself), and a W budget (which keeps the placement).
check --schedule zb-v,interleaved -p 4 -m 8 --layers 8
check --schedule zb-v -p 3 -m 2 --layers 7 --partition 2,0,1,1,2,1
check --schedule zb-v -p 1 -m 3 --layers 3
check --schedule zb-v -p 4 -m 8 --w-budget 1
# DualPipeV: its smallest m (2p), an uneven partition with an empty chunk, one stage holding both
# ends, and a W budget (its W's follow their B's within each chunk).
check --schedule dualpipev,zb-v,1f1b -p 4 -m 8 --layers 8
check --schedule dualpipev -p 3 -m 6 --layers 7 --partition 2,0,1,1,2,1
check --schedule dualpipev -p 1 -m 2 --layers 3
check --schedule dualpipev -p 4 -m 11 --layers 8 --w-budget 1
# Interleaved zero bubble: more chunks, fewer microbatches than stages (one group of m), groups
# that are not p (m=10 on 4 stages: 2 groups of 5), an empty chunk, and a W budget.
check --schedule interleaved-zb,interleaved -p 4 -m 8 --layers 8
check --schedule interleaved-zb -p 3 -m 6 -v 3 --layers 10 --partition 2,0,1,1,2,0,1,1,2
check --schedule interleaved-zb -p 4 -m 3 --layers 8
check --schedule interleaved-zb -p 4 -m 10 --layers 8 --w-budget 1
check --schedule interleaved-zb -p 1 -m 3 -v 2 --layers 3
# A zb-v run's metadata is placed in V too: each stage's activation bytes are its own chunks'
# (the schedule's memory equals the measured), and the LM head is on stage 0, with the embedding
# (the shards say so, which is what the imbalance flag names; whether the flag shows at all
# depends on the host's load over two iterations, so where it shows it must name both).
# shellcheck disable=SC2086
run_pps run $SMALL --schedule zb-v -p 2 -m 4 --iters 2 --layers 5 --partition 2,0,1,2 \
    --out "$T/zv"
if [ "$rc" -eq 0 ] && "$PPS" report --json "$T/zv" | python3 -c '
import json, sys
d = json.load(sys.stdin)
st = d["memory"]["stages"]
assert all(s["act_peak_bytes"] == s["schedule_act_bytes"] for s in st), st
for f in d["flags"]:
    if f["kind"] == "imbalance" and "stage 0 " in f["text"]:
        assert "holds the embedding and the LM head" in f["text"], f["text"]
' && python3 -c '
import sqlite3, sys
c = sqlite3.connect("file:" + sys.argv[1] + "?mode=ro", uri=True)
meta = dict(c.execute("SELECT key, value FROM meta WHERE key LIKE \x27model_%_stage\x27"))
assert meta == {"model_embedding_stage": "0", "model_head_stage": "0"}, meta
' "$T/zv/rank-00000.db"; then
    ok
else
    fail "zb-v metadata: $(cat "$T/err"; "$PPS" report "$T/zv" 2>&1 | grep -A4 '^memory')"
fi
# The seed and the text change the numbers, not the equality.
check --schedule zb-h2 -p 2 -m 2 --seed 99 --data "$0"
cli_finish
