#!/usr/bin/env bash
# Each real node's CPU is held to its emulated speed: the same busy loop runs
# at the same time on the fastest and the slowest node, and the ratio of their
# rates (loop iterations per second) is the ratio of the speeds within a
# tolerance. Ratios, not absolute rates: the machine's speed and load vary.
# Needs seconds: the loops must run long enough for CFS periods (100 ms) to
# average out.
source "$(dirname "$0")/require_root.sh"
source "$(dirname "$0")/../smoke/lib.sh"
source "$(dirname "$0")/lib.sh"
# jsonpath, not go-template: a node without the annotation (server-0) gives
# an empty string, not "<no value>".
speed() { kubectl get node "$1" -o jsonpath='{.metadata.annotations.ballast\.io/emulated-speed}'; }
fast="" slow=""
for node in "${real_nodes[@]}"; do
  s=$(speed "$node")
  [[ -n $s ]] || continue
  [[ -z $fast ]] || awk -v a="$s" -v b="$(speed "$fast")" 'BEGIN { exit !(a > b) }' && fast=$node
  [[ -z $slow ]] || awk -v a="$s" -v b="$(speed "$slow")" 'BEGIN { exit !(a < b) }' && slow=$node
done
[[ -n $fast && $fast != "$slow" ]] && awk -v a="$(speed "$fast")" -v b="$(speed "$slow")" 'BEGIN { exit !(a > b) }' ||
  fail "needs two real nodes of different emulated speeds"
expected=$(awk -v a="$(speed "$fast")" -v b="$(speed "$slow")" 'BEGIN { printf "%.3f", a / b }')

# Both loops start at the same second (pods start at different times) and
# run for `seconds`; each prints how many iterations it made. Sets ratio.
seconds=8
measure() {
  local attempt=$1
  local start=$(($(date +%s) + 20))
  local loop='while [ $(date +%s) -lt START ]; do sleep 0.2; done; sh -c '"'"'i=0; trap "echo \$i; exit 0" TERM; while :; do i=$((i + 1)); done'"'"' & sleep SECONDS; kill -TERM $!; wait'
  loop=${loop//START/$start}
  loop=${loop//SECONDS/$seconds}
  pod_on "busy-fast-$attempt" "$fast" "$loop"
  pod_on "busy-slow-$attempt" "$slow" "$loop"
  wait_phase "busy-fast-$attempt" Succeeded 120
  wait_phase "busy-slow-$attempt" Succeeded 120
  local fast_count slow_count
  fast_count=$(kubectl logs -n "$ns" "busy-fast-$attempt")
  slow_count=$(kubectl logs -n "$ns" "busy-slow-$attempt")
  [[ $fast_count =~ ^[0-9]+$ && $slow_count =~ ^[0-9]+$ && $slow_count -gt 0 ]] ||
    fail "the loops should print their counts, got '$fast_count' and '$slow_count'"
  ratio=$(awk -v a="$fast_count" -v b="$slow_count" 'BEGIN { printf "%.3f", a / b }')
  echo "cpu: attempt $attempt: $fast ($(speed "$fast") cores) $((fast_count / seconds)) iterations/s," \
    "$slow ($(speed "$slow") cores) $((slow_count / seconds)) iterations/s: ratio $ratio, expected $expected"
}
# Generous: other work on the machine may keep the fast node under its quota,
# and a node's own daemons (a kubelet, containerd unpacking the images of a
# first start) share its quota with the pod. A quota that is not applied is
# wrong every time; that noise is not, so a second attempt decides.
within() { awk -v r="$ratio" -v e="$expected" 'BEGIN { exit !(r > e * 0.7 && r < e * 1.3) }'; }
measure 1
within || { echo "cpu: ratio $ratio is not within 30 % of $expected; measuring again"; measure 2; }
within || fail "rate ratio $ratio is not within 30 % of the speeds' ratio $expected (twice)"
pass "rate ratio $ratio within 30 % of $expected"
