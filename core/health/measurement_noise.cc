#include "core/health/measurement_noise.h"

#include <algorithm>
#include <cmath>

#include "core/common/stats.h"

namespace ballast::health {
namespace {

bool UsableSample(const SpeedSample& s) {
  return std::isfinite(s.cost) && std::isfinite(s.busy_seconds) && s.cost > 0 && s.busy_seconds > 0;
}

}  // namespace

double CostScatter(const std::vector<std::vector<SpeedSample>>& per_node) {
  std::vector<double> deviations;  // |r_k|
  size_t nodes = 0;
  for (const std::vector<SpeedSample>& samples : per_node) {
    std::vector<double> logs;
    for (const SpeedSample& s : samples) {
      if (UsableSample(s)) logs.push_back(std::log(s.cost / s.busy_seconds));
    }
    if (logs.size() < 2) continue;
    ++nodes;
    const double center = Median(logs);
    for (double log_speed : logs) deviations.push_back(std::fabs(log_speed - center));
  }
  if (deviations.size() < kMinScatterSamples) return 0;
  // Each node's centre is taken from its own samples, which makes them look
  // closer to it than they are: one degree of freedom a node.
  const double n = static_cast<double>(deviations.size());
  return 1.4826 * Median(std::move(deviations)) * std::sqrt(n / (n - nodes));
}

std::vector<double> MeasurementVariances(const std::vector<std::vector<SpeedSample>>& per_node) {
  const double sigma = CostScatter(per_node);
  // A speed is a ratio of sums, not of logs: an item's cost factor of log
  // spread sigma has a relative variance of exp(sigma^2) - 1 (log-normal).
  const double relative = std::expm1(std::min(sigma * sigma, 50.0));
  std::vector<double> out;
  out.reserve(per_node.size());
  for (const std::vector<SpeedSample>& samples : per_node) {
    double sum = 0;
    double squares = 0;
    for (const SpeedSample& s : samples) {
      if (!UsableSample(s)) continue;
      sum += s.cost;
      squares += s.cost * s.cost;
    }
    out.push_back(sum > 0 ? relative * squares / (sum * sum) : 0);
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
