#!/usr/bin/env bash
# `ballast selftest`, which the chart's `helm test` runs, against the real
# control plane with a real `ballast operator` for the test's namespace and
# the emulated Pis running the real ballast-worker: it passes with the exact
# count and deletes its job; it replaces a job of its name left by an earlier
# run; a job that fails and an operator that is not there make it exit 1
# saying why.
#   usage: chart_selftest.sh BALLAST_BINARY
# shellcheck source=../operator/crds/lib.sh
source "$(dirname "$0")/../operator/crds/lib.sh"
ballast=${1:?usage: chart_selftest.sh BALLAST_BINARY}
[[ -x $ballast ]] || fail "no ballast binary at $ballast"

install_ballast_crds_and_profiles

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$ballast" operator -n "$ns" --coordinator-listen "127.0.0.1:$port" \
  --worker-image ballast-worker:dev >"$tmp/operator.log" 2>&1 &
operator=$!
stop_operator() {
  kill "$operator" 2>/dev/null && wait "$operator" 2>/dev/null || true
}
trap 'stop_operator; cleanup' EXIT

# selftest ARGS...: runs it in the test's namespace; output in $tmp/out, code in $rc.
selftest() {
  rc=0
  "$ballast" selftest -n "$ns" --node-selector ballast.io/pool=seed000 "$@" >"$tmp/out" 2>&1 || rc=$?
  cat "$tmp/out"
}

# A job of the selftest's name left by an earlier run (suspended, so it
# never finishes) is deleted first.
kubectl create -n "$ns" -f - >/dev/null <<YAML
apiVersion: ballast.io/v1alpha1
kind: WeightedJob
metadata: {name: ballast-selftest}
spec:
  workload: {primes: {limit: 1000, method: trial}}
  profile: raspberry-pi
  suspend: true
YAML

selftest --limit 300000 --timeout 120
expect_eq "exit code of a passing selftest" 0 "$rc"
# The pool's nodes ran it, and no other: the finished job's node rows say
# which (a worker that starts after a short job finished has none, so one
# to three of them; a progress line may show none, as a short job writes
# its status only every --status-interval and at its progress steps).
pool='(pi3b-0|pi4b-0|pi4b-1)'
grep -Eq "^selftest: passed: 25997 primes, checksum 0x00000000dd1a962a, as the sieve here counts them, on [1-3] nodes? \\($pool(, $pool)*\\); the job is deleted\$" "$tmp/out" ||
  fail "no passing line with seed 000's count on nodes of its pool alone"
expect_eq "WeightedJobs left in $ns" "" "$(kubectl get weightedjobs -n "$ns" -o name)"

selftest --name selftest-bad-profile --profile no-such-profile --timeout 60
expect_eq "exit code of a selftest whose job fails" 1 "$rc"
grep -q "^selftest: FAILED: the job Failed (ProfileNotFound: WeightProfile 'no-such-profile' does not exist" "$tmp/out" ||
  fail "the failure does not say ProfileNotFound"
expect_eq "WeightedJobs left after a failure" "" "$(kubectl get weightedjobs -n "$ns" -o name)"

# The chart's helm test pod runs ballast with exactly these arguments.
export HELM_CONFIG_HOME=$tmp/helm-config HELM_CACHE_HOME=$tmp/helm-cache HELM_DATA_HOME=$tmp/helm-data
helm template ballast "$source_dir/helm/ballast" -n "$ns" \
  --kube-version "$("$source_dir/scripts/testenv-build" --print-version)" \
  --show-only templates/tests/selftest.yaml --set-json 'test.nodeSelector={"ballast.io/pool":"seed000"}' |
  python3 -c '
import sys, yaml
pods = [d for d in yaml.safe_load_all(sys.stdin) if d and d["kind"] == "Pod"]
print("\n".join(pods[0]["spec"]["containers"][0]["args"]))' >"$tmp/args"
mapfile -t args <"$tmp/args"
rc=0
"$ballast" "${args[@]}" >"$tmp/out" 2>&1 || rc=$?
cat "$tmp/out"
expect_eq "exit code of the chart's selftest arguments (${args[*]})" 0 "$rc"
grep -q '^selftest: passed: 2262 primes' "$tmp/out" || fail "the chart's selftest did not pass"

# SIGTERM (helm test's timeout deleting the pod) mid-job: the job is
# deleted and the exit code says the signal (128 + 15).
"$ballast" selftest -n "$ns" --name selftest-stopped --node-selector ballast.io/pool=seed000 \
  --limit 2000000 --timeout 120 >"$tmp/out" 2>&1 &
stopped=$!
wait_until "the job selftest-stopped running" 30 \
  bash -c "[[ \$(kubectl get weightedjob -n '$ns' selftest-stopped -o jsonpath='{.status.phase}') == Running ]]"
kill -TERM "$stopped"
rc=0
wait "$stopped" || rc=$?
cat "$tmp/out"
expect_eq "exit code of a selftest stopped by SIGTERM" 143 "$rc"
grep -q '^selftest: stopped by signal 15; the job.s deletion is requested$' "$tmp/out" || fail "no stop message"
wait_until "the stopped selftest's job deleted" 30 \
  bash -c "! kubectl get weightedjob -n '$ns' selftest-stopped >/dev/null 2>&1"

stop_operator
selftest --name selftest-no-operator --timeout 3
expect_eq "exit code without an operator" 1 "$rc"
grep -q '^selftest: FAILED: the job did not finish within --timeout 3 s (last seen: waiting for the operator (not taken in yet)); is the operator running?' "$tmp/out" ||
  fail "the timeout does not say the operator was not seen"

selftest --limit 1
expect_eq "exit code of a bad flag" 2 "$rc"
