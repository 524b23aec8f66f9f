#!/usr/bin/env bash
# WeightedJob's status is a subresource: the status the operator will write
# (phase, conditions, per-node table, progress, result, checkpoint) passes its
# schema through `kubectl patch --subresource=status`, shows in the printer
# columns of `kubectl get wj`, and neither write touches the other half.
source "$(dirname "$0")/lib.sh"

install_ballast_crds

cat <<'YAML' | kubectl apply -n "$ns" -f - >/dev/null
apiVersion: ballast.io/v1alpha1
kind: WeightedJob
metadata: {name: primes}
spec:
  workload: {primes: {limit: 300000}}
YAML
kubectl get wj -n "$ns" >"$tmp/get"
grep -qE '^NAME +PHASE +PROGRESS +FAILED +WORKERS +EFFICIENCY +COMPUTE +AGE$' "$tmp/get" ||
  fail "kubectl get wj columns: $(cat "$tmp/get")"
pass "kubectl get wj has the columns NAME PHASE PROGRESS FAILED WORKERS EFFICIENCY COMPUTE AGE"

# No operator has written a status: the schema's default shows Pending, and
# observedGeneration (which every operator writes) is absent.
expect_eq "phase of a job no operator took in" "Pending/" \
  "$(jp wj/primes '{.status.phase}/{.status.observedGeneration}')"
grep -qE '^primes +Pending +' "$tmp/get" || fail "kubectl get wj row of a new job: $(cat "$tmp/get")"
pass "a job no operator took in shows PHASE Pending"

# A status write on the main resource is ignored.
kubectl patch wj primes -n "$ns" --type merge -p '{"status":{"phase":"Running"}}' >/dev/null
expect_eq "status after a main-resource patch" "Pending" "$(jp wj/primes '{.status.phase}')"

now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
cat >"$tmp/status.json" <<JSON
{"status": {
  "phase": "Running", "observedGeneration": 1,
  "conditions": [
    {"type": "Ready", "status": "True", "reason": "WorkersRunning", "message": "3 workers",
     "lastTransitionTime": "$now", "observedGeneration": 1},
    {"type": "Progressing", "status": "True", "reason": "ItemsFinishing", "message": "63000 of 150000",
     "lastTransitionTime": "$now", "observedGeneration": 1}],
  "nodes": [
    {"name": "pi4b-0", "weight": 5, "score": 0.975, "estimatedSpeed": 1200.5, "items": 30000, "steals": 1, "duplicateSeconds": 0.75, "pod": "primes-pi4b-0",
     "prior": {"source": "blended", "value": 4.5, "samples": 2.5, "ageSeconds": 3600}, "measuredSpeed": 1180.25, "priorError": -0.031, "baselineRatio": 0.52, "baselineVerdict": "slow", "energyJoules": 412.5},
    {"name": "pi3b-0", "weight": 1, "score": 0.229, "estimatedSpeed": 240, "items": 3000, "steals": 0, "pod": "primes-pi3b-0"}],
  "excludedNodes": [
    {"name": "pi5-0", "reason": "ArchitectureNotSupported", "message": "node pi5-0: architecture arm64 is not in --worker-architectures (amd64)"}],
  "excludedNodeCount": 101,
  "nodeSummary": {"nodes": 1000, "shown": 2, "steals": 17,
    "estimatedSpeed": {"measured": 998, "min": 240, "median": 900.5, "max": 1200.5},
    "priors": {"blended": 1, "profile": 999}},
  "progress": "42%", "completedItems": 63000, "completedCost": 52000.5, "totalCost": 150000,
  "items": 150000, "workers": 3,
  "failedItems": 2, "failedItemValues": ["a.jpg", "b.jpg"],
  "energy": {"joules": 412.5, "joulesPerItem": 0.0825, "complete": true, "estimate": false, "summary": "412.5 J (0.115 Wh), 0.0825 J per item"},
  "timing": {"endToEndSeconds": 31.2, "computeSeconds": 12.1, "computeEfficiency": 0.97,
    "firstReportNode": "pi4b-0",
    "beforeFirstReport": {"operatorSeconds": 0.1, "waitingForNodesSeconds": 0, "podSchedulingSeconds": 1,
      "podStartSeconds": 1, "containerStartSeconds": 16, "workerStartSeconds": 1}},
  "efficiencyNote": "31.2 s end to end, 12.1 s computing; before it mostly container start 16.0 s",
  "note": "31.2 s end to end, 12.1 s computing; before it mostly container start 16.0 s",
  "costModel": {"startCost": 0.42, "learned": true, "samples": 64, "secondsPerCost": 0.0125, "startSeconds": 0.00525},
  "result": {"primes": {"count": 12000, "sum": "0x00000000075bcd15"}},
  "startTime": "$now", "makespanSeconds": 12.5, "idealSeconds": 11.6, "efficiency": 0.93,
  "efficiencyReference": "declared speeds", "limitBound": "work",
  "estimatedIdealSeconds": 12.1, "estimatedEfficiency": 0.97,
  "checkpoint": {"finished": [[0, 63000]], "result": {"primes": {"count": 12000, "sum": "0x00000000075bcd15"}}}
}}
JSON
kubectl patch wj primes -n "$ns" --subresource=status --type merge --patch-file "$tmp/status.json" >/dev/null ||
  fail "the status patch was refused"
