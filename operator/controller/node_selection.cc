#include "operator/controller/node_selection.h"

#include <fmt/format.h>

#include "core/common/json_read.h"
#include "core/common/names.h"

namespace ballast::controller {

using nlohmann::json;

bool Tolerates(const json& tolerations, const Taint& taint) {
  if (!tolerations.is_array()) return false;
  for (const auto& toleration : tolerations) {
    const std::string t_effect = toleration.value("effect", "");
    if (!t_effect.empty() && t_effect != taint.effect) continue;
    const std::string t_key = toleration.value("key", "");
    const std::string op = toleration.value("operator", "Equal");
    if (op == "Exists") {
      if (t_key.empty() || t_key == taint.key) return true;
    } else if (t_key == taint.key && toleration.value("value", "") == taint.value) {
      return true;
    }
  }
  return false;
}

std::string Ineligibility(const NodeView& node,
                          const std::map<std::string, std::string>& node_selector,
                          const json& tolerations) {
  const std::string& name = node.meta.name;
  for (const auto& [key, wanted] : node_selector) {
    const auto label = node.meta.labels.find(key);
    if (label == node.meta.labels.end()) {
      return fmt::format("node {}: no label {} (the job selects {})", name, key,
                         QuoteForMessage(wanted));
    }
    if (label->second != wanted) {
      return fmt::format("node {}: label {} is {}, the job selects {}", name, key,
                         QuoteForMessage(label->second), QuoteForMessage(wanted));
    }
  }
  if (node.unschedulable) return fmt::format("node {}: cordoned (spec.unschedulable)", name);
  if (!node.ready) return fmt::format("node {}: not Ready", name);
  for (const Taint& taint : node.taints) {
    if (taint.effect != "NoSchedule" && taint.effect != "NoExecute") continue;
    if (!Tolerates(tolerations, taint)) {
      return fmt::format("node {}: taint {}={}:{} not tolerated", name, taint.key, taint.value,
                         taint.effect);
    }
  }
  return "";
}

}  // namespace ballast::controller
