#!/usr/bin/env python3
"""export_check.py - reads back what `ppscope export` wrote, each format with a real parser,
and checks it against what the run holds (its CSV, SQLite counts, `ppscope report --json`).

  export_check.py perfetto JSON CSV FLOWS COUNTERS   the trace: one "X" per span, exact times,
                                                     tracks that nest, FLOWS arrows, COUNTERS
  export_check.py svg SVG P [CSV] [--exact]          well-formed XML, P stage groups, a rect per
                                                     kept span (--exact: no merging)
  export_check.py png PNG P                          not blank, P row bands
  export_check.py csv CSV N                          N rows, every field as the header says
  export_check.py openmetrics OM REPORT_JSON         a strict OpenMetrics 1.0 parse, and the
                                                     figures equal the report's
  export_check.py run-label FILE KIND PATH           the run's path, read back from each format

Exits 0 when every check holds, 1 with one line per failure on stderr.
"""
import csv
import json
import math
import re
import struct
import sys
import xml.etree.ElementTree as ET
import zlib

failures = []


def fail(msg):
    failures.append(msg)


def finish():
    for f in failures:
        print("export_check: " + f, file=sys.stderr)
    sys.exit(1 if failures else 0)


# ---- CSV ---------------------------------------------------------------------------------------

HEADER = ["kind", "stage", "chunk", "mb", "iter", "start_ns", "end_ns", "dur_ns", "peer", "bytes",
          "name", "rank", "clock", "corr"]
KINDS = ["F", "B", "W", "BW", "SEND", "RECV", "WAIT", "OPT", "ROLLBACK", "KERNEL", "MEMCPY",
         "RANGE"]
INT_FIELDS = ["stage", "chunk", "mb", "iter", "start_ns", "end_ns", "dur_ns", "peer", "bytes",
              "rank", "corr"]


def read_csv(path):
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f, strict=True))
    if not rows or rows[0] != HEADER:
        fail(f"{path}: header {rows[0] if rows else None}, expected {HEADER}")
        return []
    spans = []
    for n, row in enumerate(rows[1:], 2):
        if len(row) != len(HEADER):
            fail(f"{path}:{n}: {len(row)} fields, expected {len(HEADER)}")
            continue
        d = dict(zip(HEADER, row))
        try:
            for k in INT_FIELDS:
                d[k] = int(d[k])
        except ValueError:
            fail(f"{path}:{n}: a field that is not an integer: {row}")
            continue
        if d["kind"] not in KINDS:
            fail(f"{path}:{n}: unknown kind {d['kind']}")
        if d["clock"] not in ("host", "device"):
            fail(f"{path}:{n}: unknown clock {d['clock']}")
        if d["dur_ns"] != d["end_ns"] - d["start_ns"]:
            fail(f"{path}:{n}: dur_ns {d['dur_ns']} is not end_ns - start_ns")
        spans.append(d)
    return spans


def check_csv(path, n):
    spans = read_csv(path)
    if len(spans) != int(n):
        fail(f"{path}: {len(spans)} rows, expected {n} (one per span)")


# ---- Perfetto ----------------------------------------------------------------------------------

def ns(us):
    """A trace time (microseconds, three decimals) back in nanoseconds."""
    return int(round(us * 1000))


