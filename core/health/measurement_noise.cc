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

// A sample's squares (SpeedSample): cost^2 for one item or when not given,
// and never more (n items' squares sum to at most their cost squared).
double Squares(const SpeedSample& s) {
  const double one = s.cost * s.cost;
  return std::isfinite(s.squares) && s.squares > 0 ? std::min(s.squares, one) : one;
}

// A usable sample in logs: x = log of its items' size (squares / c), y =
// log(c / t).
struct LogSample {
  double x;
  double y;
};

std::vector<LogSample> LogSamples(const std::vector<SpeedSample>& samples) {
  std::vector<LogSample> logs;
  for (const SpeedSample& s : samples) {
    if (!UsableSample(s)) continue;
    logs.push_back({std::log(Squares(s) / s.cost), std::log(s.cost / s.busy_seconds)});
  }
  return logs;
}

// At most this many of a node's samples, evenly spread, give the slope its
// pairs (a node keeps up to 1,024 samples: half a million pairs).
constexpr size_t kMaxSlopeSamples = 256;

// Items' sizes at least 2x apart make a pair (less a rounding's worth: 2
// and 4 are 2x apart).
const double kMinPairSpan = std::log(2.0) - 1e-9;

// The slope, each node's vote (NaN: none) and the robust spread of the
// pairs' slopes it is the median of, and the sizes it was measured over:
// [low, high] of log z over the samples of the nodes that voted (empty, low
// > high, without a slope).
struct SlopeFit {
  double slope = 0;
  std::vector<double> votes;
  std::vector<double> spreads;
  std::vector<double> samples;  // how many samples gave each vote its pairs
  double low = 1;
  double high = 0;
};

// How surely the slope is known when it brings `node` to the others, from
// the other nodes' votes (its own aside: a board throttled mid-job votes
// oddly and would widen its own band):
//  - two votes or more: the larger of their robust spread (1.4826 times
//    their median distance from their median) and their median standard
//    error (a vote's pairs' spread over the square root of its samples);
//  - one: how much the slope differs from pair to pair within it, the
//    pairs' spread, held to kSizeSlopeDoubt (one node cannot show how its
//    items' slope differs from another's; the pairs show how much it
//    depends on the items: about 0 for costs that state items' costs);
//  - none: `unmeasured`, what the job's reports say of how far declared
//    costs may be off (MeasurementNoise: their scatter, held to
//    kSizeSlopeDoubt): about 0 for costs that state items' costs, so a
//    short job of many small ranges is judged as if exact (a board
//    throttled to 0.34 mid-job on the e2e bed was missed with
//    kSizeSlopeDoubt here).
double SlopeDoubt(const SlopeFit& fit, size_t node, double unmeasured = 0) {
  std::vector<size_t> voters;
  for (size_t i = 0; i < fit.votes.size(); ++i) {
    if (i != node && !std::isnan(fit.votes[i])) voters.push_back(i);
  }
  if (voters.empty()) return unmeasured;
  if (voters.size() == 1) return std::min(kSizeSlopeDoubt, fit.spreads[voters.front()]);
  std::vector<double> votes;
  std::vector<double> errors;
  for (size_t i : voters) {
    votes.push_back(fit.votes[i]);
    errors.push_back(fit.spreads[i] / std::sqrt(fit.samples[i]));
  }
  const double center = Median(votes);
  for (double& vote : votes) vote = std::fabs(vote - center);
  return std::max(Median(std::move(errors)), 1.4826 * Median(std::move(votes)));
}

