#!/bin/sh
# report_memory.sh - the report's memory section (issue 12 item 6): each stage's measured peak
# activation bytes and pending W's (the runtime's own samples) beside what its schedule holds op
# by op (analysis/memory.h). On emu the model is the emulation's and on cpu it is the model's
# own buffers, so the two agree exactly, for every schedule and under a pending-W budget; and
# the theory holds: 1f1b's stage s peaks at p - s microbatches, gpipe's at m, 1f1b holds no W.
#
# usage: report_memory.sh PPSCOPE
set -u

. "$(dirname "$0")/lib.sh"
cli_init report_memory "$1"

# check RUN WHAT: report --json's memory, stage by stage, measured == schedule
check() {
    expect_exit 0 report --json "$1" || return
    python3 - "$T/out" "$2" <<'PY' || fail "$2: $(cat "$T/py.err" 2>/dev/null)"
import json, sys
d = json.load(open(sys.argv[1]))
m = d["memory"]
assert m and m["predicted"], "no memory section: %r" % m
for st in m["stages"]:
    assert st["act_peak_bytes"] > 0, st
    assert st["act_peak_bytes"] == st["schedule_act_bytes"], st
    assert st["pending_w_peak"] == st["schedule_pending_w"], st
PY
    ok
}

# theory RUN P M KIND: 1f1b's stage s peaks at (p - s) x its bytes after F, gpipe's at m x
theory() {
    python3 - "$1" "$2" "$3" "$4" "$PPS" <<'PY' || fail "$4 theory"
import json, subprocess, sys, sqlite3, glob
run, p, m, kind, pps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
d = json.loads(subprocess.run([pps, "report", "--json", run], capture_output=True).stdout)
for st in d["memory"]["stages"]:
    s = st["stage"]
    db = sqlite3.connect("%s/rank-%05d.db" % (run, s))
    f = int(db.execute("select value from meta where key='act_bytes_f'").fetchone()[0])
    n = p - s if kind == "1f1b" else m
    assert st["act_peak_bytes"] == n * f, (s, st, n, f)
    assert st["pending_w_peak"] == 0, st
PY
    ok
}

for s in gpipe 1f1b interleaved zb-h1 zb-h2; do
    "$PPS" run --backend emu -s "$s" -p 4 -m 8 --iters 2 --emu-tf 0.2 --emu-tb 0.2 --emu-tw 0.2 \
        --out "$T/emu-$s" >/dev/null 2>"$T/run.err" || fail "emu $s: $(cat "$T/run.err")"
    check "$T/emu-$s" "emu $s"
done
theory "$T/emu-1f1b" 4 8 1f1b
theory "$T/emu-gpipe" 4 8 gpipe
for s in 1f1b zb-h1 zb-h2; do
    "$PPS" run -s "$s" -p 2 -m 4 --iters 2 --out "$T/cpu-$s" >/dev/null 2>"$T/run.err" ||
        fail "cpu $s: $(cat "$T/run.err")"
    check "$T/cpu-$s" "cpu $s"
done
# A pending-W budget reorders the schedule: the memory follows the order that ran.
"$PPS" run --backend emu -s zb-h2 -p 4 -m 8 --iters 2 --w-budget 2 --emu-tf 0.2 --emu-tb 0.2 \
    --emu-tw 0.2 --out "$T/budget" >/dev/null 2>"$T/run.err" || fail "budget: $(cat "$T/run.err")"
check "$T/budget" "zb-h2 --w-budget 2"
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); sys.exit(max(s['pending_w_peak'] for s in d['memory']['stages'])!=2)" "$T/out" ||
    fail "zb-h2 --w-budget 2 does not peak at 2 pending W's"

# The view charts them per iteration beside the bubble (zb-h1 p=4 m=8: stage s holds s+1 W's at
# most, as the table above says), and no pending-W chart for a schedule that holds none.
expect_exit 0 view --once --size 200x50 "$T/emu-zb-h1"
grep -q "pending W s3 *4\.\.4 " "$T/out" || fail "view: no pending W chart of stage 3: $(cat "$T/out")"
grep -q "bubble % " "$T/out" || fail "view: no bubble chart"
expect_exit 0 view --once --size 200x50 "$T/emu-1f1b"
grep -q "pending W s" "$T/out" && fail "view: a pending-W chart for 1f1b"

# The text says it, and a run without memory samples (a simulated one) has no section.
expect_exit 0 report "$T/emu-zb-h1"
grep -q "^memory    peak activations and pending W per stage" "$T/out" || fail "text: no memory"
"$PPS" sim -s 1f1b -p 4 -m 8 --trace "$T/sim" >/dev/null 2>&1 || fail "sim --trace"
expect_exit 0 report --json "$T/sim"
grep -q '"memory":null' "$T/out" || fail "a simulated run has a memory section: $(head -c 300 "$T/out")"
cli_finish
