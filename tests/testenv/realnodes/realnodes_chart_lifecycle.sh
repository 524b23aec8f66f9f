#!/usr/bin/env bash
# The chart's lifecycle as docs/helm.md and docs/probe.md tell it (issue 32),
# on real kubelets beside a k3s-like server (server-0, not a board), whose
# boards got seed 000's labels from the kubelet (--node-labels):
# - the probe notes the kubelet's labels once, as a Normal LabelsSetByOthers,
#   and warns of no label that is set (power-w=6.4 was said to be missing);
#   server-0 says why it has no ballast.io/board (NotARaspberryPi and the
#   annotation ballast.io/board-note);
# - examples/jobs/primes-300000.yaml as written runs on the three boards only,
#   weights 5 / 5 / 1, 25997 primes (it ran on four nodes, 1 / 5 / 5 / 5);
# - the job's finished worker pods go after worker.podTTLSecondsAfterFinished,
#   the job stays;
# - `helm test --logs` prints the test's log;
# - an upgrade's rollout stops the leader with SIGTERM: its Lease released
#   and the process ended within 2 s, by its own log;
# - every node's BallastBoardNoMemoryCgroup is False (MemoryCgroupPresent);
# - `helm uninstall` leaves in the namespace exactly what "Uninstalling"
#   lists, and its loop removes the labels and annotations the probe alone set;
#   the history ConfigMap it keeps is taken back by a reinstall.
# The images as a user without a registry has them: scripts/images' amd64
# archives, which the bed imported into every node at its start as k3s
# imports its images folder, the chart from the checkout with no image value
# (the archives carry its default names, ghcr.io/ballast-io/...), never
# pulled; the other chart tests pull from the bed's registry.
source "$(dirname "$0")/require_root.sh"
source "$(dirname "$0")/../smoke/lib.sh"
source "$(dirname "$0")/lib.sh"

release=ballast-life
# The worker pods' TTL: the pods are seen right as the job succeeds (below),
# well inside it, and their deletion is timed from status.completionTime.
ttl=8
# Events of this release's probe pods only (earlier tests' are older): one
# pod per node, which posts each note once.
since=$(date -u +%Y-%m-%dT%H:%M:%SZ)
uninstall_on_exit() {
  helm uninstall "$release" -n "$ns" --wait --timeout 60s >/dev/null 2>&1 || true
  kubectl delete weightedjobs -n "$ns" --all --wait=false >/dev/null 2>&1 || true
  cleanup
}
trap uninstall_on_exit EXIT

for node in pi4b-0 pi4b-1 pi3b-0 server-0; do
  kubectl get node "$node" >/dev/null 2>&1 || fail "no node $node (tests/testenv/nodes/seed000-real.yaml)"
done
use_imported_images
require_ballast_images
pass "scripts/images' archives imported into ${real_nodes[*]}: $bed_registry/ballast:$version, $bed_registry/ballast-worker:$version"
helm install "$release" "$chart" -n "$ns" "${helm_args[@]}" --set operator.replicas=1 \
  --set "worker.podTTLSecondsAfterFinished=$ttl" --set probe.intervalSeconds=5 \
  --wait --timeout 240s >"$tmp/install" ||
  fail "helm install: $(cat "$tmp/install"); pods: $(kubectl get pods -n "$ns" -o wide 2>&1); events: $(kubectl get events -n "$ns" --field-selector type=Warning 2>&1 | tail -20)"
# The CLI's `ballast weights`; the kubectl plugin's `kubectl ballast weights` is meant.
grep -v "kubectl ballast weights" "$tmp/install" | grep -q "ballast weights" &&
  fail "NOTES name \`ballast weights\`, which a chart user does not have"
grep -q -- "--reuse-values" "$tmp/install" || fail "NOTES do not warn of helm upgrade without --reuse-values"
pass "helm install; NOTES without \`ballast weights\`, with the upgrade warning"

# --- the probe's Events ------------------------------------------------------------
probe_events() { # NODE REASON: the messages of the probe's Events since this test began
  kubectl get events -n default -o json \
    --field-selector "involvedObject.name=$1,reason=$2,source=ballast-probe" |
    python3 -c 'import json, sys
since = sys.argv[1]
for e in json.load(sys.stdin)["items"]:
    if (e.get("lastTimestamp") or "") >= since:
        print(e["type"] + " " + e["message"].replace("\n", " | "))' "$since"
}
has_note() { [[ -n $(probe_events "$1" "$2") ]]; }
wait_until "pi4b-0's LabelsSetByOthers" 90 has_note pi4b-0 LabelsSetByOthers
wait_until "server-0's NotARaspberryPi" 90 has_note server-0 NotARaspberryPi
held=$(probe_events pi4b-0 LabelsSetByOthers)
expect_eq "LabelsSetByOthers on pi4b-0: one Event" 1 "$(wc -l <<<"$held")"
[[ $held == "Normal "* ]] || fail "LabelsSetByOthers is not Normal: $held"
[[ $held == *"ballast.io/power-w=6.4 (set by kubelet; the probe has no value)"* ]] ||
  fail "LabelsSetByOthers does not name power-w, set by the kubelet: $held"
