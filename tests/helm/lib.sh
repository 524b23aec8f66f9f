# Helpers of the chart tests that need no cluster (sourced): helm (Helm 3, or
# Helm 4 with BALLAST_HELM=helm4) and the helm-unittest plugin from
# scripts/testenv-build, the chart's paths,
# fail/pass, and a temporary directory removed on exit.
set -euo pipefail

source_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
chart=$source_dir/helm/ballast
bin=$("$source_dir/scripts/testenv-build" --print-bin)
export PATH=$bin:$PATH
export HELM_PLUGINS=$(dirname "$bin")/helm-plugins
# BALLAST_HELM=helm4: the same checks with Helm 4, which scripts/testenv-build
# builds beside Helm 3 (docs/helm.md, "Helm 3 and Helm 4").
helm_command=${BALLAST_HELM:-helm}
helm() { command "$helm_command" "$@"; }
# Skipped (77) without Helm 4, which the oldest test bed (--oldest) has not.
if [[ $helm_command == helm4 || $(basename "$0") == chart_helm4.sh ]] && ! command -v helm4 >/dev/null; then
  echo "skipped: no helm4 in $bin (the oldest test bed has Helm 3.15 alone)"
  exit 77
fi
# Helm's own config and cache stay out of the user's home.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export HELM_CONFIG_HOME=$tmp/helm-config HELM_CACHE_HOME=$tmp/helm-cache HELM_DATA_HOME=$tmp/helm-data
# The control plane's version (tests/testenv/go.mod's): helm template assumes
# 1.20 without it, below the chart's kubeVersion.
kube_version=$("$source_dir/scripts/testenv-build" --print-version)

fail() {
  echo "FAIL: $*" >&2
  exit 1
}
pass() { echo "ok: $*"; }
