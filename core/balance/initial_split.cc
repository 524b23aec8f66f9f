#include "core/balance/initial_split.h"

#include <algorithm>
#include <cmath>

namespace ballast::balance {
namespace {

// How far, in log share per unit of the normal quantile, a fully credible
// bursty worker is planned short, and the share of the total speed below
// which a worker is hedged at all (HedgeFactor).
constexpr double kHedge = 0.1;
constexpr double kHedgeMaxShare = 0.1;

}  // namespace

InitialSplit SplitByPriors(const std::vector<WorkerPrior>& workers, double job_cost, bool hedge) {
  std::vector<double> shares;
  double share_sum = 0;
  for (const WorkerPrior& worker : workers) {
    shares.push_back(std::max(worker.speed, 1e-9));
    share_sum += shares.back();
  }
  InitialSplit split;
  for (const double share : shares) split.planned_cost.push_back(job_cost * share / share_sum);
  // The reserve is the hedged split; the worker's planned share (above) and
  // its predicted speed stay the prior's.
  split.reserve = shares;
  for (size_t id = 0; id < workers.size(); ++id) {
    split.reserve[id] *= HedgeFactor(workers[id], shares[id] / share_sum, hedge);
  }
  return split;
}

double HedgeFactor(const WorkerPrior& worker, double q, bool hedge) {
  const double z = std::clamp(worker.credibility, 0.0, 1.0);
  if (!hedge || !(z > 0) || !(worker.duty < 1) || !(q < kHedgeMaxShare)) return 1;
  return std::exp(z * kHedge * (1 - worker.duty) * NormalQuantile(q));
}

double NormalQuantile(double p) {
  p = std::clamp(p, 1e-12, 1 - 1e-12);
  double x = 0;
  for (int i = 0; i < 60; ++i) {
    const double density = std::exp(-0.5 * x * x) / std::sqrt(2 * M_PI);
    const double step = (0.5 * std::erfc(-x / std::sqrt(2.0)) - p) / density;
    x -= std::clamp(step, -1.0, 1.0);
    if (std::fabs(step) < 1e-13) break;
  }
  return x;
}

}  // namespace ballast::balance
