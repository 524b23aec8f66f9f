#!/usr/bin/env bash
# The documented way to install the CRDs and the raspberry-pi profile without
# the chart (docs/getting-started.md "On Kubernetes, without the chart",
# docs/operator.md) works on a cluster that has never seen the CRDs, and the
# one command it replaced does not. The shared control plane has the ballast.io CRDs
# already, so this runs the guide's own commands on copies of the CRDs and
# the profile renamed into a group and kinds of the test's own (as new to the
# API server as ballast.io is to a fresh cluster; without short names or
# categories, so that no other test's `kubectl get weightedjobs` or `wj` can
# resolve to them), and removes them at the end.
# shellcheck source=../testenv/smoke/lib.sh
source "$(dirname "$0")/../testenv/smoke/lib.sh"

group=install-${ns##*-}.ballast.test
# rename GROUP: stdin with ballast.io's group and kinds renamed.
rename() {
  sed -e "s/ballast\.io/$1/g" -e 's/WeightedJob/DocsCheckJob/g' -e 's/WeightProfile/DocsCheckProfile/g' \
    -e 's/weightedjob/docscheckjob/g' -e 's/weightprofile/docscheckprofile/g' \
    -e '/^ *shortNames:/d' -e '/^ *categories:/d'
}
mkdir -p "$tmp/fresh/crds/profiles" "$tmp/naive/crds/profiles"
for dir in fresh naive; do
  for crd in "$source_dir"/crds/*.yaml; do
    rename "$dir-$group" <"$crd" >"$tmp/$dir/crds/${crd##*/}"
  done
  rename "$dir-$group" <"$source_dir/crds/profiles/raspberry-pi.yaml" >"$tmp/$dir/crds/profiles/raspberry-pi.yaml"
done
remove_groups() {
  kubectl delete crd --ignore-not-found --wait=false \
    "docscheckjobs.fresh-$group" "docscheckprofiles.fresh-$group" \
    "docscheckjobs.naive-$group" "docscheckprofiles.naive-$group" >/dev/null 2>&1 || true
  cleanup
}
trap remove_groups EXIT

# The guide's commands, from `kubectl apply -f crds/` to the profile's.
sed -n '/^## On Kubernetes, without the chart/,/^## /p' "$source_dir/docs/getting-started.md" |
  sed -n '/^kubectl apply -f crds\/ /,/^kubectl apply -f crds\/profiles\//p' >"$tmp/readme.sh"
[[ $(grep -c '^kubectl apply' "$tmp/readme.sh") == 2 ]] ||
  fail "docs/getting-started.md: expected the apply, wait and apply commands, got: $(cat "$tmp/readme.sh")"
# kubectl wait, asked again while a new CRD has no status (it fails at once then).
grep -q '^until kubectl wait --for condition=established' "$tmp/readme.sh" ||
  fail "docs/getting-started.md: no kubectl wait in a loop: $(cat "$tmp/readme.sh")"
# docs/operator.md shows the same commands.
sed -n '/^kubectl apply -f crds\/ /,/^kubectl apply -f crds\/profiles\//p' "$source_dir/docs/operator.md" \
  >"$tmp/operator.sh"
diff <(sed 's/ *#.*//' "$tmp/readme.sh") <(sed 's/ *#.*//' "$tmp/operator.sh") ||
  fail "docs/operator.md's install commands differ from docs/getting-started.md's"
# No document shows the one command that fails.
! grep -n '^kubectl apply -f crds/ -f crds/profiles' "$source_dir/README.md" "$source_dir"/docs/*.md ||
  fail "a document still shows kubectl apply -f crds/ -f crds/profiles/ as a command"
pass "docs/getting-started.md and docs/operator.md show: $(grep -oE '^(until )?kubectl [a-z]*' "$tmp/readme.sh" | tr '\n' ' ')"

(cd "$tmp/fresh" && rename "fresh-$group" <"$tmp/readme.sh" | bash -euo pipefail) \
  >"$tmp/fresh.out" 2>&1 || fail "the guide's commands failed on a new group: $(cat "$tmp/fresh.out")"
grep -q "^docscheckprofile.fresh-$group/raspberry-pi created" "$tmp/fresh.out" ||
  fail "the profile was not created: $(cat "$tmp/fresh.out")"
pass "the guide's commands install the CRDs and the profile on a cluster new to them"

# Regression (NoMatchesForKindWeightProfileOnAFreshCluster): the single
# command the docs had fails, because kubectl looks the profile's kind up
# before its CRD is served.
if (cd "$tmp/naive" && kubectl apply -f crds/ -f crds/profiles/) >"$tmp/naive.out" 2>&1; then
  fail "kubectl apply -f crds/ -f crds/profiles/ worked on a new group: the docs' wait is no longer needed"
fi
grep -q 'no matches for kind "DocsCheckProfile"' "$tmp/naive.out" || fail "unexpected error: $(cat "$tmp/naive.out")"
pass "the one command fails on a new group: $(grep -o 'no matches for kind "DocsCheckProfile"[^"]*"[^"]*"' "$tmp/naive.out")"
