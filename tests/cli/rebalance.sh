#!/bin/sh
# rebalance.sh - `ppscope rebalance RUN` (issue 12) end to end: a run with a deliberately bad
# partition, the partition rebalance suggests from the run's per-layer spans, and runs of that
# suggestion; the measured gain in iteration time (suggested / bad) must be the predicted one
# (after / before), measured as rebalance_gain.sh says. On emu every block costs the same known
# time, so the suggestion is also known (the even split), and the gain is judged within 5%. On cpu
# the real model's blocks are timed on two shared cores whose speed moves from run to run; the
# gain is judged within 15% here (a wrong suggestion or a wrong prediction misses by more: 1,7 ->
# 4,4 is predicted x0.71, and this machine measures it within -7% to +11%); bench/rebalance.sh
# takes the median of five measurements and holds it to 5%.
# A measurement that misses is taken again (three in all). One taken while the stage
# threads waited for a core more than 10% of their time (the report's host contention: another
# process wanted the same cores) times the other processes, not the partition: it is not judged,
# only held to the prediction's own direction (the suggestion predicted faster), and the test
# says so.
# Bad input: exit 2.
#
# usage: rebalance.sh PPSCOPE
set -u

. "$(dirname "$0")/lib.sh"
cli_init rebalance "$1"

. "$(dirname "$0")/rebalance_gain.sh"

# check NAME PERCENT PARTITION ARGS...: gain, measured again (three times in all) while it
# misses: the machine is shared, and a busy host slows one run more than the other
check() {
    gain "$@"
    r=$?
    first=$(cat "$T/$1.gain")
    for _ in 2 3; do
        [ "$r" -eq 0 ] && break
        gain "$@"
        r=$?
    done
    judged=1
    if [ "$r" -eq 3 ]; then
        judged=0
        echo "$1: NOT JUDGED (the host is contended): $(cat "$T/$1.gain")"
        [ "$(field "$T/$1.json" "d['after_iter_ns'] < d['before_iter_ns']")" = "True" ] ||
            fail "$1: the suggestion is not predicted faster than the bad partition"
        return
    fi
    [ "$r" -eq 0 ] || fail "$1: measured gain not the predicted one within $2%: $first;" \
        "again: $(cat "$T/$1.gain")"
    echo "$1: $(cat "$T/$1.gain")"
}

# emu: 8 blocks of 2 ms each per F, B and W (a BW 4 ms), the head 2 ms: 1,7 puts 7 blocks and
# the head on stage 1; the even split is the known best (ms, not less: long against a loaded
# host's late wake-ups).
check emu 5 1,7 --backend emu -p 2 -m 4 --layers 8 --iters 6 --quiet --emu-block-ms 2,2,2 \
    --emu-head-ms 2,2,2
# Contention skews the measured layer costs too: the known best is judged on a quiet host only.
if [ "$judged" -eq 1 ]; then
    case "$(field "$T/emu.json" "d['suggested']")" in
    4,4 | 5,3) ;;
    *) fail "emu: suggested $(field "$T/emu.json" "d['suggested']"), not 4,4 or 5,3" ;;
    esac
fi
[ "$(field "$T/emu.json" "d['before_bubble'] > d['after_bubble']")" = "True" ] ||
    fail "emu: the suggestion's predicted bubble is not below the bad partition's"

# cpu: the real model, 8 blocks of hidden 128, all on stage 1 but one.
check cpu 15 1,7 -p 2 -m 4 --layers 8 --hidden 128 --iters 8 --quiet

# A run without per-layer spans (emu's per-stage costs): each stage's cost spread evenly over
# its blocks, and the answer says so.
"$PPS" run --backend emu -p 2 -m 4 --layers 4 --iters 2 --quiet --partition 1,3 \
    --out "$T/stage-only" >/dev/null 2>&1 || fail "ppscope run (per-stage emu)"
expect_exit 0 rebalance --json "$T/stage-only"
[ "$(field "$T/out" "d['per_layer']")" = "False" ] || fail "per-stage run: per_layer is not false"
field "$T/out" "d['assumed']" | grep -q "spread evenly" || fail "per-stage run: assumption unsaid"

# Interleaved (v > 1) is not searched: exit 1, the reason on stderr, and --json says it too.
"$PPS" run --backend emu -s interleaved -p 2 -m 4 -v 2 --layers 4 --iters 2 --quiet \
    --emu-block-ms 1,1,1 --out "$T/interleaved" >/dev/null 2>&1 || fail "ppscope run (interleaved)"
expect_exit 1 rebalance --json "$T/interleaved"
stderr_has "v = 2"
[ "$(field "$T/out" "d['ok']")" = "False" ] || fail "interleaved: --json does not say ok false"

# Text output names both partitions; --help; bad input.
expect_exit 0 rebalance "$T/emu-bad1"
grep -q -- "--partition 1,7" "$T/out" || fail "text output lacks the current partition"
grep -q "suggested" "$T/out" || fail "text output lacks the suggestion"
expect_exit 0 rebalance --help
grep -q "usage: ppscope rebalance" "$T/out" || fail "--help"
expect_exit 2 rebalance
expect_exit 2 rebalance --bogus "$T/emu-bad1"
expect_exit 2 rebalance "$T/no-such-run"
expect_exit 2 run --backend emu --emu-block-ms 1,2 --no-trace
expect_exit 2 run --emu-block-ms 1,1,1 --no-trace
cli_finish
