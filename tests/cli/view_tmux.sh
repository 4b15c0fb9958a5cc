#!/bin/sh
# view_tmux.sh - `ppscope view` end to end in a real terminal: the program runs in a detached
# tmux session of a fixed size; keys go in with send-keys, the screen comes back with
# capture-pane and must equal the frame `ppscope view --once --keys` draws for the same keys at
# the same size. At 80x24 and 120x40: open, zoom, pan, help, pause, quit; the help whole at
# 120x40 and 200x60, in pages at 60x16; a terminal too small, then resized; A/B; colours on, and
# off under NO_COLOR. Skipped (77) without tmux.
# Usage: view_tmux.sh PATH/TO/ppscope
set -u
. "$(dirname "$0")/lib.sh"
cli_init view-tmux "$1"
command -v tmux >/dev/null 2>&1 || { echo "view_tmux: no tmux, skipped"; exit 77; }
export LC_ALL=C.UTF-8
TM="tmux -L pps-view-$$ -f /dev/null"
trap '$TM kill-server 2>/dev/null; rm -rf "$T"' EXIT INT TERM

"$PPS" sim --schedule 1f1b,zb-h1 -p 4 -m 8 --iters 3 --trace "$T/sim" >/dev/null 2>&1 ||
    fail "sim --trace failed"
A="$T/sim/1f1b"
B="$T/sim/zb-h1"

# start COLSxROWS ENV ARGS...: runs ppscope view in a fresh session; its exit status goes to
# $T/exit when it ends.
# Each start gets a session of its own, and the last one is killed only after: a server left
# without sessions exits, and a new one racing its exit on the same socket fails.
n_session=0
start() {
    size=$1
    envs=$2
    shift 2
    rm -f "$T/exit"
    n_session=$((n_session + 1))
    $TM new-session -d -s "v$n_session" -x "${size%x*}" -y "${size#*x}" \
        "env $envs TERM=xterm-256color '$PPS' view $* ; echo \$? >'$T/exit'; sleep 600"
    [ $n_session -gt 1 ] && $TM kill-session -t "v$((n_session - 1))" 2>/dev/null
    V="v$n_session"
}

screen() {
    $TM capture-pane -t "$V" -p "$@"
}

# wait_for TEXT WHAT: the screen shows TEXT within 10 s.
wait_for() {
    i=0
    while [ $i -lt 100 ]; do
        screen | grep -qF -- "$1" && { ok; return 0; }
        sleep 0.1
        i=$((i + 1))
    done
    fail "$2: the screen never showed '$1'; it shows:
$(screen)"
    return 1
}

# same_as COLSxROWS KEYS WHAT RUNS...: the screen equals --once with the same keys, within 10 s.
same_as() {
    size=$1
    script=$2
    what=$3
    shift 3
    "$PPS" view --once --no-color --size "$size" --keys "$script" "$@" >"$T/want" 2>"$T/err" ||
        { fail "$what: --once failed: $(cat "$T/err")"; return 1; }
    i=0
    while [ $i -lt 100 ]; do
        screen >"$T/got"
        # tmux drops trailing blank lines of the pane; so does the comparison.
        sed -e :a -e '/^\n*$/{$d;N;ba' -e '}' "$T/want" >"$T/want.t"
        sed -e :a -e '/^\n*$/{$d;N;ba' -e '}' "$T/got" >"$T/got.t"
        cmp -s "$T/want.t" "$T/got.t" && { ok; return 0; }
        sleep 0.1
        i=$((i + 1))
    done
    fail "$what at $size: the screen differs from --once --keys '$script':
$(diff "$T/want.t" "$T/got.t")"
    return 1
}

# quit: q, and the program exits 0 within 10 s.
quit() {
    $TM send-keys -t "$V" q
    i=0
    while [ $i -lt 100 ] && [ ! -s "$T/exit" ]; do
        sleep 0.1
        i=$((i + 1))
    done
    if [ "$(cat "$T/exit" 2>/dev/null)" = 0 ]; then ok; else fail "$1: q did not exit 0"; fi
}

