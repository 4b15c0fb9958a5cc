#!/bin/sh
# view_no_writer.sh - a run whose writer was killed is not live (issue 11, item 9). While
# `ppscope run` writes, the view's header says [LIVE]; once it is killed (SIGKILL: no close, the
# shards keep complete=0), the header says [NO WRITER] and no more [LIVE]: each shard names the
# process that wrote it (meta writer_pid, on meta host), and no process has that id now.
#
# usage: view_no_writer.sh PPSCOPE
set -u

. "$(dirname "$0")/lib.sh"
cli_init view_no_writer "$1"

run="$T/run"
"$PPS" run --backend emu -p 2 -m 4 --iters 1000000 --out "$run" >/dev/null 2>&1 &
pid=$!
header() { "$PPS" view --once "$run" 2>/dev/null | head -n 1; }
live=
for _ in $(seq 100); do
    live=$(header)
    case $live in *"[LIVE]"*) break ;; esac
    sleep 0.1
done
case $live in
*"[LIVE]"*) ok ;;
*) fail "no [LIVE] in the header while the run is written: '$live'" ;;
esac
kill -KILL "$pid"
wait "$pid" 2>/dev/null
h=$(header)
case $h in
*"[NO WRITER]"*) ok ;;
*) fail "no [NO WRITER] in the header of a killed run: '$h'" ;;
esac
case $h in
*"[LIVE]"*) fail "[LIVE] in the header of a killed run: '$h'" ;;
*) ok ;;
esac
# The report still reads it, as a run that did not finish.
expect_exit 0 report "$run"
grep -q "INCOMPLETE" "$T/out" && ok || fail "report of a killed run: $(head -5 "$T/out")"

cli_finish
