#!/bin/sh
# runner_unknown_case.sh - regression: a unit binary asked for a case it does not have fails,
# naming it, instead of reporting "0 passed" (a renamed case in a ctest line would go unnoticed).
# Real cases named beside the bogus one still run.
#
# usage: runner_unknown_case.sh UNIT_BINARY   (any binary built on tests/test.h)
set -u
. "$(dirname "$0")/lib.sh"
bin=${1:?usage: runner_unknown_case.sh UNIT_BINARY}
cli_tmp runner
out=$T/out

"$bin" no_such_case_xyz >"$out" 2>&1
rc=$?
[ "$rc" -eq 1 ] && ok || fail "unknown case: exit $rc, expected 1: $(cat "$out")"
grep -q '^FAIL no_such_case_xyz: no such case$' "$out" && ok ||
    fail "unknown case not named: $(cat "$out")"

# The first real case, named with a bogus one: it runs and passes, the run still fails.
first=$("$bin" 2>/dev/null | sed -n 's/^ok   *//p' | head -n 1)
[ -n "$first" ] && ok || fail "$bin ran no case that passed"
"$bin" "$first" no_such_case_xyz >"$out" 2>&1
rc=$?
[ "$rc" -eq 1 ] && ok || fail "known + unknown case: exit $rc, expected 1: $(cat "$out")"
grep -q "^ok   $first\$" "$out" && ok ||
    fail "$first did not run beside the unknown case: $(cat "$out")"
grep -q '^1 passed, 1 failed, 0 skipped$' "$out" && ok || fail "summary: $(cat "$out")"

"$bin" "$first" >"$out" 2>&1 && ok || fail "$first alone: exit $?: $(cat "$out")"

cli_finish
