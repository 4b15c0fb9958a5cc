#!/bin/sh
# The main job: a real pipeline. Train the byte-level model with 1F1B, ZB-H1 and ZB-H2 in turn,
# one stage per core (2 to 4 stages, threads of this process, real math on the cpu backend),
# trace each into a run, compare them, then report one of them stage by stage.
set -eu
ppscope=${1:-build/ppscope}
out=${PPS_DEMO_DIR:-out/demo}
cores=$(nproc 2>/dev/null || echo 2)
p=$((cores < 2 ? 2 : cores > 4 ? 4 : cores))
rm -rf "$out"
"$ppscope" run --schedule 1f1b,zb-h1,zb-h2 --backend cpu -p "$p" -m 8 --iters 30 --out "$out"
echo
echo "== ppscope report $out/zb-h1 (read back from its SQLite shards) =="
"$ppscope" report "$out/zb-h1"
