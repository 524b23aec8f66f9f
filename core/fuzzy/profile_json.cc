// ProfileFromJson: the JSON twin of profile_yaml.cc's ParseProfile, read with
// common/json_read.h so that nothing throws and every error names its path.
#include "core/fuzzy/profile_json.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "core/common/json_read.h"

namespace ballast::fuzzy {
namespace {

using nlohmann::json;
namespace jr = json_read;

StatusOr<std::string> RequireNonEmpty(const json& node, std::string_view path,
                                      std::string_view key) {
  BALLAST_ASSIGN_OR_RETURN(const json* value, jr::Require(node, path, key));
  const std::string field = jr::Field(path, key);
  if (!value->is_string() || value->get<std::string>().empty()) {
    return jr::Expected(field, "a non-empty string", *value);
  }
  return value->get<std::string>();
}

// The string under `key` when it is one of `choices`; `fallback` when absent.
StatusOr<std::string> Choice(const json& node, std::string_view path, std::string_view key,
                             std::initializer_list<std::string_view> choices,
                             std::string fallback) {
  const json* value = jr::Find(node, key);
  if (!value) return fallback;
  for (std::string_view choice : choices) {
    if (value->is_string() && value->get<std::string>() == choice) return std::string(choice);
  }
  return jr::Expected(jr::Field(path, key), fmt::format("one of {}", fmt::join(choices, ", ")),
                      *value);
}

StatusOr<std::map<std::string, double>> ParseScale(const json* node, std::string_view path) {
  std::map<std::string, double> scale = PaperScale();
  if (!node) return scale;
  if (!node->is_object()) return jr::Expected(path, "an object of term: number > 0", *node);
  for (const auto& [term, value] : node->items()) {
    if (term.empty()) return Status::Invalid(fmt::format("{}: a scale term needs a name", path));
    BALLAST_ASSIGN_OR_RETURN(scale[term], jr::Positive(value, jr::Field(path, term)));
  }
  return scale;
}

// A term of the scale or a plain number > 0 (a number written as a string,
// "5", counts as the number, as it does in YAML).
StatusOr<Level> ParseLevel(const json& node, std::string_view path,
                           const std::map<std::string, double>& scale) {
  std::vector<std::string> terms;
  for (const auto& [term, value] : scale) terms.push_back(term);
  const std::string expected =
      fmt::format("a term of the scale ({}) or a number > 0", fmt::join(terms, ", "));
  if (node.is_number()) {
    auto number = jr::Positive(node, path);
    if (!number.ok()) return jr::Expected(path, expected, node);
    return Level{*number, ""};
  }
  if (!node.is_string()) return jr::Expected(path, expected, node);
  const std::string text = node.get<std::string>();
  if (const auto found = scale.find(text); found != scale.end()) return Level{found->second, text};
  double number = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), number);
  if (error != std::errc() || end != text.data() + text.size() || !std::isfinite(number) ||
      number <= 0) {
    return jr::Expected(path, expected, node);
  }
  return Level{number, ""};
}

StatusOr<std::map<std::string, Level>> ParseTerms(const json& node, std::string_view path,
                                                  const std::map<std::string, double>& scale) {
  if (!node.is_object() || node.empty()) {
    return jr::Expected(path, "a non-empty object of label value: term or number", node);
  }
  std::map<std::string, Level> terms;
  for (const auto& [label_value, level] : node.items()) {
    BALLAST_ASSIGN_OR_RETURN(terms[label_value],
                             ParseLevel(level, jr::Field(path, label_value), scale));
  }
  return terms;
}

