#!/bin/sh
# bad_shards.sh - the bad-input corpus of issue 11, built here from a good run and never stored
# as blobs: `ppscope sim --trace` writes a small run (p=4, m=4, one shard), and each case derives
# a damaged copy with sqlite3 statements. Every case must be refused by every command that reads
# a run (report, report --json, view --once, merge): exit 2, exactly one line on stderr naming
# the file and what is wrong, never a crash (an exit >= 128) and never a sanitizer report.
#
# To add a case, append one line to the table at the end:
#   case_sql NAME 'TEXT ON STDERR' 'SQL run on the copy of rank-00000.db'
#   case_dup NAME 'TEXT ON STDERR'   (rank-00000.db copied as rank-00001.db, then the SQL)
#
# usage: bad_shards.sh PPSCOPE   (needs sqlite3; skipped, exit 77, without it)
set -u

. "$(dirname "$0")/lib.sh"
cli_init bad_shards "$1"
if ! command -v sqlite3 >/dev/null 2>&1; then
    echo "skipped: no sqlite3 to build the corpus with" >&2
    exit 77
fi

"$PPS" sim --schedule 1f1b -p 4 -m 4 --trace "$T/good" >/dev/null 2>&1 ||
    { fail "ppscope sim --trace failed"; cli_finish; }
# The good run is read by all of them: a case fails for its damage alone.
for cmd in "report" "report --json" "view --once"; do
    # shellcheck disable=SC2086 # cmd is words
    expect_exit 0 $cmd "$T/good"
    grep -q 'runtime error\|Sanitizer' "$T/err" && fail "ppscope $cmd: $(head -c 600 "$T/err")"
done
expect_exit 0 merge -q "$T/good" -o "$T/good.merged.db"
# What merge writes, report reads (merge checks what it copies as the reader does).
expect_exit 0 report "$T/good.merged.db"

# check NAME TEXT RUN: every reader refuses RUN with one line that names the file and has TEXT.
check() {
    name=$1 text=$2 run=$3
    for cmd in "report" "report --json" "view --once" "merge"; do
        out=
        [ "$cmd" = merge ] && out="-o $T/$name.merged.db"
        # shellcheck disable=SC2086 # cmd and out are words
        run_pps $cmd "$run" $out
        if [ "$rc" -ne 2 ]; then
            fail "$name: ppscope $cmd: exit $rc, expected 2; stderr: $(head -c 300 "$T/err")"
            continue
        fi
        if [ "$(wc -l <"$T/err")" -ne 1 ]; then
            fail "$name: ppscope $cmd: $(wc -l <"$T/err") lines on stderr: $(head -c 600 "$T/err")"
            continue
        fi
        if ! grep -qF -- "$run/rank-0000" "$T/err" || ! grep -qF -- "$text" "$T/err"; then
            fail "$name: ppscope $cmd: stderr '$(cat "$T/err")' lacks the file or '$text'"
            continue
        fi
        [ -e "$T/$name.merged.db" ] && fail "$name: merge left its output"
        ok
    done
}

# case_sql NAME TEXT SQL: a copy of the good run with SQL run on its shard.
case_sql() {
    rm -rf "${T:?}/$1"
    cp -r "$T/good" "$T/$1"
    sqlite3 "$T/$1/rank-00000.db" "$3" || { fail "$1: sqlite3 failed"; return; }
    check "$1" "$2" "$T/$1"
}

# case_dup NAME TEXT [SQL]: the shard copied under rank 1's name, SQL run on the copy.
case_dup() {
    rm -rf "${T:?}/$1"
    cp -r "$T/good" "$T/$1"
    cp "$T/$1/rank-00000.db" "$T/$1/rank-00001.db"
    if [ -n "${3:-}" ]; then
        sqlite3 "$T/$1/rank-00001.db" "$3" || { fail "$1: sqlite3 failed"; return; }
    fi
    check "$1" "$2" "$T/$1"
}

