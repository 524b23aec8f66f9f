// The Kubernetes resources the operator reads and writes, as ResourceRefs of
// the kube client (net/kube/client.h); their names and labels are the
// model's (operator/api/labels.h).
//
// Thread-safety: pure functions.
#pragma once

#include "net/kube/client.h"
#include "operator/api/labels.h"

namespace ballast::runtime {

kube::ResourceRef WeightedJobs();
kube::ResourceRef WeightProfiles();  // cluster-scoped
kube::ResourceRef Pods();
kube::ResourceRef Secrets();
kube::ResourceRef Nodes();  // cluster-scoped
kube::ResourceRef Events();
// Kueue's (kueue.x-k8s.io/v1beta2; operator/api/kueue_views.h).
kube::ResourceRef Workloads();
kube::ResourceRef ResourceFlavors();          // cluster-scoped
kube::ResourceRef WorkloadPriorityClasses();  // cluster-scoped

}  // namespace ballast::runtime
