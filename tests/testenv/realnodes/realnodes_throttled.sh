#!/usr/bin/env bash
# A board throttled mid-job on real kubelets (docs/operator.md, "A node below
# its own baseline"): the chart installed without its probe DaemonSet, two
# jobs of seed 000 give the boards a baseline in the history ConfigMap, then
# the real probe (`ballast-worker probe --apply`) reads a captured Pi 4B tree
# whose firmware says under-voltage (tests/probe/trees/pi4b-8gb,
# get_throttled 0x50005) for pi4b-1, and once pi4b-1 has done its first
# items of a third job its CPU quota (its kubelet's cgroup) is cut from 0.5
# to 0.05 of a core.
# The job succeeds with the exact count; pi4b-1 is slow in its status with a
# NodeBelowBaseline Warning on the job and on the Node naming what its probe
# saw; the other two boards read at their baselines (no false alarm, not
# "fast"). Afterwards the quota, the Node's labels and conditions are as they
# were. Prints the ratios.
source "$(dirname "$0")/require_root.sh"
source "$(dirname "$0")/../smoke/lib.sh"
source "$(dirname "$0")/lib.sh"

release=throttled
board=pi4b-1
group=/sys/fs/cgroup/cpu/ballast-realnodes/$board
quota_file=$group/cpu.cfs_quota_us
[[ -f $quota_file ]] || fail "no CPU quota for $board at $quota_file (docs/testenv.md, \"Real nodes\")"
quota=$(<"$quota_file")
labels_of() { kubectl get node "$1" -o json | jq -cS '.metadata.labels'; }
conditions_of() { kubectl get node "$1" -o json | jq -c '[.status.conditions[].type | select(startswith("BallastBoard"))]'; }
labels_before=$(labels_of "$board")
probe=${BALLAST_WORKER_BINARY:-$source_dir/build/ballast-worker}

# The probe's fields leave with an empty apply of its field manager; the
# labels it took over from the test bed's are put back as they were.
unprobe() {
  local object='{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "'$board'"}}'
  kubectl apply --server-side --force-conflicts --field-manager=ballast-probe \
    --subresource=status -f - <<<"$object" >/dev/null
  kubectl apply --server-side --force-conflicts --field-manager=ballast-probe -f - <<<"$object" >/dev/null
  local key value
  while IFS=$'\t' read -r key value; do
    kubectl label node "$board" --overwrite "$key=$value" >/dev/null
  done < <(jq -r 'to_entries[] | [.key, .value] | @tsv' <<<"$labels_before")
}
restore() {
  echo "$quota" >"$quota_file" 2>/dev/null || true
  unprobe 2>/dev/null || true
  helm uninstall "$release" -n "$ns" --wait --timeout 60s >/dev/null 2>&1 || true
  cleanup
}
trap restore EXIT

require_ballast_images
# No probe DaemonSet: it would read this machine's own /sys for every board
# and write the board's conditions back to healthy.
helm install "$release" "$chart" -n "$ns" "${helm_args[@]}" --set operator.replicas=1 \
  --set probe.enabled=false --wait --timeout 240s >"$tmp/install" ||
  fail "helm install: $(cat "$tmp/install")"
pass "helm install (probe off)"

# run_job NAME LIMIT [HOOK]: seed 000's job on its three boards, primes below
# LIMIT; HOOK runs once it is Running. Waits until it Succeeded.
run_job() {
  sed -e "s/name: primes-300000/name: $1/" -e "s/limit: 300000/limit: $2/" \
    "$source_dir/examples/jobs/primes-300000.yaml" >"$tmp/$1.yaml"
  printf '  nodeSelector:\n    ballast.io/pool: seed000\n' >>"$tmp/$1.yaml"
  kubectl apply -n "$ns" -f "$tmp/$1.yaml" >/dev/null
  [[ -z ${3:-} ]] || "$3" "$1"
  succeeded() { [[ $(jp "weightedjob/$1" '{.status.phase}') == Succeeded ]]; }
  wait_until "job $1 Succeeded" 420 succeeded "$1"
}
run_job base-1 300000
run_job base-2 300000
expect_eq "primes below 300000" 25997 "$(jp weightedjob/base-2 '{.status.result.primes.count}')"
history=$(kubectl get configmap -n "$ns" -o name | grep -- '-history$') || fail "no history ConfigMap in $ns"
kubectl get -n "$ns" "$history" -o jsonpath='{.data}' | grep -q "$board" ||
  fail "$history holds no speed of $board after two jobs"
