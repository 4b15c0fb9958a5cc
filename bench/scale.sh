#!/bin/sh
# scale.sh - ppscope on a big run (label bench): a run of PPS_BENCH_SPANS spans (100M by
# default) made once by `ppscope sim --trace` and kept under DATA_DIR, then each reader's time
# and peak memory against SQLite's own scan of the same rows, measured in this run:
#
#   report       `ppscope report RUN` from the run's summary   goal < 1 s
#   summaries    the one pass that builds them (`report` of a run without one, which reads the
#                spans, measures them and keeps the summary)       goal <= 1.5x the scan
#                and, beside it, `report --no-summary` (the same without keeping it), and what
#                the summary costs on disk
#   view         `ppscope view RUN` in tmux (200x60) once the run has its summary: from its start
#                to its first frame (the first step of the open through the index)  goal < 0.5 s
#                and to the second step's (no [READING] in the header); `ppscope view --once
#                RUN` (what the second step reads: its newest iterations through the index)
#                goal < 300 MB, and `view --once --no-summary` (the whole run read, the same frame)
#   merge        `ppscope merge RUN -o FILE`         goal >= 0.5x SQLite's insert rate
#   disk         bytes per span of the shards, and against the same rows in a plain SQLite table
#                (the insert baseline's file: no index, no ppscope tables), for the record
#
# With BENCH_WINDOW (bench_window), also a window of about one iteration, read through the index,
# against the whole run; with BENCH_VIEW (bench_view), the view's frames of the run at every zoom
# from the whole run (what is held, and the rest from its summary) down.   goal < 16 ms
#
# Usage: scale.sh PPSCOPE DATA_DIR [BENCH_WINDOW [BENCH_VIEW]]. Prints each figure with its goal, and MISSED where it is
# missed; exits 0 unless a command fails. Needs sqlite3 and GNU time (/usr/bin/time) for the
# baselines and the memory figures: exits 77 without them.
set -eu
pps=$1
data=$2
window=${3:-}
viewbench=${4:-}
spans=${PPS_BENCH_SPANS:-100000000}

command -v sqlite3 >/dev/null 2>&1 || { echo "scale: no sqlite3 command: skipped"; exit 77; }
[ -x /usr/bin/time ] || { echo "scale: no /usr/bin/time: skipped"; exit 77; }

# The run (about 60 B a span), a merged copy and SQLite's plain copy (about 100 B a span) under
# /tmp: skipped where the disks lack room for them, rather than filling them.
need_kb=$((spans / 1024 * 200 + 1))
for dir in "$data" /tmp; do
    mkdir -p "$dir"
    free_kb=$(df -Pk "$dir" | awk 'NR == 2 {print $4}')
    if [ "${free_kb:-0}" -lt "$need_kb" ]; then
        echo "scale: skipped: $dir has $((free_kb / 1024)) MB free, $spans spans want about $((need_kb / 1024)) MB"
        exit 77
    fi
done

# zb-h1, p 8, m 256: 6144 spans an iteration (8 stages x 256 microbatches x F, B, W).
iters=$(( (spans + 6143) / 6144 ))
run=$data/scale-zbh1-p8-m256-i$iters
mkdir -p "$data"
# A run made before the writer kept span_max_ns cannot be read by window: made again.
if [ -f "$run/.made" ] &&
    [ -z "$(sqlite3 "$run/rank-00000.db" "select 1 from meta where key = 'span_max_ns'")" ]; then
    rm -f "$run/.made"
fi
if [ ! -f "$run/.made" ]; then
    rm -rf "$run"
    echo "scale: making $run ($iters iterations, $((iters * 6144)) spans; once, then cached)"
    "$pps" sim --schedule zb-h1 -p 8 -m 256 --iters "$iters" --trace "$run" >/dev/null
    touch "$run/.made"
fi
db=$run/rank-00000.db
tmp=$(mktemp -d /tmp/pps-scale-XXXXXX)
trap 'rm -rf "$tmp"' EXIT

n=$(sqlite3 "$db" "select count(*) from spans")
bytes=$(du -b "$run"/rank-*.db | awk '{s += $1} END {print s}')

