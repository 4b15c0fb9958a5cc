#!/bin/sh
# bad_paths.sh - what is wrong with a run's files rather than with their rows (issue 11, item 9):
# a symbolic link loop as the run and as a shard, a shard that is a directory, a FIFO, an empty
# file, one whose SQLite header is overwritten, and one this user may not read. Every command
# that reads a run (report, report --json, view --once, merge, export) refuses each with exit 2,
# bad input as the README promises, and exactly one line on stderr naming the file; none hangs
# (a FIFO would block a plain open: each command runs under timeout).
#
# The permission case runs the commands as nobody (setpriv or runuser), since root reads any
# file; without either tool that case alone is left out, saying so.
#
# usage: bad_paths.sh PPSCOPE
set -u

. "$(dirname "$0")/lib.sh"
cli_init bad_paths "$1"

"$PPS" sim --schedule 1f1b -p 4 -m 4 --trace "$T/good" >/dev/null 2>&1 ||
    { fail "ppscope sim --trace failed"; cli_finish; }
shard=rank-00000.db

# A run directory like the good one, its shard replaced by what the caller makes of it.
copy_run() {
    cp -R "$T/good" "$T/$1"
    rm -f "$T/$1/$shard"
}

# check NAME RUN TEXT [RUNNER...]: every reader refuses RUN with exit 2 and one line holding
# TEXT (the file's name and what is wrong with it).
check() {
    name=$1 run=$2 text=$3
    shift 3
    for cmd in "report" "report --json" "view --once" "merge" "export"; do
        out=
        [ "$cmd" = merge ] && out="-o $T/out/$name.merged.db"
        [ "$cmd" = export ] && out="--csv $T/out/$name.csv"
        # shellcheck disable=SC2086 # cmd and out are words
        timeout 20 "$@" "$PPS" $cmd "$run" $out >"$T/stdout" 2>"$T/err"
        rc=$?
        if [ "$rc" -ne 2 ]; then
            fail "$name: ppscope $cmd: exit $rc, expected 2: $(head -c 300 "$T/err")"
        elif [ "$(wc -l <"$T/err")" -ne 1 ]; then
            fail "$name: ppscope $cmd: $(wc -l <"$T/err") lines on stderr: $(head -c 300 "$T/err")"
        elif ! grep -qF -- "$text" "$T/err"; then
            fail "$name: ppscope $cmd: stderr '$(cat "$T/err")' lacks '$text'"
        else
            ok
        fi
    done
}

mkdir -p "$T/out"

ln -s loop "$T/loop"
check run_symlink_loop "$T/loop" "$T/loop: cannot read (a loop of symbolic links)"

copy_run shard_symlink_loop
ln -s "$shard" "$T/shard_symlink_loop/$shard"
check shard_symlink_loop "$T/shard_symlink_loop" \
    "$T/shard_symlink_loop/$shard: cannot read (a loop of symbolic links)"

copy_run shard_directory
mkdir "$T/shard_directory/$shard"
check shard_directory "$T/shard_directory" "$T/shard_directory/$shard: not a ppscope trace"

copy_run shard_fifo
mkfifo "$T/shard_fifo/$shard"
check shard_fifo "$T/shard_fifo" "$T/shard_fifo/$shard: not a ppscope trace (not a regular file)"

copy_run shard_empty
: >"$T/shard_empty/$shard"
check shard_empty "$T/shard_empty" "$T/shard_empty/$shard: not a ppscope trace (an empty file)"

copy_run shard_header
cp "$T/good/$shard" "$T/shard_header/$shard"
dd if=/dev/zero of="$T/shard_header/$shard" bs=100 count=1 conv=notrunc 2>/dev/null
check shard_header "$T/shard_header" "$T/shard_header/$shard: not a ppscope trace"
# The header's bytes after the magic: the page size, the versions, the counts.
copy_run shard_header_tail
cp "$T/good/$shard" "$T/shard_header_tail/$shard"
printf '%084d' 9 | dd of="$T/shard_header_tail/$shard" bs=1 seek=16 conv=notrunc 2>/dev/null
check shard_header_tail "$T/shard_header_tail" "$T/shard_header_tail/$shard: "

# Unreadable: the shard, the run directory, and the shard given alone.
as_nobody=
if command -v setpriv >/dev/null 2>&1; then
    as_nobody="setpriv --reuid=65534 --regid=65534 --clear-groups"
elif command -v runuser >/dev/null 2>&1; then
    as_nobody="runuser -u nobody --"
fi
if [ "$(id -u)" -ne 0 ]; then
    as_nobody=env # not root: a mode of 000 stops this user already
fi
if [ -n "$as_nobody" ]; then
    chmod 755 "$T"
    chmod 777 "$T/out"
    copy_run shard_unreadable
    cp "$T/good/$shard" "$T/shard_unreadable/$shard"
    chmod -R a+rX "$T/shard_unreadable"
    chmod 000 "$T/shard_unreadable/$shard"
    # shellcheck disable=SC2086 # as_nobody is words
    check shard_unreadable "$T/shard_unreadable" \
        "$T/shard_unreadable/$shard: cannot read (Permission denied)" $as_nobody
    cp -R "$T/good" "$T/run_unreadable"
    chmod 000 "$T/run_unreadable"
    # shellcheck disable=SC2086
    check run_unreadable "$T/run_unreadable" "$T/run_unreadable: cannot read (Permission denied)" \
        $as_nobody
    chmod 755 "$T/run_unreadable"
else
    echo "left out: the unreadable shard (running as root, without setpriv or runuser)" >&2
fi

cli_finish
