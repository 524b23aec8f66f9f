# Real nodes of the test cluster (sourced by tests/testenv/common.sh): for each
# node of a node file a network namespace of its own, routed to the machine,
# where a real kubelet, its own containerd (runc, Debian's CNI bridge plugin),
# kube-proxy and kube-router's NetworkPolicy controller run; plus one cluster
# DNS and one image registry on the machine. docs/testenv.md, "Real nodes",
# says what each piece is and why.
#
# Only one real-node cluster runs on a machine at a time: the bridge, the
# nodes' namespaces and the kernel settings are the machine's. A lock file
# names the control plane that has them.

realnodes_bridge=ballast-br0
realnodes_host_ip=10.244.0.1 # the machine on the bridge: API server, cluster DNS
realnodes_cidr=10.244.0.0/16 # node i (from 1) gets 10.244.i.0/24, its address .1
# Node i's network namespace is ballast-rn-NODE, linked to the machine's bridge
# by the veth ballast-rnI (its end in the namespace: eth0, 10.244.0.(10+i)).
realnodes_netns_prefix=ballast-rn-
realnodes_cgroup=ballast-realnodes
realnodes_lock=/run/ballast-testenv-realnodes
realnodes_pause_image=localhost/ballast-pause:1.0
realnodes_cni_network=ballast-testenv
# Directories that the kubelet (its device-plugin socket), the containerd shims
# (runc state, shim sockets) and the CNI plugins make at fixed places; removed
# at stop when the start found them missing.
realnodes_fixed_dirs=(/var/lib/kubelet /run/containerd /var/lib/cni)
# What the kubelet and kube-proxy change; saved at start, restored at stop.
realnodes_sysctls=(net.ipv4.ip_forward net.bridge.bridge-nf-call-iptables
  net.ipv4.conf.all.route_localnet vm.overcommit_memory vm.panic_on_oom kernel.panic
  kernel.panic_on_oops kernel.keys.root_maxkeys kernel.keys.root_maxbytes)

# realnodes_prepare_host DIR: takes the machine's lock for DIR, saves the kernel
# settings, makes the bridge with the machine's address (the API server
# advertises it, so pods reach it through the `kubernetes` Service). Before
# the API server starts.
realnodes_prepare_host() {
  local dir=$1 name
  realnodes_clean_ended_run "$dir" ||
    die "real nodes of $(<"$realnodes_lock") are running (one real-node cluster per machine); stop them with BALLAST_TESTENV_DIR=$(<"$realnodes_lock") scripts/testenv-down"
  echo "$dir" >"$realnodes_lock"
  mkdir -p "$dir/realnodes"
  for name in "${realnodes_fixed_dirs[@]}"; do
    [[ -e $name ]] || echo "$name"
  done >"$dir/realnodes/made-dirs"
  for name in "${realnodes_sysctls[@]}"; do
    echo "$name=$(sysctl -n "$name")"
  done >"$dir/realnodes/sysctl.saved"
  sysctl -qw net.ipv4.ip_forward=1 net.bridge.bridge-nf-call-iptables=1
  # A fixed MAC: a bridge without one takes the lowest of its ports', so it
  # changes when a pod's veth goes, and pods that cached the gateway's old MAC
  # lose their packets until their ARP entry expires.
  ip link add "$realnodes_bridge" address 02:ba:11:a5:00:01 type bridge 2>/dev/null || true
  ip addr replace "$realnodes_host_ip/24" dev "$realnodes_bridge"
  ip link set "$realnodes_bridge" up
  # Cluster DNS traffic skips connection tracking (as NodeLocal DNSCache does):
  # a resolver sends its A and AAAA queries at once from one socket, and the
  # second of two new conntrack entries for that flow can be dropped
  # (conntrack -S: insert_failed), failing a lookup now and then.
  iptables -t raw -N BALLAST-TESTENV-DNS 2>/dev/null || iptables -t raw -F BALLAST-TESTENV-DNS
  iptables -t raw -A BALLAST-TESTENV-DNS -d "$realnodes_host_ip" -p udp --dport 53 -j NOTRACK
  iptables -t raw -A BALLAST-TESTENV-DNS -s "$realnodes_host_ip" -p udp --sport 53 -j NOTRACK
  iptables -t raw -C PREROUTING -j BALLAST-TESTENV-DNS 2>/dev/null || iptables -t raw -I PREROUTING -j BALLAST-TESTENV-DNS
  iptables -t raw -C OUTPUT -j BALLAST-TESTENV-DNS 2>/dev/null || iptables -t raw -I OUTPUT -j BALLAST-TESTENV-DNS
}

# realnodes_clean_ended_run DIR: when the machine's lock names the real nodes
# of another directory and none of their processes runs (the run that started
# them was killed, or the machine was restored from a disk image), stops what
# they left: network namespaces, cgroups, iptables chains, kernel settings.
# Returns 1, touching nothing, while they run.
realnodes_clean_ended_run() {
  local dir=$1 owner
  [[ -f $realnodes_lock ]] || return 0
  owner=$(<"$realnodes_lock")
  [[ $owner != "$dir" && -d $owner/realnodes ]] || return 0
  realnodes_owner_alive "$owner" && return 1
  echo "testenv: real nodes of $owner were left by a run that ended (none of its processes runs); cleaning up after it" >&2
  stop_control_plane "$owner"
}

