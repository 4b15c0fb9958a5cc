#!/bin/sh
# trace_install.sh - libppscope_trace as another project sees it: `cmake --install` of this build
# into a fresh prefix, then examples/trace_hello built against the installed tree twice, with
# find_package(ppscope) and with pkg-config, run, and its run read by the installed `ppscope
# report`. Also checks that the library exports exactly the functions trace.h marks PPS_TRACE_API.
# Usage: trace_install.sh BUILD_DIR SOURCE_DIR API_LIST
# Environment: CC, the compiler; PPS_CONSUMER_FLAGS, flags the consumers need to load this build's
# library (the sanitizer flags of a PPS_SANITIZE build).
set -u
BUILD=${1:?usage: trace_install.sh BUILD_DIR SOURCE_DIR API_LIST}
SRC=${2:?usage: trace_install.sh BUILD_DIR SOURCE_DIR API_LIST}
API=${3:?usage: trace_install.sh BUILD_DIR SOURCE_DIR API_LIST}
CC=${CC:-cc}
FLAGS=${PPS_CONSUMER_FLAGS:-}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/pps-install-XXXXXX") || exit 1
trap 'rm -rf "$TMP"' EXIT INT TERM
PREFIX=$TMP/prefix
fails=0

fail() {
    echo "FAIL: $*" >&2
    fails=$((fails + 1))
}

for tool in pkg-config nm; do
    if ! command -v $tool >/dev/null 2>&1; then
        echo "skipped: no $tool" >&2
        exit 77
    fi
done

cmake --install "$BUILD" --prefix "$PREFIX" >"$TMP/install.log" 2>&1 || {
    cat "$TMP/install.log" >&2
    echo "FAIL: cmake --install" >&2
    exit 1
}

# --- the installed tree ---
LIBDIR=$(dirname "$(find "$PREFIX" -name 'libppscope_trace.so' | head -n 1)")
if [ "$LIBDIR" = . ]; then
    echo "FAIL: no libppscope_trace.so under $PREFIX" >&2
    exit 1
fi
for f in bin/ppscope include/ppscope/trace.h include/ppscope/pps_error.h; do
    [ -f "$PREFIX/$f" ] || fail "$f is not installed"
done
for f in libppscope_trace.so.0 pkgconfig/ppscope-trace.pc cmake/ppscope/ppscopeConfig.cmake \
    cmake/ppscope/ppscopeConfigVersion.cmake cmake/ppscope/ppscopeTargets.cmake; do
    [ -e "$LIBDIR/$f" ] || fail "$LIBDIR/$f is not installed"
done
[ "$(readlink "$LIBDIR/libppscope_trace.so.0" 2>/dev/null)" = libppscope_trace.so.0.1.0 ] ||
    fail "libppscope_trace.so.0 does not point to libppscope_trace.so.0.1.0"

# --- exactly the API is exported (defined functions and data; the version node aside) ---
nm -D --defined-only "$LIBDIR/libppscope_trace.so" |
    awk '$2 != "A" { sub(/@.*/, "", $3); print $3 }' | sort >"$TMP/exported"
sort "$API" >"$TMP/api"
if ! cmp -s "$TMP/exported" "$TMP/api"; then
    fail "libppscope_trace.so exports other symbols than trace.h's PPS_TRACE_API functions:"
    diff "$TMP/api" "$TMP/exported" | sed 's/^/    /' >&2
fi

# report_run NAME: the installed ppscope reads the run hello wrote.
report_run() {
    if ! "$PREFIX/bin/ppscope" report "$TMP/$1" >"$TMP/$1.report" 2>&1; then
        fail "ppscope report of the $1 run: $(cat "$TMP/$1.report")"
    elif ! grep -q "gpipe" "$TMP/$1.report" || ! grep -q "2 stages" "$TMP/$1.report"; then
        fail "the report of the $1 run is not hello's run:"
        sed 's/^/    /' "$TMP/$1.report" >&2
    fi
}

# --- a CMake project: find_package(ppscope) + ppscope::trace ---
if ! cmake -S "$SRC/examples/trace_hello" -B "$TMP/hello-cmake" -DCMAKE_PREFIX_PATH="$PREFIX" \
    -DCMAKE_C_COMPILER="$CC" -DCMAKE_C_FLAGS="$FLAGS" -DCMAKE_EXE_LINKER_FLAGS="$FLAGS" \
    >"$TMP/cmake.log" 2>&1 ||
    ! cmake --build "$TMP/hello-cmake" >>"$TMP/cmake.log" 2>&1; then
    fail "examples/trace_hello does not build with find_package(ppscope):"
    sed 's/^/    /' "$TMP/cmake.log" >&2
elif ! "$TMP/hello-cmake/hello" "$TMP/cmake-run" >"$TMP/hello.log" 2>&1; then
    fail "hello (CMake) failed: $(cat "$TMP/hello.log")"
else
    report_run cmake-run
fi

# --- plain cc with pkg-config ---
export PKG_CONFIG_PATH="$LIBDIR/pkgconfig"
# shellcheck disable=SC2086 # $FLAGS and $flags are lists of words, split on purpose
if ! flags=$(pkg-config --cflags --libs ppscope-trace 2>"$TMP/pc.log"); then
    fail "pkg-config ppscope-trace: $(cat "$TMP/pc.log")"
elif ! "$CC" -std=c11 -Wall -Werror $FLAGS "$SRC/examples/trace_hello/hello.c" $flags \
    -o "$TMP/hello-pc" 2>"$TMP/cc.log"; then
    fail "cc hello.c \$(pkg-config --cflags --libs ppscope-trace) ($flags): $(cat "$TMP/cc.log")"
elif ! LD_LIBRARY_PATH="$LIBDIR" "$TMP/hello-pc" "$TMP/pc-run" >"$TMP/hello.log" 2>&1; then
    fail "hello (pkg-config) failed: $(cat "$TMP/hello.log")"
else
    report_run pc-run
fi

[ "$fails" -eq 0 ] || exit 1
echo "ok: installed into $PREFIX, built and ran examples/trace_hello with CMake and pkg-config"
