#!/usr/bin/env bash
# Batch Jobs run to the end on the emulated nodes: the real Job controller
# counts the agent's pod results (Complete after 3 successes, Failed after
# backoffLimit failures with the pods' exit codes), and the garbage collector
# removes a deleted Job's pods.
source "$(dirname "$0")/lib.sh"

# job NAME COMPLETIONS BACKOFF_LIMIT SCRIPT
job() {
  cat <<YAML | kubectl apply -n "$ns" -f - >/dev/null
apiVersion: batch/v1
kind: Job
metadata: {name: $1}
spec:
  completions: $2
  parallelism: 2
  backoffLimit: $3
  template:
    spec:
      restartPolicy: Never
      containers:
        - {name: main, image: busybox, command: [sh, -c, '$4']}
YAML
}
job ok 3 0 'exit 0'
job broken 1 1 'exit 4'
wait_until "job ok Complete" 90 kubectl wait -n "$ns" --for=condition=Complete job/ok --timeout=1s
expect_eq "ok: succeeded pods" 3 "$(jp job/ok '{.status.succeeded}')"
wait_until "job broken Failed" 90 kubectl wait -n "$ns" --for=condition=Failed job/broken --timeout=1s
expect_eq "broken: reason" BackoffLimitExceeded \
  "$(jp job/broken '{.status.conditions[?(@.type=="Failed")].reason}')"
expect_eq "broken: failed pods" 2 "$(jp job/broken '{.status.failed}')"
codes=$(kubectl get pods -n "$ns" -l job-name=broken \
  -o 'jsonpath={range .items[*]}{.status.containerStatuses[0].state.terminated.exitCode} {end}')
expect_eq "broken: exit codes" "4 4 " "$codes"

kubectl delete job ok broken -n "$ns" >/dev/null
no_pods() { [[ -z $(kubectl get pods -n "$ns" -o name) ]]; }
wait_until "the jobs' pods garbage-collected" 60 no_pods
