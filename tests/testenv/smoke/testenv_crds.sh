#!/usr/bin/env bash
# The CustomResourceDefinitions in crds/ install into the real API server and
# appear in discovery; the other objects shipped in crds/ pass server-side
# validation. Also proves the API server enforces a CRD's schema and serves
# its status subresource, with a CRD of the test's own.
source "$(dirname "$0")/lib.sh"

# install_crd FILE: applies the CRDs in FILE, waits until each is Established
# and checks that discovery lists its resource. Other tests install the same
# CRDs at the same time: a create lost to one of them is retried.
install_crd() {
  retry "$1 does not apply" kubectl apply -f "$1" -o name >"$tmp/names"
  while read -r crd; do
    crd=${crd#*/}
    [[ -n $crd ]] || continue
    wait_established 30 "crd/$crd" || fail "CRD $crd from $1 is not Established"
    # Discovery can lag Established by a moment, longer on a loaded machine,
    # and another group's discovery can fail meanwhile (a CRD another test
    # creates or deletes): only this group's entry counts.
    wait_until "CRD $crd installed and in discovery" 30 discovery_lists "${crd#*.}" "${crd%%.*}"
  done <"$tmp/names"
}

# discovery_lists GROUP PLURAL: discovery, asked afresh, lists PLURAL.GROUP.
discovery_lists() {
  { kubectl api-resources --api-group="$1" -o name 2>/dev/null || true; } | grep -qx "$2.$1"
}

mapfile -t crd_files < <(grep -rlE '^kind: *CustomResourceDefinition' "$source_dir/crds" --include='*.yaml' || true)
for file in "${crd_files[@]}"; do
  install_crd "$file"
done
if ((${#crd_files[@]} == 0)); then
  echo "note: crds/ holds no CustomResourceDefinition yet"
fi
# Every other object in crds/ (the shipped WeightProfiles, ...) whose kind the
# API server now serves must pass server-side validation.
mapfile -t object_files < <(grep -rLE '^kind: *CustomResourceDefinition' "$source_dir/crds" --include='*.yaml' || true)
for file in "${object_files[@]}"; do
  kind=$(sed -n 's/^kind: *//p' "$file" | head -n 1)
  if kubectl explain "$kind" >/dev/null 2>&1; then
    # Server-side apply: the other tests apply the same objects meanwhile, and
    # a client-side apply's dry-run create then meets the one they made
    # (AlreadyExists) between its read and its create.
    # A new kind can be refused for a moment after discovery lists it.
    retry "$file fails server-side validation" \
      kubectl apply --server-side --force-conflicts --dry-run=server -n "$ns" -f "$file" >/dev/null
    pass "${file#"$source_dir"/} passes server-side validation"
  else
    echo "note: ${file#"$source_dir"/}: kind $kind is not served (its CRD is not in crds/ yet)"
  fi
done

# The test's own CRD: schema validation and the status subresource.
install_crd "$source_dir/tests/testenv/testdata/widgets-crd.yaml"
cat <<YAML | kubectl apply -n "$ns" -f - >/dev/null
apiVersion: testenv.ballast.io/v1
kind: Widget
metadata: {name: good}
spec: {replicas: 2}
YAML
pass "a valid Widget is accepted"
if kubectl apply -n "$ns" -f - 2>"$tmp/err" >/dev/null <<YAML; then
apiVersion: testenv.ballast.io/v1
kind: Widget
metadata: {name: bad}
spec: {replicas: -1}
YAML
  fail "a Widget with replicas -1 was accepted"
fi
grep -q 'should be greater than or equal to 0' "$tmp/err" || fail "unexpected rejection: $(cat "$tmp/err")"
pass "a Widget with replicas -1 is rejected by the schema"
# status is a subresource: a plain update ignores it, a status update sets it.
kubectl patch widget good -n "$ns" --type merge -p '{"status":{"ready":1}}' >/dev/null
expect_eq "status after a main-resource patch" "" "$(jp widget/good '{.status.ready}')"
kubectl patch widget good -n "$ns" --subresource status --type merge -p '{"status":{"ready":1}}' >/dev/null
expect_eq "status after a status patch" 1 "$(jp widget/good '{.status.ready}')"
expect_eq "generation after a status patch" 1 "$(jp widget/good '{.metadata.generation}')"