expect_eq "status after a status patch" "Running 42% 3 0.93" \
  "$(jp wj/primes '{.status.phase} {.status.progress} {.status.workers} {.status.efficiency}')"
expect_eq "generation after a status patch" 1 "$(jp wj/primes '{.metadata.generation}')"
expect_eq "preserved result and checkpoint" "12000 0 63000" \
  "$(jp wj/primes '{.status.result.primes.count} {.status.checkpoint.finished[0][0]} {.status.checkpoint.finished[0][1]}')"
expect_eq "node table" "pi4b-0=5 pi3b-0=1" \
  "$(jp wj/primes '{range .status.nodes[*]}{.name}={.weight} {end}' | sed 's/ $//')"
expect_eq "node priors" "pi4b-0=blended/4.5/2.5/3600/1180.25/-0.031" \
  "$(jp wj/primes '{range .status.nodes[?(@.prior)]}{.name}={.prior.source}/{.prior.value}/{.prior.samples}/{.prior.ageSeconds}/{.measuredSpeed}/{.priorError}{end}')"
expect_eq "node baselines" "pi4b-0=0.52/slow" \
  "$(jp wj/primes '{range .status.nodes[?(@.baselineRatio)]}{.name}={.baselineRatio}/{.baselineVerdict}{end}')"
expect_eq "job energy" "412.5 true" "$(jp wj/primes '{.status.energy.joules} {.status.energy.complete}')"
expect_eq "node energy" "pi4b-0=412.5" \
  "$(jp wj/primes '{range .status.nodes[?(@.energyJoules)]}{.name}={.energyJoules}{end}')"
expect_eq "excluded nodes" "pi5-0=ArchitectureNotSupported" \
  "$(jp wj/primes '{range .status.excludedNodes[*]}{.name}={.reason}{end}')"
expect_eq "node summary" "1000 2 17 998/240/900.5/1200.5 999 101" \
  "$(jp wj/primes '{.status.nodeSummary.nodes} {.status.nodeSummary.shown} {.status.nodeSummary.steals} {.status.nodeSummary.estimatedSpeed.measured}/{.status.nodeSummary.estimatedSpeed.min}/{.status.nodeSummary.estimatedSpeed.median}/{.status.nodeSummary.estimatedSpeed.max} {.status.nodeSummary.priors.profile} {.status.excludedNodeCount}')"

