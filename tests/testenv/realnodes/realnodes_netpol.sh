#!/usr/bin/env bash
# The real nodes enforce NetworkPolicy (kube-router's controller in each
# node's network namespace): an HTTP server on each of two nodes, reached
# from a pod on either node; a deny-all-ingress policy on the namespace makes
# both servers unreachable from both pods, on the same node and across nodes;
# a policy that lets in pods labelled role=client lets in the labelled pod
# only; without the policies both servers are reachable again.
source "$(dirname "$0")/require_root.sh"
source "$(dirname "$0")/../smoke/lib.sh"
source "$(dirname "$0")/lib.sh"
((${#real_nodes[@]} >= 2)) || fail "needs two real nodes, got ${real_nodes[*]}"
node_a=${real_nodes[0]} node_b=${real_nodes[1]}

for node in a b; do
  node_var=node_$node
  pod_on "web-$node" "${!node_var}" \
    "mkdir /www && echo web-$node >/www/index.html && exec httpd -f -p 8080 -h /www"
  pod_on "probe-$node" "${!node_var}" 'exec sleep 3600'
done
for pod in web-a web-b probe-a probe-b; do
  wait_phase "$pod" Running 60
done
ip_a=$(jp pod/web-a '{.status.podIP}')
ip_b=$(jp pod/web-b '{.status.podIP}')

# reaches PROBE SERVER: whether pod PROBE gets SERVER's page (its last line,
# the server's name) over TCP: refused (the controller REJECTs), or no
# connection within 2 s (busybox's nc -w is the connect timeout), is no.
reaches() {
  local ip_var=ip_${2#web-}
  [[ $(kubectl exec -n "$ns" "$1" -- sh -c \
    "printf 'GET / HTTP/1.0\r\n\r\n' | nc -w 2 ${!ip_var} 8080 | tail -n 1" 2>/dev/null) == "$2" ]]
}
blocked() { ! reaches "$@"; }

# expect_reach PROBE SERVER yes|no: waits up to 30 s for the policy to be
# applied (the controller syncs on each change), then checks once more.
expect_reach() {
  local check=reaches
  [[ $3 == no ]] && check=blocked
  wait_until "$1 -> $2: $3" 30 "$check" "$1" "$2"
  "$check" "$1" "$2" || fail "$1 -> $2 changed back: expected $3"
}

for probe in probe-a probe-b; do
  for server in web-a web-b; do expect_reach "$probe" "$server" yes; done
done

# One controller per node, each for its own pods: a server's pod firewall
# chain is in its node's network namespace, not in the other node's.
source "$source_dir/tests/testenv/realnodes.sh"
# has_chain NODE POD: whether NODE's controller sends traffic for POD
# through a pod firewall chain.
has_chain() {
  $(realnodes_in_netns "$1") iptables -S KUBE-ROUTER-FORWARD 2>/dev/null |
    grep -qF "POD name:$2 namespace: $ns to chain KUBE-POD-FW-"
}
wait_until "web-a's chain on $node_a" 30 has_chain "$node_a" web-a
wait_until "web-b's chain on $node_b" 30 has_chain "$node_b" web-b
! has_chain "$node_a" web-b || fail "$node_a's controller has a chain for web-b, a pod of $node_b"
! has_chain "$node_b" web-a || fail "$node_b's controller has a chain for web-a, a pod of $node_a"
pass "each node's controller holds its own pods' chains only"

kubectl apply -n "$ns" -f - >/dev/null <<EOF
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: deny-ingress}
spec:
  podSelector: {}
  policyTypes: [Ingress]
EOF
for probe in probe-a probe-b; do
  for server in web-a web-b; do expect_reach "$probe" "$server" no; done
done

kubectl label pod -n "$ns" probe-b role=client >/dev/null
kubectl apply -n "$ns" -f - >/dev/null <<EOF
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: web-from-clients}
spec:
  podSelector:
    matchExpressions: [{key: app, operator: In, values: [web-a, web-b]}]
  policyTypes: [Ingress]
  ingress:
  - from: [{podSelector: {matchLabels: {role: client}}}]
    ports: [{port: 8080, protocol: TCP}]
EOF
for server in web-a web-b; do
  expect_reach probe-b "$server" yes
  expect_reach probe-a "$server" no
done

kubectl delete networkpolicy -n "$ns" deny-ingress web-from-clients >/dev/null
for server in web-a web-b; do expect_reach probe-a "$server" yes; done
