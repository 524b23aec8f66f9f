#include "core/health/measurement_noise.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "core/common/stats.h"

namespace ballast::health {
namespace {

bool UsableSample(const SpeedSample& s) {
  return std::isfinite(s.cost) && std::isfinite(s.busy_seconds) && s.cost > 0 && s.busy_seconds > 0;
}

// A node's usable samples as (x, y) = (log c, log(c / t)).
std::vector<std::pair<double, double>> LogSamples(const std::vector<SpeedSample>& samples) {
  std::vector<std::pair<double, double>> logs;
  for (const SpeedSample& s : samples) {
    if (UsableSample(s)) logs.emplace_back(std::log(s.cost), std::log(s.cost / s.busy_seconds));
  }
  return logs;
}

// At most this many of a node's samples, evenly spread, give the slope its
// pairs (a node keeps up to 1,024 samples: half a million pairs).
constexpr size_t kMaxSlopeSamples = 256;

// Costs at least 2x apart make a pair (less a rounding's worth: 2 and 4
// are 2x apart).
const double kMinPairSpan = std::log(2.0) - 1e-9;

}  // namespace

namespace {

// The slope, each node's vote (NaN: none) and the sizes it was measured
// over: [low, high] of log c over the samples of the nodes that voted
// (empty, low > high, without a slope).
struct SlopeFit {
  double slope = 0;
  std::vector<double> votes;
  double low = 1;
  double high = 0;
};

// How surely the slope is known when it brings `node` to the others: the
// robust spread of the other nodes' votes (1.4826 times their median
// distance from their median). Its own vote aside: a board throttled
// mid-job votes oddly and would widen its own band. With fewer than two
// other votes the slope is not known at all: kSizeSlopeDoubt.
double SlopeDoubt(const SlopeFit& fit, size_t node) {
  std::vector<double> others;
  for (size_t i = 0; i < fit.votes.size(); ++i) {
    if (i != node && !std::isnan(fit.votes[i])) others.push_back(fit.votes[i]);
  }
  if (others.size() < 2) return kSizeSlopeDoubt;
  const double center = Median(others);
  for (double& vote : others) vote = std::fabs(vote - center);
  return 1.4826 * Median(std::move(others));
}

SlopeFit FitSizeSlope(const std::vector<std::vector<SpeedSample>>& per_node) {
  std::vector<double> node_slopes;
  SlopeFit fit{0, std::vector<double>(per_node.size(), NAN), HUGE_VAL, -HUGE_VAL};
  size_t node = 0;
  for (; node < per_node.size(); ++node) {
    const std::vector<std::pair<double, double>> all = LogSamples(per_node[node]);
    const size_t stride = all.size() / kMaxSlopeSamples + 1;
    std::vector<std::pair<double, double>> logs;
    for (size_t k = 0; k < all.size(); k += stride) logs.push_back(all[k]);
    std::vector<double> slopes;
    for (size_t k = 0; k < logs.size(); ++k) {
      for (size_t l = k + 1; l < logs.size(); ++l) {
        const double dx = logs[k].first - logs[l].first;
        if (std::fabs(dx) >= kMinPairSpan) slopes.push_back((logs[k].second - logs[l].second) / dx);
      }
    }
    if (slopes.size() < kMinSlopePairs) continue;
    fit.votes[node] = std::clamp(Median(std::move(slopes)), -kMaxSizeSlope, kMaxSizeSlope);
    node_slopes.push_back(fit.votes[node]);
    for (const auto& [x, y] : all) fit.low = std::min(fit.low, x), fit.high = std::max(fit.high, x);
  }
  if (node_slopes.size() < 2) return {0, fit.votes, HUGE_VAL, -HUGE_VAL};
  // Each node one vote; of an even count's middle two, the one nearer 0 (0
  // when they differ in sign): two nodes, one throttled mid-job, give none.
  std::sort(node_slopes.begin(), node_slopes.end());
  const size_t n = node_slopes.size();
  double slope = node_slopes[n / 2];
  if (n % 2 == 0) {
    const double low = node_slopes[n / 2 - 1];
    slope = low * slope <= 0 ? 0 : (std::fabs(low) < std::fabs(slope) ? low : slope);
  }
  fit.slope = slope;
  return fit;
}

}  // namespace

double SizeSlope(const std::vector<std::vector<SpeedSample>>& per_node) {
  return FitSizeSlope(per_node).slope;
}

double CostScatter(const std::vector<std::vector<SpeedSample>>& per_node, double slope) {
  std::vector<double> deviations;  // |r_k|
  size_t nodes = 0;
  for (const std::vector<SpeedSample>& samples : per_node) {
    std::vector<double> levels;  // y - slope * x
    for (const auto& [x, y] : LogSamples(samples)) levels.push_back(y - slope * x);
    if (levels.size() < 2) continue;
    ++nodes;
    const double center = Median(levels);
    for (double level : levels) deviations.push_back(std::fabs(level - center));
  }
  if (deviations.size() < kMinScatterSamples) return 0;
  // Each node's centre is taken from its own samples, which makes them look
  // closer to it than they are: one degree of freedom a node.
  const double n = static_cast<double>(deviations.size());
  return 1.4826 * Median(std::move(deviations)) * std::sqrt(n / (n - nodes));
}

std::vector<NodeMeasurementNoise> MeasurementNoise(
    const std::vector<std::vector<SpeedSample>>& per_node) {
  const SlopeFit fit = FitSizeSlope(per_node);
  const double slope = fit.slope;
  const double sigma = CostScatter(per_node, slope);
  // A speed is a ratio of sums, not of logs: an item's cost factor of log
  // spread sigma has a relative variance of exp(sigma^2) - 1 (log-normal).
  const double relative = std::expm1(std::min(sigma * sigma, 50.0));
  struct Sums {
    double cost = 0;      // sum c
    double squares = 0;   // sum c^2
    double at_slope = 0;  // sum c^(1 - slope)
    double log_size = 0;  // sum c log c
  };
  std::vector<Sums> sums(per_node.size());
  Sums job;
  for (size_t i = 0; i < per_node.size(); ++i) {
    for (const SpeedSample& s : per_node[i]) {
      if (!UsableSample(s)) continue;
      sums[i].cost += s.cost;
      sums[i].squares += s.cost * s.cost;
      sums[i].at_slope += std::pow(s.cost, 1 - slope);
      sums[i].log_size += s.cost * std::log(s.cost);
    }
    job.cost += sums[i].cost;
    job.log_size += sums[i].log_size;
  }
  std::vector<NodeMeasurementNoise> out(per_node.size());
  std::vector<bool> measured(per_node.size(), false);
  double log_factors = 0;  // summed over the measured nodes
  for (size_t i = 0; i < per_node.size(); ++i) {
    const Sums& node = sums[i];
    if (node.cost <= 0) continue;
    // How far the node's item sizes lie from the other nodes': its speed is
    // brought to theirs by a slope known only as surely as they agree on it.
    // Outside the sizes the slope was measured over, it may be anything it
    // is held to.
    const double size = node.log_size / node.cost;
    const double others = job.cost - node.cost;
    const double apart = others > 0 ? std::fabs(size - (job.log_size - node.log_size) / others) : 0;
    const double outside =
        fit.low > fit.high ? 0 : std::max({0.0, size - fit.high, fit.low - size});
    out[i].log_variance = relative * node.squares / (node.cost * node.cost);
    out[i].size_variance =
        std::pow(SlopeDoubt(fit, i) * apart, 2) + std::pow(kSizeSlopeDoubt * outside, 2);
    out[i].speed_factor = node.at_slope / node.cost;
    log_factors += std::log(out[i].speed_factor);
    measured[i] = true;
  }
  // c_0^slope: the factors' geometric mean 1.
  const auto count = static_cast<double>(std::count(measured.begin(), measured.end(), true));
  if (count == 0) return out;
  const double scale = std::exp(-log_factors / count);
  for (size_t i = 0; i < out.size(); ++i) {
    if (measured[i]) out[i].speed_factor *= scale;
  }
  return out;
}

void AddSpeedSample(std::vector<SpeedSample>& samples, SpeedSample sample, size_t cap) {
  if (!UsableSample(sample)) return;
  if (!samples.empty() && samples.size() >= std::max<size_t>(1, cap)) {
    samples.back().cost += sample.cost;
    samples.back().busy_seconds += sample.busy_seconds;
    return;
  }
  samples.push_back(sample);
}

}  // namespace ballast::health
