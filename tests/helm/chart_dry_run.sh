#!/usr/bin/env bash
# Every manifest the chart renders is accepted by the real API server
# (kubectl apply --dry-run=server: schema, defaults, admission; nothing is
# created), for the default values and for the fullest values
# (helm/ballast/ci/full-values.yaml), in a namespace of the test's own.
# The chart's CRDs are installed first (as helm install does from crds/), and
# for the fullest values a minimal monitoring.coreos.com CRD pair, so that
# the cluster serves monitoring.coreos.com/v1 and the ServiceMonitor and
# PodMonitor render from .Capabilities, as they would on a cluster with
# prometheus-operator.
# shellcheck source=../testenv/smoke/lib.sh
source "$(dirname "$0")/../testenv/smoke/lib.sh"
chart=$source_dir/helm/ballast
export HELM_CONFIG_HOME=$tmp/helm-config HELM_CACHE_HOME=$tmp/helm-cache HELM_DATA_HOME=$tmp/helm-data

# The chart's CRDs, as helm install applies them (other tests install the
# same files from crds/; a lost create race is retried).
retry "the chart's CRDs do not apply" kubectl apply -f "$chart/crds/" >/dev/null
wait_established 30 crd/weightedjobs.ballast.io crd/weightprofiles.ballast.io ||
  fail "the CRDs are not Established"
wait_until "kind WeightProfile served" 30 kubectl get weightprofiles

# render NAME VALUES...: helm template with this cluster's version and API
# groups as the Capabilities (without them Helm assumes 1.20 and no extra
# groups). Not --validate: it would also refuse to render the raspberry-pi
# profile that other tests applied with kubectl, as helm install would.
render() {
  local name=$1 version group
  shift
  version=$(kubectl version -o json | sed -n 's/.*"gitVersion": *"\(v[^"]*\)".*/\1/p' | tail -n 1)
  local groups=()
  for group in $(kubectl api-versions); do groups+=(--api-versions "$group"); done
  # Kinds too, as helm install sees them (the PrometheusRule asks for its kind).
  # Columns: NAME [SHORTNAMES] APIVERSION NAMESPACED KIND.
  local fields
  while read -r -a fields; do
    groups+=(--api-versions "${fields[-3]}/${fields[-1]}")
  done < <(kubectl api-resources --api-group=monitoring.coreos.com --no-headers 2>/dev/null)
  helm template "$name" "$chart" --namespace "$ns" --kube-version "$version" "${groups[@]}" "$@" \
    >"$tmp/$name.yaml" 2>"$tmp/$name.err" || fail "helm template $name: $(cat "$tmp/$name.err")"
}

# dry_run NAME EXPECTED: every object of the rendering passes the server's
# dry run, and EXPECTED objects were sent.
dry_run() {
  local name=$1 expected=$2 account
  # The helm test pod names its ServiceAccount, which the ServiceAccount
  # admission plugin looks up even in a dry run: it is made for real (in
  # the test's namespace, deleted with it).
  account=$(sed -n 's/^  serviceAccountName: \(.*-selftest\)$/\1/p' "$tmp/$name.yaml")
  [[ -n $account ]] || fail "$name: no helm test pod with its ServiceAccount"
  kubectl create serviceaccount --save-config -n "$ns" "$account" >/dev/null
  kubectl apply --dry-run=server -n "$ns" -f "$tmp/$name.yaml" >"$tmp/$name.applied" 2>&1 ||
    fail "the API server refused the $name rendering: $(cat "$tmp/$name.applied")"
  local sent
  sent=$(grep -c '(server dry run)$' "$tmp/$name.applied")
  expect_eq "$name: objects accepted by the server's dry run" "$expected" "$sent"
  expect_eq "$name: objects in the rendering" "$expected" "$(grep -c '^kind:' "$tmp/$name.yaml")"
}

render defaults
# Without prometheus-operator, no monitor even when asked for.
grep -q '^kind: \(ServiceMonitor\|PodMonitor\)' "$tmp/defaults.yaml" && fail "a monitor rendered by default"
dry_run defaults 23
cat "$tmp/defaults.applied"

# The fullest values: monitors asked for; not rendered until the cluster
# serves monitoring.coreos.com/v1.
render full-without-monitoring -f "$chart/ci/full-values.yaml" --set operator.watchNamespace="$ns"
! grep -q '^kind: \(ServiceMonitor\|PodMonitor\|PrometheusRule\)' "$tmp/full-without-monitoring.yaml" ||
  fail "a monitor or rule rendered though the cluster does not serve monitoring.coreos.com/v1"
pass "no ServiceMonitor, PodMonitor or PrometheusRule while the cluster does not serve monitoring.coreos.com/v1"

# A minimal prometheus-operator API: the three kinds, any fields. Removed when
# the test ends (no other test uses it).
cleanup_monitoring() {
  kubectl delete crd servicemonitors.monitoring.coreos.com podmonitors.monitoring.coreos.com \
    prometheusrules.monitoring.coreos.com \
    --ignore-not-found --wait=false >/dev/null 2>&1 || true
  cleanup
}
trap cleanup_monitoring EXIT
for kind in ServiceMonitor PodMonitor PrometheusRule; do
  plural=${kind,,}s
  cat <<YAML
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: $plural.monitoring.coreos.com
spec:
  group: monitoring.coreos.com
  scope: Namespaced
  names: {kind: $kind, listKind: ${kind}List, plural: $plural, singular: ${kind,,}}
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema:
          type: object
          x-kubernetes-preserve-unknown-fields: true
YAML
done >"$tmp/monitoring-crds.yaml"
kubectl apply -f "$tmp/monitoring-crds.yaml" >/dev/null
kubectl wait --for condition=Established --timeout=30s \
  crd/servicemonitors.monitoring.coreos.com crd/podmonitors.monitoring.coreos.com \
  crd/prometheusrules.monitoring.coreos.com >/dev/null
wait_until "kind ServiceMonitor served" 30 kubectl get servicemonitors -n "$ns"
wait_until "kind PrometheusRule served" 30 kubectl get prometheusrules -n "$ns"

# watchNamespace: the test's namespace (the helm test's Role goes there).
render full -f "$chart/ci/full-values.yaml" --set operator.watchNamespace="$ns"
grep -q '^kind: ServiceMonitor' "$tmp/full.yaml" || fail "no ServiceMonitor with monitoring.coreos.com/v1 served"
grep -q '^kind: PodMonitor' "$tmp/full.yaml" || fail "no PodMonitor with monitoring.coreos.com/v1 served"
grep -q '^kind: PrometheusRule' "$tmp/full.yaml" || fail "no PrometheusRule with it served"
pass "ServiceMonitor, PodMonitor and PrometheusRule render once the cluster serves monitoring.coreos.com/v1"
# 26 objects, the PrometheusRule and the three dashboards' ConfigMaps.
dry_run full 30
cat "$tmp/full.applied"

# Regression: the server does refuse (the dry run is not vacuous): a
# WeightProfile the CRD's schema rejects.
sed 's/^  rounding: ceil$/  rounding: sideways/' "$chart/files/profiles/raspberry-pi.yaml" >"$tmp/bad-profile.yaml"
if kubectl apply --dry-run=server -f "$tmp/bad-profile.yaml" >"$tmp/bad.out" 2>&1; then
  fail "a profile with rounding: sideways passed the server's dry run"
fi
pass "the server refuses a bad profile: $(head -c 200 "$tmp/bad.out")"
expect_eq "objects left in $ns" "" "$(kubectl get deployments,services,pods,networkpolicies -n "$ns" -o name)"
