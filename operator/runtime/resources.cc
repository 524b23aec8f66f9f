// The ResourceRefs of resources.h.
#include "operator/runtime/resources.h"

#include <string>

namespace ballast::runtime {

kube::ResourceRef WeightedJobs() {
  return {std::string(api::kGroup), std::string(api::kVersion), "weightedjobs", true, "", ""};
}
kube::ResourceRef WeightProfiles() {
  return {std::string(api::kGroup), std::string(api::kVersion), "weightprofiles", false, "", ""};
}
kube::ResourceRef Pods() { return {"", "v1", "pods", true, "", ""}; }
kube::ResourceRef Secrets() { return {"", "v1", "secrets", true, "", ""}; }
kube::ResourceRef Nodes() { return {"", "v1", "nodes", false, "", ""}; }
kube::ResourceRef Events() { return {"", "v1", "events", true, "", ""}; }
kube::ResourceRef Workloads() { return {"kueue.x-k8s.io", "v1beta2", "workloads", true, "", ""}; }
kube::ResourceRef ResourceFlavors() {
  return {"kueue.x-k8s.io", "v1beta2", "resourceflavors", false, "", ""};
}
kube::ResourceRef WorkloadPriorityClasses() {
  return {"kueue.x-k8s.io", "v1beta2", "workloadpriorityclasses", false, "", ""};
}

}  // namespace ballast::runtime
