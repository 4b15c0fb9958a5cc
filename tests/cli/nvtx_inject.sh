#!/bin/sh
# nvtx_inject.sh - the NVTX injection end to end: examples/nvtx_pipeline runs under
# NVTX_INJECTION64_PATH=libppscope_nvtx.so in each naming style (PyTorch labels, ppscope names in
# a domain with registered and wide strings, a user regex over start/end ranges), and the run it
# leaves must hold exactly the spans the example says it emitted (its --print), kinds, stages,
# microbatches, peers, bytes and named ranges, in the counts worked out here independently.
# Also: without the injection nothing is written; the stage and shard come from the launcher's
# rank; the default run directory; a bad regex, an existing shard and PPSCOPE_NVTX_RANGES each
# behave as documented, with one stderr line per problem; and programs that end badly
# (test_nvtx_exit: exit under running threads, fork, nesting too deep, a thread that exits with
# a range open) still exit 0 and leave a complete run.
#
# Usage: nvtx_inject.sh EXAMPLE LIBPPSCOPE_NVTX TEST_NVTX_CHECK TEST_NVTX_EXIT [PPSCOPE]
set -u
EX=${1:?usage: nvtx_inject.sh EXAMPLE LIB CHECK EXIT [PPSCOPE]}
LIB=${2:?missing LIB}
CHECK=${3:?missing CHECK}
EXIT_PROG=${4:?missing EXIT}
PPS=${5:-}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/pps-nvtx-XXXXXX") || exit 1
trap 'rm -rf "$TMP"' EXIT INT TERM
fails=0

# The launcher and ppscope variables of whoever runs the test must not leak into it.
unset RANK WORLD_SIZE LOCAL_RANK OMPI_COMM_WORLD_RANK OMPI_COMM_WORLD_SIZE PMI_RANK PMI_SIZE \
    PMIX_RANK SLURM_PROCID SLURM_NTASKS PPSCOPE_RUN PPSCOPE_STAGE PPSCOPE_NVTX_REGEX \
    PPSCOPE_NVTX_GROUPS PPSCOPE_NVTX_KIND PPSCOPE_NVTX_RANGES PPSCOPE_NVTX_TORCH_B \
    PPSCOPE_NVTX_STAGES PPSCOPE_NVTX_STAGE_ORDER NVTX_INJECTION64_PATH

REGEX='^(fwd|bgrad|wgrad|send|recv)_s([0-9]+)_mb([0-9]+)$'

fail() {
    echo "FAIL: $*" >&2
    fails=$((fails + 1))
}

# traced NAME ENV=VALUE... PROGRAM ARGS...: runs PROGRAM under the injection, writing the run
# $TMP/NAME; stdout in $TMP/NAME.out, stderr in $TMP/NAME.err. Fails on a non-zero exit.
traced() {
    name=$1
    shift
    env NVTX_INJECTION64_PATH="$LIB" PPSCOPE_RUN="$TMP/$name" "$@" \
        >"$TMP/$name.out" 2>"$TMP/$name.err"
    rc=$?
    [ "$rc" -eq 0 ] || fail "$name: exit $rc: $(cat "$TMP/$name.err")"
}

quiet() {
    [ -s "$TMP/$1.err" ] && fail "$1: stderr is not empty: $(cat "$TMP/$1.err")"
}

# same NAME: the run holds exactly the spans the example printed, iterations included.
same() {
    if ! "$CHECK" "$TMP/$1" --iter >"$TMP/$1.got" 2>"$TMP/$1.check"; then
        fail "$1: the run does not load: $(cat "$TMP/$1.check")"
        return
    fi
    sort "$TMP/$1.out" >"$TMP/$1.want.sorted"
    sort "$TMP/$1.got" >"$TMP/$1.got.sorted"
    if ! diff -u "$TMP/$1.want.sorted" "$TMP/$1.got.sorted" >"$TMP/$1.diff"; then
        fail "$1: the run differs from what the example emitted (- emitted, + traced):"
        head -n 40 "$TMP/$1.diff" >&2
    fi
}

# count NAME EXPECTED REGEX: how many traced spans match an extended regex.
count() {
    got=$(grep -Ec "$3" "$TMP/$1.got")
    [ "$got" -eq "$2" ] || fail "$1: $got spans match /$3/, expected $2"
}