def check_perfetto(path, csv_path, n_flows, n_counters):
    with open(path, "rb") as f:
        raw = f.read()
    doc = json.loads(raw.decode("utf-8"))
    # What Perfetto's own chunked reader needs beyond JSON: otherData before the events (it
    # fails on one split across chunks), no displayTimeUnit (it would take "ns" for the unit of
    # ts), no \u escapes (it refuses them in the strings it reads).
    if not raw.startswith(b'{"otherData":{'):
        fail(f"{path}: does not start with otherData")
    if b"displayTimeUnit" in raw or re.search(rb"(?<!\\)(?:\\\\)*\\u", raw):
        fail(f"{path}: holds displayTimeUnit or a \\u escape, which Perfetto misreads")
    events = doc.get("traceEvents")
    if not isinstance(events, list):
        fail(f"{path}: no traceEvents array")
        return
    spans = read_csv(csv_path)
    t0 = doc.get("otherData", {}).get("t0_ns")
    if t0 is None or spans and t0 != min(s["start_ns"] for s in spans):
        fail(f"{path}: otherData.t0_ns {t0} is not the run's first span")
        return

    xs = [e for e in events if e.get("ph") == "X"]
    if len(xs) != len(spans):
        fail(f"{path}: {len(xs)} X events, expected one per span: {len(spans)}")
    # Every span, exactly: (kind, stage, start, duration) as multisets.
    want = sorted((s["kind"], s["stage"], s["start_ns"] - t0, max(s["dur_ns"], 0)) for s in spans)
    got = []
    for e in xs:
        for key in ("pid", "tid"):
            if not isinstance(e.get(key), int):
                fail(f"{path}: an X event without an integer {key}: {e}")
                return
        for key in ("ts", "dur"):
            if not isinstance(e.get(key), (int, float)) or e[key] < 0:
                fail(f"{path}: an X event with a bad {key}: {e}")
                return
        got.append((e["args"]["kind"], e["args"]["stage"], ns(e["ts"]), ns(e["dur"])))
    got.sort()
    if got != want:
        diff = [(a, b) for a, b in zip(got, want) if a != b][:3]
        fail(f"{path}: the X events are not the run's spans (first differences {diff})")

    # Names: a process_name per pid, a thread_name per track used.
    procs = {e["pid"] for e in events if e.get("ph") == "M" and e.get("name") == "process_name"}
    threads = {(e["pid"], e["tid"]): e["args"]["name"] for e in events
               if e.get("ph") == "M" and e.get("name") == "thread_name"}
    for e in xs:
        if e["pid"] not in procs:
            fail(f"{path}: pid {e['pid']} has no process_name")
            break
        if (e["pid"], e["tid"]) not in threads:
            fail(f"{path}: track {e['pid']}/{e['tid']} has no thread_name")
            break
    if not any(re.fullmatch(r"stage \d+( chunk \d+)?", n) for n in threads.values()):
        fail(f"{path}: no track named for a stage: {sorted(threads.values())[:5]}")
    tids = {}
    for (pid, tid) in threads:
        if tid in tids and tids[tid] != pid:
            fail(f"{path}: tid {tid} in two processes")
        tids[tid] = pid

    # Each track nests: no two slices overlap in part (the viewers would drop one).
    by_track = {}
    for e in xs:
        by_track.setdefault((e["pid"], e["tid"]), []).append((ns(e["ts"]), ns(e["ts"] + e["dur"])))
    for key, sl in by_track.items():
        sl.sort(key=lambda x: (x[0], -x[1]))
        stack = []
        for a, b in sl:
            while stack and stack[-1] <= a:
                stack.pop()
            if stack and b > stack[-1]:
                fail(f"{path}: track {key} has slices that overlap without nesting at {a}")
                break
            stack.append(b)

    # Flows: each "s" inside a SEND, each "f" inside the RECV of the same message.
    def enclosing(e, kind):
        t = ns(e["ts"])
        for x in xs:
            if (x["pid"], x["tid"]) == (e["pid"], e["tid"]) and x["args"]["kind"] == kind and \
                    ns(x["ts"]) <= t <= ns(x["ts"] + x["dur"]):
                return x
        return None

    starts = {e["id"]: e for e in events if e.get("ph") == "s"}
    ends = {e["id"]: e for e in events if e.get("ph") == "f"}
    if len(starts) != int(n_flows) or len(ends) != int(n_flows):
        fail(f"{path}: {len(starts)} flow starts and {len(ends)} ends, expected {n_flows} of each")
    for fid, s in starts.items():
        f = ends.get(fid)
        if f is None:
            fail(f"{path}: flow {fid} has no end")
            break
        if f.get("bp") != "e" or s.get("cat") != f.get("cat") or s.get("name") != f.get("name"):
            fail(f"{path}: flow {fid}'s two events do not bind as one flow: {s} {f}")
            break
        send, recv = enclosing(s, "SEND"), enclosing(f, "RECV")
        if send is None or recv is None:
            fail(f"{path}: flow {fid} does not start in a SEND and end in a RECV")
            break
        a, b = send["args"], recv["args"]
        if a.get("msg") != b.get("msg") or a["peer"] != b["stage"] or b["peer"] != a["stage"]:
            fail(f"{path}: flow {fid} joins two different messages: {a} {b}")
            break
    counters = [e for e in events if e.get("ph") == "C"]
    if len(counters) != int(n_counters):
        fail(f"{path}: {len(counters)} counter samples, expected {n_counters}")
    for c in counters:
        if not isinstance(c.get("args"), dict) or not all(
                isinstance(v, (int, float)) for v in c["args"].values()):
            fail(f"{path}: a counter without numeric args: {c}")
            break


