#!/usr/bin/env bash
# The real nodes are Ready, schedulable, untainted, run the pinned kubelet on
# containerd, and carry the labels and emulated speed of their node file.
source "$(dirname "$0")/require_root.sh"
source "$(dirname "$0")/../smoke/lib.sh"
source "$(dirname "$0")/lib.sh"
file=${BALLAST_REAL_NODES:-$source_dir/tests/testenv/nodes/seed000-real.yaml}
node_field() { kubectl get node "$1" -o "jsonpath=$2"; }
count=0
while IFS=$'\t' read -r node speed labels; do
  count=$((count + 1))
  expect_eq "$node Ready" True "$(node_field "$node" '{.status.conditions[?(@.type=="Ready")].status}')"
  expect_eq "$node taints" "" "$(node_field "$node" '{.spec.taints}')"
  expect_eq "$node unschedulable" "" "$(node_field "$node" '{.spec.unschedulable}')"
  expect_eq "$node kubelet" "$kube_version" "$(node_field "$node" '{.status.nodeInfo.kubeletVersion}')"
  runtime=$(node_field "$node" '{.status.nodeInfo.containerRuntimeVersion}')
  [[ $runtime == containerd://* ]] || fail "$node runtime: expected containerd://..., got $runtime"
  pass "$node runtime $runtime"
  expect_eq "$node arch (the machine's)" "$(dpkg --print-architecture)" \
    "$(node_field "$node" '{.metadata.labels.kubernetes\.io/arch}')"
  IFS=, read -ra kvs <<<"$labels"
  for kv in "${kvs[@]}"; do
    key=${kv%%=*}
    expect_eq "$node label $key" "${kv#*=}" \
      "$(kubectl get node "$node" -o go-template="{{index .metadata.labels \"$key\"}}")"
  done
  if [[ $speed != 0 ]]; then
    expect_eq "$node emulated speed" "$speed" \
      "$(kubectl get node "$node" -o go-template='{{index .metadata.annotations "ballast.io/emulated-speed"}}')"
  fi
done < <(ballast-node-agent print-nodes --nodes "$file")
expect_eq "real nodes" "${#real_nodes[@]}" "$count"
