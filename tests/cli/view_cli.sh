#!/bin/sh
# view_cli.sh - `ppscope view` without a terminal: help, bad input (the same one-line errors and
# exit 2 as the other commands), and --once frames compared with what they must show.
# Usage: view_cli.sh PATH/TO/ppscope
set -u
. "$(dirname "$0")/lib.sh"
cli_init view "$1"
export LC_ALL=C.UTF-8

# --- help and bad input ---
expect_exit 0 view --help
grep -q "usage: ppscope view" "$T/out" || fail "view --help does not print usage on stdout"
expect_exit 2 view
stderr_has "missing RUN"
expect_exit 2 view "$T/no-such-run"
# The same reason, word for word, as `ppscope report` gives.
sed 's/^ppscope view:/ppscope report:/' "$T/err" >"$T/view-err"
run_pps report "$T/no-such-run"
cmp -s "$T/err" "$T/view-err" || fail "view and report explain a missing run differently"
mkdir "$T/empty"
expect_exit 2 view --once "$T/empty"
echo "not a trace" >"$T/garbage.db"
expect_exit 2 view --once "$T/garbage.db"
expect_exit 2 view "$T/garbage.db"
expect_exit 2 view --bogus "$T/garbage.db"
expect_exit 2 view a b c
stderr_has "at most two runs"
expect_exit 2 view --size 80 "$T/garbage.db"
expect_exit 2 view --delay 0 "$T/garbage.db"
expect_exit 2 view --keys "++" "$T/garbage.db"
stderr_has "--keys goes with --once"

"$PPS" sim --schedule 1f1b,zb-h1 -p 4 -m 8 --iters 3 --trace "$T/sim" >/dev/null 2>&1 ||
    fail "sim --trace failed"
A="$T/sim/1f1b"
B="$T/sim/zb-h1"
expect_exit 2 view --once --keys "<nope>" "$A"
stderr_has "unknown key '<nope>'"
expect_exit 2 view "$A" </dev/null
stderr_has "not a terminal"

# --- one frame, 80x24, ASCII: the lanes of a 1F1B iteration and the figures beside them ---
expect_exit 0 view --once --ascii --size 80x24 "$A"
[ "$(wc -l <"$T/out")" -eq 24 ] || fail "--once --size 80x24 printed $(wc -l <"$T/out") lines"
LC_ALL=C grep -q '[^ -~]' "$T/out" && fail "--ascii printed a byte that is not ASCII"
head -n 1 "$T/out" | grep -q "^ppscope view  1f1b p=4 m=8 v=1  3 iters  bubble 27.3%" ||
    fail "header: $(head -n 1 "$T/out")"
grep -q "^ bubble   measured 27.3%   predicted 27.3% (1f1b" "$T/out" || fail "no bubble line"
grep -q "^ theory   (p-1)/m 37.5%   (p-1)/(m+p-1) 27.3%" "$T/out" || fail "no theory line"
tail -n 1 "$T/out" | grep -q "^q Quit ? Help +- Zoom <> Pan n/p Iter" || fail "no key bar"

# Back to iteration 0 (fitted: the view was wider): each op in its letter, its microbatch
# at its start.
expect_exit 0 view --once --ascii --size 80x24 --keys "p" "$A"
cat >"$T/want" <<'WANT'
s0 >.0F1F2FF3Ff............0XXXX4F1XXX5F2XXXX6F3XXX7FF4XXXX.5XXXXx.6XXXX..7XXX0F
s1  ...0F1FF2Ff........0XXX3F1XXXX4F2XXX5FF3XXX6F4XXXX7F5XXXX..6XXXx.7XXXXx.....
s2  .....0FF1Ff...0XXXX2F1XXX3FF2XXX4F3XXXX5F4XXX6F5XXXX7F6XXXXx.7XXXX..........
s3  ........0F0XXX1F1XXXX2F2XXXX3F3XXX4F4XXXX5F5XXX6FF6XXX7F7XXXXx..............
    -+0---------+5ms-------+10ms------+---v------+20ms------+25ms------+30ms----
WANT
sed -n 2,6p "$T/out" >"$T/got"
cmp -s "$T/want" "$T/got" || fail "iteration 0 of 1f1b at 80x24: $(diff "$T/want" "$T/got")"

# Zoomed in 4x: ticks follow the zoom.
expect_exit 0 view --once --ascii --size 80x24 --keys "p++" "$A"
sed -n 6p "$T/out" | grep -q "+14ms-*+16ms" || fail "ruler after zooming: $(sed -n 6p "$T/out")"

# UTF-8 by default under a UTF-8 locale: idle is a middle dot.
expect_exit 0 view --once --size 80x24 "$A"
grep -q "·" "$T/out" || fail "no UTF-8 glyphs without --ascii"

# Select an op with Enter: its details in the status line.
expect_exit 0 view --once --ascii --size 100x30 --keys "p<enter>" "$A"
grep -q "^\[BW\] stage 0 chunk 0  mb 2  iter 0  start 16.0ms  dur 2.00ms" "$T/out" ||
    fail "selection details: $(sed -n 7p "$T/out")"

# Help from the key table.
expect_exit 0 view --once --ascii --size 100x40 --keys "?" "$A"
grep -q "| q  *quit" "$T/out" || fail "help lists no q"
grep -q "| Tab  *next pane" "$T/out" || fail "help lists no Tab"

# Too small: the size it has and the size it needs.
expect_exit 0 view --once --size 50x12 "$A"
grep -q "have 50x12, need 60x16" "$T/out" || fail "too small: $(cat "$T/out")"

# --- A/B: both timelines, the delta table ---
expect_exit 0 view --once --ascii --size 120x40 "$A" "$B"
grep -q "^A s0" "$T/out" && grep -q "^B s3" "$T/out" || fail "A/B lanes missing"
grep -q "B is 22.2% faster than A: 27.0ms vs 33.0ms per iteration (1.22x)" "$T/out" ||
    fail "A/B verdict missing: $(cat "$T/out")"
grep -q "^ idle stage 3 *27.3% *11.1% -16.2 pp" "$T/out" || fail "per-stage idle delta missing"

cli_finish
