#!/bin/sh
# Schedules from a file, end to end: every kind written by `sim --csv` (PyTorch's pipeline-order
# CSV) and `sim --grid` reads back with --schedule-file to the same schedule and the same
# simulation; PyTorch's own dumps (tests/fixtures/pipeline_order) read as the kind ppscope
# generates, op for op; broken files are refused with the line, rank, step and cell, the grid
# marked; a hand-written schedule runs (bitwise --check-grads on threads and MPI), traces and
# reports like a built-in one. $1 is the ppscope binary.
set -u
. "$(dirname "$0")/lib.sh"
cli_init schedule_file "$1"
fix=$(cd "$(dirname "$0")/.." && pwd)/fixtures/pipeline_order

# expect JSON_FILE JQ_EXPR EXPECTED
expect() {
    got=$(jq -c "$2" "$1" 2>&1)
    if [ "$got" = "$3" ]; then ok; else fail "$2 in $1: got $got, expected $3"; fi
}

# same_sim KIND SHAPE...: the file's schedule simulates as the kind does, figure for figure, and
# reads back to the same grid.
costs="--tf 1 --tb 1.5 --tw 0.7 --tcomm 0.2 --stage-mult 1,1.2,0.9,1.1"
same_sim() {
    kind=$1
    shift
    for fmt in csv grid; do
        # (zb-auto's order is the costs': written for the ones it is simulated with)
        "$PPS" sim -s "$kind" "$@" $costs --$fmt >"$T/s.$fmt" 2>"$T/err" ||
            { fail "sim -s $kind $* --$fmt: $(cat "$T/err")"; continue; }
        "$PPS" sim -s "$kind" "$@" $costs --grid >"$T/want.grid"
        "$PPS" sim --schedule-file "$T/s.$fmt" --grid >"$T/got.grid" 2>"$T/err" ||
            { fail "read back $kind $* ($fmt): $(cat "$T/err")"; continue; }
        if cmp -s "$T/want.grid" "$T/got.grid"; then ok; else
            fail "$kind $* through $fmt: $(diff "$T/want.grid" "$T/got.grid" | head -5)"
        fi
        "$PPS" sim -s "$kind" "$@" $costs --json | jq -S 'del(.schedule, .zero_bubble_theory_idle,
            .mem_limit, .live_peak)' >"$T/want.json"
        "$PPS" sim --schedule-file "$T/s.$fmt" $costs --json 2>"$T/err" |
            jq -S 'del(.schedule, .schedule_file, .zero_bubble_theory_idle)' >"$T/got.json"
        if cmp -s "$T/want.json" "$T/got.json"; then ok; else
            fail "$kind $* through $fmt simulates otherwise: $(diff "$T/want.json" "$T/got.json" | head -6)"
        fi
    done
}
same_sim 1f1b -p 4 -m 8
same_sim gpipe -p 4 -m 6
same_sim interleaved -p 4 -m 8 -v 3
same_sim zb-h1 -p 4 -m 8
same_sim zb-h2 -p 4 -m 10
same_sim zb-v -p 4 -m 8
same_sim zb-v -p 4 -m 5
same_sim dualpipev -p 4 -m 10
same_sim interleaved-zb -p 4 -m 8 -v 2
same_sim zb-auto -p 4 -m 8

