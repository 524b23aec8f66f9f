#include "core/health/deviation.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "core/common/stats.h"

namespace ballast::health {
namespace {

bool Positive(double x) { return std::isfinite(x) && x > 0; }

double Or(double x, double fallback) { return std::isnan(x) ? fallback : x; }

DeviationOptions Sane(const DeviationOptions& in) {
  const DeviationOptions d;
  DeviationOptions o = in;
  o.slow_ratio = std::clamp(Or(in.slow_ratio, d.slow_ratio), 0.0, 1.0);
  o.band_sigmas = std::max(0.0, Or(in.band_sigmas, d.band_sigmas));
  o.fast_ratio = std::max(1.0, Or(in.fast_ratio, d.fast_ratio));
  o.min_busy_seconds = std::max(0.0, Or(in.min_busy_seconds, d.min_busy_seconds));
  o.min_history_samples = std::max(0.0, Or(in.min_history_samples, d.min_history_samples));
  o.max_age_seconds = std::max(0.0, Or(in.max_age_seconds, d.max_age_seconds));
  o.max_shared_fraction = std::clamp(Or(in.max_shared_fraction, d.max_shared_fraction), 0.0, 1.0);
  o.min_reference_nodes = std::max<size_t>(1, in.min_reference_nodes);
  return o;
}

double Spread(double spread) { return Positive(spread) ? std::min(spread, 1e6) : 0; }

// Why `m` cannot be judged against `h` (nullptr: no history), or "" when it can.
std::string Unjudgeable(const JobMeasurement& m, const fuzzy::NodeHistory* h,
                        const DeviationOptions& o) {
  if (!Positive(m.speed)) return kNoMeasurement;
  if (!h) return kNoHistory;
  if (h->age_seconds > o.max_age_seconds) return kStaleHistory;
  if (h->samples < o.min_history_samples) return kFewSamples;
  if (!(m.busy_seconds >= o.min_busy_seconds)) return kShortComputing;
  if (std::isnan(m.shared_fraction) || m.shared_fraction > o.max_shared_fraction) return kShared;
  return "";
}

// The variance of a node's log ratio to its baseline. `own`: the node's
// spread; `pooled`: the references' mean spread, a steadier estimate of the
// same noise (the larger of the two counts: a node noisier than the others
// keeps its own). A spread is measured against MergeJobSpeeds' scale, the
// mean of all n = refs + 1 nodes including the node itself, which hides 1/n
// of the node's variance; the median of `refs` references adds pi / (2 refs)
// of it (the mean's 1 / refs for one or two).
// The share of one node's variance the median of `refs` references carries.
double MedianShare(double refs) { return refs >= 3 ? M_PI / (2 * refs) : 1 / refs; }

double RatioVariance(double own, double pooled, double refs) {
  const double per_node = std::max(own, pooled) / (1 - 1 / (refs + 1));
  return per_node * (1 + MedianShare(refs));
}

// A judgeable node's log ratio of measured to history, and its spread.
struct Reference {
  double log_ratio;
  double spread;
  double measurement_variance;
};

// The verdict of `d` (judgeable, its history `h`) against the other
// references' scale (deviation.h).
void Judge(NodeDeviation& d, const fuzzy::NodeHistory& h,
           const std::map<std::string, Reference>& references, const DeviationOptions& o) {
  std::vector<double> log_ratios;
  double spreads = 0;
  double measurement_variances = 0;
  for (const auto& [node, ref] : references) {
    if (node == d.node) continue;
    log_ratios.push_back(ref.log_ratio);
    spreads += ref.spread;
    measurement_variances += ref.measurement_variance;
  }
  d.references = log_ratios.size();
  if (log_ratios.size() < o.min_reference_nodes) {
    d.reason = kNoReference;
    return;
  }
  const double refs = static_cast<double>(log_ratios.size());
  // Two references' median is their mean, which one slow board drags: with
  // a board at a fifth of itself the other of three read fast by 2.2. The
  // node's own ratio joins them, and one board apart from the other two
  // cannot move the median of three.
  if (log_ratios.size() == 2) log_ratios.push_back(references.at(d.node).log_ratio);
  d.baseline = std::exp(std::log(h.speed) + Median(std::move(log_ratios)));
  d.ratio = d.measured / d.baseline;
  const double sigma =
      std::sqrt(RatioVariance(d.spread, spreads / refs, refs) + d.measurement_variance +
                MedianShare(refs) * measurement_variances / refs);
  d.slow_below = std::min(o.slow_ratio, std::exp(-o.band_sigmas * sigma));
  const double fast_above = std::max(o.fast_ratio, std::exp(o.band_sigmas * sigma));
  d.verdict = d.ratio < d.slow_below ? Verdict::kSlow : Verdict::kNormal;
  d.fast = d.verdict == Verdict::kNormal && d.ratio > fast_above;
}

}  // namespace

const char* VerdictName(Verdict verdict) {
  switch (verdict) {
    case Verdict::kNone:
      return "none";
    case Verdict::kNormal:
      return "normal";
    case Verdict::kSlow:
      return "slow";
  }
  return "none";
}

std::map<std::string, fuzzy::NodeHistory> BaselineByNode(
    const std::vector<fuzzy::NodeHistory>& history) {
  std::map<std::string, fuzzy::NodeHistory> by_node;
  for (const fuzzy::NodeHistory& h : history) {
    if (!Positive(h.speed) || !Positive(h.samples) || std::isnan(h.age_seconds)) continue;
    fuzzy::NodeHistory entry = h;
    entry.age_seconds = std::max(0.0, h.age_seconds);
    auto [it, inserted] = by_node.emplace(h.node, entry);
    if (!inserted && entry.age_seconds < it->second.age_seconds) it->second = entry;
  }
  return by_node;
}

std::vector<NodeDeviation> JudgeDeviations(const std::vector<fuzzy::NodeHistory>& history,
                                           const std::vector<JobMeasurement>& measured,
                                           const DeviationOptions& options) {
  const DeviationOptions o = Sane(options);
  const std::map<std::string, fuzzy::NodeHistory> known = BaselineByNode(history);
  std::vector<NodeDeviation> out;
  out.reserve(measured.size());
  std::map<std::string, Reference> references;
  std::set<std::string> seen;
  for (const JobMeasurement& m : measured) {
    NodeDeviation d;
    d.node = m.node;
    d.size_factor = Positive(m.size_factor) && std::isfinite(m.size_factor) ? m.size_factor : 1;
    d.measured = Positive(m.speed) ? m.speed * d.size_factor : 0;
    d.busy_seconds = Positive(m.busy_seconds) ? m.busy_seconds : 0;
    auto it = known.find(m.node);
    const fuzzy::NodeHistory* h = it == known.end() ? nullptr : &it->second;
    if (h) {
      d.spread = Spread(h->spread);
      d.history_samples = h->samples;
    }
    d.measurement_variance = Spread(m.log_variance) + Spread(m.size_variance);
    d.reason = Unjudgeable(m, h, o);
    // A node measured twice: the first measurement alone sets the scale. As
    // a reference it carries its own scatter, not the slope's doubt (that
    // moves all nodes together and is counted for the node judged).
    if (d.reason.empty() && seen.insert(m.node).second) {
      references[m.node] = {std::log(d.measured) - std::log(h->speed), d.spread,
                            Spread(m.log_variance)};
    }
    out.push_back(std::move(d));
  }
  for (NodeDeviation& d : out) {
    if (d.reason.empty()) Judge(d, known.at(d.node), references, o);
  }
  return out;
}

std::string DescribeDeviation(const NodeDeviation& d, const DeviationOptions& options) {
  const DeviationOptions o = Sane(options);
  if (d.verdict == Verdict::kNone) {
    std::string detail;
    if (d.reason == kShortComputing) {
      detail = fmt::format(": {:.1f} s < {:g} s", d.busy_seconds, o.min_busy_seconds);
    } else if (d.reason == kFewSamples) {
      detail = fmt::format(": {:.1f} < {:g}", d.history_samples, o.min_history_samples);
    } else if (d.reason == kNoReference) {
      detail = fmt::format(": {} < {}", d.references, o.min_reference_nodes);
    }
    return fmt::format("{}: no verdict ({}{})", d.node, d.reason, detail);
  }
  const char* what = d.verdict == Verdict::kSlow ? "slow" : d.fast ? "normal, fast" : "normal";
  // Named when the items' sizes moved the measurement by 1 % or more.
  const std::string sizes = std::fabs(std::log(d.size_factor)) >= 0.01
                                ? fmt::format(", x{:.2f} for the sizes of its items", d.size_factor)
                                : "";
  return fmt::format(
      "{} ran at {:.2f} of its baseline (measured {:.4g}{}, baseline {:.4g} cost units/s, "
      "slow below {:.2f}, {:.1f} s computing): {}",
      d.node, d.ratio, d.measured, sizes, d.baseline, d.slow_below, d.busy_seconds, what);
}

std::vector<fuzzy::NodeHistory> EnterJob(const std::vector<fuzzy::NodeHistory>& kept,
                                         const std::vector<fuzzy::NodeHistory>& measured,
                                         const std::vector<NodeDeviation>& deviations,
                                         const fuzzy::HistoryPriorOptions& history_options) {
  std::map<std::string, double> slow_below;
  for (const NodeDeviation& d : deviations) {
    if (d.verdict == Verdict::kSlow) slow_below[d.node] = d.slow_below;
  }
  std::vector<fuzzy::NodeHistory> normal;
  std::map<std::string, fuzzy::NodeHistory> slow;
  for (const fuzzy::NodeHistory& m : measured) {
    if (!slow_below.count(m.node)) {
      normal.push_back(m);
    } else if (Positive(m.speed) && Positive(m.samples)) {
      slow[m.node] = m;
    }
  }
  // The slow nodes' kept records come back rescaled to the job's scale by the
  // normal nodes alone (MergeJobSpeeds keeps a node it was not given).
  std::vector<fuzzy::NodeHistory> merged = fuzzy::MergeJobSpeeds(kept, normal, history_options);
  const double carry = std::clamp(Or(history_options.carry, 0.5), 0.0, 1.0);
  const double cap = Positive(history_options.max_samples) ? history_options.max_samples : 1000;
  for (auto& [node, m] : slow) {
    // By name, not the binding: C++20 lambdas may not capture a structured
    // binding before clang 16 (the fuzz build's compiler).
    const std::string& name = node;
    auto it = std::find_if(merged.begin(), merged.end(),
                           [&](const fuzzy::NodeHistory& h) { return h.node == name; });
    if (it == merged.end()) continue;  // judged against a history not given here
    // Winsorized: the job counts as much as any, at the edge of the band.
    const double entered = std::max(m.speed, it->speed * slow_below[node]);
    const double n_old = it->samples * carry;
    const double n_new = std::min(m.samples, cap);
    const double log_speed =
        (n_old * std::log(it->speed) + n_new * std::log(entered)) / (n_old + n_new);
    it->speed = std::exp(log_speed);
    it->samples = std::min(n_old + n_new, cap);
    it->age_seconds = m.age_seconds;
    // it->spread: as it was; a slow job says nothing of the node's noise.
  }
  return merged;
}

std::map<std::string, double> WinsorizeSpeeds(const std::map<std::string, double>& speeds,
                                              const std::vector<NodeDeviation>& deviations) {
  std::map<std::string, double> entered = speeds;
  for (const NodeDeviation& d : deviations) {
    if (d.verdict != Verdict::kSlow) continue;
    auto it = entered.find(d.node);
    const double edge = d.baseline * d.slow_below;
    if (it != entered.end() && Positive(edge)) it->second = std::max(it->second, edge);
  }
  return entered;
}

}  // namespace ballast::health