# ---- SVG ---------------------------------------------------------------------------------------

SVG_NS = "{http://www.w3.org/2000/svg}"
DRAWN = {"F", "B", "W", "BW", "OPT", "ROLLBACK", "SEND", "RECV", "WAIT", "MEMCPY"}


def check_svg(path, p, csv_path=None, exact=False):
    root = ET.parse(path).getroot()  # raises on XML that is not well-formed
    if root.tag != SVG_NS + "svg":
        fail(f"{path}: root element {root.tag}, expected svg")
        return
    stages = [g for g in root.iter(SVG_NS + "g") if g.get("class") == "stage"]
    if len(stages) != int(p):
        fail(f"{path}: {len(stages)} stage groups, expected {p}")
    rects = [r for r in root.iter(SVG_NS + "rect") if (r.get("class") or "").startswith("span ")]
    merged = sum(int(r.get("data-spans")) for r in rects)
    if csv_path:
        t0, t1 = int(root.get("data-t0-ns")), int(root.get("data-t1-ns"))
        kept = sum(1 for s in read_csv(csv_path)
                   if s["kind"] in DRAWN and max(s["end_ns"], s["start_ns"]) >= t0 and
                   s["start_ns"] <= t1)
        if merged != kept:
            fail(f"{path}: rects stand for {merged} spans, the window [{t0}, {t1}] holds {kept}")
    if exact and len(rects) != merged:
        fail(f"{path}: {len(rects)} rects for {merged} spans: merged where nothing is sub-pixel")
    width = float(root.get("width"))
    for r in rects:
        x, w = float(r.get("x")), float(r.get("width"))
        if w <= 0 or x < 0 or x + w > width + 1:
            fail(f"{path}: a rect outside the picture: x {x} width {w}")
            break
    text = " ".join("".join(t.itertext()) for t in root.iter(SVG_NS + "text"))
    for word in ("bubble", "measured", "predicted", "theory", "verdict", "(p-1)/"):
        if word not in text:
            fail(f"{path}: the legend does not say '{word}'")
    if not any(l.get("class") == "iteration" for l in root.iter(SVG_NS + "line")):
        fail(f"{path}: no iteration marks")


# ---- PNG ---------------------------------------------------------------------------------------

