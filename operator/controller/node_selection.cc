#include "operator/controller/node_selection.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <optional>
#include <string_view>
#include <vector>

#include "core/common/json_read.h"
#include "core/common/names.h"

namespace ballast::controller {

using nlohmann::json;

bool Tolerates(const json& tolerations, const api::Taint& taint) {
  if (!tolerations.is_array()) return false;
  for (const json& toleration : tolerations) {
    // A field absent or of another type reads as "" (a flavor's tolerations
    // reach here unchecked); an operator "" is Equal, Kubernetes' default.
    const std::string t_effect = json_read::TextAt(toleration, "effect");
    if (!t_effect.empty() && t_effect != taint.effect) continue;
    const std::string t_key = json_read::TextAt(toleration, "key");
    if (json_read::TextAt(toleration, "operator") == "Exists") {
      if (t_key.empty() || t_key == taint.key) return true;
    } else if (t_key == taint.key && json_read::TextAt(toleration, "value") == taint.value) {
      return true;
    }
  }
  return false;
}

namespace {

std::optional<int64_t> Integer(const std::string& text) {
  int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

// One NodeSelectorRequirement against `value` (the label's, or the field's;
// nullopt when the node has none).
bool Holds(const json& requirement, const std::optional<std::string>& value) {
  const std::string name = json_read::TextAt(requirement, "operator");
  const std::vector<std::string> values = json_read::StringsAt(requirement, "values");
  const bool listed = value && std::find(values.begin(), values.end(), *value) != values.end();
  if (name == "In") return listed;
  if (name == "NotIn") return !listed;
  if (name == "Exists") return value.has_value();
  if (name == "DoesNotExist") return !value;
  if ((name != "Gt" && name != "Lt") || !value || values.size() != 1) return false;
  const auto have = Integer(*value);
  const auto bound = Integer(values[0]);
  if (!have || !bound) return false;
  return name == "Gt" ? *have > *bound : *have < *bound;
}

std::optional<std::string> LabelOf(const api::NodeView& node, const std::string& key) {
  const auto label = node.meta.labels.find(key);
  if (label == node.meta.labels.end()) return std::nullopt;
  return label->second;
}

bool MatchesTerm(const api::NodeView& node, const json& term) {
  bool any = false;
  for (const char* list : {"matchExpressions", "matchFields"}) {
    const json* requirements = json_read::Find(term, list);
    if (!requirements || !requirements->is_array()) continue;
    for (const json& requirement : *requirements) {
      const json* key = json_read::Find(requirement, "key");
      if (!key || !key->is_string()) return false;
      std::optional<std::string> value;
      if (list == std::string_view("matchFields")) {
        if (*key != "metadata.name") return false;
        value = node.meta.name;
      } else {
        value = LabelOf(node, key->get<std::string>());
      }
      if (!Holds(requirement, value)) return false;
      any = true;
    }
  }
  return any;
}

}  // namespace

bool MatchesNodeSelectorTerms(const api::NodeView& node, const json& terms) {
  if (!terms.is_array() || terms.empty()) return true;
  for (const json& term : terms) {
    if (MatchesTerm(node, term)) return true;
  }
  return false;
}

std::string Ineligibility(const api::NodeView& node,
                          const std::map<std::string, std::string>& node_selector,
                          const json& tolerations, const json& affinity_terms) {
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
  if (!MatchesNodeSelectorTerms(node, affinity_terms)) {
    return fmt::format(
        "node {}: matches none of the required node affinity's terms "
        "(spec.template.spec.affinity.nodeAffinity)",
        name);
  }
  if (node.unschedulable) return fmt::format("node {}: cordoned (spec.unschedulable)", name);
  if (!node.ready) return fmt::format("node {}: not Ready", name);
  for (const api::Taint& taint : node.taints) {
    if (taint.effect != "NoSchedule" && taint.effect != "NoExecute") continue;
    if (!Tolerates(tolerations, taint)) {
      return fmt::format("node {}: taint {}={}:{} not tolerated", name, taint.key, taint.value,
                         taint.effect);
    }
  }
  return "";
}

}  // namespace ballast::controller
