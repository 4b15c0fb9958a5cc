#!/bin/sh
# damaged_pages.sh - finished shards with damaged pages (issue 11, item 4), built here and never
# stored as blobs: a small `ppscope sim --trace` run, then 40 copies of its shard, each with one
# 4 KiB page written over another (the pairs drawn from a fixed seed). A damaged page SQLite can
# still read gives rows the loader's own checks accept (a duplicated leaf repeats spans and drops
# others); SQLite's PRAGMA integrity_check finds it, and so must the reader's own check of a
# finished shard (shard_check.h: quick_check, and the index held to the rows by tally; one more
# case below has an index that only the second finds). Asserted for every copy that
# integrity_check calls damaged: report, report --json, view --once and merge refuse it (exit 2, one line naming the
# file); and that SQLite's check is what refused some of them (the loader alone would not have).
# A copy integrity_check calls ok is read or refused, never a crash.
#
# usage: damaged_pages.sh PPSCOPE   (needs sqlite3 and python3; skipped, exit 77, without them)
set -u

. "$(dirname "$0")/lib.sh"
cli_init damaged_pages "$1"
for tool in sqlite3 python3; do
    if ! command -v $tool >/dev/null 2>&1; then
        echo "skipped: no $tool to build the cases with" >&2
        exit 77
    fi
done

"$PPS" sim --schedule 1f1b -p 4 -m 8 --iters 40 --trace "$T/good" >/dev/null 2>&1 ||
    { fail "ppscope sim --trace failed"; cli_finish; }
python3 - "$T" <<'PY' || fail "could not make the damaged copies"
import os, random, shutil, sys
t = sys.argv[1]
src = t + "/good/rank-00000.db"
ps, n = 4096, os.path.getsize(t + "/good/rank-00000.db") // 4096
rng = random.Random(7)
for i in range(40):
    d = "%s/d%02d" % (t, i)
    os.makedirs(d)
    dst = d + "/rank-00000.db"
    shutil.copy(src, dst)
    a, b = rng.randrange(2, n), rng.randrange(2, n)
    with open(dst, "r+b") as f:
        f.seek(a * ps)
        page = f.read(ps)
        f.seek(b * ps)
        f.write(page)
PY

damaged=0 by_check=0
for d in "$T"/d*; do
    qc=$(sqlite3 "file:$d/rank-00000.db?immutable=1" "pragma integrity_check(1)" 2>&1)
    for cmd in "report" "report --json" "view --once" "merge"; do
        out=
        [ "$cmd" = merge ] && out="-o $d.merged.db"
        # shellcheck disable=SC2086 # cmd and out are words
        run_pps $cmd "$d" $out
        [ "$rc" -lt 128 ] || fail "ppscope $cmd $(basename "$d"): exit $rc"
        [ "$qc" = ok ] && continue
        if [ "$rc" -ne 2 ]; then
            fail "ppscope $cmd $(basename "$d"): exit $rc on a shard SQLite calls damaged ($qc)"
            continue
        fi
        [ "$(grep -c . "$T/err")" -eq 1 ] || fail "ppscope $cmd $(basename "$d"): not one line"
        grep -qF "$d/rank-00000.db" "$T/err" || fail "ppscope $cmd: the file is not named"
        [ "$cmd" = report ] && grep -qF "damaged (SQLite's check: " "$T/err" &&
            by_check=$((by_check + 1))
        ok
    done
    [ "$qc" = ok ] || damaged=$((damaged + 1))
done
# refused_by_all DIR MESSAGE WHAT: report, report --json, view --once and merge of DIR each exit
# 2 with MESSAGE on stderr
refused_by_all() {
    for cmd in "report" "report --json" "view --once" "merge"; do
        out=
        [ "$cmd" = merge ] && out="-o $1.merged.db"
        # shellcheck disable=SC2086 # cmd and out are words
        expect_exit 2 $cmd "$1" $out && grep -qF "$2" "$T/err" ||
            fail "$3: ppscope $cmd: $(cat "$T/err")"
    done
}

