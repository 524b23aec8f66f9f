// Parsing of WeightProfile and node-fact documents through config::YamlNode.
#include <fmt/format.h>

#include <initializer_list>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/common/names.h"
#include "core/config/yaml_node.h"
#include "core/fuzzy/profile.h"

namespace ballast::fuzzy {
namespace {

using config::YamlNode;

// "a.yaml" -> "a", "dir/b.c.yml" -> "b.c".
std::string BaseName(const std::string& file_name) {
  const size_t slash = file_name.find_last_of('/');
  std::string base = slash == std::string::npos ? file_name : file_name.substr(slash + 1);
  const size_t dot = base.find_last_of('.');
  if (dot != std::string::npos && dot > 0) base.resize(dot);
  return base;
}

// Returns the scalar when it is one of `choices`, else Invalid listing them.
StatusOr<std::string> ReadChoice(const YamlNode& node,
                                 std::initializer_list<std::string_view> choices) {
  const std::string expected = fmt::format("one of {}", fmt::join(choices, ", "));
  if (!node.IsScalar()) return node.Error(expected);
  BALLAST_ASSIGN_OR_RETURN(std::string text, node.AsString());
  for (std::string_view choice : choices) {
    if (text == choice) return text;
  }
  return node.Error(expected);
}

// A required non-empty string under `key`.
StatusOr<std::string> RequireName(const YamlNode& map, std::string_view key,
                                  std::string_view what) {
  BALLAST_ASSIGN_OR_RETURN(YamlNode node, map.Require(key));
  if (!node.IsScalar()) return node.Error(what);
  BALLAST_ASSIGN_OR_RETURN(std::string text, node.AsString());
  if (text.empty()) return node.Error(what);
  return text;
}

// The node name under `key`, a DNS-1123 subdomain as Kubernetes names nodes
// (common/names.h); Invalid naming the file, the line and what is wrong.
StatusOr<std::string> RequireNodeName(const YamlNode& map, std::string_view key) {
  BALLAST_ASSIGN_OR_RETURN(std::string name, RequireName(map, key, "a non-empty node name"));
  if (Status checked = CheckName(name, NameKind::kDnsSubdomain); !checked.ok()) {
    BALLAST_ASSIGN_OR_RETURN(YamlNode node, map.Require(key));
    return node.Fail(checked.message());
  }
  return name;
}

// A number in [min, max]; Invalid naming the bounds otherwise.
StatusOr<double> ReadBounded(const YamlNode& node, double min, double max) {
  auto value = node.AsDouble();
  if (!value.ok() || *value < min || *value > max) {
    return node.Error(fmt::format("a number in [{:g}, {:g}]", min, max));
  }
  return value;
}

StatusOr<std::map<std::string, double>> ParseScale(const std::optional<YamlNode>& node) {
  std::map<std::string, double> scale = PaperScale();
  if (!node) return scale;
  if (!node->IsMap()) {
    return node->Error(
        fmt::format("a map of term: number in [{:g}, {:g}]", kMinNumber, kMaxNumber));
  }
  for (const auto& [term, value] : node->Entries()) {
    if (term.empty()) return value.Fail("a scale term needs a name");
    BALLAST_ASSIGN_OR_RETURN(scale[term], ReadBounded(value, kMinNumber, kMaxNumber));
  }
  return scale;
}

std::string ScaleTerms(const std::map<std::string, double>& scale) {
  std::vector<std::string> terms;
  for (const auto& [term, value] : scale) terms.push_back(term);
  return fmt::format("{}", fmt::join(terms, ", "));
}

// A term of the scale or a plain number in [kMinNumber, kMaxNumber].
StatusOr<Level> ParseLevel(const YamlNode& node, const std::map<std::string, double>& scale) {
  const std::string expected = fmt::format("a term of the scale ({}) or a number in [{:g}, {:g}]",
                                           ScaleTerms(scale), kMinNumber, kMaxNumber);
  if (!node.IsScalar()) return node.Error(expected);
  if (auto number = node.AsDouble(); number.ok()) {
    if (*number < kMinNumber || *number > kMaxNumber) return node.Error(expected);
    return Level{*number, ""};
  }
  BALLAST_ASSIGN_OR_RETURN(std::string term, node.AsString());
  const auto found = scale.find(term);
  if (found == scale.end()) return node.Error(expected);
  return Level{found->second, term};
}

StatusOr<std::map<std::string, Level>> ParseTerms(const YamlNode& node,
                                                  const std::map<std::string, double>& scale) {
  if (!node.IsMap() || node.Entries().empty()) {
    return node.Error("a non-empty map of label value: term or number");
  }
  std::map<std::string, Level> terms;
  for (const auto& [label_value, level_node] : node.Entries()) {
    BALLAST_ASSIGN_OR_RETURN(terms[label_value], ParseLevel(level_node, scale));
  }
  return terms;
}

StatusOr<Criterion> ParseCriterion(const YamlNode& node,
                                   const std::map<std::string, double>& scale) {
  BALLAST_RETURN_IF_ERROR(node.ExpectMap(
      {"name", "label", "type", "better", "rank", "terms", "default", "optional", "description"}));
  Criterion criterion;
  BALLAST_ASSIGN_OR_RETURN(criterion.name, RequireName(node, "name", "a non-empty name"));
  BALLAST_ASSIGN_OR_RETURN(criterion.label,
                           RequireName(node, "label", "the node label the criterion reads"));
  BALLAST_ASSIGN_OR_RETURN(YamlNode type_node, node.Require("type"));
  BALLAST_ASSIGN_OR_RETURN(std::string type, ReadChoice(type_node, {"numeric", "linguistic"}));
  criterion.type = type == "numeric" ? CriterionType::kNumeric : CriterionType::kLinguistic;
  if (auto better_node = node.Get("better")) {
    BALLAST_ASSIGN_OR_RETURN(std::string better, ReadChoice(*better_node, {"higher", "lower"}));
    criterion.better = better == "higher" ? Better::kHigher : Better::kLower;
  }
  BALLAST_ASSIGN_OR_RETURN(YamlNode rank_node, node.Require("rank"));
  BALLAST_ASSIGN_OR_RETURN(criterion.rank, rank_node.AsPositive());
  if (criterion.rank > kMaxRank) {
    return rank_node.Error(fmt::format("a number > 0 and <= {:g}", kMaxRank));
  }

  const auto terms_node = node.Get("terms");
  if (criterion.type == CriterionType::kLinguistic) {
    if (!terms_node) return node.Fail("missing required key 'terms' (type: linguistic)");
    BALLAST_ASSIGN_OR_RETURN(criterion.terms, ParseTerms(*terms_node, scale));
  } else if (terms_node) {
    return terms_node->Fail("terms are only for type: linguistic; a numeric label is its value");
  }
  BALLAST_ASSIGN_OR_RETURN(YamlNode default_node, node.Require("default"));
  BALLAST_ASSIGN_OR_RETURN(criterion.default_level, ParseLevel(default_node, scale));
  BALLAST_ASSIGN_OR_RETURN(criterion.optional,
                           config::ReadOr(node, "optional", false, &YamlNode::AsBool));
  BALLAST_ASSIGN_OR_RETURN(criterion.description,
                           config::ReadOr(node, "description", std::string(), &YamlNode::AsString));
  return criterion;
}

StatusOr<Profile> ParseSpec(const YamlNode& spec, std::string name) {
  BALLAST_RETURN_IF_ERROR(spec.ExpectMap({"rounding", "scale", "criteria"}));
  Profile profile;
  profile.name = std::move(name);
  if (auto rounding_node = spec.Get("rounding")) {
    BALLAST_ASSIGN_OR_RETURN(std::string rounding,
                             ReadChoice(*rounding_node, {"ceil", "round", "none"}));
    profile.rounding = rounding == "ceil"    ? Rounding::kCeil
                       : rounding == "round" ? Rounding::kRound
                                             : Rounding::kNone;
  }
  BALLAST_ASSIGN_OR_RETURN(profile.scale, ParseScale(spec.Get("scale")));
  BALLAST_ASSIGN_OR_RETURN(YamlNode criteria, spec.Require("criteria"));
  if (!criteria.IsSequence() || criteria.Elements().empty()) {
    return criteria.Error("a non-empty list of criteria");
  }
  std::map<std::string, int> lines;  // criterion name -> line of its first definition
  for (const YamlNode& element : criteria.Elements()) {
    BALLAST_ASSIGN_OR_RETURN(Criterion criterion, ParseCriterion(element, profile.scale));
    const auto [first, inserted] = lines.emplace(criterion.name, element.line());
    if (!inserted) {
      return element.Fail(fmt::format("duplicate criterion name '{}' (first at line {})",
                                      criterion.name, first->second));
    }
    profile.criteria.push_back(std::move(criterion));
  }
  return profile;
}

// Labels of a node: a map of strings; a key with no value reads as "".
StatusOr<std::map<std::string, std::string>> ParseLabels(const std::optional<YamlNode>& node) {
  std::map<std::string, std::string> labels;
  if (!node) return labels;
  if (!node->IsMap()) return node->Error("a map of label: value");
  for (const auto& [key, value] : node->Entries()) {
    if (value.IsNull()) {
      labels[key] = "";
      continue;
    }
    if (!value.IsScalar()) return value.Error("a string label value");
    BALLAST_ASSIGN_OR_RETURN(labels[key], value.AsString());
  }
  return labels;
}

// One item of a NodeList: {kind: Node, metadata: {name, labels}, ...}.
StatusOr<NodeFacts> ParseKubernetesNode(const YamlNode& item) {
  if (!item.IsMap()) return item.Error("a Node object");
  if (auto kind = item.Get("kind")) {
    BALLAST_RETURN_IF_ERROR(ReadChoice(*kind, {"Node"}).status());
  }
  BALLAST_ASSIGN_OR_RETURN(YamlNode metadata, item.Require("metadata"));
  if (!metadata.IsMap()) return metadata.Error("a map with name and labels");
  NodeFacts node;
  BALLAST_ASSIGN_OR_RETURN(node.name, RequireNodeName(metadata, "name"));
  BALLAST_ASSIGN_OR_RETURN(node.labels, ParseLabels(metadata.Get("labels")));
  return node;
}

// One entry of `nodes:`: {name, labels, <anything else>}.
StatusOr<NodeFacts> ParseNodeEntry(const YamlNode& entry) {
  if (!entry.IsMap()) return entry.Error("a map with name and labels");
  NodeFacts node;
  BALLAST_ASSIGN_OR_RETURN(node.name, RequireNodeName(entry, "name"));
  BALLAST_ASSIGN_OR_RETURN(node.labels, ParseLabels(entry.Get("labels")));
  return node;
}

}  // namespace

StatusOr<Profile> ParseProfile(std::string_view yaml_text, std::string file_name) {
  const std::string base_name = BaseName(file_name);
  BALLAST_ASSIGN_OR_RETURN(YamlNode root, YamlNode::Parse(yaml_text, std::move(file_name)));
  if (!root.IsMap()) {
    return root.Error("a WeightProfile (apiVersion, kind, metadata, spec) or a spec map");
  }
  if (!root.Get("apiVersion") && !root.Get("kind")) return ParseSpec(root, base_name);

  BALLAST_RETURN_IF_ERROR(root.ExpectMap({"apiVersion", "kind", "metadata", "spec"}));
  BALLAST_ASSIGN_OR_RETURN(YamlNode api_version, root.Require("apiVersion"));
  BALLAST_RETURN_IF_ERROR(ReadChoice(api_version, {kProfileApiVersion}).status());
  BALLAST_ASSIGN_OR_RETURN(YamlNode kind, root.Require("kind"));
  BALLAST_RETURN_IF_ERROR(ReadChoice(kind, {kProfileKind}).status());
  BALLAST_ASSIGN_OR_RETURN(YamlNode metadata, root.Require("metadata"));
  if (!metadata.IsMap()) return metadata.Error("a map with a name");
  BALLAST_ASSIGN_OR_RETURN(std::string name,
                           RequireName(metadata, "name", "a non-empty profile name"));
  BALLAST_ASSIGN_OR_RETURN(YamlNode spec, root.Require("spec"));
  return ParseSpec(spec, std::move(name));
}

StatusOr<std::vector<NodeFacts>> ParseNodes(std::string_view yaml_text, std::string file_name) {
  BALLAST_ASSIGN_OR_RETURN(YamlNode root, YamlNode::Parse(yaml_text, std::move(file_name)));
  if (!root.IsMap()) return root.Error("a map with `nodes:` or a Kubernetes NodeList");

  std::vector<YamlNode> items;
  bool kubernetes = false;
  if (auto kind_node = root.Get("kind")) {
    BALLAST_ASSIGN_OR_RETURN(std::string kind,
                             ReadChoice(*kind_node, {"NodeList", "List", "Node"}));
    kubernetes = true;
    if (kind == "Node") {
      items.push_back(root);
    } else {
      BALLAST_ASSIGN_OR_RETURN(YamlNode list, root.Require("items"));
      if (!list.IsSequence() || list.Elements().empty()) {
        return list.Error("a non-empty list of nodes");
      }
      items = list.Elements();
    }
  } else {
    BALLAST_ASSIGN_OR_RETURN(YamlNode list, root.Require("nodes"));
    if (!list.IsSequence() || list.Elements().empty()) {
      return list.Error("a non-empty list of nodes");
    }
    items = list.Elements();
  }

  std::vector<NodeFacts> nodes;
  std::set<std::string> names;
  for (const YamlNode& item : items) {
    BALLAST_ASSIGN_OR_RETURN(NodeFacts node,
                             kubernetes ? ParseKubernetesNode(item) : ParseNodeEntry(item));
    if (!names.insert(node.name).second) {
      return item.Fail(fmt::format("duplicate node name '{}'", node.name));
    }
    nodes.push_back(std::move(node));
  }
  return nodes;
}

}  // namespace ballast::fuzzy
