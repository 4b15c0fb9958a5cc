#!/bin/sh
# import_nsys.sh - `ppscope import` on Nsight Systems SQLite exports (docs/import.md), end to end:
#   - the real exports in tests/fixtures/nsys (make.sh records them with nsys 2022.4): the spans
#     per stage and kind against what the file says, counted by sqlite3 from its NVTX_EVENTS,
#     and the measured bubble (`ppscope report --json`) against a bubble computed here in SQL
#     from the file itself, for one file of 4 processes, one of 2, and 2 files of one rank each
#     (whose clocks the import aligns by the sessions' start times);
#   - two public real exports (../shared/traces/nsys_sqlite_hpcgroup_pipit: nsys 2022.2 and
#     2024.5) against the figures of their *.ground_truth.json: ranges, kernels and copies,
#     their counts, bytes, busy time and extents;
#   - an export written from the documentation (the 2024 layout, CUDA tables, two processes
#     whose correlation ids collide): kernels, copies and memsets attributed to the op open on
#     the launching thread, NCCL kernels as sends, collectives as kernels, start/end ranges,
#     marks, iterations from ProfilerStep ranges;
#   - every bad input: one line on stderr, exit 2, and no run (nor its temporary) left behind.
# Needs sqlite3 and jq (else skipped, 77).
#
#   import_nsys.sh PPSCOPE FIXTURES_DIR TRACES_DIR
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/nsys_tables.sh"
cli_init import_nsys "$1"
fix=${2:?usage: import_nsys.sh PPSCOPE FIXTURES_DIR TRACES_DIR}
traces=${3:-}
for tool in sqlite3 jq; do
    command -v $tool >/dev/null 2>&1 || { echo "import_nsys: no $tool here, skipped"; exit 77; }
done

# q FILE SQL: one query's rows, '|'-separated.
q() {
    sqlite3 -batch -readonly "$1" "$2"
}

# expect_same WHAT GOT WANT
expect_same() {
    if [ "$2" = "$3" ]; then ok; else fail "$1: got [$2], expected [$3]"; fi
}

# expect_near WHAT GOT WANT TOL
expect_near() {
    if awk -v a="$2" -v b="$3" -v t="$4" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(a != "" && b != "" && d <= t) }'; then
        ok
    else
        fail "$1: got $2, expected $3 (tolerance $4)"
    fi
}

# no_run_left RUN: neither the run nor a temporary beside it.
no_run_left() {
    if [ -e "$1" ]; then fail "$1 was left behind"; else ok; fi
    left=$(find "$(dirname "$1")" -maxdepth 1 -name ".$(basename "$1").import-*" | head -n 1)
    if [ -n "$left" ]; then fail "temporary $left was left behind"; else ok; fi
}

# import_ok RUN FILE...: imports, merges the run into RUN.db for queries.
import_ok() {
    run=$1
    shift
    expect_exit 0 import "$@" -o "$run" || return 1
    if grep -q "^ppscope import: wrote $run: " "$T/out"; then ok; else fail "import said: $(cat "$T/out")"; fi
    expect_exit 0 merge -q "$run" -o "$run.db"
}

# The spans a run holds per stage and kind (not RANGE), as "stage|kind|count" lines.
run_kinds() {
    q "$1.db" "SELECT s.stage, k.name, count(*) FROM spans s JOIN kinds k ON k.id = s.kind
               WHERE k.name NOT IN ('RANGE', 'KERNEL', 'MEMCPY') GROUP BY 1, 2 ORDER BY 1, 2"
}

# The bubble as docs/analysis.md defines it, in SQL, from ops(stage, start, end, it) of the
# compute kinds: per iteration, the window from its ops' first start to their last end; each
# stage's busy time the ops (of any iteration) clipped to the window, which on one stage do not
# overlap; idle over stages x window; the mean over iterations.
bubble_sql() {
    cat <<SQL
WITH $1,
win AS (SELECT it, min(start) AS t0, max("end") AS t1 FROM ops WHERE it >= 0 GROUP BY it),
busy AS (SELECT w.it, o.stage, sum(max(0, min(o."end", w.t1) - max(o.start, w.t0))) AS b
         FROM win w JOIN ops o GROUP BY w.it, o.stage),
bub AS (SELECT w.it, 1.0 - sum(b.b) * 1.0 / ((SELECT count(DISTINCT stage) FROM ops) * (w.t1 - w.t0)) AS x
        FROM win w JOIN busy b ON b.it = w.it GROUP BY w.it)
SELECT printf('%.6f', avg(x)) FROM bub;
SQL
}