[[ $held == *"ballast.io/cpu-model=cortex-a72 (set by kubelet; the probe reads "* ]] ||
  fail "LabelsSetByOthers does not name cpu-model and the probe's reading: $held"
[[ $held != *"more in the probe's log"* ]] || fail "LabelsSetByOthers cut: $held"
# Seed 000's labels are all on the boards: nothing is missing there.
for node in pi4b-0 pi4b-1 pi3b-0; do
  warned=$(probe_events "$node" ProbeFactUnknown)
  [[ -z $warned ]] || fail "a ProbeFactUnknown on $node, whose labels are set: $warned"
done
pass "the boards: one Normal note of the kubelet's labels, no Warning"
note=$(kubectl get node server-0 -o jsonpath='{.metadata.annotations.ballast\.io/board-note}')
[[ $note == "not a Raspberry Pi board: "* ]] || fail "server-0's ballast.io/board-note: '$note'"
expect_eq "server-0's ballast.io/board" "" \
  "$(kubectl get node server-0 -o jsonpath='{.metadata.labels.ballast\.io/board}')"
# server-0 has no power figure and nobody set one: that Warning is the truth.
[[ $(probe_events server-0 ProbeFactUnknown) == *"label ballast.io/power-w: "*"default 6.4"* ]] ||
  fail "server-0's missing power-w not warned: $(probe_events server-0 ProbeFactUnknown)"
pass "server-0: $note"
# The kernel's memory cgroup, which every node here has (this machine's
# /proc/cgroups, cgroup v1): the probe says so on each Node, False.
memory_cgroup() {
  kubectl get node "$1" -o jsonpath='{.status.conditions[?(@.type=="BallastBoardNoMemoryCgroup")].status} {.status.conditions[?(@.type=="BallastBoardNoMemoryCgroup")].reason}'
}
memory_cgroup_present() { [[ $(memory_cgroup "$1") == "False MemoryCgroupPresent" ]]; }
for node in pi4b-0 pi4b-1 pi3b-0 server-0; do
  wait_until "$node's BallastBoardNoMemoryCgroup False" 90 memory_cgroup_present "$node"
done
pass "BallastBoardNoMemoryCgroup: $(kubectl get node pi4b-0 -o jsonpath='{.status.conditions[?(@.type=="BallastBoardNoMemoryCgroup")].message}')"

# --- the example job as written ------------------------------------------------------
kubectl apply -n "$ns" -f "$source_dir/examples/jobs/primes-300000.yaml" >/dev/null
job=primes-300000
succeeded() {
  local p
  p=$(jp "weightedjob/$job" '{.status.phase}')
  [[ $p == Failed ]] && fail "job $job failed: $(jp "weightedjob/$job" '{.status.conditions}')"
  [[ $p == Succeeded ]]
}
worker_pods() { kubectl get pods -n "$ns" -l "ballast.io/job=$job" -o name; }
wait_until "examples/jobs/primes-300000.yaml Succeeded" 300 succeeded
# Read at once: the TTL runs from the job's end.
[[ -n $(worker_pods) ]] || fail "no worker pod right after the job finished (the TTL is $ttl s)"
expect_eq "primes below 300000" 25997 "$(jp "weightedjob/$job" '{.status.result.primes.count}')"
expect_eq "its nodes and weights" "pi3b-0=1 pi4b-0=5 pi4b-1=5" \
  "$(kubectl get weightedjob -n "$ns" "$job" -o json | python3 -c 'import json, sys; print(" ".join(sorted("%s=%g" % (n["name"], n["weight"]) for n in json.load(sys.stdin)["status"]["nodes"])))')"
pass "the example on the boards alone, weights 5 / 5 / 1"
# Many passes of the probe later (every 5 s), still one note per node.
expect_eq "LabelsSetByOthers on pi4b-0, passes later" 1 \
  "$(probe_events pi4b-0 LabelsSetByOthers | wc -l)"

