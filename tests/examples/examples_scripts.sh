#!/usr/bin/env bash
# The scripts of the examples in users' images, run on this machine as the
# worker runs them (BALLAST_ITEMS_FILE, BALLAST_RESULT_FILE, BALLAST_START),
# on inputs their makers make, a bad one among them:
# - recompress: every good archive's .zst decompresses to its original bytes,
#   the truncated one is named in failedItems by its number in the job with
#   gzip's message, the script exits 1, and a second run over the same range
#   leaves the same outputs (no .part file left);
# - anomalies: one file a run, its counts exact against a count made here,
#   and a value that is not a number fails the item naming file and line;
# - testsuite: shard-list lists the tests with their past durations, and
#   run-shard runs a shard (BALLAST_START), its counts exact, the failing test
#   named with pytest's message, nothing written in the checkout, and serves
#   shard after shard in one process as exec.serve hands them;
# - compile: every good source's object is the compiler's own for it, the
#   broken one is named in failedItems by its number in the job with the
#   compiler's error, the script exits 1, and a second run over the same
#   range leaves the same objects (no .part file left).
# Seconds; needs gzip, zstd, cc, python3 and pytest (scripts/install-deps).
set -euo pipefail
examples=$(cd "$(dirname "$0")/../../examples" && pwd)
tmp=$(mktemp -d)
trap 'chmod -R u+w "$tmp"; rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
pass() { echo "ok: $*"; }
# The files under DIR named *SUFFIX, relative and sorted, into OUT; prints
# the line of BAD (a path among them) and fails when it is missing.
list_items() {
  local dir=$1 suffix=$2 out=$3 bad=$4
  (cd "$dir" && find . -name "*$suffix" -printf '%P\n' | sort) >"$out"
  grep -qx "$bad" "$out" || fail "$(basename "$dir")'s maker made no $bad"
  grep -nx "$bad" "$out" | cut -d: -f1
}
# Runs RUN (a function) over a range with a bad item: it exits 1.
fails_one() {
  local name=$1 run=$2 status=0
  "$run" || status=$?
  [[ $status == 1 ]] || fail "$name should exit 1 when an item fails, exited $status"
}
# Runs RUN (a function) again over the same range: its outputs under DIR
# stay the same and no .part file is left.
again_the_same() {
  local name=$1 dir=$2 run=$3 before
  sums() { find "$dir" -type f -exec sha256sum {} + | sort; }
  before=$(sums)
  "$run" || true
  [[ $(sums) == "$before" ]] || fail "$name: a second run over the range changed the outputs"
  [[ -z $(find "$dir" -name '*.part') ]] || fail "$name: a .part file was left"
  pass "$name: a second run leaves the same outputs and no .part file"
}
for tool in gzip zstd cc python3; do
  command -v "$tool" >/dev/null || fail "$tool is not installed (scripts/install-deps)"
done
python3 -c 'import pytest' 2>/dev/null || fail "pytest is not installed (scripts/install-deps)"

# --- recompress ------------------------------------------------------------------
"$examples/recompress/make-archives" "$tmp/archives" --count 12 --megabytes 2 --seed 5 --corrupt >/dev/null
bad_line=$(list_items "$tmp/archives" .gz "$tmp/items" corrupt/truncated.gz)
recompress() {
  BALLAST_START=40 IN=$tmp/archives OUT=$tmp/out LEVEL=3 BALLAST_ITEMS_FILE=$tmp/items \
    BALLAST_RESULT_FILE=$tmp/result.json "$examples/recompress/recompress"
}
fails_one recompress recompress
python3 - "$tmp/result.json" "$((40 + bad_line - 1))" <<'PY' || fail "recompress's result: $(cat "$tmp/result.json")"
import json, sys
result = json.load(open(sys.argv[1]))
assert result["archives"] == 12, result
assert result["failedItems"] == [{"item": int(sys.argv[2]),
                                  "error": "gzip: corrupt/truncated.gz: unexpected end of file"}], result
