#!/bin/sh
# merge_and_bad_input.sh - `ppscope merge` end to end: --help, bad flags, a real merge of a run
# written by pps_mkrun (which says in one line what it wrote; --quiet says nothing), and bad input
# (missing, empty, not a trace, existing output), each an exit code and exactly one line on
# stderr.
#
# usage: merge_and_bad_input.sh PPSCOPE   (PPS_MKRUN in the environment: the pps_mkrun helper)
set -u

. "$(dirname "$0")/lib.sh"
cli_init merge "$1"
MKRUN=${PPS_MKRUN:-}
if [ -z "$MKRUN" ] || [ ! -x "$MKRUN" ]; then
    echo "skipped: PPS_MKRUN does not name the pps_mkrun helper" >&2
    exit 77
fi

# expect CODE ARGS...: expect_exit, and a failure's one line starts "ppscope merge: ".
expect() {
    expect_exit "$@" || return
    if [ "$1" -ne 0 ] && ! grep -q '^ppscope merge: ' "$T/err"; then
        fail "ppscope $*: stderr '$(cat "$T/err")'"
    fi
}

# --help: usage on stdout, exit 0
expect 0 merge --help
grep -q '^usage: ppscope merge \[--progress | -q\] RUN -o FILE' "$T/out" ||
    fail "merge --help printed: $(cat "$T/out")"
[ -s "$T/err" ] && fail "merge --help wrote to stderr: $(cat "$T/err")"
expect 0 merge -h

# bad flags and missing arguments: exit 2
expect 2 merge --bogus
stderr_has "unknown option '--bogus'"
expect 2 merge
expect 2 merge "$T/run"
expect 2 merge "$T/run" -o
expect 2 merge "$T/a" "$T/b" -o "$T/x.db"

# a real run, merged
"$MKRUN" "$T/run" --ranks 3 || { fail "pps_mkrun failed"; exit 1; }
expect 0 merge "$T/run" -o "$T/merged.db"
[ -s "$T/merged.db" ] || fail "no merged file"
[ -e "$T/merged.db-journal" ] && fail "merge left a journal"
# regression: a success said nothing; now one line on stdout, counted from the file written
want="ppscope merge: wrote $T/merged.db: 3 ranks, 78 spans, 6 metrics rows"
[ "$(cat "$T/out")" = "$want" ] || fail "merge said '$(cat "$T/out")', expected '$want'"
[ -s "$T/err" ] && fail "merge wrote to stderr on success: $(cat "$T/err")"
expect 0 merge --output="$T/merged2.db" "$T/run"
cmp -s "$T/merged.db" "$T/merged2.db" || fail "merging twice gave different files"
grep -q "^ppscope merge: wrote $T/merged2.db: 3 ranks, " "$T/out" || fail "said: $(cat "$T/out")"
expect 0 merge -q "$T/run" -o "$T/merged3.db"
[ -s "$T/out" ] && fail "merge -q printed: $(cat "$T/out")"
expect 0 merge "$T/run" --quiet -o "$T/merged4.db"
[ -s "$T/out" ] || [ -s "$T/err" ] && fail "merge --quiet printed: $(cat "$T/out" "$T/err")"
cmp -s "$T/merged.db" "$T/merged3.db" || fail "merge -q wrote another file"

