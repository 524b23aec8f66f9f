#!/usr/bin/env bash
# The real garbage collector: deleting an owner deletes what it owns (by
# ownerReferences, background and foreground), and leaves orphans when asked.
source "$(dirname "$0")/lib.sh"

# owned NAME OWNER: a ConfigMap owned by ConfigMap OWNER.
owned() {
  cat <<YAML | kubectl apply -n "$ns" -f - >/dev/null
apiVersion: v1
kind: ConfigMap
metadata:
  name: $1
  ownerReferences:
    - apiVersion: v1
      kind: ConfigMap
      name: $2
      uid: $(jp "configmap/$2" '{.metadata.uid}')
data: {owner: $2}
YAML
}
absent() { ! kubectl get configmap "$1" -n "$ns" >/dev/null 2>&1; }

kubectl create configmap owner -n "$ns" >/dev/null
owned child owner
owned grandchild child
kubectl delete configmap owner -n "$ns" >/dev/null
wait_until "child deleted with its owner" 30 absent child
wait_until "grandchild deleted with its owner" 30 absent grandchild

# Foreground: the owner stays (with the foregroundDeletion finalizer) until
# its dependents are gone, then goes itself.
kubectl create configmap fg-owner -n "$ns" >/dev/null
owned fg-child fg-owner
kubectl delete configmap fg-owner -n "$ns" --cascade=foreground --timeout=30s >/dev/null
absent fg-child || fail "fg-child outlived its owner's foreground deletion"
pass "foreground deletion removed fg-child before fg-owner"

# Orphan: the dependent stays and loses its ownerReference.
kubectl create configmap orphan-owner -n "$ns" >/dev/null
owned orphan orphan-owner
kubectl delete configmap orphan-owner -n "$ns" --cascade=orphan >/dev/null
no_owner() { [[ -z $(jp configmap/orphan '{.metadata.ownerReferences}') ]]; }
wait_until "orphan's ownerReference removed" 30 no_owner
absent orphan && fail "orphan was deleted despite --cascade=orphan"
pass "orphan kept"
