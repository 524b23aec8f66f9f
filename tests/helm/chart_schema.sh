#!/usr/bin/env bash
# values.schema.json refuses what it should, naming the key, and helm install
# refuses it before it touches a cluster (helm template shares the check).
source "$(dirname "$0")/lib.sh"

# refused WHAT MESSAGE HELM-ARGS...: helm template with these values fails
# and says MESSAGE, in the words of Helm before 3.18 ("operator.replicas: Must
# be greater than or equal to 1"), or, from 3.18 on (another JSON Schema
# library), names the same key's path ("at '/operator/replicas': minimum: got
# 0, want 1") and the property an "Additional property NAME" message names.
refused() {
  local what=$1 message=$2 path newer
  shift 2
  if helm template ballast "$chart" --kube-version "$kube_version" "$@" >/dev/null 2>"$tmp/err"; then
    fail "$what was accepted"
  fi
  if grep -qF -- "$message" "$tmp/err"; then
    pass "$what refused: $message"
    return
  fi
  path=${message%%: *}
  path=${path%% must be*}
  [[ $path == "$message" ]] && path=""
  newer="at '${path:+/${path//./\/}}'"
  grep -qF -- "$newer" "$tmp/err" || fail "$what: expected '$message' or '$newer' in: $(cat "$tmp/err")"
  if [[ $message =~ Additional\ property\ ([A-Za-z0-9]+) ]]; then
    grep -qF -- "'${BASH_REMATCH[1]}'" "$tmp/err" ||
      fail "$what: expected '${BASH_REMATCH[1]}' named in: $(cat "$tmp/err")"
  fi
  pass "$what refused: $(grep -F -- "$newer" "$tmp/err" | head -1)"
}

refused "an unknown top-level key" "Additional property replicas is not allowed" --set replicas=3
refused "an unknown nested key" "operator: Additional property replica is not allowed" --set operator.replica=3
refused "a misspelt switch" "networkPolicy: Additional property enable is not allowed" --set networkPolicy.enable=false
refused "a string for an integer" "operator.replicas: Invalid type. Expected: integer, given: string" \
  --set operator.replicas=two
refused "a string for a boolean" "rbac.create: Invalid type. Expected: boolean, given: string" \
  --set-string rbac.create=yes
refused "a port out of range" "coordinator.port: Must be less than or equal to 65535" --set coordinator.port=70000
refused "zero replicas" "operator.replicas: Must be greater than or equal to 1" --set operator.replicas=0
refused "an unknown architecture" 'worker.architectures.0 must be one of the following: "amd64", "arm64", "arm"' \
  --set-json 'worker.architectures=["riscv64"]'
refused "an unknown architecture's settings" "worker.perArchitecture: Additional property riscv64 is not allowed" \
  --set worker.perArchitecture.riscv64.image=x
refused "a bad quantity" "worker.perArchitecture.arm.resources.limits.memory: Does not match pattern" \
  --set worker.perArchitecture.arm.resources.limits.memory=lots
refused "an unknown resource" "worker.perArchitecture.arm.resources.limits: Additional property gpu is not allowed" \
  --set worker.perArchitecture.arm.resources.limits.gpu=1
refused "a URL for imageRegistry" "imageRegistry: Does not match pattern" \
  --set imageRegistry=https://ghcr.io/ballast-io
refused "an image with a tag for imageRegistry" "imageRegistry: Does not match pattern" \
  --set imageRegistry=ghcr.io/ballast-io/ballast:0.1.0
refused "a bad pull policy" "image.pullPolicy must be one of the following" --set image.pullPolicy=Sometimes
refused "a bad interval" "metrics.serviceMonitor.interval: Does not match pattern" \
  --set metrics.serviceMonitor.interval=often
refused "a slow ratio of 1 or more" "operator.nodeSlowRatio: Must be less than 1" \
  --set operator.nodeSlowRatio=1
refused "a zero status interval" "operator.statusIntervalSeconds: Must be greater than 0" \
  --set operator.statusIntervalSeconds=0
# Regression (issue 32): a table set to a boolean gave "cannot overwrite table
# with non table" and "got boolean, want object", and never named the key to use.
said() {
  local what=$1 message=$2
  shift 2
  if helm template ballast "$chart" --kube-version "$kube_version" "$@" >/dev/null 2>"$tmp/err"; then
    fail "$what was accepted"
  fi
  grep -qF -- "$message" "$tmp/err" || fail "$what: expected '$message' in: $(cat "$tmp/err")"
  pass "$what refused: $message"
}
said "leader election switched off as a boolean" "use --set operator.leaderElection.enabled=true or false" \
  --set operator.leaderElection=false
said "the probe switched off as a boolean" "use --set probe.enabled=true or false" --set probe=false
said "dashboards switched on as a boolean" "use --set dashboards.enabled=true or false" --set dashboards=true
said "two replicas without leader election" \
  "operator.replicas is 2 but operator.leaderElection.enabled is false: more than one replica needs leader election; set operator.replicas=1, or operator.leaderElection.enabled=true" \
  --set operator.leaderElection.enabled=false
said "a pod TTL below -1" "podTTLSecondsAfterFinished" --set worker.podTTLSecondsAfterFinished=-2
helm template ballast "$chart" --kube-version "$kube_version" --set operator.leaderElection.enabled=false \
  --set operator.replicas=1 >/dev/null || fail "one replica without leader election was refused"
refused "a toleration with an unknown key" "operator.tolerations.0: Additional property efect is not allowed" \
  --set-json 'operator.tolerations=[{"key":"a","operator":"Exists","efect":"NoSchedule"}]'
refused "a map for a list" "worker.architectures: Invalid type. Expected: array, given: object" \
  --set worker.architectures.a=b
refused "a zero probe interval" "probe.intervalSeconds: Must be greater than or equal to 1" \
  --set probe.intervalSeconds=0
refused "a misspelt probe switch" "probe: Additional property osfiles is not allowed" \
  --set probe.osfiles=false
# What the schema cannot say, the templates do.
refused "two equal ports" "coordinator.port (8080), health.port (8081) and metrics.port (8080) must differ" \
  --set metrics.port=8080
refused "a budget no drain could meet" "podDisruptionBudget.minAvailable (2) must be below operator.replicas (2)" \
  --set podDisruptionBudget.minAvailable=2

# And the defaults and the fullest values pass (the refusals are not the
# schema refusing everything).
helm template ballast "$chart" --kube-version "$kube_version" >/dev/null
helm template ballast "$chart" --kube-version "$kube_version" -f "$chart/ci/full-values.yaml" >/dev/null
pass "the default and the fullest values are accepted"
