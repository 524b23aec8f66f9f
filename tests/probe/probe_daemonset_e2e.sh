#!/usr/bin/env bash
# The chart's node probe end to end on the emulated Pis of the e2e control
# plane (label e2e): the probe DaemonSets, rendered from the chart, run by
# the node agent on every board, each probe pointed at the fixture tree of
# its board (the agent maps no host paths: the last --root and a
# --kubeconfig in probe.extraArgs stand in for the host's /proc and the pod's
# account). Every node gets the probe's labels; `ballast weights` marks them;
# a Pi whose hand-set label differs keeps it and gets an Event saying so;
# and a seed-000 job selecting the boards by a label only the probe writes
# (ballast.io/page-size-kb=4: not the Pi 5's 16K kernel) runs on exactly
# them with weights 5 / 5 / 1 and the exact count.
#   usage: probe_daemonset_e2e.sh BALLAST_BINARY
# shellcheck source=../operator/crds/lib.sh
source "$(dirname "$0")/../operator/crds/lib.sh"
ballast=${1:?usage: probe_daemonset_e2e.sh BALLAST_BINARY}
[[ -x $ballast ]] || fail "no ballast binary at $ballast"
nodes=(pi5-0 pi4b-0 pi4b-1 pi3b-0)
release=probe-e2e

install_ballast_crds_and_profiles

# A tree per node, under the node's name.
trees=$tmp/trees
mkdir -p "$trees"
ln -s "$source_dir/tests/probe/trees/pi5-16k" "$trees/pi5-0"
ln -s "$source_dir/tests/probe/trees/pi4b-2gb" "$trees/pi4b-0"
ln -s "$source_dir/tests/probe/trees/pi4b-2gb" "$trees/pi4b-1"
ln -s "$source_dir/tests/probe/trees/pi3b-32bit" "$trees/pi3b-0"

operator=""
release_labels() {
  # The probe's pods first (they would label again), then its field
  # manager's empty apply: the labels only it owns go, shared ones stay.
  kubectl delete daemonsets -n "$ns" -l app.kubernetes.io/component=probe --wait=true \
    --timeout=60s >/dev/null 2>&1 || true
  kubectl wait pods -n "$ns" -l app.kubernetes.io/component=probe --for=delete --timeout=60s \
    >/dev/null 2>&1 || true
  local node
  for node in "${nodes[@]}"; do
    printf '{"apiVersion":"v1","kind":"Node","metadata":{"name":"%s"}}' "$node" |
      kubectl apply --server-side --field-manager=ballast-probe -f - >/dev/null 2>&1 || true
    kubectl delete events -n default --field-selector "involvedObject.name=$node,source=ballast-probe" \
      >/dev/null 2>&1 || true
  done
  kubectl delete clusterrole,clusterrolebinding "$release-ballast-probe" >/dev/null 2>&1 || true
}
finish() {
  [[ -n $operator ]] && { kill "$operator" 2>/dev/null && wait "$operator" 2>/dev/null || true; }
  release_labels
  cleanup
}
trap finish EXIT

# pi5-0's sd-gb is set by hand to 32; its tree says 64.
expect_eq "pi5-0's hand-set ballast.io/sd-gb" 32 "$(kubectl get node pi5-0 -o jsonpath='{.metadata.labels.ballast\.io/sd-gb}')"

helm template "$release" "$source_dir/helm/ballast" -n "$ns" \
  --kube-version "$("$source_dir/scripts/testenv-build" --print-version)" \
  --show-only templates/probe.yaml --show-only templates/probe-rbac.yaml \
  --set-json "probe.extraArgs=[\"--root=$trees/\$(NODE_NAME)\",\"--kubeconfig=$BALLAST_TESTENV_DIR/kubeconfig\",\"--interval=1\",\"--metrics-listen=127.0.0.1:0\"]" \
  >"$tmp/probe.yaml" || fail "helm template"
kubectl apply -n "$ns" -f "$tmp/probe.yaml" >/dev/null
board() { kubectl get node "$1" -o jsonpath='{.metadata.labels.ballast\.io/board}'; }
# The node file gives each board its ballast.io/board already (the example
# jobs select it): the probe's own list of its labels says it applied it too.
for pair in pi5-0=pi-5 pi4b-0=pi-4b pi4b-1=pi-4b pi3b-0=pi-3b; do
  wait_until "${pair%%=*} labelled ballast.io/board=${pair#*=} by its probe pod" 90 \
    bash -c "[[ \$(kubectl get node ${pair%%=*} -o jsonpath='{.metadata.annotations.ballast\.io/probe-labels}') == *ballast.io/board* \
      && \$(kubectl get node ${pair%%=*} -o jsonpath='{.metadata.labels.ballast\.io/board}') == ${pair#*=} ]]"
