#!/bin/sh
# view_tmux_keep.sh - `ppscope view --max-spans` following a run that outgrows it: a writer adds
# one iteration every 10 ms, more than the budget between two reads, so that every read drops
# (and leaves as many spans as the last); the view (in tmux, 100x30) keeps the newest whole
# iterations within the budget and says which ("iters A-B of N", A rising as the run grows), keeps following the
# run's end, never calls a dropped iteration missing, and ends on the last iterations of the
# finished run. Skipped (77) without tmux or without the writer (PPS_LIVEWRITER, set by ctest).
# Usage: view_tmux_keep.sh PATH/TO/ppscope
set -u
. "$(dirname "$0")/lib.sh"
cli_init view-keep "$1"
. "$(dirname "$0")/tmux_live_lib.sh"

# The first iteration the header says it holds ("iters A-B of N"), or 0.
first_kept() {
    screen | head -n 1 | sed -n 's/.* iters \([0-9][0-9]*\)-[0-9]* of [0-9]* .*/\1/p' | grep . ||
        echo 0
}

RUN="$T/live"
"$PPS_LIVEWRITER" "$RUN" 600 10 2>"$T/writer.err" &
writer=$!
wait_until '[ -f "$RUN/rank-00000.db" ]' "the writer never created its shard"

$TM new-session -d -s v -x 100 -y 30 "env NO_COLOR=1 TERM=xterm-256color \
    '$PPS' view --delay 0.2 --max-spans 1000 '$RUN'; echo \$? >'$T/exit'; sleep 600"
wait_until 'screen | head -n 1 | grep -qF "[LIVE] [FOLLOW]"' "no [LIVE] [FOLLOW] in the header"
wait_until '[ "$(first_kept)" -gt 0 ]' "the view never dropped an iteration past 1000 spans"
a1=$(first_kept)
wait_until '[ "$(first_kept)" -gt "$a1" ]' "the kept iterations did not move on from $a1"
a2=$(first_kept)
wait_until '[ "$(first_kept)" -gt "$a2" ]' "the kept iterations did not move on from $a2 (a stale report)"
screen | head -n 1 | grep -q "MISSING" && fail "dropped iterations called missing: $(screen | head -n 1)"

# Not following (p goes to an earlier iteration): as older iterations go, the view stays on what
# is left of the run, never on dropped time.
# The status line ("view A..B of E ...") shows a range that meets the kept run.
on_kept_run() {
    line=$(screen | grep "^view " | head -n 1)
    [ -n "$line" ] || return 1
    from=$(echo "$line" | sed -n 's/^view \([^ ]*\)\.\.\([^ ]*\) of \([^ ]*\) .*/\1/p')
    to=$(echo "$line" | sed -n 's/^view \([^ ]*\)\.\.\([^ ]*\) of \([^ ]*\) .*/\2/p')
    len=$(echo "$line" | sed -n 's/^view \([^ ]*\)\.\.\([^ ]*\) of \([^ ]*\) .*/\3/p')
    awk -v a="$(seconds "$from")" -v b="$(seconds "$to")" -v l="$(seconds "$len")" \
        'BEGIN { exit !(b > 0 && a < l) }'
}
$TM send-keys -t v p p p
sleep 1.5
$TM send-keys -t v Tab # a key that moves nothing, for the status line ("no earlier iteration")
wait_until on_kept_run "the view lies off the kept run"
$TM send-keys -t v F # follow again, to the end

wait "$writer" || fail "the writer failed: $(cat "$T/writer.err")"
writer=
wait_until 'screen | head -n 1 | grep -q " iters [0-9]*-599 of 600 "' \
    "the view never showed the run's last iterations"
wait_until '! screen | head -n 1 | grep -qF "[LIVE]"' "[LIVE] stays after the run closed"
spans=$(sqlite3 "$RUN/rank-00000.db" "select count(*) from spans" 2>/dev/null || echo 0)
a=$(first_kept)
if [ "$spans" -gt 0 ]; then
    # The kept iterations hold no more than the budget (every iteration the same size).
    [ $(((600 - a) * spans / 600)) -le 1000 ] && ok ||
        fail "iterations $a-599 of $spans spans are more than 1000"
fi
$TM send-keys -t v q
wait_until '[ "$(cat "$T/exit" 2>/dev/null)" = 0 ]' "q did not exit 0"
cli_finish