pass "two jobs make the boards' baseline ($history)"

"$probe" probe --apply --node "$board" --root "$source_dir/tests/probe/trees/pi4b-8gb" \
  --kubeconfig "$KUBECONFIG" >"$tmp/probe" 2>&1 || fail "the probe: $(cat "$tmp/probe")"
under=$(kubectl get node "$board" -o jsonpath='{.status.conditions[?(@.type=="BallastBoardUnderVoltage")].status}')
expect_eq "$board's BallastBoardUnderVoltage, as the probe wrote it" True "$under"

# Once the board has computed at its own speed (its row's first items in
# the job's status: the first progress written, or the next, at a quarter of
# the items), its quota is cut: most of its time in the job is then
# throttled, and its ratio for the whole job well below the 0.75 bound. Cut
# later, its ratio comes near the bound (0.71 once when cut to a fifth a
# third of the way in).
throttle() {
  board_computed() {
    local items
    items=$(jp "weightedjob/$1" "{.status.nodes[?(@.name==\"$board\")].items}")
    ((${items:-0} > 0))
  }
  wait_until "$board's first items in job $1" 300 board_computed "$1"
  echo "$((quota / 10))" >"$quota_file"
  pass "$board's quota cut from $quota to $((quota / 10)) us a period at $(jp "weightedjob/$1" '{.status.completedItems}') of $(jp "weightedjob/$1" '{.status.items}') items"
}
run_job throttled 500000 throttle
echo "$quota" >"$quota_file"
expect_eq "primes below 500000" 41538 "$(jp weightedjob/throttled '{.status.result.primes.count}')"

row() { jp weightedjob/throttled "{.status.nodes[?(@.name==\"$1\")].$2}"; }
ratio=$(row "$board" baselineRatio)
echo "ratios to baseline: $board $ratio, pi4b-0 $(row pi4b-0 baselineRatio), pi3b-0 $(row pi3b-0 baselineRatio)"
expect_eq "$board's verdict" slow "$(row "$board" baselineVerdict)"
awk -v r="$ratio" 'BEGIN { exit !(r > 0 && r < 0.75) }' || fail "$board at $ratio of its baseline, expected below 0.75"
for other in pi4b-0 pi3b-0; do
  expect_eq "$other's verdict (no false alarm, not fast)" normal "$(row "$other" baselineVerdict)"
done
pass "ratios to baseline: $board $ratio, pi4b-0 $(row pi4b-0 baselineRatio), pi3b-0 $(row pi3b-0 baselineRatio)"

message=$(kubectl get events -n "$ns" --field-selector "involvedObject.name=throttled,reason=NodeBelowBaseline" \
  -o jsonpath='{.items[0].type} {.items[0].message}')
[[ $message == "Warning $board ran at "*" of its baseline "*"under-voltage since "*BallastBoardUnderVoltage* ]] ||
  fail "the job's NodeBelowBaseline should be a Warning naming $board and its under-voltage, got: $message"
pass "the job's event: ${message#Warning }"
on_node() {
  kubectl get events -A --field-selector "involvedObject.kind=Node,involvedObject.name=$board,reason=NodeBelowBaseline" \
    -o jsonpath='{.items[*].message}' | grep -q "WeightedJob $ns/throttled: $board ran at"
}
wait_until "the NodeBelowBaseline Event on Node $board" 30 on_node
pass "the Node's event names the job"

restore_checked() {
  unprobe
  expect_eq "$board's labels after the test" "$labels_before" "$(labels_of "$board")"
  expect_eq "$board's board conditions after the test" "[]" "$(conditions_of "$board")"
  expect_eq "$board's quota after the test" "$quota" "$(<"$quota_file")"
}
restore_checked
pass "$board as it was: quota, labels, no board conditions"
