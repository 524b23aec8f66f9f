# Helpers for the real-node tests (sourced after ../smoke/lib.sh, which gives
# kubectl, a namespace $ns of the test's own, fail, pass, expect_eq,
# wait_until, jp).
: "${BALLAST_TESTENV_REAL_NODES:?no real nodes in $BALLAST_TESTENV_DIR (scripts/testenv-up --real-nodes FILE)}"
read -ra real_nodes <<<"$BALLAST_TESTENV_REAL_NODES"
busybox=busybox:1.35
# The Kubernetes release of the control plane and the kubelets, as pinned in
# tests/testenv/go.mod (or k8s-1.30/go.mod with BALLAST_TESTENV_KUBE=oldest).
kube_version=$("$source_dir/scripts/testenv-build" --print-version)

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

# The chart, installed as a user installs it: the images are on the nodes
# (never pulled), and the operator goes to the node without a CPU quota when
# the node file has one (a k3s server beside the boards), by the selector
# the install guide gives for a k3s server, else wherever the scheduler
# puts it.
chart=$source_dir/helm/ballast
version=$(sed -n 's/^appVersion: *"\{0,1\}\([^"]*\)"\{0,1\}$/\1/p' "$chart/Chart.yaml")
# The images as the bed has them, for every install and upgrade of the chart
# here: the nodes import scripts/images' archives, which carry the published
# names, the chart's default imageRegistry (ghcr.io/ballast-io/ballast:VERSION),
# so no image value is set, as a user importing the archives sets none
# (docs/getting-started.md); never pulled (the bed reaches no ghcr.io).
bed_registry=ghcr.io/ballast-io
bed_image_args=(--set image.pullPolicy=Never)
helm_args=("${bed_image_args[@]}")
if [[ -n ${BALLAST_REALNODES_CONTROL:-} ]]; then
  [[ $(kubectl get node "$BALLAST_REALNODES_CONTROL" -o jsonpath='{.metadata.labels.node-role\.kubernetes\.io/control-plane}') == true ]] ||
    fail "$BALLAST_REALNODES_CONTROL should carry node-role.kubernetes.io/control-plane=true, as a k3s server does"
  helm_args+=(--set-string 'operator.nodeSelector.node-role\.kubernetes\.io/control-plane=true')
fi

# require_ballast_images: fails unless a node has both of Ballast's images.
require_ballast_images() {
  local images image
  images=$(kubectl get nodes -o jsonpath='{.items[*].status.images[*].names}')
  for image in ballast ballast-worker; do
    [[ $images == *"\"$bed_registry/$image:$version\""* ]] ||
      fail "no node has the image $image:$version (scripts/images --arch amd64, then restart the real nodes)"
  done
}

# node_import ARCHIVE NODE...: imports an image archive into each node's
# containerd, as `k3s ctr images import ARCHIVE` does on a k3s node.
node_import() {
  local archive=$1 node
  shift
  for node in "$@"; do
    ctr --address "$BALLAST_TESTENV_DIR/realnodes/$node/containerd.sock" -n k8s.io \
      images import "$archive" >/dev/null || fail "importing $archive into $node"
  done
}
