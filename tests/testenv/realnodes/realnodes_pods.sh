#!/usr/bin/env bash
# A busybox pod runs on each real node, with a Secret and a ConfigMap mounted
# as volumes and the downward API in its environment; its output is read back
# through the API server (kubectl logs), and kubectl exec reaches a running
# container.
source "$(dirname "$0")/require_root.sh"
source "$(dirname "$0")/../smoke/lib.sh"
source "$(dirname "$0")/lib.sh"
kubectl create secret generic token -n "$ns" --from-literal=token=s3cr3t-value >/dev/null
kubectl create configmap greeting -n "$ns" --from-literal=greeting=hello-from-a-configmap >/dev/null
more='    env:
    - {name: NODE, valueFrom: {fieldRef: {fieldPath: spec.nodeName}}}
    - {name: POD_IP, valueFrom: {fieldRef: {fieldPath: status.podIP}}}
    volumeMounts:
    - {name: secret, mountPath: /s, readOnly: true}
    - {name: config, mountPath: /c, readOnly: true}
  volumes:
  - {name: secret, secret: {secretName: token}}
  - {name: config, configMap: {name: greeting}}'
for node in "${real_nodes[@]}"; do
  pod_on "hello-$node" "$node" \
    'echo node=$NODE secret=$(cat /s/token) config=$(cat /c/greeting) ip=$(ip -o -4 addr show eth0 | awk "{print \$4}")' \
    "$more"
done
for node in "${real_nodes[@]}"; do
  wait_phase "hello-$node" Succeeded 120
  ip=$(jp "pod/hello-$node" '{.status.podIP}')
  [[ $ip == 10.244.* ]] || fail "pod on $node: expected an address of the pod network 10.244.0.0/16, got '$ip'"
  expect_eq "output of the pod on $node" \
    "node=$node secret=s3cr3t-value config=hello-from-a-configmap ip=$ip/24" \
    "$(kubectl logs -n "$ns" "hello-$node")"
done
pod_on sleeper "${real_nodes[0]}" 'exec sleep 3600'
wait_phase sleeper Running 60
# The pod's hostname is its name: the command ran in the container.
expect_eq "kubectl exec" "in sleeper" "$(kubectl exec -n "$ns" sleeper -- sh -c 'echo in $(hostname)')"
