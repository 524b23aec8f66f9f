#!/usr/bin/env bash
# A plain Pod with node affinity to one emulated Pi is bound there by the real
# scheduler, runs as a local process with its env (plain values, the downward
# API, a Secret key) and the node's CPU cgroup, and ends with its exit code:
# Failed with 3, Succeeded with 0. OnFailure restarts count.
source "$(dirname "$0")/lib.sh"

kubectl create secret generic worker-token -n "$ns" --from-literal=token=s3cret >/dev/null

# pod NAME NODE RESTART_POLICY SCRIPT: a pod pinned to NODE by affinity (not
# by nodeName: the scheduler has to bind it).
pod() {
  cat <<YAML | kubectl apply -n "$ns" -f - >/dev/null
apiVersion: v1
kind: Pod
metadata: {name: $1}
spec:
  restartPolicy: $3
  affinity:
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms:
          - matchExpressions:
              - {key: kubernetes.io/hostname, operator: In, values: [$2]}
  containers:
    - name: main
      image: busybox
      command: [sh, -c, '$4']
      terminationMessagePolicy: FallbackToLogsOnError
      env:
        - {name: MARKER, value: $tmp/$1.marker}
        - name: POD_NAME
          valueFrom: {fieldRef: {fieldPath: metadata.name}}
        - name: POD_NAMESPACE
          valueFrom: {fieldRef: {fieldPath: metadata.namespace}}
        - name: NODE_NAME
          valueFrom: {fieldRef: {fieldPath: spec.nodeName}}
        - name: POD_IP
          valueFrom: {fieldRef: {fieldPath: status.podIP}}
        - name: TOKEN
          valueFrom: {secretKeyRef: {name: worker-token, key: token}}
        - {name: GREETING, value: "hello \$(POD_NAME)"}
YAML
}
finished() { [[ $(jp "pod/$1" '{.status.phase}') =~ ^(Succeeded|Failed)$ ]]; }

pod fails pi3b-0 Never 'echo "$POD_NAME $POD_NAMESPACE $NODE_NAME $POD_IP $TOKEN $GREETING"; grep cpu /proc/self/cgroup; exit 3'
pod succeeds pi4b-1 Never 'exit 0'
pod flaky pi5-0 OnFailure 'test -f "$MARKER" && exit 0; touch "$MARKER"; exit 1'
wait_until "pod fails finished" 60 finished fails
wait_until "pod succeeds finished" 60 finished succeeds
wait_until "pod flaky finished" 60 finished flaky

expect_eq "fails: node" pi3b-0 "$(jp pod/fails '{.spec.nodeName}')"
expect_eq "fails: scheduled by" default-scheduler \
  "$(kubectl get events -n "$ns" --field-selector involvedObject.name=fails,reason=Scheduled \
    -o 'jsonpath={.items[0].reportingComponent}{.items[0].source.component}')"
expect_eq "fails: phase" Failed "$(jp pod/fails '{.status.phase}')"
expect_eq "fails: exit code" 3 "$(jp pod/fails '{.status.containerStatuses[0].state.terminated.exitCode}')"
message=$(jp pod/fails '{.status.containerStatuses[0].state.terminated.message}')
expect_eq "fails: env seen by the process" "fails $ns pi3b-0 127.0.0.1 s3cret hello fails" \
  "$(head -n 1 <<<"$message")"
if [[ -f /sys/fs/cgroup/cpu/cpu.cfs_quota_us && -w /sys/fs/cgroup/cpu ]]; then
  grep -qE ':cpu[,:].*/ballast-testenv(-[0-9]+)?/pi3b-0$' <<<"$message" ||
    fail "the process did not run in pi3b-0's cpu cgroup: $message"
  pass "the process ran in pi3b-0's cpu cgroup"
  group=/sys/fs/cgroup/cpu/ballast-testenv-$BALLAST_TESTENV_PORT_BASE/pi3b-0
  if [[ -d $group ]]; then
    expect_eq "pi3b-0's cpu quota (0.2 of a 100 ms period)" 20000 "$(<"$group/cpu.cfs_quota_us")"
    # A busy loop longer than one period's quota must be throttled.
    pod busy pi3b-0 Never 'i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done'
    wait_until "pod busy finished" 120 finished busy
    throttled=$(awk '$1 == "nr_throttled" { print $2 }' "$group/cpu.stat")
    ((throttled > 0)) || fail "pi3b-0's cgroup was never throttled"
    pass "pi3b-0's busy pod was throttled $throttled times"
  fi