SlopeFit FitSizeSlope(const std::vector<std::vector<SpeedSample>>& per_node) {
  std::vector<double> node_slopes;
  const std::vector<double> none(per_node.size(), NAN);
  SlopeFit fit{0, none, none, none, HUGE_VAL, -HUGE_VAL};
  for (size_t node = 0; node < per_node.size(); ++node) {
    const std::vector<LogSample> all = LogSamples(per_node[node]);
    const size_t stride = all.size() / kMaxSlopeSamples + 1;
    std::vector<LogSample> logs;
    for (size_t k = 0; k < all.size(); k += stride) logs.push_back(all[k]);
    std::vector<double> slopes;
    for (size_t k = 0; k < logs.size(); ++k) {
      for (size_t l = k + 1; l < logs.size(); ++l) {
        const double dx = logs[k].x - logs[l].x;
        if (std::fabs(dx) >= kMinPairSpan) slopes.push_back((logs[k].y - logs[l].y) / dx);
      }
    }
    if (slopes.size() < kMinSlopePairs) continue;
    const double vote = Median(slopes);
    fit.votes[node] = std::clamp(vote, -kMaxSizeSlope, kMaxSizeSlope);
    for (double& slope : slopes) slope = std::fabs(slope - vote);
    fit.spreads[node] = 1.4826 * Median(std::move(slopes));
    fit.samples[node] = static_cast<double>(logs.size());
    node_slopes.push_back(fit.votes[node]);
    for (const LogSample& l : all)
      fit.low = std::min(fit.low, l.x), fit.high = std::max(fit.high, l.x);
  }
  if (node_slopes.size() < 2) return {0, fit.votes, fit.spreads, fit.samples, HUGE_VAL, -HUGE_VAL};
  // Each node one vote; of an even count's middle two, the one nearer 0 (0
  // when they differ in sign): two nodes, one throttled mid-job, give none.
  std::sort(node_slopes.begin(), node_slopes.end());
  const size_t n = node_slopes.size();
  double slope = node_slopes[n / 2];
  if (n % 2 == 0) {
    const double low = node_slopes[n / 2 - 1];
    slope = low * slope <= 0 ? 0 : (std::fabs(low) < std::fabs(slope) ? low : slope);
  }
  // A slope the nodes' votes cannot tell from 0 corrects nothing: applied
  // to a board whose items lie apart from the voters', a slope of mixed
  // items (text that grows dearer per byte, noise cheaper) points either way.
  // Its doubt still widens the bands.
  fit.slope = std::fabs(slope) >= kSlopeSignificance * SlopeDoubt(fit, per_node.size()) ? slope : 0;
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
    for (const LogSample& l : LogSamples(samples)) levels.push_back(l.y - slope * l.x);
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

namespace {

// A node's samples summed (MeasurementNoise).
struct Sums {
  double cost = 0;      // sum c
  double squares = 0;   // sum c^2 (of reports: their scatter is a report's)
  double at_slope = 0;  // sum c z^-slope, z = squares / c (c^(1 - slope) for one item)
  double log_size = 0;  // sum c log z
};

// Each node's sums over its usable samples at `slope`, and in `job` the
// cost and log size of all of them together.
std::vector<Sums> NodeSums(const std::vector<std::vector<SpeedSample>>& per_node, double slope,
                           Sums* job) {
  std::vector<Sums> sums(per_node.size());
  for (size_t i = 0; i < per_node.size(); ++i) {
    for (const SpeedSample& s : per_node[i]) {
      if (!UsableSample(s)) continue;
      const double size = Squares(s) / s.cost;  // its items', as if all of one size
      sums[i].cost += s.cost;
      sums[i].squares += s.cost * s.cost;
      sums[i].at_slope += s.cost * std::pow(size, -slope);
      sums[i].log_size += s.cost * std::log(size);
    }
    job->cost += sums[i].cost;
    job->log_size += sums[i].log_size;
  }
  return sums;
}

}  // namespace

std::vector<NodeMeasurementNoise> MeasurementNoise(
    const std::vector<std::vector<SpeedSample>>& per_node) {
  const SlopeFit fit = FitSizeSlope(per_node);
  const double slope = fit.slope;
  const double sigma = CostScatter(per_node, slope);
  // Without a slope measured, how far the reports' speeds scatter bounds how
  // far a slope could move a node.
  const double unmeasured = std::min(kSizeSlopeDoubt, sigma);
  // A speed is a ratio of sums, not of logs: an item's cost factor of log
  // spread sigma has a relative variance of exp(sigma^2) - 1 (log-normal).
  const double relative = std::expm1(std::min(sigma * sigma, 50.0));
  Sums job;
  const std::vector<Sums> sums = NodeSums(per_node, slope, &job);
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
    out[i].size_variance = std::pow(SlopeDoubt(fit, i, unmeasured) * apart, 2) +
                           std::pow(kSizeSlopeDoubt * outside, 2);
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
    SpeedSample& last = samples.back();
    last.squares = Squares(last) + Squares(sample);
    last.cost += sample.cost;
    last.busy_seconds += sample.busy_seconds;
    return;
  }
  samples.push_back(sample);
}

}  // namespace ballast::health
