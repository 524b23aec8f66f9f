// The Kubernetes resources the operator reads and writes, as ResourceRefs of
// the kube client, and the labels it puts on what it creates.
//
// Thread-safety: constants and pure functions.
#pragma once

#include <string_view>

#include "net/kube/client.h"

namespace ballast::controller {

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
// coordinator Service's with ballast.io/coordinator=leader, leader_pod.h): no
// worker pod may carry them.
inline constexpr std::string_view kComponentLabel = "app.kubernetes.io/component";
inline constexpr std::string_view kOperatorComponent = "operator";

kube::ResourceRef WeightedJobs();
kube::ResourceRef WeightProfiles();  // cluster-scoped
kube::ResourceRef Pods();
kube::ResourceRef Secrets();
kube::ResourceRef Nodes();  // cluster-scoped
kube::ResourceRef Events();
// Kueue's (kueue.x-k8s.io/v1beta2; kueue.h).
kube::ResourceRef Workloads();
kube::ResourceRef ResourceFlavors();          // cluster-scoped
kube::ResourceRef WorkloadPriorityClasses();  // cluster-scoped

}  // namespace ballast::controller
