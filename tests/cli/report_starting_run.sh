#!/bin/sh
# report_starting_run.sh - reports of a run that is starting (issue 11, item 8). A shard appears
# only once it holds its schema and first meta (storage/writer.c creates it under another name),
# so `ppscope report` run back to back from the moment the run's directory has its first entry
# never calls a shard being created "truncated or corrupted", "an empty file" or "an SQLite
# database of another program", nor takes a rank that has not written its run's metadata yet for
# another run. Each report either succeeds (the run is live: incomplete) or says the run's shards
# are not ready yet, exit 2; nothing else.
#
# usage: report_starting_run.sh PPSCOPE
set -u

. "$(dirname "$0")/lib.sh"
cli_init report_starting_run "$1"

ROUNDS=3
REPORTS=100

for round in $(seq "$ROUNDS"); do
    run="$T/run$round"
    "$PPS" run --backend emu -p 2 -m 4 --iters 50 --out "$run" >"$T/run.out" 2>&1 &
    pid=$!
    # From the first entry on: a tight loop, so that the first report meets the first shard.
    tries=0
    while [ -z "$(ls -A "$run" 2>/dev/null)" ] && [ "$tries" -lt 20000 ]; do
        tries=$((tries + 1))
    done
    for i in $(seq "$REPORTS"); do
        run_pps report "$run"
        if [ "$rc" -eq 0 ]; then
            ok
        elif [ "$rc" -eq 2 ] && grep -q 'not ready yet' "$T/err" && [ "$(wc -l <"$T/err")" -eq 1 ]; then
            ok
        else
            fail "round $round, report $i: exit $rc: $(head -c 300 "$T/err")"
        fi
    done
    wait "$pid" || fail "round $round: ppscope run failed: $(tail -3 "$T/run.out")"
    # The run is finished: only its shards are left, no name it was created under (and the
    # summary of a report that came after the run's end: docs/schema.md).
    left=$(cd "$run" && ls -A | grep -v '^rank-0000[01]\.db$' | grep -v '^ppscope\.summary$')
    [ -z "$left" ] && ok || fail "round $round: left in the run: $left"
done

cli_finish