# PyTorch's own schedules as its _dump_csv wrote them (make.sh in the fixture folder), the
# actions alone and with their communication, read as the kind ppscope generates, op for op:
# the same grid. DualPipeV's overlapped pairs run F then B, as ppscope's dualpipev does; the
# pairs and the communication left out are each said in a note.
from_pytorch() {
    file=$fix/$1
    shift
    for f in "$file" "${file%.csv}_comms.csv"; do
        if [ ! -f "$f" ]; then
            fail "no fixture $f (tests/fixtures/pipeline_order/make.sh makes them)"
            continue
        fi
        "$PPS" sim "$@" --grid >"$T/want.grid"
        if "$PPS" sim --schedule-file "$f" --grid >"$T/got.grid" 2>"$T/err" &&
            cmp -s "$T/want.grid" "$T/got.grid"; then ok; else
            fail "$f is not ppscope's $*: $(cat "$T/err"; diff "$T/want.grid" "$T/got.grid" | head -5)"
        fi
    done
}
from_pytorch zbv_4r_8m.csv -s zb-v -p 4 -m 8
from_pytorch zbv_2r_4m.csv -s zb-v -p 2 -m 4
from_pytorch interleavedzb_4r_8m.csv -s interleaved-zb -p 4 -m 8 -v 2
from_pytorch interleavedzb_2r_4m.csv -s interleaved-zb -p 2 -m 4 -v 2
from_pytorch dualpipev_4r_10m.csv -s dualpipev -p 4 -m 10
from_pytorch dualpipev_4r_8m.csv -s dualpipev -p 4 -m 8
from_pytorch dualpipev_2r_4m.csv -s dualpipev -p 2 -m 4
from_pytorch interleaved1f1b_4r_8m.csv -s interleaved -p 4 -m 8 -v 2
from_pytorch interleaved1f1b_2r_4m.csv -s interleaved -p 2 -m 4 -v 2
# ZBV's order is PyTorch's to the column: ppscope's CSV is its dump, byte for byte but the CRLFs.
for shape in "4 8" "2 4"; do
    set -- $shape
    "$PPS" sim -s zb-v -p "$1" -m "$2" --csv | tr -d '\r' >"$T/ours.csv"
    if tr -d '\r' <"$fix/zbv_${1}r_${2}m.csv" | cmp -s - "$T/ours.csv"; then ok; else
        fail "sim -s zb-v -p $1 -m $2 --csv is not PyTorch's dump"
    fi
done
"$PPS" sim --schedule-file "$fix/dualpipev_4r_10m_comms.csv" --grid >/dev/null 2>"$T/err"
grep -q "overlapped pairs (OVERLAP_F_B) run as their actions, one after the other" "$T/err" &&
    grep -q "communication cells (SEND_F, RECV_B, ...) left out" "$T/err" && ok ||
    fail "dualpipev's pairs and communication said: $(cat "$T/err")"
# LoopedBFS, which ppscope has no kind of, reads and runs. It adds each chunk's microbatches last
# first, so its gradients round otherwise than the reference's: the check says where, and holds
# them within 1e-4 of each tensor's largest gradient, where they are within 1e-6 (one microbatch
# of 8 moves them by about an eighth).
run_pps run --schedule-file "$fix/loopedbfs_4r_8m.csv" --check-grads --layers 8 --hidden 16 \
    --seq-len 8 --microbatch-size 1
if grep -q "^check-grads custom p=4 m=8 v=2 (threads): ok, .* within 0.0001 of each tensor's largest gradient (at most [0-9.]*e-0[789]), not bitwise: the schedule adds microbatches in another order (stage 0, chunk 0: its weight gradient of microbatch 6 comes after microbatch 7's)$" "$T/out"; then
    ok
else
    fail "check-grads of PyTorch's LoopedBFS: $(cat "$T/out" "$T/err")"
fi

# Broken files: exit 2, the line, rank and step of the cell in the file's notation, the rows
# with the cell marked.
"$PPS" sim -s 1f1b -p 3 -m 4 --csv >"$T/good.csv"
# Rank 1's first backward of microbatch 0 moved before its forward: swap the two cells.
awk -F, -v OFS=, 'NR == 2 { for (i = 1; i <= NF; i++) { if ($i == "1F0") f = i; if ($i == "1B0") b = i }
    t = $f; $f = $b; $b = t } { print }' "$T/good.csv" >"$T/bad.csv"
run_pps sim --schedule-file "$T/bad.csv"
if [ "$rc" -eq 2 ] && grep -q "bad.csv: line 2, rank 1, step 1: 1B0 comes before the microbatch's forward$" "$T/err" &&
    grep -q '^  rank 1: \.   \[1B0\]' "$T/err"; then ok; else fail "a backward before its forward: rc $rc $(cat "$T/err")"; fi
