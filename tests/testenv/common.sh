# Shared by scripts/testenv-up and scripts/testenv-down (sourced, not run):
# where the control plane lives and which loopback ports it uses.

# Its directory: certificates, kubeconfigs, the datastore's files (kine/ or
# etcd/), logs, pid files.
testenv_dir=${BALLAST_TESTENV_DIR:-/tmp/ballast-testenv}
# Ports base+0 (the datastore's clients: kine or etcd), +1 (etcd peers),
# +3 (kube-apiserver),
# +5 (the node agent's kubelet log API), +7 (controller-manager),
# +9 (scheduler), all on 127.0.0.1; with real nodes +11 and +12 (kube-proxy)
# on 127.0.0.1 of each node's network namespace.
# set_ports BASE: sets port_base and the components' ports from it.
set_ports() {
  port_base=$1
  etcd_port=$((port_base))
  etcd_peer_port=$((port_base + 1))
  apiserver_port=$((port_base + 3))
  kubelet_port=$((port_base + 5))
  controller_manager_port=$((port_base + 7))
  scheduler_port=$((port_base + 9))
}
set_ports "${BALLAST_TESTENV_PORT_BASE:-26440}"

# shellcheck source=realnodes.sh
source "$(dirname "${BASH_SOURCE[0]}")/realnodes.sh"

# Components in start order (the datastore is kine or etcd); testenv-down stops
# them in reverse.
components=(etcd kine kube-apiserver kube-scheduler kube-controller-manager ballast-node-agent kueue)

# stop_control_plane DIR: stops every component started from DIR (by its pid
# file, and any leftover whose command line names DIR), then removes DIR.
stop_control_plane() {
  local dir=$1 pids=() pid name i
  # Real nodes first: their pods are removed through their kubelets' runtimes.
  stop_real_nodes "$dir"
  for ((i = ${#components[@]} - 1; i >= 0; i--)); do
    name=${components[i]}
    [[ -f $dir/pids/$name ]] || continue
    pid=$(<"$dir/pids/$name")
    # Only our process: the pid may have been reused since.
    if [[ -r /proc/$pid/cmdline ]] && tr '\0' ' ' <"/proc/$pid/cmdline" | grep -qF "$dir/"; then
      kill -TERM "$pid" 2>/dev/null && pids+=("$pid")
      # The agent kills its containers on SIGTERM; give it a moment first.
      [[ $name == ballast-node-agent ]] && wait_gone 10 "$pid"
    fi
  done
  # Leftovers of a run whose pid files are gone or incomplete.
  for pid in $(grep -lsF "$dir/" /proc/[0-9]*/cmdline | cut -d/ -f3); do
    [[ $pid == "$$" || $pid == "$BASHPID" ]] && continue
    if readlink "/proc/$pid/exe" 2>/dev/null | grep -qE '/(ballast-kube|ballast-node-agent|kubectl|kine|kueue)$'; then
      kill -TERM "$pid" 2>/dev/null && pids+=("$pid")
    fi
  done
  if ((${#pids[@]} > 0)) && ! wait_gone 15 "${pids[@]}"; then
    kill -KILL "${pids[@]}" 2>/dev/null || true
    wait_gone 5 "${pids[@]}" || true
  fi
  # Remove only what testenv-up made (it has pids/), never a directory that
  # BALLAST_TESTENV_DIR happened to name.
  if [[ -d $dir/pids ]]; then
    rm -rf "$dir"
  elif [[ -d $dir ]]; then
    rmdir "$dir" 2>/dev/null || echo "testenv: $dir is not a control plane's directory; left in place" >&2
  fi
}

# wait_gone SECONDS PID...: waits until none of the processes exists.
wait_gone() {
  local deadline=$((SECONDS + $1)) pid
  shift
  while ((SECONDS < deadline)); do
    for pid in "$@"; do
      # A zombie (not yet reaped by its new parent) counts as gone.
      kill -0 "$pid" 2>/dev/null && [[ $(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null) != Z ]] && break
      pid=""
    done
    [[ -z $pid ]] && return 0
    sleep 0.1
  done
  return 1
}
