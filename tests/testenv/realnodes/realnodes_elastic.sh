#!/usr/bin/env bash
# The cluster changing under a running job, on real kubelets: seed 000's job
# (primes below 600,000) starts on two boards (pi4b-0 and pi3b-0, selected by a
# label of this test's own); once its first progress is written pi4b-1 is
# labelled in and joins the running job (NodeJoined, its pod runs, it
# computes); then pi3b-0 is drained with `kubectl drain` and its worker leaves
# at once (NodeLeft, its lease back in the pool, no wait for it to expire).
# The result is exact. Prints how long each change took to act on, and the
# job's efficiency, whose limit counts each board only while it was in the
# job. Needs the images in the bed's registry (scripts/images --arch amd64 before
# scripts/testenv-up --real-nodes pushes them).
source "$(dirname "$0")/require_root.sh"
source "$(dirname "$0")/../smoke/lib.sh"
source "$(dirname "$0")/lib.sh"

release=elastic
key="e2e.ballast.io/$ns"
restore() {
  helm uninstall "$release" -n "$ns" --wait --timeout 60s >/dev/null 2>&1 || true
  for node in pi4b-0 pi4b-1 pi3b-0; do
    kubectl label node "$node" "$key-" >/dev/null 2>&1 || true
  done
  kubectl uncordon pi3b-0 >/dev/null 2>&1 || true
  [[ -z ${events_pid:-} ]] || stop_events
  cleanup
}
trap restore EXIT

for node in pi4b-0 pi4b-1 pi3b-0; do
  kubectl get node "$node" >/dev/null 2>&1 || fail "no node $node (tests/testenv/nodes/seed000-real.yaml)"
done
require_ballast_images
helm install "$release" "$chart" -n "$ns" "${helm_args[@]}" --set operator.replicas=1 \
  --wait --timeout 240s >"$tmp/install" || fail "helm install: $(cat "$tmp/install")"
pass "helm install"

kubectl label node pi4b-0 pi3b-0 "$key=in" >/dev/null
job=elastic
sed -e "s/name: primes-300000/name: $job/" -e "s/limit: 300000/limit: 600000/" \
  "$source_dir/examples/jobs/primes-300000.yaml" >"$tmp/job.yaml"
cat >>"$tmp/job.yaml" <<YAML
  nodeSelector:
    ballast.io/pool: seed000
    $key: "in"
YAML
kubectl apply -n "$ns" -f "$tmp/job.yaml" >/dev/null

# The job's first progress written (its first items done): the join and the
# drain then come with nearly all of its work ahead (about 40 s of the
# boards here, against the 10 s they take). (Waiting for a third of the
# work, the status's steps of about a quarter of the items made that moment
# anywhere from a third to a half of the way through, and left as little
# as 15 s of the job for them.)
under_way() { (($(jp "weightedjob/$job" '{.status.completedItems}') > 0)); }
wait_until "job $job under way on two boards" 300 under_way
pass "at $(jp "weightedjob/$job" '{.status.completedItems}') of $(jp "weightedjob/$job" '{.status.items}') items, cost $(jp "weightedjob/$job" '{.status.completedCost}') of $(jp "weightedjob/$job" '{.status.totalCost}')"
rows() { jp "weightedjob/$job" '{.status.nodes[*].name}'; }
[[ $(rows) != *pi4b-1* ]] || fail "pi4b-1 is in the job before it was labelled in: $(rows)"

# Milliseconds since the epoch, and the time until an Event of REASON.
now_ms() { date +%s%3N; }
has_event() {
  kubectl get events -n "$ns" --field-selector "involvedObject.name=$job,reason=$1" -o name | grep -q .
}
joined_from=$(now_ms)
kubectl label node pi4b-1 "$key=in" >/dev/null
wait_until "NodeJoined event" 30 has_event NodeJoined
joined_ms=$(($(now_ms) - joined_from))
pod_running() { [[ $(jp "pod/$job-pi4b-1" '{.status.phase}') == Running ]]; }
wait_until "pi4b-1's worker pod Running" 60 pod_running
running_ms=$(($(now_ms) - joined_from))
pass "pi4b-1 joined: NodeJoined $joined_ms ms, its worker Running $running_ms ms after the label"

# The drain: cordon, then the eviction of the board's pods (ours only: the
# test bed runs nothing else there that a drain would need to move).
computing() { (($(jp "weightedjob/$job" "{.status.nodes[?(@.name==\"pi4b-1\")].items}") > 0)); }
wait_until "pi4b-1 computing" 60 computing
# The time the Event arrives, not the time a poll finds it: a watch on the
# job's Events, started (and its first list printed) before the drain, stamps
# each reason as it comes, so neither a poll's interval nor a kubectl start
# under load is counted. The drain runs beside it (kubectl drain returns only
# once the evicted pod is gone).
(kubectl get events -n "$ns" --field-selector "involvedObject.name=$job" --watch \
  --no-headers -o custom-columns=REASON:.reason 2>/dev/null |
  while read -r reason; do echo "$(now_ms) $reason"; done) >"$tmp/events" &
events_pid=$!
stop_events() { pkill -P "$events_pid" 2>/dev/null || true; kill "$events_pid" 2>/dev/null || true; }
wait_until "the watch on job $job's Events (NodeJoined listed)" 30 grep -q NodeJoined "$tmp/events"
drained_from=$(now_ms)
kubectl drain pi3b-0 --pod-selector="ballast.io/job=$job" --ignore-daemonsets --force \
  --timeout=60s >"$tmp/drain" 2>&1 &
drain_pid=$!
wait_until "NodeLeft event" 30 grep -q NodeLeft "$tmp/events"
left_ms=$(($(awk '$2 == "NodeLeft" {print $1; exit}' "$tmp/events") - drained_from))
stop_events
wait "$drain_pid" || fail "kubectl drain: $(cat "$tmp/drain")"
drain_ms=$(($(now_ms) - drained_from))
pass "pi3b-0 drained: NodeLeft $left_ms ms after the drain began (kubectl drain returned after $drain_ms ms)"
((left_ms < 2000)) || fail "pi3b-0's worker left $left_ms ms after the drain began; the bound is 2000 ms"

succeeded() { [[ $(jp "weightedjob/$job" '{.status.phase}') == Succeeded ]]; }
wait_until "job $job Succeeded" 600 succeeded
expect_eq "primes below 600000" 49098 "$(jp "weightedjob/$job" '{.status.result.primes.count}')"
items_of() { jp "weightedjob/$job" "{.status.nodes[?(@.name==\"$1\")].items}"; }
newcomer=$(items_of pi4b-1)
((newcomer > 0)) || fail "pi4b-1 computed nothing"
pass "items: pi4b-0 $(items_of pi4b-0), pi3b-0 $(items_of pi3b-0) (drained), pi4b-1 $newcomer (joined)"
pass "figures: makespan $(jp "weightedjob/$job" '{.status.makespanSeconds}') s, efficiency $(jp "weightedjob/$job" '{.status.efficiency}'), against $(jp "weightedjob/$job" '{.status.efficiencyReference}'), the job's own estimate $(jp "weightedjob/$job" '{.status.estimatedEfficiency}') (each board counted while it was in the job; pod start included)"
