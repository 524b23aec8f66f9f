#!/usr/bin/env bash
# Prints what real nodes may leave on the machine, one item a line, so that
# realnodes_down can compare the machine after scripts/testenv-down with the
# machine before scripts/testenv-up: iptables rules and chains (empty tables
# are left out: iptables-nft creates them on first use), network namespaces,
# ipsets (the policy controllers make theirs in the nodes' namespaces; none
# may leak to the machine's), links, mounts and processes naming DIR, the
# nodes' cgroups, the kernel
# settings the kubelet changes, the fixed directories that the kubelet,
# containerd's shims and the CNI plugins make.
# usage: machine_state.sh DIR
set -euo pipefail
dir=$1
source "$(dirname "$0")/../realnodes.sh"
for table in filter nat mangle raw; do
  iptables -t "$table" -S 2>/dev/null | grep -vE '^-P ' | sed "s/^/iptables $table: /" || true
done
ipset list -n 2>/dev/null | sed 's/^/ipset: /' || true
ip netns list 2>/dev/null | sed 's/^/netns: /'
ip -o link show 2>/dev/null | awk -F': ' '{ print "link: " $2 }' | grep -vE '@|^link: veth' || true
ip -o link show type veth 2>/dev/null | awk -F': ' '{ print "veth: " $2 }'
awk -v d="$dir/" 'index($5, d) == 1 { print "mount: " $5 }' /proc/self/mountinfo
for pid in $(grep -lsF "$dir/" /proc/[0-9]*/cmdline | cut -d/ -f3); do
  [[ $pid == "$$" || $pid == "$BASHPID" || $pid == "$PPID" ]] && continue
  exe=$(readlink "/proc/$pid/exe" 2>/dev/null) || continue
  echo "process: $exe"
done
for hierarchy in /sys/fs/cgroup/*/; do
  if [[ -d $hierarchy$realnodes_cgroup ]]; then echo "cgroup: $hierarchy$realnodes_cgroup"; fi
done
for name in "${realnodes_fixed_dirs[@]}"; do
  if [[ -e $name ]]; then echo "directory: $name"; fi
done
for name in "${realnodes_sysctls[@]}"; do
  echo "sysctl: $name=$(sysctl -n "$name")"
done
