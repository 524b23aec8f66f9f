#!/usr/bin/env bash
# A board's worker cut off from the coordinator for 30 s mid-job, on real
# nodes: DROP rules in the board's network namespace (the raw table's
# PREROUTING, before kube-proxy's DNAT) discard every packet between its
# pods and the coordinator (the Service's address and the operator pod's),
# while its kubelet still reaches the API server, so the node stays Ready.
# The job's leaseSeconds is 15: the worker's lease expires at most 15 s
# after its last report, which came before the cut. Bound: the coordinator
# declares it lost (ballast_node_lost_total) within leaseSeconds + 3 s of
# the cut, and the other boards take its work. Then the cut heals: the
# worker's held report reaches the coordinator, and it is merged once or
# dropped as a duplicate — never counted twice: the boards' merged items
# add up to the job's items and the result is exact. Never two workers of
# the job on one board, nothing left behind.
source "$(dirname "$0")/require_root.sh"
source "$(dirname "$0")/../smoke/lib.sh"
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/chaos_lib.sh"

victim=pi4b-1
lease_s=15
cut_s=30
netns=(nsenter "--net=/run/netns/ballast-rn-$victim")
rules=()
heal() {
  local rule
  for rule in "${rules[@]}"; do
    # shellcheck disable=SC2086
    "${netns[@]}" iptables -t raw -D PREROUTING $rule 2>/dev/null || true
  done
  rules=()
}
restore() {
  heal
  chaos_restore
}
trap restore EXIT

chaos_install
chaos_job 1500000 "leaseSeconds: $lease_s"
wait_until "every board's worker Running" 120 all_running
start_sampler
wait_until "a tenth of the job's work done" 300 done_share 10
service_ip=$(kubectl get service -n "$ns" "$release-ballast-coordinator" -o jsonpath='{.spec.clusterIP}')
[[ -n $service_ip ]] || fail "no coordinator Service"
reports() { metric ballast_node_reports_total "$victim"; }
refused() { metrics | awk '/^ballast_coordinator_refused_total/ { s += $NF } END { print s + 0 }'; }
refused_before=$(refused)

rules=("-d $service_ip -j DROP" "-d $operator_ip -j DROP" "-s $operator_ip -j DROP")
cut=$(now_ms)
for rule in "${rules[@]}"; do
  # shellcheck disable=SC2086
  "${netns[@]}" iptables -t raw -I PREROUTING $rule
done
pass "$victim's pods cut off from the coordinator ($service_ip, $operator_ip) in its network namespace"
lost() { (($(metric ballast_node_lost_total "$victim") >= 1)); }
bound_s=$((lease_s + 3))
wait_until "$victim's worker declared lost" "$bound_s" lost
lost_ms=$(($(now_ms) - cut))
((lost_ms <= bound_s * 1000)) || fail "lost $(seconds "$lost_ms") s after the cut; the bound is $bound_s s"
reports_cut=$(reports)
items_cut=$(metric ballast_node_items_total "$victim")
others() { echo $(($(metric ballast_node_items_total pi4b-0) + $(metric ballast_node_items_total pi3b-0))); }
others_then=$(others)
more_by_others() { (($(others) > others_then)); }
wait_until "the other boards computing its work" $((cut_s - lost_ms / 1000 - 1)) more_by_others
pass "work moved: $victim's worker lost $(seconds "$lost_ms") s after the cut (bound $bound_s s = leaseSeconds $lease_s s + 3 s)"

[[ $(node_ready "$victim") == True ]] || fail "$victim is not Ready: the cut reached its kubelet"
! has_event NodeNotReady || fail "a NodeNotReady event: the cut reached the kubelet"
remaining_ms=$((cut_s * 1000 - ($(now_ms) - cut)))
((remaining_ms <= 0)) || sleep "$(awk -v ms="$remaining_ms" 'BEGIN { printf "%.3f", ms / 1000 }')"
(($(reports) == reports_cut)) || fail "$victim reported during the cut: it was not cut off"
(($(metric ballast_node_items_total "$victim") == items_cut)) || fail "$victim's items moved during the cut"
heal
healed=$(now_ms)
pass "the cut healed after $(seconds $((healed - cut))) s; $victim's node stayed Ready"
reported() { (($(reports) > reports_cut)); }
wait_until "$victim's worker reporting again" 60 reported
back_ms=$(($(now_ms) - healed))
items_after=$(metric ballast_node_items_total "$victim")
late=$((items_after - items_cut))
pass "$victim's first report after the cut $(seconds "$back_ms") s after the heal: $late items of its revoked lease merged, once (those no other board had handed in yet); coordinator refusals $refused_before -> $(refused)"

finish_exact 600
no_duplicate_workers
expect_eq "the losses counted over the run (pi4b-0 pi4b-1 pi3b-0)" "0 1 0" \
  "$(most_lost pi4b-0) $(most_lost pi4b-1) $(most_lost pi3b-0)"
grep -q "cannot reach the coordinator" <(kubectl logs -n "$ns" "$job-$victim" 2>/dev/null) &&
  pass "$victim's worker log says it could not reach the coordinator" || true
nothing_left
