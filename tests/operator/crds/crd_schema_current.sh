#!/usr/bin/env bash
# The CRD's spec.template schema is what scripts/crd-schema makes of the test
# bed's API server's OpenAPI (the committed files, crds/ and the chart's copy,
# equal its output), and each CRD stays under the 256 KiB of the annotation in
# which a client-side `kubectl apply` keeps the last applied object (the API
# server's own limit, about 1.5 MiB in etcd, is far above it).
source "$(dirname "$0")/lib.sh"

if [[ ${BALLAST_TESTENV_KUBE:-} == oldest ]]; then
  # The schema is generated from the newest release's pod (scripts/test-k8s-oldest
  # runs this against v1.30, whose pod has fewer fields).
  pass "the schema check skipped: the control plane is the oldest supported release"
else
  "$source_dir/scripts/crd-schema" --check >"$tmp/out" 2>&1 ||
    fail "the committed CRD is not scripts/crd-schema's output (run it): $(cat "$tmp/out")"
  pass "crds/ballast.io_weightedjobs.yaml and the chart's copy are scripts/crd-schema's output"
fi

for crd in "$source_dir"/crds/ballast.io_*.yaml; do
  bytes=$(python3 -c 'import json, sys, yaml; print(len(json.dumps(yaml.safe_load(open(sys.argv[1])), separators=(",", ":"))))' "$crd")
  ((bytes < 262144)) || fail "${crd##*/} is $bytes bytes as JSON, over the 262144 of kubectl apply's annotation"
  pass "${crd##*/}: $bytes bytes as JSON (< 262144)"
done