# A write cut short (a hot rollback journal beside the file): the file holds half of it, which
# read as it is would become figures; every reader says so instead.
cp -r "$T/good" "$T/hot"
python3 - "$T/hot/rank-00000.db" <<'PY' || fail "could not make the hot journal"
import os, sqlite3, sys
c = sqlite3.connect(sys.argv[1], isolation_level=None)
c.execute("pragma journal_mode = delete")
c.execute("pragma cache_size = 1")
c.execute("begin")
c.execute("update spans set end_ns = end_ns + 7000000 where kind = 1")
c.execute("insert into spans select * from spans")
os._exit(0)  # no rollback, no close: the journal stays hot
PY
[ -s "$T/hot/rank-00000.db-journal" ] || fail "no hot journal was left"
refused_by_all "$T/hot" "rank-00000.db: a write to it was cut short" "hot journal"

# An index whose pages are sound but whose entries are not the rows': PRAGMA quick_check passes
# it, integrity_check does not (it looks each row up), and neither may the reader, which reads
# the index through and holds its entries to the rows it read (shard_check.h). Built by making
# the index of (stage, end_ns) and then telling the schema it is of (stage, start_ns).
cp -r "$T/good" "$T/index"
python3 - "$T/index/rank-00000.db" <<'PY' || fail "could not make the mismatched index"
import sqlite3, sys
c = sqlite3.connect(sys.argv[1], isolation_level=None)
c.execute("drop index spans_stage_start")
c.execute("create index spans_stage_start on spans (stage, end_ns)")
c.execute("pragma writable_schema = on")
c.execute("update sqlite_schema set sql = replace(sql, 'end_ns', 'start_ns') "
          "where name = 'spans_stage_start'")
PY
[ "$(sqlite3 "$T/index/rank-00000.db" "pragma quick_check")" = ok ] ||
    fail "the mismatched index does not pass quick_check: the case tests nothing new"
[ "$(sqlite3 "$T/index/rank-00000.db" "pragma integrity_check")" != ok ] ||
    fail "integrity_check passes the mismatched index"
refused_by_all "$T/index" \
    "rank-00000.db: damaged (the spans index does not match the table: its " "mismatched index"

# Two of the index's leaf pages swapped: every entry is still there, so the tally matches, and
# quick_check passes it too; only the entries' order shows it (integrity_check finds a row
# missing from the index). Read as it is, a window through the index would miss spans.
cp -r "$T/good" "$T/swap"
python3 - "$T/swap/rank-00000.db" <<'PY' || fail "could not swap the index's pages"
import sqlite3, sys
path = sys.argv[1]
c = sqlite3.connect("file:%s?immutable=1" % path, uri=True)
leaves = [r[0] for r in c.execute("select pageno from dbstat where name = 'spans_stage_start' "
                                   "and pagetype = 'leaf' order by pageno")]
c.close()
assert len(leaves) >= 4, leaves
a, b = leaves[1], leaves[-2]
with open(path, "r+b") as f:
    f.seek((a - 1) * 4096)
    pa = f.read(4096)
    f.seek((b - 1) * 4096)
    pb = f.read(4096)
    f.seek((a - 1) * 4096)
    f.write(pb)
    f.seek((b - 1) * 4096)
    f.write(pa)
PY
[ "$(sqlite3 "file:$T/swap/rank-00000.db?immutable=1" "pragma quick_check")" = ok ] ||
    fail "the swapped index pages do not pass quick_check: the case tests nothing new"
[ "$(sqlite3 "file:$T/swap/rank-00000.db?immutable=1" "pragma integrity_check")" != ok ] ||
    fail "integrity_check passes the swapped index pages"
refused_by_all "$T/swap" "rank-00000.db: damaged (the spans index is out of order at its entry " \
    "swapped index pages"

# A finished shard without the index (dropped, or a merged file read before merge made it) has
# nothing to tally: it loads, as it did before the index was checked.
cp -r "$T/good" "$T/noindex"
sqlite3 "$T/noindex/rank-00000.db" "drop index spans_stage_start" || fail "could not drop the index"
expect_exit 0 report --no-summary "$T/noindex" && ok

echo "$damaged of 40 copies damaged by SQLite's check; $by_check refused by that check alone"
[ "$damaged" -ge 20 ] || fail "only $damaged copies damaged: the cases test little"
[ "$by_check" -ge 5 ] || fail "SQLite's check refused only $by_check: it is not run"
cli_finish