# Item 3: a value of the wrong type in every integer column of spans (text, a blob, NULL through
# a table without NOT NULL, a real), read as 0 before.
for col in kind stage chunk mb iter start_ns end_ns peer bytes name_id clock corr rank; do
    case_sql "text-$col" "spans row 3: $col is text, not an integer" \
        "UPDATE spans SET $col = 'one' WHERE rowid = 3;"
    case_sql "blob-$col" "spans row 5: $col is a blob, not an integer" \
        "UPDATE spans SET $col = x'01' WHERE rowid = 5;"
    case_sql "real-$col" "spans row 7: $col is a real number, not an integer" \
        "UPDATE spans SET $col = 0.5 WHERE rowid = 7;"
done
# NULL needs a table without NOT NULL: the same table rebuilt loosely, as another program might.
case_sql null-start_ns "spans row 2: start_ns is NULL, not an integer" "
    CREATE TABLE s2 AS SELECT * FROM spans; DROP TABLE spans; ALTER TABLE s2 RENAME TO spans;
    CREATE INDEX spans_stage_start ON spans (stage, start_ns);
    UPDATE spans SET start_ns = NULL WHERE rowid = 2;"
case_sql stage-one "spans row 9: stage is text, not an integer" \
    "UPDATE spans SET stage = 'one' WHERE rowid = 9;"
# metrics: the sim writes none; one added, then damaged
metric="INSERT INTO metrics VALUES (0, 0, 0, 1.5, 0.5, 100, 0, 0);"
case_sql metric-text-dropped "metrics row 1: dropped is text, not an integer" \
    "$metric UPDATE metrics SET dropped = 'none';"
case_sql metric-text-iter "metrics row 1: iter is text, not an integer" \
    "$metric UPDATE metrics SET iter = 'first';"
case_sql metric-text-loss "metrics row 1: loss is text, not a number" \
    "$metric UPDATE metrics SET loss = 'low';"
case_sql metric-blob-rank "metrics row 1: rank is a blob, not an integer" \
    "$metric UPDATE metrics SET rank = x'00';"
# meta and names of the wrong type
case_sql meta-text-rank "meta row 'p': rank is text, not an integer" \
    "UPDATE meta SET rank = 'zero' WHERE key = 'p';"
case_sql meta-blob-value "meta row 'schedule': value is a blob, not text" \
    "UPDATE meta SET value = x'31663162' WHERE key = 'schedule';"
case_sql names-text-id "a names row: id is text, not an integer" \
    "INSERT INTO names VALUES (0, 'first', 'gemm');"
case_sql kinds-text-compute "kinds row 2: compute is text, not an integer" \
    "UPDATE kinds SET compute = 'yes' WHERE id = 2;"

# Item 5: values the schema allows but the code could not hold.
case_sql span-2-63-long "spans row 1: start_ns -4611686018427387904 out of range" \
    "UPDATE spans SET start_ns = -4611686018427387904, end_ns = 4611686018427387904
     WHERE rowid = 1;"
case_sql time-2-62 "spans row 1: end_ns 4611686018427387904 out of range" \
    "UPDATE spans SET end_ns = 4611686018427387904 WHERE rowid = 1;"
case_sql stage-32767-of-4 "spans row 1: stage 32767 out of range 0..3" \
    "UPDATE spans SET stage = 32767 WHERE rowid = 1;"
case_sql m-2-31 "meta m of rank 0 is '2147483647', not a count in 1..1048576" \
    "UPDATE meta SET value = '2147483647' WHERE key = 'm';"
case_sql iter-minus-2 "spans row 4: iter -2 out of range -1.." "UPDATE spans SET iter = -2 WHERE rowid = 4;"
# The writer keeps the longest span's length with the rows (what a window's reader looks back by):
# a span made longer after is damage, and so is a length that is not one.
case_sql span-longer-than-meta "spans row 3: lasts 1000000000 ns, and meta span_max_ns says no span" \
    "UPDATE spans SET end_ns = start_ns + 1000000000 WHERE rowid = 3;"
