#include "operator/api/kube_views.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <regex>
#include <string_view>

#include "core/common/json_read.h"

namespace ballast::api {

using nlohmann::json;

namespace {

namespace jr = json_read;

using jr::At;

PodPhase PhaseNamed(const std::string& name) {
  if (name == "Pending") return PodPhase::kPending;
  if (name == "Running") return PodPhase::kRunning;
  if (name == "Succeeded") return PodPhase::kSucceeded;
  if (name == "Failed") return PodPhase::kFailed;
  return PodPhase::kUnknown;
}

ContainerView ReadContainer(const json& status) {
  ContainerView container;
  container.name = jr::TextAt(status, "name");
  container.image = jr::TextAt(status, "image");
  const json& state = At(status, "state");
  const json& waiting = At(state, "waiting");
  container.waiting_reason = jr::TextAt(waiting, "reason");
  container.waiting_message = jr::TextAt(waiting, "message");
  if (const json& terminated = At(state, "terminated"); terminated.is_object()) {
    container.terminated = {jr::IntegerAt(terminated, "exitCode"),
                            jr::TextAt(terminated, "message"), jr::TextAt(terminated, "startedAt"),
                            jr::TextAt(terminated, "finishedAt")};
  }
  container.started_at = jr::TextAt(At(state, "running"), "startedAt");
  return container;
}

std::vector<ContainerView> ReadContainers(const json& status, std::string_view key) {
  std::vector<ContainerView> containers;
  for (const json* container : jr::ObjectsAt(status, key)) {
    containers.push_back(ReadContainer(*container));
  }
  return containers;
}

// The status of the node's Ready condition is "True" (the first one, when
// there are several), among its conditions (probe::ReadNodeConditions).
bool ReadyCondition(const std::vector<probe::BoardCondition>& conditions) {
  for (const probe::BoardCondition& condition : conditions) {
    if (condition.type == "Ready") return condition.status == "True";
  }
  return false;
}

}  // namespace

bool ObjectMeta::OwnedBy(const std::string& owner) const {
  return std::find(owner_uids.begin(), owner_uids.end(), owner) != owner_uids.end();
}

ObjectMeta ReadMeta(const json& object) {
  const json& metadata = At(object, "metadata");
  ObjectMeta meta;
  meta.name = jr::TextAt(metadata, "name");
  meta.ns = jr::TextAt(metadata, "namespace");
  meta.uid = jr::TextAt(metadata, "uid");
  meta.deleting = At(metadata, "deletionTimestamp").is_string();
  meta.creation_timestamp = jr::TextAt(metadata, "creationTimestamp");
  meta.labels = jr::StringMapAt(metadata, "labels");
  meta.annotations = jr::StringMapAt(metadata, "annotations");
  for (const json* owner : jr::ObjectsAt(metadata, "ownerReferences")) {
    meta.owner_uids.push_back(jr::TextAt(*owner, "uid"));
  }
  return meta;
}

JobView ReadJob(const json& job) {
  JobView view;
  view.meta = ReadMeta(job);
  view.generation = jr::IntegerAt(At(job, "metadata"), "generation").value_or(0);
  for (const json* condition : jr::ObjectsAt(At(job, "status"), "conditions")) {
    const std::string type = jr::TextAt(*condition, "type");
    if ((type == "Complete" || type == "Failed") && jr::TextAt(*condition, "status") == "True") {
      view.claims_finished = true;
    }
  }
  return view;
}

PodView ReadPod(const json& pod) {
  PodView view;
  view.meta = ReadMeta(pod);
  const json& status = At(pod, "status");
  view.phase = PhaseNamed(jr::TextAt(status, "phase"));
  view.reason = jr::TextAt(status, "reason");
  view.init_containers = ReadContainers(status, "initContainerStatuses");
  view.containers = ReadContainers(status, "containerStatuses");
  for (const json* condition : jr::ObjectsAt(status, "conditions")) {
    if (jr::TextAt(*condition, "status") != "True") continue;
    const std::string type = jr::TextAt(*condition, "type");
    if (type == "PodScheduled") view.scheduled_at = jr::TextAt(*condition, "lastTransitionTime");
    if (type == "PodReadyToStartContainers") {
      view.sandbox_ready_at = jr::TextAt(*condition, "lastTransitionTime");
    }
  }
  return view;
}

NodeView ReadNode(const json& node) {
  NodeView view;
  view.meta = ReadMeta(node);
  const json& spec = At(node, "spec");
  const json& status = At(node, "status");
  // status.conditions, read once: Ready and the probe's among them.
  const std::vector<probe::BoardCondition> conditions = probe::ReadNodeConditions(node);
  view.ready = ReadyCondition(conditions);
  view.unschedulable = jr::FlagAt(spec, "unschedulable");
  for (const json* taint : jr::ObjectsAt(spec, "taints")) {
    view.taints.push_back(
        {jr::TextAt(*taint, "key"), jr::TextAt(*taint, "value"), jr::TextAt(*taint, "effect")});
  }
  view.cpu_cores = CpuCores(At(At(status, "capacity"), "cpu"));
  const json& info = At(status, "nodeInfo");
  view.container_runtime = jr::TextAt(info, "containerRuntimeVersion");
  view.kubelet_version = jr::TextAt(info, "kubeletVersion");
  view.board_conditions = probe::BoardConditionsAmong(conditions);
  return view;
}

std::optional<double> CpuCores(const json& quantity) {
  double cores = 0;
  if (quantity.is_number()) {
    cores = quantity.get<double>();
  } else if (quantity.is_string() && quantity.get_ref<const std::string&>().size() <= 32) {
    static const std::regex kCpu(R"(^\+?([0-9]+(\.[0-9]*)?|\.[0-9]+)(m?)$)");
    std::smatch match;
    const std::string& text = quantity.get_ref<const std::string&>();
    if (!std::regex_match(text, match, kCpu)) return std::nullopt;
    cores = std::strtod(match[1].str().c_str(), nullptr) / (match[3].length() > 0 ? 1000 : 1);
  } else {
    return std::nullopt;
  }
  if (!std::isfinite(cores) || cores <= 0) return std::nullopt;
  return cores;
}

}  // namespace ballast::api
