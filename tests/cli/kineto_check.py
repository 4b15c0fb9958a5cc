"""kineto_check.py - what a Kineto import should hold, worked out from the JSON files themselves
with Python's json module, independently of ppscope's C code, and compared with the run ppscope
wrote (its shards, read with sqlite3) and with `ppscope report --json` of it.

usage: kineto_check.py fixture RUN REPORT.json SCHEDULE FILE...
       kineto_check.py hta RUN SUMMARY.json FILE...

fixture: traces of torch.distributed.pipelining (tests/fixtures/kineto). Checked: the ranks; the
  spans per stage and kind (F, B, W, BW, OPT from the labels, SEND and RECV from the labelled
  actions and gloo's work ranges outside them, RANGE for the rest); the iterations
  (ProfilerStep#N); the inferred p, m, v and schedule family; and the measured bubble against
  one computed here by the rules of docs/import.md: an op starts when its input arrived, windows
  are [first op start, last op end] of each iteration over all ranks, busy is the union of a
  rank's ops in the window.
hta: HolisticTraceAnalysis's traces (shared/traces/kineto_hta): the counts of kernels, copies
  and steps against the *.summary.json beside them.

Prints "N passed, N failed" and exits 1 on any failure.
"""
import glob
import gzip
import json
import os
import re
import sqlite3
import sys

KINDS = {1: "F", 2: "B", 3: "W", 4: "BW", 5: "SEND", 6: "RECV", 7: "WAIT", 8: "OPT",
         9: "ROLLBACK", 10: "KERNEL", 11: "MEMCPY", 12: "RANGE"}
COMPUTE = {"F", "B", "W", "BW", "OPT"}
SKIP_CATS = {"python_function", "Trace", "ac2g", "fwdbwd"}
PP = re.compile(r"^PP:(\d+)(BW|B|F|I|W|SEND_F|SEND_B|RECV_F|RECV_B)(\d+)$")
SINGLE = re.compile(r"^(Forward|Backward) (\d+)$")
STEP = re.compile(r"^ProfilerStep#(\d+)$")

passed = failed = 0


def check(cond, what):
    global passed, failed
    if cond:
        passed += 1
    else:
        failed += 1
        print("FAIL:", what, file=sys.stderr)


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f)


def run_spans(run):
    """(rank, kind name, stage, chunk, mb, iter, start, end) of every span in the run."""
    out = []
    for shard in sorted(glob.glob(os.path.join(run, "rank-*.db"))):
        db = sqlite3.connect("file:%s?mode=ro" % shard, uri=True)
        for row in db.execute("SELECT rank, kind, stage, chunk, mb, iter, start_ns, end_ns "
                              "FROM spans"):
            out.append((row[0], KINDS[row[1]]) + tuple(row[2:]))
        db.close()
    return out


def ns(base, us):
    return base + round(us * 1000)


