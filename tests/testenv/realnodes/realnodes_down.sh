#!/usr/bin/env bash
# CTest fixture cleanup of the realnodes label, and its test: scripts/testenv-down
# must leave the machine as realnodes_up found it — no containerd, kubelet or
# shim, mount, network namespace, veth, bridge, iptables rule or chain,
# cgroup, or changed kernel setting.
source "$(dirname "$0")/require_root.sh"
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
: "${BALLAST_TESTENV_DIR:?set by CTest}"
"$here/../../../scripts/testenv-down"
before=$BALLAST_TESTENV_DIR.before
[[ -f $before ]] || { echo "FAIL: no $before: realnodes_up did not run"; exit 1; }
if ! diff -u "$before" <("$here/machine_state.sh" "$BALLAST_TESTENV_DIR"); then
  echo "FAIL: the real nodes left the lines marked + above behind (- : removed)" >&2
  exit 1
fi
rm -f "$before"
echo "ok: the machine is as before the real nodes started"
