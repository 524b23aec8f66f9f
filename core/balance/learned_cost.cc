#include "core/balance/learned_cost.h"

#include <algorithm>
#include <cmath>

namespace ballast::balance {
namespace {

// The median absolute deviation's factor to a normal standard deviation.
constexpr double kMadToSigma = 1.4826;

bool Usable(const CostSample& s) {
  return s.items > 0 && s.declared > 0 && std::isfinite(s.declared) && s.seconds > 0 &&
         std::isfinite(s.seconds);
}

// The samples as the fit reads them: each with its worker's dense index.
struct Point {
  size_t group = 0;
  double n = 0;  // items
  double c = 0;  // declared cost
  double t = 0;  // seconds
};

double Median(std::vector<double> values) {
  if (values.empty()) return 0;
  const auto mid = values.begin() + static_cast<std::ptrdiff_t>(values.size() / 2);
  std::nth_element(values.begin(), mid, values.end());
  return *mid;
}

// The fit's state: the start cost, each worker's seconds per cost unit and
// each point's Huber weight.
struct State {
  double a = 0;
  std::vector<double> s;  // per group
  std::vector<double> h;  // per point
};

// Each worker's seconds per cost unit at the state's a and weights: the
// weighted least squares answer for weights h / x, Σ h t / Σ h x.
void FitScales(const std::vector<Point>& points, State& state) {
  std::vector<double> num(state.s.size(), 0.0);
  std::vector<double> den(state.s.size(), 0.0);
  for (size_t i = 0; i < points.size(); ++i) {
    const Point& p = points[i];
    num[p.group] += state.h[i] * p.t;
    den[p.group] += state.h[i] * (state.a * p.n + p.c);
  }
  for (size_t g = 0; g < state.s.size(); ++g) {
    state.s[g] = den[g] > 0 && num[g] > 0 ? num[g] / den[g] : state.s[g];
  }
}

// The residuals scaled to unit variance but for the common factor sigma:
// (t - s x) / (s sqrt(x)).
std::vector<double> ScaledResiduals(const std::vector<Point>& points, const State& state) {
  std::vector<double> r(points.size());
  for (size_t i = 0; i < points.size(); ++i) {
    const Point& p = points[i];
    const double x = state.a * p.n + p.c;
    const double s = state.s[p.group];
    r[i] = (p.t - s * x) / (s * std::sqrt(x));
  }
  return r;
}

// One Gauss–Newton step for a with every s_g profiled out: returns the step
// and sets `variance` to the step's variance by the sandwich (Σ (W z e)² /
// (Σ W z²)²), which holds whatever the residuals' true spread per point (a
// sample holding one huge item scatters more than its cost says); infinite
// when the samples hold no information on a.
double StartCostStep(const std::vector<Point>& points, const State& state, double& variance) {
  const size_t groups = state.s.size();
  std::vector<double> xx(groups, 0.0), xn(groups, 0.0), xe(groups, 0.0);
  std::vector<double> w(points.size()), x(points.size()), e(points.size());
  for (size_t i = 0; i < points.size(); ++i) {
    const Point& p = points[i];
    const double s = state.s[p.group];
    x[i] = state.a * p.n + p.c;
    e[i] = p.t - s * x[i];
    w[i] = state.h[i] / (s * s * x[i]);
    xx[p.group] += w[i] * x[i] * x[i];
    xn[p.group] += w[i] * x[i] * s * p.n;
    xe[p.group] += w[i] * x[i] * e[i];
  }
  double zz = 0, ze = 0, meat = 0, nn = 0;
  for (size_t i = 0; i < points.size(); ++i) {
    const Point& p = points[i];
    if (!(xx[p.group] > 0)) continue;
    const double z = state.s[p.group] * p.n - x[i] * xn[p.group] / xx[p.group];
    const double profiled = e[i] - x[i] * xe[p.group] / xx[p.group];
    zz += w[i] * z * z;
    nn += w[i] * (state.s[p.group] * p.n) * (state.s[p.group] * p.n);
    ze += w[i] * z * profiled;
    meat += (w[i] * z * profiled) * (w[i] * z * profiled);
  }
  // What is left of n once each worker's scale is profiled out: a
  // billionth of n itself is rounding, not spread.
  if (!(zz > 1e-9 * nn)) {
    variance = std::numeric_limits<double>::infinity();
    return 0.0;
  }
  variance = meat / (zz * zz);
  return ze / zz;
}

}  // namespace

StartCostFit FitStartCost(std::span<const CostSample> samples, const StartCostFitOptions& options) {
  StartCostFit fit;
  std::vector<uint32_t> workers;
  for (const CostSample& s : samples) {
    if (Usable(s)) workers.push_back(s.worker);
  }
  std::sort(workers.begin(), workers.end());
  workers.erase(std::unique(workers.begin(), workers.end()), workers.end());
  std::vector<Point> points;
  for (const CostSample& s : samples) {
    if (!Usable(s)) continue;
    const auto group = static_cast<size_t>(
        std::lower_bound(workers.begin(), workers.end(), s.worker) - workers.begin());
    points.push_back({group, static_cast<double>(s.items), s.declared, s.seconds});
  }
  fit.samples = points.size();
  // One scale per worker and the start cost: fewer points leave nothing to judge them by.
  if (points.size() < std::max(options.min_samples, workers.size() + 2)) return fit;

  State state;
  state.s.assign(workers.size(), 1.0);
  state.h.assign(points.size(), 1.0);
  double variance = 0;
  double sigma = 0;
  for (int iteration = 0; iteration < options.iterations; ++iteration) {
    FitScales(points, state);
    const std::vector<double> r = ScaledResiduals(points, state);
    std::vector<double> magnitudes(r.size());
    std::transform(r.begin(), r.end(), magnitudes.begin(), [](double v) { return std::fabs(v); });
    sigma = kMadToSigma * Median(std::move(magnitudes));
    // Exact data (no scatter at all) leave sigma 0: every point keeps weight 1.
    const double cutoff = options.huber_k * sigma;
    for (size_t i = 0; i < r.size(); ++i) {
      state.h[i] = cutoff > 0 && std::fabs(r[i]) > cutoff ? cutoff / std::fabs(r[i]) : 1.0;
    }
    const double step = StartCostStep(points, state, variance);
    const double before = state.a;
    state.a = std::clamp(state.a + step, 0.0, options.max_start_cost);
    if (iteration >= 2 && std::fabs(state.a - before) <= 1e-12 * (1 + state.a)) break;
  }
  FitScales(points, state);
  (void)StartCostStep(points, state, variance);
  fit.estimate = state.a;
  // The sandwich is small-sample optimistic: scaled by n / (n - groups - 1).
  const double dof =
      static_cast<double>(points.size()) / static_cast<double>(points.size() - workers.size() - 1);
  fit.std_error = std::sqrt(variance * dof);
  const double lower = fit.estimate - options.z * fit.std_error;
  if (std::isfinite(lower) && lower >= options.min_start_cost) fit.start_cost = lower;
  return fit;
}

StartCostLearner::StartCostLearner(StartCostFitOptions options, size_t capacity)
    : options_(options), capacity_(std::max<size_t>(capacity, 1)) {}

void StartCostLearner::Add(const CostSample& sample) {
  if (!Usable(sample)) return;
  if (samples_.size() < capacity_) {
    samples_.push_back(sample);
  } else {
    samples_[next_] = sample;
    next_ = (next_ + 1) % capacity_;
  }
  ++since_fit_;
}

bool StartCostLearner::MaybeRefit() {
  if (samples_.size() < options_.min_samples) return false;
  const size_t due =
      std::max<size_t>(std::max<size_t>(options_.min_samples / 4, 1), samples_.size() / 8);
  if (fit_.samples > 0 && since_fit_ < due) return false;
  fit_ = FitStartCost(samples_, options_);
  since_fit_ = 0;
  return true;
}

}  // namespace ballast::balance