# --- finished worker pods go after the TTL ---------------------------------------
# The operator counts from status.completionTime (whole seconds, this
# machine's clock, as the operator's).
finished=$(date -d "$(jp "weightedjob/$job" '{.status.completionTime}')" +%s)
no_worker_pods() { [[ -z $(worker_pods) ]]; }
wait_until "the finished worker pods deleted after $ttl s" $((ttl + 60)) no_worker_pods
gone=$(($(date +%s) - finished))
((gone >= ttl)) || fail "the worker pods went $gone s after the job finished, before the TTL ($ttl s)"
expect_eq "the job after its pods went" Succeeded "$(jp "weightedjob/$job" '{.status.phase}')"
pass "worker pods gone $gone s after the job finished (TTL $ttl s); the job stays"

# --- helm test --logs --------------------------------------------------------------
helm test "$release" -n "$ns" --logs --timeout 300s >"$tmp/test" 2>&1 || fail "helm test: $(cat "$tmp/test")"
grep -q "selftest: passed: " "$tmp/test" || fail "helm test --logs printed no log: $(cat "$tmp/test")"
pass "helm test --logs: $(grep -m1 'selftest: passed' "$tmp/test")"

# --- helm upgrade without --reuse-values -------------------------------------------
# The release was installed with an operator.nodeSelector; an upgrade that
# drops it says so in its NOTES, naming the selector and the command that puts
# it back, and that command does.
# --reuse-values merges the new key into the selector given at install (the
# k3s server's label where the test bed plays one), so the selector to expect
# back is the Deployment's, read after this upgrade.
# The leader's log followed to its end: the rollout stops it with SIGTERM.
operator_pod=$(kubectl get pods -n "$ns" -l app.kubernetes.io/component=operator -o name)
[[ $(wc -w <<<"$operator_pod") == 1 ]] || fail "one operator pod expected: $operator_pod"
kubectl logs -n "$ns" -f "$operator_pod" >"$tmp/operator.log" 2>&1 &
operator_log_pid=$!
helm upgrade "$release" "$chart" -n "$ns" --reuse-values \
  --set-json 'operator.nodeSelector={"kubernetes.io/hostname":"server-0"}' \
  --wait --timeout 120s >/dev/null || fail "helm upgrade --set-json operator.nodeSelector"
# SIGTERM to the leader: its Lease released and the process ended within
# 2 s (the pod's grace period is 30 s), by its own log's clock.
wait "$operator_log_pid"
logged_ms() { # PATTERN: the time of the log's first line matching it, in ms
  local line
  line=$(grep -m1 -- "$1" "$tmp/operator.log") || fail "the operator's log has no '$1': $(tail -5 "$tmp/operator.log")"
  [[ $line =~ ^\[([0-9-]+\ [0-9:.]+)\] ]] || fail "no time in: $line"
  date -d "${BASH_REMATCH[1]}" +%s%3N
}
stopping=$(logged_ms "stopping signal=15")
released=$(logged_ms "stopped leading")
stopped=$(logged_ms "operator stopped")
((stopped - stopping <= 2000)) || fail "the operator ended $((stopped - stopping)) ms after SIGTERM: $(tail -8 "$tmp/operator.log")"
pass "the operator, replaced by the upgrade, released its Lease after $((released - stopping)) ms and ended after $((stopped - stopping)) ms"
placed=$(kubectl get deployment "$release" -n "$ns" -o jsonpath='{.spec.template.spec.nodeSelector}')
[[ $placed == *'"kubernetes.io/hostname":"server-0"'* ]] ||
  fail "the upgrade with --set-json operator.nodeSelector left the selector at $placed"
# Without --reuse-values every value but these goes: the bed's images stay
# (bed_image_args, lib.sh), the selector is dropped.
helm upgrade "$release" "$chart" -n "$ns" "${bed_image_args[@]}" --set operator.replicas=1 \
  --wait --timeout 120s >"$tmp/upgrade" 2>&1 || fail "helm upgrade: $(cat "$tmp/upgrade")"
grep -q "WARNING: this upgrade dropped operator.nodeSelector $placed" "$tmp/upgrade" ||
  fail "the upgrade that dropped operator.nodeSelector did not say so: $(cat "$tmp/upgrade")"
again=$(grep -o "helm upgrade $release <chart> .*--set-json '[^']*'" "$tmp/upgrade" | sed "s|<chart>|$chart|")
[[ -n $again ]] || fail "the warning names no command to put it back: $(cat "$tmp/upgrade")"
eval "$again --wait --timeout 120s" >"$tmp/again" 2>&1 || fail "$again: $(cat "$tmp/again")"
grep -q WARNING "$tmp/again" && fail "the upgrade that put it back warns still: $(cat "$tmp/again")"
expect_eq "operator.nodeSelector after the warning's command" "$placed" \
  "$(kubectl get deployment "$release" -n "$ns" -o jsonpath='{.spec.template.spec.nodeSelector}')"