# The NVTX push/pop ranges of an export with their text and process: ev(p, start, end, v).
EV="ev AS (SELECT n.globalTid >> 24 AS p, n.start, n.\"end\", coalesce(n.text, s.value) AS v
           FROM NVTX_EVENTS n LEFT JOIN StringIds s ON s.id = n.textId WHERE n.eventType = 59)"

report_bubble() {
    expect_exit 0 report --json "$1" || return 1
    jq -r '.bubble' "$T/out"
}

# ---- fixtures: 4 processes in one file, ppscope's names -------------------------------------
f=$fix/pipe4-pps.sqlite
import_ok "$T/pipe4" "$f"
[ ! -s "$T/err" ] && ok || fail "import wrote on stderr: $(cat "$T/err")"
want=$(q "$f" "WITH $EV SELECT CAST(substr(v, instr(v, 'stage=') + 6) AS INTEGER),
                      substr(v, 5, instr(v, ' ') - 5), count(*)
               FROM ev WHERE v GLOB 'pps:* stage=*' GROUP BY 1, 2 ORDER BY 1, 2")
expect_same "pipe4-pps: spans per stage and kind" "$(run_kinds "$T/pipe4")" "$want"
expect_same "pipe4-pps: ops per stage" "$(printf '%s\n' "$want" | grep -c '|F|12$')" 4
expect_same "pipe4-pps: iteration ranges" \
    "$(q "$T/pipe4.db" "SELECT s.stage, count(*) FROM spans s JOIN names n ON n.rank = s.rank
        AND n.id = s.name_id WHERE n.name GLOB 'pps:iter=*' GROUP BY 1 ORDER BY 1" | tr '\n' ' ')" \
    "0|3 1|3 2|3 3|3 "
expect_same "pipe4-pps: every op in an iteration" \
    "$(q "$T/pipe4.db" "SELECT count(*) FROM spans WHERE kind IN (1, 4, 8) AND iter < 0")" 0
expect_same "pipe4-pps: meta" \
    "$(q "$T/pipe4.db" "SELECT group_concat(key || '=' || value, ' ') FROM meta WHERE rank = 2
        AND key IN ('source', 'world', 'nsys_version', 'nsys_schema', 'host')
        ORDER BY key")" \
    "host=host nsys_schema=3.0.0 nsys_version=2022.4.2.1 source=nsys world=4"
ops="$EV, iters AS (SELECT p, start, \"end\", CAST(substr(v, 10) AS INTEGER) AS it FROM ev
                    WHERE v GLOB 'pps:iter=*'),
     ops AS (SELECT CAST(substr(v, instr(v, 'stage=') + 6) AS INTEGER) AS stage, e.start, e.\"end\",
             (SELECT i.it FROM iters i WHERE i.p = e.p AND i.start <= e.start
              AND e.start < i.\"end\") AS it
             FROM ev e WHERE v GLOB 'pps:F *' OR v GLOB 'pps:BW *' OR v GLOB 'pps:OPT *')"
want=$(q "$f" "$(bubble_sql "$ops")")
got=$(report_bubble "$T/pipe4")
expect_near "pipe4-pps: measured bubble vs the file's" "$got" "$want" 0.000002

# ---- fixtures: 2 processes in one file, PyTorch's labels ------------------------------------
TORCH_KIND="CASE WHEN v GLOB 'PP:[0-9]F[0-9]*' THEN 'F' WHEN v GLOB 'PP:[0-9]I[0-9]*' THEN 'B'
            WHEN v GLOB 'PP:[0-9]W[0-9]*' THEN 'W' WHEN v GLOB 'PP:[0-9]SEND_*' THEN 'SEND'
            WHEN v GLOB 'PP:[0-9]RECV_*' THEN 'RECV' END"
torch_ops() {
    echo "$1, iters AS (SELECT p, start, \"end\", CAST(substr(v, 14) AS INTEGER) AS it FROM ev
                       WHERE v GLOB 'ProfilerStep#*'),
     ops AS (SELECT CAST(substr(v, 4, 1) AS INTEGER) AS stage, e.start, e.\"end\",
             (SELECT i.it FROM iters i WHERE i.p = e.p AND i.start <= e.start
              AND e.start < i.\"end\") AS it
             FROM ev e WHERE $TORCH_KIND IN ('F', 'B', 'W'))"
}
f=$fix/pipe2-torch.sqlite
import_ok "$T/pipe2" "$f"
want=$(q "$f" "WITH $EV SELECT CAST(substr(v, 4, 1) AS INTEGER), $TORCH_KIND, count(*) FROM ev
               WHERE v GLOB 'PP:*' GROUP BY 1, 2 ORDER BY 1, 2")
expect_same "pipe2-torch: spans per stage and kind" "$(run_kinds "$T/pipe2")" "$want"
expect_same "pipe2-torch: sends know their peer" \
    "$(q "$T/pipe2.db" "SELECT group_concat(DISTINCT stage || '>' || peer) FROM spans WHERE kind = 5")" \
    "0>1,1>0"
want=$(q "$f" "$(bubble_sql "$(torch_ops "$EV")")")
got=$(report_bubble "$T/pipe2")
expect_near "pipe2-torch: measured bubble vs the file's" "$got" "$want" 0.000002

# ---- fixtures: one rank per file, two nsys sessions -----------------------------------------
f0=$fix/pipe2-torch-r0.sqlite
f1=$fix/pipe2-torch-r1.sqlite
import_ok "$T/r01" "$f0" "$f1"
expect_same "r0+r1: ranks from their files" \
    "$(q "$T/r01.db" "SELECT group_concat(value, ' ') FROM (SELECT value FROM meta WHERE key = 'file'
        ORDER BY rank)")" "$f0 $f1"
# The second file's clock is the first's plus the difference of their sessions' start times.
u0=$(q "$f0" "SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME")
u1=$(q "$f1" "SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME")
expect_same "r0+r1: rank 1's clock offset" \
    "$(q "$T/r01.db" "SELECT value FROM meta WHERE rank = 1 AND key = 'clock_offset_start_ns'")" \
    "$((u1 - u0))"
want=$(sqlite3 -batch -readonly "$f0" "ATTACH '$f1' AS r1; $(bubble_sql "$(torch_ops \
    "ev AS (SELECT 0 AS p, n.start, n.\"end\", n.text AS v FROM main.NVTX_EVENTS n
            WHERE n.eventType = 59
            UNION ALL SELECT 1, n.start + $((u1 - u0)), n.\"end\" + $((u1 - u0)), n.text
            FROM r1.NVTX_EVENTS n WHERE n.eventType = 59)")")")
got=$(report_bubble "$T/r01")
expect_near "r0+r1: measured bubble vs the files'" "$got" "$want" 0.000002

# ---- fixtures: examples/nvtx_pipeline, 4 processes that do not talk -------------------------
f=$fix/example-pps4.sqlite
import_ok "$T/ex4" "$f"
# Stages of names without one ("pps:W mb=3") are their process's: from its "pps:F stage=N".
want=$(q "$f" "WITH $EV, st AS (SELECT p, min(CAST(substr(v, instr(v, 'stage=') + 6) AS INTEGER)) AS s
                             FROM ev WHERE v GLOB 'pps:F *' GROUP BY p)
               SELECT st.s, upper(substr(v, 5, instr(v, ' ') - 5)), count(*) FROM ev JOIN st USING (p)
               WHERE v GLOB 'pps:[A-Z]* *' GROUP BY 1, 2 ORDER BY 1, 2")
expect_same "example-pps4: spans per stage and kind" "$(run_kinds "$T/ex4")" "$want"
expect_same "example-pps4: bytes of sends from the event's payload" \
    "$(q "$T/ex4.db" "SELECT DISTINCT bytes FROM spans WHERE kind IN (5, 6)")" 65536
expect_same "example-pps4: named ranges per stage" \
    "$(q "$T/ex4.db" "SELECT n.name, count(*) FROM spans s JOIN names n ON n.rank = s.rank
        AND n.id = s.name_id WHERE s.kind = 12 AND s.stage = 1 GROUP BY 1 ORDER BY 1" | tr '\n' ' ')" \
    "checkpoint|1 data loading|3 main|1 pps:iter=0|1 pps:iter=1|1 pps:iter=2|1 "
expect_same "example-pps4: a mark has no length" \
    "$(q "$T/ex4.db" "SELECT DISTINCT s.end_ns - s.start_ns FROM spans s JOIN names n
        ON n.rank = s.rank AND n.id = s.name_id WHERE n.name = 'checkpoint'")" 0
expect_same "example-pps4: thread names" \
    "$(q "$T/ex4.db" "SELECT count(*) FROM meta WHERE key GLOB 'thread_name.*' AND value = 'main'")" 4

# The imports view, report and compare like recorded runs.
expect_exit 0 report "$T/pipe4"
if grep -q "from Nsight Systems" "$T/out"; then ok; else fail "report does not say the source"; fi
expect_exit 0 view --once --size 120x40 --ascii "$T/pipe2" "$T/r01"

# ---- public real exports against their ground truth -----------------------------------------
if [ -n "$traces" ] && [ -f "$traces/saxpy-mpi-cuda_nsys_perlmutter0.sqlite" ]; then
    gunzip -c "$traces/perlmutter-cloverleaf-cuda.sqlite.gz" >"$T/clover.sqlite"
    for name in saxpy-mpi-cuda_nsys_perlmutter0 perlmutter-cloverleaf-cuda; do
        gt=$traces/$name.ground_truth.json
        src=$traces/$name.sqlite
        [ -f "$src" ] || src=$T/clover.sqlite
        import_ok "$T/$name" "$src"
        db=$T/$name.db
        nvtx=$(jq '[(.nvtx_counts_by_eventType // {}) | to_entries[]
                     | select(.key == "59" or .key == "60") | .value] | add // 0' "$gt")
        expect_same "$name: NVTX ranges" "$(q "$db" "SELECT count(*) FROM spans WHERE kind = 12")" "$nvtx"
        expect_same "$name: kernels" \
            "$(q "$db" "SELECT count(*), sum(end_ns - start_ns), min(start_ns), max(end_ns)
                         FROM spans WHERE kind = 10")" \
            "$(jq -r '.kernels_summary | "\(.count)|\(.busy_ns_sum)|\(.first_start)|\(.last_end)"' "$gt")"
        expect_same "$name: copies" \
            "$(q "$db" "SELECT count(*), sum(bytes), sum(end_ns - start_ns), min(start_ns), max(end_ns)
                         FROM spans WHERE kind = 11")" \
            "$(jq -r '.memcpys_summary | "\(.count)|\([.by_copyKind[].bytes] | add)|\(.busy_ns_sum)|\(.first_start)|\(.last_end)"' "$gt")"
        expect_same "$name: kernel names" \
            "$(q "$db" "SELECT n.name, count(*) FROM spans s JOIN names n ON n.rank = s.rank
                         AND n.id = s.name_id WHERE s.kind = 10 GROUP BY 1 ORDER BY 1" | tr '\n' ' ')" \
            "$(jq -r '.kernels_summary.by_shortName | to_entries | sort_by(.key)[]
                      | "\(.key)|\(.value)"' "$gt" | tr '\n' ' ')"
        expect_same "$name: the version" \
            "$(q "$db" "SELECT value FROM meta WHERE key = 'nsys_version'")" "$(jq -r .nsys_version "$gt")"
        expect_same "$name: the pid" \
            "$(q "$db" "SELECT value FROM meta WHERE key = 'pid'")" \
            "$(jq -r '.processes_with_events[0].pid' "$gt")"
        expect_exit 0 report "$T/$name"
    done
else
    echo "import_nsys: no $traces/saxpy-mpi-cuda_nsys_perlmutter0.sqlite: real exports not checked"
fi

# ---- an export written from the documentation: nsys 2024's layout with CUDA -----------------
# Two processes (pids 100 and 200 on machine 1) whose correlation ids collide; thread tid 100 and
# 200 run the ops. globalTid = machine << 48 | pid << 24 | tid.
g0=$(((1 << 48) | (100 << 24)))
g1=$(((1 << 48) | (200 << 24)))
t0=$((g0 | 100))
t1=$((g1 | 200))
doc=$T/doc2024.sqlite
sqlite3 "$doc" <<SQL
CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE META_DATA_EXPORT (name TEXT NOT NULL, value TEXT);
CREATE TABLE TARGET_INFO_SESSION_START_TIME (utcEpochNs INTEGER, utcTime TEXT, localTime TEXT);
$NSYS_NVTX_EVENTS
$NSYS_CUPTI_RUNTIME
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL,
  deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, greenContextId INTEGER,
  streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER,
  demangledName INTEGER NOT NULL, shortName INTEGER NOT NULL, mangledName INTEGER,
  launchType INTEGER, cacheConfig INTEGER, registersPerThread INTEGER NOT NULL,
  gridX INTEGER NOT NULL, gridY INTEGER NOT NULL, gridZ INTEGER NOT NULL, blockX INTEGER NOT NULL,
  blockY INTEGER NOT NULL, blockZ INTEGER NOT NULL, staticSharedMemory INTEGER NOT NULL,
  dynamicSharedMemory INTEGER NOT NULL, localMemoryPerThread INTEGER NOT NULL,
  localMemoryTotal INTEGER NOT NULL, gridId INTEGER NOT NULL, sharedMemoryExecuted INTEGER,
  graphNodeId INTEGER, sharedMemoryLimitConfig INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER NOT NULL, end INTEGER NOT NULL,
  deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, greenContextId INTEGER,
  streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER, bytes INTEGER NOT NULL,
  copyKind INTEGER NOT NULL, deprecatedSrcId INTEGER, srcKind INTEGER, dstKind INTEGER,
  srcDeviceId INTEGER, srcContextId INTEGER, dstDeviceId INTEGER, dstContextId INTEGER,
  migrationCause INTEGER, graphNodeId INTEGER, virtualAddress INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (start INTEGER NOT NULL, end INTEGER NOT NULL,
  deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, greenContextId INTEGER,
  streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER, value INTEGER NOT NULL,
  bytes INTEGER NOT NULL, graphNodeId INTEGER, memKind INTEGER);
INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_PRODUCT_VERSION', '2024.5.1.113'),
  ('EXPORT_SCHEMA_VERSION', '3.13.2');
INSERT INTO TARGET_INFO_SESSION_START_TIME VALUES (1726190868000000000, '', '');
INSERT INTO StringIds VALUES (1, 'cudaLaunchKernel'), (2, 'gemm'), (3, 'ncclDevKernel_SendRecv'),
  (4, 'ncclKernel_AllReduce_RING_LL_Sum_float'), (5, 'cudaMemcpyAsync'), (6, 'PP:0F0'),
  (7, 'void gemm<float>(float*)');
-- Process 100, stage 0: two steps; F0 and I0 and a send in step 0, F0 in step 1.
INSERT INTO NVTX_EVENTS (start, end, eventType, text, textId, globalTid, endGlobalTid, rangeId) VALUES
  (1000, 10000, 59, 'ProfilerStep#0', NULL, $t0, NULL, NULL),
  (1100, 2000, 59, NULL, 6, $t0, NULL, NULL),
  (3100, 3500, 59, 'PP:0SEND_F0', NULL, $t0, NULL, NULL),
  (4000, 5000, 59, 'PP:0I0', NULL, $t0, NULL, NULL),
  (5500, 6000, 60, 'data loading', NULL, $t0, $((g0 | 101)), 7),
  (6500, NULL, 34, 'checkpoint', NULL, $t0, NULL, NULL),
  (11000, 20000, 59, 'ProfilerStep#1', NULL, $t0, NULL, NULL),
  (11100, 12000, 59, 'PP:0F0', NULL, $t0, NULL, NULL),
  (1000, 10000, 59, 'ProfilerStep#0', NULL, $t1, NULL, NULL),
  (1400, 2500, 59, 'PP:1F0', NULL, $t1, NULL, NULL);
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES
  (1200, 1250, 0, $t0, 1, 1, 0, NULL), (3200, 3250, 0, $t0, 2, 1, 0, NULL),
  (3600, 3650, 0, $t0, 3, 1, 0, NULL), (4100, 4150, 0, $t0, 4, 5, 0, NULL),
  (11200, 11250, 0, $t0, 5, 5, 0, NULL), (1500, 1550, 0, $t1, 1, 1, 0, NULL);
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, contextId, streamId, correlationId,
  globalPid, demangledName, shortName, registersPerThread, gridX, gridY, gridZ, blockX, blockY,
  blockZ, staticSharedMemory, dynamicSharedMemory, localMemoryPerThread, localMemoryTotal, gridId)
  VALUES (1300, 1900, 0, 1, 7, 1, $g0, 7, 2, 32, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1),
  (3300, 3900, 0, 1, 8, 2, $g0, 3, 3, 32, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 2),
  (3700, 4800, 0, 1, 8, 3, $g0, 4, 4, 32, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 3),
  (1600, 2400, 1, 1, 7, 1, $g1, 7, 2, 32, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 4),
  (12500, 12600, 0, 1, 7, 99, $g0, 7, 2, 32, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 5);
INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, contextId, streamId, correlationId,
  globalPid, bytes, copyKind) VALUES (4200, 4300, 0, 1, 7, 4, $g0, 4096, 1);
INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET (start, end, deviceId, contextId, streamId, correlationId,
  globalPid, value, bytes) VALUES (11300, 11400, 0, 1, 7, 5, $g0, 0, 1024);
SQL
import_ok "$T/doc" "$doc"
# rank|kind|name|stage|mb|iter|peer|bytes|corr per device span, by rank and start.
expect_same "doc2024: device spans attributed to their launching op" \
    "$(q "$T/doc.db" "SELECT s.rank, k.name, n.name, s.stage, s.mb, s.iter, s.peer, s.bytes, s.corr
        FROM spans s JOIN kinds k ON k.id = s.kind JOIN names n ON n.rank = s.rank AND n.id = s.name_id
        WHERE s.kind IN (5, 10, 11) AND n.name NOT GLOB 'PP:*' ORDER BY s.rank, s.start_ns" | tr '\n' ' ')" \
    "0|KERNEL|gemm|0|0|0|-1|0|1 0|SEND|ncclDevKernel_SendRecv|0|0|0|1|0|0 0|KERNEL|ncclKernel_AllReduce_RING_LL_Sum_float|0|-1|0|-1|0|3 0|MEMCPY|memcpy HtoD|0|0|0|-1|4096|4 0|MEMCPY|memset|0|0|1|-1|1024|5 0|KERNEL|gemm|0|-1|1|-1|0|99 1|KERNEL|gemm|1|0|0|-1|0|1 "
