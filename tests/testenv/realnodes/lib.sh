# Helpers for the real-node tests (sourced after ../smoke/lib.sh, which gives
# kubectl, a namespace $ns of the test's own, fail, pass, expect_eq,
# wait_until, jp).
: "${BALLAST_TESTENV_REAL_NODES:?no real nodes in $BALLAST_TESTENV_DIR (scripts/testenv-up --real-nodes FILE)}"
read -ra real_nodes <<<"$BALLAST_TESTENV_REAL_NODES"
busybox=busybox:1.35

# pod_on NAME NODE SCRIPT [MORE]: a busybox pod pinned to NODE that runs
# `sh -c SCRIPT` once (restartPolicy Never, the image never pulled); MORE is
# YAML appended to the container (indented 4) or the pod spec (indented 2).
pod_on() {
  local script=${3//\'/\'\'}
  kubectl apply -n "$ns" -f - >/dev/null <<EOF
apiVersion: v1
kind: Pod
metadata: {name: $1, labels: {app: $1}}
spec:
  nodeName: $2
  restartPolicy: Never
  terminationGracePeriodSeconds: 1
  containers:
  - name: main
    image: $busybox
    imagePullPolicy: Never
    command: [sh, -c, '$script']
${4:-}
EOF
}

# phase_is POD PHASE: whether the pod is in PHASE now.
phase_is() { [[ $(kubectl get pod -n "$ns" "$1" -o jsonpath='{.status.phase}') == "$2" ]]; }

# wait_phase POD PHASE SECONDS
wait_phase() { wait_until "pod $1 $2" "$3" phase_is "$1" "$2"; }
