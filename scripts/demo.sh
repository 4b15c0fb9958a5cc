#!/bin/sh
# The main job, for now: simulate 1F1B against ZB-H1 and ZB-H2 on a 4-stage pipeline,
# store each prediction as a run, and report one of them like a measured run.
set -eu
ppscope=${1:-build/ppscope}
out=${PPS_DEMO_DIR:-out/demo}
rm -rf "$out"
"$ppscope" sim --schedule 1f1b,zb-h1,zb-h2 -p 4 -m 8 --tf 1 --tb 1 --tw 1 --trace "$out"
echo
echo "== ppscope report $out/zb-h1 (the prediction, read back from its SQLite trace) =="
"$ppscope" report "$out/zb-h1"