# realnodes_owner_alive DIR: whether the control plane of DIR, which holds the
# machine's lock, still runs. A lock written before the machine booted is
# stale (the lock file lives on disk, and a machine restored from a disk image
# keeps it); otherwise one of DIR's processes must run, or the lock must be
# under two minutes old (its owner may be starting its API server).
realnodes_owner_alive() {
  local owner=$1 boot written pid
  boot=$(awk '$1 == "btime" { print $2 }' /proc/stat)
  written=$(stat -c %Y "$realnodes_lock" 2>/dev/null || echo 0)
  ((written >= boot)) || return 1
  for pid in $(grep -lsF "$owner/" /proc/[0-9]*/cmdline | cut -d/ -f3); do
    [[ $pid == "$$" || $pid == "$BASHPID" ]] && continue
    if readlink "/proc/$pid/exe" 2>/dev/null | grep -qE '/(ballast-kube|ballast-node-agent|containerd|kine|kueue)$'; then
      return 0
    fi
  done
  (($(date +%s) - written < 120))
}

# realnodes_node_ip INDEX: the address of node INDEX (from 1).
realnodes_node_ip() { echo "10.244.$1.1"; }

# realnodes_netns_create NODE INDEX: the node's network namespace: eth0 on the
# machine's bridge (10.244.0.(10+INDEX), default route through the machine),
# a bridge of its own for its pods with the node's address, forwarding and
# bridged traffic through iptables (the policy controller sees pod-to-pod
# traffic on the node); the machine routes the node's pod subnet to it.
realnodes_netns_create() {
  local node=$1 index=$2 ns=$realnodes_netns_prefix$1 transit="10.244.0.$((10 + $2))"
  # One left by a run that died (this one holds the machine's lock now).
  ip netns del "$ns" 2>/dev/null || true
  ip link del "ballast-rn$index" 2>/dev/null || true
  ip netns add "$ns"
  echo "$ns ballast-rn$index" >>"$dir/realnodes/netns"
  ip link add "ballast-rn$index" type veth peer name eth0 netns "$ns"
  ip link set "ballast-rn$index" master "$realnodes_bridge" up
  ip -n "$ns" link set lo up
  ip -n "$ns" addr add "$transit/24" dev eth0
  ip -n "$ns" link set eth0 up
  ip -n "$ns" route add default via "$realnodes_host_ip"
  # A fixed MAC, as the machine's bridge has (realnodes_prepare_host).
  ip -n "$ns" link add "$realnodes_bridge" address "02:ba:11:a5:01:$(printf %02x "$index")" type bridge
  ip -n "$ns" addr add "$(realnodes_node_ip "$index")/24" dev "$realnodes_bridge"
  ip -n "$ns" link set "$realnodes_bridge" up
  ip netns exec "$ns" sysctl -qw net.ipv4.ip_forward=1 net.bridge.bridge-nf-call-iptables=1
  ip route replace "10.244.$index.0/24" via "$transit"
}

# realnodes_in_netns NODE: the command prefix that runs a program in NODE's
# network namespace only (nsenter, not `ip netns exec`, which also gives it a
# mount namespace of its own: the kubelet's volume mounts must be
# containerd's). nsenter execs the program: its pid stays.
realnodes_in_netns() { echo "nsenter --net=/run/netns/$realnodes_netns_prefix$1"; }

