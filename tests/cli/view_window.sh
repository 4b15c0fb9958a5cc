#!/bin/sh
# view_window.sh - a finished run that `ppscope report` has summarised opens in `ppscope view` by
# its newest iterations alone, read through the spans' (stage, start) index where --max-spans
# drops the rest (docs/view.md), and shows frame for frame what reading the whole run shows
# (--no-summary): for runs of one shard and of one shard per stage, at several zooms, pans,
# iteration jumps, the critical path and a selected op, at 80x24 and 200x60. `-v` says which way
# each run was read; a run within --max-spans, a run without a summary and a run still written
# are read whole.
#
#   view_window.sh PPSCOPE
. "$(dirname "$0")/lib.sh"
cli_init view_window "$1"

# same_frames WHAT RUN MAX [MORE_KEYS]: every key script and size, through the index and read
# whole (MORE_KEYS: scripts that stay within the iterations held: past them, a view through the
# index pages and one read whole does not). Scripts that zoom or pan far past the time held
# (`---`, `a`, two pages left) are not among them: there a view through the index reaches the
# whole run from its summary (test_view_zoomed_out_shows_the_run_past_what_it_holds), and one
# read whole stops at what it holds.
same_frames() {
    what=$1
    run=$2
    max=$3
    more=${4:-}
    for size in 80x24 200x60; do
        for keys in "" "+" "+++" "++++++<left><left>" "-" "G" "c" "]]<enter>" "<tab>" \
            "<tab><tab>" $more; do
            "$PPS" view --once -v --size "$size" --max-spans "$max" --keys "$keys" "$run" \
                >"$T/index.txt" 2>"$T/index.err" ||
                { fail "$what: view --keys '$keys': $(cat "$T/index.err")"; continue; }
            "$PPS" view --once -v --no-summary --size "$size" --max-spans "$max" --keys "$keys" \
                "$run" >"$T/whole.txt" 2>"$T/whole.err" ||
                { fail "$what: view --no-summary --keys '$keys': $(cat "$T/whole.err")"; continue; }
            if grep -q "through the index" "$T/index.err" &&
                grep -q "read whole" "$T/whole.err"; then ok; else
                fail "$what: not read as asked: $(cat "$T/index.err" "$T/whole.err")"
            fi
            # What the run's summary adds to a view through the index, which a view read whole
            # without it lacks: the charts of the whole run beside those of what is held (rows
            # left blank there), the run's length on the status line (at 80 columns, what else
            # fits beside it), and the timeline past the time held (lod.c: eighth blocks where
            # the other shows idle dots). test_tui_view checks them.
            of='s/^(view \S+ of )\S+/$1-/'
            [ "$size" = 80x24 ] && of='s/^(view \S+ of )\S+.*/$1-/'
            perl -CSD -pi -e 's/(?:bubble %|window) +\(run\) +\S+ \S*/" " x length($&)/ge;
                s/[\x{2581}-\x{2588}]/\x{b7}/g if /^s\d/; s/ +$//;'"$of" "$T/index.txt"
            perl -CSD -pi -e "$of" "$T/whole.txt"
            sed -i -E 's/ +$//' "$T/whole.txt"
            if cmp -s "$T/index.txt" "$T/whole.txt"; then ok; else
                fail "$what, $size, keys '$keys': the frames differ:
$(diff "$T/whole.txt" "$T/index.txt" | head -n 12)"
            fi
        done
    done
}

# One shard: a simulated run, 19,200 spans.
"$PPS" sim --schedule zb-h1 -p 4 -m 16 --iters 100 --trace "$T/sim" >/dev/null 2>"$T/err" ||
    fail "sim: $(cat "$T/err")"
expect_exit 0 view --once -v --max-spans 4000 "$T/sim"
stderr_has "read whole" # no summary yet
expect_exit 0 report "$T/sim"
same_frames "one shard" "$T/sim" 4000 "p pp ppp+f ppppp+f"

