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

# The help box's text, its borders stripped and its lines joined (wrapped lines read on).
help_box() {
    sed -n 's/^[^|]*|\(.*\)|[^|]*$/\1/p' "$T/out" | tr '\n' ' ' | tr -s ' '
}
# The help whole where it used to be cut (120x40, 200x60) and at 80x24: its last line and every
# entry of the key table.
for size in 80x24 120x40 200x60; do
    expect_exit 0 view --once --ascii --size "$size" --keys "?" "$A"
    help_box >"$T/help"
    grep -qF "mouse: the wheel zooms, a click selects an op. Any key closes this." "$T/help" ||
        fail "help at $size: its last line is cut: $(cat "$T/out")"
    grep -qF "Tab next pane: stats, flags, A/B" "$T/help" || fail "help at $size lacks Tab"
    grep -q "[1-9]/[1-9] Pg" "$T/out" && fail "help at $size takes pages: $(cat "$T/out")"
done
# At the smallest size, in pages: PgDn turns them, the last holds the last entry; PgDn there
# closes the help.
expect_exit 0 view --once --ascii --size 60x16 --keys "?" "$A"
grep -q "+- 1/[2-9] PgDn: next page -" "$T/out" || fail "help at 60x16: no pages: $(cat "$T/out")"
pages=$(sed -n 's/.*+- 1\/\([2-9]\) PgDn.*/\1/p' "$T/out")
keys="?"
i=1
while [ "$i" -lt "${pages:-1}" ]; do
    keys="$keys<pgdn>"
    i=$((i + 1))
done
expect_exit 0 view --once --ascii --size 60x16 --keys "$keys" "$A"
grep -q "+- $pages/$pages PgUp: previous page -" "$T/out" || fail "help's last page: $(cat "$T/out")"
grep -q "| Tab  *next pane: stats, flags, A/B" "$T/out" || fail "help's last page lacks Tab"
help_box | grep -qF "mouse: the wheel zooms, a click selects an op. Any key closes this." ||
    fail "help at 60x16: its last line is cut: $(cat "$T/out")"
expect_exit 0 view --once --ascii --size 60x16 --keys "$keys<pgdn>" "$A"
grep -q "ppscope view: keys" "$T/out" && fail "PgDn on the help's last page does not close it"

# Too small: the size it has and the size it needs.
expect_exit 0 view --once --size 50x12 "$A"
grep -q "have 50x12, need 60x16" "$T/out" || fail "too small: $(cat "$T/out")"

# --- a run as the runtime writes it (emu): sends, receives and the optimizer ---
"$PPS" run --backend emu --schedule 1f1b -p 2 -m 4 --iters 2 --out "$T/emu" >/dev/null 2>&1 ||
    fail "run --backend emu failed"
# A receive has no chunk: the selection says nothing of one (the trace holds -1: none). ']'
# steps from the op at the cursor, on stage 1, to the first RECV.
keys="p<down><enter>"
i=0
while [ $i -lt 12 ]; do
    expect_exit 0 view --once --ascii --size 100x30 --keys "$keys" "$T/emu"
    sed -n 5p "$T/out" | grep -q "^\[RECV\]" && break
    keys="$keys]"
    i=$((i + 1))
done
sed -n 5p "$T/out" | grep -q "^\[RECV\] stage 1  mb [0-9]  iter [0-9]  start .*  peer s0  32768 bytes" ||
    fail "a selected RECV: $(sed -n 5p "$T/out")"
sed -n 5p "$T/out" | grep -Eq "(chunk|mb|iter) -1" &&
    fail "a selected RECV shows a -1: $(sed -n 5p "$T/out")"
# The stats table's header is never cut: it ends with wait, or with the unit's note whole.
for cols in 60 70 79 80 81 90 100 120 160 200; do
    expect_exit 0 view --once --ascii --size "${cols}x24" "$T/emu"
    grep "^ stage " "$T/out" | cut -c1-$((cols < 140 ? cols : cols / 2)) |
        grep -Eq "(wait|\((ms|us|s) per iteration\)|\((ms|us|s)/iter\)) *$" ||
        fail "the stats header at $cols columns: $(grep "^ stage " "$T/out")"
done

