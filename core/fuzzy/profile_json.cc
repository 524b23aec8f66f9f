// ProfileFromJson, ProfileSpecFromJson and NodeFactsFromJson: the one reader
// of a profile and of node facts, over the tree with common/json_read.h, so
// that nothing throws and every error names its path.
#include "core/fuzzy/profile_json.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <initializer_list>
#include <map>
#include <string>
#include <vector>

#include "core/common/json_read.h"
#include "core/common/names.h"

namespace ballast::fuzzy {
namespace {

using nlohmann::json;
namespace jr = json_read;

// The scale's terms shown in a message; a scale of many or long terms is cut.
constexpr size_t kShownTerms = 8;
constexpr size_t kShownTermBytes = 40;

// The non-empty string under `key`; Invalid naming the path otherwise.
StatusOr<std::string> RequireNonEmpty(const json& node, std::string_view path,
                                      std::string_view key) {
  BALLAST_ASSIGN_OR_RETURN(const json* value, jr::Require(node, path, key));
  if (!value->is_string() || value->get<std::string>().empty()) {
    return jr::Expected(jr::Field(path, key), "a non-empty string", *value);
  }
  return value->get<std::string>();
}

// `value` when it is one of `choices`; Invalid "<path>: expected one of ..."
// (or "expected <the choice>") otherwise.
StatusOr<std::string> ReadChoice(const json& value, std::string_view path,
                                 std::initializer_list<std::string_view> choices) {
  for (std::string_view choice : choices) {
    if (value.is_string() && value.get<std::string>() == choice) return std::string(choice);
  }
  const std::string expected = choices.size() == 1
                                   ? std::string(*choices.begin())
                                   : fmt::format("one of {}", fmt::join(choices, ", "));
  return jr::Expected(path, expected, value);
}

// ReadChoice of the member `key`, or `fallback` when it is not written.
StatusOr<std::string> ChoiceOr(const json& node, std::string_view path, std::string_view key,
                               std::initializer_list<std::string_view> choices,
                               std::string fallback) {
  const json* value = jr::Find(node, key);
  if (!value) return fallback;
  return ReadChoice(*value, jr::Field(path, key), choices);
}

// A JSON number in [min, max]; Invalid naming the bounds otherwise.
StatusOr<double> ReadBounded(const json& value, std::string_view path, double min, double max) {
  if (!value.is_number() || !std::isfinite(value.get<double>()) || value.get<double>() < min ||
      value.get<double>() > max) {
    return jr::Expected(path, fmt::format("a number in [{:g}, {:g}]", min, max), value);
  }
  return value.get<double>();
}

StatusOr<std::map<std::string, double>> ReadScale(const json* node, std::string_view path) {
  std::map<std::string, double> scale = PaperScale();
  if (!node) return scale;
  if (!node->is_object()) {
    return jr::Expected(
        path, fmt::format("a map of term: number in [{:g}, {:g}]", kMinNumber, kMaxNumber), *node);
  }
  for (const auto& [term, value] : node->items()) {
    if (term.empty()) return Status::Invalid(fmt::format("{}: a scale term needs a name", path));
    BALLAST_ASSIGN_OR_RETURN(scale[term],
                             ReadBounded(value, jr::Field(path, term), kMinNumber, kMaxNumber));
  }
  return scale;
}

std::string ScaleTerms(const std::map<std::string, double>& scale) {
  std::vector<std::string> terms;
  for (const auto& [term, value] : scale) {
    if (terms.size() == kShownTerms) {
      terms.push_back(fmt::format("... ({} terms)", scale.size()));
      break;
    }
    terms.push_back(jr::Cut(term, kShownTermBytes));
  }
  return fmt::format("{}", fmt::join(terms, ", "));
}

// A term of the scale, or a plain number in [kMinNumber, kMaxNumber]; a
// number written as a string ("2.5", as a YAML file may quote it, or as the
// API server keeps a preserved field) counts as the number.
StatusOr<Level> ReadLevel(const json& node, std::string_view path,
                          const std::map<std::string, double>& scale) {
  const std::string expected = fmt::format("a term of the scale ({}) or a number in [{:g}, {:g}]",
                                           ScaleTerms(scale), kMinNumber, kMaxNumber);
  double number = 0;
  if (node.is_number()) {
    number = node.get<double>();
  } else if (node.is_string()) {
    const std::string text = node.get<std::string>();
    if (const auto found = scale.find(text); found != scale.end()) {
      return Level{found->second, text};
    }
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), number);
    if (text.empty() || error != std::errc() || end != text.data() + text.size()) {
      return jr::Expected(path, expected, node);
    }
  } else {
    return jr::Expected(path, expected, node);
  }
  if (!std::isfinite(number) || number < kMinNumber || number > kMaxNumber) {
    return jr::Expected(path, expected, node);
  }
  return Level{number, ""};
}