StatusOr<Criterion> ParseCriterion(const json& node, std::string_view path,
                                   const std::map<std::string, double>& scale) {
  BALLAST_RETURN_IF_ERROR(jr::ExpectObject(
      node, path,
      {"name", "label", "type", "better", "rank", "terms", "default", "optional", "description"}));
  Criterion criterion;
  BALLAST_ASSIGN_OR_RETURN(criterion.name, RequireNonEmpty(node, path, "name"));
  BALLAST_ASSIGN_OR_RETURN(criterion.label, RequireNonEmpty(node, path, "label"));
  BALLAST_RETURN_IF_ERROR(jr::Require(node, path, "type").status());
  BALLAST_ASSIGN_OR_RETURN(std::string type,
                           Choice(node, path, "type", {"numeric", "linguistic"}, ""));
  criterion.type = type == "numeric" ? CriterionType::kNumeric : CriterionType::kLinguistic;
  BALLAST_ASSIGN_OR_RETURN(std::string better,
                           Choice(node, path, "better", {"higher", "lower"}, "higher"));
  criterion.better = better == "higher" ? Better::kHigher : Better::kLower;
  BALLAST_ASSIGN_OR_RETURN(const json* rank, jr::Require(node, path, "rank"));
  BALLAST_ASSIGN_OR_RETURN(criterion.rank, jr::Positive(*rank, jr::Field(path, "rank")));
  const json* terms = jr::Find(node, "terms");
  if (criterion.type == CriterionType::kLinguistic) {
    if (!terms) return Status::Invalid(fmt::format("{}.terms: missing (type: linguistic)", path));
    BALLAST_ASSIGN_OR_RETURN(criterion.terms, ParseTerms(*terms, jr::Field(path, "terms"), scale));
  } else if (terms) {
    return Status::Invalid(
        fmt::format("{}.terms: only for type: linguistic; a numeric label is its own value", path));
  }
  BALLAST_ASSIGN_OR_RETURN(const json* level, jr::Require(node, path, "default"));
  BALLAST_ASSIGN_OR_RETURN(criterion.default_level,
                           ParseLevel(*level, jr::Field(path, "default"), scale));
  if (const json* optional = jr::Find(node, "optional")) {
    BALLAST_ASSIGN_OR_RETURN(criterion.optional, jr::Bool(*optional, jr::Field(path, "optional")));
  }
  if (const json* description = jr::Find(node, "description")) {
    BALLAST_ASSIGN_OR_RETURN(criterion.description,
                             jr::String(*description, jr::Field(path, "description")));
  }
  return criterion;
}

StatusOr<Profile> ParseSpec(const json& spec, std::string name) {
  BALLAST_RETURN_IF_ERROR(jr::ExpectObject(spec, "spec", {"rounding", "scale", "criteria"}));
  Profile profile;
  profile.name = std::move(name);
  BALLAST_ASSIGN_OR_RETURN(std::string rounding,
                           Choice(spec, "spec", "rounding", {"ceil", "round", "none"}, "ceil"));
  profile.rounding = rounding == "ceil"    ? Rounding::kCeil
                     : rounding == "round" ? Rounding::kRound
                                           : Rounding::kNone;
  BALLAST_ASSIGN_OR_RETURN(profile.scale, ParseScale(jr::Find(spec, "scale"), "spec.scale"));
  BALLAST_ASSIGN_OR_RETURN(const json* criteria, jr::Require(spec, "spec", "criteria"));
  if (!criteria->is_array() || criteria->empty()) {
    return jr::Expected("spec.criteria", "a non-empty list of criteria", *criteria);
  }
  std::set<std::string> names;
  for (size_t i = 0; i < criteria->size(); ++i) {
    const std::string path = jr::Element("spec.criteria", i);
    BALLAST_ASSIGN_OR_RETURN(Criterion criterion,
                             ParseCriterion((*criteria)[i], path, profile.scale));
    if (!names.insert(criterion.name).second) {
      return Status::Invalid(
          fmt::format("{}.name: duplicate criterion name \"{}\"", path, criterion.name));
    }
    profile.criteria.push_back(std::move(criterion));
  }
  return profile;
}

}  // namespace

StatusOr<Profile> ProfileFromJson(const json& object) {
  if (!object.is_object()) return jr::Expected("WeightProfile", "an object", object);
  BALLAST_ASSIGN_OR_RETURN(std::string api_version,
                           Choice(object, "", "apiVersion", {kProfileApiVersion}, ""));
  BALLAST_ASSIGN_OR_RETURN(std::string kind, Choice(object, "", "kind", {kProfileKind}, ""));
  if (api_version.empty() || kind.empty()) {
    return Status::Invalid(
        fmt::format("apiVersion and kind: expected {} and {}", kProfileApiVersion, kProfileKind));
  }
  BALLAST_ASSIGN_OR_RETURN(const json* metadata, jr::Require(object, "", "metadata"));
  BALLAST_ASSIGN_OR_RETURN(std::string name, RequireNonEmpty(*metadata, "metadata", "name"));
  BALLAST_ASSIGN_OR_RETURN(const json* spec, jr::Require(object, "", "spec"));
  return ParseSpec(*spec, std::move(name));
}

}  // namespace ballast::fuzzy
