#!/bin/sh
# make_corpus_kineto.sh - the seeds of fuzz_import_kineto (tests/fuzz/corpus/kineto): a slice of
# each real fixture (tests/fixtures/kineto: the top level and about 40 events around its first
# labelled ops, so every rule is near), and small traces of the shapes the real ones lack
# (B/E pairs, kernels with their launches, a bare array, V-shaped stages). Run it to remake them.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=$here/corpus/kineto
mkdir -p "$out"
python3 - "$here/../fixtures/kineto" "$out" <<'PY'
import gzip, json, os, sys
fix, out = sys.argv[1], sys.argv[2]
for name in ("gpipe-rank-1", "1f1b-rank-2", "interleaved1f1b-rank-0", "zbv-rank-3",
             "dualpipev-rank-1"):
    with gzip.open(os.path.join(fix, name + ".json.gz"), "rt") as f:
        d = json.load(f)
    ev = d["traceEvents"]
    first = next(i for i, e in enumerate(ev) if e.get("name", "").startswith(("PP:", "Forward")))
    d["traceEvents"] = ev[max(0, first - 10):first + 30] + [e for e in ev if e.get("ph") == "M"][:3]
    with open(os.path.join(out, name + ".json"), "w") as f:
        json.dump(d, f, indent=1)
small = {
    "begin-end": {"traceEvents": [
        {"ph": "B", "name": "ProfilerStep#3", "pid": 1, "tid": 1, "ts": 1},
        {"ph": "B", "name": "PP:0F0", "pid": 1, "tid": 1, "ts": 2},
        {"ph": "E", "pid": 1, "tid": 1, "ts": 3},
        {"ph": "E", "pid": 1, "tid": 1, "ts": 9},
        {"ph": "B", "name": "open", "pid": 1, "tid": 2, "ts": 9}]},
    "gpu": {"distributedInfo": {"rank": 1, "world_size": 2}, "baseTimeNanoseconds": 1000,
            "traceEvents": [
        {"ph": "X", "cat": "user_annotation", "name": "PP:1F0", "pid": 5, "tid": 5, "ts": 10,
         "dur": 20},
        {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 5, "tid": 5,
         "ts": 12, "dur": 1, "args": {"correlation": 9, "External id": 3}},
        {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_SendRecv", "pid": 0, "tid": 7,
         "ts": 40, "dur": 5, "args": {"correlation": 9, "External id": 3}},
        {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD", "pid": 0, "tid": 7, "ts": 46,
         "dur": 1, "args": {"correlation": 10, "bytes": 64}},
        {"ph": "s", "id": 9, "pid": 5, "tid": 5, "ts": 12, "cat": "ac2g", "name": "ac2g"},
        {"ph": "M", "name": "thread_name", "pid": 5, "tid": 5, "args": {"name": "main"}}]},
    "bare": [{"ph": "X", "name": "Forward 0", "pid": "Spans", "tid": "x", "ts": 1.5,
              "dur": 0.25}],
    "vshape": {"distributedInfo": {"rank": 0, "world_size": 2}, "traceEvents": [
        {"ph": "X", "name": "PP:0F0", "pid": 1, "tid": 1, "ts": 1, "dur": 1},
        {"ph": "X", "name": "PP:3F0", "pid": 1, "tid": 1, "ts": 3, "dur": 1},
        {"ph": "X", "name": "PP:3RECV_B0", "pid": 1, "tid": 1, "ts": 5, "dur": 1},
        {"ph": "X", "name": "gloo:recv", "pid": 1, "tid": 1, "ts": 5.5, "dur": 4},
        {"ph": "X", "name": "PP:3I0", "pid": 1, "tid": 1, "ts": 7, "dur": 5}]},
}
for name, d in small.items():
    with open(os.path.join(out, name + ".json"), "w") as f:
        json.dump(d, f)
PY
ls -l "$out"
