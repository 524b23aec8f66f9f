#!/usr/bin/env bash
# The chart's unit tests (helm/ballast/tests/*_test.yaml) with the
# helm-unittest plugin: a test for every value of values.yaml.
source "$(dirname "$0")/lib.sh"

# Every key of values.yaml is named by some suite (a new key needs a test).
python3 - "$chart" <<'PY' || fail "values.yaml has keys no unit test sets or checks"
import pathlib, re, sys, yaml
chart = pathlib.Path(sys.argv[1])
values = yaml.safe_load((chart / "values.yaml").read_text())
suites = "\n".join(p.read_text() for p in sorted((chart / "tests").glob("*_test.yaml")))
def leaves(node, prefix=""):
    for key, value in node.items():
        path = f"{prefix}{key}"
        if isinstance(value, dict) and value and key not in ("resources",):
            yield from leaves(value, path + ".")
        else:
            yield path
missing = [p for p in leaves(values)
           if not any(re.search(rf"(^|[\s{{.]){re.escape(part)}\s*:", suites)
                      for part in [p.rsplit(".", 1)[-1]]) and p not in suites]
for path in missing:
    print(f"no unit test names values key {path}", file=sys.stderr)
sys.exit(1 if missing else 0)
PY
pass "every key of values.yaml is named in a unit test"

# Every key of values.yaml has a comment line above it (the entries of a
# `resources` map are data, which the map's comment covers).
python3 - "$chart/values.yaml" <<'PY' || fail "values.yaml has keys without a comment"
import re, sys
previous, data_indent, missing = "", None, []
for number, line in enumerate(open(sys.argv[1]), 1):
    if not line.strip():
        continue
    indent = len(line) - len(line.lstrip())
    key = re.match(r"\s*([A-Za-z0-9_.-]+):", line)
    if data_indent is not None and indent <= data_indent:
        data_indent = None
    if key and data_indent is None and not previous.lstrip().startswith("#"):
        missing.append(f"values.yaml:{number}: {key.group(1)} has no comment above it")
    if key and key.group(1) == "resources" and data_indent is None:
        data_indent = indent
    previous = line
print("\n".join(missing), file=sys.stderr)
sys.exit(1 if missing else 0)
PY
pass "every key of values.yaml has a comment"

helm unittest "$chart" | tee "$tmp/out"
grep -q '^Tests: .* passed' "$tmp/out" || fail "no test ran"
