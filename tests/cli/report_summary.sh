#!/bin/sh
# report_summary.sh - the run's summary (docs/schema.md, "Summaries"): `ppscope report` of a
# finished run keeps what it measured beside the run, and the next report reads that instead of
# the spans, with the same figures:
#   - for simulated runs of every schedule, emu runs (threads, a slow link, a slow stage,
#     post-validation), a merged file and imports of Nsight Systems and PyTorch profiler traces,
#     the text report, --json, --iterations (CSV) and --iterations --json are the same bytes
#     measured from the spans (--no-summary), on the report that keeps the summary, and on the
#     one that reads it (which -v says, and which reads no span);
#   - a run that changes after its summary (a span, a meta row) is measured again, and its
#     summary replaced;
#   - no summary is kept for a run still written, nor with --no-summary;
#   - a file in the summary's place that is not one (another file, an empty one, a FIFO, a
#     symbolic link) is neither read, followed nor overwritten, and never makes a report wait;
#   - a summary changed anywhere (a bit of its bytes) is refused; a shard edited in place with its
#     modification time set back is measured again;
#   - compare and sim --from read a summary and keep none.
#
#   report_summary.sh PPSCOPE FIXTURES_DIR
. "$(dirname "$0")/lib.sh"
cli_init report_summary "$1"
fix=${2:-}

# same_reports WHAT RUN: every output of report from the spans, keeping, and from the summary.
same_reports() {
    what=$1
    run=$2
    sum=$run/ppscope.summary
    [ -d "$run" ] || sum=$run.summary
    for form in "" "--json" "--iterations" "--iterations --json"; do
        tag=$(echo "x$form" | tr -c 'a-z\n' '_')
        rm -f "$sum"
        # shellcheck disable=SC2086
        "$PPS" report --no-summary $form "$run" >"$T/$tag.spans" 2>"$T/err" ||
            { fail "$what: report --no-summary $form: $(cat "$T/err")"; continue; }
        [ -e "$sum" ] && fail "$what: --no-summary kept a summary"
        # shellcheck disable=SC2086
        "$PPS" report -v $form "$run" >"$T/$tag.keep" 2>"$T/err.keep" ||
            { fail "$what: report $form: $(cat "$T/err.keep")"; continue; }
        # shellcheck disable=SC2086
        "$PPS" report -v $form "$run" >"$T/$tag.sum" 2>"$T/err.sum" ||
            { fail "$what: report $form (summary): $(cat "$T/err.sum")"; continue; }
        if grep -q "summary kept" "$T/err.keep"; then ok; else
            fail "$what: the first report $form kept no summary: $(cat "$T/err.keep")"
        fi
        if grep -q "from the run's summary" "$T/err.sum"; then ok; else
            fail "$what: report $form did not read the summary: $(cat "$T/err.sum")"
        fi
        if cmp -s "$T/$tag.spans" "$T/$tag.keep" && cmp -s "$T/$tag.spans" "$T/$tag.sum"; then
            ok
        else
            fail "$what: report $form differs from the summary:
$(diff "$T/$tag.spans" "$T/$tag.sum" | head -n 20)"
        fi
    done
}

# Simulated runs of every schedule.
for case in "gpipe -p 4 -m 8" "1f1b -p 4 -m 12" "interleaved -p 4 -m 8 -v 2" \
    "zb-h1 -p 4 -m 8" "zb-h2 -p 3 -m 9"; do
    set -- $case
    name=$1
    shift
    "$PPS" sim --schedule "$name" "$@" --iters 6 --trace "$T/sim-$name" >/dev/null 2>"$T/err" ||
        { fail "sim $name: $(cat "$T/err")"; continue; }
    same_reports "sim $name" "$T/sim-$name"
done