StatusOr<std::map<std::string, Level>> ReadTerms(const json& node, std::string_view path,
                                                 const std::map<std::string, double>& scale) {
  if (!node.is_object() || node.empty()) {
    return jr::Expected(path, "a non-empty map of label value: term or number", node);
  }
  std::map<std::string, Level> terms;
  for (const auto& [label_value, level] : node.items()) {
    BALLAST_ASSIGN_OR_RETURN(terms[label_value],
                             ReadLevel(level, jr::Field(path, label_value), scale));
  }
  return terms;
}

StatusOr<Criterion> CriterionFromJson(const json& node, std::string_view path,
                                      const std::map<std::string, double>& scale) {
  BALLAST_RETURN_IF_ERROR(jr::ExpectObject(
      node, path,
      {"name", "label", "type", "better", "rank", "terms", "default", "optional", "description"}));
  Criterion criterion;
  BALLAST_ASSIGN_OR_RETURN(criterion.name, RequireNonEmpty(node, path, "name"));
  BALLAST_ASSIGN_OR_RETURN(criterion.label, RequireNonEmpty(node, path, "label"));
  BALLAST_ASSIGN_OR_RETURN(const json* type_node, jr::Require(node, path, "type"));
  BALLAST_ASSIGN_OR_RETURN(
      std::string type, ReadChoice(*type_node, jr::Field(path, "type"), {"numeric", "linguistic"}));
  criterion.type = type == "numeric" ? CriterionType::kNumeric : CriterionType::kLinguistic;
  BALLAST_ASSIGN_OR_RETURN(std::string better,
                           ChoiceOr(node, path, "better", {"higher", "lower"}, "higher"));
  criterion.better = better == "higher" ? Better::kHigher : Better::kLower;
  BALLAST_ASSIGN_OR_RETURN(const json* rank, jr::Require(node, path, "rank"));
  BALLAST_ASSIGN_OR_RETURN(criterion.rank, jr::Positive(*rank, jr::Field(path, "rank"), kMaxRank));
  const json* terms = jr::Find(node, "terms");
  const std::string terms_path = jr::Field(path, "terms");
  if (criterion.type == CriterionType::kLinguistic) {
    if (!terms) return Status::Invalid(fmt::format("{}: missing (type: linguistic)", terms_path));
    BALLAST_ASSIGN_OR_RETURN(criterion.terms, ReadTerms(*terms, terms_path, scale));
  } else if (terms) {
    return Status::Invalid(
        fmt::format("{}: only for type: linguistic; a numeric label is its own value", terms_path));
  }
  BALLAST_ASSIGN_OR_RETURN(const json* level, jr::Require(node, path, "default"));
  BALLAST_ASSIGN_OR_RETURN(criterion.default_level,
                           ReadLevel(*level, jr::Field(path, "default"), scale));
  if (const json* optional = jr::Find(node, "optional")) {
    BALLAST_ASSIGN_OR_RETURN(criterion.optional, jr::Bool(*optional, jr::Field(path, "optional")));
  }
  if (const json* description = jr::Find(node, "description")) {
    BALLAST_ASSIGN_OR_RETURN(criterion.description,
                             jr::String(*description, jr::Field(path, "description")));
  }
  return criterion;
}

// Where an earlier definition at `path` is, for a message: its line when
// `source` knows it, else its path.
std::string EarlierAt(const std::string& path, const config::SourceMap* source) {
  if (source) {
    if (auto position = source->Find(path)) return fmt::format("line {}", position->line);
  }
  return path;
}

