#!/usr/bin/env bash
# Every job of examples/jobs/ applies as a WeightedJob (a bare spec wrapped in
# a manifest), server-side dry run and for real, and gets the CRD's defaults;
# every example in a user's image (examples/*/job.yaml) passes validation;
# a job with every key of the spec keeps them all.
source "$(dirname "$0")/lib.sh"

install_ballast_crds

# as_manifest FILE NAME: FILE as a WeightedJob manifest (bare specs wrapped).
as_manifest() {
  if grep -qE '^kind: *WeightedJob' "$1"; then
    cat "$1"
  else
    printf 'apiVersion: ballast.io/v1alpha1\nkind: WeightedJob\nmetadata:\n  name: %s\nspec:\n' "$2"
    sed -e '/^#/d' -e 's/^/  /' "$1"
  fi
}

shopt -s nullglob
examples=("$source_dir"/examples/jobs/*.yaml)
((${#examples[@]} > 0)) || fail "no examples in examples/jobs"
for file in "${examples[@]}"; do
  base=$(basename "$file" .yaml)
  as_manifest "$file" "$base" >"$tmp/$base.yaml"
  kubectl apply -n "$ns" --dry-run=server -f "$tmp/$base.yaml" >"$tmp/out" 2>&1 ||
    fail "examples/jobs/$base.yaml fails server-side validation: $(cat "$tmp/out")"
  kubectl apply -n "$ns" -f "$tmp/$base.yaml" >"$tmp/out" 2>&1 ||
    fail "examples/jobs/$base.yaml does not apply: $(cat "$tmp/out")"
  name=$(kubectl get -n "$ns" -f "$tmp/$base.yaml" -o 'jsonpath={.metadata.name}')
  # Defaults of the CRD, and what the example set kept as written.
  expect_eq "$base: leaseSeconds" 30 "$(jp "wj/$name" '{.spec.leaseSeconds}')"
  expect_eq "$base: backoffLimit" 3 "$(jp "wj/$name" '{.spec.backoffLimit}')"
  expect_eq "$base: suspend" false "$(jp "wj/$name" '{.spec.suspend}')"
  expect_eq "$base: profile" raspberry-pi "$(jp "wj/$name" '{.spec.profile}')"
  expect_eq "$base: policy" adaptive "$(jp "wj/$name" '{.spec.policy}')"
  pass "examples/jobs/$base.yaml applies with its defaults"
done
expect_eq "primes-300000: method" trial "$(jp wj/primes-300000 '{.spec.workload.primes.method}')"
expect_eq "primes-300000: checksum defaulted" true "$(jp wj/primes-300000 '{.spec.workload.primes.checksum}')"
expect_eq "matmul-4096: size" 4096 "$(jp wj/matmul-4096 '{.spec.workload.matmul.size}')"
expect_eq "exec-checksums: retries" 2 "$(jp wj/exec-checksums '{.spec.workload.exec.retries}')"
expect_eq "exec-checksums: perItem defaulted" false "$(jp wj/exec-checksums '{.spec.workload.exec.perItem}')"
# The preferred form of the pods: the template (docs/crds.md).
expect_eq "exec-checksums: the worker container's image" debian:bookworm-slim \
  "$(jp wj/exec-checksums '{.spec.template.spec.containers[0].image}')"

# The examples in users' own images (examples/<name>/job.yaml, applied as
# they ship) pass the CRD's validation as written.
users=("$source_dir"/examples/*/job.yaml)
((${#users[@]} >= 6)) || fail "expected the users' examples (thumbnails, file-digests, recompress, anomalies, testsuite, compile), found ${#users[@]}"
for file in "${users[@]}"; do
  example=examples/$(basename "$(dirname "$file")")/job.yaml
  kubectl apply -n "$ns" --dry-run=server -f "$file" >"$tmp/out" 2>&1 ||
    fail "$example fails server-side validation: $(cat "$tmp/out")"
  pass "$example passes server-side validation"
done

# The least a job can say: every default.
cat <<'YAML' | kubectl apply -n "$ns" -f - >/dev/null
apiVersion: ballast.io/v1alpha1
kind: WeightedJob
metadata: {name: minimal}
spec:
  workload:
    matmul: {size: 512, block: 128}
YAML
expect_eq "minimal: defaulted spec" \
  'adaptive raspberry-pi 30 3 false 0' \
  "$(jp wj/minimal '{.spec.policy} {.spec.profile} {.spec.leaseSeconds} {.spec.backoffLimit} {.spec.suspend} {.spec.workload.matmul.seed}')"
[[ -z $(jp wj/minimal '{.spec.items}') ]] || fail "minimal: items was defaulted"
pass "minimal: items stays unset (the workload's default applies)"

# Every key of the spec (the same file job_test parses with ballast run's parser).
kubectl apply -n "$ns" -f "$testdata/full-job.yaml" >"$tmp/out" 2>&1 ||
  fail "full-job.yaml does not apply: $(cat "$tmp/out")"
expect_eq "full-job: policy object" 'adaptive no-comp none false true false false 0.25' \
  "$(jp wj/full-job '{.spec.policy.name} {.spec.policy.label} {.spec.policy.compensation} {.spec.policy.stealing} {.spec.policy.rebalance} {.spec.policy.slowStart} {.spec.policy.hedge} {.spec.policy.minReportSeconds}')"
expect_eq "full-job: scalars" 'full-job-report 64 45 0 600 3600 true' \
  "$(jp wj/full-job '{.spec.name} {.spec.items} {.spec.leaseSeconds} {.spec.backoffLimit} {.spec.activeDeadlineSeconds} {.spec.ttlSecondsAfterFinished} {.spec.suspend}')"
expect_eq "full-job: worker" 'ghcr.io/example/ballast-worker:0.1.0 IfNotPresent 500m 256Mi' \
  "$(jp wj/full-job '{.spec.worker.image} {.spec.worker.imagePullPolicy} {.spec.worker.resources.requests.cpu} {.spec.worker.resources.limits.memory}')"
expect_eq "full-job: scheduling" 'arm64 Exists NoExecute 30' \
  "$(jp wj/full-job '{.spec.nodeSelector.kubernetes\.io/arch} {.spec.tolerations[0].operator} {.spec.tolerations[1].effect} {.spec.tolerations[1].tolerationSeconds}')"
expect_eq "full-job: exec" 'true 5 debian:bookworm-slim' \
  "$(jp wj/full-job '{.spec.workload.exec.perItem} {.spec.workload.exec.retries} {.spec.workload.exec.image}')"
expect_eq "full-job: failure policy" '3' "$(jp wj/full-job '{.spec.failurePolicy.maxFailedItems}')"
expect_eq "full-job: template" 'reports reports worker /reports reports' \
  "$(jp wj/full-job '{.spec.template.metadata.labels.team} {.spec.template.spec.serviceAccountName} {.spec.template.spec.containers[0].name} {.spec.template.spec.containers[0].volumeMounts[0].mountPath} {.spec.template.spec.volumes[0].name}')"

expect_eq "full-job: exec result" 'sum list 20 4096 /data/results' \
  "$(jp wj/full-job '{.spec.workload.exec.result.merge.bytes} {.spec.workload.exec.result.merge.errors} {.spec.workload.exec.result.listLimit} {.spec.workload.exec.result.maxBytes} {.spec.workload.exec.result.keepDir}')"

# Items listed by value, inline, strings and {value, cost} side by side.
kubectl apply -n "$ns" -f "$testdata/items-job.yaml" >"$tmp/out" 2>&1 ||
  fail "items-job.yaml does not apply: $(cat "$tmp/out")"
expect_eq "items-job: list" 'photos/a.jpg photos/b.jpg 2048000 photos/c d.jpg' \
  "$(jp wj/items-job '{.spec.itemsFrom.list[0]} {.spec.itemsFrom.list[1].value} {.spec.itemsFrom.list[1].cost} {.spec.itemsFrom.list[2].value}')"
pass "items-job: itemsFrom.list keeps strings and {value, cost}"

# Every policy name, and each policy's options in the object form.
for policy in equal weighted selfsched guided factoring mms adaptive; do
  cat <<YAML | kubectl apply -n "$ns" --dry-run=server -f - >/dev/null || fail "policy $policy refused"
apiVersion: ballast.io/v1alpha1
kind: WeightedJob
metadata: {name: policy-$policy}
spec: {workload: {primes: {limit: 1000}}, policy: $policy}
YAML
done
for policy in '{name: selfsched, chunk: 8}' '{name: mms, chunk: 4}' '{name: guided, minChunk: 2}' \
  '{name: factoring, minChunk: 3}' '{name: weighted, label: seed-000}'; do
  cat <<YAML | kubectl apply -n "$ns" --dry-run=server -f - >/dev/null || fail "policy $policy refused"
apiVersion: ballast.io/v1alpha1
kind: WeightedJob
metadata: {name: policy-object}
spec: {workload: {primes: {limit: 1000}}, policy: $policy}
YAML
done
pass "every policy name and each policy's options are accepted"
