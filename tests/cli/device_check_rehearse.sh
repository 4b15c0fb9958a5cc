#!/bin/sh
# device_check_rehearse.sh - tests/gpu/device-check.sh --rehearse (issue 10): the whole script on
# the cpu backend with a small model, on this build (--no-build), so that its own logic is checked
# before a lent GPU's minutes are spent on it: every step passes, the GPU's own steps are said to
# be skipped, OUT gets exactly the three files the device tool brings back (summary.txt,
# summary.json, device-check.tar.gz), the figures are there and agree with the reports they come
# from, and the archive holds each report and each merged run. Bad options exit 2.
#
# usage: device_check_rehearse.sh SOURCE_DIR BUILD_DIR
set -u

src=$1 build=$2
T=$(mktemp -d "${TMPDIR:-/tmp}/pps-device-rehearse-XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT INT TERM
failed=0
fail() {
    echo "FAIL: $*"
    failed=1
}

(cd "$T" && OUT="$T/out" WORK="$T/work" sh "$src/tests/gpu/device-check.sh" --rehearse \
    --no-build "$build") >"$T/log" 2>&1
rc=$?
[ "$rc" -eq 0 ] || fail "--rehearse exited $rc: $(cat "$T/log")"
[ "$(ls "$T/out" 2>/dev/null | tr '\n' ' ')" = "device-check.tar.gz summary.json summary.txt " ] ||
    fail "OUT holds $(ls "$T/out" 2>/dev/null | tr '\n' ' '), not the three files"
for s in check-grads-1f1b run-zb-h1 report-zb-h2 run-interleaved run-1f1b-nocupti merge; do
    grep -q "^ok    $s " "$T/out/summary.txt" || fail "summary.txt: step $s did not pass"
done
for s in gpu-tests nccl run-1f1b-shared; do
    grep -q "^skip  $s: " "$T/out/summary.txt" || fail "summary.txt: $s not said to be skipped"
done
grep -q "FAIL" "$T/out/summary.txt" && fail "summary.txt has a FAIL: $(cat "$T/out/summary.txt")"

# The figures: each run's from its report, the ratios from them.
mkdir "$T/x" && tar xzf "$T/out/device-check.tar.gz" -C "$T/x" || fail "the archive does not unpack"
python3 - "$T/out/summary.json" "$T/x" <<'PY' || failed=1
import json, os, sys
s, x = json.load(open(sys.argv[1])), sys.argv[2]
bad = []
if s["backend"] != "cpu":
    bad.append("backend %r, not cpu" % s["backend"])
for name in ("1f1b", "zb-h1", "zb-h2", "interleaved", "1f1b-nocupti"):
    r = s["runs"].get(name)
    if r is None:
        bad.append("no figures for %s" % name)
        continue
    rep = json.load(open(os.path.join(x, "report-%s.json" % name)))
    for k in ("bubble", "predicted_bubble", "iteration_ns", "dropped"):
        if r[k] != rep[k]:
            bad.append("%s: %s %r, the report says %r" % (name, k, r[k], rep[k]))
    if not (r["iteration_ns"] or 0) > 0:
        bad.append("%s: no iteration time" % name)
    if abs(r["off_prediction_pp"] - 100 * (rep["bubble"] - rep["predicted_bubble"])) > 1e-9:
        bad.append("%s: off the prediction %r pp" % (name, r["off_prediction_pp"]))
    if not os.path.exists(os.path.join(x, "run-%s.db" % name)):
        bad.append("the archive lacks run-%s.db" % name)
it = lambda n: s["runs"][n]["iteration_ns"]
for key, a, b in (("zb_h1_over_1f1b", "zb-h1", "1f1b"), ("zb_h2_over_1f1b", "zb-h2", "1f1b"),
                  ("cupti_overhead", "1f1b", "1f1b-nocupti")):
    if s[key] is None or abs(s[key] - it(a) / it(b)) > 1e-12:
        bad.append("%s %r, not %s / %s" % (key, s[key], a, b))
if s["shared_over_partitioned"] is not None or s["kernels_max_rel_err"] is not None:
    bad.append("figures of steps a rehearsal skips")
for b in bad:
    print("FAIL: summary.json: " + b)
sys.exit(1 if bad else 0)
PY

# Bad options: exit 2 with the usage; --help: exit 0.
sh "$src/tests/gpu/device-check.sh" --bogus >"$T/bad" 2>&1
[ $? -eq 2 ] || fail "--bogus did not exit 2: $(cat "$T/bad")"
sh "$src/tests/gpu/device-check.sh" --help >"$T/help" 2>&1 || fail "--help did not exit 0"
grep -q "usage: tests/gpu/device-check.sh" "$T/help" || fail "--help lacks the usage"
[ "$failed" -eq 0 ] && echo "the rehearsal passed: $(grep -c '^ok ' "$T/out/summary.txt") steps;" \
    "$(tail -2 "$T/out/summary.txt" | head -1)"
exit "$failed"
