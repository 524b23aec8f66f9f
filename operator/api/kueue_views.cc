// The readers of kueue_views.h, on the shared lenient kit
// (core/common/json_read.h: At, TextAt, IntegerAt, ObjectsAt, StringMapAt).
#include "operator/api/kueue_views.h"

#include <algorithm>
#include <limits>
#include <set>

#include "core/common/json_read.h"

namespace ballast::api {

using nlohmann::json;

// (Named apart from kube_views.cc's readers: a unity batch may hold both.)
namespace {

namespace jr = json_read;

// The object of the list `key` of `node` whose name is kWorkerPodSet;
// nullptr when none.
const json* WorkerEntry(const json& node, std::string_view key) {
  for (const json* entry : jr::ObjectsAt(node, key)) {
    if (jr::TextAt(*entry, "name") == kWorkerPodSet) return entry;
  }
  return nullptr;
}

// The member "count" of a pod set's entry, in [0, the largest int32_t]; 0
// when there is no entry or no whole number there.
int32_t PodCount(const json* entry) {
  const int64_t count = entry ? jr::IntegerAt(*entry, "count").value_or(0) : 0;
  return static_cast<int32_t>(std::clamp<int64_t>(count, 0, std::numeric_limits<int32_t>::max()));
}

}  // namespace

bool WorkloadView::Has(const std::string& type) const {
  const auto found = conditions.find(type);
  return found != conditions.end() && found->second.status;
}

WorkloadView ReadWorkload(const json& workload) {
  WorkloadView view;
  view.meta = ReadMeta(workload);
  const json& metadata = jr::At(workload, "metadata");
  view.resource_version = jr::TextAt(metadata, "resourceVersion");
  view.generation = jr::IntegerAt(metadata, "generation").value_or(0);
  const json& spec = jr::At(workload, "spec");
  view.count = PodCount(WorkerEntry(spec, "podSets"));
  const json& active = jr::At(spec, "active");
  view.active = !active.is_boolean() || active.get<bool>();
  const json& status = jr::At(workload, "status");
  if (const json& conditions = jr::At(status, "conditions"); conditions.is_array()) {
    view.raw_conditions = conditions;
  }
  for (const json* condition : jr::ObjectsAt(status, "conditions")) {
    view.conditions[jr::TextAt(*condition, "type")] = {jr::TextAt(*condition, "status") == "True",
                                                       jr::TextAt(*condition, "reason"),
                                                       jr::TextAt(*condition, "message")};
  }
  const json& admission = jr::At(status, "admission");
  view.cluster_queue = jr::TextAt(admission, "clusterQueue");
  std::set<std::string> flavors;
  if (const json* assignment = WorkerEntry(admission, "podSetAssignments")) {
    for (const auto& [resource, flavor] : jr::StringMapAt(*assignment, "flavors")) {
      flavors.insert(flavor);
    }
  }
  view.flavors.assign(flavors.begin(), flavors.end());
  view.reclaimable = PodCount(WorkerEntry(status, "reclaimablePods"));
  return view;
}

FlavorView ReadFlavor(const json& flavor) {
  FlavorView view;
  view.name = jr::TextAt(jr::At(flavor, "metadata"), "name");
  const json& spec = jr::At(flavor, "spec");
  view.node_labels = jr::StringMapAt(spec, "nodeLabels");
  if (const json& tolerations = jr::At(spec, "tolerations"); tolerations.is_array()) {
    view.tolerations = tolerations;
  }
  return view;
}

}  // namespace ballast::api
