// CostModel: the declared relative cost of items, so that a split by cost (not
// by count) gives equal work to equal speeds.
//
// A job declares its costs in one of two ways:
//  - a shape: item i of N costs f((i + 0.5) / N) where f has mean 1 over [0, 1]:
//      uniform  f(x) = 1           every item costs the same
//      linear   f(x) = 2x          cost grows with the index (primes by trial division)
//      sqrt     f(x) = 1.5 sqrt(x)
//    Cumulative cost is closed-form, C(i) = N (i/N)^p with p = 1, 2, 1.5, so
//    cost queries and inverse queries are O(1) for any N;
//  - one cost per item (bytes, seconds, any positive number): scaled so that
//    the mean item costs 1, as above, and kept as prefix sums (N + 1 doubles),
//    so cost queries are O(1) and inverse queries O(log N).
// Either way the whole job costs N, and every query below means the same.
//
// A model may add a start cost a >= 0 to every item (WithStartCost): what a
// job's items were learned to cost beyond their declared costs (a process
// started per item; balance/learned_cost.h). Then Cost([b, e)) is the
// declared cost plus a * (e - b), the job costs N (1 + a), and Advance and
// Retreat search by bisection, still O(log N). With a = 0 every answer is the
// declared model's, bit for bit.
//
// Thread-safety: immutable after construction; copies share the prefix sums.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/balance/range.h"

namespace ballast::balance {

enum class CostShape { kUniform, kLinear, kSqrt };

// Parses "uniform" | "linear" | "sqrt"; nullopt otherwise.
std::optional<CostShape> ParseCostShape(std::string_view name);
const char* CostShapeName(CostShape shape);

// The relative costs of a job's items, one per item; shared, as a job's
// description, its policy and its cost model hold the same list.
using ItemCosts = std::shared_ptr<const std::vector<double>>;

class CostModel {
 public:
  CostModel() = default;
  // Items [0, items) of the declared shape.
  CostModel(uint64_t items, CostShape shape);
  // One cost per item, items() = item_costs->size(). Requires item_costs
  // non-null and every cost positive and finite (CheckJob checks a job's).
  explicit CostModel(ItemCosts item_costs);
  // CostModel(item_costs) when item_costs is non-null (then requires
  // item_costs->size() == items), else CostModel(items, shape).
  CostModel(uint64_t items, CostShape shape, ItemCosts item_costs);

  // This model with a start cost of `start_cost` per item (in the units
  // above: an item of mean declared cost is 1) in place of its own. Requires
  // start_cost finite and >= 0 (a NaN, negative or infinite one counts as 0).
  CostModel WithStartCost(double start_cost) const;
  // The per-item start cost; 0 for a declared model.
  double start_cost() const { return start_cost_; }

  uint64_t items() const { return items_; }
  // True when built from one cost per item.
  bool per_item() const { return prefix_ != nullptr; }
  // Cost of items [0, i) in units where the whole job costs items().
  double Cumulative(uint64_t i) const;
  // Cost of a range in the same units (an item of mean cost costs 1).
  double Cost(Range range) const { return Cumulative(range.end) - Cumulative(range.begin); }
  // The sum of the squares of a range's item costs, in the same units: with
  // Cost(range), how many items' worth of independent costs the range holds
  // (Cost^2 / SquaredCost: 1 for one item, n for n equal ones). O(1): per-item
  // costs keep their squares' prefix sums; a shape counts its range's items
  // as equal (exact for uniform).
  double SquaredCost(Range range) const;
  // The cost of the costliest item (0 for no items); O(items) for per-item
  // costs, O(1) for a shape (monotone: the first or the last item).
  double MaxItemCost() const;
  // The largest e in [from, limit] with Cost([from, e)) <= cost; `from` for
  // a NaN cost.
  uint64_t Advance(uint64_t from, uint64_t limit, double cost) const;
  // The smallest b in [limit, to] with Cost([b, to)) <= cost: how far back from
  // `to` a range of `cost` reaches; `to` for a NaN cost.
  uint64_t Retreat(uint64_t to, uint64_t limit, double cost) const;

 private:
  // The real-valued index x with Cumulative(x) == cost (shapes only).
  double InverseCumulative(double cost) const;
  // Advance and Retreat over the prefix sums (per-item costs only), by
  // binary search; the arguments are already clamped and checked.
  uint64_t AdvanceOverPrefix(uint64_t from, uint64_t limit, double cost) const;
  uint64_t RetreatOverPrefix(uint64_t to, uint64_t limit, double cost) const;
  // Advance and Retreat by bisection on Cumulative (a start cost above 0).
  uint64_t AdvanceBySearch(uint64_t from, uint64_t limit, double cost) const;
  uint64_t RetreatBySearch(uint64_t to, uint64_t limit, double cost) const;

  uint64_t items_ = 0;
  CostShape shape_ = CostShape::kUniform;
  double exponent_ = 1.0;
  // Per-item costs: prefix[i] = Cumulative(i), non-decreasing; null for a shape.
  std::shared_ptr<const std::vector<double>> prefix_;
  // Per-item costs: squares[i] = the sum of the squares of items [0, i)'
  // declared costs; null for a shape.
  std::shared_ptr<const std::vector<double>> squares_;
  double start_cost_ = 0;  // added to every item's cost
};

}  // namespace ballast::balance
