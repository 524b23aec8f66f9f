#!/usr/bin/env bash
# Deleting a running pod kills its process (the whole process group) and the
# agent then removes the pod, as the kubelet does; a Deployment's pods run and
# the garbage collector removes them with it.
source "$(dirname "$0")/lib.sh"

cat <<YAML | kubectl apply -n "$ns" -f - >/dev/null
apiVersion: v1
kind: Pod
metadata: {name: sleeper}
spec:
  terminationGracePeriodSeconds: 5
  containers:
    - name: main
      image: busybox
      env: [{name: PIDFILE, value: $tmp/sleeper.pid}]
      # \$\$\$\$ is \$\$ once Kubernetes has expanded \$(VAR) references.
      command: [sh, -c, 'echo \$\$\$\$ > "\$PIDFILE"; sleep 300 & wait']
YAML
running() { [[ $(jp pod/sleeper '{.status.phase}') == Running && -s $tmp/sleeper.pid ]]; }
wait_until "sleeper Running" 60 running
pid=$(<"$tmp/sleeper.pid")
kill -0 "$pid" || fail "sleeper's process $pid is not running"
expect_eq "sleeper ready" true "$(jp pod/sleeper '{.status.containerStatuses[0].ready}')"
children_of() { cat /proc/"$1"/task/*/children 2>/dev/null; }
has_children() { [[ -n $(children_of "$1") ]]; }
wait_until "sleeper's shell $pid has started its sleep" 10 has_children "$pid"
children=$(children_of "$pid")

kubectl delete pod sleeper -n "$ns" --timeout=30s >/dev/null
pass "pod sleeper deleted (removed from the API server)"
gone() { ! kill -0 "$1" 2>/dev/null || [[ $(awk '{print $3}' "/proc/$1/stat" 2>/dev/null) == Z ]]; }
wait_until "sleeper's process $pid gone" 10 gone "$pid"
for child in $children; do
  wait_until "sleeper's child process $child gone" 10 gone "$child"
done

# A Deployment: the deployment and replicaset controllers, the scheduler and
# the agent together; deleting it lets the garbage collector take the rest.
kubectl create deployment spinner -n "$ns" --image=busybox --replicas=2 -- sh -c 'sleep 300' >/dev/null
wait_until "spinner's 2 pods available" 60 kubectl wait -n "$ns" --for=condition=Available deployment/spinner --timeout=1s
mapfile -t pids < <(kubectl get pods -n "$ns" -l app=spinner -o 'jsonpath={range .items[*]}{.status.containerStatuses[0].containerID}{"\n"}{end}' | sed 's|ballast://||')
expect_eq "spinner processes" 2 "${#pids[@]}"
kubectl delete deployment spinner -n "$ns" >/dev/null
no_pods() { [[ -z $(kubectl get pods,replicasets -n "$ns" -l app=spinner -o name) ]]; }
wait_until "spinner's replicaset and pods garbage-collected" 60 no_pods
for pid in "${pids[@]}"; do
  wait_until "spinner process $pid gone" 10 gone "$pid"
done
