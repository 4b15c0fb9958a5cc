#!/bin/sh
# nvtx_without_mpi.sh - the libraries loaded into other programs need no MPI (issue 8): neither
# libppscope_trace.so nor libppscope_nvtx.so has a NEEDED entry beyond libc, libm, libpthread,
# libdl and libsqlite3 (readelf -d, built and installed); `cmake --install` installs
# libppscope_nvtx.so beside libppscope_trace.so; and examples/nvtx_pipeline, traced through the
# installed injection library while every libmpi on the machine reads as an empty file (a bind
# mount of /dev/null over each, in a mount namespace of the test's own), starts, traces and leaves
# a run that holds the spans it emitted and that `ppscope report` reads.
#
# A library with libmpi among its NEEDED fails that load ("libmpi.so.40: file too short"); NVTX
# then runs the program untraced, and no run appears. The hidden run needs unshare(1) and
# mount(8) and a kernel that lets the test make a mount namespace: without them that part skips
# (77) once the rest has passed. On a machine with no libmpi at all the run needs no hiding.
#
# Usage: nvtx_without_mpi.sh BUILD_DIR LIBPPSCOPE_TRACE LIBPPSCOPE_NVTX EXAMPLE TEST_NVTX_CHECK
#                            PPSCOPE
set -u
USAGE="usage: nvtx_without_mpi.sh BUILD_DIR TRACE_LIB NVTX_LIB EXAMPLE CHECK PPSCOPE"
BUILD=${1:?$USAGE}
TRACE_LIB=${2:?$USAGE}
NVTX_LIB=${3:?$USAGE}
EX=${4:?$USAGE}
CHECK=${5:?$USAGE}
PPS=${6:?$USAGE}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/pps-nompi-XXXXXX") || exit 1
trap 'rm -rf "$TMP"' EXIT INT TERM
PREFIX=$TMP/prefix
fails=0

unset RANK WORLD_SIZE LOCAL_RANK OMPI_COMM_WORLD_RANK OMPI_COMM_WORLD_SIZE PMI_RANK PMI_SIZE \
    PMIX_RANK SLURM_PROCID SLURM_NTASKS PPSCOPE_RUN PPSCOPE_STAGE PPSCOPE_NVTX_REGEX \
    PPSCOPE_NVTX_GROUPS PPSCOPE_NVTX_KIND PPSCOPE_NVTX_RANGES PPSCOPE_NVTX_TORCH_B \
    PPSCOPE_NVTX_STAGES PPSCOPE_NVTX_STAGE_ORDER NVTX_INJECTION64_PATH

fail() {
    echo "FAIL: $*" >&2
    fails=$((fails + 1))
}

if ! command -v readelf >/dev/null 2>&1; then
    echo "skipped: no readelf" >&2
    exit 77
fi

# needs_only LIB: its NEEDED entries are libc's (libc, libm, libpthread, libdl, the loader) and
# SQLite; a PPS_SANITIZE build adds the sanitizer runtimes. Anything else, libmpi first, fails.
needs_only() {
    if ! readelf -d "$1" >"$TMP/readelf" 2>&1; then
        fail "readelf -d $1: $(cat "$TMP/readelf")"
        return
    fi
    sed -n 's/.*(NEEDED).*\[\(.*\)\]$/\1/p' "$TMP/readelf" >"$TMP/needed"
    grep -q '^libc\.so' "$TMP/needed" || fail "$1: readelf -d lists no NEEDED libc"
    allowed='^(libc|libm|libpthread|libdl|libsqlite3|libasan|libubsan|libgcc_s)\.so|^ld-linux'
    extra=$(grep -Ev "$allowed" "$TMP/needed" | tr '\n' ' ')
    [ -z "$extra" ] || fail "$1 NEEDs more than libc and SQLite: $extra"
}

# --- what the build made ---
needs_only "$TRACE_LIB"
needs_only "$NVTX_LIB"

# --- what cmake --install puts in place ---
if ! cmake --install "$BUILD" --prefix "$PREFIX" >"$TMP/install.log" 2>&1; then
    cat "$TMP/install.log" >&2
    echo "FAIL: cmake --install" >&2
    exit 1
fi
LIBDIR=$(dirname "$(find "$PREFIX" -name 'libppscope_trace.so' | head -n 1)")
[ "$LIBDIR" != . ] || fail "no libppscope_trace.so under $PREFIX"
LIB=$LIBDIR/libppscope_nvtx.so
if [ -f "$LIB" ]; then
    needs_only "$LIB"
    needs_only "$LIBDIR/libppscope_trace.so"
else
    fail "libppscope_nvtx.so is not installed (not in $LIBDIR)"
    # The run below still shows whether the built one loads without MPI.
    LIB=$NVTX_LIB