# --- uninstall: what docs/helm.md lists, and nothing else -----------------------------
helm uninstall "$release" -n "$ns" --wait --timeout 120s >/dev/null || fail "helm uninstall"
owned_by_job() { # KIND NAME: whether a WeightedJob owns it
  [[ $(kubectl get "$1" -n "$ns" "$2" -o jsonpath='{.metadata.ownerReferences[*].kind}') == *WeightedJob* ]]
}
unlisted() {
  local object
  for object in $(kubectl get all,serviceaccounts,roles,rolebindings,networkpolicies,poddisruptionbudgets,leases,configmaps,secrets \
    -n "$ns" -o name); do
    case $object in
      serviceaccount/default | configmap/kube-root-ca.crt | "pod/$release-selftest" | "configmap/$release-history") ;;
      pod/* | secret/*) owned_by_job "${object%%/*}" "${object#*/}" || echo "$object" ;;
      *) echo "$object" ;;
    esac
  done
  kubectl get clusterroles,clusterrolebindings,weightprofiles -l "app.kubernetes.io/instance=$release" -o name
}
deadline=$((SECONDS + 90))
until [[ -z $(unlisted) ]]; do
  ((SECONDS < deadline)) || fail "left after helm uninstall, not in docs/helm.md's list: $(unlisted | paste -sd' ')"
  sleep 0.5
done
kubectl get pod -n "$ns" "$release-selftest" >/dev/null 2>&1 ||
  fail "the helm test pod docs/helm.md says stays is gone"
expect_eq "the WeightedJob kept" "$job" "$(kubectl get weightedjobs -n "$ns" -o jsonpath='{.items[*].metadata.name}')"
pass "helm uninstall left what docs/helm.md lists: the test pod, the job and its Secret, the CRDs, the history"

# The history store is kept (history.keepOnUninstall): with the job's samples,
# taken back by a reinstall of the same release (the same object: Helm adopts
# it), and gone with docs/helm.md's command.
history_field() { kubectl get configmap -n "$ns" "$release-history" -o "jsonpath=$1"; }
kept_uid=$(history_field '{.metadata.uid}') || fail "the history ConfigMap was not kept"
kept_data=$(history_field '{.data}')
[[ -n $kept_data && $kept_data != "{}" ]] || fail "the kept history ConfigMap holds no samples"
pass "the history ConfigMap kept, with the job's samples"
helm install "$release" "$chart" -n "$ns" "${helm_args[@]}" --set operator.replicas=1 \
  --wait --timeout 240s >"$tmp/reinstall" || fail "helm install over the kept history: $(cat "$tmp/reinstall")"
expect_eq "the history ConfigMap after a reinstall (its uid)" "$kept_uid" "$(history_field '{.metadata.uid}')"
expect_eq "the history's samples after a reinstall" "$kept_data" "$(history_field '{.data}')"
helm uninstall "$release" -n "$ns" --wait --timeout 120s >/dev/null || fail "helm uninstall after the reinstall"
kubectl -n "$ns" delete configmap "$release-history" >/dev/null || fail "docs/helm.md's delete of the history"
wait_until "no history ConfigMap" 30 bash -c "! kubectl get configmap -n $ns $release-history"

# The probe's labels: docs/helm.md's loop, once no probe pod is left.
no_probe_pods() { [[ -z $(kubectl get pods -n "$ns" -l app.kubernetes.io/component=probe -o name) ]]; }
wait_until "no probe pod" 60 no_probe_pods
for node in $(kubectl get nodes -o jsonpath='{.items[*].metadata.name}'); do
  printf '{"apiVersion":"v1","kind":"Node","metadata":{"name":"%s"}}' "$node" |
    kubectl apply --server-side --field-manager=ballast-probe -f - >/dev/null
done
for node in pi4b-0 server-0; do
  expect_eq "$node's probe annotations after the loop" "" \
    "$(kubectl get node "$node" -o jsonpath='{.metadata.annotations.ballast\.io/probe-labels}{.metadata.annotations.ballast\.io/board-note}')"
  expect_eq "$node's ballast.io/kernel-bits (the probe's alone) after the loop" "" \
    "$(kubectl get node "$node" -o jsonpath='{.metadata.labels.ballast\.io/kernel-bits}')"
done
expect_eq "pi4b-0's cpu-model (the kubelet's) after the loop" cortex-a72 \
  "$(kubectl get node pi4b-0 -o jsonpath='{.metadata.labels.ballast\.io/cpu-model}')"
expect_eq "pi4b-0's board (the kubelet's) after the loop" pi-4b \
  "$(kubectl get node pi4b-0 -o jsonpath='{.metadata.labels.ballast\.io/board}')"
pass "docs/helm.md's loop removed the probe's own labels and annotations, kept the kubelet's"