# --- without the injection the example runs the same and writes nothing ---
mkdir "$TMP/plain"
(cd "$TMP/plain" && "$EX" torch --print >"$TMP/plain.out" 2>"$TMP/plain.err") ||
    fail "the example fails without the injection: $(cat "$TMP/plain.err")"
quiet plain
[ -z "$(ls -A "$TMP/plain")" ] ||
    fail "without the injection something was written: $(ls -A "$TMP/plain")"
[ -s "$TMP/plain.out" ] || fail "the example printed nothing with --print"

# --- device activity asked for (PPSCOPE_CUPTI=1): where CUPTI cannot trace (no GPU here), one
# line says why and the run is the same as without it; where it can, the ops carry their ids ---
traced cupti PPSCOPE_CUPTI=1 PPSCOPE_STAGE=1 "$EX" torch --stage 1 --stages 4 --iters 1 --mbs 2 \
    --print
same cupti
if [ -s "$TMP/cupti.err" ]; then
    [ "$(wc -l <"$TMP/cupti.err")" -eq 1 ] && grep -q "^ppscope nvtx: no device spans: " \
        "$TMP/cupti.err" || fail "cupti: not one line saying why: $(cat "$TMP/cupti.err")"
fi
# Not asked for, in a process without CUDA: nothing tried, nothing said (the torch case below).

# --- PyTorch labels: stage 1 of 4, 3 iterations of 4 microbatches; iteration 1 uses B ---
traced torch PPSCOPE_STAGE=1 "$EX" torch --stage 1 --stages 4 --iters 3 --mbs 4 --print
quiet torch
same torch
[ -f "$TMP/torch/rank-00000.db" ] || fail "torch: no rank-00000.db in the run"
count torch 12 '^F stage=1 chunk=0 mb=[0-3] iter=-?[0-9]+$'
count torch 8 '^B stage=1 chunk=0 mb=[0-3] iter=-?[0-9]+$'  # "I" of iterations 0 and 2
count torch 8 '^W stage=1 chunk=0 mb=[0-3] iter=-?[0-9]+$'
count torch 4 '^BW stage=1 chunk=0 mb=[0-3] iter=-?[0-9]+$' # "B" of iteration 1
count torch 12 '^RECV stage=1 peer=0 mb=[0-3] bytes=0 iter=-?[0-9]+$'
count torch 12 '^SEND stage=1 peer=2 mb=[0-3] bytes=0 iter=-?[0-9]+$'
count torch 12 '^RECV stage=1 peer=2 mb=[0-3] bytes=0 iter=-?[0-9]+$'
count torch 12 '^SEND stage=1 peer=0 mb=[0-3] bytes=0 iter=-?[0-9]+$'
count torch 3 '^RANGE stage=1 name=data loading$'
count torch 3 '^RANGE stage=1 name=PP:1UNSHARD$'
count torch 3 '^RANGE stage=1 name=optimizer.step$'
count torch 1 '^RANGE stage=1 name=main$'
count torch 1 '^RANGE stage=1 name=checkpoint$'
count torch 0 'op_id'
# Iterations start at the first forward: microbatch 0's receive still counts in the one before.
for it in 0 1 2; do
    count torch 4 "^F stage=1 chunk=0 mb=[0-3] iter=$it\$"
    count torch 1 "^RECV stage=1 peer=0 mb=0 bytes=0 iter=$((it - 1))\$"
    count torch 3 "^RECV stage=1 peer=0 mb=[1-3] bytes=0 iter=$it\$"
done
count torch 91 '.'
# One process traced stage 1 alone: the run has one stage, stage 1 (no phantom stage 0 that
# idles all the time), and no claim about an LM head that no metadata places.
if [ -n "$PPS" ]; then
    if "$PPS" report "$TMP/torch" >"$TMP/report.out" 2>"$TMP/report.err"; then
        grep -q "^schedule  unknown  p=? m=4 v=1 (inferred: m)  1 stage (stage 1), 3 iterations" "$TMP/report.out" ||
            fail "torch: report does not say one stage, stage 1: $(cat "$TMP/report.out")"
        grep -q "^    0 " "$TMP/report.out" && fail "torch: report shows a stage 0: $(cat "$TMP/report.out")"
        grep -q "head\|embedding" "$TMP/report.out" &&
            fail "torch: report names a model part no metadata places: $(cat "$TMP/report.out")"
        "$PPS" report --json "$TMP/torch" >"$TMP/report.json" 2>"$TMP/report.err"
        grep -q '"n_stages":1,' "$TMP/report.json" || fail "torch: --json n_stages is not 1"
    else
        fail "ppscope report on the torch NVTX run: $(cat "$TMP/report.err")"
    fi
