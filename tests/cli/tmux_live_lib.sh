# tmux_live_lib.sh - what the tests of `ppscope view` following a live run share (sourced after
# lib.sh and cli_init): skipped (77) without tmux or without the live writer (PPS_LIVEWRITER, set
# by ctest); a tmux server of the test's own ($TM), killed with the writer ($writer) at exit;
# screen (the pane's text), wait_until CMD WHAT (CMD succeeds within 20 s, else a failure that
# shows the screen) and seconds DURATION.
command -v tmux >/dev/null 2>&1 || { echo "$cli_name: no tmux, skipped"; exit 77; }
[ -x "${PPS_LIVEWRITER:-}" ] || { echo "$cli_name: PPS_LIVEWRITER not set, skipped"; exit 77; }
export LC_ALL=C.UTF-8
TM="tmux -L pps-$cli_name-$$ -f /dev/null"
writer=
trap '$TM kill-server 2>/dev/null; [ -n "$writer" ] && kill "$writer" 2>/dev/null; rm -rf "$T"' \
    EXIT INT TERM

screen() {
    $TM capture-pane -t v -p
}

wait_until() {
    i=0
    while [ $i -lt 200 ]; do
        eval "$1" && { ok; return 0; }
        sleep 0.1
        i=$((i + 1))
    done
    fail "$2; the screen shows:
$(screen)"
    return 1
}

# Seconds in a duration the status line prints ("812ns", "1.23ms", "45.6s").
seconds() {
    echo "$1" | awk '{ v = $1 + 0; u = $1; sub(/^[-0-9.]+/, "", u);
        f = u == "ns" ? 1e-9 : u == "us" ? 1e-6 : u == "ms" ? 1e-3 : 1; printf "%.9f\n", v * f }'
}
