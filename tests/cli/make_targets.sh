#!/bin/sh
# make_targets.sh - the Makefile keeps README.md's promises. The tools it calls are replaced by
# fakes that record their calls (cmake, ctest, dpkg-query, apt-get, sudo), with tmux and clang
# reported missing, so nothing is built or installed:
#   - regression: `make` and `make build` ran scripts/install-deps.sh, and so sudo apt-get; a
#     build alone must never run apt-get or sudo, and a failed configure ends with a hint
#     naming `make deps`;
#   - `make check` and `make demo` say which packages they install and why, before apt-get;
#   - `make check` configures with -DPPS_WERROR=ON, a user's `make` and `make demo` do not;
#   - regression: the build printed "Entering directory" for every recursion of CMake's
#     Makefiles (the fake `cmake --build` recurses as they do, with what make passes it);
#   - .ci/run also builds gcc Release and clang, with warnings as errors.
# Then one real configure through `make configure`: the summary of what was found shows, CMake's
# progress lines do not (regression: the configure's output went to /dev/null), and CMake's
# Release flags are -O3.
#
# usage: make_targets.sh SOURCE_DIR
set -u
. "$(dirname "$0")/lib.sh"
src=${1:?usage: make_targets.sh SOURCE_DIR}
cli_tmp make
real_path=$PATH
command -v cmake >/dev/null 2>&1 || { echo "skipped: no cmake" >&2; exit 77; }
command -v make >/dev/null 2>&1 || { echo "skipped: no make" >&2; exit 77; }