fi

# --- ppscope names in a domain: registered, wide, payload bytes, iteration markers ---
traced pps PPSCOPE_STAGE=2 "$EX" pps --stage 2 --stages 4 --iters 3 --mbs 4 --print
quiet pps
same pps
for it in 0 1 2; do
    count pps 4 "^F stage=2 chunk=0 mb=[0-3] iter=$it\$"
    count pps 4 "^B stage=2 chunk=0 mb=[0-3] iter=$it\$" # registered as a wide string
    count pps 4 "^W stage=2 chunk=0 mb=[0-3] iter=$it\$" # its stage is PPSCOPE_STAGE's
    count pps 1 "^OPT stage=2 chunk=0 mb=-1 iter=$it\$"
    count pps 4 "^SEND stage=2 peer=3 mb=[0-3] bytes=65536 iter=$it\$" # bytes from the payload
    count pps 4 "^RECV stage=2 peer=1 mb=[0-3] bytes=65536 iter=$it\$"
    count pps 1 "^RANGE stage=2 name=pps:iter=$it\$"
done
count pps 3 '^RANGE stage=2 name=data loading$' # a wide message
count pps 1 '^RANGE stage=2 name=main$'
count pps 95 '.'
if [ -n "$PPS" ]; then
    "$PPS" report "$TMP/pps" >"$TMP/report.out" 2>"$TMP/report.err" ||
        fail "ppscope report on the NVTX run: $(cat "$TMP/report.err")"
fi

# --- the user's regex over start/end ranges; weight gradients end on another thread ---
traced regex PPSCOPE_STAGE=0 PPSCOPE_NVTX_REGEX="$REGEX" PPSCOPE_NVTX_GROUPS=kind,stage,mb \
    "$EX" regex --stage 0 --stages 2 --iters 2 --mbs 3 --print
quiet regex
same regex
count regex 6 '^F stage=0 chunk=0 mb=[0-2] iter=-?[0-9]+$'
count regex 6 '^B stage=0 chunk=0 mb=[0-2] iter=-?[0-9]+$'
count regex 6 '^W stage=0 chunk=0 mb=[0-2] iter=-?[0-9]+$'
count regex 6 '^SEND stage=0 peer=-1 mb=[0-2] bytes=0 iter=-?[0-9]+$'
count regex 0 '^RECV'
count regex 2 '^RANGE stage=0 name=data loading$'
count regex 30 '.'

# --- the regex is a user's setting: without it, the same names are named ranges ---
traced noregex PPSCOPE_STAGE=0 "$EX" regex --stage 0 --stages 2 --iters 2 --mbs 3
quiet noregex
"$CHECK" "$TMP/noregex" --iter >"$TMP/noregex.got" 2>"$TMP/noregex.check" ||
    fail "noregex: the run does not load: $(cat "$TMP/noregex.check")"
count noregex 6 '^RANGE stage=0 name=fwd_s0_mb[0-2]$'
count noregex 0 '^(F|B|W|SEND) '

# --- the stage and the shard come from the launcher's rank (torchrun's variables) ---
traced rank RANK=2 WORLD_SIZE=4 "$EX" torch --stage 2 --stages 4 --iters 1 --mbs 2 --print
quiet rank
same rank
[ -f "$TMP/rank/rank-00002.db" ] || fail "rank: no rank-00002.db: $(ls "$TMP/rank")"
count rank 1 '^RANGE stage=2 name=main$'

# --- PPSCOPE_RUN unset: ppscope-run-<pid> in the current directory ---
mkdir "$TMP/cwd"
(cd "$TMP/cwd" && NVTX_INJECTION64_PATH="$LIB" "$EX" torch --stage 0 --iters 1 --mbs 1 \
    >/dev/null 2>"$TMP/cwd.err") || fail "default run directory: the example failed"
quiet cwd
runs=$(ls "$TMP/cwd")
case "$runs" in
ppscope-run-[0-9]*) [ -f "$TMP/cwd/$runs/rank-00000.db" ] || fail "no shard in $runs" ;;
*) fail "default run directory: found '$runs', expected one ppscope-run-<pid>" ;;
esac

