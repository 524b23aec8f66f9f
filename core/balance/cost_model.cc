#include "core/balance/cost_model.h"

#include <algorithm>
#include <cmath>

namespace ballast::balance {

std::optional<CostShape> ParseCostShape(std::string_view name) {
  if (name == "uniform") return CostShape::kUniform;
  if (name == "linear") return CostShape::kLinear;
  if (name == "sqrt") return CostShape::kSqrt;
  return std::nullopt;
}

const char* CostShapeName(CostShape shape) {
  switch (shape) {
    case CostShape::kUniform:
      return "uniform";
    case CostShape::kLinear:
      return "linear";
    case CostShape::kSqrt:
      return "sqrt";
  }
  return "uniform";
}

CostModel::CostModel(uint64_t items, CostShape shape) : items_(items), shape_(shape) {
  exponent_ = shape == CostShape::kLinear ? 2.0 : shape == CostShape::kSqrt ? 1.5 : 1.0;
}

double CostModel::Cumulative(uint64_t i) const {
  if (items_ == 0) return 0;
  const double n = static_cast<double>(items_);
  const double x = static_cast<double>(std::min(i, items_)) / n;
  if (shape_ == CostShape::kUniform) return x * n;
  return n * std::pow(x, exponent_);
}

double CostModel::InverseCumulative(double cost) const {
  const double n = static_cast<double>(items_);
  if (cost <= 0) return 0;
  if (cost >= n) return n;
  if (shape_ == CostShape::kUniform) return cost;
  return n * std::pow(cost / n, 1.0 / exponent_);
}

// The correction loops below take a step or two: the estimate is off by
// floating-point error only, because item numbers stay below 2^53 (kMaxItems
// of policy.h) and a NaN cost never reaches the estimate.
uint64_t CostModel::Advance(uint64_t from, uint64_t limit, double cost) const {
  limit = std::min(limit, items_);
  if (from >= limit || std::isnan(cost)) return from;
  const double target = Cumulative(from) + cost;
  auto e = static_cast<uint64_t>(std::floor(InverseCumulative(target) + 1e-9));
  e = std::clamp(e, from, limit);
  // Correct floating error at the boundaries by at most a step each way.
  while (e < limit && Cumulative(e + 1) <= target + 1e-9) ++e;
  while (e > from && Cumulative(e) > target + 1e-9) --e;
  return e;
}

uint64_t CostModel::Retreat(uint64_t to, uint64_t limit, double cost) const {
  to = std::min(to, items_);
  if (limit >= to || std::isnan(cost)) return to;
  const double target = Cumulative(to) - cost;
  auto b = static_cast<uint64_t>(std::ceil(InverseCumulative(target) - 1e-9));
  b = std::clamp(b, limit, to);
  while (b > limit && Cumulative(b - 1) >= target - 1e-9) --b;
  while (b < to && Cumulative(b) < target - 1e-9) ++b;
  return b;
}

}  // namespace ballast::balance
