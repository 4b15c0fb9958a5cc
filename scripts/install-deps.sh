#!/bin/sh
# Installs what ppscope needs to build and test on Debian/Ubuntu, and nothing when all is there.
# Before it installs, it says which packages are missing and what each is for. Uses sudo when not
# root. Set PPS_DEPS_EXTRA to add packages (CI adds clang).
#
# usage: install-deps.sh [WHO]   (WHO: what asks, for the message; "make check", "make demo")
set -eu
who=${1:-install-deps}

# Each package and what ppscope needs it for.
need='cmake           the build
make            the build
gcc             the compiler
pkg-config      finding the libraries below
libsqlite3-dev  the trace store (SQLite)
sqlite3         tests that read a trace back with the sqlite3 shell
libncurses-dev  the terminal viewer (ppscope view)
tmux            the viewer tests, which drive it in a real terminal
jq              tests of the --json output
python3         the export tests, which parse each exported format back
librsvg2-bin    rsvg-convert, which renders the exported SVG in its test
openmpi-bin     the MPI transport (mpirun) and its tests
libopenmpi-dev  the MPI transport
libopenblas-dev fast matrix products on the cpu backend
g++             the JSON parser of the Kineto import (simdjson is C++)
libsimdjson-dev the JSON parser of the Kineto import
zlib1g-dev      reading .json.gz traces (Kineto import)'
for pkg in ${PPS_DEPS_EXTRA:-}; do
    need="$need
$pkg asked for in PPS_DEPS_EXTRA"
done

# Elsewhere than Debian and Ubuntu there is nothing to ask: the configure says what is missing.
if ! command -v dpkg-query >/dev/null 2>&1 || ! command -v apt-get >/dev/null 2>&1; then
    echo "$who: no dpkg-query and apt-get here (not Debian or Ubuntu?): installing nothing" >&2
    exit 0
fi

missing=""
why=""
while read -r pkg what; do
    [ -n "$pkg" ] || continue
    if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
        missing="$missing $pkg"
        why="$why
  $(printf '%-16s' "$pkg")$what"
    fi
done <<EOF
$need
EOF
[ -z "$missing" ] && exit 0

if [ "$(id -u)" -eq 0 ]; then
    sudo=""
elif command -v sudo >/dev/null 2>&1; then
    sudo="sudo"
else
    echo "$who: missing packages:$missing (run as root or install sudo)" >&2
    exit 2
fi
set -- $missing
echo "$who: installing $# package(s) this machine lacks, with ${sudo:+sudo }apt-get:$why" >&2
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends $missing
