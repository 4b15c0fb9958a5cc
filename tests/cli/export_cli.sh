#!/bin/sh
# export_cli.sh - `ppscope export` end to end: help and bad input (one line, exit 2, nothing
# written), files that exist, a full disk; and each format parsed back by a real parser
# (tests/cli/export_check.py: python3's json, xml.etree and csv, and a strict OpenMetrics
# parser), on a simulated run (known figures) and on emulated runs (real spans with message
# ids), checked against the run's own SQLite rows and `ppscope report --json`.
# Usage: export_cli.sh PATH/TO/ppscope
set -u
. "$(dirname "$0")/lib.sh"
cli_init export "$1"
CHECK="$(cd "$(dirname "$0")" && pwd)/export_check.py"

for tool in python3 sqlite3; do
    if ! command -v $tool >/dev/null 2>&1; then
        echo "skipped: no $tool (scripts/install-deps.sh installs it)"
        exit 77
    fi
done

check() {
    if python3 "$CHECK" "$@" 2>"$T/check.err"; then ok; else fail "$(cat "$T/check.err")"; fi
}

# nothing_left FILE: neither FILE nor a temporary of it is there.
nothing_left() {
    if [ -e "$1" ] || ls "$1".tmp.* >/dev/null 2>&1; then
        fail "a failed export left $(ls -d "$1"*)"
    else
        ok
    fi
}

sql() {
    sqlite3 "$1" "$2"
}

# --- runs: a simulated timeline, emulated 1F1B and interleaved runs (merged into one file,
# so that one SQL query sees every rank) ---
SIM=$T/sim
"$PPS" sim --schedule zb-h1 -p 4 -m 8 --trace "$SIM" >/dev/null 2>"$T/err" ||
    { fail "sim --trace: $(cat "$T/err")"; cli_finish; }
for r in "1f1b 1 3" "interleaved 2 2"; do
    set -- $r
    "$PPS" run --schedule "$1" --backend emu -p 4 -m 8 -v "$2" --iters "$3" \
        --out "$T/emu-$1" >/dev/null 2>"$T/err" || { fail "run $1: $(cat "$T/err")"; cli_finish; }
    "$PPS" merge "$T/emu-$1" -o "$T/emu-$1.db" -q 2>"$T/err" || fail "merge: $(cat "$T/err")"
done

# --- help and bad input: one line each, exit 2, no file ---
expect_exit 0 export --help
grep -q "usage: ppscope export RUN" "$T/out" || fail "export --help does not print usage"
grep -q -- "--openmetrics FILE" "$T/out" || fail "export --help does not list --openmetrics"
expect_exit 2 export
stderr_has "missing RUN"
expect_exit 2 export "$SIM"
stderr_has "nothing to export"
expect_exit 2 export "$SIM" --bogus
stderr_has "unknown option '--bogus'"
expect_exit 2 export "$SIM" --csv
stderr_has "needs a value"
expect_exit 2 export "$T/no-such-run" --csv "$T/x.csv"
nothing_left "$T/x.csv"
echo "not a trace" >"$T/garbage.db"
expect_exit 2 export "$T/garbage.db" --csv "$T/x.csv"
nothing_left "$T/x.csv"
expect_exit 2 export "$SIM" "$SIM" --csv "$T/x.csv"
stderr_has "one run at a time"
expect_exit 2 export "$SIM" --csv "$T/x.csv" --csv "$T/y.csv"
stderr_has "--csv given twice"
expect_exit 2 export "$SIM" --csv "$T/x.csv" --perfetto "$T/x.csv"
stderr_has "name one file"
expect_exit 2 export "$SIM" --csv "$T/x.csv" --iter 0
stderr_has "give --svg FILE too"
nothing_left "$T/x.csv"
expect_exit 2 export "$SIM" --svg "$T/x.svg" --iter 5
stderr_has "has no iteration 5 (it has 0 to 0)"
expect_exit 2 export "$SIM" --svg "$T/x.svg" --iter zero
stderr_has "--iter takes an iteration number"
expect_exit 2 export "$SIM" --svg "$T/x.svg" --iter 0 --from 1
stderr_has "one or the other"
expect_exit 2 export "$SIM" --svg "$T/x.svg" --from 5 --to 2
stderr_has "is not before --to"
expect_exit 2 export "$SIM" --svg "$T/x.svg" --from 1000
stderr_has "past the end"
expect_exit 2 export "$SIM" --svg "$T/x.svg" --from -1
stderr_has "--from takes milliseconds"
nothing_left "$T/x.svg"
# A bad range writes nothing at all, not even the formats before it.
expect_exit 2 export "$SIM" --csv "$T/x.csv" --svg "$T/x.svg" --iter 9
nothing_left "$T/x.csv"
expect_exit 2 export "$SIM" --csv "$T/no/such/dir/x.csv"
stderr_has "cannot write there"

