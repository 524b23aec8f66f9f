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
# here: the nodes import scripts/images' archives, named ballast:VERSION and
# ballast-worker:VERSION, which containerd holds as docker.io/library/...;
# the chart's default registry is the published one, ghcr.io/ballast-io
# (issue 58), which no node here has and none may pull (Never), so this is
# the one value a user importing the archives sets too (docs/getting-started.md).
bed_registry=docker.io/library
bed_image_args=(--set "imageRegistry=$bed_registry" --set image.pullPolicy=Never)
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

# node_mounts_image_volumes NODE: whether NODE reports what the operator's
# --worker-bundle=auto takes an image volume for (operator/controller/
# worker_bundle.h): a kubelet of 1.36 or later and containerd 2.1 or later.
node_mounts_image_volumes() {
  local runtime kubelet
  runtime=$(kubectl get node "$1" -o jsonpath='{.status.nodeInfo.containerRuntimeVersion}')
  kubelet=$(kubectl get node "$1" -o jsonpath='{.status.nodeInfo.kubeletVersion}')
  [[ $kubelet =~ ^v1\.([0-9]+)\. ]] && ((BASH_REMATCH[1] >= 36)) || return 1
  [[ $runtime =~ ^containerd://([0-9]+)\.([0-9]+)\. ]] || return 1
  ((BASH_REMATCH[1] > 2 || (BASH_REMATCH[1] == 2 && BASH_REMATCH[2] >= 1)))
}

# expect_worker_bundle JOB: every worker pod of JOB (an exec job in the
# user's image) got the worker's bundle as its node allows: the worker image
# as a read-only image volume, with no init container, on a node that mounts
# image volumes; the init container's copy into an emptyDir elsewhere. On a
# bed started with BALLAST_TESTENV_CONTAINERD=2 the nodes must say containerd
# 2 and every pod must use the image volume.
expect_worker_bundle() {
  local job=$1 pod node want image_volumes=0
  for pod in $(kubectl get pods -n "$ns" -l "ballast.io/job=$job" -o jsonpath='{.items[*].metadata.name}'); do
    node=$(jp "pod/$pod" '{.spec.nodeName}')
    want=init-container
    node_mounts_image_volumes "$node" && want=image-volume
    if [[ ${BALLAST_TESTENV_CONTAINERD:-1} == 2 ]]; then
      [[ $(kubectl get node "$node" -o jsonpath='{.status.nodeInfo.containerRuntimeVersion}') == containerd://2.* ]] ||
        fail "$node should run containerd 2 (BALLAST_TESTENV_CONTAINERD=2)"
      expect_eq "$job: $pod on $node (containerd 2) mounts the bundle as" image-volume "$want"
    fi
    expect_eq "$job: $pod on $node: the bundle's source" "$want" \
      "$(jp "pod/$pod" '{.metadata.annotations.ballast\.io/worker-bundle}')"
    if [[ $want == image-volume ]]; then
      image_volumes=$((image_volumes + 1))
      expect_eq "$job: $pod: init containers" "" "$(jp "pod/$pod" '{.spec.initContainers[*].name}')"
      expect_eq "$job: $pod: the bundle's volume is the worker image" "docker.io/library/ballast-worker:$version" \
        "$(jp "pod/$pod" '{.spec.volumes[?(@.name=="ballast-bundle")].image.reference}')"
      expect_eq "$job: $pod: mounted read-only" true \
        "$(jp "pod/$pod" '{.spec.containers[0].volumeMounts[?(@.name=="ballast-bundle")].readOnly}')"
    else
      expect_eq "$job: $pod: the first init container" ballast-bundle "$(jp "pod/$pod" '{.spec.initContainers[0].name}')"
      expect_eq "$job: $pod: the bundle's volume" "{}" \
        "$(jp "pod/$pod" '{.spec.volumes[?(@.name=="ballast-bundle")].emptyDir}')"
    fi
  done
  pass "$job: the worker's bundle from $image_volumes image volume(s), the other pods' by the init container"
}
