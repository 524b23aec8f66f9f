#include "fuzzy/model.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <optional>

namespace ballast::fuzzy {
namespace {

// Parses the whole of `text` as a finite number > 0; nullopt otherwise.
std::optional<double> ParsePositive(const std::string& text) {
  double value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, error] = std::from_chars(text.data(), end, value);
  if (error != std::errc() || ptr != end || !std::isfinite(value) || value <= 0) {
    return std::nullopt;
  }
  return value;
}

// z_ij of one node for one criterion, and the warning when the default was used.
struct Reading {
  double value = 0;
  bool defaulted = false;
  std::string warning;  // empty when silent
};

Reading ReadCriterion(const Criterion& criterion, const NodeFacts& node) {
  const std::string prefix =
      fmt::format("node {}: criterion {} (label {})", node.name, criterion.name, criterion.label);
  const std::string fallback = criterion.default_level.ToString();
  const auto label = node.labels.find(criterion.label);
  if (label == node.labels.end()) {
    if (criterion.optional) return {criterion.default_level.value, true, ""};
    return {criterion.default_level.value, true,
            fmt::format("{}: label missing, using default {}", prefix, fallback)};
  }
  const std::string& text = label->second;
  if (criterion.type == CriterionType::kNumeric) {
    if (auto number = ParsePositive(text)) return {*number, false, ""};
    return {criterion.default_level.value, true,
            fmt::format("{}: malformed value '{}' (expected a number > 0), using default {}",
                        prefix, text, fallback)};
  }
  const auto term = criterion.terms.find(text);
  if (term != criterion.terms.end()) return {term->second.value, false, ""};
  return {criterion.default_level.value, true,
          fmt::format("{}: unknown value '{}', using default {}", prefix, text, fallback)};
}

Status CheckProfile(const Profile& profile) {
  if (profile.criteria.empty()) {
    return Status::Invalid(fmt::format("profile {}: no criteria", profile.name));
  }
  for (const Criterion& criterion : profile.criteria) {
    if (!(criterion.rank > 0) || !std::isfinite(criterion.rank)) {
      return Status::Invalid(fmt::format("profile {}: criterion {}: rank must be > 0, got {}",
                                         profile.name, criterion.name, criterion.rank));
    }
    if (!(criterion.default_level.value > 0) || !std::isfinite(criterion.default_level.value)) {
      return Status::Invalid(fmt::format("profile {}: criterion {}: default must be > 0, got {}",
                                         profile.name, criterion.name,
                                         criterion.default_level.value));
    }
  }
  return Status::Ok();
}

}  // namespace

double RoundWeight(double relative, Rounding rounding) {
  switch (rounding) {
    case Rounding::kCeil:
      return std::ceil(relative - kCeilSlack);
    case Rounding::kRound:
      return std::round(relative);
    case Rounding::kNone:
      return relative;
  }
  return relative;
}

StatusOr<WeightResult> ComputeWeights(const Profile& profile, const std::vector<NodeFacts>& nodes) {
  if (nodes.empty()) return Status::Invalid("no nodes to weigh");
  BALLAST_RETURN_IF_ERROR(CheckProfile(profile));

  WeightResult result;
  result.nodes.resize(nodes.size());
  std::vector<std::vector<std::string>> warnings(nodes.size());  // per node, criterion order
  for (size_t j = 0; j < nodes.size(); ++j) {
    result.nodes[j].name = nodes[j].name;
    result.nodes[j].score = 1;
  }
  for (const Criterion& criterion : profile.criteria) {
    std::vector<Reading> readings;
    readings.reserve(nodes.size());
    for (const NodeFacts& node : nodes) readings.push_back(ReadCriterion(criterion, node));
    auto by_value = [](const Reading& a, const Reading& b) { return a.value < b.value; };
    const double max_z = std::max_element(readings.begin(), readings.end(), by_value)->value;
    const double min_z = std::min_element(readings.begin(), readings.end(), by_value)->value;
    for (size_t j = 0; j < nodes.size(); ++j) {
      const double z = readings[j].value;
      const double mu = criterion.better == Better::kHigher ? z / max_z : min_z / z;
      result.nodes[j].criteria.push_back({criterion.name, z, mu, readings[j].defaulted});
      result.nodes[j].score *= std::pow(mu, criterion.rank);
      if (!readings[j].warning.empty()) warnings[j].push_back(std::move(readings[j].warning));
    }
  }
  for (auto& node_warnings : warnings) {
    for (auto& warning : node_warnings) result.warnings.push_back(std::move(warning));
  }

  double min_score = result.nodes.front().score;
  for (const NodeWeight& node : result.nodes) min_score = std::min(min_score, node.score);
  for (NodeWeight& node : result.nodes) {
    node.relative = node.score / min_score;
    node.weight = RoundWeight(node.relative, profile.rounding);
  }
  return result;
}

}  // namespace ballast::fuzzy
