#!/bin/sh
# device_check_dry.sh - tests/gpu/device-check.sh without a GPU (issue 10): --dry-run lists every
# step it would run (the kernels, each schedule's gradient check and traced run, NCCL) and exits
# 77, building, running and writing nothing.
#
# usage: device_check_dry.sh SOURCE_DIR
set -u

src=$1
T=$(mktemp -d "${TMPDIR:-/tmp}/pps-device-check-XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT INT TERM
failed=0
fail() {
    echo "FAIL: $*"
    failed=1
}

(cd "$T" && OUT="$T/out" sh "$src/tests/gpu/device-check.sh" --dry-run "$T/build") >"$T/plan" 2>&1
rc=$?
[ "$rc" -eq 77 ] || fail "--dry-run exited $rc, not 77: $(cat "$T/plan")"
for s in machine configure build gpu-tests kernels-cuda-verbose check-grads-1f1b run-zb-h1 \
    report-zb-h2 run-interleaved run-1f1b-nocupti run-1f1b-shared compare-partition merge \
    nccl-check-grads; do
    grep -q "^  $s: " "$T/plan" || fail "the plan lacks step $s: $(cat "$T/plan")"
done
grep -q -- "--backend cuda --transport nccl" "$T/plan" || fail "the plan runs no NCCL"
grep -q -- "--no-device-spans" "$T/plan" || fail "the plan measures no CUPTI overhead"
[ -e "$T/build" ] && fail "--dry-run made the build directory"
[ -e "$T/out" ] && fail "--dry-run wrote its output directory"
[ "$failed" -eq 0 ] && echo "the dry run lists $(grep -c '^  [a-z]' "$T/plan") steps and runs none"
exit "$failed"
