#!/usr/bin/env bash
# helm lint (also --strict) of the chart with its default values and with the
# fullest values (helm/ballast/ci/full-values.yaml: every switch on).
source "$(dirname "$0")/lib.sh"

for values in "" "$chart/ci/full-values.yaml"; do
  what=${values:+with ${values#"$chart"/}}
  for strict in "" --strict; do
    # shellcheck disable=SC2086
    helm lint $strict "$chart" ${values:+-f "$values"} >"$tmp/lint" 2>&1 ||
      fail "helm lint $strict ${what:-(defaults)}: $(cat "$tmp/lint")"
    grep -q '1 chart(s) linted, 0 chart(s) failed' "$tmp/lint" || fail "unexpected lint output: $(cat "$tmp/lint")"
    pass "helm lint $strict ${what:-(defaults)}"
  done
done
# The fullest values render every optional object (the monitors and the
# PrometheusRule when the cluster serves them, the dashboards' ConfigMaps).
helm template ballast "$chart" -n ballast-system --kube-version "$kube_version" \
  --api-versions monitoring.coreos.com/v1 --api-versions monitoring.coreos.com/v1/PrometheusRule \
  -f "$chart/ci/full-values.yaml" >"$tmp/full.yaml"
kinds=$(grep '^kind:' "$tmp/full.yaml" | sort | uniq -c | awk '{ printf "%s%s=%s", sep, $3, $1; sep = "," }')
[[ $kinds == "ClusterRole=2,ClusterRoleBinding=2,ConfigMap=4,DaemonSet=3,Deployment=1,Lease=1,NetworkPolicy=1,Pod=1,PodDisruptionBudget=1,PodMonitor=2,PrometheusRule=1,Role=2,RoleBinding=2,Service=2,ServiceAccount=3,ServiceMonitor=1,WeightProfile=1" ]] ||
  fail "the fullest values rendered $kinds"
pass "the fullest values render $kinds"
