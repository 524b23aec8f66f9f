// CostModel: the declared relative cost of items, so that a split by cost (not
// by count) gives equal work to equal speeds.
//
// Item i of N costs f((i + 0.5) / N) where f has mean 1 over [0, 1]:
//   uniform  f(x) = 1           every item costs the same
//   linear   f(x) = 2x          cost grows with the index (primes by trial division)
//   sqrt     f(x) = 1.5 sqrt(x)
// Cumulative cost is closed-form, C(i) = N (i/N)^p with p = 1, 2, 1.5, so cost
// queries and inverse queries are O(1) for any N.
//
// Thread-safety: immutable after construction.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/balance/range.h"

namespace ballast::balance {

enum class CostShape { kUniform, kLinear, kSqrt };

// Parses "uniform" | "linear" | "sqrt"; nullopt otherwise.
std::optional<CostShape> ParseCostShape(std::string_view name);
const char* CostShapeName(CostShape shape);

class CostModel {
 public:
  CostModel() = default;
  CostModel(uint64_t items, CostShape shape);

  uint64_t items() const { return items_; }
  // Cost of items [0, i) in units where the whole job costs items().
  double Cumulative(uint64_t i) const;
  // Cost of a range in the same units (an item of mean cost costs 1).
  double Cost(Range range) const { return Cumulative(range.end) - Cumulative(range.begin); }
  // The largest e in [from, limit] with Cost([from, e)) <= cost; `from` for
  // a NaN cost.
  uint64_t Advance(uint64_t from, uint64_t limit, double cost) const;
  // The smallest b in [limit, to] with Cost([b, to)) <= cost: how far back from
  // `to` a range of `cost` reaches; `to` for a NaN cost.
  uint64_t Retreat(uint64_t to, uint64_t limit, double cost) const;

 private:
  // The real-valued index x with Cumulative(x) == cost.
  double InverseCumulative(double cost) const;

  uint64_t items_ = 0;
  CostShape shape_ = CostShape::kUniform;
  double exponent_ = 1.0;
};

}  // namespace ballast::balance
