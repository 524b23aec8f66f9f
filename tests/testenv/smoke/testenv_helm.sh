#!/usr/bin/env bash
# Helm renders a chart, and the API server validates the result with
# kubectl apply --dry-run=server (nothing is created); invalid objects fail.
source "$(dirname "$0")/lib.sh"

helm version --short
(cd "$tmp" && helm create demo >/dev/null)
helm lint "$tmp/demo" >/dev/null || fail "helm lint of helm create's chart"
helm template demo "$tmp/demo" --namespace "$ns" --kube-version "$(kubectl version -o json |
  sed -n 's/.*"gitVersion": *"\(v[^"]*\)".*/\1/p' | tail -n 1)" >"$tmp/rendered.yaml"
grep -q '^kind: Deployment' "$tmp/rendered.yaml" || fail "helm template rendered no Deployment"
pass "helm template rendered $(grep -c '^kind:' "$tmp/rendered.yaml") objects"
kubectl apply --dry-run=server -n "$ns" -f "$tmp/rendered.yaml" | tee "$tmp/applied"
grep -q 'deployment.apps/demo created (server dry run)' "$tmp/applied" || fail "no server dry run of the Deployment"
expect_eq "objects actually created" "" "$(kubectl get deployments,services -n "$ns" -o name)"

# The server, not the client, rejects an invalid object.
if kubectl apply --dry-run=server -n "$ns" -f - 2>"$tmp/err" >/dev/null <<YAML; then
apiVersion: apps/v1
kind: Deployment
metadata: {name: bad}
spec:
  replicas: -1
  selector: {matchLabels: {app: bad}}
  template:
    metadata: {labels: {app: other}}
    spec: {containers: [{name: main, image: busybox}]}
YAML
  fail "an invalid Deployment passed server-side validation"
fi
grep -q 'is invalid' "$tmp/err" || fail "unexpected error: $(cat "$tmp/err")"
pass "the server rejected an invalid Deployment: $(head -c 160 "$tmp/err")"