class Rank:
    """One file: its ops (with the times the bubble rule gives them) and its span counts."""

    def __init__(self, path, index):
        d = load(path)
        self.rank = d.get("distributedInfo", {}).get("rank", index)
        self.base = d.get("baseTimeNanoseconds", 0)
        evs = [e for e in d["traceEvents"] if e.get("ph") == "X" and e.get("cat") not in SKIP_CATS]
        self.steps = []
        self.ops = []      # [kind, start, end, iteration]
        self.counts = {}   # kind -> spans
        labels = []        # (thread, start, end, kind, vstage, mb, type, op index)
        comm = []          # (thread, start, end, kind)
        for e in evs:
            t0 = ns(self.base, e["ts"])
            t1 = t0 + round(e["dur"] * 1000)
            th = (e.get("pid"), e.get("tid"))
            name = e.get("name", "")
            cat = e.get("cat")
            kind = "RANGE"
            if cat == "kernel":
                kind = "KERNEL"
            elif cat in ("gpu_memcpy", "gpu_memset"):
                kind = "MEMCPY"
            elif cat in ("user_annotation", "cpu_op"):
                m = PP.match(name)
                s = SINGLE.match(name)
                if m:
                    typ = m.group(2)
                    kind = {"F": "F", "I": "B", "W": "W", "B": "BW", "BW": "BW"}.get(typ)
                    kind = kind or ("SEND" if typ.startswith("SEND") else "RECV")
                    labels.append([th, t0, t1, kind, int(m.group(1)), int(m.group(3)), typ,
                                   len(self.ops)])
                elif s:
                    kind = "F" if s.group(1) == "Forward" else "BW"
                    labels.append([th, t0, t1, kind, -1, int(s.group(2)), "single",
                                   len(self.ops)])
                elif name.startswith("Optimizer.step#"):
                    kind = "OPT"
                elif name in ("gloo:send", "nccl:send") or name.startswith("gloo:recv") \
                        or name == "nccl:recv":
                    kind = "SEND" if name.endswith("send") else "RECV"
                    comm.append((th, t0, t1, kind))
                    continue  # counted below, once it is known whether an action holds it
                st = STEP.match(name)
                if st:
                    self.steps.append((t0, t1, int(st.group(1))))
            if kind in COMPUTE or kind in ("SEND", "RECV"):
                self.ops.append([kind, t0, t1, None])
            self.counts[kind] = self.counts.get(kind, 0) + 1
        self.steps.sort()
        for o in self.ops:
            o[3] = self.iteration(o[1])
        # A work range inside the action of its kind lengthens it; anywhere else it is a span.
        # Inside "Forward i" / "Backward i", the receive's end is when the op could start.
        for th, t0, t1, kind in comm:
            holder = [l for l in labels if l[0] == th and l[1] <= t0 < l[2]]
            lab = holder[-1] if holder else None
            if lab and lab[6] != "single" and lab[3] == kind:
                op = self.ops[lab[7]]
                op[2] = max(op[2], t1)
                continue
            self.counts[kind] = self.counts.get(kind, 0) + 1
            if lab and lab[6] == "single" and kind == "RECV" and lab[1] < t1 < lab[2]:
                op = self.ops[lab[7]]
                op[1] = max(op[1], t1)
        # A "PP:" op starts when the transfer of its input (its RECV action, lengthened) ended.
        last = {}
        for lab in sorted(labels, key=lambda l: (l[0], l[1])):
            op = self.ops[lab[7]]
            if lab[6] in ("RECV_F", "RECV_B"):
                last[(lab[4], lab[5], lab[6])] = op[2]
            elif lab[6] in ("F", "I", "B", "BW"):
                want = "RECV_F" if lab[6] == "F" else "RECV_B"
                arrived = last.get((lab[4], lab[5], want))
                if arrived is not None and op[1] < arrived < op[2]:
                    op[1] = arrived

    def iteration(self, t):
        for s0, s1, n in self.steps:
            if s0 <= t < s1:
                return n
        return -1


def bubble(ranks):
    iters = sorted({o[3] for r in ranks for o in r.ops if o[0] in COMPUTE and o[3] >= 0})
    values = []
    for it in iters:
        mine = [(r, o) for r in ranks for o in r.ops if o[0] in COMPUTE and o[3] == it]
        w0 = min(o[1] for _, o in mine)
        w1 = max(o[2] for _, o in mine)
        idle = 0
        for r in ranks:
            spans = sorted((max(o[1], w0), min(o[2], w1)) for o in r.ops
                           if o[0] in COMPUTE and o[2] > w0 and o[1] < w1)
            busy, end = 0, w0
            for a, b in spans:
                a = max(a, end)
                if b > a:
                    busy += b - a
                    end = b
            idle += (w1 - w0) - busy
        values.append(idle / (len(ranks) * (w1 - w0)))
    return sum(values) / len(values), len(iters)