# seconds and peak KB of a command: "S KB", its output to $tmp/out
measure() {
    /usr/bin/time -f "%e %M" -o "$tmp/time" "$@" >"$tmp/out" 2>"$tmp/err" || {
        echo "scale: failed: $*" >&2
        cat "$tmp/err" >&2
        exit 1
    }
    cat "$tmp/time"
}

verdict() { # what value goal-text ok (1, 0: MISSED, 2: a figure with no goal)
    case $4 in 1) ok=ok ;; 0) ok=MISSED ;; *) ok= ;; esac
    printf '  %-34s %-22s %-24s %s\n' "$1" "$2" "$3" "$ok"
}

# Twice: the first read brings the shards into the page cache (or not, where memory is short),
# the second is what every reader after it meets.
measure sqlite3 "$db" "select sum(end_ns - start_ns) from spans" >/dev/null
set -- $(measure sqlite3 "$db" "select sum(end_ns - start_ns) from spans")
scan_s=$1
rm -f "$run/ppscope.summary"
set -- $(measure "$pps" report --no-summary "$run")
spans_s=$1 report_kb=$2
set -- $(measure "$pps" report "$run")
build_s=$1
summary_b=$(du -b "$run/ppscope.summary" | awk '{print $1}')
set -- $(measure "$pps" report "$run")
report_s=$1 summary_kb=$2
grep -q '^verdict' "$tmp/out" || { echo "scale: the report from the summary has no verdict" >&2; exit 1; }
set -- $(measure "$pps" view --once --size 200x60 "$run")
view_s=$1 view_kb=$2
cp "$tmp/out" "$tmp/view-index"
set -- $(measure "$pps" view --once --no-summary --size 200x60 "$run")
whole_s=$1 whole_kb=$2
# What the summary adds through the index, which a view read whole lacks (as view_window.sh
# masks it): the whole run's charts, its length on the status line, the timeline past the
# iterations held.
perl -CSD -pi -e 's/(?:bubble %|window) +\(run\) +\S+ \S*/" " x length($&)/ge;
    s/^(view \S+ of )\S+/$1-/; s/[\x{2581}-\x{2588}]/\x{b7}/g if /^s\d/; s/ +$//' \
    "$tmp/out" "$tmp/view-index"
cmp -s "$tmp/out" "$tmp/view-index" || {
    echo "scale: the frames through the index and whole differ:" >&2
    diff "$tmp/out" "$tmp/view-index" | head -n 12 >&2
    exit 1
}
# The view as a user starts it, in tmux: seconds to its first frame, and to the second step's.
first_s=-1 second_s=-1
if command -v tmux >/dev/null 2>&1; then
    sock="$tmp/tmux.sock"
    t0=$(date +%s.%N)
    tmux -S "$sock" new-session -d -s scale -x 200 -y 60 "'$pps' view '$run'; sleep 600"
    header() { tmux -S "$sock" capture-pane -p -t scale 2>/dev/null | head -n 1; }
    # poll CONDITION WHAT: every 10 ms until CONDITION holds; a minute at most, or the view is
    # broken (WHAT it failed to do)
    poll() {
        tries=0
        until eval "$1"; do
            tries=$((tries + 1)) && [ $tries -lt 6000 ] || { echo "scale: the view $2" >&2; exit 1; }
            sleep 0.01
        done
    }
    poll 'header | grep -q "^ppscope view"' "drew no frame"
    first_s=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN {print b - a}')
    poll '! header | grep -qF "[READING]"' "kept [READING]"
    second_s=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN {print b - a}')
    tmux -S "$sock" kill-server 2>/dev/null || true
