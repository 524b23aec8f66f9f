#!/usr/bin/env bash
# An image that no node has:
# - with imagePullPolicy Never, the pod stays Pending with the reason
#   ErrImageNeverPull (nothing is pulled; the operator relies on this reason);
# - with IfNotPresent, named in the bed's registry, which lacks it (as a
#   cluster names an image its registry does not hold: a tag never pushed),
#   the node asks the registry, and the pod stays Pending with ErrImagePull
#   or ImagePullBackOff, its message naming the image.
source "$(dirname "$0")/require_root.sh"
source "$(dirname "$0")/../smoke/lib.sh"
source "$(dirname "$0")/lib.sh"
reason_of() { jp "pod/$1" '{.status.containerStatuses[0].state.waiting.reason}'; }
reason_is() { [[ $(reason_of "$1") == "$2" ]]; }

busybox=ballast.io/testenv/not-imported:0.0.0
pod_on missing "${real_nodes[0]}" 'true'
wait_until "reason ErrImageNeverPull" 60 reason_is missing ErrImageNeverPull
expect_eq "phase" Pending "$(jp pod/missing '{.status.phase}')"
message=$(jp pod/missing '{.status.containerStatuses[0].state.waiting.message}')
[[ $message == *not-imported* ]] || fail "the message should name the image, got: $message"
pass "message: $message"

# Not in the registry: the registry answers that it has no such manifest.
absent=$bed_registry/not-pushed:0.0.0
curl -sf -o /dev/null "http://$registry/v2/ballast-io/not-pushed/manifests/0.0.0" &&
  fail "the registry holds $absent"
busybox=$absent pull_policy=IfNotPresent pod_on unpushed "${real_nodes[0]}" 'true'
pull_failed() { [[ $(reason_of unpushed) == ErrImagePull || $(reason_of unpushed) == ImagePullBackOff ]]; }
wait_until "reason ErrImagePull or ImagePullBackOff" 90 pull_failed
expect_eq "phase" Pending "$(jp pod/unpushed '{.status.phase}')"
message=$(jp pod/unpushed '{.status.containerStatuses[0].state.waiting.message}')
[[ $message == *"$absent"* ]] || fail "the message should name $absent, got: $message"
pass "$(reason_of unpushed): $message"
