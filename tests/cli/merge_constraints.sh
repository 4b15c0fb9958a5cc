#!/bin/sh
# merge_constraints.sh - what merge refuses for the merged file's own constraints, said as it is
# (issue 11, item 8): it blamed "its rank is in another shard of this run too" for every SQLite
# constraint error. Rows the reader takes one shard at a time but one file cannot hold (a key
# twice in a shard whose tables were made without their primary key, a key that two shards hold)
# are named with their table, rank and key and SQLite's extended code; nothing is left behind.
# And what merge writes, report reads, with the figures of the directory.
#
# usage: merge_constraints.sh PPSCOPE   (PPS_MKRUN: the pps_mkrun helper; needs sqlite3)
set -u

. "$(dirname "$0")/lib.sh"
cli_init merge_constraints "$1"
MKRUN=${PPS_MKRUN:-}
if [ -z "$MKRUN" ] || [ ! -x "$MKRUN" ] || ! command -v sqlite3 >/dev/null 2>&1; then
    echo "skipped: needs PPS_MKRUN (the pps_mkrun helper) and sqlite3" >&2
    exit 77
fi
"$PPS" sim --schedule 1f1b -p 2 -m 2 --trace "$T/sim" >/dev/null 2>&1 || fail "sim failed"
"$MKRUN" "$T/three" --ranks 3 || fail "pps_mkrun failed"

# refused NAME RUN SHARD SQL TEXT: RUN copied, SQL run on its SHARD; merge exits 2 with one line
# that names the file and holds TEXT, and leaves neither the file nor its journal.
refused() {
    rm -rf "${T:?}/$1"
    cp -r "$T/$2" "$T/$1"
    sqlite3 "$T/$1/$3" "$4" || { fail "$1: sqlite3 failed"; return; }
    expect_exit 2 merge -q "$T/$1" -o "$T/$1.merged.db" || return
    grep -qF -- "ppscope merge: $T/$1/rank-0000" "$T/err" && grep -qF -- "$5" "$T/err" ||
        fail "$1: stderr '$(cat "$T/err")' lacks the file or '$5'"
    [ -e "$T/$1.merged.db" ] || [ -e "$T/$1.merged.db-journal" ] && fail "$1: merge left a file"
}
loose() { # a table rebuilt without its constraints, as another program might
    echo "CREATE TABLE t2 AS SELECT * FROM $1; DROP TABLE $1; ALTER TABLE t2 RENAME TO $1;"
}

refused names-twice sim rank-00000.db \
    "$(loose names) INSERT INTO names VALUES (0, 7, 'a'); INSERT INTO names VALUES (0, 7, 'b');" \
    "rank-00000.db: truncated or corrupted (name id 7 of rank 0 is there twice)"
# The reader refuses a key said twice (what would p be?), and merge with it: one loader.
refused meta-twice sim rank-00000.db \
    "$(loose meta) INSERT INTO meta SELECT * FROM meta WHERE key = 'p';" \
    "rank-00000.db: truncated or corrupted (meta key 'p' of rank 0 is there twice)"
for cmd in report "view --once"; do
    # shellcheck disable=SC2086 # cmd is words
    expect_exit 2 $cmd "$T/meta-twice" &&
        grep -qF "rank-00000.db: truncated or corrupted (meta key 'p' of rank 0 is there twice)" \
            "$T/err" || fail "meta-twice: $cmd: $(cat "$T/err")"
    # shellcheck disable=SC2086 # cmd is words
    expect_exit 2 $cmd "$T/names-twice" &&
        grep -qF "rank-00000.db: truncated or corrupted (name id 7 of rank 0 is there twice)" \
            "$T/err" || fail "names-twice: $cmd: $(cat "$T/err")"
done
# rank 1's shard holds names of rank 2 (they would collide with rank 2's own): the reader
# refuses the shard that holds them, before merge copies a row.
refused names-of-another-rank three rank-00001.db "UPDATE names SET rank = 2;" \
    "rank-00001.db: truncated or corrupted (a names row: rank 2 out of range 1..1)"

# accepted RUN: merged, and the merged file reports the directory's figures (all but the line
# that names what was read).
accepted() {
    expect_exit 0 merge -q "$T/$1" -o "$T/$1.merged.db" || return
    expect_exit 0 report "$T/$1" || return
    grep -v '^run ' "$T/out" >"$T/dir.txt"
    expect_exit 0 report "$T/$1.merged.db" || return
    grep -v '^run ' "$T/out" >"$T/file.txt"
    cmp -s "$T/dir.txt" "$T/file.txt" || fail "$1: merged report differs: $(diff "$T/dir.txt" "$T/file.txt")"
}
accepted sim
accepted three

cli_finish
