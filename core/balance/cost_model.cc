#include "core/balance/cost_model.h"

#include <algorithm>
#include <cmath>
#include <iterator>

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

namespace {

// The tolerance of Advance and Retreat in cost units (an item of mean cost is 1).
constexpr double kTolerance = 1e-9;

// Prefix sums of `costs` scaled so that they add up to costs.size() (to
// rounding): each cost is first divided by the largest, so no sum overflows
// whatever the costs.
std::vector<double> NormalisedPrefix(const std::vector<double>& costs) {
  std::vector<double> prefix(costs.size() + 1, 0.0);
  if (costs.empty()) return prefix;
  const double largest = *std::max_element(costs.begin(), costs.end());
  for (size_t i = 0; i < costs.size(); ++i) prefix[i + 1] = prefix[i] + costs[i] / largest;
  // The largest item contributes 1, so the total is at least 1.
  const double scale = static_cast<double>(costs.size()) / prefix.back();
  for (double& sum : prefix) sum *= scale;
  return prefix;
}

// The prefix sums of the squares of the items' costs that `prefix` sums.
std::vector<double> SquaresPrefix(const std::vector<double>& prefix) {
  std::vector<double> squares(prefix.size(), 0.0);
  for (size_t i = 1; i < prefix.size(); ++i) {
    const double cost = prefix[i] - prefix[i - 1];
    squares[i] = squares[i - 1] + cost * cost;
  }
  return squares;
}

}  // namespace

CostModel::CostModel(uint64_t items, CostShape shape) : items_(items), shape_(shape) {
  exponent_ = shape == CostShape::kLinear ? 2.0 : shape == CostShape::kSqrt ? 1.5 : 1.0;
}

CostModel::CostModel(ItemCosts item_costs)
    : items_(item_costs->size()),
      prefix_(std::make_shared<const std::vector<double>>(NormalisedPrefix(*item_costs))),
      squares_(std::make_shared<const std::vector<double>>(SquaresPrefix(*prefix_))) {}

CostModel::CostModel(uint64_t items, CostShape shape, ItemCosts item_costs)
    : CostModel(item_costs ? CostModel(std::move(item_costs)) : CostModel(items, shape)) {}

CostModel CostModel::WithStartCost(double start_cost) const {
  CostModel model = *this;
  model.start_cost_ = std::isfinite(start_cost) && start_cost > 0 ? start_cost : 0.0;
  return model;
}

double CostModel::Cumulative(uint64_t i) const {
  if (items_ == 0) return 0;
  i = std::min(i, items_);
  const double start = start_cost_ > 0 ? start_cost_ * static_cast<double>(i) : 0.0;
  if (prefix_) return (*prefix_)[i] + start;
  const double n = static_cast<double>(items_);
  const double x = static_cast<double>(i) / n;
  if (shape_ == CostShape::kUniform) return x * n + start;
  return n * std::pow(x, exponent_) + start;
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
  if (start_cost_ > 0) return AdvanceBySearch(from, limit, cost);
  if (prefix_) return AdvanceOverPrefix(from, limit, cost);
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
  if (start_cost_ > 0) return RetreatBySearch(to, limit, cost);
  if (prefix_) return RetreatOverPrefix(to, limit, cost);
  const double target = Cumulative(to) - cost;
  auto b = static_cast<uint64_t>(std::ceil(InverseCumulative(target) - 1e-9));
  b = std::clamp(b, limit, to);
  while (b > limit && Cumulative(b - 1) >= target - 1e-9) --b;
  while (b < to && Cumulative(b) < target - 1e-9) ++b;
  return b;
}

// Cost([from, e)) = prefix[e] - prefix[from] grows with e (the sums never
// decrease, and subtracting one number keeps their order), so the first e
// past the cost bounds the answer. `from` itself always qualifies.
uint64_t CostModel::AdvanceOverPrefix(uint64_t from, uint64_t limit, double cost) const {
  const std::vector<double>& prefix = *prefix_;
  const double base = prefix[from];
  const double reach = cost + kTolerance;
  const auto first = prefix.begin() + static_cast<std::ptrdiff_t>(from) + 1;
  const auto last = prefix.begin() + static_cast<std::ptrdiff_t>(limit) + 1;
  const auto past = std::upper_bound(
      first, last, reach, [base](double wanted, double sum) { return wanted < sum - base; });
  return static_cast<uint64_t>(std::distance(prefix.begin(), past)) - 1;
}

// Cost([b, to)) = prefix[to] - prefix[b] shrinks as b grows; `to` itself
// always qualifies.
uint64_t CostModel::RetreatOverPrefix(uint64_t to, uint64_t limit, double cost) const {
  const std::vector<double>& prefix = *prefix_;
  const double top = prefix[to];
  const double reach = cost + kTolerance;
  const auto first = prefix.begin() + static_cast<std::ptrdiff_t>(limit);
  const auto last = prefix.begin() + static_cast<std::ptrdiff_t>(to);
  const auto found = std::lower_bound(
      first, last, reach, [top](double sum, double wanted) { return top - sum > wanted; });
  return static_cast<uint64_t>(std::distance(prefix.begin(), found));
}

// Cumulative grows with its argument (every item costs more than 0), so the
// items within `cost` of `from` are a prefix of [from, limit]: bisect for its
// end. `from` itself always qualifies.
uint64_t CostModel::AdvanceBySearch(uint64_t from, uint64_t limit, double cost) const {
  const double reach = Cumulative(from) + cost + kTolerance;
  uint64_t low = from;  // qualifies
  uint64_t high = limit;
  while (low < high) {
    const uint64_t mid = low + (high - low + 1) / 2;
    if (Cumulative(mid) <= reach) {
      low = mid;
    } else {
      high = mid - 1;
    }
  }
  return low;
}

// The smallest b in [limit, to] with Cumulative(to) - Cumulative(b) <= cost;
// `to` always qualifies.
uint64_t CostModel::RetreatBySearch(uint64_t to, uint64_t limit, double cost) const {
  const double reach = Cumulative(to) - cost - kTolerance;
  uint64_t low = limit;
  uint64_t high = to;  // qualifies
  while (low < high) {
    const uint64_t mid = low + (high - low) / 2;
    if (Cumulative(mid) >= reach) {
      high = mid;
    } else {
      low = mid + 1;
    }
  }
  return high;
}

double CostModel::SquaredCost(Range range) const {
  range.end = std::min(range.end, items_);
  if (range.begin >= range.end) return 0;
  const auto n = static_cast<double>(range.end - range.begin);
  if (!squares_) {
    const double cost = Cost(range);
    return cost * cost / n;
  }
  // (c + a)^2 summed: the squares, twice a times the declared cost, n a^2.
  const double declared = (*prefix_)[range.end] - (*prefix_)[range.begin];
  const double squares = (*squares_)[range.end] - (*squares_)[range.begin];
  return squares + 2 * start_cost_ * declared + n * start_cost_ * start_cost_;
}

double CostModel::MaxItemCost() const {
  if (items_ == 0) return 0;
  if (!per_item()) return std::max(Cost({0, 1}), Cost({items_ - 1, items_}));
  double most = 0;
  for (uint64_t i = 0; i < items_; ++i) most = std::max(most, Cost({i, i + 1}));
  return most;
}

}  // namespace ballast::balance
