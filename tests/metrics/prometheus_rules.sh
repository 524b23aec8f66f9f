#!/usr/bin/env bash
# Ballast's Prometheus rules: they load (promtool check rules), every rules
# test case passes (promtool test rules), and a rules test can fail: a copy
# of the rules with the slow-node threshold changed fails its case.
#   usage: prometheus_rules.sh PROMETHEUS_DIR
set -euo pipefail
dir=${1:?usage: prometheus_rules.sh PROMETHEUS_DIR}
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
