#!/bin/sh
# run_host.sh - what `ppscope run` and `ppscope report` say about the host: more cpu stage threads
# than usable cores get a warning before the run (and none otherwise, nor on emu, whose stages
# sleep); the report measures how long the stage threads waited for a core; and a report of a
# run ppscope made says nothing untrue about spans without an iteration (its sends, receives and
# waits carry theirs and lie in the windows).
# Usage: run_host.sh PATH/TO/ppscope
set -u
. "$(dirname "$0")/lib.sh"
cli_init run_host "$1"

cores=$(nproc 2>/dev/null || echo 2)
over=$((cores + 1))

expect_exit 0 run -p "$over" -m 4 --iters 2 --layers "$over" --out "$T/over"
stderr_has "ppscope run: warning: $over stage threads on $cores usable core"
stderr_has "-p $cores or fewer fits this machine"
run_pps report "$T/over"
grep -q "^host      the stage threads waited for a CPU core [0-9.]*% of their time" "$T/out" ||
    fail "the report does not measure the host: $(cat "$T/out")"
grep -q "; $over stage threads on $cores core" "$T/out" ||
    fail "the report does not set the stage threads against the cores: $(grep '^host' "$T/out")"
run_pps report --json "$T/over"
grep -q '"host":{"contention":[0-9.e-]*,' "$T/out" || fail "--json has no host figures"
grep -q "\"stage_threads\":$over,\"cpus\":$cores" "$T/out" ||
    fail "--json host: $(grep -o '"host":{[^}]*}' "$T/out")"

expect_exit 0 run -p 1 -m 4 --iters 2 --out "$T/one"
grep -q "warning" "$T/err" && fail "a warning for one stage thread: $(cat "$T/err")"
expect_exit 0 run --backend emu -p 8 -m 8 --iters 2 --emu-tf 0.5 --emu-tb 0.5 --emu-tw 0.5 \
    --out "$T/emu"
grep -q "warning" "$T/err" && fail "a warning for emu stages, which sleep: $(cat "$T/err")"

run_pps report "$T/emu"
grep -q "^run       $T/emu (run directory, from ppscope run)$" "$T/out" ||
    fail "the report does not say where the run came from: $(head -n 1 "$T/out")"
grep -q "carry no iteration" "$T/out" && fail "an untrue note: $(grep '^note' "$T/out")"
grep -q "^note" "$T/out" && fail "a note about a run ppscope made: $(grep '^note' "$T/out")"
grep -q "^links, per message" "$T/out" || fail "the report has no links: $(cat "$T/out")"
cli_finish