expect_same "doc2024: host spans" \
    "$(q "$T/doc.db" "SELECT s.rank, k.name, coalesce(n.name, ''), s.stage, s.mb, s.iter, s.end_ns - s.start_ns
        FROM spans s JOIN kinds k ON k.id = s.kind LEFT JOIN names n ON n.rank = s.rank AND n.id = s.name_id
        WHERE s.kind NOT IN (10, 11) AND NOT (s.kind = 5 AND n.name IS NOT NULL)
        ORDER BY s.rank, s.start_ns, s.kind" | tr '\n' ' ')" \
    "0|RANGE|ProfilerStep#0|0|-1|0|9000 0|F||0|0|0|900 0|SEND||0|0|0|400 0|B||0|0|0|1000 0|RANGE|data loading|0|-1|0|500 0|RANGE|checkpoint|0|-1|0|0 0|RANGE|ProfilerStep#1|0|-1|1|9000 0|F||0|0|1|900 1|RANGE|ProfilerStep#0|1|-1|0|9000 1|F||1|0|0|1100 "
expect_same "doc2024: meta" \
    "$(q "$T/doc.db" "SELECT group_concat(rank || ':' || key || '=' || value, ' ') FROM (SELECT * FROM meta
        WHERE key IN ('pid', 'nsys_version', 'world', 'host') ORDER BY rank, key)")" \
    "0:host=unknown 0:nsys_version=2024.5.1.113 0:pid=100 0:world=2 1:host=unknown 1:nsys_version=2024.5.1.113 1:pid=200 1:world=2"

