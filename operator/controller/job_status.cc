#include "operator/controller/job_status.h"

#include <fmt/format.h>

namespace ballast::controller {

using nlohmann::json;

bool SetCondition(json& status, const Condition& condition, int64_t generation,
                  const std::string& now) {
  if (!status.contains("conditions") || !status["conditions"].is_array()) {
    status["conditions"] = json::array();
  }
  const std::string value = condition.status ? "True" : "False";
  json wanted = {{"type", condition.type},           {"status", value},
                 {"reason", condition.reason},       {"message", condition.message},
                 {"observedGeneration", generation}, {"lastTransitionTime", now}};
  for (auto& existing : status["conditions"]) {
    if (existing.value("type", "") != condition.type) continue;
    if (existing.value("status", "") == value) {
      wanted["lastTransitionTime"] = existing.value("lastTransitionTime", now);
    }
    if (existing == wanted) return false;
    existing = wanted;
    return true;
  }
  status["conditions"].push_back(wanted);
  return true;
}

bool ConditionTrue(const json& status, const std::string& type) {
  if (!status.contains("conditions")) return false;
  for (const auto& condition : status["conditions"]) {
    if (condition.value("type", "") == type) return condition.value("status", "") == "True";
  }
  return false;
}

json StatusPatch(const json& from, const json& to) {
  json patch = json::object();
  if (to.is_object()) {
    for (const auto& [key, value] : to.items()) {
      if (!from.is_object() || !from.contains(key) || from[key] != value) patch[key] = value;
    }
  }
  if (from.is_object()) {
    for (const auto& [key, value] : from.items()) {
      if (!to.is_object() || !to.contains(key)) patch[key] = nullptr;
    }
  }
  return patch;
}

std::string ProgressText(uint64_t completed, uint64_t items) {
  if (items == 0) return "0%";
  return fmt::format("{}%", completed >= items ? 100 : completed * 100 / items);
}

}  // namespace ballast::controller
