#include "operator/controller/node_selection.h"

#include <fmt/format.h>

#include "core/common/json_read.h"
#include "core/common/names.h"

namespace ballast::controller {

using nlohmann::json;

bool NodeReady(const json& node) {
  const json conditions = node.value("/status/conditions"_json_pointer, json::array());
  for (const auto& condition : conditions) {
    if (condition.value("type", "") == "Ready") return condition.value("status", "") == "True";
  }
  return false;
}

bool Tolerates(const json& tolerations, const json& taint) {
  if (!tolerations.is_array()) return false;
  const std::string key = taint.value("key", "");
  const std::string value = taint.value("value", "");
  const std::string effect = taint.value("effect", "");
  for (const auto& toleration : tolerations) {
    const std::string t_effect = toleration.value("effect", "");
    if (!t_effect.empty() && t_effect != effect) continue;
    const std::string t_key = toleration.value("key", "");
    const std::string op = toleration.value("operator", "Equal");
    if (op == "Exists") {
      if (t_key.empty() || t_key == key) return true;
    } else if (t_key == key && toleration.value("value", "") == value) {
      return true;
    }
  }
  return false;
}

namespace {

// A label's value as text (the API server holds strings; anything else as
// JSON, never thrown about).
std::string LabelText(const json& value) {
  return value.is_string() ? value.get<std::string>() : json_read::Shown(value);
}

}  // namespace

std::string Ineligibility(const json& node, const json& node_selector, const json& tolerations) {
  const std::string name = node["metadata"].value("name", "");
  const json labels = node["metadata"].value("labels", json::object());
  if (node_selector.is_object()) {
    for (const auto& [key, wanted] : node_selector.items()) {
      if (!labels.contains(key)) {
        return fmt::format("node {}: no label {} (the job selects {})", name, key,
                           QuoteForMessage(LabelText(wanted)));
      }
      if (labels[key] != wanted) {
        return fmt::format("node {}: label {} is {}, the job selects {}", name, key,
                           QuoteForMessage(LabelText(labels[key])),
                           QuoteForMessage(LabelText(wanted)));
      }
    }
  }
  if (node.value("/spec/unschedulable"_json_pointer, false)) {
    return fmt::format("node {}: cordoned (spec.unschedulable)", name);
  }
  if (!NodeReady(node)) return fmt::format("node {}: not Ready", name);
  for (const auto& taint : node.value("/spec/taints"_json_pointer, json::array())) {
    const std::string effect = taint.value("effect", "");
    if (effect != "NoSchedule" && effect != "NoExecute") continue;
    if (!Tolerates(tolerations, taint)) {
      return fmt::format("node {}: taint {}={}:{} not tolerated", name, taint.value("key", ""),
                         taint.value("value", ""), effect);
    }
  }
  return "";
}

}  // namespace ballast::controller
