#!/bin/sh
# export_render.sh - the SVG looked at by a real renderer: rsvg-convert (librsvg, Debian's
# librsvg2-bin) draws it to PNG, and tests/cli/export_check.py reads the PNG (zlib, no imaging
# library) to check that the picture is not blank and shows one band per stage: 4 stages of a
# 1F1B run, 8 of a ZB-H2 one, and 4 stages of two chunks each of an interleaved run, whose
# rows lie together. Where headless Chromium is installed (chromium-headless-shell, or
# chromium), a browser's screenshot of each picture is checked the same way. Skipped without
# rsvg-convert or python3.
# Usage: export_render.sh PATH/TO/ppscope
set -u
. "$(dirname "$0")/lib.sh"
cli_init export-render "$1"
CHECK="$(cd "$(dirname "$0")" && pwd)/export_check.py"

for tool in rsvg-convert python3; do
    if ! command -v $tool >/dev/null 2>&1; then
        echo "skipped: no $tool (scripts/install-deps.sh installs it)"
        exit 77
    fi
done

# render NAME P: NAME's SVG drawn to PNG, P bands in it.
render() {
    if rsvg-convert "$T/$1.svg" -o "$T/$1.png" 2>"$T/err"; then
        ok
    else
        fail "rsvg-convert $1.svg: $(cat "$T/err")"
        return
    fi
    if python3 "$CHECK" png "$T/$1.png" "$2" 2>"$T/err"; then ok; else fail "$(cat "$T/err")"; fi
    [ -n "$browser" ] || return
    # The window as large as the picture, so that the screenshot is all of it.
    height=$(sed -n 's/^<svg .* height="\([0-9]*\)".*/\1/p' "$T/$1.svg")
    timeout 120 "$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars \
        --window-size="1200,$height" --screenshot="$T/$1-browser.png" "file://$T/$1.svg" \
        >"$T/browser.log" 2>&1
    if [ ! -s "$T/$1-browser.png" ]; then
        fail "$browser made no screenshot of $1.svg: $(tail -n 3 "$T/browser.log")"
    elif python3 "$CHECK" png "$T/$1-browser.png" "$2" 2>"$T/err"; then
        ok
    else
        fail "$browser's screenshot: $(cat "$T/err")"
    fi
}

browser=""
for b in chromium-headless-shell chromium; do
    if command -v $b >/dev/null 2>&1; then
        browser=$b
        break
    fi
done

"$PPS" sim --schedule 1f1b -p 4 -m 8 --trace "$T/sim4" >/dev/null 2>"$T/err" || fail "$(cat "$T/err")"
"$PPS" sim --schedule zb-h2 -p 8 -m 16 --trace "$T/sim8" >/dev/null 2>"$T/err" || fail "$(cat "$T/err")"
"$PPS" run --schedule interleaved --backend emu -p 4 -m 8 -v 2 --iters 2 --out "$T/emu" \
    >/dev/null 2>"$T/err" || fail "run: $(cat "$T/err")"
expect_exit 0 export "$T/sim4" --svg "$T/sim4.svg"
render sim4 4
expect_exit 0 export "$T/sim8" --svg "$T/sim8.svg"
render sim8 8
expect_exit 0 export "$T/emu" --svg "$T/emu.svg"
render emu 4
cli_finish
