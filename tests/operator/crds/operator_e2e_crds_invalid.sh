#!/usr/bin/env bash
# Invalid WeightedJobs and WeightProfiles are refused by the API server with
# the message each file's "# server:" line names (testdata/invalid*/); the
# workload and items of a job cannot change.
source "$(dirname "$0")/lib.sh"

install_ballast_crds

shopt -s nullglob
count=0
for file in "$testdata"/invalid/*.yaml "$testdata"/invalid-profiles/*.yaml; do
  message=$(sed -n 's/^# server: //p' "$file")
  [[ -n $message ]] || fail "${file##*/} has no '# server:' line"
  expect_rejected "$file" "$message"
  count=$((count + 1))
done
((count >= 30)) || fail "only $count invalid files"
pass "$count invalid objects rejected with their messages"

# Immutable: the workload and the items (the checkpoint refers to them).
cat <<'YAML' | kubectl apply -n "$ns" -f - >/dev/null
apiVersion: ballast.io/v1alpha1
kind: WeightedJob
metadata: {name: fixed}
spec:
  workload: {exec: {command: ["true"]}}
  items: 10
YAML
if kubectl patch wj fixed -n "$ns" --type merge -p '{"spec":{"workload":{"exec":{"command":["false"]}}}}' \
  >"$tmp/out" 2>&1; then
  fail "the workload of a job changed"
fi
grep -qF 'workload is immutable' "$tmp/out" || fail "unexpected refusal: $(cat "$tmp/out")"
pass "the workload is immutable"
if kubectl patch wj fixed -n "$ns" --type merge -p '{"spec":{"items":20}}' >"$tmp/out" 2>&1; then
  fail "the items of a job changed"
fi
grep -qF 'items is immutable' "$tmp/out" || fail "unexpected refusal: $(cat "$tmp/out")"
pass "items is immutable"
kubectl patch wj fixed -n "$ns" --type merge \
  -p '{"spec":{"suspend":true,"leaseSeconds":60,"policy":{"name":"selfsched","chunk":2}}}' >/dev/null ||
  fail "suspend, leaseSeconds and policy cannot change"
pass "suspend, leaseSeconds and policy can change"