def read_png(path):
    """Width, height and rows of (r, g, b) tuples of an 8-bit RGB or RGBA PNG, white behind."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    pos, idat, hdr = 8, b"", None
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            hdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    w, h, depth, ctype, _, _, interlace = hdr
    if depth != 8 or ctype not in (2, 6) or interlace:
        raise ValueError(f"PNG of depth {depth}, colour type {ctype}, interlace {interlace}")
    bpp = 4 if ctype == 6 else 3
    raw, stride = zlib.decompress(idat), w * bpp
    rows, prev = [], bytearray(stride)
    for y in range(h):
        ft, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if ft == 1:
                line[i] = (line[i] + a) & 255
            elif ft == 2:
                line[i] = (line[i] + b) & 255
            elif ft == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif ft == 4:
                pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - 2 * c)
                pr = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                line[i] = (line[i] + pr) & 255
        prev = line
        px = []
        for x in range(w):
            r, g, bb = line[x * bpp:x * bpp + 3]
            alpha = line[x * bpp + 3] if bpp == 4 else 255
            px.append(tuple(round(v * alpha / 255 + 255 * (1 - alpha / 255)) for v in (r, g, bb)))
        rows.append(px)
    return w, h, rows


def check_png(path, p):
    w, h, rows = read_png(path)
    colours = {c for row in rows for c in row[::7]}
    if len(colours) < 5:
        fail(f"{path}: {len(colours)} colours: a blank picture")
    # A row band: pixel rows painted (not white) across most of the timeline's middle.
    x0, x1 = int(w * 0.15), int(w * 0.85)
    painted = [sum(1 for c in row[x0:x1] if min(c) < 240) > 0.5 * (x1 - x0) for row in rows]
    bands, run = [], 0
    for y, on in enumerate(painted + [False]):
        if on:
            run += 1
        elif run:
            bands.append(run)
            run = 0
    bands = [b for b in bands if b >= 8]
    if len(bands) != int(p):
        fail(f"{path}: {len(bands)} row bands (heights {bands}), expected {p}")
    elif len(set(bands)) != 1:
        fail(f"{path}: row bands of different heights {bands}")


# ---- OpenMetrics -------------------------------------------------------------------------------

NAME = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
LABEL = r"[a-zA-Z_][a-zA-Z0-9_]*"
NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?|[+-]?(?i:inf|infinity)|(?i:nan)")
TYPES = {"counter", "gauge", "histogram", "gaugehistogram", "stateset", "info", "summary",
         "unknown"}
SUFFIXES = {"gauge": [""], "info": ["_info"], "unknown": [""], "stateset": [""],
            "counter": ["_total", "_created"]}


def unescape(s, where):
    """An escaped-string's value; a quote or line break that is not escaped is a failure."""
    out, i = [], 0
    while i < len(s):
        c = s[i]
        if c == "\\":
            if i + 1 >= len(s):
                raise ValueError(f"{where}: a backslash at the end")
            n = s[i + 1]
            out.append({"n": "\n", '"': '"', "\\": "\\"}.get(n, "\\" + n))
            i += 2
        elif c in '"\n':
            raise ValueError(f"{where}: an unescaped {c!r}")
        else:
            out.append(c)
            i += 1
    return "".join(out)


def parse_labels(text, where):
    """'{a="x",b="y"}' at the start of text: (labels, the rest)."""
    labels, i = {}, 1
    if text[i] == "}":
        return labels, text[i + 1:]
    while True:
        m = re.match(LABEL, text[i:])
        if not m:
            raise ValueError(f"{where}: a bad label name at {text[i:i + 20]!r}")
        name = m.group(0)
        i += len(name)
        if text[i:i + 2] != '="':
            raise ValueError(f"{where}: label {name} without =\"")
        i += 2
        j = i
        while text[j] != '"':
            j += 2 if text[j] == "\\" else 1
        if name in labels:
            raise ValueError(f"{where}: label {name} twice")
        labels[name] = unescape(text[i:j], where)
        i = j + 1
        if text[i] == "}":
            return labels, text[i + 1:]
        if text[i] != ",":
            raise ValueError(f"{where}: labels not separated by a comma")
        i += 1


