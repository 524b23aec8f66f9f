#!/usr/bin/env bash
# The metrics contract for `ballast operator` (docs/metrics.md): a real
# operator for the test's namespace against the test control plane's API
# server, one WeightedJob run by the real ballast-worker on the emulated Pis
# of pool seed000; the operator's port is scraped until the job finished and
# its families (the operator's and the coordinator's inside it) must equal
# the documented ones, both ways.
#   usage: metrics_contract_operator.sh BALLAST_BINARY
# shellcheck source=../operator/crds/lib.sh
source "$(dirname "$0")/../operator/crds/lib.sh"
ballast=${1:?usage: metrics_contract_operator.sh BALLAST_BINARY}
[[ -x $ballast ]] || fail "no ballast binary at $ballast"

install_ballast_crds_and_profiles
cat >"$tmp/job.yaml" <<YAML
apiVersion: ballast.io/v1alpha1
kind: WeightedJob
metadata: {name: metrics-contract}
spec:
  workload: {primes: {limit: 300000, method: trial}}
  profile: raspberry-pi
  nodeSelector: {ballast.io/pool: seed000}
YAML
python3 "$(dirname "$0")/metrics_contract.py" operator "$ballast" "$source_dir/docs/metrics.md" \
  "$ns" "$tmp/job.yaml"