# ... which a job of several ranks is told, in one line, to replace
mkdir "$TMP/cwd2"
(cd "$TMP/cwd2" && RANK=1 WORLD_SIZE=2 NVTX_INJECTION64_PATH="$LIB" "$EX" torch --stage 1 \
    --stages 2 --iters 1 --mbs 1 >/dev/null 2>"$TMP/cwd2.err") ||
    fail "default run directory, 2 ranks: the example failed"
[ "$(wc -l <"$TMP/cwd2.err")" -eq 1 ] && grep -q "PPSCOPE_RUN is not set" "$TMP/cwd2.err" ||
    fail "2 ranks without PPSCOPE_RUN: expected one line: $(cat "$TMP/cwd2.err")"
ls "$TMP"/cwd2/ppscope-run-*/rank-00001.db >/dev/null 2>&1 ||
    fail "2 ranks without PPSCOPE_RUN: no rank-00001.db in $(ls "$TMP/cwd2")"

# --- a bad regex: one line on stderr, ignored; the built-in rules still work ---
traced badregex PPSCOPE_STAGE=1 PPSCOPE_NVTX_REGEX='^(fwd' PPSCOPE_NVTX_GROUPS=kind \
    "$EX" torch --stage 1 --iters 1 --mbs 2 --print
[ "$(wc -l <"$TMP/badregex.err")" -eq 1 ] ||
    fail "a bad regex takes other than one line: $(cat "$TMP/badregex.err")"
grep -q "PPSCOPE_NVTX_REGEX" "$TMP/badregex.err" || fail "the bad regex line does not name it"
same badregex

# --- a shard that exists: tracing is off with one line, the program runs on, the run is kept ---
env NVTX_INJECTION64_PATH="$LIB" PPSCOPE_RUN="$TMP/torch" PPSCOPE_STAGE=1 \
    "$EX" torch --stage 1 >"$TMP/again.out" 2>"$TMP/again.err" ||
    fail "the example fails when its shard exists"
[ "$(wc -l <"$TMP/again.err")" -eq 1 ] ||
    fail "an existing shard takes other than one line: $(cat "$TMP/again.err")"
grep -q "tracing off" "$TMP/again.err" || fail "an existing shard: $(cat "$TMP/again.err")"
same torch

# --- PPSCOPE_NVTX_RANGES=pipeline keeps only the pipeline ops ---
traced pipeonly PPSCOPE_STAGE=1 PPSCOPE_NVTX_RANGES=pipeline "$EX" torch --stage 1 --iters 1 \
    --mbs 2 --print
quiet pipeonly
grep -v '^RANGE' "$TMP/pipeonly.out" >"$TMP/pipeonly.out.ops"
mv "$TMP/pipeonly.out.ops" "$TMP/pipeonly.out"
same pipeonly
count pipeonly 0 '^RANGE'

# --- Python's nvtx package (domains, registered strings), where the python3 at hand has it ---
PY=${PPS_NVTX_PYTHON:-python3}
if "$PY" -c 'import nvtx' 2>/dev/null; then
    cat >"$TMP/annotated.py" <<'PYEOF'
import nvtx

for it in range(2):
    with nvtx.annotate(f"pps:iter={it}", domain="ppscope"):
        with nvtx.annotate("data loading"):
            pass
        for mb in range(3):
            with nvtx.annotate(f"PP:1F{mb}", color="green"):
                pass
        for mb in range(3):
            nvtx.push_range(f"pps:B stage=1 mb={mb}", domain="ppscope")
            nvtx.pop_range(domain="ppscope")
            r = nvtx.start_range(f"pps:W stage=1 mb={mb}")
            nvtx.end_range(r)
PYEOF
    traced python PPSCOPE_STAGE=1 "$PY" "$TMP/annotated.py"
    quiet python
    "$CHECK" "$TMP/python" --iter >"$TMP/python.got" 2>"$TMP/python.check" ||
        fail "python: the run does not load: $(cat "$TMP/python.check")"
    for it in 0 1; do
        for k in F B W; do
            count python 3 "^$k stage=1 chunk=0 mb=[0-2] iter=$it\$"
        done
        count python 1 "^RANGE stage=1 name=pps:iter=$it\$"
    done
    count python 2 '^RANGE stage=1 name=data loading$'
    count python 22 '.'