# the merged file is a ppscope trace that holds every rank (checked when sqlite3 is at hand)
if command -v sqlite3 >/dev/null 2>&1; then
    got=$(sqlite3 "$T/merged.db" "PRAGMA application_id; PRAGMA user_version;
        SELECT count(DISTINCT rank) FROM spans; SELECT count(*) FROM spans;
        SELECT value FROM meta WHERE rank = 1 AND key = 'clock_offset_start_ns';" | tr '\n' ' ')
    [ "$got" = "1347441457 1 3 78 1000 " ] || fail "merged file holds: $got"
fi

# A shard whose spans table is made otherwise (its columns in another order, no index: a file of
# another writer) is copied column by column, by name, and the merged file's index built after;
# one of the merged file's own schema is copied as stored, its index with it. Either way the
# merged file holds the same rows, indexed.
if command -v sqlite3 >/dev/null 2>&1; then
    cols="kind, stage, chunk, mb, iter, start_ns, end_ns, peer, bytes, name_id, clock, corr, rank"
    rows() {
        sqlite3 "$1" "SELECT $cols FROM spans ORDER BY rank, stage, start_ns, kind, mb, end_ns" ||
            fail "cannot read the spans of $1"
    }
    indexed() {
        [ "$(sqlite3 "$1" "PRAGMA integrity_check; SELECT sql FROM sqlite_master
            WHERE name = 'spans_stage_start'")" = "ok
CREATE INDEX spans_stage_start ON spans (stage, start_ns)" ] || fail "$1: not indexed as a merged file is"
    }
    rows "$T/merged.db" >"$T/rows.want"
    indexed "$T/merged.db"
    for other in rank-00000 rank-00001; do
        rm -rf "$T/other"
        cp -r "$T/run" "$T/other"
        sqlite3 "$T/other/$other.db" "CREATE TABLE s2 (rank INTEGER NOT NULL, corr INTEGER NOT NULL,
            clock INTEGER NOT NULL, name_id INTEGER NOT NULL, bytes INTEGER NOT NULL,
            peer INTEGER NOT NULL, end_ns INTEGER NOT NULL, start_ns INTEGER NOT NULL,
            iter INTEGER NOT NULL, mb INTEGER NOT NULL, chunk INTEGER NOT NULL,
            stage INTEGER NOT NULL, kind INTEGER NOT NULL);
            INSERT INTO s2 ($cols) SELECT $cols FROM spans; DROP TABLE spans;
            ALTER TABLE s2 RENAME TO spans;
            UPDATE spans SET rowid = rowid - 30;" || fail "cannot remake $other's spans"
        expect 0 merge -q "$T/other" -o "$T/other-$other.db"
        rows "$T/other-$other.db" >"$T/rows.got"
        cmp -s "$T/rows.want" "$T/rows.got" || fail "$other remade: the merged file holds other rows"
        indexed "$T/other-$other.db"
    done
    # Rowids at the top: the first shard's kept as they are would leave SQLite to choose the
    # next shards' at random, and two merges would differ; far apart: each is still copied.
    rm -rf "$T/other"
    cp -r "$T/run" "$T/other"
    sqlite3 "$T/other/rank-00000.db" "UPDATE spans SET rowid = 9223372036854775807
        WHERE rowid = (SELECT max(rowid) FROM spans)" || fail "cannot move a rowid"
    sqlite3 "$T/other/rank-00001.db" "UPDATE spans SET rowid = rowid * 4611686018427387
        WHERE rowid > 0" || fail "cannot move rowids"
    expect 0 merge -q "$T/other" -o "$T/top1.db"
    expect 0 merge -q "$T/other" -o "$T/top2.db"
    cmp -s "$T/top1.db" "$T/top2.db" || fail "rowids at the top: two merges differ"
    rows "$T/top1.db" >"$T/rows.got"
    cmp -s "$T/rows.want" "$T/rows.got" || fail "rowids at the top: other rows merged"
fi

# never overwrites
size=$(wc -c <"$T/merged.db")
expect 2 merge "$T/run" -o "$T/merged.db"
stderr_has "$T/merged.db: already exists"
[ "$(wc -c <"$T/merged.db")" -eq "$size" ] || fail "merge touched an existing file"

# an output under a shard's name in the run itself: the check would read it as a shard, half
# written (refused every time, not now and then)
for i in 1 2 3; do
    expect 2 merge "$T/run" -o "$T/run/rank-00007.db"
    stderr_has "$T/run/rank-00007.db: a shard's name in $T/run itself"
    [ -e "$T/run/rank-00007.db" ] && fail "a refused merge left its output in the run"
done
expect 0 merge -q "$T/run" -o "$T/run/merged-here.db" # another name there is no shard's
rm -f "$T/run/merged-here.db"

# a run that does not exist
expect 2 merge "$T/nowhere" -o "$T/m1.db"
stderr_has "$T/nowhere: no such file or directory"
[ -e "$T/m1.db" ] && fail "a failed merge left its output"

# an empty directory
mkdir "$T/empty"
expect 2 merge "$T/empty" -o "$T/m2.db"
stderr_has "$T/empty: no ppscope shards (rank-*.db) in this directory"

# a shard that is not a trace
mkdir "$T/bad"
echo "not a database" >"$T/bad/rank-00000.db"
expect 2 merge "$T/bad" -o "$T/m3.db"
stderr_has "$T/bad/rank-00000.db: not a ppscope trace"
[ -e "$T/m3.db" ] && fail "a failed merge left its output"

# a file given as the run
expect 2 merge "$T/merged.db" -o "$T/m4.db"
stderr_has "not a run directory"

# a run whose ranks did not finish merges what they flushed
"$MKRUN" "$T/partial" --incomplete || fail "pps_mkrun --incomplete failed"
expect 0 merge "$T/partial" -o "$T/partial.db"
grep -q "^ppscope merge: wrote $T/partial.db: [0-9]* ranks*, [0-9]* spans*, " "$T/out" ||
    fail "partial merge said: $(cat "$T/out")"

cli_finish
