#include "core/fuzzy/model.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <optional>

#include "core/common/names.h"

namespace ballast::fuzzy {
namespace {

// Parses the whole of `text` as a number in [kMinNumber, kMaxNumber]; nullopt
// otherwise (NaN and infinities included).
std::optional<double> ParseBounded(const std::string& text) {
  double value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, error] = std::from_chars(text.data(), end, value);
  if (error != std::errc() || ptr != end || !(value >= kMinNumber && value <= kMaxNumber)) {
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
    if (auto number = ParseBounded(text)) return {*number, false, ""};
    return {criterion.default_level.value, true,
            fmt::format("{}: malformed value {} (expected a number in [{:g}, {:g}]), using "
                        "default {}",
                        prefix, QuoteForMessage(text), kMinNumber, kMaxNumber, fallback)};
  }
  const auto term = criterion.terms.find(text);
  if (term != criterion.terms.end()) return {term->second.value, false, ""};
  return {criterion.default_level.value, true,
          fmt::format("{}: unknown value {}, using default {}", prefix, QuoteForMessage(text),
                      fallback)};
}

Status CheckNumber(const std::string& what, double value) {
  if (value >= kMinNumber && value <= kMaxNumber) return Status::Ok();
  return Status::Invalid(
      fmt::format("{}: must be in [{:g}, {:g}], got {}", what, kMinNumber, kMaxNumber, value));
}

Status CheckProfile(const Profile& profile) {
  if (profile.criteria.empty()) {
    return Status::Invalid(fmt::format("profile {}: no criteria", profile.name));
  }
  for (const Criterion& criterion : profile.criteria) {
    const std::string where = fmt::format("profile {}: criterion {}", profile.name, criterion.name);
    if (!(criterion.rank > 0 && criterion.rank <= kMaxRank)) {
      return Status::Invalid(
          fmt::format("{}: rank must be in (0, {:g}], got {}", where, kMaxRank, criterion.rank));
    }
    BALLAST_RETURN_IF_ERROR(CheckNumber(where + ": default", criterion.default_level.value));
    for (const auto& [text, level] : criterion.terms) {
      BALLAST_RETURN_IF_ERROR(CheckNumber(fmt::format("{}: term '{}'", where, text), level.value));
    }
  }
  return Status::Ok();
}

// Returns `relative` (>= 1), or kMaxRelativeWeight with a warning naming the
// node when `log_ratio`, the log of its score over the lowest, says larger.
double CapRelative(double relative, double log_ratio, const std::string& node,
                   std::vector<std::string>& warnings) {
  // The tolerance keeps a ratio of exactly the cap (up to rounding) silent.
  if (relative <= kMaxRelativeWeight && log_ratio <= std::log(kMaxRelativeWeight) + 1e-9) {
    return relative;
  }
  warnings.push_back(fmt::format(
      "node {}: score 1e{:.0f} times the lowest, weight clamped to {:g} (a larger ratio leaves "
      "the lightest nodes no work)",
      node, log_ratio / std::log(10.0), kMaxRelativeWeight));
  return kMaxRelativeWeight;
}

// Sets each node's relative weight and weight. The scores' quotient is exact
// for ordinary profiles; when the lowest score underflows (memberships near
// 1e-18 raised to large ranks) the quotient comes from the log scores
// instead, and a ratio beyond kMaxRelativeWeight is clamped.
void SetRelativeWeights(Rounding rounding, const std::vector<double>& log_scores,
                        WeightResult& result) {
  double min_score = result.nodes.front().score;
  for (const NodeWeight& node : result.nodes) min_score = std::min(min_score, node.score);
  const double min_log = *std::min_element(log_scores.begin(), log_scores.end());
  const bool exact = min_score >= std::numeric_limits<double>::min();
  for (size_t j = 0; j < result.nodes.size(); ++j) {
    NodeWeight& node = result.nodes[j];
    const double log_ratio = log_scores[j] - min_log;
    const double relative = exact ? node.score / min_score
                                  : std::exp(std::min(log_ratio, std::log(kMaxRelativeWeight)));
    node.relative = CapRelative(std::max(relative, 1.0), log_ratio, node.name, result.warnings);
    node.weight = RoundWeight(node.relative, rounding);
  }
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
  std::vector<double> log_scores(nodes.size(), 0.0);
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
      log_scores[j] += criterion.rank * std::log(mu);
      if (!readings[j].warning.empty()) warnings[j].push_back(std::move(readings[j].warning));
    }
  }
  for (auto& node_warnings : warnings) {
    for (auto& warning : node_warnings) result.warnings.push_back(std::move(warning));
  }
  SetRelativeWeights(profile.rounding, log_scores, result);
  return result;
}

}  // namespace ballast::fuzzy