else
    echo "nvtx_inject: $PY has no nvtx package: the Python check did not run"
fi

# --- programs that end badly ---
# complete NAME: the run loads, from one shard, closed.
complete() {
    c=$("$CHECK" "$TMP/$1" --complete 2>"$TMP/$1.check")
    [ "$c" = "complete=1 shards=1" ] || fail "$1: '$c', expected complete=1 shards=1"
    "$CHECK" "$TMP/$1" >"$TMP/$1.got" 2>"$TMP/$1.check" || fail "$1: $(cat "$TMP/$1.check")"
}

# main exits while 8 threads are inside NVTX calls.
for i in 1 2 3; do
    traced "threads$i" PPSCOPE_STAGE=0 "$EXIT_PROG" threads
    quiet "threads$i"
    complete "threads$i"
    count "threads$i" 1 '^RANGE stage=0 name=main$'
    grep -q '^F stage=' "$TMP/threads$i.got" || fail "threads$i: no F span from the workers"
done

# A forked child traces nothing, and its exit does not close the parent's run. (LeakSanitizer, in
# a sanitizer build, cannot stop the threads a forked child does not have and says so: off.)
traced fork PPSCOPE_STAGE=0 ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
    "$EXIT_PROG" fork
quiet fork
complete fork
count fork 1 '^RANGE stage=0 name=parent$'
count fork 0 'child'

# 200 nested pushes: 128 are kept, the rest counted in one line; the extra pop is harmless.
traced deep PPSCOPE_STAGE=0 "$EXIT_PROG" deep
complete deep
count deep 128 '^RANGE stage=0 name=level [0-9]+$'
count deep 1 '^RANGE stage=0 name=level 127$'
count deep 0 '^RANGE stage=0 name=level 128$'
[ "$(wc -l <"$TMP/deep.err")" -eq 1 ] && grep -q "72 NVTX ranges not traced" "$TMP/deep.err" ||
    fail "deep: expected one line counting 72 ranges: $(cat "$TMP/deep.err")"

# A thread that exits with a range open: the range ends when the thread did.
traced threadexit PPSCOPE_STAGE=0 "$EXIT_PROG" threadexit
quiet threadexit
complete threadexit
count threadexit 1 '^RANGE stage=0 name=left open$'
count threadexit 1 '^RANGE stage=0 name=after$'

# --- a pipeline of four processes, one stage each, with nothing but NVTX: the report reads p,
# m and the schedule from the order and predicts it (issue 9) ---
if [ -n "$PPS" ]; then
    for s in 0 1 2 3; do
        env RANK=$s WORLD_SIZE=4 NVTX_INJECTION64_PATH="$LIB" PPSCOPE_RUN="$TMP/four" \
            "$EX" torch --stage $s --stages 4 --iters 3 --mbs 4 >/dev/null 2>"$TMP/four.$s.err" &
    done
    wait
    if "$PPS" report --json "$TMP/four" >"$TMP/four.json" 2>"$TMP/four.err"; then
        grep -q '"p":4,"m":4,' "$TMP/four.json" || fail "four: p and m not inferred: $(head -c 300 "$TMP/four.json")"
        grep -q '"inferred":{"schedule":true,"custom":true,"p":true,"m":true,' "$TMP/four.json" ||
            fail "four: not said to be inferred: $(grep -o '"inferred":{[^}]*}' "$TMP/four.json")"
        grep -q '"predicted_bubble":[0-9]' "$TMP/four.json" ||
            fail "four: no prediction: $(grep -o '"prediction_note":[^,]*' "$TMP/four.json")"
        # Iteration 1 runs full backwards (BW), the others split ones: none of them is partial.
        grep -q '"partial_iterations":0' "$TMP/four.json" || fail "four: an iteration called partial"
        "$PPS" report "$TMP/four" >"$TMP/four.txt" 2>&1
        grep -q "^schedule  custom (its observed order)  p=4 m=4 v=1 (inferred: p, m)  4 stages" \
            "$TMP/four.txt" || fail "four: $(grep '^schedule' "$TMP/four.txt")"
    else
        fail "four: ppscope report: $(cat "$TMP/four.err")"
    fi
fi

[ "$fails" -eq 0 ] || exit 1
echo "nvtx_inject: ok"
