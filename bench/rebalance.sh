#!/bin/sh
# rebalance.sh - `ppscope rebalance`'s suggestion on the cpu backend (label bench): the measured
# gain in iteration time of the suggested partition over a deliberately bad one (1,7: 8 blocks of
# hidden 128, all on stage 1 but one), against the gain rebalance predicted, measured RUNS times
# (five by default) as tests/cli/rebalance_gain.sh says (alternating runs, the host's drift taken
# out). Prints each measurement and the median of how far each was off the prediction:
# goal within 5%. tests/cli/rebalance.sh, in `make check`, holds each measurement to 15% only: on
# two shared cores one measurement moves by up to 11% with the host's speed.
#
# Usage: rebalance.sh PPSCOPE [RUNS]. Prints MISSED where the goal is missed; exits 0 unless a
# command fails.
set -u
here=$(dirname "$0")
. "$here/../tests/cli/lib.sh"
cli_init bench-rebalance "$1"
. "$here/../tests/cli/rebalance_gain.sh"
runs=${2:-5}

: >"$T/offs"
i=1
while [ "$i" -le "$runs" ]; do
    gain cpu 5 1,7 -p 2 -m 4 --layers 8 --hidden 128 --iters 8 --quiet
    r=$?
    [ "$r" -eq 3 ] && note=" (contended: not counted)" || note=""
    echo "measurement $i of $runs: $(cat "$T/cpu.gain")$note"
    [ "$r" -eq 3 ] || cat "$T/cpu.off" >>"$T/offs"
    i=$((i + 1))
done
python3 - "$T/offs" <<'PY'
import statistics, sys
offs = [float(l) for l in open(sys.argv[1]) if l.strip()]
if not offs:
    print("rebalance gain: every measurement contended, no figure")
    sys.exit(0)
med = statistics.median(offs)
print("rebalance gain on cpu, 1,7 -> suggestion: off the prediction by %+.1f%% (median of %d, "
      "from %+.1f%% to %+.1f%%)  goal within 5%%%s" % (100 * med, len(offs), 100 * min(offs),
      100 * max(offs), "" if abs(med) <= 0.05 else "  MISSED"))
PY
cli_finish