# Real runs on emu, with links, a slow link, a slow stage, and post-validation.
EMU="--backend emu --emu-tf 1 --emu-tb 1 --emu-tw 1 -p 4 -m 8 --iters 4 --quiet"
i=0
for extra in "--schedule 1f1b" "--schedule zb-h1 --emu-slow-link 1-2:800" \
    "--schedule zb-h2 --emu-slow-stage 2:1.5" "--schedule 1f1b --optimizer postval"; do
    i=$((i + 1))
    # shellcheck disable=SC2086
    "$PPS" run $EMU $extra --out "$T/emu$i" >/dev/null 2>"$T/err" ||
        { fail "run $extra: $(cat "$T/err")"; continue; }
    same_reports "emu $extra" "$T/emu$i"
done

# A merged file: its summary lies beside it.
if "$PPS" merge "$T/emu2" -o "$T/emu2.db" >/dev/null 2>"$T/err"; then
    same_reports "merged file" "$T/emu2.db"
    if [ -f "$T/emu2.db.summary" ]; then ok; else fail "no summary beside the merged file"; fi
else
    fail "merge: $(cat "$T/err")"
fi

# Imports of other tools' traces.
if [ -n "$fix" ] && [ -f "$fix/nsys/pipe4-pps.sqlite" ]; then
    if "$PPS" import "$fix/nsys/pipe4-pps.sqlite" -o "$T/nsys" >/dev/null 2>"$T/err"; then
        same_reports "nsys import" "$T/nsys"
    else
        fail "import nsys: $(cat "$T/err")"
    fi
fi
if [ -n "$fix" ] && [ -f "$fix/kineto/1f1b-rank-0.json.gz" ]; then
    if "$PPS" import "$fix"/kineto/1f1b-rank-*.json.gz -o "$T/kineto" >/dev/null 2>"$T/err"; then
        same_reports "kineto import" "$T/kineto"
    else
        echo "report_summary: no Kineto import in this build ($(cat "$T/err"))"
    fi
fi

# A run that changes after its summary is measured again.
run=$T/sim-zb-h1
db=$run/rank-00000.db
if command -v sqlite3 >/dev/null 2>&1; then
    "$PPS" report -v "$run" >/dev/null 2>"$T/err"
    # One more F (inside another, so no span is longer than the file says any is).
    sqlite3 "$db" "INSERT INTO spans SELECT kind, stage, chunk, mb, iter, start_ns, \
        (start_ns + end_ns) / 2, peer, bytes, name_id, clock, corr, rank FROM spans \
        WHERE kind = (SELECT id FROM kinds WHERE name = 'F') LIMIT 1" 2>"$T/err" ||
        fail "could not add a span: $(cat "$T/err")"
    "$PPS" report --no-summary --json "$run" >"$T/changed.spans"
    "$PPS" report -v --json "$run" >"$T/changed.keep" 2>"$T/err"
    if grep -q "from [0-9]* spans; summary kept" "$T/err"; then ok; else
        fail "a changed run was not measured again: $(cat "$T/err")"
    fi
    "$PPS" report -v --json "$run" >"$T/changed.sum" 2>"$T/err"
    if grep -q "from the run's summary" "$T/err" && cmp -s "$T/changed.spans" "$T/changed.sum" &&
        cmp -s "$T/changed.spans" "$T/changed.keep"; then ok; else
        fail "the changed run's summary: $(cat "$T/err")"
    fi
    sqlite3 "$db" "INSERT INTO meta VALUES (0, 'note', 'changed')"
    "$PPS" report -v "$run" >/dev/null 2>"$T/err"
    if grep -q "from [0-9]* spans" "$T/err"; then ok; else
        fail "a new meta row did not make the report measure again: $(cat "$T/err")"
    fi
fi

# A run still written keeps no summary.
start_live_run "$T/live"
"$PPS" report -v "$T/live" >/dev/null 2>"$T/err"
kill "$live_pid" 2>/dev/null
wait "$live_pid" 2>/dev/null
if grep -q "no summary kept: the run is still written" "$T/err" &&
    [ ! -e "$T/live/ppscope.summary" ]; then ok; else
    fail "a live run: $(cat "$T/err")"
fi

