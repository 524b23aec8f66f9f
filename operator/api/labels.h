// The names the operator's objects go by: its API group, version and kind,
// the labels it puts on what it creates, and the labels of its own pods
// (the chart's), which the coordinator Service selects and no worker pod may
// carry.
//
// Thread-safety: constants.
#pragma once

#include <string>
#include <string_view>

namespace ballast::api {

inline constexpr std::string_view kGroup = "ballast.io";
inline constexpr std::string_view kVersion = "v1alpha1";
inline constexpr std::string_view kApiVersion = "ballast.io/v1alpha1";
inline constexpr std::string_view kJobKind = "WeightedJob";

// Labels on every worker pod and Secret: which job (its name) and node.
inline constexpr std::string_view kJobLabel = "ballast.io/job";
inline constexpr std::string_view kNodeLabel = "ballast.io/node";
inline constexpr std::string_view kManagedByLabel = "app.kubernetes.io/managed-by";
inline constexpr std::string_view kManagedBy = "ballast";
// The chart's labels of the operator's own pods (its selector, and the
// coordinator Service's with kCoordinatorLabel=kLeaderValue): no worker pod
// may carry them.
inline constexpr std::string_view kComponentLabel = "app.kubernetes.io/component";
inline constexpr std::string_view kOperatorComponent = "operator";
// The label the leader replica puts on its own pod once its coordinator
// listens (operator/runtime/leader_pod.h, --mark-leader-pod), which the
// coordinator Service selects.
inline constexpr std::string_view kCoordinatorLabel = "ballast.io/coordinator";
inline constexpr std::string_view kLeaderValue = "leader";

// The coordinator's id of a job: "<namespace>.<name>" (a namespace has no
// dots, so it is unambiguous, and it is safe in a URL path). The operator
// registers the job under it; kubectl ballast top asks for its progress by it.
inline std::string CoordinatorJobId(std::string_view ns, std::string_view name) {
  return std::string(ns) + "." + std::string(name);
}

}  // namespace ballast::api
