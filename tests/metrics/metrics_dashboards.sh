#!/usr/bin/env bash
# The Grafana dashboards on a real Prometheus (tests/metrics/dashboards_check.py):
# the operator for the test's namespace against the test control plane, and
# `ballast run` of a primes job, both scraped every second; every panel's
# query must parse, name documented metrics only and return data.
#   usage: metrics_dashboards.sh BALLAST_BINARY WORKER_BINARY
# shellcheck source=../operator/crds/lib.sh
source "$(dirname "$0")/../operator/crds/lib.sh"
ballast=${1:?usage: metrics_dashboards.sh BALLAST_BINARY WORKER_BINARY}
worker=${2:?usage: metrics_dashboards.sh BALLAST_BINARY WORKER_BINARY}

install_ballast_crds_and_profiles
python3 "$(dirname "$0")/dashboards_check.py" --source-dir "$source_dir" --ballast "$ballast" \
  --worker "$worker" --namespace "$ns" --job-limit 150000
