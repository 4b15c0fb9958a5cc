#!/bin/sh
# hostile_text.sh - text out of a run (metadata, span names, paths) holding terminal escapes,
# other control bytes, invalid or truncated UTF-8 and a 1000-byte string reaches no terminal raw
# and makes no document invalid: report and its errors, report --json, view --once, merge,
# import's and export's messages, the run summary, and the four export formats, each parsed back
# by a strict parser (python3's json, xml.etree, csv). The exact escaped forms are asserted, so
# that dropping an escape fails the test.
# Usage: hostile_text.sh PATH/TO/ppscope
set -u
. "$(dirname "$0")/lib.sh"
cli_init hostile_text "$1"

for tool in python3 sqlite3; do
    if ! command -v $tool >/dev/null 2>&1; then
        echo "skipped: no $tool (scripts/install-deps.sh installs it)"
        exit 77
    fi
done

ESC=$(printf '\033')
BEL=$(printf '\007')

# check NAME PYTHON: runs the python code with the files of $T at hand (T in the environment);
# the code raises (assert) on a failure, whose message becomes the test's.
check() {
    name=$1
    shift
    if T=$T python3 -c "$1" 2>"$T/check.err"; then ok; else fail "$name: $(tail -n 3 "$T/check.err")"; fi
}

# The hostile strings, as SQLite hex blobs cast to text (sqlite3 keeps every byte):
#   TITLE  ESC ] 0;title BEL 1f1b          (retitles a terminal; in tcomm_ns, the report quotes
#                                            it as the reason it has no prediction)
#   SRC    ESC [31m src 0xff 0xe2 0x82 名前ü (colours; a lone byte; a truncated sequence; valid
#                                            UTF-8 in other scripts)
#   MODEL  U+009B (CSI as a C1 control, valid UTF-8) m
#   LONG   500 times "x" ESC: 1000 bytes
TITLE="CAST(X'1b5d303b7469746c650731663162' AS TEXT)"
SRC="CAST(X'1b5b33316d737263ffe282e5908de5898dc3bc' AS TEXT)"
MODEL="CAST(X'c29b6d' AS TEXT)"
LONG="CAST(X'$(python3 -c 'print("781b" * 500)')' AS TEXT)"
NAME="CAST(X'6b1b5d303b7469746c65071b5b33316dffe5908d' AS TEXT)"

RUN=$T/run
"$PPS" sim --schedule 1f1b -p 2 -m 2 --trace "$RUN" >/dev/null 2>"$T/err" ||
    { fail "sim: $(cat "$T/err")"; cli_finish; }