# --- a file that exists is refused, and kept; --force replaces it ---
echo "keep me" >"$T/old.csv"
expect_exit 2 export "$SIM" --perfetto "$T/new.json" --csv "$T/old.csv"
stderr_has "old.csv: exists: use --force to replace it"
[ "$(cat "$T/old.csv")" = "keep me" ] || fail "a refused export changed the file"
nothing_left "$T/new.json"
expect_exit 0 export "$SIM" --csv "$T/old.csv" --force
[ "$(head -c 4 "$T/old.csv")" = "kind" ] || fail "--force did not replace the file"
# ... but only a file: a FIFO or a link stays what it is (a rename over /dev/null, as root,
# would have made it a file)
mkfifo "$T/fifo" && {
    expect_exit 2 export "$SIM" --csv "$T/fifo" --force
    stderr_has "fifo: not a regular file: --force replaces only files"
    [ -p "$T/fifo" ] || fail "--force replaced a FIFO"
}
ln -s "$T/old.csv" "$T/link.csv"
expect_exit 2 export "$SIM" --csv "$T/link.csv" --force
[ -L "$T/link.csv" ] || fail "--force replaced a symbolic link"
# --force never replaces the run's own data: a shard or the summary of the run folder, or the
# merged file being exported; each is left byte for byte.
cp -R "$SIM" "$T/own" && cp "$T/emu-1f1b.db" "$T/own.db" || fail "copies of the runs"
for victim in "$T/own/rank-00000.db" "$T/own.db"; do
    sum=$(cksum <"$victim")
    run=$T/own
    [ "$victim" = "$T/own.db" ] && run=$victim
    expect_exit 2 export "$run" --csv "$victim" --force
    stderr_has "part of the run being exported"
    [ "$(cksum <"$victim")" = "$sum" ] || fail "export --force replaced $victim"
done
expect_exit 0 report "$T/own"

# --- a full disk (the file size limit): PPS_EIO naming the file, exit 1, nothing left ---
# SIGXFSZ is ignored so that the write fails with EFBIG instead of killing ppscope; the input
# is a merged file, which a reader opens without writing anything beside it.
(trap '' XFSZ; ulimit -f 2 && exec "$PPS" export "$T/emu-1f1b.db" --perfetto "$T/big.json") \
    >"$T/out" 2>"$T/err"
rc=$?
if [ "$rc" -ne 1 ] || [ "$(wc -l <"$T/err")" -ne 1 ] || ! grep -q "big.json: write failed" "$T/err"
then
    fail "a full disk: exit $rc, stderr '$(cat "$T/err")', expected 1 and one line naming the file"
else
    ok
fi
nothing_left "$T/big.json"