fi

# --- the libmpi files the loader could open: its cache, and what ppscope itself links ---
{
    ldconfig -p 2>/dev/null | sed -nE 's/^[[:space:]]*lib(mpi|mpich)\.so[.0-9]* .*=> //p'
    ldd "$PPS" 2>/dev/null | sed -nE 's/^[[:space:]]*lib(mpi|mpich)\.so[.0-9]* => (\/[^ ]*).*/\2/p'
} | while read -r f; do readlink -f "$f"; done | sort -u >"$TMP/mpilibs"

# The traced run, as a script for the namespace: hide each libmpi, check that it is hidden, and
# that a program which needs libmpi (ppscope, if it links MPI) no longer starts; then trace.
cat >"$TMP/hidden.sh" <<'EOF'
set -u
while read -r f; do
    mount --bind /dev/null "$f" || exit 3
    [ ! -s "$f" ] || { echo "$f is still readable" >&2; exit 3; }
done <"$1"
if [ -s "$1" ] && [ -n "$2" ] && "$2" --help >/dev/null 2>&1; then
    echo "ppscope links libmpi, and still starts with libmpi hidden" >&2
    exit 3
fi
shift 2
exec env "$@"
EOF
PPS_NEEDS_MPI=
readelf -d "$PPS" 2>/dev/null | grep -Eq 'NEEDED.*\[lib(mpi|mpich)\.so' && PPS_NEEDS_MPI=$PPS

set -- NVTX_INJECTION64_PATH="$LIB" PPSCOPE_RUN="$TMP/run" PPSCOPE_STAGE=2 \
    "$EX" pps --stage 2 --stages 4 --iters 3 --mbs 4 --print
if [ ! -s "$TMP/mpilibs" ]; then
    echo "nvtx_without_mpi: no libmpi on this machine: the run needs no hiding"
    env "$@" >"$TMP/run.out" 2>"$TMP/run.err"
    rc=$?
else
    ns=
    # shellcheck disable=SC2016 # $1 is the inner shell's argument, expanded there
    for u in "unshare -m" "unshare -rm"; do
        if $u sh -c 'mount --bind /dev/null "$1"' sh "$(head -n 1 "$TMP/mpilibs")" \
            2>/dev/null; then
            ns=$u
            break
        fi
    done
    if [ -z "$ns" ]; then
        [ "$fails" -eq 0 ] || exit 1
        echo "skipped: cannot make a mount namespace to hide libmpi (unshare -m, unshare -rm)" >&2
        exit 77
    fi
    echo "nvtx_without_mpi: hiding $(tr '\n' ' ' <"$TMP/mpilibs")(under $ns)"
    $ns sh "$TMP/hidden.sh" "$TMP/mpilibs" "$PPS_NEEDS_MPI" "$@" >"$TMP/run.out" 2>"$TMP/run.err"
    rc=$?
    [ "$rc" -ne 3 ] || fail "libmpi could not be hidden: $(cat "$TMP/run.err")"
fi

# --- the run: every span the example emitted, and ppscope report reads it ---
if [ "$rc" -ne 0 ]; then
    fail "the example under the injection, libmpi hidden: exit $rc: $(cat "$TMP/run.err")"
elif [ -s "$TMP/run.err" ]; then
    fail "the example under the injection, libmpi hidden: stderr: $(cat "$TMP/run.err")"
fi
if [ ! -f "$TMP/run/rank-00000.db" ]; then
    fail "no run was traced with libmpi hidden ($LIB did not load?)"
elif ! "$CHECK" "$TMP/run" --iter >"$TMP/run.got" 2>"$TMP/check.err"; then
    fail "the run does not load: $(cat "$TMP/check.err")"
else
    sort "$TMP/run.out" >"$TMP/want"
    sort "$TMP/run.got" >"$TMP/got"
    [ -s "$TMP/want" ] || fail "the example printed no spans"
    diff -u "$TMP/want" "$TMP/got" >"$TMP/diff" ||
        fail "the run differs from what the example emitted: $(head -n 20 "$TMP/diff")"
    if ! "$PPS" report "$TMP/run" >"$TMP/report" 2>&1; then
        fail "ppscope report: $(cat "$TMP/report")"
    elif ! grep -q '^status  *complete' "$TMP/report" ||
        ! grep -q '3 iterations' "$TMP/report"; then
        fail "ppscope report does not show the complete 3-iteration run: $(cat "$TMP/report")"
    fi
fi

[ "$fails" -eq 0 ] || exit 1
echo "nvtx_without_mpi: ok ($(wc -l <"$TMP/got") spans traced through the installed $LIB)"
