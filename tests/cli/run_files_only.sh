#!/bin/sh
# run_files_only.sh - a finished run is its shard files alone (issue 11, item 10): a closed shard
# is out of WAL mode (its header says rollback journal), view, export and merge leave nothing
# beside the shards, run and report leave only the run's summary (ppscope.summary, docs/schema.md:
# a ppscope summary, with no journal beside it), a finished run reads from read-only media, a
# shard of an older ppscope (WAL mode, closed) is read without creating its -wal and -shm, and
# a live shard stays in WAL.
#
# usage: run_files_only.sh PPSCOPE
set -u

. "$(dirname "$0")/lib.sh"
cli_init run_files_only "$1"

# journal FILE: bytes 18 and 19 of its SQLite header, "1 1" rollback journal, "2 2" WAL
journal() {
    od -An -tu1 -j18 -N2 "$1" | tr -s ' ' | sed 's/^ //; s/ $//'
}

# only_shards DIR WHEN [SUMMARY]: DIR holds rank-*.db files and nothing else; with SUMMARY, also
# the run's summary that report keeps, which must be one (application_id 'ppsS', 0x70707353)
only_shards() {
    extra=$(ls -A "$1" | grep -v '^rank-[0-9]*\.db$')
    if [ -n "${3:-}" ] && [ -f "$1/ppscope.summary" ]; then
        extra=$(echo "$extra" | grep -v '^ppscope\.summary$')
        [ "$(od -An -tx1 -j68 -N4 "$1/ppscope.summary" | tr -d ' ')" = "70707353" ] ||
            fail "$2: ppscope.summary is not a ppscope summary"
    fi
    if [ -n "$extra" ]; then fail "$2: beside the shards: $(echo $extra)"; else ok; fi
}

# read_all DIR: every reader over DIR, each must succeed; the readers but report first, which
# must add nothing at all beside the shards
read_all() {
    before=$(ls -A "$1")
    expect_exit 0 view --once --size 120x30 "$1"
    expect_exit 0 export "$1" --csv "$T/x.csv" --svg "$T/x.svg" --force
    rm -f "$T/m.db"
    expect_exit 0 merge -q "$1" -o "$T/m.db"
    after=$(ls -A "$1")
    if [ "$before" = "$after" ]; then ok; else
        fail "view, export and merge added beside the shards: $(echo $after)"
    fi
    expect_exit 0 report "$1"
    expect_exit 0 report --json "$1"
}

"$PPS" run --backend emu -s 1f1b -p 4 -m 4 --iters 3 --emu-tf 0.2 --emu-tb 0.2 --emu-tw 0.2 \
    --out "$T/run" >/dev/null 2>"$T/run.err" || {
    fail "ppscope run: $(cat "$T/run.err")"
    cli_finish
}
only_shards "$T/run" "after the run" summary
[ -f "$T/run/ppscope.summary" ] || fail "ppscope run kept no summary of the run it wrote"
for f in "$T"/run/rank-*.db; do
    [ "$(journal "$f")" = "1 1" ] || fail "$f: header journal '$(journal "$f")', expected 1 1"
done
read_all "$T/run"
only_shards "$T/run" "after report" summary
expect_exit 0 report "$T/m.db"
[ -e "$T/m.db-journal" ] || [ -e "$T/m.db-wal" ] && fail "reading the merged file left a journal"
[ -e "$T/m.db.summary-journal" ] && fail "the merged file's summary left a journal"

# a copy, a tar: the shards alone are the run
mkdir "$T/tarred"
(cd "$T/run" && tar cf - rank-*.db) | (cd "$T/tarred" && tar xf -)
expect_exit 0 report "$T/tarred"
cmp -s "$T/out" /dev/null && fail "the tarred run reported nothing"
only_shards "$T/tarred" "the tarred run, read" summary

# read-only media: a read-only bind mount where this machine allows one, else a directory
# without write permission (which stops a reader unless it runs as root)
cp -r "$T/run" "$T/ro"
if unshare -m true 2>/dev/null; then
    mkdir "$T/mnt"
    unshare -m sh -c "mount --bind -o ro '$T/ro' '$T/mnt' && touch '$T/mnt/probe' 2>/dev/null &&
        exit 9; '$PPS' report '$T/mnt' >'$T/out' 2>'$T/err'" </dev/null
    rc=$?
    if [ "$rc" -eq 9 ]; then
        fail "the read-only bind mount took a write"
    elif [ "$rc" -ne 0 ]; then
        fail "report on a read-only mount: exit $rc: $(cat "$T/err")"
    else
        grep -q '^status    complete' "$T/out" || fail "read-only report: $(cat "$T/out")"
        ok
    fi
elif [ "$(id -u)" -ne 0 ]; then
    chmod -R a-w "$T/ro"
    expect_exit 0 report "$T/ro"
    expect_exit 0 view --once "$T/ro"
    chmod -R u+w "$T/ro"
else
    echo "note: as root without mount namespaces: no read-only medium to test on here" >&2
fi
only_shards "$T/ro" "the read-only copy" summary

# a closed shard of an older ppscope: WAL mode, no -wal; reading it creates nothing beside it
if command -v sqlite3 >/dev/null 2>&1; then
    mkdir "$T/old" && cp "$T"/run/rank-*.db "$T/old/"
    for f in "$T"/old/rank-*.db; do sqlite3 "$f" "PRAGMA journal_mode = WAL" >/dev/null; done
    [ "$(journal "$T/old/rank-00000.db")" = "2 2" ] || fail "old: $(journal "$T/old/rank-00000.db")"
    only_shards "$T/old" "the older run, before reading"
    read_all "$T/old"
    only_shards "$T/old" "the older run, read" summary
else
    echo "note: no sqlite3 here: no shard of an older ppscope is made" >&2
fi

# a live shard stays in WAL: read while the run is still going
"$PPS" run --backend emu -s 1f1b -p 2 -m 4 --iters 400 --emu-tf 1 --emu-tb 1 --emu-tw 1 \
    --out "$T/live" >/dev/null 2>&1 &
pid=$!
i=0
while [ "$i" -lt 100 ] && ! { [ -s "$T/live/rank-00000.db-wal" ] &&
    [ -s "$T/live/rank-00001.db-wal" ]; }; do
    sleep 0.05
    i=$((i + 1))
done
sleep 0.2 # past the shards' creation (a shard being created is issue 11's item 8)
if kill -0 "$pid" 2>/dev/null; then
    [ "$(journal "$T/live/rank-00000.db")" = "2 2" ] ||
        fail "a live shard's header journal is '$(journal "$T/live/rank-00000.db")'"
    expect_exit 0 report "$T/live"
    grep -q '^status    INCOMPLETE' "$T/out" || fail "the live run: $(grep '^status' "$T/out")"
else
    fail "the long run ended before it could be read live"
fi
wait "$pid" || fail "the long run failed"
expect_exit 0 report "$T/live"
grep -q '^status    complete' "$T/out" || fail "the long run, ended: $(grep '^status' "$T/out")"

cli_finish
