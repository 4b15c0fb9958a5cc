#!/bin/sh
# import_kineto.sh - `ppscope import` of PyTorch profiler (Kineto) traces, end to end:
#   - the real traces of tests/fixtures/kineto (torch.distributed.pipelining on CPU, gloo, 4
#     ranks; GPipe, 1F1B, interleaved 1F1B, interleaved zero bubble, ZBV, DualPipeV): the spans
#     per stage and kind, the ranks, the iterations, p, m, v, the schedule family, and the
#     measured bubble of `ppscope report --json` against the one kineto_check.py works out from
#     the JSON on its own;
#   - HolisticTraceAnalysis's GPU traces in shared/traces/kineto_hta: kernels, copies, steps
#     and kernel time against the summaries beside them;
#   - bad input: each file gets one line on stderr, exit 2, and no run (nor anything else) is
#     left behind.
# Needs python3 (exit 77 without it).
. "$(dirname "$0")/lib.sh"
cli_init import_kineto "$1"
here=$(cd "$(dirname "$0")" && pwd)
fix=$here/../fixtures/kineto
hta=$here/../../../shared/traces/kineto_hta
command -v python3 >/dev/null 2>&1 || { echo "skipped: no python3" >&2; exit 77; }
if ! "$PPS" import -q "$fix/gpipe-rank-0.json.gz" -o "$T/probe" 2>"$T/err" &&
    grep -q "built without simdjson" "$T/err"; then
    echo "skipped: $(cat "$T/err")" >&2
    exit 77
fi
rm -rf "$T/probe"

# --- the fixtures ---------------------------------------------------------------------------
for s in gpipe 1f1b interleaved1f1b interleavedzb zbv dualpipev; do
    set -- "$fix/$s"-rank-*.json.gz
    if [ ! -f "$1" ]; then
        fail "$s: no fixture (tests/fixtures/kineto/make.sh makes them)"
        continue
    fi
    expect_exit 0 import -q "$@" -o "$T/$s" || continue
    if ! "$PPS" report --json "$T/$s" >"$T/$s.json" 2>"$T/err"; then
        fail "report $s: $(cat "$T/err")"
        continue
    fi
    if python3 "$here/kineto_check.py" fixture "$T/$s" "$T/$s.json" "$s" "$@" >"$T/check" 2>&1; then
        ok
    else
        fail "kineto_check.py $s: $(cat "$T/check")"
    fi
    head -1 "$T/check"
done

# PyTorch's ScheduleZBVZeroBubble, as its profiler recorded it, is ppscope's zb-v op for op: the
# order of two chunks a stage that runs only placed in V (analysis/infer.c).
if "$PPS" report "$T/zbv" 2>&1 | grep -q "^schedule  zb-v (its order, inferred)  p=4 m=8 v=2"; then
    ok
else
    fail "zbv: not found to be zb-v: $("$PPS" report "$T/zbv" 2>&1 | head -n 3)"
fi

# PyTorch's ScheduleInterleavedZeroBubble is ppscope's interleaved-zb op for op (its groups, its
# warm-up, the W's each rank holds back; schedule/generate_izb.c).
if "$PPS" report "$T/interleavedzb" 2>&1 |
    grep -q "^schedule  interleaved-zb (its order, inferred)  p=4 m=8 v=2"; then
    ok
else
    fail "interleavedzb: not found to be interleaved-zb: $("$PPS" report "$T/interleavedzb" 2>&1 | head -n 3)"
fi

# The files may come in any order: the ranks are those distributedInfo names.
expect_exit 0 import -q "$fix/zbv-rank-3.json.gz" "$fix/zbv-rank-1.json.gz" \
    "$fix/zbv-rank-0.json.gz" "$fix/zbv-rank-2.json.gz" -o "$T/zbv-shuffled"
strip_run='import json, sys; d = json.load(sys.stdin); d.pop("run"); print(json.dumps(d))'
"$PPS" report --json "$T/zbv" | python3 -c "$strip_run" >"$T/a.json"
"$PPS" report --json "$T/zbv-shuffled" | python3 -c "$strip_run" >"$T/b.json"
if cmp -s "$T/a.json" "$T/b.json"; then
    ok
else
    fail "zbv: the report depends on the files' order"
fi
# One rank alone keeps its rank and the world it was part of.
expect_exit 0 import -q "$fix/interleaved1f1b-rank-2.json.gz" -o "$T/one"
if sqlite3 "$T/one/rank-00002.db" "SELECT value FROM meta WHERE key = 'world'" 2>/dev/null |
    grep -qx 4; then ok; else fail "one rank: no rank-00002.db with world 4"; fi
# A rank given twice is refused.
expect_exit 2 import "$fix/gpipe-rank-0.json.gz" "$fix/gpipe-rank-0.json.gz" -o "$T/twice" &&
    stderr_has "a second file of rank 0"
[ ! -e "$T/twice" ] || fail "a refused import left $T/twice"