mkdir "$T/bin" "$T/rec"
log=$T/calls
# Every fake appends "NAME ARGS" to $log.
cat >"$T/bin/cmake" <<'EOF'
#!/bin/sh
echo "${CC:+CC=$CC }cmake $*" >>"$PPS_FAKE_LOG"
if [ "$1" = "--build" ]; then
    # As CMake's Makefile generator does: GNU make recursing, given what follows "--".
    while [ $# -gt 0 ] && [ "$1" != "--" ]; do shift; done
    [ $# -gt 0 ] && shift
    exec make -f "$PPS_FAKE_REC/Makefile" "$@"
fi
[ -n "${PPS_FAKE_CMAKE_FAIL:-}" ] && { echo "CMake Error: Could NOT find SQLite3" >&2; exit 1; }
while [ $# -gt 0 ]; do
    if [ "$1" = "-B" ]; then
        mkdir -p "$2"
        # What .ci/run reads back: CMake's own Release flags.
        [ -n "${PPS_FAKE_CACHE:-}" ] &&
            echo 'CMAKE_C_FLAGS_RELEASE:STRING=-O3 -DNDEBUG' >"$2/CMakeCache.txt"
    fi
    shift
done
exit 0
EOF
cat >"$T/bin/ctest" <<'EOF'
#!/bin/sh
echo "ctest $*" >>"$PPS_FAKE_LOG"
EOF
cat >"$T/bin/dpkg-query" <<'EOF'
#!/bin/sh
for last; do :; done
[ "$last" = tmux ] || [ "$last" = clang ] && exit 1
printf 'install ok installed'
EOF
cat >"$T/bin/apt-get" <<'EOF'
#!/bin/sh
echo "apt-get $*" >>"$PPS_FAKE_LOG"
echo "FAKE apt-get $*"
EOF
cat >"$T/bin/sudo" <<'EOF'
#!/bin/sh
echo "sudo $*" >>"$PPS_FAKE_LOG"
exec "$@"
EOF
printf 'all:\n\t@$(MAKE) -f sub.mk -C "%s"\n' "$T/rec" >"$T/rec/Makefile"
printf 'all:\n\t@$(MAKE) -f leaf.mk\n' >"$T/rec/sub.mk"
printf 'all:\n\t@echo "[100%%] Built target fake"\n' >"$T/rec/leaf.mk"
chmod +x "$T/bin/"*
# What demo.sh runs: a ppscope that records and succeeds.
mkdir -p "$T/build"
printf '#!/bin/sh\necho "ppscope $*" >>"%s"\n' "$log" >"$T/build/ppscope"
chmod +x "$T/build/ppscope"

# What a user's shell has: no make above it, no CI settings.
clean_env="env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u GNUMAKEFLAGS -u PPS_DEPS_EXTRA -u CC"

# mk TARGET... : runs make in the source tree as a user would (a fresh shell, no make above it),
# with the fakes first on PATH; exit code in $rc, output (stdout and stderr) in $T/out.
mk() {
    : >"$log"
    (cd "$src" && $clean_env PATH="$T/bin:$real_path" \
        PPS_FAKE_LOG="$log" PPS_FAKE_REC="$T/rec" PPS_DEMO_DIR="$T/demo" \
        make BUILD="$T/build" JOBS=2 "$@") >"$T/out" 2>&1
    rc=$?
}
no_install() { # what ran none of apt-get and sudo
    if grep -q '^apt-get\|^sudo' "$log"; then
        fail "$1 ran: $(grep '^apt-get\|^sudo' "$log" | tr '\n' ';')"
    else
        ok
    fi
}
quiet_build() {
    if grep -q 'Entering directory\|Leaving directory' "$T/out"; then
        fail "$1 printed directories: $(grep -c 'Entering directory' "$T/out") Entering lines"
    else
        ok
    fi
}

# A build alone: no apt-get, no sudo, quiet, warnings not errors.
for goal in "" build; do
    mk $goal
    [ "$rc" -eq 0 ] && ok || fail "make $goal: exit $rc: $(cat "$T/out")"
    no_install "make $goal"
    quiet_build "make $goal"
    grep -q '^cmake --build' "$log" && ok || fail "make $goal did not build: $(cat "$log")"
    grep -q '^cmake .*-DPPS_WERROR=ON' "$log" && fail "make $goal configured with -DPPS_WERROR=ON"
    grep -q 'installing' "$T/out" && fail "make $goal talked of installing: $(cat "$T/out")"
done

# A failed configure: CMake's message, then the hint; still nothing installed.
PPS_FAKE_CMAKE_FAIL=1
export PPS_FAKE_CMAKE_FAIL
mk build
unset PPS_FAKE_CMAKE_FAIL
[ "$rc" -ne 0 ] && ok || fail "make build succeeded with a failing configure"
grep -q 'Could NOT find SQLite3' "$T/out" && ok || fail "CMake's message is gone: $(cat "$T/out")"
grep -q "make deps" "$T/out" && ok || fail "no hint naming 'make deps': $(cat "$T/out")"
[ "$(grep -c 'make deps' "$T/out")" -eq 1 ] || fail "the hint is not one line: $(cat "$T/out")"
no_install "make build (failing)"

# make check and make demo: say what they install and why, then install it.
for goal in check demo; do
    mk "$goal"
    [ "$rc" -eq 0 ] && ok || fail "make $goal: exit $rc: $(cat "$T/out")"
    said=$(grep -n "^make $goal: installing 1 package" "$T/out" | cut -d: -f1)
    apt=$(grep -n '^FAKE apt-get install' "$T/out" | cut -d: -f1)
    if [ -z "$said" ] || [ -z "$apt" ] || [ "$said" -ge "$apt" ]; then
        fail "make $goal: no 'installing' line before apt-get install: $(cat "$T/out")"
    else
        ok
    fi
    grep -q '^  tmux  *the viewer tests' "$T/out" && ok ||
        fail "make $goal: tmux's why: $(cat "$T/out")"
    grep -q '^apt-get install.* tmux' "$log" && ok ||
        fail "make $goal did not install: $(cat "$log")"
    quiet_build "make $goal"
done
mk check
grep -q '^cmake .*-DPPS_WERROR=ON' "$log" && ok ||
    fail "make check without -DPPS_WERROR=ON: $(cat "$log")"
grep -q '^ctest ' "$log" && ok || fail "make check ran no ctest: $(cat "$log")"
mk demo
grep -q '^cmake .*-DPPS_WERROR=ON' "$log" && fail "make demo configured with -DPPS_WERROR=ON"
grep -q '^ppscope run ' "$log" && ok || fail "make demo ran no ppscope run: $(cat "$log")"

# .ci/run, in a scratch copy of what it runs (it builds next to itself): make check, then a gcc
# Release build and a clang build, each in its own directory with warnings as errors, and the
# bad-input corpus in an ASan + UBSan build.
mkdir "$T/ci"
cp -R "$src/.ci" "$src/Makefile" "$src/scripts" "$T/ci/"
: >"$log"
(cd "$T/ci" && $clean_env PATH="$T/bin:$real_path" \
    PPS_FAKE_LOG="$log" PPS_FAKE_REC="$T/rec" PPS_FAKE_CACHE=1 ./.ci/run) >"$T/out" 2>&1
rc=$?
[ "$rc" -eq 0 ] && ok || fail ".ci/run: exit $rc: $(cat "$T/out")"
grep -q '^ctest ' "$log" && ok || fail ".ci/run ran no tests: $(cat "$log")"
grep -q '^apt-get install.* clang' "$log" && ok ||
    fail ".ci/run did not install clang: $(cat "$log")"
grep -q '^CC=gcc cmake .*-B build-ci-release .*-DCMAKE_BUILD_TYPE=Release .*-DPPS_WERROR=ON' \
    "$log" &&
    grep -q '^cmake --build build-ci-release' "$log" && ok ||
    fail ".ci/run: no gcc Release build with -DPPS_WERROR=ON: $(cat "$log")"
grep -q '^CC=clang cmake .*-B build-ci-clang .*-DPPS_WERROR=ON' "$log" &&
    grep -q '^cmake --build build-ci-clang' "$log" && ok ||
    fail ".ci/run: no clang build with -DPPS_WERROR=ON: $(cat "$log")"
grep -q '^CC=gcc cmake .*-B build-ci-asan .*-DPPS_SANITIZE=ON' "$log" &&
    grep -q '^ctest --test-dir build-ci-asan .*-L corpus' "$log" && ok ||
    fail ".ci/run: the corpus is not run under ASan and UBSan: $(cat "$log")"

# One real configure, of a Release build: the summary shows, CMake's progress lines do not, and
# CMake's Release is -O3 (what .ci/run checks).
: >"$log"
(cd "$src" && $clean_env make BUILD="$T/real" \
    CMAKE_FLAGS=-DCMAKE_BUILD_TYPE=Release configure) >"$T/out" 2>&1
rc=$?
grep -q '^CMAKE_C_FLAGS_RELEASE:STRING=-O3 ' "$T/real/CMakeCache.txt" && ok ||
    fail "Release is not -O3: $(grep '^CMAKE_C_FLAGS_RELEASE:' "$T/real/CMakeCache.txt")"
[ "$rc" -eq 0 ] && ok || fail "make configure: exit $rc: $(cat "$T/out")"
grep -q '^ppscope [0-9.]*: .*warnings are' "$T/out" && ok || fail "no summary: $(cat "$T/out")"
grep -q '^  with: ' "$T/out" && grep -q '^  without:' "$T/out" && ok ||
    fail "the summary lacks with/without: $(cat "$T/out")"
grep -q 'Detecting C compiler\|ppscope: [A-Z]* AUTO' "$T/out" &&
    fail "CMake's progress lines show: $(cat "$T/out")"
[ -s "$log" ] && fail "the real configure ran a fake: $(cat "$log")"

cli_finish