# An older layout: text inline, no textId, no CUDA, EXPORT_META_DATA.
old=$T/old.sqlite
sqlite3 "$old" "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT);
  CREATE TABLE EXPORT_META_DATA (name TEXT, value TEXT);
  CREATE TABLE NVTX_EVENTS (start INTEGER, end INTEGER, eventType INTEGER, text TEXT, globalTid INTEGER);
  INSERT INTO NVTX_EVENTS VALUES (10, 20, 59, 'pps:F stage=3 mb=0', $t0), (30, 50, 59, 'work', $t0);"
import_ok "$T/old" "$old"
expect_same "old layout: spans" \
    "$(q "$T/old.db" "SELECT group_concat(kind || '@' || stage, ' ') FROM (SELECT * FROM spans ORDER BY start_ns)")" \
    "1@3 12@3"

# ---- a large export: the tables read in halves at once ---------------------------------------
# 300000 ops of 2 processes, a kernel launched inside each, an iteration mark every 1000 ops;
# half the names through textId. Large enough for the importer to read NVTX_EVENTS and the
# kernels in two halves on two threads (on a machine with two cores); the result must be the
# same as one pass: every kernel on its op's stage, microbatch and iteration.
n=300000
big=$T/big.sqlite
sqlite3 "$big" <<SQL
CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE EXPORT_META_DATA (name TEXT NOT NULL, value TEXT);
$(sqlite3 "$doc" ".schema NVTX_EVENTS"; sqlite3 "$doc" ".schema CUPTI_ACTIVITY_KIND_RUNTIME";
  sqlite3 "$doc" ".schema CUPTI_ACTIVITY_KIND_KERNEL")
