#include "operator/controller/kueue.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/common/json_read.h"
#include "operator/api/labels.h"
#include "operator/api/pod_template.h"

namespace ballast::controller {

using nlohmann::json;

namespace {

namespace jr = json_read;

// The status patch of `workload` that writes `fields`, conditional on the
// resourceVersion read.
json StatusPatch(const api::WorkloadView& workload, json fields) {
  json patch = {{"status", std::move(fields)}};
  if (!workload.resource_version.empty()) {
    patch["metadata"] = {{"resourceVersion", workload.resource_version}};
  }
  return patch;
}

}  // namespace

std::string WorkloadName(const std::string& job_name, const std::string& uid) {
  // A job's name is a DNS label (at most 63 characters): the name stays
  // within a DNS subdomain's 253.
  return fmt::format("weightedjob-{}-{}", job_name, uid.substr(0, 5));
}

json BuildWorkload(const api::ObjectMeta& job, const api::WeightedJobSpec& spec,
                   const WorkerPodSettings& settings, const std::string& queue, int32_t count,
                   const std::string& priority_class, std::optional<int32_t> priority) {
  const json& template_spec = spec.pod_template.spec;
  json container = {{"name", api::kWorkerContainer}, {"image", BallastImage(spec, settings)}};
  // The template's image, else the Ballast image (WorkerImage's rule).
  if (const json* image = jr::Find(api::WorkerContainerOf(spec.pod_template), "image")) {
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
      {"podSets", json::array({{{"name", api::kWorkerPodSet},
                                {"count", count},
                                {"template", {{"spec", std::move(pod_spec)}}}}})}};
  if (!priority_class.empty() && priority) {
    workload_spec["priorityClassRef"] = {
        {"group", api::kKueueGroup}, {"kind", "WorkloadPriorityClass"}, {"name", priority_class}};
    workload_spec["priority"] = *priority;
  }
  json labels = {{std::string(api::kJobLabel), job.name},
                 {std::string(api::kManagedByLabel), std::string(api::kManagedBy)}};
  return {{"apiVersion", api::kKueueApiVersion},
          {"kind", "Workload"},
          {"metadata",
           {{"name", WorkloadName(job.name, job.uid)},
            {"namespace", job.ns},
            {"labels", std::move(labels)},
            {"ownerReferences", json::array({OwnerReference(job)})}}},
          {"spec", std::move(workload_spec)}};
}

api::WeightedJobSpec PlaceOnFlavors(api::WeightedJobSpec spec,
                                    const std::vector<api::FlavorView>& flavors) {
  api::PodTemplate& pods = spec.pod_template;
  for (const api::FlavorView& flavor : flavors) {
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
    if (!existing.is_object() || jr::TextAt(existing, "type") != type) continue;
    if (jr::TextAt(existing, "status") == value &&
        jr::At(existing, "lastTransitionTime").is_string()) {
      condition["lastTransitionTime"] = existing["lastTransitionTime"];
    }
    existing = std::move(condition);
    return conditions;
  }
  conditions.push_back(std::move(condition));
  return conditions;
}

json ClearAdmissionPatch(const api::WorkloadView& workload, const std::string& now) {
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

json FinishPatch(const api::WorkloadView& workload, bool succeeded, const std::string& message,
                 const std::string& now) {
  json conditions =
      WithCondition(workload.raw_conditions, "Finished", true, succeeded ? "Succeeded" : "Failed",
                    message, workload.generation, now);
  return StatusPatch(workload, {{"conditions", std::move(conditions)}});
}

json ReclaimablePatch(const api::WorkloadView& workload, int32_t count) {
  return StatusPatch(workload, {{"reclaimablePods",
                                 json::array({{{"name", api::kWorkerPodSet}, {"count", count}}})}});
}

json ActivePatch(const api::WorkloadView& workload, bool active) {
  json patch = {{"spec", {{"active", active}}}};
  if (!workload.resource_version.empty()) {
    patch["metadata"] = {{"resourceVersion", workload.resource_version}};
  }
  return patch;
}

}  // namespace ballast::controller