DB=$(ls "$RUN"/*.db)
sqlite3 "$DB" "
UPDATE meta SET value = $TITLE WHERE key = 'schedule';
UPDATE meta SET value = $TITLE WHERE key = 'tcomm_ns';
UPDATE meta SET value = $SRC WHERE key = 'source';
UPDATE meta SET value = $MODEL WHERE key = 'model';
UPDATE meta SET value = CAST(X'ff' AS TEXT) WHERE key = 'host';
INSERT INTO meta VALUES (0, 'file', CAST(X'e282' AS TEXT));
INSERT INTO meta VALUES (0, 'thread_name.7', $LONG);
INSERT INTO names VALUES (0, 0, $NAME);
INSERT INTO names VALUES (0, 1, $LONG);
INSERT INTO spans SELECT 12, stage, 0, -1, iter, start_ns, start_ns + 1000, -1, 0, 0, 0, 0, rank
  FROM spans WHERE kind = 1 LIMIT 1;
INSERT INTO spans SELECT 12, stage, 0, -1, iter, start_ns + 2000, start_ns + 3000, -1, 0, 1, 0, 0,
  rank FROM spans WHERE kind = 1 LIMIT 1;" 2>"$T/err" || fail "sqlite3: $(cat "$T/err")"

# What a terminal must never be sent: C0 controls but LF (and tab), DEL, C1 controls, and bytes
# that are not UTF-8. The valid part of the strings must still read.
clean='
import os, re, sys
def clean(path, allow_tab=True):
    data = open(path, "rb").read()
    text = data.decode("utf-8")  # strict: a raw 0xff fails here
    bad = re.findall("[\x00-\x08\x0b-\x1f\x7f-\x9f]", text.replace("\t", "") if allow_tab else text)
    assert not bad, "%s: control characters %r" % (path, sorted(set(bad)))
    return text
T = os.environ["T"]
'

# --- report: text, JSON, and an error that quotes a value ---
expect_exit 0 report "$RUN" && cp "$T/out" "$T/report.txt"
check "report text" "$clean
t = clean(T + '/report.txt')
want = \"predicted none: meta tcomm_ns = '\\\\x1b]0;title\\\\x071f1b' is not a duration in ns\"
assert want in t, 'report lacks %r:\\n%s' % (want, t)
"
expect_exit 0 report --json "$RUN" && cp "$T/out" "$T/report.json"
check "report --json" "$clean
import json
j = json.loads(open(T + '/report.json', 'rb').read().decode('utf-8'))
want = \"meta tcomm_ns = '\x1b]0;title\x071f1b' is not a duration in ns\"
assert j['prediction_note'] == want, repr(j['prediction_note'])
assert j['source'] == '\x1b[31msrc\ufffd\ufffd\ufffd名前ü', repr(j['source'])
"
# The JSON's escapes themselves: control characters as \u00XX, nothing raw.
if grep -q "'\\\\u001b]0;title\\\\u00071f1b'" "$T/report.json"; then ok; else
    fail "report --json: tcomm_ns not as \\u001b]0;title\\u00071f1b: $(grep -o '"prediction_note":"[^"]*"' "$T/report.json")"
fi

BADP=$T/badp
cp -r "$RUN" "$BADP"
sqlite3 "$(ls "$BADP"/*.db)" "UPDATE meta SET value = $TITLE WHERE key = 'p'"
expect_exit 2 report "$BADP" && cp "$T/err" "$T/badp.err"
check "an error quoting a value" "$clean
t = clean(T + '/badp.err')
assert 'meta p' in t and \"'\\\\x1b]0;title\\\\x071f1b'\" in t, t
"

# --- view --once ---
expect_exit 0 view --once --ascii --size 100x30 "$RUN" && cp "$T/out" "$T/view.txt"
check "view --once" "$clean
clean(T + '/view.txt')
"
# C1 controls encoded as UTF-8 (U+009B is CSI to a UTF-8 terminal), drawn in UTF-8, not --ascii.
C1RUN=$T/c1
cp -r "$RUN" "$C1RUN"
sqlite3 "$(ls "$C1RUN"/*.db)" \
    "UPDATE meta SET value = CAST(X'C29B324AC29D303B54C29CC285' AS TEXT) WHERE key = 'tcomm_ns'"
expect_exit 0 view --once --size 100x30 "$C1RUN" && cp "$T/out" "$T/view-c1.txt"
check "view --once, C1 in UTF-8" "$clean
t = clean(T + '/view-c1.txt')
assert 'tcomm_ns' in t, 'the view does not quote tcomm_ns: the case tests nothing:\n' + t
"

# --- merge, and its message about a path with an escape ---
OUT="$T/m${ESC}[31m.db"
expect_exit 0 merge "$RUN" -o "$OUT" && cp "$T/out" "$T/merge.txt"
check "merge message" "$clean
t = clean(T + '/merge.txt')
assert 'm\\\\x1b[31m.db: 1 rank' in t, t
"
expect_exit 0 report --json "$OUT" && cp "$T/out" "$T/merged.json"
check "report --json of the merged file" "$clean
import json
j = json.loads(open(T + '/merged.json', 'rb').read().decode('utf-8'))
assert j['source'] == '\x1b[31msrc\ufffd\ufffd\ufffd名前ü', repr(j['source'])
"
expect_exit 0 report "$OUT" && cp "$T/out" "$T/merged.txt"
check "report of a file whose name holds an escape" "$clean
t = clean(T + '/merged.txt')
assert 'run       ' + T + '/m\\\\x1b[31m.db (merged file' in t, t
"

# --- import: an error naming a file whose name holds an escape ---
printf 'hello, world\n' >"$T/b${ESC}]0;x${BEL}.json"
expect_exit 2 import "$T/b${ESC}]0;x${BEL}.json" -o "$T/imp" && cp "$T/err" "$T/import.err"
check "import error" "$clean
t = clean(T + '/import.err')
assert 'b\\\\x1b]0;x\\\\x07.json' in t, t
"

# --- export: each format valid whatever the strings hold, and its messages ---
E="$T/e${ESC}[31m"
expect_exit 0 export "$RUN" --perfetto "$E.json" --svg "$E.svg" --csv "$E.csv" \
    --openmetrics "$E.om" && cp "$T/out" "$T/export.txt"
check "export messages" "$clean
t = clean(T + '/export.txt')
assert 'wrote ' + T + '/e\\\\x1b[31m.json: ' in t, t
"
# Perfetto's reader takes no \u escapes: control characters there are U+FFFD, as is each byte
# that does not start a valid UTF-8 sequence.
fffd_name='k\ufffd]0;title\ufffd\ufffd[31m\ufffd名'
check "perfetto" "$clean
import json
path = T + '/e\x1b[31m.json'
j = json.loads(open(path, 'rb').read().decode('utf-8'))
names = [e.get('name') for e in j['traceEvents']]
assert '$fffd_name' in names, [n for n in names if n and n.startswith('k')]
"
check "svg" "$clean
import xml.etree.ElementTree as ET
path = T + '/e\x1b[31m.svg'
clean(path)
ET.parse(path)
"
check "csv" "$clean
import csv
path = T + '/e\x1b[31m.csv'
clean(path)
rows = list(csv.reader(open(path, encoding='utf-8', newline='')))
assert any('$fffd_name' in r for r in rows), [r for r in rows if any(f.startswith('k') for f in r)]
assert any('x\ufffd' * 500 in r for r in rows), 'the 1000-byte name is not whole'
"
check "openmetrics" "$clean
path = T + '/e\x1b[31m.om'
t = clean(path, allow_tab=False)
assert 'src\ufffd\ufffd\ufffd名前ü' in t, [l for l in t.splitlines() if 'src' in l]
"

# --- the run summary: its run directory's name holds an escape ---
R="$T/r${ESC}]0;t${BEL}"
expect_exit 0 run --backend emu -p 2 -m 2 --iters 2 --out "$R" && cp "$T/out" "$T/run.txt"
check "run summary" "$clean
t = clean(T + '/run.txt')
assert 'ppscope report ' + T + '/r\\\\x1b]0;t\\\\x07' in t, t
"

cli_finish