case_sql span-max-text "meta span_max_ns of rank 0 is 'long', not a number of nanoseconds" \
    "UPDATE meta SET value = 'long' WHERE key = 'span_max_ns';"
case_sql span-max-negative "meta span_max_ns of rank 0 is '-1', not a number of nanoseconds" \
    "UPDATE meta SET value = '-1' WHERE key = 'span_max_ns';"
case_sql mb-minus-5 "spans row 4: mb -5 out of range -1.." "UPDATE spans SET mb = -5 WHERE rowid = 4;"
case_sql chunk-minus-3 "spans row 4: chunk -3 out of range -1.." \
    "UPDATE spans SET chunk = -3 WHERE rowid = 4;"
case_sql peer-minus-7 "spans row 4: peer -7 out of range -1.." "UPDATE spans SET peer = -7 WHERE rowid = 4;"
case_sql iters-text "meta iters of rank 0 is 'abc', not a count in 1..2147483647" \
    "INSERT INTO meta (rank, key, value) VALUES (0, 'iters', 'abc');"
case_sql iters-0 "meta iters of rank 0 is '0', not a count in 1..2147483647" \
    "INSERT INTO meta (rank, key, value) VALUES (0, 'iters', '0');"
case_sql iters-2-31 "meta iters of rank 0 is '2147483648', not a count in 1..2147483647" \
    "INSERT INTO meta (rank, key, value) VALUES (0, 'iters', '2147483648');"
case_sql mb-int32-max "spans row 4: mb 2147483647 out of range" \
    "UPDATE spans SET mb = 2147483647 WHERE rowid = 4;"
case_sql dropped-negative "metrics row 1: dropped -5 out of range -1.." \
    "$metric UPDATE metrics SET dropped = -5;"
# ... and the run's own shape: a microbatch, a chunk, a peer beyond its m, v, p, a span of a rank
# the shard does not hold (a row copied from another shard), a world no rank could be in.
case_sql mb-4-of-4 "spans row 4: mb 4 out of range -1..3" "UPDATE spans SET mb = 4 WHERE rowid = 4;"
case_sql chunk-1-of-1 "spans row 4: chunk 1 out of range -1..0" \
    "UPDATE spans SET chunk = 1 WHERE rowid = 4;"
case_sql peer-4-of-4 "spans row 4: peer 4 out of range -1..3" "UPDATE spans SET peer = 4 WHERE rowid = 4;"
case_sql rank-1-in-0 "spans row 4: rank 1 out of range 0..0" "UPDATE spans SET rank = 1 WHERE rowid = 4;"
case_sql world-0 "meta world of rank 0 is '0', not a count in 1..32768" \
    "INSERT OR REPLACE INTO meta (rank, key, value) VALUES (0, 'world', '0');"
case_sql complete-2 "meta complete of rank 0 is '2', not 0 or 1" \
    "UPDATE meta SET value = '2' WHERE key = 'complete';"
# Found by the hostile pass after them: a message to its own stage, an iteration beyond the
# run's iters, metrics of a rank or stage the shard does not hold or a count below -1, and a
# meta rank key that disagrees with its rows.
case_sql send-to-itself "spans row 4: a SEND of stage 0 with itself" \
    "UPDATE spans SET kind = 5, peer = stage WHERE rowid = 4;"
case_sql iter-beyond-iters "spans row 4: iter 7 out of range -1..4" \
    "INSERT OR REPLACE INTO meta (rank, key, value) VALUES (0, 'iters', '5');
     UPDATE spans SET iter = 7 WHERE rowid = 4;"
case_sql metric-rank-7 "metrics row 1: rank 7 out of range 0..0" "$metric UPDATE metrics SET rank = 7;"
case_sql metric-stage-99 "metrics row 1: stage 99 out of range -1..3" \
    "$metric UPDATE metrics SET stage = 99;"
