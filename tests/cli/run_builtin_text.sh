#!/bin/sh
# run_builtin_text.sh - regression: the default training text was /usr/share/common-licenses/GPL-3,
# which only Debian has. It is built in now: `ppscope run` trains from an empty directory with
# no file named, and the run's metadata says "(built-in text)"; --data FILE still reads FILE.
# Needs sqlite3 to read the metadata (exits 77 without).
#
# usage: run_builtin_text.sh PATH/TO/ppscope SOURCE_DIR
set -u
. "$(dirname "$0")/lib.sh"
cli_init run_builtin_text "$1"
src=${2:?usage: run_builtin_text.sh PATH/TO/ppscope SOURCE_DIR}
command -v sqlite3 >/dev/null 2>&1 || { echo "skipped: no sqlite3" >&2; exit 77; }
case $PPS in /*) ;; *) PPS=$PWD/$PPS ;; esac
SMALL="--schedule 1f1b -p 2 -m 2 --iters 2 --layers 2 --hidden 16 --seq-len 8 --microbatch-size 2"

expect_exit 0 run --help
grep -q -- "--data FILE .*built-in" "$T/out" || fail "run --help: $(grep -- --data "$T/out")"
grep -q "common-licenses" "$T/out" && fail "run --help still names common-licenses"

# data_meta RUN: the data key of rank 0's shard.
data_meta() {
    sqlite3 "$1/rank-00000.db" "SELECT value FROM meta WHERE key = 'data'"
}

mkdir "$T/empty"
# shellcheck disable=SC2086
(cd "$T/empty" && "$PPS" run $SMALL --out "$T/run") >"$T/out" 2>"$T/err"
rc=$?
[ "$rc" -eq 0 ] && ok || fail "run from an empty directory: exit $rc: $(cat "$T/err")"
got=$(data_meta "$T/run")
[ "$got" = "(built-in text)" ] && ok || fail "the run's data meta is '$got'"
[ -z "$(ls "$T/empty")" ] || fail "the run wrote into its working directory: $(ls "$T/empty")"

# shellcheck disable=SC2086
expect_exit 0 run $SMALL --data "$src/runtime/model_text.txt" --out "$T/run2"
got=$(data_meta "$T/run2")
[ "$got" = "$src/runtime/model_text.txt" ] && ok || fail "--data FILE: the data meta is '$got'"

cli_finish
