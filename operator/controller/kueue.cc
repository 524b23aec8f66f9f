#include "operator/controller/kueue.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <set>

#include "core/common/json_read.h"
#include "operator/controller/resources.h"

namespace ballast::controller {

using nlohmann::json;

// (Named apart from kube_views.cc's readers: a unity batch may hold both.)
namespace {

namespace jr = json_read;

const json& Member(const json& node, std::string_view key) {
  static const json kAbsent;
  const json* found = jr::Find(node, key);
  return found ? *found : kAbsent;
}

std::string MemberText(const json& node, std::string_view key) {
  const json& value = Member(node, key);
  return value.is_string() ? value.get<std::string>() : std::string();
}

int32_t MemberCount(const json& node, std::string_view key) {
  const json& value = Member(node, key);
  if (!value.is_number_integer()) return 0;
  const int64_t count = value.get<int64_t>();
  return static_cast<int32_t>(std::clamp<int64_t>(count, 0, std::numeric_limits<int32_t>::max()));
}

// The element of the list `key` whose name is kWorkerPodSet; null when none.
const json& WorkerEntry(const json& node, std::string_view key) {
  static const json kAbsent;
  const json& list = Member(node, key);
  if (!list.is_array()) return kAbsent;
  for (const json& entry : list) {
    if (entry.is_object() && MemberText(entry, "name") == kWorkerPodSet) return entry;
  }
  return kAbsent;
}

// The status patch of `workload` that writes `fields`, conditional on the
// resourceVersion read.
json StatusPatch(const WorkloadView& workload, json fields) {
  json patch = {{"status", std::move(fields)}};
  if (!workload.resource_version.empty()) {
    patch["metadata"] = {{"resourceVersion", workload.resource_version}};
  }
  return patch;
}

}  // namespace

bool WorkloadView::Has(const std::string& type) const {
  const auto found = conditions.find(type);
  return found != conditions.end() && found->second.status;
}

WorkloadView ReadWorkload(const json& workload) {
  WorkloadView view;
  view.meta = ReadMeta(workload);
  const json& metadata = Member(workload, "metadata");
  view.resource_version = MemberText(metadata, "resourceVersion");
  const json& generation = Member(metadata, "generation");
  if (generation.is_number_integer()) view.generation = generation.get<int64_t>();
  const json& spec = Member(workload, "spec");
  view.count = MemberCount(WorkerEntry(spec, "podSets"), "count");
  view.active = !Member(spec, "active").is_boolean() || Member(spec, "active").get<bool>();
  const json& status = Member(workload, "status");
  const json& conditions = Member(status, "conditions");
  if (conditions.is_array()) {
    view.raw_conditions = conditions;
    for (const json& condition : conditions) {
      if (!condition.is_object()) continue;
      view.conditions[MemberText(condition, "type")] = {MemberText(condition, "status") == "True",
                                                        MemberText(condition, "reason"),
                                                        MemberText(condition, "message")};
    }
  }
  const json& admission = Member(status, "admission");
  view.cluster_queue = MemberText(admission, "clusterQueue");
  const json& assignment = WorkerEntry(admission, "podSetAssignments");
  std::set<std::string> flavors;
  const json& assigned = Member(assignment, "flavors");
  if (assigned.is_object()) {
    for (const auto& [resource, flavor] : assigned.items()) {
      if (flavor.is_string()) flavors.insert(flavor.get<std::string>());
    }
  }
  view.flavors.assign(flavors.begin(), flavors.end());
  view.reclaimable = MemberCount(WorkerEntry(status, "reclaimablePods"), "count");
  return view;
}

FlavorView ReadFlavor(const json& flavor) {
  FlavorView view;
  view.name = MemberText(Member(flavor, "metadata"), "name");
  const json& spec = Member(flavor, "spec");
  const json& labels = Member(spec, "nodeLabels");
  if (labels.is_object()) {
    for (const auto& [key, value] : labels.items()) {
      if (value.is_string()) view.node_labels.emplace(key, value.get<std::string>());
    }
  }
  const json& tolerations = Member(spec, "tolerations");
  if (tolerations.is_array()) view.tolerations = tolerations;
  return view;
}

std::string WorkloadName(const std::string& job_name, const std::string& uid) {
  // A job's name is a DNS label (at most 63 characters): the name stays
  // within a DNS subdomain's 253.
  return fmt::format("weightedjob-{}-{}", job_name, uid.substr(0, 5));
}

json BuildWorkload(const ObjectMeta& job, const WeightedJobSpec& spec,
                   const WorkerPodSettings& settings, const std::string& queue, int32_t count,
                   const std::string& priority_class, std::optional<int32_t> priority) {
  const json& template_spec = spec.pod_template.spec;
  json container = {{"name", kWorkerContainer}, {"image", BallastImage(spec, settings)}};
  if (const json* image = jr::Find(template_spec["containers"][0], "image")) {
    container["image"] = *image;
  }
  const json resources = WorkerResources(spec, settings);
  if (resources.is_object()) container["resources"] = resources;
  json pod_spec = {{"restartPolicy", "Never"}, {"containers", json::array({container})}};
  // What decides where the workers may run and what they cost a queue.
  for (const char* key : {"nodeSelector", "tolerations", "affinity", "priorityClassName",
                          "runtimeClassName", "overhead"}) {
    if (const json* value = jr::Find(template_spec, key)) pod_spec[key] = *value;
  }
  if (!spec.pod_template.node_selector.empty()) {
    pod_spec["nodeSelector"] = spec.pod_template.node_selector;
  }
  if (!spec.pod_template.tolerations.empty())
    pod_spec["tolerations"] = spec.pod_template.tolerations;
  json workload_spec = {
      {"queueName", queue},
      {"podSets", json::array({{{"name", kWorkerPodSet},
                                {"count", count},
                                {"template", {{"spec", std::move(pod_spec)}}}}})}};
  if (!priority_class.empty() && priority) {
    workload_spec["priorityClassRef"] = {
        {"group", kKueueGroup}, {"kind", "WorkloadPriorityClass"}, {"name", priority_class}};
    workload_spec["priority"] = *priority;
  }
  json labels = {{std::string(kJobLabel), job.name},
                 {std::string(kManagedByLabel), std::string(kManagedBy)}};
  return {{"apiVersion", kKueueApiVersion},
          {"kind", "Workload"},
          {"metadata",
           {{"name", WorkloadName(job.name, job.uid)},
            {"namespace", job.ns},
            {"labels", std::move(labels)},
            {"ownerReferences", json::array({OwnerReference(job)})}}},
          {"spec", std::move(workload_spec)}};
}

WeightedJobSpec PlaceOnFlavors(WeightedJobSpec spec, const std::vector<FlavorView>& flavors) {
  PodTemplate& pods = spec.pod_template;
  for (const FlavorView& flavor : flavors) {
    for (const auto& [key, value] : flavor.node_labels) pods.node_selector.try_emplace(key, value);
    for (const json& toleration : flavor.tolerations) {
      if (std::find(pods.tolerations.begin(), pods.tolerations.end(), toleration) ==
          pods.tolerations.end()) {
        pods.tolerations.push_back(toleration);
      }
    }
  }
  if (!pods.node_selector.empty()) pods.spec["nodeSelector"] = pods.node_selector;
  if (!pods.tolerations.empty()) pods.spec["tolerations"] = pods.tolerations;
  return spec;
}

json WithCondition(json conditions, const std::string& type, bool status, const std::string& reason,
                   const std::string& message, int64_t generation, const std::string& now) {
  if (!conditions.is_array()) conditions = json::array();
  const std::string value = status ? "True" : "False";
  json condition = {{"type", type},
                    {"status", value},
                    {"reason", reason},
                    {"message", jr::Cut(message, 32768)},
                    {"lastTransitionTime", now},
                    {"observedGeneration", generation}};
  for (json& existing : conditions) {
    if (!existing.is_object() || MemberText(existing, "type") != type) continue;
    if (MemberText(existing, "status") == value &&
        Member(existing, "lastTransitionTime").is_string()) {
      condition["lastTransitionTime"] = existing["lastTransitionTime"];
    }
    existing = std::move(condition);
    return conditions;
  }
  conditions.push_back(std::move(condition));
  return conditions;
}

json ClearAdmissionPatch(const WorkloadView& workload, const std::string& now) {
  const auto evicted = workload.conditions.find("Evicted");
  const std::string reason = evicted != workload.conditions.end() ? evicted->second.reason : "";
  const std::string message =
      evicted != workload.conditions.end() ? evicted->second.message : "the job was stopped";
  const int64_t generation = workload.generation;
  json conditions = WithCondition(workload.raw_conditions, "QuotaReserved", false, "Pending",
                                  message, generation, now);
  conditions = WithCondition(std::move(conditions), "Admitted", false, "NoReservation",
                             "The workload has no reservation", generation, now);
  // Requeued: a preempted Workload queues again; a deactivated one waits to
  // be activated (Kueue's own job integrations decide it the same way).
  const bool requeue = reason != "Deactivated" && reason != "InactiveWorkload";
  conditions = WithCondition(std::move(conditions), "Requeued", requeue,
                             reason.empty() ? "Pending" : reason, message, generation, now);
  return StatusPatch(workload, {{"admission", nullptr}, {"conditions", std::move(conditions)}});
}

json FinishPatch(const WorkloadView& workload, bool succeeded, const std::string& message,
                 const std::string& now) {
  json conditions =
      WithCondition(workload.raw_conditions, "Finished", true, succeeded ? "Succeeded" : "Failed",
                    message, workload.generation, now);
  return StatusPatch(workload, {{"conditions", std::move(conditions)}});
}

json ReclaimablePatch(const WorkloadView& workload, int32_t count) {
  return StatusPatch(
      workload, {{"reclaimablePods", json::array({{{"name", kWorkerPodSet}, {"count", count}}})}});
}

json ActivePatch(const WorkloadView& workload, bool active) {
  json patch = {{"spec", {{"active", active}}}};
  if (!workload.resource_version.empty()) {
    patch["metadata"] = {{"resourceVersion", workload.resource_version}};
  }
  return patch;
}

}  // namespace ballast::controller
