// The typed views of Kueue's objects the operator reads (docs/operator.md,
// "Kueue"; the lifecycle is in operator/controller/kueue.h): a Workload —
// its pod set's count, whether it is active, its conditions, its admission's
// ClusterQueue and flavors, its reclaimable pods — and a ResourceFlavor's
// node labels and tolerations, with the labels and names Kueue gives them.
//
// The readers never throw and never fail, as kube_views.h's: a field that is
// absent, null or of another type than Kueue's schema gives it reads as
// absent (an empty string, 0, an empty list; spec.active as true, Kueue's
// default), and an element of a list that is not an object is skipped.
//
// Thread-safety: values and pure functions.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "operator/api/kube_views.h"

namespace ballast::api {

// The label that puts a job in a LocalQueue of its namespace (Kueue's).
inline constexpr std::string_view kQueueNameLabel = "kueue.x-k8s.io/queue-name";
// The label naming a WorkloadPriorityClass for the job's Workload (Kueue's).
inline constexpr std::string_view kPriorityClassLabel = "kueue.x-k8s.io/priority-class";
inline constexpr std::string_view kKueueGroup = "kueue.x-k8s.io";
inline constexpr std::string_view kKueueApiVersion = "kueue.x-k8s.io/v1beta2";
// The one pod set of a WeightedJob's Workload.
inline constexpr std::string_view kWorkerPodSet = "workers";

// A condition of a Kueue object, as read.
struct KueueCondition {
  bool status = false;
  std::string reason;
  std::string message;
  bool operator==(const KueueCondition&) const = default;
};

// What the operator reads of a Workload.
struct WorkloadView {
  ObjectMeta meta;
  std::string resource_version;
  int64_t generation = 0;
  int32_t count = 0;                                 // spec.podSets[workers].count
  bool active = true;                                // spec.active (Kueue's default: true)
  std::map<std::string, KueueCondition> conditions;  // by type
  // status.admission: the ClusterQueue and the flavors of the pod set's
  // resources (distinct, sorted); empty when none.
  std::string cluster_queue;
  std::vector<std::string> flavors;
  int32_t reclaimable = 0;  // status.reclaimablePods[workers].count
  // status.conditions as the API server has them: a status patch writes
  // them whole (a merge patch replaces a list).
  nlohmann::json raw_conditions = nlohmann::json::array();

  bool Has(const std::string& type) const;  // the condition is there and True
  bool Admitted() const { return Has("Admitted"); }
  bool QuotaReserved() const { return Has("QuotaReserved"); }
  bool Evicted() const { return Has("Evicted"); }
  bool Finished() const { return Has("Finished"); }
  bool operator==(const WorkloadView&) const = default;
};

// What the operator reads of a ResourceFlavor.
struct FlavorView {
  std::string name;
  std::map<std::string, std::string> node_labels;        // spec.nodeLabels
  nlohmann::json tolerations = nlohmann::json::array();  // spec.tolerations
  bool operator==(const FlavorView&) const = default;
};

// The views of a Workload and a ResourceFlavor. Never fail, never throw.
WorkloadView ReadWorkload(const nlohmann::json& workload);
FlavorView ReadFlavor(const nlohmann::json& flavor);

}  // namespace ballast::api
