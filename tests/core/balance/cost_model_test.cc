// Tests of CostModel (core/balance/cost_model.h): declared item costs — a
// shape, or one cost per item — and the forward and backward queries that
// policies split work with.
#include "core/balance/cost_model.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "tests/support/test_seed.h"

namespace ballast::balance {
namespace {

const std::vector<CostShape> kShapes = {CostShape::kUniform, CostShape::kLinear, CostShape::kSqrt};

TEST(CostShapeTest, ParsesItsOwnNamesAndNothingElse) {
  for (CostShape shape : kShapes) {
    SCOPED_TRACE(CostShapeName(shape));
    EXPECT_EQ(ParseCostShape(CostShapeName(shape)), shape);
  }
  EXPECT_EQ(std::string(CostShapeName(CostShape::kLinear)), "linear");
  EXPECT_FALSE(ParseCostShape("cubic").has_value());
  EXPECT_FALSE(ParseCostShape("").has_value());
  EXPECT_FALSE(ParseCostShape("Linear").has_value());
}

TEST(CostModelTest, WholeJobCostsItsItemCountForEveryShape) {
  for (CostShape shape : kShapes) {
    for (uint64_t items : {1ull, 2ull, 7ull, 100ull, 12345ull, 1'000'000'000'000ull}) {
      SCOPED_TRACE(std::string(CostShapeName(shape)) + " N=" + std::to_string(items));
      const CostModel model(items, shape);
      EXPECT_EQ(model.items(), items);
      EXPECT_DOUBLE_EQ(model.Cumulative(items), static_cast<double>(items));
      EXPECT_EQ(model.Cumulative(0), 0.0);
      // Beyond the end nothing more is counted.
      EXPECT_DOUBLE_EQ(model.Cumulative(items + 5), static_cast<double>(items));
      EXPECT_DOUBLE_EQ(model.Cost({0, items}), static_cast<double>(items));
    }
  }
  EXPECT_EQ(CostModel().Cumulative(10), 0.0);
}

TEST(CostModelTest, ItemCostsFollowTheDeclaredShape) {
  const uint64_t n = 1000;
  const CostModel uniform(n, CostShape::kUniform);
  const CostModel linear(n, CostShape::kLinear);
  const CostModel sqrt_model(n, CostShape::kSqrt);
  double previous_linear = 0;
  double previous_sqrt = 0;
  for (uint64_t i = 0; i < n; ++i) {
    SCOPED_TRACE("item " + std::to_string(i));
    EXPECT_NEAR(uniform.Cost({i, i + 1}), 1.0, 1e-9);
    // Linear: item i of N costs f((i + 0.5) / N) = 2 (i + 0.5) / N exactly.
    EXPECT_NEAR(linear.Cost({i, i + 1}), 2.0 * (i + 0.5) / n, 1e-9);
    // Costs grow with the index for linear and sqrt.
    EXPECT_GT(linear.Cost({i, i + 1}), previous_linear);
    EXPECT_GT(sqrt_model.Cost({i, i + 1}), previous_sqrt);
    previous_linear = linear.Cost({i, i + 1});
    previous_sqrt = sqrt_model.Cost({i, i + 1});
  }
}

// A range's squared costs: its items' costs squared and summed, in the
// model's units (the mean item costs 1), with a start cost inside each.
TEST(CostModelTest, SquaredCostSumsTheItemsSquares) {
  // Costs 1, 3, 4 of mean 8/3: in units, 3/8, 9/8, 12/8.
  const CostModel costs(std::make_shared<const std::vector<double>>(std::vector<double>{1, 3, 4}));
  EXPECT_DOUBLE_EQ(costs.SquaredCost({0, 1}), 9.0 / 64);
  EXPECT_DOUBLE_EQ(costs.SquaredCost({1, 3}), (81.0 + 144) / 64);
  EXPECT_DOUBLE_EQ(costs.SquaredCost({0, 3}), (9.0 + 81 + 144) / 64);
  EXPECT_DOUBLE_EQ(costs.SquaredCost({2, 2}), 0);
  EXPECT_DOUBLE_EQ(costs.SquaredCost({2, 9}), 144.0 / 64) << "clamped to the items";
  // One item: its cost squared, so a report of one item is one item's worth.
  EXPECT_DOUBLE_EQ(costs.SquaredCost({1, 2}), costs.Cost({1, 2}) * costs.Cost({1, 2}));
  const CostModel started = costs.WithStartCost(0.5);
  EXPECT_DOUBLE_EQ(started.SquaredCost({1, 3}),
                   (9.0 / 8 + 0.5) * (9.0 / 8 + 0.5) + (12.0 / 8 + 0.5) * (12.0 / 8 + 0.5));
  // A shape counts its range's items as equal: uniform exactly.
  EXPECT_DOUBLE_EQ(CostModel(10, CostShape::kUniform).SquaredCost({2, 6}), 4);
  const CostModel linear(10, CostShape::kLinear);
  EXPECT_DOUBLE_EQ(linear.SquaredCost({2, 6}), linear.Cost({2, 6}) * linear.Cost({2, 6}) / 4);
}

TEST(CostModelTest, LinearSecondHalfCostsThreeTimesTheFirst) {
  for (uint64_t n : {2ull, 10ull, 100ull, 1'000'000ull}) {
    SCOPED_TRACE("N=" + std::to_string(n));
    const CostModel model(n, CostShape::kLinear);
    const double first = model.Cost({0, n / 2});
    const double second = model.Cost({n / 2, n});
    EXPECT_DOUBLE_EQ(first, n / 4.0);
    EXPECT_DOUBLE_EQ(second, 3.0 * first);
  }
  // sqrt: the first quarter costs N (1/4)^1.5 = N / 8.
  EXPECT_DOUBLE_EQ(CostModel(800, CostShape::kSqrt).Cost({0, 200}), 100.0);
}

struct LimitCase {
  std::string title;
  uint64_t items;
  uint64_t from_or_to;
  uint64_t limit;
  double cost;
  uint64_t advance;  // Advance(from_or_to, limit, cost)
  uint64_t retreat;  // Retreat(from_or_to, limit, cost)
};

TEST(CostModelTest, AdvanceAndRetreatRespectTheirLimits) {
  // Uniform, so that every figure can be checked by eye.
  const std::vector<LimitCase> cases = {
      {"zero cost stays put", 100, 40, 40, 0.0, 40, 40},
      {"within limits", 100, 40, 10, 5.0, 40, 35},
      {"fractional cost rounds toward the start", 100, 40, 10, 5.7, 40, 35},
      {"huge cost stops at the limit", 100, 40, 10, 1e9, 40, 10},
      {"negative cost stays put", 100, 40, 10, -3.0, 40, 40},
  };
  for (const LimitCase& c : cases) {
    SCOPED_TRACE(c.title);
    const CostModel model(c.items, CostShape::kUniform);
    // Here the limit is below the position: Advance has nowhere to go.
    EXPECT_EQ(model.Advance(c.from_or_to, c.limit, c.cost), c.advance);
    EXPECT_EQ(model.Retreat(c.from_or_to, c.limit, c.cost), c.retreat);
  }
  const CostModel model(100, CostShape::kUniform);
  EXPECT_EQ(model.Advance(40, 90, 5.0), 45u);
  EXPECT_EQ(model.Advance(40, 90, 5.999), 45u);
  EXPECT_EQ(model.Advance(40, 90, 1e9), 90u);
  // A limit beyond the job is clamped to the job.
  EXPECT_EQ(model.Advance(40, 1000, 1e9), 100u);
  EXPECT_EQ(model.Retreat(1000, 0, 10.0), 90u);
  EXPECT_EQ(model.Retreat(60, 0, 1e9), 0u);
  EXPECT_EQ(model.Retreat(60, 70, 5.0), 60u);
}

// Brute force: the largest e in [from, limit] with Cost([from, e)) <= cost.
uint64_t BruteAdvance(const CostModel& model, uint64_t from, uint64_t limit, double cost) {
  uint64_t e = from;
  while (e < limit && model.Cost({from, e + 1}) <= cost + 1e-9) ++e;
  return e;
}

// Brute force: the smallest b in [limit, to] with Cost([b, to)) <= cost.
uint64_t BruteRetreat(const CostModel& model, uint64_t to, uint64_t limit, double cost) {
  uint64_t b = to;
  while (b > limit && model.Cost({b - 1, to}) <= cost + 1e-9) --b;
  return b;
}

TEST(CostModelTest, AdvanceAndRetreatAreInversesOnItemBoundaries) {
  for (CostShape shape : kShapes) {
    for (uint64_t items : {1ull, 2ull, 3ull, 10ull, 37ull}) {
      const CostModel model(items, shape);
      for (uint64_t a = 0; a <= items; ++a) {
        for (uint64_t b = a; b <= items; ++b) {
          SCOPED_TRACE(std::string(CostShapeName(shape)) + " N=" + std::to_string(items) + " [" +
                       std::to_string(a) + ", " + std::to_string(b) + ")");
          const double cost = model.Cost({a, b});
          // Exactly the cost of [a, b) reaches from one end to the other.
          EXPECT_EQ(model.Advance(a, items, cost), b);
          EXPECT_EQ(model.Retreat(b, 0, cost), a);
          // The limits bound the answer.
          EXPECT_EQ(model.Advance(a, b, 1e18), b);
          EXPECT_EQ(model.Retreat(b, a, 1e18), a);
        }
      }
    }
  }
}

TEST(CostModelTest, RandomQueriesMatchBruteForce) {
  const uint64_t seed = testing_support::TestSeed();
  std::cout << "RandomQueriesMatchBruteForce seed=" << seed
            << " (rerun with BALLAST_TEST_SEED=" << seed << ")\n";
  SCOPED_TRACE("seed=" + std::to_string(seed));
  std::mt19937_64 random(seed);
  for (int round = 0; round < 3000; ++round) {
    const CostShape shape = kShapes[random() % kShapes.size()];
    const uint64_t items = 1 + random() % 300;
    const CostModel model(items, shape);
    const uint64_t x = random() % (items + 1);
    const uint64_t y = random() % (items + 1);
    const double cost = std::uniform_real_distribution<double>(0, 1.2 * items)(random) *
                        (random() % 3 == 0 ? 0.05 : 1.0);
    SCOPED_TRACE(std::string(CostShapeName(shape)) + " N=" + std::to_string(items) + " x=" +
                 std::to_string(x) + " y=" + std::to_string(y) + " cost=" + std::to_string(cost));
    const uint64_t e = model.Advance(x, y, cost);
    if (x >= y) {
      EXPECT_EQ(e, x);
    } else {
      EXPECT_EQ(e, BruteAdvance(model, x, y, cost));
      // Inverse: retreating from e by the cost it covered comes back to x.
      EXPECT_EQ(model.Retreat(e, 0, model.Cost({x, e})), x);
    }
    const uint64_t b = model.Retreat(y, x, cost);
    if (x >= y) {
      EXPECT_EQ(b, y);
    } else {
      EXPECT_EQ(b, BruteRetreat(model, y, x, cost));
      EXPECT_EQ(model.Advance(b, items, model.Cost({b, y})), y);
    }
  }
}

TEST(CostModelTest, LargeJobsStayExactAtBoundaries) {
  // 10^12 items: the closed form must not lose whole items to rounding where
  // items cost more than the 1e-9 tolerance of the queries.
  const uint64_t n = 1'000'000'000'000ull;
  for (CostShape shape : kShapes) {
    SCOPED_TRACE(CostShapeName(shape));
    const CostModel model(n, shape);
    for (uint64_t a : std::vector<uint64_t>{n / 3, n / 2, n - 2}) {
      const uint64_t b = a + 1;
      const double cost = model.Cost({a, b});
      ASSERT_GT(cost, 0.0);
      EXPECT_EQ(model.Advance(a, n, cost), b) << "a=" << a;
      EXPECT_EQ(model.Advance(a, n, 0.0), a) << "a=" << a;
      EXPECT_EQ(model.Retreat(b, 0, cost), a) << "a=" << a;
    }
    // Near the start of a linear job items cost ~1e-12 each; there the
    // answer is exact in cost (within the tolerance), not in items.
    const uint64_t e = model.Advance(0, n, 0.0);
    EXPECT_LE(model.Cost({0, e}), 1e-9);
  }
}

// ---------------------------------------------------------------------------
// One cost per item.

ItemCosts Costs(std::vector<double> costs) {
  return std::make_shared<const std::vector<double>>(std::move(costs));
}

TEST(ItemCostModelTest, PrefixSumsAreTheCostsScaledToAMeanOfOne) {
  // Total 10 over 4 items: each cost is scaled by 4 / 10.
  const CostModel model(Costs({1, 2, 3, 4}));
  EXPECT_TRUE(model.per_item());
  EXPECT_EQ(model.items(), 4u);
  const std::vector<double> expected = {0, 0.4, 1.2, 2.4, 4.0};
  for (uint64_t i = 0; i < expected.size(); ++i) {
    EXPECT_NEAR(model.Cumulative(i), expected[i], 1e-12) << "i=" << i;
  }
  EXPECT_NEAR(model.Cumulative(99), 4.0, 1e-12) << "beyond the end nothing more is counted";
  EXPECT_NEAR(model.Cost({1, 3}), 2.0, 1e-12);
  EXPECT_NEAR(model.Cost({3, 4}), 1.6, 1e-12);
}

TEST(ItemCostModelTest, EqualCostsMeanTheUniformShape) {
  const CostModel costs(Costs(std::vector<double>(50, 7.5)));
  const CostModel uniform(50, CostShape::kUniform);
  for (uint64_t i = 0; i <= 50; ++i) EXPECT_NEAR(costs.Cumulative(i), uniform.Cumulative(i), 1e-9);
  EXPECT_EQ(costs.Advance(10, 50, 5.0), 15u);
  EXPECT_EQ(costs.Retreat(40, 0, 5.0), 35u);
}

TEST(ItemCostModelTest, WithoutCostsTheShapeDecides) {
  const CostModel shape(100, CostShape::kLinear, nullptr);
  EXPECT_FALSE(shape.per_item());
  EXPECT_DOUBLE_EQ(shape.Cost({0, 50}), CostModel(100, CostShape::kLinear).Cost({0, 50}));
  const CostModel costs(3, CostShape::kLinear, Costs({5, 1, 1}));
  EXPECT_TRUE(costs.per_item());
  EXPECT_NEAR(costs.Cost({0, 1}), 15.0 / 7, 1e-12);
}

TEST(ItemCostModelTest, CostsFarApartStayFiniteAndSumToTheItemCount) {
  const double most = std::numeric_limits<double>::max();
  const CostModel model(Costs({most, most, 1e-300, most, 4.9e-324}));
  EXPECT_NEAR(model.Cumulative(5), 5.0, 1e-12);
  for (uint64_t i = 0; i <= 5; ++i) EXPECT_TRUE(std::isfinite(model.Cumulative(i))) << i;
  EXPECT_NEAR(model.Cost({0, 1}), 5.0 / 3, 1e-12);
  // The tiny items cost (nearly) nothing: a zero cost takes them, and no more.
  EXPECT_EQ(model.Advance(2, 5, 0.0), 3u);
  EXPECT_EQ(model.Advance(4, 5, 0.0), 5u);
  EXPECT_EQ(model.Retreat(3, 0, 0.0), 2u);
}

TEST(ItemCostModelTest, AdvanceAndRetreatAtTheEdges) {
  // Cumulative: 0, 1, 1.5, 3.5, 4 (costs 2, 1, 4, 1 scaled by 4/8).
  const CostModel model(Costs({2, 1, 4, 1}));
  EXPECT_EQ(model.Advance(0, 4, 1.0), 1u);
  EXPECT_EQ(model.Advance(0, 4, 1.49), 1u) << "an item that does not fit is not taken";
  EXPECT_EQ(model.Advance(0, 4, 1.5), 2u);
  EXPECT_EQ(model.Advance(1, 4, 0.49), 1u);
  EXPECT_EQ(model.Advance(1, 4, 1e9), 4u);
  EXPECT_EQ(model.Advance(1, 3, 1e9), 3u) << "the limit bounds it";
  EXPECT_EQ(model.Advance(1, 1000, 1e9), 4u) << "a limit beyond the job is the job's end";
  EXPECT_EQ(model.Advance(3, 2, 1e9), 3u) << "a limit below the start: nowhere to go";
  EXPECT_EQ(model.Advance(4, 4, 1.0), 4u);
  EXPECT_EQ(model.Advance(0, 4, 0.0), 0u);
  EXPECT_EQ(model.Advance(0, 4, -1.0), 0u);
  EXPECT_EQ(model.Advance(0, 4, std::numeric_limits<double>::quiet_NaN()), 0u);
  EXPECT_EQ(model.Advance(0, 4, std::numeric_limits<double>::infinity()), 4u);

  EXPECT_EQ(model.Retreat(4, 0, 0.5), 3u);
  EXPECT_EQ(model.Retreat(4, 0, 2.49), 3u);
  EXPECT_EQ(model.Retreat(4, 0, 2.5), 2u);
  EXPECT_EQ(model.Retreat(4, 0, 1e9), 0u);
  EXPECT_EQ(model.Retreat(4, 2, 1e9), 2u) << "the limit bounds it";
  EXPECT_EQ(model.Retreat(1000, 0, 0.5), 3u) << "an end beyond the job is the job's end";
  EXPECT_EQ(model.Retreat(2, 3, 1e9), 2u) << "a limit above the end: nowhere to go";
  EXPECT_EQ(model.Retreat(0, 0, 1.0), 0u);
  EXPECT_EQ(model.Retreat(4, 0, 0.0), 4u);
  EXPECT_EQ(model.Retreat(4, 0, -1.0), 4u);
  EXPECT_EQ(model.Retreat(4, 0, std::numeric_limits<double>::quiet_NaN()), 4u);
  EXPECT_EQ(model.Retreat(4, 0, std::numeric_limits<double>::infinity()), 0u);
}

TEST(ItemCostModelTest, AdvanceAndRetreatAreInversesOnItemBoundaries) {
  const CostModel model(Costs({3, 0.5, 9, 1, 1, 40, 0.25, 2, 7, 1e-3, 5}));
  const uint64_t n = model.items();
  for (uint64_t a = 0; a <= n; ++a) {
    for (uint64_t b = a; b <= n; ++b) {
      SCOPED_TRACE("[" + std::to_string(a) + ", " + std::to_string(b) + ")");
      const double cost = model.Cost({a, b});
      EXPECT_EQ(model.Advance(a, n, cost), b);
      EXPECT_EQ(model.Retreat(b, 0, cost), a);
      EXPECT_EQ(model.Advance(a, b, 1e18), b);
      EXPECT_EQ(model.Retreat(b, a, 1e18), a);
    }
  }
}

// Costs spread over six orders of magnitude, as file sizes are.
std::vector<double> RandomCosts(std::mt19937_64& random, uint64_t items) {
  std::uniform_real_distribution<double> exponent(-3, 3);
  std::vector<double> costs(items);
  for (double& cost : costs) cost = std::pow(10.0, exponent(random));
  return costs;
}

TEST(ItemCostModelTest, RandomQueriesMatchALinearScan) {
  const uint64_t seed = testing_support::TestSeed();
  std::cout << "RandomQueriesMatchALinearScan seed=" << seed
            << " (rerun with BALLAST_TEST_SEED=" << seed << ")\n";
  SCOPED_TRACE("seed=" + std::to_string(seed));
  std::mt19937_64 random(seed);
  for (int round = 0; round < 300; ++round) {
    const uint64_t items = 1 + random() % 400;
    const std::vector<double> costs = RandomCosts(random, items);
    const CostModel model(Costs(costs));
    // The prefix sums against a plain sum of the scaled costs.
    double total = 0;
    for (double cost : costs) total += cost;
    double sum = 0;
    for (uint64_t i = 0; i < items; ++i) {
      sum += costs[i];
      ASSERT_NEAR(model.Cumulative(i + 1), sum / total * items, 1e-9 * items) << "i=" << i;
    }
    for (int query = 0; query < 20; ++query) {
      const uint64_t x = random() % (items + 1);
      const uint64_t y = random() % (items + 1);
      const double cost = std::uniform_real_distribution<double>(0, 1.2 * items)(random) *
                          (random() % 3 == 0 ? 0.01 : 1.0);
      SCOPED_TRACE("round " + std::to_string(round) + " N=" + std::to_string(items) + " x=" +
                   std::to_string(x) + " y=" + std::to_string(y) + " cost=" + std::to_string(cost));
      EXPECT_EQ(model.Advance(x, y, cost), x >= y ? x : BruteAdvance(model, x, y, cost));
      EXPECT_EQ(model.Retreat(y, x, cost), x >= y ? y : BruteRetreat(model, y, x, cost));
    }
    if (::testing::Test::HasFailure()) return;
  }
}

TEST(CostModelTest, MaxItemCostIsTheCostliestItem) {
  EXPECT_DOUBLE_EQ(
      CostModel(std::make_shared<const std::vector<double>>(std::vector<double>{1, 1, 4}))
          .MaxItemCost(),
      2.0)
      << "4 of a total 6 over 3 items, in units of the mean item";
  const CostModel linear(100, CostShape::kLinear);
  EXPECT_DOUBLE_EQ(linear.MaxItemCost(), linear.Cost({99, 100}));
  EXPECT_DOUBLE_EQ(CostModel().MaxItemCost(), 0);
}

}  // namespace
}  // namespace ballast::balance
