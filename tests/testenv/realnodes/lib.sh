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
# `sh -c SCRIPT` once (restartPolicy Never, the image never pulled, unless
# pull_policy says another imagePullPolicy); MORE is
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
    imagePullPolicy: ${pull_policy:-Never}
    command: [sh, -c, '$script']
${4:-}
EOF
}

# phase_is POD PHASE: whether the pod is in PHASE now.
phase_is() { [[ $(kubectl get pod -n "$ns" "$1" -o jsonpath='{.status.phase}') == "$2" ]]; }

# wait_phase POD PHASE SECONDS
wait_phase() { wait_until "pod $1 $2" "$3" phase_is "$1" "$2"; }

# The chart, installed as a user installs it from a registry: from the bed's
# registry (scripts/testenv-up pushed the checkout's chart and scripts/images'
# images there: docs/testenv.md, "Images"), by its OCI reference, with
# imageRegistry set to that registry, so the nodes pull the operator's and
# the workers' images as a cluster pulls them from ghcr.io; and the operator
# goes to the node without a CPU quota when the node file has one (a k3s
# server beside the boards), by the selector the install guide gives for a
# k3s server, else wherever the scheduler puts it.
: "${BALLAST_TESTENV_REGISTRY:?no registry in $BALLAST_TESTENV_DIR/env (scripts/testenv-up --real-nodes starts one)}"
registry=$BALLAST_TESTENV_REGISTRY
chart_dir=$source_dir/helm/ballast
version=$(sed -n 's/^appVersion: *"\{0,1\}\([^"]*\)"\{0,1\}$/\1/p' "$chart_dir/Chart.yaml")
chart_version=$(sed -n 's/^version: *"\{0,1\}\([^"]*\)"\{0,1\}$/\1/p' "$chart_dir/Chart.yaml")
chart=oci://$registry/charts/ballast
# Every install and upgrade of the chart names its version and the registry's
# plain HTTP (chart_args); installs also set where the images come from
# (bed_image_args): the two values a user of a registry on the LAN sets.
chart_args=(--version "$chart_version" --plain-http)
bed_registry=$registry/ballast-io
bed_image_args=(--set "imageRegistry=$bed_registry")
image_source=registry

# use_imported_images: switches this test to the path of a user without a
# registry: the chart from the checkout with its default image names
# (ghcr.io/ballast-io/..., which scripts/images' archives carry), the
# archives the bed imported into every node at its start, as k3s imports its
# images folder, never pulled.
use_imported_images() {
  chart=$chart_dir
  chart_args=()
  bed_registry=ghcr.io/ballast-io
  bed_image_args=(--set image.pullPolicy=Never)
  image_source=imported
  helm_args=("${chart_args[@]}" "${bed_image_args[@]}" "${placement_args[@]}")
}

placement_args=()
if [[ -n ${BALLAST_REALNODES_CONTROL:-} ]]; then
  [[ $(kubectl get node "$BALLAST_REALNODES_CONTROL" -o jsonpath='{.metadata.labels.node-role\.kubernetes\.io/control-plane}') == true ]] ||
    fail "$BALLAST_REALNODES_CONTROL should carry node-role.kubernetes.io/control-plane=true, as a k3s server does"
  placement_args=(--set-string 'operator.nodeSelector.node-role\.kubernetes\.io/control-plane=true')
fi
helm_args=("${chart_args[@]}" "${bed_image_args[@]}" "${placement_args[@]}")

# require_ballast_images: fails unless the registry holds both of Ballast's
# images (or, with use_imported_images, every node has both).
require_ballast_images() {
  local images image
  if [[ $image_source == registry ]]; then
    for image in ballast ballast-worker; do
      curl -sf -o /dev/null -H 'Accept: application/vnd.oci.image.index.v1+json' \
        "http://$registry/v2/ballast-io/$image/manifests/$version" ||
        fail "the registry $registry holds no ballast-io/$image:$version (scripts/images --arch amd64, then restart the real nodes)"
    done
    return
  fi
  local node
  for node in "${real_nodes[@]}"; do
    images=$(ctr --address "$BALLAST_TESTENV_DIR/realnodes/$node/containerd.sock" -n k8s.io images ls -q)
    for image in ballast ballast-worker; do
      grep -qxF "$bed_registry/$image:$version" <<<"$images" ||
        fail "$node has no image $bed_registry/$image:$version"
    done
  done
}

# pulled_images: the images of the kubelet's Pulled Events in the test's
# namespace, a line each: "pulled REF" when it pulled REF ("Successfully
# pulled image"), "present REF" when the node had it.
pulled_images() {
  kubectl get events -n "$ns" --field-selector reason=Pulled -o jsonpath='{range .items[*]}{.message}{"\n"}{end}' |
    sed -n -e 's/^Successfully pulled image "\([^"]*\)".*/pulled \1/p' \
      -e 's/^Container image "\([^"]*\)" already present.*/present \1/p' | sort -u
}

