#include "operator/controller/kube_views.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <regex>
#include <string_view>

#include "core/common/json_read.h"

namespace ballast::controller {

using nlohmann::json;

namespace {

namespace jr = json_read;

// The member `key` of `node`, or null when absent, null or `node` is not an
// object; so lookups chain: At(At(pod, "status"), "phase").
const json& At(const json& node, std::string_view key) {
  static const json kAbsent;
  const json* found = jr::Find(node, key);
  return found ? *found : kAbsent;
}

// The member `key` as a string; "" when absent or not a string.
std::string Text(const json& node, std::string_view key) {
  const json& value = At(node, key);
  return value.is_string() ? value.get<std::string>() : std::string();
}

// The member `key` as a bool; false when absent or not a bool.
bool Flag(const json& node, std::string_view key) {
  const json& value = At(node, key);
  return value.is_boolean() && value.get<bool>();
}

// The member `key` as a whole number in [min, max]; nullopt otherwise.
std::optional<int64_t> Integer(const json& node, std::string_view key,
                               int64_t min = std::numeric_limits<int64_t>::min(),
                               int64_t max = std::numeric_limits<int64_t>::max()) {
  const json& value = At(node, key);
  if (value.is_null()) return std::nullopt;
  auto number = jr::Int(value, key, min, max);
  return number.ok() ? std::optional<int64_t>(*number) : std::nullopt;
}

// The objects in the list `key`: none when it is absent or not a list;
// elements that are not objects are left out.
std::vector<const json*> Objects(const json& node, std::string_view key) {
  std::vector<const json*> objects;
  const json& list = At(node, key);
  if (!list.is_array()) return objects;
  for (const json& element : list) {
    if (element.is_object()) objects.push_back(&element);
  }
  return objects;
}

// The entries of the map `key` whose values are strings.
std::map<std::string, std::string> StringMap(const json& node, std::string_view key) {
  std::map<std::string, std::string> out;
  const json& map = At(node, key);
  if (!map.is_object()) return out;
  for (const auto& [name, value] : map.items()) {
    if (value.is_string()) out.emplace(name, value.get<std::string>());
  }
  return out;
}

PodPhase PhaseNamed(const std::string& name) {
  if (name == "Pending") return PodPhase::kPending;
  if (name == "Running") return PodPhase::kRunning;
  if (name == "Succeeded") return PodPhase::kSucceeded;
  if (name == "Failed") return PodPhase::kFailed;
  return PodPhase::kUnknown;
}

ContainerView ReadContainer(const json& status) {
  ContainerView container;
  container.name = Text(status, "name");
  container.image = Text(status, "image");
  const json& state = At(status, "state");
  const json& waiting = At(state, "waiting");
  container.waiting_reason = Text(waiting, "reason");
  container.waiting_message = Text(waiting, "message");
  if (const json& terminated = At(state, "terminated"); terminated.is_object()) {
    container.terminated = {Integer(terminated, "exitCode"), Text(terminated, "message"),
                            Text(terminated, "startedAt"), Text(terminated, "finishedAt")};
  }
  container.started_at = Text(At(state, "running"), "startedAt");
  return container;
}

std::vector<ContainerView> ReadContainers(const json& status, std::string_view key) {
  std::vector<ContainerView> containers;
  for (const json* container : Objects(status, key)) {
    containers.push_back(ReadContainer(*container));
  }
  return containers;
}

// The status of the node's Ready condition is "True" (the first one, when
// there are several).
bool ReadyCondition(const json& status) {
  for (const json* condition : Objects(status, "conditions")) {
    if (Text(*condition, "type") == "Ready") return Text(*condition, "status") == "True";
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
  meta.name = Text(metadata, "name");
  meta.ns = Text(metadata, "namespace");
  meta.uid = Text(metadata, "uid");
  meta.deleting = At(metadata, "deletionTimestamp").is_string();
  meta.creation_timestamp = Text(metadata, "creationTimestamp");
  meta.labels = StringMap(metadata, "labels");
  meta.annotations = StringMap(metadata, "annotations");
  for (const json* owner : Objects(metadata, "ownerReferences")) {
    meta.owner_uids.push_back(Text(*owner, "uid"));
  }
  return meta;
}

JobView ReadJob(const json& job) {
  JobView view;
  view.meta = ReadMeta(job);
  view.generation = Integer(At(job, "metadata"), "generation").value_or(0);
  for (const json* condition : Objects(At(job, "status"), "conditions")) {
    const std::string type = Text(*condition, "type");
    if ((type == "Complete" || type == "Failed") && Text(*condition, "status") == "True") {
      view.claims_finished = true;
    }
  }
  return view;
}

PodView ReadPod(const json& pod) {
  PodView view;
  view.meta = ReadMeta(pod);
  const json& status = At(pod, "status");
  view.phase = PhaseNamed(Text(status, "phase"));
  view.reason = Text(status, "reason");
  view.init_containers = ReadContainers(status, "initContainerStatuses");
  view.containers = ReadContainers(status, "containerStatuses");
  for (const json* condition : Objects(status, "conditions")) {
    if (Text(*condition, "status") != "True") continue;
    const std::string type = Text(*condition, "type");
    if (type == "PodScheduled") view.scheduled_at = Text(*condition, "lastTransitionTime");
    if (type == "PodReadyToStartContainers") {
      view.sandbox_ready_at = Text(*condition, "lastTransitionTime");
    }
  }
  return view;
}

NodeView ReadNode(const json& node) {
  NodeView view;
  view.meta = ReadMeta(node);
  const json& spec = At(node, "spec");
  const json& status = At(node, "status");
  view.ready = ReadyCondition(status);
  view.unschedulable = Flag(spec, "unschedulable");
  for (const json* taint : Objects(spec, "taints")) {
    view.taints.push_back({Text(*taint, "key"), Text(*taint, "value"), Text(*taint, "effect")});
  }
  view.cpu_cores = CpuCores(At(At(status, "capacity"), "cpu"));
  view.board_conditions = probe::ReadBoardConditions(node);
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

}  // namespace ballast::controller
