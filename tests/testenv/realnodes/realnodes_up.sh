#!/usr/bin/env bash
# CTest fixture setup of the realnodes label: notes the machine's state (for
# realnodes_down), then starts a control plane with real nodes only.
source "$(dirname "$0")/require_root.sh"
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
: "${BALLAST_TESTENV_DIR:?set by CTest}"
"$here/../../../scripts/testenv-down" >/dev/null
"$here/machine_state.sh" "$BALLAST_TESTENV_DIR" >"$BALLAST_TESTENV_DIR.before"
exec "$here/../../../scripts/testenv-up" --real-nodes "${BALLAST_REAL_NODES:-$here/../nodes/seed000-real.yaml}"
