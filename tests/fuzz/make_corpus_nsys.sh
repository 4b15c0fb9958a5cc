#!/bin/sh
# make_corpus_nsys.sh - the seeds of fuzz_import_nsys (tests/fuzz/corpus/nsys): small exports of
# nsys's layouts, written with sqlite3 in 512-byte pages so that a mutation lands in a structure
# that matters (the real fixtures are 100 KB of mostly empty tables). Run it to remake them.
set -eu
. "$(dirname "$0")/../cli/nsys_tables.sh"
out=$(cd "$(dirname "$0")" && pwd)/corpus/nsys
mkdir -p "$out"
g0=$(((1 << 48) | (100 << 24)))
g1=$(((1 << 48) | (200 << 24)))

seed() {
    rm -f "$out/$1.sqlite"
    { echo "PRAGMA page_size = 512;"; cat; } | sqlite3 "$out/$1.sqlite"
}

# nsys 2022: text inline, ppscope's names, a mark, a range never ended, thread names.
seed nvtx-inline <<SQL
CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE EXPORT_META_DATA (name TEXT NOT NULL, value TEXT);
CREATE TABLE TARGET_INFO_SESSION_START_TIME (utcEpochNs INTEGER, utcTime TEXT, localTime TEXT);
$NSYS_NVTX_EVENTS
INSERT INTO EXPORT_META_DATA VALUES ('EXPORT_PRODUCT_VERSION', '2022.4.2.1');
INSERT INTO TARGET_INFO_SESSION_START_TIME VALUES (1796124532636836702, '', '');
INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, uint64Value) VALUES
  (10, NULL, 39, 'MPI Rank 0', $((g0 | 100)), NULL),
  (20, 900, 59, 'pps:iter=0', $((g0 | 100)), NULL),
  (30, 60, 59, 'pps:F stage=0 mb=0', $((g0 | 100)), NULL),
  (60, 70, 59, 'pps:SEND stage=0 peer=1 mb=0', $((g0 | 100)), 65536),
  (80, 120, 59, 'pps:BW stage=0 mb=0', $((g0 | 100)), NULL),
  (130, NULL, 34, 'checkpoint', $((g0 | 100)), NULL),
  (140, NULL, 59, 'never ended', $((g0 | 100)), NULL),
  (150, 170, 60, 'data loading', $((g0 | 101)), NULL),
  (30, 70, 59, 'pps:F stage=1 mb=0', $((g1 | 200)), NULL);
SQL

# Registered strings through textId, a domain, PyTorch's labels and steps.
seed nvtx-textid <<SQL
CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE EXPORT_META_DATA (name TEXT NOT NULL, value TEXT);
$NSYS_NVTX_EVENTS
INSERT INTO StringIds VALUES (1, 'ProfilerStep#0'), (2, 'PP:0F0'), (3, 'PP:0I0'), (4, 'PP:0W0'),
  (5, 'PP:1RECV_F0');
INSERT INTO NVTX_EVENTS (start, end, eventType, text, textId, globalTid, domainId) VALUES
  (5, NULL, 75, 'ppscope', NULL, $((g0 | 100)), 1),
  (10, 1000, 59, NULL, 1, $((g0 | 100)), 1),
  (20, 100, 59, NULL, 2, $((g0 | 100)), 1),
  (110, 200, 59, NULL, 3, $((g0 | 100)), 1),
  (210, 300, 59, NULL, 4, $((g0 | 100)), 1),
  (15, 90, 59, NULL, 5, $((g1 | 200)), 1);
SQL

# nsys 2024: META_DATA_EXPORT, CUDA kernels, copies and memsets launched inside ops.
seed cuda-2024 <<SQL
CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE META_DATA_EXPORT (name TEXT NOT NULL, value TEXT);
$NSYS_NVTX_EVENTS
$NSYS_CUPTI_RUNTIME
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL,
  deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, greenContextId INTEGER,
  streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER,
  demangledName INTEGER NOT NULL, shortName INTEGER NOT NULL, mangledName INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER NOT NULL, end INTEGER NOT NULL,
  deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, streamId INTEGER NOT NULL,
  correlationId INTEGER, globalPid INTEGER, bytes INTEGER NOT NULL, copyKind INTEGER NOT NULL);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (start INTEGER NOT NULL, end INTEGER NOT NULL,
  deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, streamId INTEGER NOT NULL,
  correlationId INTEGER, globalPid INTEGER, value INTEGER NOT NULL, bytes INTEGER NOT NULL);
INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_PRODUCT_VERSION', '2024.5.1.113');
INSERT INTO StringIds VALUES (1, 'cudaLaunchKernel'), (2, 'gemm'), (3, 'ncclDevKernel_SendRecv');
INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid) VALUES
  (100, 200, 59, 'PP:0F0', $((g0 | 100))), (300, 400, 59, 'PP:0SEND_F0', $((g0 | 100))),
  (100, 200, 59, 'PP:1F0', $((g1 | 200)));
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (110, 120, 0, $((g0 | 100)), 1, 1, 0, NULL),
  (310, 320, 0, $((g0 | 100)), 2, 1, 0, NULL), (130, 140, 0, $((g0 | 100)), 3, 1, 0, NULL),
  (110, 120, 0, $((g1 | 200)), 1, 1, 0, NULL);
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (150, 190, 0, 1, NULL, 7, 1, $g0, 2, 2, NULL),
  (330, 390, 0, 1, NULL, 7, 2, $g0, 3, 3, NULL), (150, 180, 1, 1, NULL, 7, 1, $g1, 2, 2, NULL);
INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (140, 145, 0, 1, 7, 3, $g0, 4096, 1);
INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET VALUES (160, 165, 0, 1, 7, 9, $g0, 0, 512);
SQL
ls -l "$out"
