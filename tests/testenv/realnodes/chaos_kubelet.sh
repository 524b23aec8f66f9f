#!/usr/bin/env bash
# A board's kubelet killed (SIGKILL) mid-job, on real nodes: its worker
# container runs on without it (the shim holds it), but the node stops
# renewing its Lease, so kube-controller-manager marks it NotReady once
# --node-monitor-grace-period has passed, the operator declares its worker
# lost (NodeNotReady event, its lease back in the pool) and the other boards
# take its work. Bound: the work moves within the grace period plus 15 s of
# the kill, the grace period read from the running controller-manager (its
# flag, else its default). The kubelet is then started again and the node is
# Ready; the job ends exact, each item merged once, never two workers of the
# job on one board, nothing left behind.
source "$(dirname "$0")/require_root.sh"
source "$(dirname "$0")/../smoke/lib.sh"
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/chaos_lib.sh"

victim=pi4b-1
kubelet=kubelet-$victim
restore() {
  component_running "$kubelet" || restart_component "$kubelet" "$victim"
  chaos_restore
}
trap restore EXIT

# The grace period: the controller-manager's flag, else the default its
# --help states ("(default 40s)"), as Go durations (1m0s, 40s).
duration_s() {
  awk -v d="$1" 'BEGIN { s = 0; while (match(d, /^[0-9.]+(h|ms|m|s)/)) {
      n = substr(d, 1, RLENGTH); d = substr(d, RLENGTH + 1); u = n; sub(/^[0-9.]+/, "", u); v = n + 0
      s += u == "h" ? v * 3600 : u == "m" ? v * 60 : u == "ms" ? v / 1000 : v }
    if (d != "") exit 1; print s }'
}
cm_pid=$(<"$BALLAST_TESTENV_DIR/pids/kube-controller-manager")
grace=$(tr '\0' '\n' <"/proc/$cm_pid/cmdline" |
  awk '/^--node-monitor-grace-period=/ { sub(/^[^=]*=/, ""); print; exit }
       prev == "--node-monitor-grace-period" { print; exit } { prev = $0 }')
source_of_grace="kube-controller-manager --node-monitor-grace-period"
if [[ -z $grace ]]; then
  grace=$("$(tr '\0' '\n' <"/proc/$cm_pid/cmdline" | head -1)" --help 2>&1 |
    sed -n 's/.*--node-monitor-grace-period duration.*(default \([0-9a-z.]*\)).*/\1/p')
  source_of_grace="kube-controller-manager's default (no --node-monitor-grace-period given)"
fi
grace_s=$(duration_s "$grace") || fail "cannot read the node monitor grace period '$grace'"
bound_s=$(awk -v g="$grace_s" 'BEGIN { print g + 15 }')
pass "node monitor grace period $grace ($source_of_grace): the bound is $bound_s s"

chaos_install
chaos_job 1500000
wait_until "every board's worker Running" 120 all_running
start_sampler
wait_until "a tenth of the job's work done" 300 done_share 10
worker_before=$(worker_pids "$victim")
[[ -n $worker_before ]] || fail "no worker process of the job on $victim"

kubelet_pid=$(save_component "$kubelet")
killed=$(now_ms)
kill -KILL "$kubelet_pid"
pass "$victim's kubelet (pid $kubelet_pid) killed with SIGKILL"
lost() { (($(metric ballast_node_lost_total "$victim") >= 1)); }
not_ready() { [[ $(node_ready "$victim") != True ]]; }
wait_until "$victim no longer Ready" "$bound_s" not_ready
not_ready_ms=$(($(now_ms) - killed))
wait_until "$victim's worker declared lost" "$bound_s" lost
lost_ms=$(($(now_ms) - killed))
wait_until "NodeNotReady event" 10 has_event NodeNotReady
event_ms=$(($(now_ms) - killed))
[[ $(worker_pids "$victim") == "$worker_before" ]] ||
  fail "the worker on $victim did not outlive its kubelet (pids '$worker_before', now '$(worker_pids "$victim")')"
((lost_ms <= bound_s * 1000)) || fail "the work moved $(seconds "$lost_ms") s after the kill; the bound is $bound_s s"
pass "work moved: $victim NotReady after $(seconds "$not_ready_ms") s, its worker lost after $(seconds "$lost_ms") s, NodeNotReady event after $(seconds "$event_ms") s (bound $bound_s s = grace $grace_s s + 15 s); its worker process ran on without the kubelet"
# The others take its share.
others() { echo $(($(metric ballast_node_items_total pi4b-0) + $(metric ballast_node_items_total pi3b-0))); }
others_then=$(others)
more_by_others() { (($(others) > others_then)); }
wait_until "the other boards computing on" 60 more_by_others

restarted=$(now_ms)
restart_component "$kubelet" "$victim"
ready() { [[ $(node_ready "$victim") == True ]]; }
wait_until "$victim Ready again" 60 ready
pass "$victim Ready $(seconds $(($(now_ms) - restarted))) s after its kubelet started again"
finish_exact 600
no_duplicate_workers
expect_eq "the losses counted over the run on pi4b-0 and pi3b-0" "0 0" "$(most_lost pi4b-0) $(most_lost pi3b-0)"
(($(most_lost "$victim") >= 1)) || fail "no loss of $victim's worker counted"
nothing_left