WITH RECURSIVE k(x) AS (SELECT 0 UNION ALL SELECT x + 1 FROM k WHERE x < 127)
INSERT INTO StringIds SELECT 1000 + x, 'pps:F stage=' || (x / 64) || ' mb=' || (x % 64) FROM k;
INSERT INTO StringIds VALUES (1, 'cudaLaunchKernel'), (2, 'gemm');
WITH RECURSIVE k(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM k WHERE i < $n - 1),
  o AS (SELECT i, i % 2 AS p, (i / 2) % 64 AS mb, i * 1000 AS t FROM k)
INSERT INTO NVTX_EVENTS (start, end, eventType, text, textId, globalTid)
  SELECT t, t + 900, 59, CASE WHEN mb % 2 THEN NULL ELSE 'pps:F stage=' || p || ' mb=' || mb END,
         CASE WHEN mb % 2 THEN 1000 + p * 64 + mb END, $g0 + p * (1 << 24) + 7 FROM o
  UNION ALL SELECT t - 1, NULL, 34, 'pps:iter=' || (i / 1000), NULL, $g0 + p * (1 << 24) + 7
  FROM o WHERE i % 1000 < 2 ORDER BY 1;
WITH RECURSIVE k(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM k WHERE i < $n - 1)
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME SELECT i * 1000 + 10, i * 1000 + 15, 0,
  $g0 + (i % 2) * (1 << 24) + 7, i + 1, 1, 0, NULL FROM k;
