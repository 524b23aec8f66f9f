#include "core/fuzzy/history_prior.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/balance/policy.h"

namespace ballast::fuzzy {
namespace {

// History speeds are read within these bounds (a wider spread only says that
// the slowest node gets nothing, and keeps every log and product finite).
constexpr double kLowestSpeed = 1e-300;
constexpr double kHighestSpeed = 1e300;

bool Positive(double x) { return std::isfinite(x) && x > 0; }

double FullTrust(const HistoryPriorOptions& options) {
  const double full = options.full_trust_samples;
  if (std::isnan(full)) return HistoryPriorOptions{}.full_trust_samples;
  return std::max(full, 1e-9);  // +inf: never trusted fully, Z = 0
}

double MaxAge(const HistoryPriorOptions& options) {
  const double age = options.max_age_seconds;
  if (std::isnan(age)) return 0;
  return std::max(0.0, age);
}

double Unit(double x, double fallback) {
  if (std::isnan(x)) return fallback;
  return std::clamp(x, 0.0, 1.0);
}

// The entry is usable: a speed, samples and an age BlendHistoryPrior reads.
bool Usable(const NodeHistory& h, const HistoryPriorOptions& options) {
  return Positive(h.speed) && h.speed >= kLowestSpeed && h.speed <= kHighestSpeed &&
         Positive(h.samples) && !std::isnan(h.age_seconds) && h.age_seconds <= MaxAge(options);
}

double Age(const NodeHistory& h) { return std::max(0.0, h.age_seconds); }

// The usable entries of `history` by node, the newest of duplicates.
std::map<std::string, NodeHistory> UsableByNode(const std::vector<NodeHistory>& history,
                                                const HistoryPriorOptions& options) {
  std::map<std::string, NodeHistory> by_node;
  for (const NodeHistory& h : history) {
    if (!Usable(h, options)) continue;
    auto [it, inserted] = by_node.emplace(h.node, h);
    if (!inserted && Age(h) < Age(it->second)) it->second = h;
  }
  for (auto& [node, h] : by_node) h.age_seconds = Age(h);
  return by_node;
}

double FuzzyValue(double weight) {
  if (!Positive(weight)) return 1;
  return std::clamp(weight, balance::kMinPriorSpeed, balance::kMaxPriorSpeed);
}

}  // namespace

double Credibility(double samples, const HistoryPriorOptions& options, double spread) {
  if (!Positive(samples)) return 0;
  const double z = std::min(1.0, std::sqrt(samples / FullTrust(options)));
  const double tolerance = Positive(options.spread_tolerance)
                               ? options.spread_tolerance
                               : HistoryPriorOptions{}.spread_tolerance;
  if (!(spread > 0)) return z;  // NaN, negative or none
  return z / (1 + std::min(spread, 1e300) / tolerance);
}

double WeightedSamples(double samples, double throttled, const HistoryPriorOptions& options) {
  const double total = Positive(samples) ? std::min(samples, 1e300) : 0;
  const double slow = Positive(throttled) ? std::min(throttled, total) : 0;
  return (total - slow) + slow * Unit(options.throttled_weight, 0.25);
}

double JobSamples(double reports, double busy_seconds, const HistoryPriorOptions& options) {
  if (!Positive(reports) || !Positive(busy_seconds)) return 0;
  const double unit = Positive(options.sample_seconds) ? options.sample_seconds
                                                       : HistoryPriorOptions{}.sample_seconds;
  return std::min({reports, busy_seconds / unit, 1e300});
}

double MeasuredSpeed(double cost, double busy_seconds) {
  if (!Positive(cost) || !Positive(busy_seconds)) return 0;
  const double speed = cost / busy_seconds;
  return Positive(speed) ? speed : 0;
}

namespace {

// What one node with usable history brings: its fuzzy and history log
// speeds, its credibility and the history itself.
struct Evidence {
  double log_fuzzy = 0;
  double log_history = 0;
  double z = 0;
  const NodeHistory* history = nullptr;
};

// The scale: log c = Σ z (log f - log h) / Σ z (0 when nothing counts).
double LogScale(const std::map<std::string, Evidence>& evidence) {
  double weighted = 0;
  double sum = 0;
  for (const auto& [node, e] : evidence) {
    weighted += e.z * (e.log_fuzzy - e.log_history);
    sum += e.z;
  }
  return sum > 0 ? weighted / sum : 0;
}

// How wrong the fuzzy weights are, as history shows them: the
// credibility-weighted mean square of log f - log(c h).
double LabelError(const std::map<std::string, Evidence>& evidence, double log_scale) {
  double weighted = 0;
  double sum = 0;
  for (const auto& [node, e] : evidence) {
    const double residual = e.log_fuzzy - log_scale - e.log_history;
    weighted += e.z * residual * residual;
    sum += e.z;
  }
  return sum > 0 ? weighted / sum : 0;
}

}  // namespace

std::vector<NodePrior> BlendHistoryPrior(const std::map<std::string, double>& fuzzy,
                                         const std::vector<NodeHistory>& history,
                                         const HistoryPriorOptions& options) {
  const std::map<std::string, NodeHistory> known = UsableByNode(history, options);
  std::map<std::string, Evidence> evidence;
  for (const auto& [node, weight] : fuzzy) {
    auto it = known.find(node);
    if (it == known.end()) continue;
    evidence[node] = {std::log(FuzzyValue(weight)), std::log(it->second.speed),
                      Credibility(it->second.samples, options), &it->second};
  }
  // A spread between jobs counts against history relative to how wrong the
  // labels are: noisier history than the labels' error is trusted less.
  HistoryPriorOptions spread_options = options;
  const double tolerance = Positive(options.spread_tolerance)
                               ? options.spread_tolerance
                               : HistoryPriorOptions{}.spread_tolerance;
  spread_options.spread_tolerance = std::max(tolerance, LabelError(evidence, LogScale(evidence)));
  for (auto& [node, e] : evidence) {
    // The history's speed is a mean of jobs that weighs the older ones by
    // carry each time (MergeJobSpeeds): its variance is the spread between
    // jobs times (1 - carry) / (1 + carry).
    const double carry = Unit(options.carry, 0.5);
    const double spread = Positive(e.history->spread) ? e.history->spread : 0;
    e.z = Credibility(e.history->samples, spread_options, spread * (1 - carry) / (1 + carry));
  }
  const double log_scale = LogScale(evidence);
  std::vector<NodePrior> priors;
  priors.reserve(fuzzy.size());
  for (const auto& [node, weight] : fuzzy) {
    NodePrior prior{node, FuzzyValue(weight), PriorSource::kProfile, 0, 0, 0, 0};
    auto it = evidence.find(node);
    if (it != evidence.end()) {
      const Evidence& e = it->second;
      const double log_prior = (1 - e.z) * e.log_fuzzy + e.z * (log_scale + e.log_history);
      prior.value =
          std::clamp(std::exp(log_prior), balance::kMinPriorSpeed, balance::kMaxPriorSpeed);
      prior.source = e.z >= 1 ? PriorSource::kHistory : PriorSource::kBlended;
      prior.samples = e.history->samples;
      prior.age_seconds = e.history->age_seconds;
      prior.credibility = e.z;
      prior.spread = Positive(e.history->spread) ? e.history->spread : 0;
    }
    priors.push_back(std::move(prior));
  }
  return priors;
}

std::vector<NodeHistory> MergeJobSpeeds(const std::vector<NodeHistory>& kept,
                                        const std::vector<NodeHistory>& measured,
                                        const HistoryPriorOptions& options) {
  // Age does not make an entry unusable here: the caller ages its records.
  HistoryPriorOptions keep_all = options;
  keep_all.max_age_seconds = std::numeric_limits<double>::infinity();
  std::map<std::string, NodeHistory> old_records = UsableByNode(kept, keep_all);
  const std::map<std::string, NodeHistory> new_records = UsableByNode(measured, keep_all);
  double log_ratio = 0;
  int common = 0;
  for (const auto& [node, h] : new_records) {
    auto it = old_records.find(node);
    if (it == old_records.end()) continue;
    log_ratio += std::log(h.speed) - std::log(it->second.speed);
    ++common;
  }
  const double log_scale = common > 0 ? log_ratio / common : 0;
  const double carry = Unit(options.carry, 0.5);
  const double cap = Positive(options.max_samples) ? options.max_samples : 1000;
  auto rescaled = [&](double speed) {
    return std::clamp(std::exp(std::log(speed) + log_scale), kLowestSpeed, kHighestSpeed);
  };
  for (auto& [node, h] : old_records) {
    h.speed = rescaled(h.speed);
    h.samples = std::min(h.samples, cap);
  }
  for (const auto& [node, h] : new_records) {
    auto [it, inserted] = old_records.emplace(node, h);
    NodeHistory& merged = it->second;
    if (inserted) {
      merged.samples = std::min(h.samples, cap);
      continue;
    }
    const double n_old = merged.samples * carry;
    const double n_new = std::min(h.samples, cap);
    const double d = std::log(h.speed) - std::log(merged.speed);
    const double kept_spread = Positive(merged.spread) ? std::min(merged.spread, 1e6) : 0;
    merged.spread =
        std::min(1e6, kept_spread > 0 ? carry * kept_spread + (1 - carry) * d * d : d * d);
    const double log_speed =
        (n_old * std::log(merged.speed) + n_new * std::log(h.speed)) / (n_old + n_new);
    merged.speed = std::clamp(std::exp(log_speed), kLowestSpeed, kHighestSpeed);
    merged.samples = std::min(n_old + n_new, cap);
    merged.age_seconds = h.age_seconds;
  }
  std::vector<NodeHistory> out;
  out.reserve(old_records.size());
  for (auto& [node, h] : old_records) out.push_back(std::move(h));
  return out;
}

const char* PriorSourceName(PriorSource source) {
  switch (source) {
    case PriorSource::kProfile:
      return "profile";
    case PriorSource::kHistory:
      return "history";
    case PriorSource::kBlended:
      return "blended";
  }
  return "profile";
}

double SplitError(const std::vector<double>& priors, const std::vector<double>& true_speeds) {
  if (priors.empty() || priors.size() != true_speeds.size()) return 0;
  double prior_sum = 0;
  double true_sum = 0;
  for (size_t i = 0; i < priors.size(); ++i) {
    prior_sum += priors[i];
    true_sum += true_speeds[i];
  }
  if (!Positive(prior_sum) || !Positive(true_sum)) return 0;
  double worst = 0;
  for (size_t i = 0; i < priors.size(); ++i) {
    const double want = true_speeds[i] / true_sum;
    if (!Positive(want)) continue;
    worst = std::max(worst, std::fabs(priors[i] / prior_sum / want - 1));
  }
  return worst;
}

}  // namespace ballast::fuzzy