# --- HolisticTraceAnalysis's traces -------------------------------------------------------------
if [ -d "$hta" ]; then
    expect_exit 0 import -q "$hta/sampled_rank-0.json.gz" "$hta/sampled_rank-1.json.gz" -o "$T/hta2"
    if python3 "$here/kineto_check.py" hta "$T/hta2" - "$hta/sampled_rank-0.json.gz" \
        "$hta/sampled_rank-1.json.gz" >"$T/check" 2>&1; then
        ok
    else
        fail "hta: $(cat "$T/check")"
    fi
    expect_exit 0 import -q "$hta/nccl_data.json.gz" -o "$T/hta1"
    if python3 "$here/kineto_check.py" hta "$T/hta1" - "$hta/nccl_data.json.gz" >"$T/check" 2>&1
    then ok; else fail "hta nccl: $(cat "$T/check")"; fi
else
    echo "note: no $hta: HolisticTraceAnalysis's traces not checked" >&2
fi

# --- bad input ------------------------------------------------------------------------------
bad=$T/bad
mkdir -p "$bad"
: >"$bad/empty.json"
printf 'hello, world\n' >"$bad/not-json.json"
printf '{"traceEvents": [{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 2},' \
    >"$bad/truncated.json"
zcat "$fix/gpipe-rank-0.json.gz" | gzip -c | head -c 20000 >"$bad/truncated.json.gz"
# Larger than the reader's read-ahead (a few 1 MiB chunks): cut short, and damaged in the middle.
python3 - "$bad" <<'PY'
import gzip, sys, random
ev = '{"ph": "X", "name": "aten::mm", "pid": 1, "tid": 1, "ts": %d, "dur": 3}'
body = ('{"traceEvents": [' + ','.join(ev % (10 * i) for i in range(200000)) + ']}').encode()
z = gzip.compress(body, 6)
open(sys.argv[1] + '/big-truncated.json.gz', 'wb').write(z[: len(z) * 2 // 3])
b = bytearray(z)
random.seed(1)
for i in range(len(b) // 2, len(b) // 2 + 64):
    b[i] ^= random.randrange(1, 256)
open(sys.argv[1] + '/big-corrupt.json.gz', 'wb').write(bytes(b))
PY
# A million brackets: closed, left open, and in a value beside traceEvents.
deep() { python3 -c "import sys; sys.stdout.write('$1' + '[' * 10**6 + '$2' * 10**6 + '$3')"; }
deep '{"traceEvents": [' ']' ']}' >"$bad/deep.json"
deep '{"traceEvents": [' '' '' >"$bad/deep-open.json"
deep '{"x": ' ']' ', "traceEvents": []}' >"$bad/deep-value.json"
ev='"ph": "X", "name": "a", "pid": 1, "tid": 1'
printf '{"traceEvents": [{%s, "ts": 1e400, "dur": 1}]}' "$ev" >"$bad/huge-ts.json"
printf '{"traceEvents": [{%s, "ts": 123456789012345678901234567890, "dur": 1}]}' "$ev" \
    >"$bad/huge-int.json"
printf '{"traceEvents": [{%s, "ts": 5, "dur": -1}]}' "$ev" >"$bad/negative-dur.json"
printf '{"traceEvents": [{%s, "ts": NaN, "dur": 1}]}' "$ev" >"$bad/nan.json"
printf '{"traceEvents": [{%s, "ts": "5", "dur": 1}]}' "$ev" >"$bad/string-ts.json"
printf '{"traceEvents": [{"ph": 7, "name": "a", "ts": 5, "dur": 1}]}' >"$bad/number-ph.json"
printf '{"traceEvents": [{%s, "ts": 5, "dur": 1, "args": {"correlation": "x"}}]}' "$ev" \
    >"$bad/string-corr.json"
printf '{"schemaVersion": 1, "traceName": "x"}' >"$bad/no-events.json"
printf '{"traceEvents": {"a": 1}}' >"$bad/events-object.json"
printf '{"traceEvents": [1, 2, "three"]}' >"$bad/events-not-objects.json"
printf '{"traceEvents": []}' >"$bad/events-empty.json"
printf '{"traceEvents": [{%s, "ts": 5, "dur": 1}]} trailing' "$ev" >"$bad/trailing.json"
printf '{"distributedInfo": {"rank": "zero"}, "traceEvents": [{%s, "ts": 5, "dur": 1}]}' "$ev" \
    >"$bad/string-rank.json"
printf '{"traceEvents": [{%s, "ts": 5, "dur": 1}], "baseTimeNanoseconds": 4611686018427387904}' \
    "$ev" >"$bad/base-too-big.json"
mkdir -p "$bad/a-directory"
for f in "$bad"/*.json "$bad"/*.json.gz "$bad/a-directory" "$bad/missing.json"; do
    name=$(basename "$f")
    expect_exit 2 import "$f" -o "$T/out-$name" || continue
    stderr_has "$name"
    case $name in big-truncated*) stderr_has "truncated or corrupted gzip file" ;; esac
    [ ! -e "$T/out-$name" ] || fail "$name: a run was left behind"
done
# Nothing else was left beside the runs either (the importer's temporary directories).
if ls -A "$T" | grep -q '^\.'; then fail "left behind: $(ls -A "$T" | grep '^\.')"; else ok; fi

cli_finish