# Something else in the summary's place is left alone, and the report is made from the spans.
run=$T/sim-gpipe
"$PPS" report --no-summary "$run" >"$T/other.spans"
# other WHAT: the report with $run/ppscope.summary as it is now, and what is there after it.
other() {
    ls -l "$run/ppscope.summary" >"$T/before" 2>&1
    timeout 30 "$PPS" report -v "$run" >"$T/other.rep" 2>"$T/err"
    rc=$?
    ls -l "$run/ppscope.summary" >"$T/after" 2>&1
    if [ $rc -eq 0 ] && cmp -s "$T/other.spans" "$T/other.rep" && cmp -s "$T/before" "$T/after" &&
        grep -q "no summary kept" "$T/err"; then ok; else
        fail "$1 in the summary's place: exit $rc, $(cat "$T/err"); $(cat "$T/before" "$T/after")"
    fi
}
echo "not a summary" >"$run/ppscope.summary"
other "a text file"
[ "$(cat "$run/ppscope.summary")" = "not a summary" ] || fail "the text file was changed"
: >"$run/ppscope.summary"
other "an empty file"
[ -s "$run/ppscope.summary" ] && fail "the empty file was written"
rm -f "$run/ppscope.summary"
mkfifo "$run/ppscope.summary" && other "a FIFO"
rm -f "$run/ppscope.summary"
ln -s "$T/elsewhere.db" "$run/ppscope.summary" && other "a dangling symbolic link"
[ -e "$T/elsewhere.db" ] && fail "the symbolic link was followed: $T/elsewhere.db was made"
rm -f "$run/ppscope.summary"

# A summary changed anywhere is refused, and made again.
if command -v sqlite3 >/dev/null 2>&1; then
    "$PPS" report "$run" >/dev/null 2>&1
    sqlite3 "$run/ppscope.summary" \
        "UPDATE summaries SET data = substr(data, 1, 1000) || x'ff' || substr(data, 1002)"
    "$PPS" report -v "$run" >"$T/flipped" 2>"$T/err"
    if grep -q "summary not used: a damaged summary" "$T/err" && cmp -s "$T/other.spans" "$T/flipped"
    then ok; else fail "a changed summary: $(cat "$T/err")"; fi
    # A shard edited in place, its modification time set back: its change time tells.
    run=$T/sim-1f1b
    "$PPS" report "$run" >/dev/null 2>&1
    touch -r "$run/rank-00000.db" "$T/when"
    sqlite3 "$run/rank-00000.db" "UPDATE spans SET end_ns = end_ns - 1 WHERE rowid = 5"
    touch -r "$T/when" "$run/rank-00000.db"
    "$PPS" report --no-summary --json "$run" >"$T/edited.spans"
    "$PPS" report -v --json "$run" >"$T/edited" 2>"$T/err"
    if grep -q "from [0-9]* spans" "$T/err" && cmp -s "$T/edited.spans" "$T/edited"; then ok; else
        fail "a shard edited in place and touched back: $(cat "$T/err")"
    fi
fi

# A killed run (its shards left with their logs) keeps a summary that the next report reads: the
# logs' change times, which SQLite run by root changes at every open, are not in the stamp.
start_live_run "$T/killed"
kill -9 "$live_pid" 2>/dev/null
wait "$live_pid" 2>/dev/null
"$PPS" report -v "$T/killed" >"$T/killed.1" 2>"$T/err.1"
"$PPS" report -v "$T/killed" >"$T/killed.2" 2>"$T/err.2"
if grep -q "summary kept" "$T/err.1" && grep -q "from the run's summary" "$T/err.2" &&
    cmp -s "$T/killed.1" "$T/killed.2"; then ok; else
    fail "a killed run: $(cat "$T/err.1" "$T/err.2")"
fi

# compare and sim --from read a summary and keep none.
run=$T/sim-zb-h2
rm -f "$run/ppscope.summary"
expect_exit 0 compare "$run" "$run"
expect_exit 0 sim --from "$run"
[ -e "$run/ppscope.summary" ] && fail "compare or sim --from kept a summary"

cli_finish