WITH RECURSIVE k(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM k WHERE i < $n - 1)
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, contextId, streamId, correlationId,
  globalPid, demangledName, shortName, registersPerThread, gridX, gridY, gridZ, blockX, blockY,
  blockZ, staticSharedMemory, dynamicSharedMemory, localMemoryPerThread, localMemoryTotal, gridId)
  SELECT i * 1000 + 20, i * 1000 + 800, 0, 1, 7, i + 1, $g0 + (i % 2) * (1 << 24), 2, 2, 32, 1,
  1, 1, 1, 1, 1, 0, 0, 0, 0, i FROM k;
SQL
import_ok "$T/big" "$big"
expect_same "large: spans per stage and kind" \
    "$(q "$T/big.db" "SELECT stage, kind, count(*) FROM spans GROUP BY 1, 2 ORDER BY 1, 2" | tr '\n' ' ')" \
    "0|1|$((n / 2)) 0|10|$((n / 2)) 0|12|$((n / 1000)) 1|1|$((n / 2)) 1|10|$((n / 2)) 1|12|$((n / 1000)) "
expect_same "large: ops and kernels where they belong" \
    "$(q "$T/big.db" "SELECT count(*) FROM spans WHERE kind IN (1, 10) AND (
        mb != ((start_ns / 1000) / 2) % 64 OR iter != (start_ns / 1000) / 1000
        OR stage != (start_ns / 1000) % 2)")" 0
expect_same "large: every kernel launched" \
    "$(q "$T/big.db" "SELECT count(DISTINCT corr) FROM spans WHERE kind = 10")" "$n"

# ---- bad input: one line, exit 2, nothing left ----------------------------------------------
# bad NAME WORDS FILE...: the import fails with WORDS in its one line and leaves no run.
bad() {
    name=$1
    words=$2
    shift 2
    expect_exit 2 import "$@" -o "$T/bad-$name" && stderr_has "$words"
    no_run_left "$T/bad-$name"
}
: >"$T/empty"
bad empty "an empty file" "$T/empty"
echo "hello, world" >"$T/text"
bad text "neither an Nsight Systems SQLite export nor" "$T/text"
sqlite3 "$T/other.sqlite" "CREATE TABLE t (a); INSERT INTO t VALUES (1);"
bad other-sqlite "without Nsight Systems' export tables" "$T/other.sqlite"
bad ppscope-trace "a ppscope trace already" "$T/pipe4.db"
head -c 60000 "$fix/pipe4-pps.sqlite" >"$T/cut.sqlite"
bad truncated "truncated" "$T/cut.sqlite"
bad directory "a directory" "$T"
bad missing "no such file" "$T/nowhere.sqlite"
echo '{"traceEvents": []}' >"$T/k.json"
bad mixed "import one format at a time" "$fix/pipe2-torch.sqlite" "$T/k.json"
# mutate NAME SQL: a copy of a real export, changed.
mutate() {
    cp "$fix/pipe2-torch.sqlite" "$T/$1.sqlite"
    sqlite3 "$T/$1.sqlite" "$2"
}
mutate no-column "ALTER TABLE NVTX_EVENTS DROP COLUMN eventType;"
bad no-column "NVTX_EVENTS has no column 'eventType': an export layout this ppscope does not know" \
    "$T/no-column.sqlite"
