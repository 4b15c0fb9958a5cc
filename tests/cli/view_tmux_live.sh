#!/bin/sh
# view_tmux_live.sh - `ppscope view` following a run while it is being written: a writer adds
# one iteration every 0.4 s; the view (in tmux, 100x30) shows [LIVE] [FOLLOW], its header's
# iteration count grows, its view keeps the run's end; pause freezes it while the writer goes
# on, resume catches up; when the writer closes the run, [LIVE] goes. Skipped (77) without tmux
# or without the writer (PPS_LIVEWRITER, set by ctest).
# Usage: view_tmux_live.sh PATH/TO/ppscope
set -u
. "$(dirname "$0")/lib.sh"
cli_init view-live "$1"
. "$(dirname "$0")/tmux_live_lib.sh"

# The iteration count in the header ("... 7 iters ..."), or 0.
iters_shown() {
    screen | head -n 1 | sed -n 's/.* \([0-9][0-9]*\) iters\{0,1\} .*/\1/p' | grep . || echo 0
}

RUN="$T/live"
"$PPS_LIVEWRITER" "$RUN" 12 400 2>"$T/writer.err" &
writer=$!
wait_until '[ -f "$RUN/rank-00000.db" ]' "the writer never created its shard"

$TM new-session -d -s v -x 100 -y 30 "env NO_COLOR=1 TERM=xterm-256color \
    '$PPS' view --delay 0.2 '$RUN'; echo \$? >'$T/exit'; sleep 600"
wait_until 'screen | head -n 1 | grep -qF "[LIVE] [FOLLOW]"' "no [LIVE] [FOLLOW] in the header"
n0=$(iters_shown)
wait_until '[ "$(iters_shown)" -ge $((n0 + 2)) ]' "the iteration count did not grow from $n0"

# Following: the view ends at (or after) the run's end.
line=$(screen | grep "^view ")
end=$(echo "$line" | sed -n 's/^view [^ ]*\.\.\([^ ]*\) of \([^ ]*\) .*/\1/p')
len=$(echo "$line" | sed -n 's/^view [^ ]*\.\.\([^ ]*\) of \([^ ]*\) .*/\2/p')
awk -v e="$(seconds "$end")" -v l="$(seconds "$len")" 'BEGIN { exit !(e >= l) }' ||
    fail "following, yet the view ends at $end of $len: $line"

# Pause: the view stays as it is while the writer goes on.
$TM send-keys -t v Space
wait_until 'screen | head -n 1 | grep -qF "[PAUSED]"' "no [PAUSED] after space"
n1=$(iters_shown)
sleep 1.3
n2=$(iters_shown)
[ "$n2" -eq "$n1" ] && ok || fail "paused, yet the iterations went from $n1 to $n2"
$TM send-keys -t v Space
wait_until '[ "$(iters_shown)" -gt "$n1" ]' "resumed, but the iterations stay at $n1"

# The writer finishes: all 12 iterations, and the run is no longer live.
wait "$writer" || fail "the writer failed: $(cat "$T/writer.err")"
writer=
wait_until '[ "$(iters_shown)" -eq 12 ]' "the view never showed all 12 iterations"
wait_until '! screen | head -n 1 | grep -qF "[LIVE]"' "[LIVE] stays after the run closed"

$TM send-keys -t v q
wait_until '[ "$(cat "$T/exit" 2>/dev/null)" = 0 ]' "q did not exit 0"
cli_finish