# A cell that is no action.
sed '1s/0F2/0Q2/' "$T/good.csv" >"$T/bad2.csv"
expect_exit 2 sim --schedule-file "$T/bad2.csv" && stderr_has "line 1, rank 0, step 2: '0Q2' is not an action"
# The grid: a deadlock, each stage waiting for the other.
printf 's0: F0 BW0 F1 BW1\ns1: F0 F1 BW0 BW1\n' >"$T/dead.txt"
run_pps run --schedule-file "$T/dead.txt" --check-grads
if [ "$rc" -eq 2 ] && grep -q "line 1, stage 0, step 1: BW0 waits for stage 1's backward of microbatch 0 (BW0 or B0), which never comes" "$T/err" &&
    grep -q '^  s0: F0 \[BW0\] F1' "$T/err"; then ok; else fail "a deadlock: rc $rc $(cat "$T/err")"; fi
# Files that are not schedules, or do not fit what else is asked.
: >"$T/empty.csv"
expect_exit 2 sim --schedule-file "$T/empty.csv" && stderr_has "the text is empty"
expect_exit 2 sim --schedule-file "$T/none.csv" && stderr_has "none.csv: No such file"
expect_exit 2 sim --schedule-file "$T" && stderr_has "not a regular file"
expect_exit 2 sim --schedule-file "$T/good.csv" -p 4 && stderr_has "holds p=3, m=4, v=1"
expect_exit 2 run --schedule-file "$T/good.csv" -m 8 --no-trace && stderr_has "holds p=3, m=4, v=1"
expect_exit 2 sim --schedule-file "$T/good.csv" -s zb-h1 --csv && stderr_has "--csv prints one schedule"
expect_exit 2 sim --schedule-file "$T/none.csv" --from "$T" && stderr_has "none.csv: No such file"
expect_exit 2 sim -s 1f1b --csv --json && stderr_has "one output at a time"

# A hand-written schedule runs: its gradients are bitwise the single-process reference's, on
# threads and under MPI; a zb-v order in V from its CSV with an uneven partition too.
printf '# 1F1B by hand, fused backwards\ns0: F0 F1 F2 BW0 F3 BW1 BW2 BW3\ns1: F0 BW0 F1 BW1 F2 BW2 F3 BW3\n' >"$T/mine.txt"
run_pps run --schedule-file "$T/mine.txt" --check-grads --layers 3
grep -q "^check-grads custom p=2 m=4 v=1 (threads): ok" "$T/out" && ok ||
    fail "check-grads on threads: $(cat "$T/out" "$T/err")"
"$PPS" sim -s zb-v -p 2 -m 3 --csv >"$T/zbv.csv"
run_pps run --schedule-file "$T/zbv.csv" --check-grads --layers 5 --partition 2,0,1,2
grep -q "^check-grads custom p=2 m=3 v=2 (threads): ok" "$T/out" && ok ||
    fail "check-grads zb-v from its CSV: $(cat "$T/out" "$T/err")"
if command -v mpirun >/dev/null 2>&1; then
    MPIRUN_CMD=$(command -v mpirun)
    mpi="mpirun -np 2 --oversubscribe"
    [ "$(id -u)" -eq 0 ] && mpi="$mpi --allow-run-as-root"
    $mpi "$PPS" run --schedule-file "$T/zbv.csv" --check-grads --layers 5 >"$T/out" 2>"$T/err"
    grep -q "^check-grads custom p=2 m=3 v=2 (mpi): ok" "$T/out" && ok ||
        fail "check-grads under MPI: $(cat "$T/out" "$T/err")"
    # Every rank reads the file from its own path: ranks that read different schedules are
    # refused, all of them, rank 0 naming the first that differs (Open MPI numbers each rank in
    # OMPI_COMM_WORLD_RANK, which picks each rank's file here).
    if "$MPIRUN_CMD" --version 2>/dev/null | grep -qi "open mpi"; then
        "$PPS" sim -s 1f1b -p 2 -m 4 --csv >"$T/r0.csv"
        "$PPS" sim -s gpipe -p 2 -m 4 --csv >"$T/r1.csv"
        $mpi sh -c "exec \"$PPS\" run --schedule-file \"$T/r\$OMPI_COMM_WORLD_RANK.csv\" \
            --check-grads --layers 2 --hidden 16 --seq-len 8 --microbatch-size 1" \
            >"$T/out" 2>"$T/err"
        rc=$?
        if [ "$rc" -ne 0 ] && grep -q "r0.csv: rank 1 read another schedule than rank 0" "$T/err" &&
            [ "$(grep -c "read another schedule" "$T/err")" -eq 1 ]; then ok; else
            fail "ranks with different schedules: rc $rc $(cat "$T/err")"
        fi
    fi
