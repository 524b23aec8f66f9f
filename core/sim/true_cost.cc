#include "core/sim/true_cost.h"

#include <algorithm>
#include <cmath>
#include <random>

namespace ballast::sim {

TrueCost::TrueCost(uint64_t items, balance::CostShape shape, double jitter, uint64_t seed)
    : TrueCost(balance::CostModel(items, shape), jitter, seed) {}

TrueCost::TrueCost(balance::CostModel base, double jitter, uint64_t seed,
                   const std::vector<size_t>& dealt, double start_cost,
                   const std::vector<std::pair<uint64_t, double>>& replaced)
    : model_(base.WithStartCost(start_cost)) {
  if (jitter <= 0 && replaced.empty()) return;
  const uint64_t items = model_.items();
  std::mt19937_64 random(seed);
  std::uniform_real_distribution<double> factor(1 - jitter, 1 + jitter);
  auto draw = [&] { return jitter > 0 ? factor(random) : 1.0; };
  // Each listed item's factor, in list order (only when dealt: a job of
  // item costs has at most a hundred thousand items).
  std::vector<double> listed;
  if (dealt.size() == items) {
    listed.resize(items);
    for (double& f : listed) f = draw();
  }
  // Where each replaced item is dealt: the position that lists it.
  std::vector<std::pair<uint64_t, double>> at;
  for (const auto& [item, cost] : replaced) {
    uint64_t position = item;
    if (dealt.size() == items) {
      position = static_cast<uint64_t>(std::find(dealt.begin(), dealt.end(), item) - dealt.begin());
    }
    if (position < items) at.emplace_back(position, cost);
  }
  std::ranges::sort(at);
  auto next = at.begin();
  prefix_.resize(items + 1);
  prefix_[0] = 0;
  for (uint64_t i = 0; i < items; ++i) {
    const double f = listed.empty() ? draw() : listed[dealt[i]];
    double cost = base.Cost({i, i + 1}) * f + model_.start_cost();
    if (next != at.end() && next->first == i) cost = (next++)->second;
    prefix_[i + 1] = prefix_[i] + cost;
  }
}

double TrueCost::Cumulative(uint64_t i) const {
  if (prefix_.empty()) return model_.Cumulative(i);
  return prefix_[std::min<uint64_t>(i, prefix_.size() - 1)];
}

uint64_t TrueCost::Advance(uint64_t from, uint64_t limit, double cost) const {
  if (prefix_.empty()) return model_.Advance(from, limit, cost);
  limit = std::min<uint64_t>(limit, prefix_.size() - 1);
  if (from >= limit) return from;
  const double target = prefix_[from] + cost + 1e-12;
  auto it = std::upper_bound(prefix_.begin() + from, prefix_.begin() + limit + 1, target);
  return static_cast<uint64_t>(std::distance(prefix_.begin(), it)) - 1;
}

double TrueCost::MaxItem() const {
  const uint64_t n = model_.items();
  if (n == 0) return 0;
  if (prefix_.empty() && !model_.per_item()) {
    // The shapes are monotone: the costliest item is the first or the last.
    return std::max(model_.Cost({0, 1}), model_.Cost({n - 1, n}));
  }
  double most = 0;
  for (uint64_t i = 0; i < n; ++i) most = std::max(most, Cost({i, i + 1}));
  return most;
}

std::vector<double> ParetoCosts(uint64_t items, double alpha, double minimum, uint64_t seed) {
  std::mt19937_64 random(seed);
  std::vector<double> costs(items);
  for (double& cost : costs) {
    // U in (0, 1]: never 0, so every cost is finite.
    const double u = static_cast<double>((random() >> 11) + 1) * 0x1.0p-53;
    cost = minimum / std::pow(u, 1.0 / alpha);
  }
  return costs;
}

}  // namespace ballast::sim
