// --mark-leader-pod: the replica that holds the leader Lease labels its own
// pod ballast.io/coordinator=leader (kCoordinatorLabel, operator/api/labels.h)
// once its coordinator listens, so that a Service selecting that label sends
// workers to the leader alone; every replica removes the label from its own
// pod when it starts (a restarted former leader must not attract workers)
// and when it stops.
//
// Thread-safety: SetLeaderLabel may be called from any thread (the client is
// thread-safe).
#pragma once

#include <chrono>
#include <string>

#include "core/common/status.h"
#include "net/kube/client.h"
#include "operator/api/labels.h"

namespace ballast::runtime {

// The operator's own pod, from the environment of its container.
struct OwnPod {
  std::string ns;    // $POD_NAMESPACE
  std::string name;  // $POD_NAME
};

// Sets (leader) or removes (!leader) the label on the pod with a JSON merge
// patch, retrying transient failures (Unavailable, Conflict) with backoff
// for up to `patience`. Returns Ok once the pod carries the wanted state;
// NotFound when the pod does not exist (POD_NAME wrong), Invalid when the
// API server refuses the patch as built, Unavailable (with the last error,
// e.g. forbidden: the role lacks `patch` on pods) after `patience`.
Status SetLeaderLabel(kube::KubeClient& client, const OwnPod& pod, bool leader,
                      std::chrono::milliseconds patience);

}  // namespace ballast::runtime
