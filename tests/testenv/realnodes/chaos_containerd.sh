#!/usr/bin/env bash
# A board's containerd killed (SIGKILL) mid-job and started again 3 s later
# (as a service manager restarts it), on real nodes. The worker container is
# held by its runc shim, not by containerd, so it computes on: the same
# worker process before and after, its reports never stop, the coordinator
# never declares it lost, the pod's container is not restarted and no second
# worker starts on the board. Bound: containerd answers, the kubelet sees the
# worker's container Running again and the node is Ready within 30 s of the
# restart; the job ends exact, each item merged once, nothing left behind.
source "$(dirname "$0")/require_root.sh"
source "$(dirname "$0")/../smoke/lib.sh"
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/chaos_lib.sh"

victim=pi4b-1
containerd=containerd-$victim
down_s=3
bound_s=30
restore() {
  component_running "$containerd" || restart_component "$containerd" "$victim"
  chaos_restore
}
trap restore EXIT

chaos_install
chaos_job 1000000
wait_until "every board's worker Running" 120 all_running
start_sampler
wait_until "a tenth of the job's work done" 300 done_share 10
worker_before=$(worker_pids "$victim")
[[ -n $worker_before ]] || fail "no worker process of the job on $victim"
reports() { metric ballast_node_reports_total "$victim"; }

containerd_pid=$(save_component "$containerd")
killed=$(now_ms)
kill -KILL "$containerd_pid"
gone() { ! kill -0 "$containerd_pid"; }
wait_until "$victim's containerd (pid $containerd_pid) gone" 10 gone
reports_down=$(reports)
[[ $(worker_pids "$victim") == "$worker_before" ]] ||
  fail "the worker on $victim did not outlive containerd (pids '$worker_before', now '$(worker_pids "$victim")')"
left_ms=$((down_s * 1000 - ($(now_ms) - killed)))
((left_ms <= 0)) || sleep "$(awk -v ms="$left_ms" 'BEGIN { printf "%.3f", ms / 1000 }')"
restarted=$(now_ms)
restart_component "$containerd" "$victim"
pass "$victim's containerd killed with SIGKILL and started again $(seconds $((restarted - killed))) s later; its worker ran on meanwhile"
answers() { node_ctr "$victim" version; }
wait_until "$victim's containerd answering" "$bound_s" answers
answer_ms=$(($(now_ms) - restarted))
container_running() {
  [[ $(jp "pod/$job-$victim" '{.status.containerStatuses[0].state.running.startedAt}') != "" &&
    $(node_ready "$victim") == True ]]
}
# The kubelet relists the containers once the runtime is back (PLEG).
wait_until "the kubelet sees $job-$victim's container running, $victim Ready" "$bound_s" container_running
back_ms=$(($(now_ms) - restarted))
((back_ms <= bound_s * 1000)) || fail "$victim back $(seconds "$back_ms") s after the restart; the bound is $bound_s s"
reported() { (($(reports) > reports_down)); }
wait_until "$victim's worker reporting" "$bound_s" reported
pass "recovered: containerd answered $(seconds "$answer_ms") s and the node was Ready with the worker's container Running $(seconds "$back_ms") s after the restart (bound $bound_s s)"
[[ $(worker_pids "$victim") == "$worker_before" ]] || fail "the worker on $victim changed"
expect_eq "$victim's worker container restarts" 0 "$(jp "pod/$job-$victim" '{.status.containerStatuses[0].restartCount}')"
expect_eq "$victim's worker declared lost" 0 "$(metric ballast_node_lost_total "$victim")"
! has_event NodeNotReady || fail "a NodeNotReady event: the restart took the node's readiness"
! has_event WorkerFailed || fail "a WorkerFailed event"
pass "the same worker process ($worker_before) computed through the restart"

finish_exact 600
no_duplicate_workers
expect_eq "the losses counted over the run (pi4b-0 pi4b-1 pi3b-0)" "0 0 0" \
  "$(most_lost pi4b-0) $(most_lost pi4b-1) $(most_lost pi3b-0)"
nothing_left