done
expect_eq "pi5-0's page size" 16 "$(kubectl get node pi5-0 -o jsonpath='{.metadata.labels.ballast\.io/page-size-kb}')"
expect_eq "pi3b-0's kernel word size" 32 "$(kubectl get node pi3b-0 -o jsonpath='{.metadata.labels.ballast\.io/kernel-bits}')"
expect_eq "pi5-0's sd-gb, set by hand, kept" 32 "$(kubectl get node pi5-0 -o jsonpath='{.metadata.labels.ballast\.io/sd-gb}')"
wait_until "a Normal Event on pi5-0 naming the label left to its owner" 30 bash -c \
  "kubectl get events -n default --field-selector involvedObject.name=pi5-0,reason=LabelsSetByOthers,type=Normal \
     -o jsonpath='{.items[*].message}' | grep -q 'ballast.io/sd-gb=32 (set by .*; the probe reads 64)'"
[[ -z $(kubectl get events -n default --field-selector involvedObject.name=pi5-0,reason=ProbeFactUnknown \
  -o name) ]] || fail "a Warning on pi5-0, whose labels are all set: $(kubectl get events -n default \
  --field-selector involvedObject.name=pi5-0,reason=ProbeFactUnknown -o jsonpath='{.items[*].message}')"

# ballast weights marks the probe's values: all six on a Pi 4B, all but sd on the Pi 5.
kubectl get nodes -o yaml | "$ballast" weights --nodes - -o json 2>/dev/null >"$tmp/weights.json"
from_probe() {
  python3 -c 'import json, sys; n = {x["name"]: x for x in json.load(open(sys.argv[1]))["nodes"]}; print(",".join(n[sys.argv[2]]["from_probe"]))' \
    "$tmp/weights.json" "$1"
}
expect_eq "pi4b-0's values from the probe" "cpu,os-bits,ram,sd,power,os-release" "$(from_probe pi4b-0)"
expect_eq "pi5-0's values from the probe" "cpu,os-bits,ram,power,os-release" "$(from_probe pi5-0)"

# A seed-000 job on the boards a probe-only label selects.
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$ballast" operator -n "$ns" --coordinator-listen "127.0.0.1:$port" \
  --worker-image ballast-worker:dev >"$tmp/operator.log" 2>&1 &
operator=$!
kubectl create -n "$ns" -f - >/dev/null <<YAML
apiVersion: ballast.io/v1alpha1
kind: WeightedJob
metadata: {name: probed}
spec:
  workload: {primes: {limit: 300000, method: trial}}
  policy: adaptive
  profile: raspberry-pi
  nodeSelector: {ballast.io/page-size-kb: "4"}
YAML
wait_until "the job on the probed boards Succeeded" 180 \
  bash -c "[[ \$(kubectl get weightedjob -n '$ns' probed -o jsonpath='{.status.phase}') == Succeeded ]]"
expect_eq "primes below 300000" 25997 "$(jp weightedjob/probed '{.status.result.primes.count}')"
expect_eq "its nodes and weights" "pi3b-0=1 pi4b-0=5 pi4b-1=5" \
  "$(kubectl get weightedjob -n "$ns" probed -o json | python3 -c 'import json, sys; print(" ".join(sorted("%s=%g" % (n["name"], n["weight"]) for n in json.load(sys.stdin)["status"]["nodes"])))')"

# Releasing the field manager's labels leaves the hand-set and shared ones.
release_labels
expect_eq "pi4b-0's ballast.io/kernel-bits (the probe's alone) after release" "" \
  "$(kubectl get node pi4b-0 -o jsonpath='{.metadata.labels.ballast\.io/kernel-bits}')"
expect_eq "pi4b-0's ballast.io/board (the node file's too) after release" pi-4b "$(board pi4b-0)"
expect_eq "pi4b-0's ballast.io/cpu-model after release" cortex-a72 \
  "$(kubectl get node pi4b-0 -o jsonpath='{.metadata.labels.ballast\.io/cpu-model}')"
expect_eq "pi5-0's sd-gb after release" 32 "$(kubectl get node pi5-0 -o jsonpath='{.metadata.labels.ballast\.io/sd-gb}')"
