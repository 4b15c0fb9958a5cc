#!/bin/sh
# make_corpus_shard.sh - the seeds of fuzz_shard (tests/fuzz/corpus/shard): small real shards
# from `ppscope sim --trace`, rewritten by sqlite3 in 512-byte pages so that they are a few KB and
# a mutation lands in a structure that matters, one with what the sim does not write (names, a
# device kernel, metrics, clock offsets), a merged file of two ranks, and two damaged copies: a
# page of the spans table written over its index, and a record whose header is changed. Run it
# to remake them.
#
# usage: make_corpus_shard.sh PPSCOPE   (needs sqlite3 and python3)
set -eu
pps=$1
out=$(cd "$(dirname "$0")" && pwd)/corpus/shard
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$out"

# small NAME SCHEDULE [SQL]: a sim shard of SCHEDULE (p=2, m=2), SQL run on it, in small pages.
small() {
    "$pps" sim --schedule "$2" -p 2 -m 2 --trace "$tmp/$1" >/dev/null 2>&1
    rm -f "$out/$1.sqlite"
    sqlite3 "$tmp/$1/rank-00000.db" "${3:-}
        PRAGMA journal_mode = DELETE; PRAGMA page_size = 512; VACUUM;" >/dev/null
    cp "$tmp/$1/rank-00000.db" "$out/$1.sqlite"
}

small 1f1b 1f1b
small zb-h1 zb-h1
small kernel-metrics 1f1b "
    INSERT INTO names VALUES (0, 0, 'gemm');
    INSERT INTO spans VALUES (10, 1, 0, 0, 0, 1500000, 1600000, -1, 0, 0, 1, 7, 0);
    INSERT INTO meta VALUES (0, 'device_clock_offset_ns', '-250');
    INSERT INTO meta VALUES (0, 'clock_offset_start_ns', '0');
    INSERT INTO metrics VALUES (0, 0, 0, 2.5, 0.75, 4096, 0, 0);
    INSERT INTO metrics VALUES (0, 0, 1, NULL, NULL, -1, -1, 3);"

# A merged file of two ranks: rank 1's shard is rank 0's with its rank and a clock offset.
"$pps" sim --schedule 1f1b -p 2 -m 2 --trace "$tmp/two" >/dev/null 2>&1
cp "$tmp/two/rank-00000.db" "$tmp/two/rank-00001.db"
sqlite3 "$tmp/two/rank-00001.db" "
    UPDATE meta SET rank = 1; UPDATE spans SET rank = 1; UPDATE meta SET value = '1'
    WHERE key = 'rank'; INSERT INTO meta VALUES (1, 'clock_offset_start_ns', '1000');"
sqlite3 "$tmp/two/rank-00000.db" "UPDATE meta SET value = '2' WHERE key = 'world';"
sqlite3 "$tmp/two/rank-00001.db" "UPDATE meta SET value = '2' WHERE key = 'world';"
rm -f "$out/merged-2.sqlite"
"$pps" merge -q "$tmp/two" -o "$tmp/merged.db"
sqlite3 "$tmp/merged.db" "PRAGMA page_size = 512; VACUUM;"
cp "$tmp/merged.db" "$out/merged-2.sqlite"

# The damaged ones, from the 1f1b seed: python3 writes the pages.
python3 - "$out" <<'PY'
import sqlite3, sys
out = sys.argv[1]
src = open(out + "/1f1b.sqlite", "rb").read()
db = sqlite3.connect(out + "/1f1b.sqlite")
root = dict(db.execute("SELECT name, rootpage FROM sqlite_master"))
db.close()
page = 512
def pg(n):
    return slice((n - 1) * page, n * page)
# dup-page: the spans table's root page written over its index's (quick_check's "out of order").
b = bytearray(src)
b[pg(root["spans_stage_start"])] = src[pg(root["spans"])]
open(out + "/dup-page.sqlite", "wb").write(bytes(b))
# bad-record: the first cell of the spans root page gets a record header whose first column is
# text of 2 bytes (serial type 17) instead of its integer.
b = bytearray(src)
start = (root["spans"] - 1) * page
ncells = int.from_bytes(b[start + 3:start + 5], "big")
assert b[start] == 13 and ncells > 0, "the spans root is a leaf page with cells"
cell = start + int.from_bytes(b[start + 8:start + 10], "big")
hdr = cell + 2  # payload length and rowid, one byte each in a small table
b[hdr + 1] = 17
open(out + "/bad-record.sqlite", "wb").write(bytes(b))
PY
ls -l "$out"
