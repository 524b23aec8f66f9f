#!/usr/bin/env bash
# The emulated Raspberry Pi nodes are registered with their labels, capacity and
# allocatable, are Ready, and stay Ready: their Leases in kube-node-lease renew.
source "$(dirname "$0")/lib.sh"

nodes_file=$source_dir/tests/testenv/nodes/pi-cluster.yaml
mapfile -t names < <(sed -n 's/^  - name: *//p' "$nodes_file")
((${#names[@]} >= 4)) || fail "expected at least four nodes in $nodes_file, found ${#names[@]}"

# mebibytes QUANTITY: a memory quantity (Ki, Mi or Gi) in Mi.
mebibytes() {
  case $1 in
    *Ki) echo $((${1%Ki} / 1024)) ;;
    *Mi) echo "${1%Mi}" ;;
    *Gi) echo $((${1%Gi} * 1024)) ;;
    *) fail "unexpected memory quantity $1" ;;
  esac
}

kubectl get nodes -L kubernetes.io/arch,ballast.io/cpu-model | tee "$tmp/nodes"
for node in "${names[@]}"; do
  grep -qE "^$node +Ready " "$tmp/nodes" || fail "kubectl get nodes does not show $node Ready"
  expect_eq "$node hostname label" "$node" \
    "$(kubectl get node "$node" -o 'jsonpath={.metadata.labels.kubernetes\.io/hostname}')"
  arch=$(kubectl get node "$node" -o 'jsonpath={.metadata.labels.kubernetes\.io/arch}')
  [[ $arch == arm64 || $arch == arm ]] || fail "$node: kubernetes.io/arch is '$arch'"
  for label in cpu-model os-bits ram-mb sd-gb power-w os-release; do
    value=$(kubectl get node "$node" -o "jsonpath={.metadata.labels.ballast\.io/$label}")
    [[ -n $value ]] || fail "$node has no ballast.io/$label label"
  done
  expect_eq "$node status.nodeInfo.architecture" "$arch" \
    "$(kubectl get node "$node" -o 'jsonpath={.status.nodeInfo.architecture}')"
  expect_eq "$node capacity cpu" 4 "$(kubectl get node "$node" -o 'jsonpath={.status.capacity.cpu}')"
  # Allocatable memory is capacity minus the kubelet's eviction threshold.
  cap=$(kubectl get node "$node" -o 'jsonpath={.status.capacity.memory}')
  alloc=$(kubectl get node "$node" -o 'jsonpath={.status.allocatable.memory}')
  (($(mebibytes "$alloc") == $(mebibytes "$cap") - 100)) ||
    fail "$node: allocatable memory $alloc is not capacity $cap - 100Mi"
  kubectl get lease -n kube-node-lease "$node" >/dev/null || fail "$node has no Lease in kube-node-lease"
done
expect_eq "the Pi 3B's arch" arm "$(kubectl get node pi3b-0 -o 'jsonpath={.metadata.labels.kubernetes\.io/arch}')"

# Heartbeats: a Lease's renewTime moves within a couple of renewal intervals.
first=$(kubectl get lease -n kube-node-lease pi3b-0 -o 'jsonpath={.spec.renewTime}')
renewed() { [[ $(kubectl get lease -n kube-node-lease pi3b-0 -o 'jsonpath={.spec.renewTime}') != "$first" ]]; }
wait_until "pi3b-0's Lease renewed (was $first)" 30 renewed
# The node lifecycle controller has not tainted any node as not ready.
taints=$(kubectl get nodes -o 'jsonpath={.items[*].spec.taints}')
expect_eq "taints on the nodes" "" "$taints"