def parse_openmetrics(path):
    """Families {name: {type, unit, help, samples: [(name, labels, value)]}}, strictly."""
    with open(path, "rb") as f:
        data = f.read()
    if data.startswith(b"\xef\xbb\xbf"):
        raise ValueError("a byte order mark")
    text = data.decode("utf-8")
    if "\r" in text:
        raise ValueError("a carriage return")
    if not text.endswith("# EOF\n") and not text.endswith("# EOF"):
        raise ValueError("does not end with # EOF")
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    if lines[-1] != "# EOF":
        raise ValueError("the last line is not # EOF")
    families, order, current, done = {}, [], None, set()
    for n, line in enumerate(lines[:-1], 1):
        where = f"{path}:{n}"
        if line.startswith("#"):
            m = re.fullmatch(r"# (TYPE|UNIT|HELP) (" + NAME + r") ?(.*)", line)
            if not m:
                raise ValueError(f"{where}: a comment that is not metadata: {line!r}")
            kind, name, value = m.groups()
            if name != current:
                if name in done or name in families:
                    raise ValueError(f"{where}: family {name} interleaved or repeated")
                if current:
                    done.add(current)
                current = name
                families[name] = {"type": "unknown", "unit": "", "help": "", "samples": [],
                                  "seen": set()}
                order.append(name)
            fam = families[name]
            if fam["samples"]:
                raise ValueError(f"{where}: metadata after {name}'s samples")
            if kind in fam["seen"]:
                raise ValueError(f"{where}: two {kind} lines for {name}")
            fam["seen"].add(kind)
            if kind == "TYPE":
                if value not in TYPES:
                    raise ValueError(f"{where}: unknown type {value}")
                fam["type"] = value
            elif kind == "UNIT":
                if not re.fullmatch(r"[a-zA-Z0-9_:]*", value):
                    raise ValueError(f"{where}: bad unit {value!r}")
                if value and not name.endswith("_" + value):
                    raise ValueError(f"{where}: unit {value} is not the suffix of {name}")
                fam["unit"] = value
            else:
                fam["help"] = unescape(value, where)
            continue
        m = re.match(NAME, line)
        if not m:
            raise ValueError(f"{where}: not a sample: {line!r}")
        sname, rest = m.group(0), line[m.end():]
        labels = {}
        if rest.startswith("{"):
            labels, rest = parse_labels(rest, where)
        if not rest.startswith(" "):
            raise ValueError(f"{where}: no space before the value")
        parts = rest[1:].split(" ")
        if len(parts) > 2 or not NUMBER.fullmatch(parts[0]) or \
                (len(parts) == 2 and not NUMBER.fullmatch(parts[1])):
            raise ValueError(f"{where}: a bad value or timestamp: {rest!r}")
        if current is None:
            raise ValueError(f"{where}: a sample before any family")
        fam = families[current]
        if not any(sname == current + s for s in SUFFIXES.get(fam["type"], [""])):
            raise ValueError(f"{where}: sample {sname} does not belong to {current} "
                             f"({fam['type']})")
        key = (sname, tuple(sorted(labels.items())))
        if key in fam["seen"]:
            raise ValueError(f"{where}: a label set twice in {current}")
        fam["seen"].add(key)
        if fam["type"] == "info" and float(parts[0]) != 1:
            raise ValueError(f"{where}: an info value that is not 1")
        fam["samples"].append((sname, labels, float(parts[0])))
    return families


def close(a, b):
    return a is not None and b is not None and math.isclose(a, b, rel_tol=2e-5, abs_tol=1e-9)


