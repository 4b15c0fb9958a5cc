#!/bin/sh
# runner_stops.sh - regression: a failed CHECK stops its case (tests/test.h), so a case never
# reads what its failed precondition did not write; the runner goes on with the next case and
# fails the binary; a skip from a helper skips that case alone; a binary whose every case it was
# asked for skipped exits 77.
#
# usage: runner_stops.sh PATH/TO/runner_selftest
set -u
bin=${1:?usage: runner_stops.sh PATH/TO/runner_selftest}
failed=0
out=$(mktemp "${TMPDIR:-/tmp}/pps-runner-XXXXXX") || exit 1
trap 'rm -f "$out"' EXIT INT TERM

fail() {
    echo "FAIL: $*" >&2
    failed=$((failed + 1))
}

"$bin" >"$out" 2>&1
rc=$?
[ "$rc" -eq 1 ] || fail "exit $rc, expected 1: $(cat "$out")"
grep -q "REACHED" "$out" && fail "a case went on after its check failed: $(cat "$out")"
for c in test_fails_in_the_case test_fails_in_a_helper; do
    grep -q "^FAIL $c\$" "$out" || fail "$c is not reported failed: $(cat "$out")"
done
grep -q "^SKIP test_skips_in_a_helper\$" "$out" || fail "the helper's skip: $(cat "$out")"
grep -q "^ok   test_passes\$" "$out" || fail "the case after the failures did not pass: $(cat "$out")"
grep -q "^1 passed, 2 failed, 1 skipped\$" "$out" || fail "summary: $(cat "$out")"

"$bin" test_skips_in_a_helper >"$out" 2>&1
rc=$?
[ "$rc" -eq 77 ] || fail "only skipped cases: exit $rc, expected 77: $(cat "$out")"

echo "$failed failed"
[ "$failed" -eq 0 ]