# --- every format, on each run, parsed back ---
# export_all RUN DB NAME: the four files, one line each on stdout, each read back.
export_all() {
    run=$1
    db=$2
    name=$3
    expect_exit 0 export "$run" --perfetto "$T/$name.json" --svg "$T/$name.svg" \
        --csv "$T/$name.csv" --openmetrics "$T/$name.om" || return
    [ "$(grep -c "^wrote $T/$name\.[a-z]*: " "$T/out")" -eq 4 ] && [ "$(wc -l <"$T/out")" -eq 4 ] ||
        fail "$name: not one line per file written: $(cat "$T/out")"
    spans=$(sql "$db" "SELECT count(*) FROM spans")
    # A message: a SEND and a RECV of one link with one id (docs/analysis.md, Links).
    flows=$(sql "$db" "SELECT count(*) FROM spans s JOIN spans r ON s.kind = 5 AND r.kind = 6
                       AND s.corr = r.corr AND s.corr > 0 AND s.stage = r.peer
                       AND s.peer = r.stage")
    counters=$(sql "$db" "SELECT coalesce(sum(pending_w >= 0) + sum(act_bytes >= 0), 0)
                          FROM metrics WHERE stage >= 0")
    "$PPS" report --json "$run" >"$T/$name.report.json" 2>"$T/err" || fail "report: $(cat "$T/err")"
    check csv "$T/$name.csv" "$spans"
    check perfetto "$T/$name.json" "$T/$name.csv" "$flows" "$counters"
    check svg "$T/$name.svg" 4 "$T/$name.csv"
    check openmetrics "$T/$name.om" "$T/$name.report.json"
    echo "$name: $spans spans, $flows flows, $counters counter samples"
}

export_all "$SIM" "$SIM/rank-00000.db" sim
# The simulated run: no messages, no metrics; one whole iteration, nothing sub-pixel, so a rect
# per span exactly.
[ "$(sql "$SIM/rank-00000.db" "SELECT count(*) FROM spans")" -eq 96 ] || fail "sim: not 96 spans"
expect_exit 0 export "$SIM" --svg "$T/sim-iter0.svg" --iter 0
check svg "$T/sim-iter0.svg" 4 "$T/sim.csv" --exact
export_all "$T/emu-1f1b" "$T/emu-1f1b.db" emu
[ "$flows" -gt 0 ] && [ "$counters" -gt 0 ] || fail "the emu run has no messages or no metrics"
# 3 links x 2 directions x 8 microbatches x 3 iterations.
[ "$flows" -eq 144 ] || fail "emu: $flows messages, expected 144"
export_all "$T/emu-interleaved.db" "$T/emu-interleaved.db" interleaved
grep -q '"stage 3 chunk 1"' "$T/interleaved.json" || fail "interleaved: no track per chunk"
grep -q 'class="stage" data-stage="3" data-rows="2"' "$T/interleaved.svg" ||
    fail "interleaved: no row per chunk in the SVG"
# A time range in ms since the run's first span: from 5 ms before iteration 1 starts to 15 ms
# after, taken from the report and the CSV.
range=$(python3 -c 'import csv, json, sys
t0 = min(int(r["start_ns"]) for r in csv.DictReader(open(sys.argv[1])))
it = json.load(open(sys.argv[2]))["iterations"][1]["t0_ns"]
print("%.3f %.3f" % ((it - t0) / 1e6 - 5, (it - t0) / 1e6 + 15))' "$T/emu.csv" "$T/emu.report.json")
set -- $range
expect_exit 0 export "$T/emu-1f1b" --svg "$T/emu-range.svg" --from "$1" --to "$2"
check svg "$T/emu-range.svg" 4 "$T/emu.csv"
grep -q "$1 to $2 ms after the run's first span" "$T/emu-range.svg" ||
    fail "the SVG's legend does not say the range it shows ($1 to $2 ms)"

# A slow link: its flags, each a sample of ppscope_flag, as the report has them.
"$PPS" run --schedule 1f1b --backend emu -p 4 -m 8 --iters 3 --emu-slow-link 1-2:3000 \
    --out "$T/link" >/dev/null 2>"$T/err" || fail "run with a slow link: $(cat "$T/err")"
expect_exit 0 export "$T/link" --openmetrics "$T/link.om"
"$PPS" report --json "$T/link" >"$T/link.report.json" 2>"$T/err" || fail "report: $(cat "$T/err")"
grep -q '"flags":\[{"kind":"link"' "$T/link.report.json" || fail "the slow link is not flagged"
grep -q '^ppscope_flag{run="[^"]*",kind="link",stage="1",peer="2"} ' "$T/link.om" ||
    fail "the slow link's flag is not a sample: $(grep ppscope_flag "$T/link.om")"
check openmetrics "$T/link.om" "$T/link.report.json"

# --- a run whose path needs quoting in every format ---
weird="$T/$(printf 'a "b" \\c,<&>\nd')"
"$PPS" sim --schedule 1f1b -p 2 -m 4 --trace "$weird" >/dev/null 2>"$T/err" ||
    fail "sim --trace to a path with quotes: $(cat "$T/err")"
expect_exit 0 export "$weird" --perfetto "$T/w.json" --svg "$T/w.svg" --openmetrics "$T/w.om" \
    --csv "$T/w.csv"
check run-label "$T/w.om" openmetrics "$weird"
check run-label "$T/w.json" perfetto "$weird"
check run-label "$T/w.svg" svg "$weird"
check csv "$T/w.csv" "$(sql "$weird/rank-00000.db" "SELECT count(*) FROM spans")"

cli_finish