# Paging: past the first (or last) iteration held, p (n) reads the iterations before (after)
# through the index, the one at hand with them, down to the run's first and back to its last.
# header KEYS: the header's iterations after KEYS.
header() {
    "$PPS" view --once --size 120x24 --max-spans 4000 --keys "$1" "$T/sim" 2>"$T/err" |
        head -n 1 | grep -o 'iters [0-9]*-[0-9]* of [0-9]*'
}
ps=$(printf 'p%.0s' $(seq 100))
ns=$(printf 'n%.0s' $(seq 100))
for case in "Gf|iters 90-99 of 100" "Gfpppppppppppp|iters 81-90 of 100" \
    "Gf${ps}|iters 0-9 of 100" "Gf${ps}nnnnnnnnnnn|iters 9-18 of 100" \
    "Gf${ps}${ns}|iters 90-99 of 100" "g|iters 0-9 of 100" "fg|iters 0-9 of 100" \
    "ggG|iters 90-99 of 100" "gfnnnnnnnnnnnnG|iters 90-99 of 100"; do
    keys=${case%%|*}
    want=${case#*|}
    got=$(header "$keys")
    if [ "$got" = "$want" ]; then ok; else
        fail "paging, keys ${keys%%ppp*}...: '$got', expected '$want' ($(cat "$T/err"))"
    fi
done
# The paged view's report is of what it holds: none of the planned 100 iterations is missing.
"$PPS" view --once --size 200x60 --max-spans 4000 --keys "Gfpppppppppppp" "$T/sim" >"$T/paged.txt"
if grep -q "MISSING" "$T/paged.txt"; then fail "a paged view calls iterations missing"; else ok; fi
# A/B does not page (the two would no longer align): as before, no earlier iteration.
"$PPS" view --once --size 120x24 --max-spans 4000 --keys "Gfpppppppppppp" "$T/sim" "$T/sim" \
    >"$T/ab.txt"
if grep -q "no earlier iteration" "$T/ab.txt"; then ok; else fail "A/B paged: $(tail -n 3 "$T/ab.txt")"; fi
# Nor does A/B draw either run past what it holds from its summary (lod.c): no eighth blocks on
# its lanes, zoomed out as far as it goes.
"$PPS" view --once --size 120x30 --max-spans 4000 --keys "-----" "$T/sim" "$T/sim" >"$T/ab.txt"
if perl -CSD -ne 'exit 1 if /^[AB] s\d/ && /[\x{2581}-\x{2588}]/' "$T/ab.txt"; then ok; else
    fail "A/B draws from a summary: $(head -n 9 "$T/ab.txt")"
fi

# g goes to the run's own start (the view at its first span, as a view of the run whole holding
# those iterations stands there), and where it cannot be read, to the start of what is held.
"$PPS" view --once --size 120x24 --max-spans 4000 --keys "fg" "$T/sim" >"$T/g.txt"
"$PPS" view --once --size 120x24 --max-spans 50000 --keys "fg" "$T/sim" >"$T/g-whole.txt"
if [ "$(sed -n '2,6p' "$T/g.txt")" = "$(sed -n '2,6p' "$T/g-whole.txt")" ] &&
    grep -q "^read iterations 0-9 through the index" "$T/g.txt"; then ok; else
    fail "g: not at the run's start: $(diff "$T/g-whole.txt" "$T/g.txt" | head -n 12)"
fi

# --no-summary reads whole and does not page.
"$PPS" view --once --no-summary --size 120x24 --max-spans 4000 --keys "Gfpppppppppppp" "$T/sim" \
    >"$T/nosum.txt"
if grep -q "no earlier iteration" "$T/nosum.txt" && head -n 1 "$T/nosum.txt" | grep -q "iters 90-99"
then ok; else fail "--no-summary paged: $(head -n 1 "$T/nosum.txt")"; fi
"$PPS" view --once --no-summary --size 120x24 --max-spans 4000 --keys "g" "$T/sim" >"$T/nosum.txt"
if head -n 1 "$T/nosum.txt" | grep -q "iters 90-99"; then ok; else
    fail "--no-summary g paged: $(head -n 1 "$T/nosum.txt")"
fi

# Iterations bigger than a page: every p still moves (one more iteration at least).
"$PPS" sim --schedule 1f1b -p 8 -m 32 --iters 10 --trace "$T/big" >/dev/null 2>&1
expect_exit 0 report "$T/big"
got=$("$PPS" view --once --size 120x24 --max-spans 1000 --keys "Gfpp" "$T/big" | head -n 1 |
    grep -o 'iters [0-9]*-[0-9]* of [0-9]*')
if [ "$got" = "iters 7-8 of 10" ]; then ok; else fail "big iterations, Gfpp: '$got'"; fi

# A summary without a map of its labels (labels too sparse to count): nothing to page to, and the
# view keeps what it holds.
if command -v sqlite3 >/dev/null 2>&1; then
    cp -r "$T/sim" "$T/sparse"
    rm -f "$T/sparse/ppscope.summary"
    sqlite3 "$T/sparse/rank-00000.db" "UPDATE spans SET iter = iter * 1000 WHERE iter >= 0;
        UPDATE metrics SET iter = iter * 1000; DELETE FROM meta WHERE key = 'iters'"
    expect_exit 0 report "$T/sparse"
    "$PPS" view --once --size 120x24 --max-spans 4000 --keys "Gfppppppppppppp" "$T/sparse" \
        >"$T/sparse.txt"
    if head -n 1 "$T/sparse.txt" | grep -q "iters 90000-99000 of 99001" &&
        grep -q "no earlier iteration" "$T/sparse.txt"; then ok; else
        fail "paging without a map: $(head -n 1 "$T/sparse.txt"); $(tail -n 2 "$T/sparse.txt")"
    fi
    # Spans without an iteration after the last one: paging back and forth to the end holds
    # them again, as the first view did (the same extent).
    cp -r "$T/sim" "$T/tail"
    rm -f "$T/tail/ppscope.summary"
    sqlite3 "$T/tail/rank-00000.db" "UPDATE spans SET iter = -1 WHERE iter >= 95"
    expect_exit 0 report "$T/tail"
    extent() {
        "$PPS" view --once --size 120x24 --max-spans 4000 --keys "$1" "$T/tail" |
            grep -o 'of [0-9.]*m*s  1 col' | head -n 1
    }
    first=$(extent "")
    back=$(extent "Gf$(printf 'p%.0s' $(seq 30))$(printf 'n%.0s' $(seq 60))a")
    if [ -n "$first" ] && [ "$first" = "$back" ]; then ok; else
        fail "paging back to the end: '$first' then '$back'"
    fi
fi

# Within --max-spans: read whole, with or without a summary.
expect_exit 0 view --once -v --max-spans 50000 "$T/sim"
stderr_has "read whole, 19200 spans held"

# One shard per stage (threads), interleaved, post-validated: 4 ranks' shards read together.
"$PPS" run --backend emu --emu-tf 0.05 --emu-tb 0.05 --emu-tw 0.05 -s interleaved -v 2 -p 4 \
    -m 8 --iters 40 --optimizer postval --quiet --out "$T/emu" >/dev/null 2>"$T/err" ||
    fail "run: $(cat "$T/err")"
expect_exit 0 report "$T/emu"
same_frames "a shard per stage" "$T/emu" 2000

# A run still written is read whole, and keeps being followed.
start_live_run "$T/live"
"$PPS" report "$T/live" >/dev/null 2>&1
expect_exit 0 view --once -v --max-spans 1000 "$T/live"
stderr_has "read whole"
kill "$live_pid" 2>/dev/null
wait "$live_pid" 2>/dev/null

# Bad input as before.
expect_exit 2 view -v "$T/sim"
stderr_has "--verbose goes with --once"

cli_finish