# realnodes_cgroup_create NODE SPEED: the node's cgroupRoot in every v1
# hierarchy (the kubelet wants it in all), its CPU quota SPEED host cores.
realnodes_cgroup_create() {
  local node=$1 speed=$2 hierarchy path
  for hierarchy in /sys/fs/cgroup/*/; do
    [[ -f $hierarchy/cgroup.procs && ! -f $hierarchy/cgroup.controllers ]] || continue
    for path in "$hierarchy$realnodes_cgroup" "$hierarchy$realnodes_cgroup/$node"; do
      mkdir -p "$path"
      if [[ -f $path/cpuset.cpus ]]; then
        cat "$(dirname "$path")/cpuset.cpus" >"$path/cpuset.cpus"
        cat "$(dirname "$path")/cpuset.mems" >"$path/cpuset.mems"
      fi
    done
  done
  path=/sys/fs/cgroup/cpu/$realnodes_cgroup
  [[ -f $path/cpu.cfs_quota_us ]] || die "no cgroup v1 cpu controller at /sys/fs/cgroup/cpu"
  # Ten times the default weight, so a node reaches its quota on a busy machine.
  echo 10240 >"$path/cpu.shares"
  echo 10240 >"$path/$node/cpu.shares"
  if [[ $speed != 0 ]]; then
    awk -v s="$speed" 'BEGIN { printf "%d\n", s * 100000 }' >"$path/$node/cpu.cfs_quota_us"
  fi
}

# The nodes' container runtime (BALLAST_TESTENV_CONTAINERD): 1, Debian's
# containerd 1.6 (the default); 2, containerd 2.x built from its Go module by
# `scripts/testenv-build --containerd2` (as k3s ships a 2.x), which mounts
# image volumes (docs/testenv.md, "containerd 2").
realnodes_containerd=${BALLAST_TESTENV_CONTAINERD:-1}

# realnodes_containerd_bin: the containerd program the nodes run.
realnodes_containerd_bin() {
  if [[ $realnodes_containerd == 2 ]]; then
    echo "$("$repo/scripts/testenv-build" --containerd2 --print-bin)/containerd"
  else
    echo /usr/bin/containerd
  fi
}

# realnodes_containerd1_config ROOT N: containerd 1.6's config (version 2)
# for the node whose directory is N and whose images are under ROOT.
realnodes_containerd1_config() {
  local root=$1 n=$2
  cat <<EOF
version = 2
root = "$root"
state = "$n/state"
disabled_plugins = ["io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs",
  "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.aufs",
  "io.containerd.internal.v1.tracing", "io.containerd.tracing.processor.v1.otlp"]
[grpc]
  address = "$n/containerd.sock"
[ttrpc]
  address = "$n/containerd.sock.ttrpc"
[metrics]
  address = ""
[plugins."io.containerd.internal.v1.opt"]
  path = "$n/opt"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$realnodes_pause_image"
  # Root here lacks CAP_SYS_RESOURCE: runc may not lower oom_score_adj.
  restrict_oom_score_adj = true
  # Pod network namespaces under this node's state, not the machine's /run/netns.
  netns_mounts_under_state_dir = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$n/cni"
  # Registry hosts (realnodes_registry_hosts): the bed's registry over plain HTTP.
  [plugins."io.containerd.grpc.v1.cri".registry]
    config_path = "$n/certs.d"
EOF
}

# realnodes_containerd2_config ROOT N: the same for containerd 2.x (config
# version 3, where the CRI plugin's settings are split among the images,
# runtime and server plugins); its own shim (runtime_path), Debian's runc.
realnodes_containerd2_config() {
  local root=$1 n=$2 shim
  shim=$(dirname "$(realnodes_containerd_bin)")/containerd-shim-runc-v2
  cat <<EOF
version = 3
root = "$root"
state = "$n/state"
disabled_plugins = ["io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs",
  "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.erofs",
  "io.containerd.snapshotter.v1.blockfile", "io.containerd.internal.v1.tracing",
  "io.containerd.tracing.processor.v1.otlp"]
[grpc]
  address = "$n/containerd.sock"
[ttrpc]
  address = "$n/containerd.sock.ttrpc"
[metrics]
  address = ""
[plugins."io.containerd.internal.v1.opt"]
  path = "$n/opt"
[plugins."io.containerd.cri.v1.images"]
  snapshotter = "overlayfs"
  [plugins."io.containerd.cri.v1.images".pinned_images]
    sandbox = "$realnodes_pause_image"
  # Registry hosts (realnodes_registry_hosts): the bed's registry over plain HTTP.
  [plugins."io.containerd.cri.v1.images".registry]
    config_path = "$n/certs.d"
[plugins."io.containerd.cri.v1.runtime"]
  # As for containerd 1.6 (realnodes_containerd1_config).
  restrict_oom_score_adj = true
  netns_mounts_under_state_dir = true
  # The machine is on cgroup v1, which containerd 2 deprecates (not removes).
  ignore_deprecation_warnings = ["io.containerd.deprecation/cgroup-v1"]
  [plugins."io.containerd.cri.v1.runtime".containerd]
    default_runtime_name = "runc"
    [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      runtime_path = "$shim"
      snapshotter = "overlayfs"
  [plugins."io.containerd.cri.v1.runtime".cni]
    bin_dirs = ["/usr/lib/cni"]
    conf_dir = "$n/cni"
[plugins."io.containerd.grpc.v1.cri"]
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
EOF
}

# realnodes_node_config DIR NODE INDEX: containerd's config, the CNI network,
# the kubelet's config and certificates for one node.
realnodes_node_config() {
  local dir=$1 node=$2 index=$3 ip root
  ip=$(realnodes_node_ip "$index")
  local n=$dir/realnodes/$node
  # Images stay between runs (a warm start imports nothing); state does not.
  # Each runtime has a store of its own: containerd 2 migrates the metadata
  # it opens, which 1.6 cannot read back.
  root=$realnodes_cache/$node/containerd
  [[ $realnodes_containerd == 2 ]] && root+=2
  mkdir -p "$n"/{cni,cni-ipam,kubelet,pod-logs,container-logs,state} "$root"
  "realnodes_containerd${realnodes_containerd}_config" "$root" "$n" >"$n/containerd.toml"
  realnodes_registry_hosts "$n/certs.d"
  # isGateway stays off: realnodes_netns_create has put the node's address,
  # its pods' gateway, on the bridge.
  cat >"$n/cni/10-ballast.conflist" <<EOF
{
  "cniVersion": "0.4.0",
  "name": "$realnodes_cni_network",
  "plugins": [{
    "type": "bridge", "bridge": "$realnodes_bridge", "hairpinMode": true, "ipMasq": false,
    "ipam": {
      "type": "host-local", "dataDir": "$n/cni-ipam",
      "ranges": [[{"subnet": "10.244.$index.0/24", "gateway": "$ip"}]],
      "routes": [{"dst": "0.0.0.0/0", "gw": "$ip"}]
    }
  }]
}
EOF
  cert "kubelet-$node" "/CN=system:node:$node" \
    "$(printf '%s\n' 'extendedKeyUsage=serverAuth' "subjectAltName=IP:$ip,DNS:$node")"
  cert "node-$node" "/O=system:nodes/CN=system:node:$node" "$client"
  kubeconfig "realnodes/$node/kubeconfig" "node-$node"
  cat >"$n/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: $ip
port: 10250
readOnlyPort: 0
healthzPort: 0
tlsCertFile: $pki/kubelet-$node.crt
tlsPrivateKeyFile: $pki/kubelet-$node.key
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: false}
  x509: {clientCAFile: $pki/ca.crt}
authorization: {mode: AlwaysAllow}
containerRuntimeEndpoint: unix://$n/containerd.sock
cgroupDriver: cgroupfs
cgroupRoot: /$realnodes_cgroup/$node
# Kubelets from v1.35 on refuse a cgroup v1 host unless told (v1.30's does
# not know the field and ignores it).
failCgroupV1: false
failSwapOn: false
resolvConf: ""
clusterDNS: [$realnodes_host_ip]
clusterDomain: cluster.local
podLogsDir: $n/pod-logs
imageGCHighThresholdPercent: 100
# One bed plays two users on the same nodes: most tests pull Ballast's
# images from the bed's registry, realnodes_chart_lifecycle runs the same
# images (the same image IDs) imported under their published names. From
# v1.35 the kubelet (KEP-2535, beta) records the names it pulled each image
# ID under and from then on takes another name of that ID as not preloaded:
# with pullPolicy Never it refuses it (ErrImageNeverPull) once a test has
# pulled the image. A user's node does one or the other (docs/images.md);
# the bed's kubelets do not verify (v1.30's ignores the field).
imagePullCredentialsVerificationPolicy: NeverVerify
evictionHard: {memory.available: 100Mi, nodefs.available: 1%, imagefs.available: 1%}
registerNode: true
serializeImagePulls: false
EOF
}

# The bed's image registry: Debian's docker-registry (distribution), as a
# cluster's nodes pull from GHCR or a registry on the LAN. It listens on the
# machine's bridge address, which the nodes' network namespaces reach, at
# port base + 13; its storage is kept in the cache between runs (a warm
# start pushes only what changed).
realnodes_registry_port_offset=13

# realnodes_registry_hosts DIR: containerd's hosts directory (config_path)
# with one entry, the bed's registry, spoken to over plain HTTP
# (containerd 1.6 and 2.x read the same hosts.toml).
realnodes_registry_hosts() {
  mkdir -p "$1/$realnodes_registry"
  cat >"$1/$realnodes_registry/hosts.toml" <<EOF
server = "http://$realnodes_registry"
[host."http://$realnodes_registry"]
  capabilities = ["pull", "resolve"]
EOF
}

# realnodes_start_registry: starts the registry on the bridge and waits for
# its /v2/. Sets realnodes_registry (HOST:PORT).
realnodes_start_registry() {
  realnodes_registry=$realnodes_host_ip:$((port_base + realnodes_registry_port_offset))
  mkdir -p "$realnodes_cache/registry"
  cat >"$dir/realnodes/registry.yml" <<EOF
version: 0.1
log: {level: warn, accesslog: {disabled: true}}
storage:
  filesystem: {rootdirectory: $realnodes_cache/registry}
http:
  addr: $realnodes_registry
EOF
  echo "$realnodes_registry" >"$dir/realnodes/registry"
  realnodes_start registry /usr/bin/docker-registry serve "$dir/realnodes/registry.yml"
  components+=(registry)
  wait_for "the registry at $realnodes_registry" 30 curl -sf "http://$realnodes_registry/v2/"
}

# realnodes_push: pushes Ballast's images for every architecture built (from
# scripts/images' OCI archive, as scripts/release pushes them: one OCI image
# index each) to REGISTRY/ballast-io/, and the checkout's chart, packaged,
# to oci://REGISTRY/charts/ballast. Without the archive the images are not
# pushed (a test that needs them says so).
realnodes_push() {
  local t=$SECONDS version oci ref image
  version=$(sed -n 's/^project(ballast VERSION \([0-9.]*\).*/\1/p' "$repo/CMakeLists.txt")
  oci=$cache/images/$version/ballast-$version.oci.tar
  if [[ -f $oci ]]; then
    for image in ballast ballast-worker; do
      ref=$(tar -xOf "$oci" ./index.json | python3 -c 'import json, sys
for m in json.load(sys.stdin)["manifests"]:
    name = m.get("annotations", {}).get("org.opencontainers.image.ref.name", "")
    if name.rsplit("/", 1)[-1] == sys.argv[1]:
        print(name)
        break' "$image:$version")
      [[ -n $ref ]] || die "$oci holds no $image:$version"
      skopeo copy --all --quiet --dest-tls-verify=false --retry-times 2 "oci-archive:$oci:$ref" \
        "docker://$realnodes_registry/ballast-io/$image:$version" >>"$dir/logs/registry-push.log" 2>&1 ||
        die "pushing $image:$version to the registry failed (logs/registry-push.log)"
    done
  else
    echo "testenv-up: no $oci (scripts/images --arch amd64): Ballast's images are not in the registry"
  fi
  rm -rf "$dir/realnodes/chart"
  "$bin/helm" package "$repo/helm/ballast" -d "$dir/realnodes/chart" >>"$dir/logs/registry-push.log" 2>&1 &&
    HELM_REGISTRY_CONFIG=$dir/realnodes/helm-registry.json "$bin/helm" push "$dir/realnodes/chart"/ballast-*.tgz \
      "oci://$realnodes_registry/charts" --plain-http >>"$dir/logs/registry-push.log" 2>&1 ||
    die "pushing the chart to the registry failed (logs/registry-push.log)"
  echo "testenv-up: Ballast's images and chart in the registry $realnodes_registry in $((SECONDS - t)) s"
}

# realnodes_forget_pulled NODE: removes from NODE's containerd every image
# pulled from the registry by an earlier run (the containerd root is kept),
# so that the first pod of this run that names one pulls it.
realnodes_forget_pulled() {
  local ctr=(ctr --address "$dir/realnodes/$1/containerd.sock" -n k8s.io) names
  names=$("${ctr[@]}" images ls -q | grep "^$realnodes_registry/" || true)
  [[ -z $names ]] || "${ctr[@]}" images rm --sync $names >/dev/null
}

# realnodes_import_images NODE: imports the test images (the pods' sandbox
# and busybox) and every $BALLAST_CACHE/images/<version>/*-amd64.tar into
# the node's containerd, each archive once (its size and time are remembered
# beside the images), as k3s imports its images folder at start: Ballast's
# archives carry the published names (ghcr.io/ballast-io/...), for the test
# of a user without a registry (realnodes_chart_lifecycle); the other tests
# name the registry's images, which the nodes pull.
realnodes_import_images() {
  local node=$1 archive key done_file
  done_file=$realnodes_cache/$node/imported
  [[ $realnodes_containerd == 2 ]] && done_file+=2
  touch "$done_file"
  for archive in "$realnodes_images"/pause.tar "$realnodes_images"/busybox.tar \
    "$cache"/images/*/*-amd64.tar; do
    [[ -f $archive ]] || continue
    key=$(stat -c '%n %s %Y' "$archive")
    grep -qxF "$key" "$done_file" && continue
    ctr --address "$dir/realnodes/$node/containerd.sock" -n k8s.io images import "$archive" >/dev/null ||
      die "importing $archive into $node's containerd failed"
    echo "$key" >>"$done_file"
    echo "testenv-up: $node: imported $(basename "$archive")"
  done
  [[ $realnodes_containerd == 2 ]] && realnodes_cri_id_references "$node"
  return 0
}

# realnodes_cri_id_references NODE: makes containerd 2's CRI name every
# image by its ID too. The CRI does so when it first manages a name (its
# label io.cri-containerd.image); an archive imported again over a managed
# name moves the name but keeps the label, so the new image has no record
# named by its ID, which the kubelet asks for when it mounts an image volume
# ("failed to get image volume ref sha256:…: not found"; containers do not
# need it). Clearing the label makes the CRI manage every name again, the ID
# record made first.
realnodes_cri_id_references() {
  local node=$1 name
  local ctr=(ctr --address "$dir/realnodes/$node/containerd.sock" -n k8s.io)
  for name in $("${ctr[@]}" images ls -q | grep -v '^sha256:'); do
    "${ctr[@]}" images label "$name" io.cri-containerd.image= >/dev/null
  done
}

# realnodes_split_labels LABELS: two lines from k=v,...: the labels the
# kubelet may set itself, and the others (--node-labels refuses kubernetes.io
# and k8s.io ones but a few; they are set through the API).
realnodes_split_labels() {
  local kv key kvs own=() other=()
  IFS=, read -ra kvs <<<"$1"
  for kv in "${kvs[@]}"; do
    key=${kv%%=*}
    if [[ $key =~ ^([^/]*\.)?(kubernetes\.io|k8s\.io)/ &&
      ! $key =~ ^(kubernetes\.io/(hostname|os|arch)|[^/]*\.(kubelet|node)\.kubernetes\.io/) ]]; then
      other+=("$kv")
    else
      own+=("$kv")
    fi
  done
  (IFS=,; echo "${own[*]}"; echo "${other[*]}")
}

# realnodes_start NAME PROGRAM ARGS...: runs PROGRAM detached, as testenv-up's
# start does, its pid in pids/NAME and its output in logs/NAME.log.
realnodes_start() {
  local name=$1
  shift
  setsid "$@" </dev/null >"$dir/logs/$name.log" 2>&1 &
  echo $! >"$dir/pids/$name"
}

# start_real_nodes FILE: starts every node of FILE (its namespace, containerd,
# kubelet, kube-proxy, policy controller) and the cluster DNS; waits until
# each node is Ready. Uses testenv-up's dir, bin, pki, cert,
# kubeconfig, start and wait_for.
start_real_nodes() {
  local file=$1 lines line node speed labels index=0 kubelet_labels other containerd
  realnodes_cache=$cache/testenv/realnodes
  [[ $realnodes_containerd == 1 || $realnodes_containerd == 2 ]] ||
    die "BALLAST_TESTENV_CONTAINERD is 1 (Debian's containerd 1.6) or 2 (containerd 2.x), not $realnodes_containerd"
  containerd=$(realnodes_containerd_bin) || die "no containerd 2 (scripts/testenv-build --containerd2)"
  realnodes_images=$("$repo/scripts/testenv-images" --print-dir)
  mapfile -t lines < <("$bin/ballast-node-agent" print-nodes --nodes "$file") ||
    die "bad real node file $file"
  ((${#lines[@]} > 0)) || die "bad real node file $file"
  if [[ $nodes != none ]]; then
    local clash
    clash=$(comm -12 <(cut -f1 <(printf '%s\n' "${lines[@]}") | sort) \
      <("$bin/ballast-node-agent" print-nodes --nodes "$nodes" | cut -f1 | sort) | paste -sd' ' -)
    [[ -z $clash ]] || die "$file and $nodes both name $clash: a node is real or emulated, not both"
  fi
  echo "$bin" >"$dir/realnodes/bin"
  echo "$realnodes_cache" >"$dir/realnodes/cache"
  realnodes_start_registry
  realnodes_push >"$dir/logs/registry-push.out" 2>&1 &
  local push=$!
  for line in "${lines[@]}"; do
    IFS=$'\t' read -r node speed labels <<<"$line"
    index=$((index + 1))
    echo "$node" >>"$dir/realnodes/nodes"
    realnodes_cgroup_create "$node" "$speed"
    realnodes_netns_create "$node" "$index"
    realnodes_node_config "$dir" "$node" "$index"
    realnodes_start "containerd-$node" $(realnodes_in_netns "$node") \
      "$containerd" --config "$dir/realnodes/$node/containerd.toml"
  done
  for node in $(<"$dir/realnodes/nodes"); do
    wait_for "$node's containerd" 30 ctr --address "$dir/realnodes/$node/containerd.sock" version
    realnodes_import_images "$node"
    realnodes_forget_pulled "$node"
  done
  index=0
  for line in "${lines[@]}"; do
    IFS=$'\t' read -r node speed labels <<<"$line"
    index=$((index + 1))
    { read -r kubelet_labels; read -r other; } < <(realnodes_split_labels "$labels")
    BALLAST_KUBELET_CONTAINER_LOGS_DIR=$dir/realnodes/$node/container-logs \
      realnodes_start "kubelet-$node" $(realnodes_in_netns "$node") "$bin/kubelet" --config "$dir/realnodes/$node/kubelet.yaml" \
      --kubeconfig "$dir/realnodes/$node/kubeconfig" --hostname-override "$node" \
      --node-ip "$(realnodes_node_ip "$index")" --root-dir "$dir/realnodes/$node/kubelet" \
      --cert-dir "$dir/realnodes/$node/kubelet/pki" --node-labels "$kubelet_labels" --v 1
    echo "$node	$speed	$other" >>"$dir/realnodes/labels"
  done
  # kube-proxy in each node's namespace, as on a real node: a Service's
  # address is translated where the client's packet starts, so that a reply
  # from a backend on the client's own node (which goes straight over the
  # node's bridge) is translated back there.
  for node in $(<"$dir/realnodes/nodes"); do
    realnodes_start "kube-proxy-$node" $(realnodes_in_netns "$node") "$bin/kube-proxy" \
      --kubeconfig "$dir/kubeconfig" --hostname-override "$node" \
      --proxy-mode iptables --cluster-cidr "$realnodes_cidr" --conntrack-max-per-core 0 \
      --conntrack-tcp-timeout-established 0 --conntrack-tcp-timeout-close-wait 0 \
      --metrics-bind-address "127.0.0.1:$((port_base + 11))" --healthz-bind-address "127.0.0.1:$((port_base + 12))" \
      --iptables-localhost-nodeports=false --nodeport-addresses "$realnodes_cidr"
    components+=("kube-proxy-$node")
  done
  wait "$push" || { cat "$dir/logs/registry-push.out" >&2; die "the push to the bed's registry failed"; }
  cat "$dir/logs/registry-push.out"
  realnodes_start cluster-dns "$bin/ballast-kube" cluster-dns --kubeconfig "$dir/kubeconfig" \
    --listen "$realnodes_host_ip:53"
  for node in $(<"$dir/realnodes/nodes"); do
    wait_for "node $node registered" 90 "${kubectl[@]}" get node "$node"
  done
  while IFS=$'\t' read -r node speed other; do
    [[ -z $other ]] || "${kubectl[@]}" label node "$node" --overwrite $(tr ',' ' ' <<<"$other") >/dev/null
    [[ $speed == 0 ]] ||
      "${kubectl[@]}" annotate node "$node" --overwrite "ballast.io/emulated-speed=$speed" >/dev/null
  done <"$dir/realnodes/labels"
  realnodes_start_netpol
  wait_for "real nodes Ready" 120 "${kubectl[@]}" wait --for=condition=Ready \
    $(sed 's|^|node/|' "$dir/realnodes/nodes") --timeout=1s
  # Ready is the kubelet's word; the node lifecycle controller lifts the
  # not-ready taints on its next pass (up to --node-monitor-period later), and
  # until then a pod without the default tolerations is not scheduled there.
  wait_for "real nodes' condition taints lifted" 60 realnodes_condition_taints_lifted
  for node in $(<"$dir/realnodes/nodes"); do
    wait_for "$node's NetworkPolicy controller" 60 realnodes_netpol_ready "$node"
  done
  for node in $(<"$dir/realnodes/nodes"); do
    wait_for "$node's kube-proxy healthy" 30 $(realnodes_in_netns "$node") \
      curl -sf "http://127.0.0.1:$((port_base + 12))/healthz"
  done
}

# realnodes_condition_taints_lifted: whether no real node still carries a
# taint the control plane sets from a node condition (node.kubernetes.io/...).
realnodes_condition_taints_lifted() {
  local node keys
  for node in $(<"$dir/realnodes/nodes"); do
    keys=$("${kubectl[@]}" get node "$node" -o jsonpath='{.spec.taints[*].key}') || return 1
    [[ $keys != *node.kubernetes.io/* ]] || return 1
  done
}

# realnodes_netpol_ready NODE: whether NODE's policy controller has made its
# chains and the jump to them (its first act).
realnodes_netpol_ready() {
  $(realnodes_in_netns "$1") iptables -S FORWARD 2>/dev/null | grep -q -- '-j KUBE-ROUTER-FORWARD'
}

# realnodes_start_netpol: kube-router's NetworkPolicy controller
# (ballast-netpol) in each node's network namespace, for that node's pods (it
# takes those whose host IP is its node's address), with an identity of its
# own in the group ballast:netpol and a ClusterRole that reads what it needs.
# After the nodes have registered (it reads its node's address at start);
# realnodes_netpol_ready says when each has made its chains.
realnodes_start_netpol() {
  local node
  "${kubectl[@]}" apply -f - >/dev/null <<EOF
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: "ballast-testenv:netpol"}
rules:
- {apiGroups: [""], resources: [nodes], verbs: [get]}
- {apiGroups: [""], resources: [pods, namespaces], verbs: [list, watch]}
- {apiGroups: [networking.k8s.io], resources: [networkpolicies], verbs: [list, watch]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: "ballast-testenv:netpol"}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: "ballast-testenv:netpol"}
subjects:
- {apiGroup: rbac.authorization.k8s.io, kind: Group, name: "ballast:netpol"}
EOF
  for node in $(<"$dir/realnodes/nodes"); do
    cert "netpol-$node" "/O=ballast:netpol/CN=ballast-netpol:$node" "$client"
    kubeconfig "realnodes/$node/netpol.kubeconfig" "netpol-$node"
    # No health or metrics server: nothing reads them. A change (pod, policy,
    # namespace) starts a sync at once; the period is the fallback.
    realnodes_start "netpol-$node" $(realnodes_in_netns "$node") "$bin/ballast-netpol" \
      --kubeconfig "$dir/realnodes/$node/netpol.kubeconfig" --hostname-override "$node" \
      --run-firewall=true --run-router=false --run-service-proxy=false --run-loadbalancer=false \
      --enable-ipv4=true --enable-ipv6=false --service-cluster-ip-range 10.0.0.0/24 \
      --health-port 0 --metrics-port 0 --iptables-sync-period 1m
    components+=("netpol-$node")
  done
}

# realnodes_kill NAME...: stops the processes of pids/NAME (those whose command
# line still names the directory), SIGKILL after 15 s.
realnodes_kill() {
  local name pid pids=()
  for name in "$@"; do
    [[ -f $dir/pids/$name ]] || continue
    pid=$(<"$dir/pids/$name")
    if [[ -r /proc/$pid/cmdline ]] && tr '\0' ' ' <"/proc/$pid/cmdline" | grep -qF "$dir/"; then
      kill -TERM "$pid" 2>/dev/null && pids+=("$pid")
    fi
    rm -f "$dir/pids/$name"
  done
  ((${#pids[@]} > 0)) || return 0
  wait_gone 15 "${pids[@]}" || { kill -KILL "${pids[@]}" 2>/dev/null; wait_gone 5 "${pids[@]}"; } || true
}

# stop_real_nodes DIR: stops the real nodes started from DIR and removes what
# they left on the machine: pod sandboxes (through the CRI, which runs the CNI
# DEL), containerd and its shims, mounts, the nodes' network namespaces (with
# them the policy controllers' iptables chains and ipsets, which live there),
# kube-proxy's and the kubelets' iptables chains, cgroups, the bridge; restores
# the kernel settings. Quiet when DIR has no real nodes.
stop_real_nodes() {
  local dir=$1 rn=$1/realnodes node bin node_cache pid mount hierarchy table chain
  [[ -d $rn ]] || return 0
  bin=$(cat "$rn/bin" 2>/dev/null || true)
  node_cache=$(cat "$rn/cache" 2>/dev/null || echo "$rn")
  local nodes=()
  [[ -f $rn/nodes ]] && mapfile -t nodes <"$rn/nodes"
  realnodes_kill $(printf 'kubelet-%s ' "${nodes[@]}") $(printf 'netpol-%s ' "${nodes[@]}") cluster-dns registry
  for node in "${nodes[@]}"; do
    [[ -S $rn/$node/containerd.sock && -x $bin/ballast-kube ]] || continue
    "$bin/ballast-kube" cri-cleanup --runtime-endpoint "unix://$rn/$node/containerd.sock" --timeout 60s \
      >>"$dir/logs/cri-cleanup.log" 2>&1 || echo "testenv: $node: pods not all removed (logs/cri-cleanup.log)" >&2
  done
  realnodes_kill $(printf 'containerd-%s ' "${nodes[@]}")
  # Shims outlive containerd by design; each names its containerd's socket.
  for pid in $(grep -lsF "$rn/" /proc/[0-9]*/cmdline | cut -d/ -f3); do
    if [[ $(readlink "/proc/$pid/exe" 2>/dev/null) == */containerd-shim* ]]; then
      kill -KILL "$pid" 2>/dev/null || true
    fi
  done
  realnodes_kill kube-proxy $(printf 'kube-proxy-%s ' "${nodes[@]}")
  if [[ -x $bin/ballast-kube ]]; then
    "$bin/ballast-kube" kube-proxy --cleanup >>"$dir/logs/kube-proxy-cleanup.log" 2>&1 || true
  fi
  # The nodes' network namespaces, now that nothing runs in them, and their
  # veths; a start that failed half way may have left one the file lacks.
  local ns veth
  {
    [[ -f $rn/netns ]] && cat "$rn/netns"
    ip netns list 2>/dev/null | awk -v p="$realnodes_netns_prefix" 'index($1, p) == 1 { print $1 }'
  } | while read -r ns veth; do
    ip netns del "$ns" 2>/dev/null || true
    [[ -z $veth ]] || ip link del "$veth" 2>/dev/null || true
  done
  # Mounts under the nodes' directories (volumes, network namespaces), deepest first.
  for mount in $(awk -v p="$rn/" -v q="$node_cache/" 'index($5, p) == 1 || index($5, q) == 1 { print $5 }' \
    /proc/self/mountinfo | sort -r); do
    umount -l "$mount" 2>/dev/null || true
  done
  for table in filter nat mangle raw; do
    for chain in $(iptables -t "$table" -S 2>/dev/null | awk '$1 == "-N" && $2 ~ /^(KUBE-|CNI-|BALLAST-TESTENV-)/ { print $2 }'); do
      iptables -t "$table" -S | awk -v c="$chain" '$1 == "-A" && $0 ~ ("-j " c "( |$)") && $2 != c' |
        sed 's/^-A/-D/' | while read -r rule; do eval "iptables -t $table $rule" 2>/dev/null || true; done
    done
    for chain in $(iptables -t "$table" -S 2>/dev/null | awk '$1 == "-N" && $2 ~ /^(KUBE-|CNI-|BALLAST-TESTENV-)/ { print $2 }'); do
      iptables -t "$table" -F "$chain" 2>/dev/null || true
    done
    for chain in $(iptables -t "$table" -S 2>/dev/null | awk '$1 == "-N" && $2 ~ /^(KUBE-|CNI-|BALLAST-TESTENV-)/ { print $2 }'); do
      iptables -t "$table" -X "$chain" 2>/dev/null || true
    done
  done
  rm -f /var/lib/cni/results/"$realnodes_cni_network"-* 2>/dev/null || true
  for hierarchy in /sys/fs/cgroup/*/; do
    [[ -d $hierarchy$realnodes_cgroup ]] || continue
    find "$hierarchy$realnodes_cgroup" -depth -type d -exec rmdir {} \; 2>/dev/null || true
  done
  ip link del "$realnodes_bridge" 2>/dev/null || true
  if [[ -f $rn/made-dirs ]]; then
    for mount in $(<"$rn/made-dirs"); do
      if [[ $mount == /var/lib/kubelet || $mount == /run/containerd || $mount == /var/lib/cni ]]; then
        rm -rf "$mount"
      fi
    done
  fi
  if [[ -f $rn/sysctl.saved ]]; then
    sysctl -qw $(<"$rn/sysctl.saved") 2>/dev/null || true
  fi
  if [[ -f $realnodes_lock && $(<"$realnodes_lock") == "$dir" ]]; then
    rm -f "$realnodes_lock"
  fi
  rm -rf "$rn"
}
