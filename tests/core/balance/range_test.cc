// Tests of Range and IntervalSet (core/balance/range.h): the exactly-once
// ledger every policy and the coordinator keep of finished items.
#include "core/balance/range.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "tests/support/test_seed.h"

namespace ballast::balance {
namespace {

IntervalSet SetOf(const std::vector<Range>& ranges) {
  IntervalSet set;
  for (const Range& range : ranges) set.Add(range);
  return set;
}

std::string Describe(const std::vector<Range>& ranges) {
  std::string out = "{";
  for (const Range& range : ranges) out += range.ToString() + " ";
  return out + "}";
}

TEST(RangeTest, SizeEmptyAndToString) {
  EXPECT_EQ((Range{3, 7}).size(), 4u);
  EXPECT_FALSE((Range{3, 7}).empty());
  EXPECT_EQ((Range{7, 7}).size(), 0u);
  EXPECT_TRUE((Range{7, 7}).empty());
  // An inverted range is empty, not huge.
  EXPECT_EQ((Range{9, 2}).size(), 0u);
  EXPECT_TRUE((Range{9, 2}).empty());
  EXPECT_EQ((Range{3, 7}).ToString(), "[3, 7)");
}

enum class Op { kAdd, kRemove };

struct SetCase {
  std::string title;
  std::vector<Range> before;
  Op op;
  Range range;
  uint64_t returned;  // what Add / Remove returns
  std::vector<Range> after;
};

TEST(IntervalSetTest, AddAndRemoveMergeSplitAndReturnCounts) {
  const std::vector<SetCase> cases = {
      {"add to empty", {}, Op::kAdd, {2, 5}, 3, {{2, 5}}},
      {"add empty range", {{0, 3}}, Op::kAdd, {5, 5}, 0, {{0, 3}}},
      {"add inverted range", {{0, 3}}, Op::kAdd, {5, 2}, 0, {{0, 3}}},
      {"add adjacent on the right merges", {{0, 3}}, Op::kAdd, {3, 6}, 3, {{0, 6}}},
      {"add adjacent on the left merges", {{3, 6}}, Op::kAdd, {0, 3}, 3, {{0, 6}}},
      {"add overlapping the end", {{0, 5}}, Op::kAdd, {3, 8}, 3, {{0, 8}}},
      {"add overlapping the start", {{4, 9}}, Op::kAdd, {1, 6}, 3, {{1, 9}}},
      {"add inside an existing range", {{0, 10}}, Op::kAdd, {2, 4}, 0, {{0, 10}}},
      {"add the same range again", {{2, 4}}, Op::kAdd, {2, 4}, 0, {{2, 4}}},
      {"add bridging two ranges", {{0, 2}, {4, 6}}, Op::kAdd, {2, 4}, 2, {{0, 6}}},
      {"add covering several ranges", {{1, 2}, {3, 4}, {5, 6}}, Op::kAdd, {0, 10}, 7, {{0, 10}}},
      {"add disjoint keeps both", {{0, 2}}, Op::kAdd, {5, 7}, 2, {{0, 2}, {5, 7}}},
      {"add with a gap of one item", {{0, 2}}, Op::kAdd, {3, 4}, 1, {{0, 2}, {3, 4}}},
      {"add between two, touching the left only",
       {{0, 2}, {6, 8}},
       Op::kAdd,
       {2, 4},
       2,
       {{0, 4}, {6, 8}}},
      {"add overlapping one and touching the next",
       {{0, 3}, {6, 8}},
       Op::kAdd,
       {2, 6},
       3,
       {{0, 8}}},
      {"remove from the middle splits", {{0, 10}}, Op::kRemove, {3, 5}, 2, {{0, 3}, {5, 10}}},
      {"remove the left edge", {{0, 10}}, Op::kRemove, {0, 3}, 3, {{3, 10}}},
      {"remove past the right edge", {{0, 10}}, Op::kRemove, {8, 12}, 2, {{0, 8}}},
      {"remove across several ranges",
       {{0, 2}, {4, 6}, {8, 10}},
       Op::kRemove,
       {1, 9},
       4,
       {{0, 1}, {9, 10}}},
      {"remove what is absent", {{0, 2}}, Op::kRemove, {5, 7}, 0, {{0, 2}}},
      {"remove an adjacent range removes nothing", {{0, 2}}, Op::kRemove, {2, 4}, 0, {{0, 2}}},
      {"remove the whole set", {{0, 10}}, Op::kRemove, {0, 10}, 10, {}},
      {"remove a superset", {{3, 5}, {7, 9}}, Op::kRemove, {0, 100}, 4, {}},
      {"remove an empty range", {{0, 10}}, Op::kRemove, {4, 4}, 0, {{0, 10}}},
      {"remove a single item", {{0, 3}}, Op::kRemove, {1, 2}, 1, {{0, 1}, {2, 3}}},
  };
  for (const SetCase& c : cases) {
    SCOPED_TRACE(c.title);
    IntervalSet set = SetOf(c.before);
    const uint64_t returned = c.op == Op::kAdd ? set.Add(c.range) : set.Remove(c.range);
    EXPECT_EQ(returned, c.returned);
    EXPECT_EQ(set.Ranges(), c.after) << Describe(set.Ranges());
    uint64_t size = 0;
    for (const Range& range : c.after) size += range.size();
    EXPECT_EQ(set.size(), size);
    EXPECT_EQ(set.empty(), size == 0);
  }
}

struct CountCase {
  std::string title;
  std::vector<Range> set;
  Range query;
  uint64_t count;
};

TEST(IntervalSetTest, CountInCountsOnlyItemsOfTheQuery) {
  const std::vector<CountCase> cases = {
      {"empty set", {}, {0, 10}, 0},
      {"empty query", {{0, 10}}, {5, 5}, 0},
      {"inverted query", {{0, 10}}, {6, 2}, 0},
      {"query inside a range", {{0, 10}}, {2, 5}, 3},
      {"query covering a range", {{3, 6}}, {0, 10}, 3},
      {"query across a gap", {{0, 2}, {4, 6}}, {1, 5}, 2},
      {"query adjacent on the left", {{5, 8}}, {2, 5}, 0},
      {"query adjacent on the right", {{5, 8}}, {8, 12}, 0},
      {"query starting inside the previous range", {{0, 4}, {6, 9}}, {3, 7}, 2},
      {"query over many ranges", {{0, 1}, {2, 3}, {4, 5}, {6, 7}}, {0, 7}, 4},
  };
  for (const CountCase& c : cases) {
    SCOPED_TRACE(c.title);
    EXPECT_EQ(SetOf(c.set).CountIn(c.query), c.count);
  }
}

TEST(IntervalSetTest, ContainsFirstLastAndFirstAtOrAfter) {
  const IntervalSet empty;
  EXPECT_FALSE(empty.Contains(0));
  EXPECT_TRUE(empty.First().empty());
  EXPECT_TRUE(empty.Last().empty());
  EXPECT_TRUE(empty.FirstAtOrAfter(0).empty());

  const IntervalSet set = SetOf({{2, 4}, {7, 9}});
  EXPECT_FALSE(set.Contains(1));
  EXPECT_TRUE(set.Contains(2));
  EXPECT_TRUE(set.Contains(3));
  EXPECT_FALSE(set.Contains(4));
  EXPECT_TRUE(set.Contains(8));
  EXPECT_FALSE(set.Contains(9));
  EXPECT_EQ(set.First(), (Range{2, 4}));
  EXPECT_EQ(set.Last(), (Range{7, 9}));
  EXPECT_EQ(set.FirstAtOrAfter(0), (Range{2, 4}));
  // Inside a range: the rest of that range from the item on.
  EXPECT_EQ(set.FirstAtOrAfter(3), (Range{3, 4}));
  // At the end of a range (half-open): the next range.
  EXPECT_EQ(set.FirstAtOrAfter(4), (Range{7, 9}));
  EXPECT_EQ(set.FirstAtOrAfter(7), (Range{7, 9}));
  EXPECT_TRUE(set.FirstAtOrAfter(9).empty());

  const IntervalSet single(Range{5, 6});
  EXPECT_EQ(single.size(), 1u);
  EXPECT_EQ(single.Ranges(), (std::vector<Range>{{5, 6}}));
}

// The seed of a randomized test: $BALLAST_TEST_SEED when set, else a fresh one.
// Checks the set against the model: same items, same size, and stored as
// disjoint, non-adjacent ranges in ascending order.
void ExpectMatchesModel(const IntervalSet& set, const std::vector<bool>& model) {
  std::vector<Range> expected;
  for (uint64_t i = 0; i < model.size(); ++i) {
    if (!model[i]) continue;
    if (!expected.empty() && expected.back().end == i) {
      expected.back().end = i + 1;
    } else {
      expected.push_back({i, i + 1});
    }
  }
  ASSERT_EQ(set.Ranges(), expected) << Describe(set.Ranges()) << " vs " << Describe(expected);
  uint64_t size = 0;
  for (bool in : model) size += in ? 1 : 0;
  ASSERT_EQ(set.size(), size);
}

TEST(IntervalSetTest, RandomOperationsMatchABitVector) {
  const uint64_t seed = testing_support::TestSeed();
  std::cout << "RandomOperationsMatchABitVector seed=" << seed
            << " (rerun with BALLAST_TEST_SEED=" << seed << ")\n";
  SCOPED_TRACE("seed=" + std::to_string(seed));
  std::mt19937_64 random(seed);
  constexpr uint64_t kUniverse = 64;
  for (int round = 0; round < 50; ++round) {
    IntervalSet set;
    std::vector<bool> model(kUniverse + 8, false);
    for (int step = 0; step < 200; ++step) {
      const uint64_t a = random() % (kUniverse + 1);
      const uint64_t b = random() % (kUniverse + 1);
      // Mostly short ranges so that merging and splitting happen often;
      // sometimes inverted ones.
      Range range{a, random() % 4 == 0 ? b : std::min(kUniverse, a + random() % 6)};
      const bool add = random() % 2 == 0;
      uint64_t expected = 0;
      for (uint64_t i = range.begin; i < range.end; ++i) {
        if (model[i] != add) ++expected;
        model[i] = add;
      }
      const uint64_t returned = add ? set.Add(range) : set.Remove(range);
      ASSERT_EQ(returned, expected) << (add ? "Add " : "Remove ") << range.ToString() << " round "
                                    << round << " step " << step;
      ExpectMatchesModel(set, model);
      // Queries against the model.
      const Range query{random() % (kUniverse + 1), random() % (kUniverse + 1)};
      uint64_t in = 0;
      for (uint64_t i = query.begin; i < query.end; ++i) in += model[i] ? 1 : 0;
      ASSERT_EQ(set.CountIn(query), in) << "CountIn " << query.ToString();
      const uint64_t item = random() % (kUniverse + 2);
      ASSERT_EQ(set.Contains(item), static_cast<bool>(model[item])) << "Contains " << item;
      uint64_t next = item;
      while (next < model.size() && !model[next]) ++next;
      const Range found = set.FirstAtOrAfter(item);
      if (next == model.size()) {
        ASSERT_TRUE(found.empty()) << "FirstAtOrAfter " << item << " " << found.ToString();
      } else {
        uint64_t end = next;
        while (end < model.size() && model[end]) ++end;
        ASSERT_EQ(found, (Range{next, end})) << "FirstAtOrAfter " << item;
      }
    }
  }
}

}  // namespace
}  // namespace ballast::balance