# pulled_one IMAGE: whether a Pulled Event names IMAGE.
pulled_one() { [[ $(pulled_images) == *"/$1:"* ]]; }

# expect_from_registry IMAGE...: every image named is in a Pulled Event as
# the registry's (REGISTRY/ballast-io/IMAGE:VERSION), and no other reference
# to it is: the nodes ran it as pulled from the registry (an imported
# archive would be ghcr.io/ballast-io/IMAGE).
expect_from_registry() {
  local image refs
  for image in "$@"; do
    wait_until "a Pulled Event for $image" 60 pulled_one "$image"
    refs=$(pulled_images | grep "/$image:")
    [[ $(cut -d' ' -f2 <<<"$refs" | sort -u) == "$bed_registry/$image:$version" ]] ||
      fail "$image ran from $(cut -d' ' -f2 <<<"$refs" | sort -u | paste -sd' '), not $bed_registry/$image:$version"
    pass "$image from the registry: $(paste -sd';' <<<"$refs")"
  done
}

# node_mounts_image_volumes NODE: whether NODE reports what the operator's
# --worker-bundle=auto takes an image volume for (operator/controller/
# worker_bundle.h): a kubelet of 1.36 or later and containerd 2.1 or later.
node_mounts_image_volumes() {
  local kubelet runtime
  read -r kubelet runtime < <(kubectl get node "$1" \
    -o jsonpath='{.status.nodeInfo.kubeletVersion} {.status.nodeInfo.containerRuntimeVersion}{"\n"}')
  [[ $kubelet =~ ^v1\.([0-9]+)\. ]] && ((BASH_REMATCH[1] >= 36)) || return 1
  [[ $runtime =~ ^containerd://([0-9]+)\.([0-9]+)\. ]] || return 1
  ((BASH_REMATCH[1] > 2 || (BASH_REMATCH[1] == 2 && BASH_REMATCH[2] >= 1)))
}

# expect_worker_bundle JOB: every worker pod of JOB (an exec job in the
# user's image) got the worker's bundle as its node allows: the worker image
# as a read-only image volume, with no init container, on a node that mounts
# image volumes; the init container's copy into an emptyDir elsewhere. On a
# bed started with BALLAST_TESTENV_CONTAINERD=2 the nodes must say containerd
# 2 and every pod must use the image volume. (The pods are read once, and
# each node once.)
expect_worker_bundle() {
  local job=$1 pods pod node want image_volumes=0
  local -A mounts runtimes
  pods=$(kubectl get pods -n "$ns" -l "ballast.io/job=$job" -o json)
  # of POD FILTER: a jq filter on pod POD of $pods.
  of() { jq -r --arg pod "$1" ".items[] | select(.metadata.name == \$pod) | $2" <<<"$pods"; }
  for pod in $(jq -r '.items[].metadata.name' <<<"$pods"); do
    node=$(of "$pod" .spec.nodeName)
    if [[ -z ${mounts[$node]:-} ]]; then
      mounts[$node]=init-container
      node_mounts_image_volumes "$node" && mounts[$node]=image-volume
      runtimes[$node]=$(kubectl get node "$node" -o jsonpath='{.status.nodeInfo.containerRuntimeVersion}')
    fi
    want=${mounts[$node]}
    if [[ ${BALLAST_TESTENV_CONTAINERD:-1} == 2 ]]; then
      [[ ${runtimes[$node]} == containerd://2.* ]] ||
        fail "$node should run containerd 2 (BALLAST_TESTENV_CONTAINERD=2)"
      expect_eq "$job: $pod on $node (containerd 2) mounts the bundle as" image-volume "$want"
    fi
    expect_eq "$job: $pod on $node: the bundle's source" "$want" \
      "$(of "$pod" '.metadata.annotations["ballast.io/worker-bundle"] // ""')"
    if [[ $want == image-volume ]]; then
      image_volumes=$((image_volumes + 1))
      expect_eq "$job: $pod: init containers" "" "$(of "$pod" '[.spec.initContainers[]?.name] | join(" ")')"
      expect_eq "$job: $pod: the bundle's volume is the worker image" "$bed_registry/ballast-worker:$version" \
        "$(of "$pod" '.spec.volumes[]? | select(.name == "ballast-bundle") | .image.reference')"
      expect_eq "$job: $pod: mounted read-only" true \
        "$(of "$pod" '.spec.containers[0].volumeMounts[]? | select(.name == "ballast-bundle") | .readOnly')"
    else
      expect_eq "$job: $pod: the first init container" ballast-bundle "$(of "$pod" '.spec.initContainers[0].name')"
      expect_eq "$job: $pod: the bundle's volume" "{}" \
        "$(of "$pod" '.spec.volumes[]? | select(.name == "ballast-bundle") | .emptyDir | tojson')"
    fi
  done
  pass "$job: the worker's bundle from $image_volumes image volume(s), the other pods' by the init container"
}
