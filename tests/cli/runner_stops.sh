#!/bin/sh
# runner_stops.sh - regression: a failed CHECK stops its case (tests/test.h), so a case never
# reads what its failed precondition did not write; the runner goes on with the next case and
# fails the binary; a skip from a helper skips that case alone; a binary whose every case it was
# asked for skipped exits 77.
#
# usage: runner_stops.sh PATH/TO/runner_selftest
set -u
. "$(dirname "$0")/lib.sh"
bin=${1:?usage: runner_stops.sh PATH/TO/runner_selftest}
cli_tmp runner
out=$T/out

"$bin" >"$out" 2>&1
rc=$?
[ "$rc" -eq 1 ] && ok || fail "exit $rc, expected 1: $(cat "$out")"
grep -q "REACHED" "$out" && fail "a case went on after its check failed: $(cat "$out")"
for c in test_fails_in_the_case test_fails_in_a_helper; do
    grep -q "^FAIL $c\$" "$out" && ok || fail "$c is not reported failed: $(cat "$out")"
done
grep -q "^SKIP test_skips_in_a_helper\$" "$out" && ok || fail "the helper's skip: $(cat "$out")"
grep -q "^ok   test_passes\$" "$out" && ok ||
    fail "the case after the failures did not pass: $(cat "$out")"
grep -q "^1 passed, 2 failed, 1 skipped\$" "$out" && ok || fail "summary: $(cat "$out")"

"$bin" test_skips_in_a_helper >"$out" 2>&1
rc=$?
[ "$rc" -eq 77 ] && ok || fail "only skipped cases: exit $rc, expected 77: $(cat "$out")"

cli_finish
