#!/bin/sh
# test_list_missing.sh - regression: tests/CMakeLists.txt included its test lists with OPTIONAL,
# so a renamed list dropped its tests without a word. In a scratch copy of the source tree with
# tests/schedule.cmake renamed, the configure must fail and name the missing list.
#
# usage: test_list_missing.sh SOURCE_DIR   (CMAKE, CC in the environment: what this build uses)
set -u
src=${1:?usage: test_list_missing.sh SOURCE_DIR}
cmake=${CMAKE:-cmake}
T=$(mktemp -d "${TMPDIR:-/tmp}/pps-testlist-XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT INT TERM

# The tree without its build directories, runs and git objects.
mkdir "$T/src"
for e in "$src"/* "$src"/.[!.]*; do
    case ${e##*/} in
    build* | out | .git | Testing | '.[!.]*') continue ;;
    esac
    cp -R "$e" "$T/src/" || exit 1
done
if [ ! -f "$T/src/tests/schedule.cmake" ]; then
    echo "FAIL: no tests/schedule.cmake to rename" >&2
    exit 1
fi
mv "$T/src/tests/schedule.cmake" "$T/src/tests/schedule_renamed.cmake"

# Optional dependencies off: only the test lists matter here, and the configure is quicker.
"$cmake" -S "$T/src" -B "$T/build" -DPPS_WITH_CUDA=OFF -DPPS_WITH_MPI=OFF -DPPS_WITH_BLAS=OFF \
    -DPPS_WITH_CURSES=OFF >"$T/log" 2>&1
rc=$?
if [ "$rc" -eq 0 ]; then
    echo "FAIL: the configure succeeded without tests/schedule.cmake (its tests dropped)" >&2
    exit 1
fi
if ! grep -q 'schedule.cmake' "$T/log"; then
    echo "FAIL: the configure failed (exit $rc) without naming schedule.cmake:" >&2
    cat "$T/log" >&2
    exit 1
fi
echo "ok: the configure fails and names the missing list:"
grep -m 2 'schedule.cmake' "$T/log"