kubectl get wj primes -n "$ns" >"$tmp/get"
grep -qE '^primes +Running +42% +2 +3 +0\.93 +0\.97 +[0-9][0-9a-z]*$' "$tmp/get" || fail "kubectl get wj row: $(cat "$tmp/get")"
kubectl get wj primes -n "$ns" -o wide >"$tmp/wide"
grep -qE '^primes +Running +42% +2 +3 +0\.93 +0\.97 +declared speeds +31\.2 s end to end, .*; before it mostly container start 16\.0 s +raspberry-pi +150000 +[0-9][0-9a-z]*$' "$tmp/wide" ||
  fail "kubectl get wj -o wide row: $(cat "$tmp/wide")"
expect_eq "timing and failed items" "12.1 16 a.jpg" \
  "$(jp wj/primes '{.status.timing.computeSeconds} {.status.timing.beforeFirstReport.containerStartSeconds} {.status.failedItemValues[0]}')"
expect_eq "costs" "52000.5 150000" "$(jp wj/primes '{.status.completedCost} {.status.totalCost}')"
expect_eq "cost model" "0.42 true 64 0.0125 0.00525" \
  "$(jp wj/primes '{.status.costModel.startCost} {.status.costModel.learned} {.status.costModel.samples} {.status.costModel.secondsPerCost} {.status.costModel.startSeconds}')"
pass "kubectl get wj shows phase, progress, failed items, workers, efficiency, compute efficiency (-o wide: what the efficiency is measured against, note, profile, items)"

# A spec update leaves the status alone and moves the generation.
kubectl patch wj primes -n "$ns" --type merge -p '{"spec":{"suspend":true}}' >/dev/null
expect_eq "generation after a spec update" 2 "$(jp wj/primes '{.metadata.generation}')"
expect_eq "status after a spec update" "Running 42% 63000" \
  "$(jp wj/primes '{.status.phase} {.status.progress} {.status.completedItems}')"

# The status has a schema too.
if kubectl patch wj primes -n "$ns" --subresource=status --type merge \
  -p '{"status":{"phase":"Exploded"}}' >"$tmp/out" 2>&1; then
  fail "phase Exploded was accepted"
fi
grep -qF 'Unsupported value: "Exploded"' "$tmp/out" || fail "unexpected refusal: $(cat "$tmp/out")"
pass "an unknown phase is refused"
if kubectl patch wj primes -n "$ns" --subresource=status --type json \
  -p '[{"op":"add","path":"/status/conditions/-","value":{"type":"Failed","status":"Maybe","reason":"x","message":"","lastTransitionTime":"'"$now"'"}}]' \
  >"$tmp/out" 2>&1; then
  fail "condition status Maybe was accepted"
fi
grep -qF 'Unsupported value: "Maybe"' "$tmp/out" || fail "unexpected refusal: $(cat "$tmp/out")"
pass "a condition outside metav1.Condition's shape is refused"
rows=$(python3 -c 'import json; print(json.dumps({"status": {"nodes": [{"name": "n%d" % i} for i in range(101)]}}))')
if kubectl patch wj primes -n "$ns" --subresource=status --type merge -p "$rows" >"$tmp/out" 2>&1; then
  fail "101 node rows were accepted"
fi
grep -qF 'must have at most 100 items' "$tmp/out" || fail "unexpected refusal: $(cat "$tmp/out")"
pass "status.nodes holds at most 100 rows"

# WeightProfile has a status subresource as well.
cat <<YAML | kubectl apply -f - >/dev/null
apiVersion: ballast.io/v1alpha1
kind: WeightProfile
metadata: {name: $ns-profile}
spec:
  criteria: [{name: sd, label: ballast.io/sd-gb, type: numeric, rank: 1, default: 8}]
YAML
kubectl patch wp "$ns-profile" --subresource=status --type merge -p '{"status":{"observedGeneration":1,"conditions":[{"type":"Valid","status":"True","reason":"Checked","message":"","lastTransitionTime":"'"$now"'"}]}}' >/dev/null ||
  fail "the WeightProfile status patch was refused"
expect_eq "WeightProfile status" True "$(kubectl get wp "$ns-profile" -o 'jsonpath={.status.conditions[0].status}')"
kubectl delete wp "$ns-profile" >/dev/null
