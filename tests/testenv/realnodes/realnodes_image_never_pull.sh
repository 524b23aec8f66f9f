#!/usr/bin/env bash
# An image that no node has, with imagePullPolicy Never, leaves the pod
# Pending with the reason ErrImageNeverPull (nothing is pulled: the test
# cluster has no registry; the operator relies on this reason).
source "$(dirname "$0")/require_root.sh"
source "$(dirname "$0")/../smoke/lib.sh"
source "$(dirname "$0")/lib.sh"
busybox=ballast.io/testenv/not-imported:0.0.0
pod_on missing "${real_nodes[0]}" 'true'
reason_is() {
  [[ $(jp pod/missing '{.status.containerStatuses[0].state.waiting.reason}') == "$1" ]]
}
wait_until "reason ErrImageNeverPull" 60 reason_is ErrImageNeverPull
expect_eq "phase" Pending "$(jp pod/missing '{.status.phase}')"
message=$(jp pod/missing '{.status.containerStatuses[0].state.waiting.message}')
[[ $message == *not-imported* ]] || fail "the message should name the image, got: $message"
pass "message: $message"