// The name under `key` of `node`, a DNS-1123 subdomain as Kubernetes names
// nodes (common/names.h).
StatusOr<std::string> ReadNodeName(const json& node, std::string_view path, std::string_view key) {
  BALLAST_ASSIGN_OR_RETURN(const json* value, jr::Require(node, path, key));
  const std::string name_path = jr::Field(path, key);
  BALLAST_ASSIGN_OR_RETURN(std::string name, jr::String(*value, name_path));
  if (Status checked = CheckName(name, NameKind::kDnsSubdomain); !checked.ok()) {
    return Status::Invalid(fmt::format("{}: {}", name_path, checked.message()));
  }
  return name;
}

// The labels under `labels` of `node`: a map of label values; a key with no
// value reads as "".
StatusOr<std::map<std::string, std::string>> ReadLabels(const json& node, std::string_view path) {
  std::map<std::string, std::string> labels;
  const json* map = jr::Find(node, "labels");
  if (!map) return labels;
  const std::string labels_path = jr::Field(path, "labels");
  if (!map->is_object()) return jr::Expected(labels_path, "a map of label: value", *map);
  for (const auto& [key, value] : map->items()) {
    if (value.is_null()) {
      labels[key] = "";
      continue;
    }
    BALLAST_ASSIGN_OR_RETURN(labels[key], jr::LabelValue(value, jr::Field(labels_path, key)));
  }
  return labels;
}

// One item of a NodeList, or the whole document of `kind: Node`:
// {kind: Node, metadata: {name, labels}, <other keys ignored>}.
StatusOr<NodeFacts> ReadKubernetesNode(const json& item, const std::string& path) {
  if (!item.is_object()) return jr::Expected(path, "a Node object", item);
  if (const json* kind = jr::Find(item, "kind")) {
    BALLAST_RETURN_IF_ERROR(ReadChoice(*kind, jr::Field(path, "kind"), {"Node"}).status());
  }
  BALLAST_ASSIGN_OR_RETURN(const json* metadata, jr::Require(item, path, "metadata"));
  const std::string metadata_path = jr::Field(path, "metadata");
  if (!metadata->is_object()) {
    return jr::Expected(metadata_path, "a map with name and labels", *metadata);
  }
  NodeFacts node;
  BALLAST_ASSIGN_OR_RETURN(node.name, ReadNodeName(*metadata, metadata_path, "name"));
  BALLAST_ASSIGN_OR_RETURN(node.labels, ReadLabels(*metadata, metadata_path));
  return node;
}

// One entry of `nodes:`: {name, labels, <other keys ignored>}.
StatusOr<NodeFacts> ReadNodeEntry(const json& entry, const std::string& path) {
  if (!entry.is_object()) return jr::Expected(path, "a map with name and labels", entry);
  NodeFacts node;
  BALLAST_ASSIGN_OR_RETURN(node.name, ReadNodeName(entry, path, "name"));
  BALLAST_ASSIGN_OR_RETURN(node.labels, ReadLabels(entry, path));
  return node;
}

}  // namespace