case_sql metric-pending-w-99 "metrics row 1: pending_w -99 out of range -1.." \
    "$metric UPDATE metrics SET pending_w = -99;"
case_sql meta-rank-key "meta rank of rank 0 is '2'" "UPDATE meta SET value = '2' WHERE key = 'rank';"
case_sql bytes-negative "spans row 4: bytes -100 out of range 0.." "UPDATE spans SET bytes = -100 WHERE rowid = 4;"
case_sql names-of-rank-3 "a names row: rank 3 out of range 0..0" \
    "INSERT INTO names VALUES (3, 99, 'elsewhere');"

# Item 6: what report refused and the view believed.
case_dup duplicate-rank "rank-00001.db: its rank 0 is in another shard of this run too"
case_sql renamed-kind "kind 1 is 'FWD', not 'F'" "UPDATE kinds SET name = 'FWD' WHERE id = 1;"
case_dup text-rank "rank-00001.db: truncated or corrupted (meta row 'backend': rank is text" \
    "UPDATE meta SET rank = 'one';"

# A header whose schema format number (byte 44..47) SQLite does not know: damage, exit 2 (was 1).
rm -rf "$T/header-format"
cp -r "$T/good" "$T/header-format"
printf '\005' | dd of="$T/header-format/rank-00000.db" bs=1 seek=47 conv=notrunc 2>/dev/null
check header-format "truncated or corrupted (unsupported file format)" "$T/header-format"

# Values at the schema's bounds load, and every reader holds them (UBSan found overflows in the
# view at 2^62 and in the report's sum of dropped spans, which gave -4).
# case_ok NAME 'TEXT IN THE REPORT' SQL: every reader exits 0, no sanitizer report.
case_ok() {
    rm -rf "${T:?}/$1"
    cp -r "$T/good" "$T/$1"
    sqlite3 "$T/$1/rank-00000.db" "$3" || { fail "$1: sqlite3 failed"; return; }
    for cmd in "report" "report --json" "view --once"; do
        # shellcheck disable=SC2086 # cmd is words
        expect_exit 0 $cmd "$T/$1" || continue
        grep -q 'runtime error\|Sanitizer' "$T/err" && fail "$1: ppscope $cmd: $(head -c 600 "$T/err")"
    done
    run_pps report "$T/$1"
    grep -qF -- "$2" "$T/out" || fail "$1: the report lacks '$2': $(cat "$T/out")"
    expect_exit 0 merge -q "$T/$1" -o "$T/$1.merged.db" &&
        expect_exit 0 report "$T/$1.merged.db"
}
case_ok dropped-sum "dropped   9223372036854775807 spans" \
    "INSERT INTO metrics VALUES (0, 0, -1, NULL, NULL, -1, -1, 9223372036854775806);
     INSERT INTO metrics VALUES (0, 1, -1, NULL, NULL, -1, -1, 9223372036854775806);"
# the view's header says it too
expect_exit 0 view --once --size 200x30 "$T/dropped-sum"
head -n 1 "$T/out" | grep -qF "[DROPPED 9223372036854775807]" ||
    fail "dropped-sum: the view's header: $(head -n 1 "$T/out")"
# No spans at all (UBSan: a copy of a stage's empty array from NULL in the inference)
case_ok no-spans "status" "DELETE FROM spans;"
# No metadata at all (the fuzzer: a sort of the run's empty meta array from NULL, UBSan)
case_ok no-meta "status    INCOMPLETE" "DELETE FROM meta;"
case_ok times-2-62 "status" \
    "UPDATE spans SET start_ns = -4611686018427387903 WHERE rowid = 1;
     UPDATE spans SET end_ns = 4611686018427387903 WHERE rowid = (SELECT max(rowid) FROM spans);
     UPDATE meta SET value = '9223372036854775806' WHERE key = 'span_max_ns';"

cli_finish