mutate no-text "ALTER TABLE NVTX_EVENTS DROP COLUMN text; ALTER TABLE NVTX_EVENTS DROP COLUMN textId;"
bad no-text "has neither 'text' nor 'textId'" "$T/no-text.sqlite"
mutate text-start "UPDATE NVTX_EVENTS SET start = 'soon' WHERE rowid = 10;"
bad text-start "NVTX_EVENTS row" "$T/text-start.sqlite"
stderr_has "start is not an integer"
mutate text-tid "UPDATE NVTX_EVENTS SET globalTid = 'main' WHERE rowid = 12;"
bad text-tid "globalTid is not an integer" "$T/text-tid.sqlite"
mutate real-end "UPDATE NVTX_EVENTS SET \"end\" = 1.5 WHERE rowid = 12;"
bad real-end "end is not an integer" "$T/real-end.sqlite"
mutate huge-time "UPDATE NVTX_EVENTS SET \"end\" = 9223372036854775807 WHERE rowid = 12;"
bad huge-time "out of range" "$T/huge-time.sqlite"
mutate backwards "UPDATE NVTX_EVENTS SET \"end\" = start - 1 WHERE rowid = 12;"
bad backwards "ends before it starts" "$T/backwards.sqlite"
cp "$fix/pipe4-pps.sqlite" "$T/huge-id.sqlite"
sqlite3 "$T/huge-id.sqlite" "UPDATE NVTX_EVENTS SET textId = 9223372036854775807 WHERE textId IS NOT NULL AND rowid = (SELECT max(rowid) FROM NVTX_EVENTS WHERE textId IS NOT NULL);"
bad huge-id "is not in StringIds" "$T/huge-id.sqlite"
cp "$doc" "$T/huge-name.sqlite"
sqlite3 "$T/huge-name.sqlite" "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET shortName = -9223372036854775808 WHERE rowid = 2;"
bad huge-name "name id -9223372036854775808 is not in StringIds" "$T/huge-name.sqlite"
cp "$doc" "$T/text-corr.sqlite"
sqlite3 "$T/text-corr.sqlite" "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET correlationId = x'00ff' WHERE rowid = 1;"
bad text-corr "correlationId is not an integer" "$T/text-corr.sqlite"
mutate view "ALTER TABLE NVTX_EVENTS RENAME TO n; CREATE VIEW NVTX_EVENTS AS SELECT * FROM n;"
bad view "NVTX_EVENTS is a view, not a plain table" "$T/view.sqlite"
mutate nothing "DROP TABLE NVTX_EVENTS;"
bad nothing "no NVTX or CUDA tables" "$T/nothing.sqlite"
mutate empty-nvtx "DELETE FROM NVTX_EVENTS;"
bad empty-nvtx "nothing to import" "$T/empty-nvtx.sqlite"
# A damaged page, NVTX_EVENTS' first: SQLite finds it, never a crash.
cp "$fix/pipe2-torch.sqlite" "$T/garbled.sqlite"
root=$(q "$T/garbled.sqlite" "SELECT rootpage FROM sqlite_master WHERE name = 'NVTX_EVENTS'")
psize=$(q "$T/garbled.sqlite" "PRAGMA page_size")
printf 'garbage garbage garbage garbage garbage garbage garbage garbage' |
    dd of="$T/garbled.sqlite" bs=1 seek=$(((root - 1) * psize)) conv=notrunc 2>/dev/null
bad garbled "garbled.sqlite" "$T/garbled.sqlite"

# The output: never over a run, fine into an empty directory.
mkdir -p "$T/full"
touch "$T/full/x"
expect_exit 2 import "$fix/pipe2-torch.sqlite" -o "$T/full" && stderr_has "already exists and is not empty"
mkdir "$T/emptydir"
expect_exit 0 import -q "$fix/pipe2-torch.sqlite" -o "$T/emptydir"
if [ -f "$T/emptydir/rank-00001.db" ] && [ ! -s "$T/out" ]; then ok; else fail "import -q into an empty directory"; fi
expect_exit 2 import "$fix/pipe2-torch.sqlite"
stderr_has "give -o RUN"
expect_exit 2 import -o "$T/x"
expect_exit 2 import --frobnicate "$fix/pipe2-torch.sqlite" -o "$T/x"
expect_exit 0 import --help
no_run_left "$T/x"

cli_finish