StatusOr<Profile> ProfileSpecFromJson(const json& spec, std::string name, std::string_view path,
                                      const config::SourceMap* source) {
  BALLAST_RETURN_IF_ERROR(jr::ExpectObject(spec, path, {"rounding", "scale", "criteria"}));
  Profile profile;
  profile.name = std::move(name);
  BALLAST_ASSIGN_OR_RETURN(std::string rounding,
                           ChoiceOr(spec, path, "rounding", {"ceil", "round", "none"}, "ceil"));
  profile.rounding = rounding == "ceil"    ? Rounding::kCeil
                     : rounding == "round" ? Rounding::kRound
                                           : Rounding::kNone;
  BALLAST_ASSIGN_OR_RETURN(profile.scale,
                           ReadScale(jr::Find(spec, "scale"), jr::Field(path, "scale")));
  BALLAST_ASSIGN_OR_RETURN(const json* criteria, jr::Require(spec, path, "criteria"));
  const std::string criteria_path = jr::Field(path, "criteria");
  if (!criteria->is_array() || criteria->empty()) {
    return jr::Expected(criteria_path, "a non-empty list of criteria", *criteria);
  }
  std::map<std::string, std::string> first;  // criterion name -> the path of its name
  for (size_t i = 0; i < criteria->size(); ++i) {
    const std::string element_path = jr::Element(criteria_path, i);
    BALLAST_ASSIGN_OR_RETURN(Criterion criterion,
                             CriterionFromJson((*criteria)[i], element_path, profile.scale));
    const std::string name_path = jr::Field(element_path, "name");
    const auto [earlier, inserted] = first.emplace(criterion.name, name_path);
    if (!inserted) {
      return Status::Invalid(fmt::format("{}: duplicate criterion name {} (first at {})", name_path,
                                         jr::Shown(criterion.name),
                                         EarlierAt(earlier->second, source)));
    }
    profile.criteria.push_back(std::move(criterion));
  }
  return profile;
}

StatusOr<Profile> ProfileFromJson(const json& object, const config::SourceMap* source) {
  BALLAST_RETURN_IF_ERROR(
      jr::ExpectObject(object, "", {"apiVersion", "kind", "metadata", "spec", "status"}));
  BALLAST_ASSIGN_OR_RETURN(const json* api_version, jr::Require(object, "", "apiVersion"));
  BALLAST_RETURN_IF_ERROR(ReadChoice(*api_version, "apiVersion", {kProfileApiVersion}).status());
  BALLAST_ASSIGN_OR_RETURN(const json* kind, jr::Require(object, "", "kind"));
  BALLAST_RETURN_IF_ERROR(ReadChoice(*kind, "kind", {kProfileKind}).status());
  BALLAST_ASSIGN_OR_RETURN(const json* metadata, jr::Require(object, "", "metadata"));
  if (!metadata->is_object()) return jr::Expected("metadata", "a map with a name", *metadata);
  BALLAST_ASSIGN_OR_RETURN(std::string name, RequireNonEmpty(*metadata, "metadata", "name"));
  BALLAST_ASSIGN_OR_RETURN(const json* spec, jr::Require(object, "", "spec"));
  return ProfileSpecFromJson(*spec, std::move(name), "spec", source);
}

StatusOr<std::vector<NodeFacts>> NodeFactsFromJson(const json& document) {
  if (!document.is_object()) {
    return jr::Expected("document", "a map with `nodes:` or a Kubernetes NodeList", document);
  }
  // The items to read, the path of each and whether they are Kubernetes Nodes.
  std::vector<std::pair<const json*, std::string>> items;
  bool kubernetes = false;
  if (const json* kind_node = jr::Find(document, "kind")) {
    BALLAST_ASSIGN_OR_RETURN(std::string kind,
                             ReadChoice(*kind_node, "kind", {"NodeList", "List", "Node"}));
    kubernetes = true;
    if (kind == "Node") items.emplace_back(&document, "");
  }
  if (items.empty()) {
    const std::string_view key = kubernetes ? "items" : "nodes";
    BALLAST_ASSIGN_OR_RETURN(const json* list, jr::Require(document, "", key));
    if (!list->is_array() || list->empty()) {
      return jr::Expected(key, "a non-empty list of nodes", *list);
    }
    for (size_t i = 0; i < list->size(); ++i) {
      items.emplace_back(&(*list)[i], jr::Element(key, i));
    }
  }

  std::vector<NodeFacts> nodes;
  std::map<std::string, std::string> first;  // node name -> the path of the node
  for (const auto& [item, path] : items) {
    BALLAST_ASSIGN_OR_RETURN(
        NodeFacts node, kubernetes ? ReadKubernetesNode(*item, path) : ReadNodeEntry(*item, path));
    const auto [earlier, inserted] = first.emplace(node.name, path);
    if (!inserted) {
      return Status::Invalid(fmt::format("{}: duplicate node name '{}' (first at {})", path,
                                         node.name, earlier->second));
    }
    nodes.push_back(std::move(node));
  }
  return nodes;
}

}  // namespace ballast::fuzzy