fi

# It traces and reports like a built-in one: an emulated run of the file's zb-h1 order beside
# zb-h1 itself, the same order, so the same prediction; the report says where it came from and
# rebuilds the order it ran from the run (its memory equals the measured, op for op).
"$PPS" sim -s zb-h1 -p 3 -m 6 --csv >"$T/h1.csv"
run_pps run --backend emu --emu-tf 3 --emu-tb 3 --emu-tw 3 --schedule-file "$T/h1.csv" -s zb-h1 \
    --iters 4 --out "$T/ab"
[ "$rc" -eq 0 ] && ok || fail "emu run: $(cat "$T/err")"
"$PPS" report "$T/ab/custom" >"$T/rep.txt" 2>"$T/err" || fail "report: $(cat "$T/err")"
grep -q "^schedule  custom (from $T/h1.csv)  p=3 m=6 v=1" "$T/rep.txt" && ok ||
    fail "report's schedule line: $(grep ^schedule "$T/rep.txt")"
grep -q "^predicted custom (the order it ran) with the measured mean op costs" "$T/rep.txt" && ok ||
    fail "report's prediction: $(grep ^predicted "$T/rep.txt")"
"$PPS" report --json "$T/ab/custom" >"$T/c.json"
expect "$T/c.json" .schedule '"custom"'
expect "$T/c.json" .inferred.schedule false
expect "$T/c.json" '[.memory.stages[] | .schedule_act_bytes == .act_peak_bytes] | all' true
expect "$T/c.json" '[.memory.stages[] | .schedule_pending_w == .pending_w_peak] | all' true
# The same order: the what-if from the custom run's own costs predicts zb-h1 exactly as the run's
# own order, and the run's measured bubble is within the report's tolerance of its prediction.
"$PPS" sim --from "$T/ab/custom" --schedule zb-h1 --json >"$T/w.json" 2>"$T/err" ||
    fail "sim --from the custom run: $(cat "$T/err")"
# (rows of equal time come in either order: each is picked by its name)
expect "$T/w.json" '[.predictions[] | .schedule] | sort' '["custom","zb-h1"]'
expect "$T/w.json" '[.predictions[] | .iter_ns] | (.[0] == .[1] and .[0] > 0)' true
expect "$T/c.json" '.prediction.iteration_ns' "$(jq -c '.predictions[0].iter_ns' "$T/w.json")"
# The other way round: the zb-h1 run's costs replayed under the file's order (sim --from with
# --schedule-file) predict what its own order does, to the nanosecond.
"$PPS" sim --from "$T/ab/zb-h1" --schedule-file "$T/h1.csv" --json >"$T/w2.json" 2>"$T/err" ||
    fail "sim --from with --schedule-file: $(cat "$T/err")"
expect "$T/w2.json" '[.predictions[] | .schedule] | sort' '["custom","zb-h1"]'
expect "$T/w2.json" '.predictions[] | select(.schedule == "custom") | .schedule_file' "\"$T/h1.csv\""
expect "$T/w2.json" '[.predictions[] | select(.baseline) | .iter_ns] ==
    [.predictions[] | select(.schedule == "custom") | .iter_ns]' true
# Timing on a shared host: an emulated op can stall, so a miss is measured again, twice at most.
tries=1
until jq -e '(.bubble - .predicted_bubble | fabs) <= .verdict.tolerance' "$T/c.json" >/dev/null ||
    [ $tries -ge 3 ]; do
    tries=$((tries + 1))
    rm -rf "$T/again"
    "$PPS" run --backend emu --emu-tf 3 --emu-tb 3 --emu-tw 3 --schedule-file "$T/h1.csv" \
        --iters 4 --out "$T/again" >/dev/null 2>&1 && "$PPS" report --json "$T/again" >"$T/c.json"
done
jq -e '(.bubble - .predicted_bubble | fabs) <= .verdict.tolerance' "$T/c.json" >/dev/null && ok ||
    fail "custom: measured $(jq .bubble "$T/c.json") vs predicted $(jq .predicted_bubble "$T/c.json") (tolerance $(jq .verdict.tolerance "$T/c.json"), $tries tries)"

cli_finish
