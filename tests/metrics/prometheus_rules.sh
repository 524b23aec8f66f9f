#!/usr/bin/env bash
# Ballast's Prometheus rules: they load (promtool check rules), every rules
# test case passes (promtool test rules), and a rules test can fail: a copy
# of the rules with the slow-node threshold changed fails its case. Every
# alert links its runbook, a heading of docs/metrics.md (runbook_urls.py),
# and the check fails on an alert without one or with an anchor no heading has.
#   usage: prometheus_rules.sh PROMETHEUS_DIR DOCS/metrics.md
set -euo pipefail
dir=${1:?usage: prometheus_rules.sh PROMETHEUS_DIR DOCS/metrics.md}
docs=${2:?usage: prometheus_rules.sh PROMETHEUS_DIR DOCS/metrics.md}
here=$(cd "$(dirname "$0")" && pwd)
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
command -v promtool >/dev/null || fail "promtool is missing (Debian package prometheus; scripts/install-deps)"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

promtool check rules "$dir/ballast-rules.yaml" || fail "promtool check rules"
echo "ok: promtool check rules"
(cd "$dir/tests" && promtool test rules ./*.yaml) || fail "promtool test rules"
echo "ok: promtool test rules: $(ls "$dir"/tests/*.yaml | wc -l) file(s)"

# Regression: the cases see the rules' numbers (the test is not vacuous).
mkdir "$tmp/tests"
sed 's/ballast:node_speed_over_weight:ratio < 0.5/ballast:node_speed_over_weight:ratio < 0.3/' \
  "$dir/ballast-rules.yaml" >"$tmp/ballast-rules.yaml"
! cmp -s "$dir/ballast-rules.yaml" "$tmp/ballast-rules.yaml" || fail "the threshold edit changed nothing"
cp "$dir"/tests/*.yaml "$tmp/tests/"
if (cd "$tmp/tests" && promtool test rules ./*.yaml >"$tmp/out" 2>&1); then
  fail "the rules tests pass with a changed slow-node threshold"
fi
grep -q BallastNodeSlowerThanWeight "$tmp/out" || fail "the changed threshold failed another case: $(cat "$tmp/out")"
echo "ok: a changed threshold fails the slow-node case"

# Every alert's runbook_url names its own heading of docs/metrics.md.
python3 "$here/runbook_urls.py" "$dir/ballast-rules.yaml" "$docs" || fail "an alert's runbook_url"
echo "ok: every alert links its runbook in docs/metrics.md"
# Regression: the check sees an alert without a runbook_url, and one whose
# anchor is no heading of the page.
python3 - "$dir/ballast-rules.yaml" "$tmp" <<'PY'
import sys, yaml
rules = yaml.safe_load(open(sys.argv[1]))
alerts = [rule for group in rules["groups"] for rule in group["rules"] if "alert" in rule]
del alerts[0]["annotations"]["runbook_url"]
yaml.safe_dump(rules, open(f"{sys.argv[2]}/no-runbook.yaml", "w"))
rules = yaml.safe_load(open(sys.argv[1]))
alerts = [rule for group in rules["groups"] for rule in group["rules"] if "alert" in rule]
alerts[-1]["annotations"]["runbook_url"] += "-no-such-heading"
yaml.safe_dump(rules, open(f"{sys.argv[2]}/bad-anchor.yaml", "w"))
PY
first=$(awk '/- alert:/ { print $3; exit }' "$dir/ballast-rules.yaml")
last=$(awk '/- alert:/ { name = $3 } END { print name }' "$dir/ballast-rules.yaml")
if python3 "$here/runbook_urls.py" "$tmp/no-runbook.yaml" "$docs" >"$tmp/out" 2>&1; then
  fail "an alert without runbook_url passed the check"
fi
grep -q "FAIL: $first: no runbook_url" "$tmp/out" || fail "the missing runbook_url was not named: $(cat "$tmp/out")"
if python3 "$here/runbook_urls.py" "$tmp/bad-anchor.yaml" "$docs" >"$tmp/out" 2>&1; then
  fail "a runbook_url whose anchor is no heading passed the check"
fi
grep -q "FAIL: $last: runbook_url's anchor .* is no heading" "$tmp/out" ||
  fail "the wrong anchor was not named: $(cat "$tmp/out")"
echo "ok: an alert without runbook_url, or with an anchor no heading has, fails the check"
