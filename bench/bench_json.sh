#!/bin/sh
# bench_json.sh - builds bench_json (C, with its C++ part for simdjson) and runs it on a generated
# Kineto trace of SIZE MB (default 1000). Needs libyajl-dev, libjson-c-dev, libsimdjson-dev, g++.
#
# usage: bench/bench_json.sh [SIZE_MB] [WORKDIR]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
size=${1:-1000}
work=${2:-${TMPDIR:-/tmp}/pps-bench-json}
mkdir -p "$work"
cc=${CC:-cc}
cxx=${CXX:-c++}
$cc -O2 -std=c11 -D_POSIX_C_SOURCE=200809L -o "$work/kineto_gen" "$here/kineto_gen.c" -lz
$cxx -O2 -std=c++17 -c -o "$work/simd.o" "$here/bench_json_simdjson.cpp"
$cc -O2 -std=c11 -D_POSIX_C_SOURCE=200809L -DBENCH_SIMDJSON -c -o "$work/bench.o" \
    "$here/bench_json.c"
$cxx -o "$work/bench_json" "$work/bench.o" "$work/simd.o" -lyajl -ljson-c -lsimdjson
[ -s "$work/trace-$size.json" ] || "$work/kineto_gen" "$work/trace-$size.json" "$size" >/dev/null
"$work/bench_json" "$work/trace-$size.json"