fi
expect_eq "fails: pod IP" 127.0.0.1 "$(jp pod/fails '{.status.podIP}')"

expect_eq "succeeds: node" pi4b-1 "$(jp pod/succeeds '{.spec.nodeName}')"
expect_eq "succeeds: phase" Succeeded "$(jp pod/succeeds '{.status.phase}')"
expect_eq "succeeds: exit code" 0 "$(jp pod/succeeds '{.status.containerStatuses[0].state.terminated.exitCode}')"
expect_eq "succeeds: reason" Completed "$(jp pod/succeeds '{.status.containerStatuses[0].state.terminated.reason}')"

expect_eq "flaky: phase" Succeeded "$(jp pod/flaky '{.status.phase}')"
expect_eq "flaky: restarts" 1 "$(jp pod/flaky '{.status.containerStatuses[0].restartCount}')"
expect_eq "flaky: last exit code" 1 \
  "$(jp pod/flaky '{.status.containerStatuses[0].lastState.terminated.exitCode}')"

# A pod the scheduler cannot place (no node has 64 CPUs) stays Pending, unbound.
cat <<YAML | kubectl apply -n "$ns" -f - >/dev/null
apiVersion: v1
kind: Pod
metadata: {name: too-big}
spec:
  containers:
    - {name: main, image: busybox, command: ["true"], resources: {requests: {cpu: "64"}}}
YAML
unschedulable() { [[ $(jp pod/too-big '{.status.conditions[?(@.type=="PodScheduled")].reason}') == Unschedulable ]]; }
wait_until "too-big marked Unschedulable by the scheduler" 30 unschedulable
expect_eq "too-big: node" "" "$(jp pod/too-big '{.spec.nodeName}')"

# The worker image runs the locally built ballast-worker (BALLAST_WORKER_BINARY,
# build/ballast-worker under ctest), with the container's args.
cat <<YAML | kubectl apply -n "$ns" -f - >/dev/null
apiVersion: v1
kind: Pod
metadata: {name: worker}
spec:
  restartPolicy: Never
  containers:
    - {name: main, image: "registry.example/ballast/ballast-worker:dev", args: [--help]}
YAML
wait_until "pod worker finished" 60 finished worker
uid=$(jp pod/worker '{.metadata.uid}')
if [[ -x ${BALLAST_WORKER_BINARY:-} ]]; then
  expect_eq "worker: phase" Succeeded "$(jp pod/worker '{.status.phase}')"
  grep -q '^Usage: ballast-worker' "$BALLAST_TESTENV_DIR/agent/pods/${ns}_worker_$uid/main.log" ||
    fail "the worker pod did not run $BALLAST_WORKER_BINARY --help"
  pass "the worker image ran $BALLAST_WORKER_BINARY"
else
  expect_eq "worker without a local binary: reason" ContainerCannotRun \
    "$(jp pod/worker '{.status.containerStatuses[0].state.terminated.reason}')"
fi

# kubectl logs goes through the API server to the agent's kubelet log API.
expect_eq "kubectl logs fails (first line)" "fails $ns pi3b-0 127.0.0.1 s3cret hello fails" \
  "$(kubectl logs -n "$ns" fails | head -n 1)"
cat <<YAML | kubectl apply -n "$ns" -f - >/dev/null
apiVersion: v1
kind: Pod
metadata: {name: counter}
spec:
  restartPolicy: Never
  containers:
    - {name: main, image: busybox, command: [sh, -c, 'for i in 1 2 3; do echo "count \$i"; sleep 0.3; done']}
YAML
wait_until "counter running" 60 kubectl wait -n "$ns" --for=jsonpath='{.status.phase}'=Running pod/counter --timeout=1s
expect_eq "kubectl logs -f counter" "count 1 count 2 count 3" \
  "$(timeout 30 kubectl logs -f -n "$ns" counter | tr '\n' ' ' | sed 's/ $//')"
expect_eq "kubectl logs --tail 1 counter" "count 3" "$(kubectl logs --tail 1 -n "$ns" counter)"
