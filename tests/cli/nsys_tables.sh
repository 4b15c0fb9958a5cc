# nsys_tables.sh - tables of an Nsight Systems SQLite export that the import test
# (import_nsys.sh) and the fuzz seeds (../fuzz/make_corpus_nsys.sh) both write, with nsys's
# columns; sourced, not run. Each is a CREATE TABLE statement (on a line of its own) for a
# heredoc of SQL:
#
#   $NSYS_NVTX_EVENTS    NVTX_EVENTS: ranges and marks, their text inline or through textId
#   $NSYS_CUPTI_RUNTIME  CUPTI_ACTIVITY_KIND_RUNTIME: CUDA API calls, by correlation id

NSYS_NVTX_EVENTS="
CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL,
  rangeId INTEGER, category INTEGER, color INTEGER, text TEXT, globalTid INTEGER,
  endGlobalTid INTEGER, textId INTEGER, domainId INTEGER, uint64Value INTEGER,
  int64Value INTEGER, doubleValue REAL, uint32Value INTEGER, int32Value INTEGER,
  floatValue REAL, jsonTextId INTEGER, jsonText TEXT);"

NSYS_CUPTI_RUNTIME="
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL,
  eventClass INTEGER NOT NULL, globalTid INTEGER, correlationId INTEGER, nameId INTEGER NOT NULL,
  returnValue INTEGER NOT NULL, callchainId INTEGER);"
