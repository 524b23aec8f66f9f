#!/usr/bin/env bash
# The CRDs install and are Established; discovery lists both kinds with their
# short names and scopes; `kubectl explain` reads well; the raspberry-pi
# WeightProfile that ships with the CRDs applies and gets its defaults.
source "$(dirname "$0")/lib.sh"

install_ballast_crds
pass "the CRDs are Established"

kubectl api-resources --api-group=ballast.io --no-headers >"$tmp/resources"
grep -qE '^weightedjobs +wj +ballast.io/v1alpha1 +true +WeightedJob$' "$tmp/resources" ||
  fail "discovery: no namespaced weightedjobs (wj): $(cat "$tmp/resources")"
grep -qE '^weightprofiles +wp +ballast.io/v1alpha1 +false +WeightProfile$' "$tmp/resources" ||
  fail "discovery: no cluster-scoped weightprofiles (wp): $(cat "$tmp/resources")"
pass "discovery: weightedjobs (wj, namespaced), weightprofiles (wp, cluster)"
kubectl get ballast -n "$ns" >/dev/null 2>&1 || fail "category ballast is not served"
pass "kubectl get ballast (the category) works"

# explain: descriptions and fields, at every level a user asks about. The
# API server republishes its OpenAPI a moment after a CRD changes (and other
# tests apply these CRDs too), so each check is retried for a while.
# explain_has FIELD TEXT...: `kubectl explain FIELD` shows every TEXT line.
explain_has() {
  local field=$1 deadline=$((SECONDS + 30)) text missing
  shift
  while :; do
    kubectl explain "$field" >"$tmp/explain" 2>&1 || true
    missing=
    for text in "$@"; do
      grep -qF -- "$text" "$tmp/explain" || missing=$text
    done
    [[ -n $missing ]] || break
    ((SECONDS < deadline)) || fail "kubectl explain $field lacks '$missing':
$(cat "$tmp/explain")"
    sleep 1
  done
}
explain_has weightedjob.spec.workload 'exactly one of primes, matmul or exec' 'primes	<Object>' \
  'matmul	<Object>' 'exec	<Object>' 'Count the primes below limit exactly'
pass "kubectl explain weightedjob.spec.workload reads well"
explain_has wj.spec.workload.primes.method 'ENUM:' 'sieve'
explain_has wj.spec.policy 'equal, weighted, selfsched, guided, factoring' 'minChunk	<integer>'
explain_has wj.status.conditions 'lastTransitionTime'
explain_has wp.spec.criteria.better 'min z / z'
pass "kubectl explain: primes.method, policy, status.conditions, wp criteria"

# Every field of both schemas has a description.
for crd in weightedjobs weightprofiles; do
  kubectl get crd "$crd.ballast.io" -o json >"$tmp/$crd.json"
  missing=$(python3 - "$tmp/$crd.json" <<'PY'
import json, sys
schema = json.load(open(sys.argv[1]))["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
missing = []
def walk(node, path):
    for name, prop in node.get("properties", {}).items():
        here = f"{path}.{name}"
        if name != "metadata" and not prop.get("description"):
            missing.append(here)
        walk(prop, here)
    if "items" in node:
        walk(node["items"], path + "[]")
walk(schema, "")
print(" ".join(missing))
PY
)
  [[ -z $missing ]] || fail "$crd: fields without a description: $missing"
  pass "$crd: every field has a description"
done

# The profile of seed 000 applies as a WeightProfile and gets its defaults:
# as is in a dry run, and for real under a name of this test's own (a
# cluster-scoped raspberry-pi created here would race other tests' dry runs).
profile=$crds_dir/profiles/raspberry-pi.yaml
kubectl apply --dry-run=server -f "$profile" >/dev/null || fail "raspberry-pi fails server-side validation"
pi=$ns-raspberry-pi
sed "s/^  name: raspberry-pi$/  name: $pi/" "$profile" >"$tmp/profile.yaml"
grep -q "name: $pi" "$tmp/profile.yaml" || fail "could not rename the profile"
kubectl apply -f "$tmp/profile.yaml" >/dev/null || fail "raspberry-pi does not apply"
trap 'kubectl delete wp "$pi" --ignore-not-found >/dev/null 2>&1; cleanup' EXIT
expect_eq "raspberry-pi rounding" ceil "$(kubectl get wp "$pi" -o 'jsonpath={.spec.rounding}')"
expect_eq "raspberry-pi criteria" "cpu os-bits ram control-plane sd power os-release" \
  "$(kubectl get wp "$pi" -o 'jsonpath={.spec.criteria[*].name}')"
expect_eq "raspberry-pi cpu term of the Pi 5" 9 \
  "$(kubectl get wp "$pi" -o 'jsonpath={.spec.criteria[0].terms.cortex-a76}')"
expect_eq "raspberry-pi power default" 6.4 \
  "$(kubectl get wp "$pi" -o 'jsonpath={.spec.criteria[?(@.name=="power")].default}')"
expect_eq "defaulted optional of cpu" false \
  "$(kubectl get wp "$pi" -o 'jsonpath={.spec.criteria[0].optional}')"
kubectl get wp "$pi" >"$tmp/get"
grep -qE '^NAME +ROUNDING +AGE$' "$tmp/get" || fail "kubectl get wp columns: $(cat "$tmp/get")"
grep -qE "^$pi +ceil +[0-9][0-9a-z]*\$" "$tmp/get" || fail "kubectl get wp row: $(cat "$tmp/get")"
pass "kubectl get wp shows the rounding"

# A profile of the test's own: defaults for rounding and better, then gone.
name=$ns-profile
cat <<YAML | kubectl apply -f - >/dev/null
apiVersion: ballast.io/v1alpha1
kind: WeightProfile
metadata: {name: $name}
spec:
  scale: {excellent: 9}
  criteria:
    - {name: cpu, label: ballast.io/cpu-model, type: linguistic, rank: 1, default: norm,
       terms: {cortex-a76: excellent, cortex-a72: norm, cortex-a53: 1.5}}
    - {name: sd, label: ballast.io/sd-gb, type: numeric, rank: 0.5, default: 8}
YAML
expect_eq "defaulted rounding" ceil "$(kubectl get wp "$name" -o 'jsonpath={.spec.rounding}')"
expect_eq "defaulted better" "higher higher" "$(kubectl get wp "$name" -o 'jsonpath={.spec.criteria[*].better}')"
expect_eq "a fractional term value is kept" 1.5 \
  "$(kubectl get wp "$name" -o 'jsonpath={.spec.criteria[0].terms.cortex-a53}')"
kubectl delete wp "$name" >/dev/null