# --- a run that does not say its schedule, p or m: unknown, as `ppscope report` puts it ---
if command -v sqlite3 >/dev/null 2>&1; then
    mkdir "$T/nometa"
    cp "$A"/*.db "$T/nometa/"
    for db in "$T"/nometa/*.db; do
        sqlite3 "$db" "DELETE FROM meta WHERE key IN ('schedule', 'p', 'm', 'v')" ||
            fail "sqlite3 could not edit $db"
    done
    # A run that does not say its schedule, p or m: read from its order (issue 9's inference),
    # and the report says what was inferred.
    expect_exit 0 view --once --ascii --size 100x30 "$T/nometa"
    head -n 1 "$T/out" | grep -q "^ppscope view  1f1b p=4 m=8 v=1  3 iters" ||
        fail "header of a run without its schedule: $(head -n 1 "$T/out")"
    run_pps report "$T/nometa"
    grep -q "^schedule  1f1b (its order, inferred)  p=4 m=8 v=1 (inferred: p, m)  4 stages" \
        "$T/out" || fail "report: $(grep schedule "$T/out")"
else
    echo "view_cli: no sqlite3, the run without a schedule is not tried"
fi

# --- A/B: both timelines, the delta table ---
expect_exit 0 view --once --ascii --size 120x40 "$A" "$B"
grep -q "^A s0" "$T/out" && grep -q "^B s3" "$T/out" || fail "A/B lanes missing"
grep -q "B is 22.2% faster than A: 27.0ms vs 33.0ms per iteration (1.22x)" "$T/out" ||
    fail "A/B verdict missing: $(cat "$T/out")"
# The figures `ppscope compare` gives: 1F1B idles (p-1)(tF+tB+tW) = 9 ms a stage, ZB-H1 3 ms.
grep -q "^ idle stage 3 *9.00ms *3.00ms -6.00ms (-66.7%)$" "$T/out" || fail "per-stage idle delta missing"
grep -q "^ bubble *27.3% *11.1% -16.2 pp$" "$T/out" || fail "bubble delta missing"
# An unchanged figure of runs without spread is no change: "~", not a colour
grep -q "^ busy stage 0 *24.0ms *24.0ms 0ns (+0.0%) ~$" "$T/out" || fail "busy delta: $(grep busy "$T/out")"
# Peak activations: both from the prediction (sim writes no metrics), B - A in their unit.
grep -q "^ peak activations *4.00 mb (pred.) *4.00 mb (pred.) +0.00 mb (pred.)$" "$T/out" ||
    fail "peak activations delta: $(grep "peak activations" "$T/out")"
# The emu run measured its bytes, the sim run did not: no difference between the two units.
expect_exit 0 view --once --ascii --size 120x40 "$T/emu" "$B"
grep -q "^ peak activations .* MiB *4.00 mb (pred.) n/a$" "$T/out" ||
    fail "peak activations of bytes against microbatches: $(grep "peak activations" "$T/out")"

# --- a post-validated run is judged by its steady state: the view shows those figures, says
# "steady", and its verdict compares the same ---
if "$PPS" run --backend emu --schedule zb-h2 -p 4 -m 8 --iters 4 --optimizer postval \
    --emu-tf 1 --emu-tb 1 --emu-tw 1 --out "$T/postval" >/dev/null 2>&1; then
    expect_exit 0 view --once --ascii --size 120x40 "$T/postval"
    head -n 1 "$T/out" | grep -q "  steady bubble [0-9.]*%  from ppscope  " ||
        fail "postval header does not show the steady bubble and the source: $(head -n 1 "$T/out")"
    grep -q "^ steady   measured [0-9.]*% *predicted [0-9.]*%" "$T/out" ||
        fail "postval stats do not show the steady figures: $(cat "$T/out")"
    grep -q "^ verdict  steady bubble " "$T/out" || fail "postval verdict is not the steady one"
    # The figures on the steady line are the ones the verdict quotes.
    m=$(sed -n 's/^ steady   measured \([0-9.]*%\).*/\1/p' "$T/out")
    grep -q "^ verdict  steady bubble $m " "$T/out" ||
        fail "the verdict quotes another figure than the steady line's $m: $(grep verdict "$T/out")"
else
    fail "run --optimizer postval failed"
fi

cli_finish