def fixture(run, report_path, schedule, files):
    ranks = [Rank(p, i) for i, p in enumerate(files)]
    spans = run_spans(run)
    with open(report_path) as f:
        rep = json.load(f)
    check(sorted({s[0] for s in spans}) == sorted(r.rank for r in ranks),
          "%s: ranks %s" % (schedule, sorted({s[0] for s in spans})))
    for r in ranks:
        got = {}
        for s in spans:
            if s[0] == r.rank:
                got[s[1]] = got.get(s[1], 0) + 1
        stages = sorted({s[2] for s in spans if s[0] == r.rank})
        check(stages == [r.rank], "%s: rank %d has spans on stages %s" % (schedule, r.rank,
                                                                         stages))
        check(got == r.counts, "%s rank %d: spans %s, expected %s" % (schedule, r.rank,
                                                                    sorted(got.items()),
                                                                    sorted(r.counts.items())))
    want_iters = sorted({n for r in ranks for _, _, n in r.steps})
    got_iters = sorted({s[5] for s in spans if s[1] in COMPUTE})
    check(got_iters == want_iters, "%s: iterations %s, expected %s" % (schedule, got_iters,
                                                                      want_iters))
    b, n_iters = bubble(ranks)
    print("%s: bubble %.4f (report) vs %.4f (this script), %d iterations, schedule %s, "
          "p=%s m=%s v=%s" % (schedule, rep["bubble"], b, n_iters, rep["schedule"], rep["p"],
                             rep["m"], rep["v"]))
    check(abs(rep["bubble"] - b) < 1e-4, "%s: bubble %.6f, expected %.6f" % (schedule,
                                                                           rep["bubble"], b))
    check(rep["n_iterations"] == n_iters, "%s: %s iterations" % (schedule, rep["n_iterations"]))
    check(rep["partial_iterations"] == 0, "%s: partial iterations" % schedule)
    check(rep["source"] == "kineto", "%s: source %s" % (schedule, rep["source"]))
    v = 1 if schedule in ("gpipe", "1f1b") else 2
    check((rep["p"], rep["m"], rep["v"]) == (4, 8, v),
          "%s: p, m, v %s" % (schedule, (rep["p"], rep["m"], rep["v"])))
    family = {"gpipe": "gpipe", "1f1b": "1f1b", "interleaved1f1b": "interleaved"}.get(schedule)
    if family:
        check(rep["schedule"] == family, "%s: schedule %s" % (schedule, rep["schedule"]))
    chunks = sorted({s[3] for s in spans if s[1] in COMPUTE})
    check(chunks == list(range(v)), "%s: chunks %s" % (schedule, chunks))


def hta(run, summary_path, files):
    spans = run_spans(run)
    for path in files:
        d = load(path)
        want = json.load(open(path.replace(".json.gz", ".summary.json")))
        rank = want["distributedInfo"]["rank"]
        mine = [s for s in spans if s[0] == rank]
        kinds = {}
        for s in mine:
            kinds[s[1]] = kinds.get(s[1], 0) + 1
        cats = want["X_events_by_cat"]
        name = os.path.basename(path)
        # NCCL's kernels here are collectives and fused send-receives launched by collectives:
        # kernels, not SENDs or RECVs.
        check(kinds.get("KERNEL", 0) == want["kernel_count"] and "SEND" not in kinds and
              "RECV" not in kinds, "%s: kinds %s, expected %d kernels" % (name, kinds,
                                                                         want["kernel_count"]))
        check(kinds.get("MEMCPY", 0) == cats.get("gpu_memcpy", 0) + cats.get("gpu_memset", 0),
              "%s: copies %d" % (name, kinds.get("MEMCPY", 0)))
        steps = sorted(int(s["name"].split("#")[1]) for s in want["profiler_steps"])
        got = sorted({s[5] for s in mine if s[1] in ("KERNEL", "RANGE") and s[5] >= 0})
        check(got == steps, "%s: iterations %s, expected %s" % (name, got, steps))
        kept = sum(v for c, v in cats.items() if c not in SKIP_CATS)
        check(len(mine) == kept, "%s: %d spans, expected %d" % (name, len(mine), kept))
        busy = sum(s[7] - s[6] for s in mine if s[1] == "KERNEL")
        check(abs(busy / 1e3 - want["kernel_busy_us"]) < 0.001 * want["kernel_count"],
              "%s: kernel time %.3f us, expected %.3f" % (name, busy / 1e3,
                                                          want["kernel_busy_us"]))
        check(all(s[2] == rank for s in mine), "%s: a span not on stage %d" % (name, rank))
        print("%s: rank %d, %d spans, %d kernels, steps %s" % (name, rank, len(mine),
                                                             want["kernel_count"], steps))


def main():
    mode = sys.argv[1]
    if mode == "fixture":
        fixture(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5:])
    else:
        hta(sys.argv[2], sys.argv[3], sys.argv[4:])
    print("%d passed, %d failed" % (passed, failed))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
