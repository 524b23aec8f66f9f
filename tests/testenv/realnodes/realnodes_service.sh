#!/usr/bin/env bash
# Services on the real nodes: a ClusterIP Service in front of an HTTP server
# on the first node, reached by its DNS name (the cluster DNS) from a pod on
# another node and from one on the same node, and by the server itself
# through its own Service (hairpin); the API server through the `kubernetes`
# Service, as in-cluster clients reach it.
source "$(dirname "$0")/require_root.sh"
source "$(dirname "$0")/../smoke/lib.sh"
source "$(dirname "$0")/lib.sh"
((${#real_nodes[@]} >= 2)) || fail "needs two real nodes, got ${real_nodes[*]}"
server_node=${real_nodes[0]} other_node=${real_nodes[1]}
body="served-by-$server_node-in-$ns"
pod_on web "$server_node" "mkdir /www && echo $body >/www/index.html && exec httpd -f -p 8080 -h /www"
kubectl apply -n "$ns" -f - >/dev/null <<EOF
apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  selector: {app: web}
  ports: [{port: 80, targetPort: 8080}]
EOF
wait_phase web Running 60
wait_until "endpoints of web" 30 bash -c "[[ -n \$(kubectl get endpoints -n $ns web -o jsonpath='{.subsets[0].addresses[0].ip}') ]]"
cluster_ip=$(jp service/web '{.spec.clusterIP}')
name=web.$ns.svc.cluster.local

# Debian's static busybox wget crashes with -q or -T: plain wget, output only.
fetch="nslookup $name | grep -A1 \"^Name:\" | tail -1; wget -O- http://$name/ 2>/dev/null"
pod_on client-other "$other_node" "$fetch"
pod_on client-same "$server_node" "$fetch"
pod_on client-short "$other_node" 'wget -O- http://web/ 2>/dev/null'
pod_on client-api "$other_node" \
  'wget -O- --no-check-certificate https://kubernetes.default.svc/version 2>/dev/null | grep -o "\"gitVersion\": *\"[^\"]*\""'
for client in client-other client-same client-short client-api; do
  wait_phase "$client" Succeeded 90
done
expect_eq "from $other_node by DNS name" "$(printf 'Address: %s\n%s' "$cluster_ip" "$body")" \
  "$(kubectl logs -n "$ns" client-other)"
expect_eq "from $server_node by DNS name" "$(printf 'Address: %s\n%s' "$cluster_ip" "$body")" \
  "$(kubectl logs -n "$ns" client-same)"
expect_eq "by the short name (search path)" "$body" "$(kubectl logs -n "$ns" client-short)"
expect_eq "the API server through kubernetes.default.svc" "\"gitVersion\": \"$kube_version\"" \
  "$(kubectl logs -n "$ns" client-api)"
# After the clients on its node have ended and their veths are gone: the
# bridge's MAC must not change with its ports (regression: the server's cached
# gateway MAC went stale and its lookups timed out, "bad address").
expect_eq "hairpin: the server through its own Service" "$body" \
  "$(kubectl exec -n "$ns" web -- wget -O- "http://$name/" 2>/dev/null)"

# A name that is no Service is NXDOMAIN, not a timeout.
pod_on client-missing "$other_node" "nslookup no-such-service.$ns.svc.cluster.local; echo exit=\$?"
wait_phase client-missing Succeeded 60
log=$(kubectl logs -n "$ns" client-missing)
[[ $log == *NXDOMAIN* && $log == *exit=1* ]] || fail "an unknown name should be NXDOMAIN, got: $log"
pass "unknown service: NXDOMAIN"