PY
pass "recompress: 12 archives, the truncated one named as item $((40 + bad_line - 1)) with gzip's message"
while IFS= read -r item; do
  [[ $item == corrupt/* ]] && continue
  cmp -s <(gzip -dc "$tmp/archives/$item") <(zstd -dc "$tmp/out/${item%.gz}.zst") ||
    fail "recompress: ${item%.gz}.zst does not hold $item's bytes"
done <"$tmp/items"
[[ ! -e $tmp/out/corrupt/truncated.zst ]] || fail "recompress: the truncated archive left an output"
pass "recompress: every good archive's .zst holds its bytes"
again_the_same recompress "$tmp/out" recompress

# cost-scenario: the same archives measured one by one into a scenario that
# lists the good ones (not the corrupt one) with their sizes declared and a
# positive CPU time each as true costs.
"$examples/recompress/cost-scenario" "$tmp/archives" --level 3 --repeat 2 >"$tmp/scenario.yaml" 2>/dev/null ||
  fail "cost-scenario failed"
python3 - "$tmp/scenario.yaml" "$tmp/archives" <<'PY' || fail "cost-scenario's scenario: $(head -c 2000 "$tmp/scenario.yaml")"
import os, re, sys
text = open(sys.argv[1]).read()
listed = re.findall(r"- \{value: (\S+), cost: (\d+)\}", text)
assert len(listed) == 12, listed
for path, size in listed:
    assert not path.startswith("corrupt/"), path
    assert os.path.getsize(os.path.join(sys.argv[2], path)) == int(size), (path, size)
true = [float(x) for x in re.search(r"trueCosts: \[([^\]]*)\]", text).group(1).split(",")]
assert len(true) == 12 and all(x > 0 for x in true), true
assert "{name: run, repeat: 2}" in text, text
# The boards are the bench's node file's pool: two Pi 4B at half a core, a Pi 3B at a fifth.
nodes = re.findall(r"- name: (\S+)\n    speed: (\S+)\n", text)
assert nodes == [("pi4b-0", "0.5"), ("pi4b-1", "0.5"), ("pi3b-0", "0.2")], nodes
assert 'ballast.io/cpu-model: "cortex-a53"' in text, text
PY
pass "cost-scenario: 12 archives listed by size, each with a measured CPU time, on the bench's boards"
# A node file without the pool's facts is refused, naming the node and what it lacks.
printf 'nodes:\n  - name: pi-x\n    labels: {ballast.io/pool: seed000}\n' >"$tmp/nodes.yaml"
if message=$("$examples/recompress/cost-scenario" "$tmp/archives" --nodes "$tmp/nodes.yaml" 2>&1); then
  fail "cost-scenario took a node without its emulated speed"
fi
[[ $message == *"node 'pi-x'"*"ballast.io/emulated-speed"*"ballast.io/cpu-model"* ]] ||
  fail "cost-scenario's refusal: $message"
pass "cost-scenario: a node file lacking a board's speed or facts is refused with the node's name"

# --- anomalies -------------------------------------------------------------------
"$examples/anomalies/make-series" "$tmp/series" --count 6 --points 3000 --seed 5 --corrupt >/dev/null
anomalies() {
  printf '%s\n' "$1" >"$tmp/item"
  IN=$tmp/series BALLAST_ITEMS_FILE=$tmp/item BALLAST_RESULT_FILE=$tmp/series.json \
    python3 "$examples/anomalies/anomalies.py"
}
item=$(cd "$tmp/series" && find . -name '*.csv' -not -path './corrupt/*' -printf '%P\n' | sort | awk 'NR == 1')
anomalies "$item"
python3 - "$tmp/series/$item" "$tmp/series.json" <<'PY' || fail "anomalies' result for $item: $(cat "$tmp/series.json")"
import csv, json, sys
values = [float(row[1]) for row in list(csv.reader(open(sys.argv[1])))[1:]]
flagged = 0
for i in range(48, len(values)):
    recent = values[i - 48:i]
    mean = sum(recent) / 48
    spread = (sum((v - mean) ** 2 for v in recent) / 48) ** 0.5
    flagged += spread > 0 and abs(values[i] - mean) > 3.5 * spread
result = json.load(open(sys.argv[2]))
assert result == {"series": 1, "points": len(values), "anomalies": flagged, "longest": len(values)}, (result, flagged)
PY
pass "anomalies: $item's counts match a count made here"
status=0
anomalies corrupt/series-bad.csv 2>"$tmp/err" || status=$?
[[ $status == 1 ]] || fail "anomalies should exit 1 on a bad value, exited $status"
grep -q "^corrupt/series-bad.csv:20002: could not convert string to float: 'n/a'$" "$tmp/err" ||
  fail "anomalies should name the file and line of the bad value: $(cat "$tmp/err")"
pass "anomalies: a bad value fails the item naming its file and line"

# --- testsuite -------------------------------------------------------------------
"$examples/testsuite/make-suite" "$tmp/suite" --tests 12 --seconds 3 --seed 5 --failing >/dev/null
"$examples/testsuite/shard-list" "$tmp/suite" >"$tmp/tests.txt" 2>"$tmp/shard-list.err" ||
  fail "shard-list failed: $(cat "$tmp/shard-list.err")"
python3 - "$tmp/tests.txt" "$tmp/suite/.test_durations" <<'PY' || fail "shard-list's list: $(cat "$tmp/tests.txt")"
import json, sys
lines = [line.rstrip("\n").split("\t") for line in open(sys.argv[1])]
durations = json.load(open(sys.argv[2]))
tests = [test for _, test in lines]
assert len(tests) == 12 and len(set(tests)) == 12, tests
assert all(t.startswith("tests/test_") and "::test_" in t for t in tests), tests
recorded = [durations[t] for t in tests if t in durations]
assert len(recorded) == 10, "seed 5 makes two tests new since the durations were recorded"
mean = sum(recorded) / len(recorded)
for cost, test in lines:
    assert int(cost) == max(1, round(durations.get(test, mean) * 1000)), (cost, test)
PY
grep -q "^shard-list: 12 tests, [0-9]* without a duration (given the mean, " "$tmp/shard-list.err" ||
  fail "shard-list should say how many tests had no duration: $(cat "$tmp/shard-list.err")"
pass "shard-list: 12 tests, each at its recorded duration in ms, the two new ones at the mean"
# The failing test first, then the clean ones, from item 40 on; the share read-only.
# (First: a test outside the tests package must still import the project's
# modules from the checkout, which pytest puts on the path for tests/ only.)
{ echo regressions/test_open_bugs.py::test_encode_nan_as_null; cut -f2 "$tmp/tests.txt"; } >"$tmp/shard"
chmod -R a-w "$tmp/suite"
shard() {
  BALLAST_START=40 IN=$tmp/suite BALLAST_ITEMS_FILE=$1 BALLAST_RESULT_FILE=$tmp/shard.json \
    "$examples/testsuite/run-shard" >"$tmp/shard.out" 2>&1
}
status=0
shard "$tmp/shard" || status=$?
[[ $status == 1 ]] || fail "run-shard should exit 1 when a test fails, exited $status: $(tail -5 "$tmp/shard.out")"
cases=$(cat "$tmp/suite"/tests/test_*.py |
  awk -F'[(), ]+' '/^    record_property\("cases", / { n += $4 } END { print n }')
python3 - "$tmp/shard.json" "$cases" <<'PY' || fail "run-shard's result: $(cat "$tmp/shard.json")"
import json, sys
result = json.load(open(sys.argv[1]))
assert result == {"passed": 12, "cases": int(sys.argv[2]), "failedItems": [{
    "item": 40, "error": "regressions/test_open_bugs.py::test_encode_nan_as_null: "
                         "call: AssertionError: assert 'nan' == 'null'"}]}, result
PY
[[ -z $(find "$tmp/suite" -name __pycache__ -o -name .pytest_cache) ]] ||
  fail "run-shard wrote into the checkout: $(find "$tmp/suite" -name __pycache__ -o -name .pytest_cache)"
pass "run-shard: 12 tests passed with their $cases cases, the failing one named as item 40 with pytest's message, nothing written in the checkout"
# An empty shard (the bench times the command's start with one) runs no test.
: >"$tmp/shard-empty"
shard "$tmp/shard-empty" || fail "run-shard on an empty shard should exit 0: $(tail -5 "$tmp/shard.out")"
[[ $(cat "$tmp/shard.json") == '{"passed": 0, "cases": 0, "failedItems": []}' ]] ||
  fail "run-shard on an empty shard should report no test: $(cat "$tmp/shard.json")"
grep -q "passed\|collected" "$tmp/shard.out" &&
  fail "run-shard on an empty shard ran pytest: $(tail -3 "$tmp/shard.out")"
pass "run-shard: an empty shard runs no test and reports none"
# The failing test alone, as its retries run it.
head -1 "$tmp/shard" >"$tmp/shard-bad"
status=0
shard "$tmp/shard-bad" || status=$?
[[ $status == 1 ]] || fail "run-shard on the failing test alone should exit 1, exited $status: $(tail -5 "$tmp/shard.out")"
python3 - "$tmp/shard.json" <<'PY' || fail "run-shard's result for the failing test alone: $(cat "$tmp/shard.json")"
import json, sys
result = json.load(open(sys.argv[1]))
assert result == {"passed": 0, "cases": 0, "failedItems": [{
    "item": 40, "error": "regressions/test_open_bugs.py::test_encode_nan_as_null: "
                         "call: AssertionError: assert 'nan' == 'null'"}]}, result
PY
pass "run-shard: the failing test alone is named with pytest's message"
# A test that does not exist: pytest runs nothing, so no result and pytest's code (the range is halved).
rm -f "$tmp/shard.json"
{ head -2 "$tmp/shard"; echo tests/test_gone.py::test_gone; } >"$tmp/shard-gone"
status=0
shard "$tmp/shard-gone" || status=$?
[[ $status == 4 && ! -e $tmp/shard.json ]] ||
  fail "run-shard on a missing test should exit 4 with no result, exited $status: $(cat "$tmp/shard.json" 2>/dev/null)"
pass "run-shard: a test that does not exist leaves no result and pytest's exit code 4"
# Served (the job's serve: true): the same shards, each a line of JSON to one
# process, each answered with its exit code on descriptor 3, each result as
# its own run's, and the process exits at the end of its input.
python3 - "$examples/testsuite/run-shard" "$tmp" "$cases" <<'PY' || fail "run-shard served: $(tail -5 "$tmp/served.out")"
import json, os, subprocess, sys
script, tmp, cases = sys.argv[1], sys.argv[2], int(sys.argv[3])
answers, to_us = os.pipe()
if to_us == 3:
    to_us = os.dup(to_us)
with open(f"{tmp}/served.out", "w") as out:
    served = subprocess.Popen(
        [script], stdin=subprocess.PIPE, stdout=out, stderr=subprocess.STDOUT, close_fds=False,
        preexec_fn=lambda: os.dup2(to_us, 3), text=True,
        env=dict(os.environ, IN=f"{tmp}/suite", BALLAST_REPLY_FD="3"))
os.close(to_us)
replies = os.fdopen(answers)
bad = {"item": 40, "error": "regressions/test_open_bugs.py::test_encode_nan_as_null: "
                            "call: AssertionError: assert 'nan' == 'null'"}
for shard, code, result in [
        ("shard", 1, {"passed": 12, "cases": cases, "failedItems": [bad]}),
        ("shard-empty", 0, {"passed": 0, "cases": 0, "failedItems": []}),
        ("shard-bad", 1, {"passed": 0, "cases": 0, "failedItems": [bad]}),
        ("shard-gone", 4, None),
        ("shard", 1, {"passed": 12, "cases": cases, "failedItems": [bad]})]:
    out = f"{tmp}/served-{shard}.json"
    served.stdin.write(json.dumps({"BALLAST_START": "40", "BALLAST_END": "53",
                                   "BALLAST_ITEMS_FILE": f"{tmp}/{shard}",
                                   "BALLAST_RESULT_FILE": out}) + "\n")
    served.stdin.flush()
    answer = replies.readline()
    assert answer == f"{code}\n", (shard, answer)
    if result is None:
        assert not os.path.exists(out), shard
    else:
        assert json.load(open(out)) == result, (shard, open(out).read())
served.stdin.close()
assert served.wait(timeout=10) == 0, served.returncode
PY
pass "run-shard served: five shards in one process, each answered with its exit code and its own result; it exits at the end of its input"

# --- compile ---------------------------------------------------------------------
"$examples/compile/make-tree" "$tmp/tree" --count 10 --kilobytes 40 --seed 5 --corrupt >/dev/null
bad_line=$(list_items "$tmp/tree" .c "$tmp/sources" corrupt/broken.c)
for kind in code dispatch tables; do
  grep -rqs "($kind)" "$tmp/tree/src" || fail "make-tree made no source of the kind $kind"
done
compile() {
  BALLAST_START=40 IN=$tmp/tree OUT=$tmp/objects BALLAST_ITEMS_FILE=$tmp/sources \
    BALLAST_RESULT_FILE=$tmp/result.json "$examples/compile/compile"
}
fails_one compile compile
python3 - "$tmp/result.json" "$((40 + bad_line - 1))" <<'PY' || fail "compile's result: $(cat "$tmp/result.json")"
import json, sys
result = json.load(open(sys.argv[1]))
assert result["objects"] == 10, result
[failed] = result["failedItems"]
assert failed["item"] == int(sys.argv[2]), result
assert failed["error"].startswith("corrupt/broken.c:") and "error" in failed["error"], result
PY
pass "compile: 10 objects, the broken source named as item $((40 + bad_line - 1)) with the compiler's error"
while IFS= read -r item; do
  [[ $item == corrupt/* ]] && continue
  (cd "$tmp/tree" && cc -O2 -pipe -c "$item" -o "$tmp/own.o")
  cmp -s "$tmp/own.o" "$tmp/objects/${item%.c}.o" || fail "compile: ${item%.c}.o is not cc's object of $item"
done <"$tmp/sources"
[[ ! -e $tmp/objects/corrupt/broken.o ]] || fail "compile: the broken source left an object"
pass "compile: every good source's object is the compiler's own"
again_the_same compile "$tmp/objects" compile