def check_openmetrics(path, report_path):
    try:
        fams = parse_openmetrics(path)
    except (ValueError, IndexError, UnicodeDecodeError) as e:
        fail(f"not OpenMetrics: {e}")
        return
    with open(report_path) as f:
        rep = json.load(f)
    # Gauges only: the Prometheus text format's readers (the textfile collector) take no other
    # OpenMetrics type.
    for name, fam in fams.items():
        if fam["type"] != "gauge" or not fam["help"]:
            fail(f"{path}: {name} is a {fam['type']} or has no help")

    def values(name, label=None):
        fam = fams.get(name)
        if fam is None:
            fail(f"{path}: no family {name}")
            return {}
        for _, labels, _ in fam["samples"]:
            if labels.get("run") != rep["run"]:
                fail(f"{path}: {name} labelled run={labels.get('run')!r}, expected {rep['run']!r}")
                break
        return {labels.get(label) if label else None: v for _, labels, v in fam["samples"]}

    whole = [it for it in rep["iterations"] if not it["partial"]]
    got = values("ppscope_bubble_ratio", "iter")
    if len(got) != len(whole) or not all(close(got.get(str(it["iter"])), it["bubble"])
                                         for it in whole):
        fail(f"{path}: per-iteration bubbles {got} are not the report's")
    got = values("ppscope_iteration_window_seconds", "iter")
    if not all(close(got.get(str(it["iter"])), it["window_ns"] / 1e9) for it in whole):
        fail(f"{path}: iteration windows {got} are not the report's")
    got = values("ppscope_iteration_seconds", "iter")
    if len(whole) > 1:
        period = sum(got.values()) / len(got) if got else None
        if len(got) != len(whole) - 1 or not close(period, rep["iteration_ns"] / 1e9):
            fail(f"{path}: iteration times {got} do not average the report's "
                 f"iteration_ns {rep['iteration_ns']}")
    got = values("ppscope_stage_idle_ratio", "stage")
    if len(got) != len(rep["stages"]) or not all(close(got.get(str(s["stage"])), s["idle_frac"])
                                                 for s in rep["stages"]):
        fail(f"{path}: stage idle {got} is not the report's")
    pred = rep["prediction"] or {}
    for name, want in (("ppscope_mean_bubble_ratio", rep["bubble"]),
                       ("ppscope_steady_bubble_ratio", rep["steady_bubble"]),
                       ("ppscope_predicted_bubble_ratio", rep["predicted_bubble"]),
                       ("ppscope_predicted_steady_bubble_ratio", pred.get("steady_bubble")),
                       ("ppscope_run_iteration_seconds",
                        rep["iteration_ns"] / 1e9 if rep["iteration_ns"] is not None else None),
                       ("ppscope_predicted_iteration_seconds",
                        pred["iteration_ns"] / 1e9 if pred.get("iteration_ns") else None)):
        got = values(name).get(None)
        if want is None and got is not None or want is not None and not close(got, want):
            fail(f"{path}: {name} is {got}, the report says {want}")
    got = values("ppscope_theory_bubble_ratio", "formula")
    exact = "(p-1)/(v*m+p-1)" if rep["v"] > 1 else "(p-1)/(m+p-1)"
    if not close(got.get("(p-1)/m"), rep["bubble_quoted"]) or \
            not close(got.get(exact), rep["bubble_exact"]):
        fail(f"{path}: theory {got} is not the report's")
    info = fams.get("ppscope_run_info", {}).get("samples", [])
    if len(info) != 1 or info[0][1].get("schedule") != rep["schedule"] or \
            info[0][1].get("p") != str(rep["p"]) or info[0][1].get("verdict_text") != \
            rep["verdict"]["text"]:
        fail(f"{path}: ppscope_run_info {info} does not describe the run")
    flags = fams.get("ppscope_flag", {}).get("samples", [])
    if sorted(l["kind"] for _, l, _ in flags) != sorted(f["kind"] for f in rep["flags"]):
        fail(f"{path}: flags {flags} are not the report's {rep['flags']}")


# ---- the run's path in each format -------------------------------------------------------------

def check_run_label(path, kind, want):
    if kind == "openmetrics":
        fams = parse_openmetrics(path)
        got = {l["run"] for f in fams.values() for _, l, _ in f["samples"]}
    elif kind == "perfetto":
        with open(path, "rb") as f:
            got = {json.loads(f.read().decode("utf-8"))["otherData"]["run"]}
    else:
        title = ET.parse(path).getroot().find(SVG_NS + "title")
        got = {title.text[len("ppscope: "):]}
    if got != {want}:
        fail(f"{path}: the run reads back as {got}, expected {{{want!r}}}")


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    cmd, args = argv[1], argv[2:]
    if cmd == "perfetto":
        check_perfetto(*args)
    elif cmd == "svg":
        exact = "--exact" in args
        args = [a for a in args if a != "--exact"]
        check_svg(*args, exact=exact)
    elif cmd == "png":
        check_png(*args)
    elif cmd == "csv":
        check_csv(*args)
    elif cmd == "openmetrics":
        check_openmetrics(*args)
    elif cmd == "run-label":
        check_run_label(*args)
    else:
        print(f"export_check: unknown check {cmd}", file=sys.stderr)
        sys.exit(2)
    finish()


if __name__ == "__main__":
    main(sys.argv)