fi
set -- $(measure sqlite3 "$tmp/copy.db" "attach '$db' as src;
    create table spans as select * from src.spans where 0;
    insert into spans select * from src.spans;")
insert_s=$1
plain=$(du -b "$tmp/copy.db" | awk '{print $1}')
# What a merged file must hold: the rows and their (stage, start_ns) index, copied by SQLite the
# fastest way it has (a transfer into the same schema: the table's and the index's pages in
# order). Not the goal's baseline: the floor for an indexed copy.
rm -f "$tmp/copy.db"
sqlite3 "$db" ".schema spans" >"$tmp/spans.sql"
set -- $(measure sqlite3 "$tmp/indexed.db" ".read $tmp/spans.sql" "attach '$db' as src;
    insert into spans select * from src.spans;")
indexed_s=$1
rm -f "$tmp/indexed.db"
set -- $(measure "$pps" merge -q "$run" -o "$tmp/merged.db")
merge_s=$1 merge_kb=$2

if [ -n "$window" ]; then
    "$window" "$run" >"$tmp/window" 2>"$tmp/err" || { cat "$tmp/err" >&2; exit 1; }
fi
if [ -n "$viewbench" ]; then
    "$viewbench" --open "$run" >"$tmp/frames" 2>"$tmp/err" || { cat "$tmp/err" >&2; exit 1; }
fi

echo "ppscope at scale: $n spans, $(awk -v b="$bytes" 'BEGIN {printf "%.0f MB", b / 1e6}') of shards"
printf '  sqlite3 scan of the spans (baseline)   %8.2f s\n' "$scan_s"
printf '  sqlite3 insert of the spans (baseline) %8.2f s\n' "$insert_s"
printf '  sqlite3 transfer, with its index       %8.2f s (what a merged file holds)\n' "$indexed_s"
awk -v n="$n" -v b="$bytes" -v scan="$scan_s" -v rs="$report_s" -v rk="$report_kb" \
    -v ss="$spans_s" -v bs="$build_s" -v sb="$summary_b" -v sk="$summary_kb" \
    -v ws="$whole_s" -v wk="$whole_kb" \
    -v vs="$view_s" -v vk="$view_kb" -v fs="$first_s" -v s2="$second_s" -v ins="$insert_s" -v ms="$merge_s" -v ixs="$indexed_s" -v plain="$plain" -v mk="$merge_kb" 'BEGIN {
    ok_r = (rs < 1) ? 1 : 0
    ok_b = (bs <= 1.5 * scan) ? 1 : 0
    ok_v = (vk < 300 * 1024) ? 1 : 0
    ok_f = (fs >= 0 && fs < 0.5) ? 1 : 0
    ok_m = (ins / ms >= 0.5) ? 1 : 0
    printf "R report, from the summary|%.2f s, %.0f MB|< 1 s|%d\n", rs, sk / 1024, ok_r
    printf "R the pass that keeps it|%.2f s, %.1fx the scan|<= 1.5x the scan|%d\n", bs, bs / scan, ok_b
    printf "R report --no-summary|%.2f s, %.1fx the scan|(the spans alone)|2\n", ss, ss / scan
    printf "R report memory, from spans|%.0f B a span|(67 when filed)|2\n", rk * 1024 / n
    printf "R summary on disk|%.1f MB, %.2f%%|of the shards|2\n", sb / 1e6, 100 * sb / b
    if (fs >= 0) {
        printf "R view, to its first frame|%.2f s|< 0.5 s|%d\n", fs, ok_f
        printf "R view, to the second step|%.2f s|(no [READING])|2\n", s2
    } else
        printf "R view, to its first frame|no tmux to time it in|< 0.5 s|2\n"
    printf "R view --once %.2f s|%.0f MB|< 300 MB|%d\n", vs, vk / 1024, ok_v
    printf "R view --once --no-summary|%.2f s, %.0f MB|(the same frame)|2\n", ws, wk / 1024
    printf "R merge %.2f s, %.0f MB|%.2fx the insert rate|>= 0.5x|%d\n", ms, mk / 1024, ins / ms, ok_m
    printf "R merge vs insert+index|%.2fx that rate|(the indexed floor)|2\n", ixs / ms
    printf "R disk|%.1f B a span, %.2fx a plain table|(58.9 when filed)|2\n", b / n, b / plain
}' | while IFS='|' read -r what value goal ok; do
    verdict "${what#R }" "$value" "$goal" "$ok"
done
if [ -n "$window" ]; then
    echo "  a window of about one iteration, through the index (pps_run_load_window):"
    sed 's/^/    /' "$tmp/window"
fi
if [ -n "$viewbench" ]; then
    echo "  the view's frames (bench_view --open):"
    sed 's/^/    /' "$tmp/frames"
fi
