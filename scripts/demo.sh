#!/bin/sh
# The main job: a real pipeline. Train the byte-level model with 1F1B, ZB-H1 and ZB-H2 in turn,
# one stage per core (2 to 4 stages, threads of this process, real math on the cpu backend),
# trace each into a run, compare them, report one of them stage by stage, and open the viewer on
# ZB-H1 against 1F1B (A/B). Without a terminal the viewer prints one frame as text instead.
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
echo
if [ -t 0 ] && [ -t 1 ]; then
    echo "== ppscope view $out/zb-h1 $out/1f1b (q quits, ? shows the keys) =="
    exec "$ppscope" view "$out/zb-h1" "$out/1f1b"
fi
echo "== ppscope view --once $out/zb-h1 $out/1f1b (no terminal: one frame as text) =="
"$ppscope" view --once --size 120x40 "$out/zb-h1" "$out/1f1b"