for size in 80x24 120x40; do
    start "$size" "NO_COLOR=1" --delay 0.1 "$A"
    wait_for "ppscope view  1f1b p=4 m=8 v=1  3 iters" "open at $size"
    same_as "$size" "" "open" "$A"
    $TM send-keys -t "$V" + +
    same_as "$size" "++" "zoom in" "$A"
    $TM send-keys -t "$V" Right Right l
    same_as "$size" "++<right><right>l" "pan" "$A"
    $TM send-keys -t "$V" -
    same_as "$size" "++<right><right>l-" "zoom out" "$A"
    $TM send-keys -t "$V" p Enter
    same_as "$size" "++<right><right>l-p<enter>" "previous iteration, select" "$A"
    $TM send-keys -t "$V" '?'
    wait_for "ppscope view: keys" "help at $size"
    same_as "$size" "++<right><right>l-p<enter>?" "help" "$A"
    $TM send-keys -t "$V" x
    same_as "$size" "++<right><right>l-p<enter>?x" "help closed" "$A"
    $TM send-keys -t "$V" Space
    wait_for "[PAUSED]" "pause at $size"
    same_as "$size" "++<right><right>l-p<enter>?x<space>" "pause" "$A"
    $TM send-keys -t "$V" Space Tab
    same_as "$size" "++<right><right>l-p<enter>?x<space><space><tab>" "resume, flags pane" "$A"
    quit "$size"
done

# The help where its last line was cut (120x40, 200x60): the screen shows it whole, as --once
# draws it; at the smallest size it takes pages, which PgDn and PgUp turn.
footer="mouse: the wheel zooms, a click selects an op. Any key closes this."
for size in 120x40 200x60; do
    start "$size" "NO_COLOR=1" "$A"
    wait_for "ppscope view  1f1b p=4 m=8 v=1  3 iters" "open at $size"
    $TM send-keys -t "$V" '?'
    wait_for "ppscope view: keys" "help at $size"
    same_as "$size" "?" "help" "$A"
    if screen | sed -n 's/^[^│]*│\(.*\)│[^│]*$/\1/p' | tr '\n' ' ' | tr -s ' ' |
        grep -qF "$footer"; then
        ok
    else
        fail "help at $size: its last line is not whole:
$(screen)"
    fi
    quit "help at $size"
done
start 60x16 "NO_COLOR=1" "$A"
wait_for "ppscope view  1f1b" "open at 60x16"
$TM send-keys -t "$V" '?'
wait_for "PgDn: next page" "help in pages"
same_as 60x16 "?" "help, page 1" "$A"
$TM send-keys -t "$V" NPage
same_as 60x16 "?<pgdn>" "help, page 2" "$A"
$TM send-keys -t "$V" PPage
same_as 60x16 "?<pgdn><pgup>" "help, back to page 1" "$A"
quit "help in pages"

# Too small, then resized to fit: the view comes back; and back to too small.
start 50x12 "NO_COLOR=1" "$A"
wait_for "have 50x12, need 60x16" "too small"
$TM resize-window -t "$V" -x 80 -y 24
same_as 80x24 "" "resized to 80x24" "$A"
$TM resize-window -t "$V" -x 70 -y 10
wait_for "have 70x10, need 60x16" "too small again"
quit "too small"

# A/B: one above the other, the delta table.
start 120x40 "NO_COLOR=1" "$A" "$B"
wait_for "B is 22.2% faster than A" "A/B"
same_as 120x40 "" "A/B" "$A" "$B"
$TM send-keys -t "$V" f Down Down Down Down Down Tab
same_as 120x40 "f<down><down><down><down><down><tab>" "A/B, cursor on B, stats" "$A" "$B"
quit "A/B"

# Colours: on by default, off under NO_COLOR and with --no-color.
esc=$(printf '\033')
start 80x24 "" "$A"
wait_for "ppscope view" "colour"
screen -e | sed -n 2,5p | grep -q "$esc\[[0-9;]*3[1-6][;m]" || fail "lanes have no colours"
quit "colour"
start 80x24 "NO_COLOR=1" "$A"
wait_for "ppscope view" "NO_COLOR"
screen -e | grep -q "$esc\[[0-9;]*3[1-6][;m]" && fail "NO_COLOR: the screen has colours"
quit "NO_COLOR"

cli_finish
