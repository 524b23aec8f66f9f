// Tests of FinishTimes (core/balance/finish_times.h): each query against the
// same sum or search done by walking every worker, on hand-made cases and on
// random sequences of updates and queries (seed printed; BALLAST_TEST_SEED
// replays one).
#include "core/balance/finish_times.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <limits>
#include <optional>
#include <random>
#include <vector>

#include "tests/support/test_seed.h"

namespace ballast::balance {
namespace {

// The same predictions, kept in a plain vector and queried by walking it.
struct Walk {
  struct Entry {
    bool set = false;
    double finish = 0;
    double speed = 0;
  };
  std::vector<Entry> entries;

  double Remaining(double now) const {
    double sum = 0;
    for (const Entry& e : entries) {
      if (e.set && e.finish > now) sum += e.speed * (e.finish - now);
    }
    return sum;
  }
  double Spare(double now, double until) const {
    double sum = 0;
    for (const Entry& e : entries) {
      if (e.set && e.finish < until) sum += e.speed * (until - std::max(e.finish, now));
    }
    return std::max(0.0, sum);
  }
  std::optional<double> Latest(double now) const {
    std::optional<double> latest;
    for (const Entry& e : entries) {
      if (e.set && e.finish > now && (!latest || e.finish > *latest)) latest = e.finish;
    }
    return latest;
  }
  // The worker just before `worker` in (finish, worker) order, if its
  // finish is after `now`.
  std::optional<WorkerId> Preceding(WorkerId worker, double now) const {
    const auto before = [&](WorkerId a, WorkerId b) {
      return entries[a].finish != entries[b].finish ? entries[a].finish < entries[b].finish : a < b;
    };
    std::optional<WorkerId> found;
    for (WorkerId id = 0; id < entries.size(); ++id) {
      if (entries[id].set && before(id, worker) && (!found || before(*found, id))) found = id;
    }
    if (!found || entries[*found].finish <= now) return std::nullopt;
    return found;
  }
  // The worker just after `worker` in (finish, worker) order.
  std::optional<WorkerId> Following(WorkerId worker) const {
    const auto before = [&](WorkerId a, WorkerId b) {
      return entries[a].finish != entries[b].finish ? entries[a].finish < entries[b].finish : a < b;
    };
    std::optional<WorkerId> found;
    for (WorkerId id = 0; id < entries.size(); ++id) {
      if (entries[id].set && before(worker, id) && (!found || before(id, *found))) found = id;
    }
    return found;
  }
  std::optional<double> Earliest() const {
    std::optional<double> earliest;
    for (const Entry& e : entries) {
      if (e.set && (!earliest || e.finish < *earliest)) earliest = e.finish;
    }
    return earliest;
  }
};

TEST(FinishTimesTest, EmptyHasNothingLeft) {
  FinishTimes times(3);
  EXPECT_EQ(times.size(), 0u);
  EXPECT_EQ(times.RemainingCost(0), 0);
  EXPECT_EQ(times.SpareCost(0, 10), 0);
  EXPECT_FALSE(times.Latest(0));
  EXPECT_FALSE(times.Earliest());
}

TEST(FinishTimesTest, HandComputedSums) {
  FinishTimes times(3);
  times.Set(0, 10, 2);  // 2 units/s until t = 10
  times.Set(1, 4, 1);   // 1 unit/s until t = 4
  times.Set(2, 1, 5);   // idle since t = 1
  // At t = 2: 2·8 + 1·2 = 18 left; worker 2 has nothing.
  EXPECT_DOUBLE_EQ(times.RemainingCost(2), 18);
  // Until t = 6: worker 2 is free for 4 s (5·4), worker 1 from 4 to 6 (1·2).
  EXPECT_DOUBLE_EQ(times.SpareCost(2, 6), 22);
  EXPECT_EQ(times.Latest(2)->first, 0u);
  EXPECT_DOUBLE_EQ(times.Latest(2)->second, 10);
  EXPECT_FALSE(times.Latest(10));  // nobody finishes after 10
  EXPECT_EQ(times.Earliest()->first, 2u);
  times.Clear(2);
  times.Set(0, 3, 2);  // a cut lease: replaces the earlier prediction
  EXPECT_EQ(times.size(), 2u);
  EXPECT_DOUBLE_EQ(times.RemainingCost(2), 2 + 2);
  EXPECT_EQ(times.Latest(2)->first, 1u);
  EXPECT_EQ(times.Earliest()->first, 0u);
}

TEST(FinishTimesTest, FinishOfIsWhatSetStoredUntilCleared) {
  FinishTimes times(2);
  EXPECT_EQ(times.FinishOf(0), std::nullopt);
  times.Set(0, 5, 1);
  times.Set(1, std::numeric_limits<double>::infinity(), 1);
  EXPECT_EQ(times.FinishOf(0), 5.0);
  EXPECT_EQ(times.FinishOf(1), FinishTimes::kMaxFinish);  // bounded as Set says
  times.Set(0, 7, 2);
  EXPECT_EQ(times.FinishOf(0), 7.0);
  times.Clear(0);
  EXPECT_EQ(times.FinishOf(0), std::nullopt);
}

TEST(FinishTimesTest, EqualFinishTimesAreKeptApart) {
  FinishTimes times(4);
  for (WorkerId id = 0; id < 4; ++id) times.Set(id, 5, 1);
  EXPECT_DOUBLE_EQ(times.RemainingCost(1), 16);
  times.Clear(2);
  EXPECT_EQ(times.size(), 3u);
  EXPECT_DOUBLE_EQ(times.RemainingCost(1), 12);
}

// From the last to finish down, ties by worker; none at or before `now`.
// And up from the first to run out, whenever they run out.
TEST(FinishTimesTest, PrecedingAndFollowingWalkTheWorkersInFinishOrder) {
  FinishTimes times(4);
  times.Set(0, 5, 1);
  times.Set(1, 9, 1);
  times.Set(2, 7, 1);
  times.Set(3, 9, 1);
  EXPECT_EQ(times.Latest(0), std::make_pair(WorkerId{3}, 9.0));
  EXPECT_EQ(times.Preceding(3, 0), std::make_pair(WorkerId{1}, 9.0));
  EXPECT_EQ(times.Preceding(1, 0), std::make_pair(WorkerId{2}, 7.0));
  EXPECT_EQ(times.Preceding(2, 0), std::make_pair(WorkerId{0}, 5.0));
  EXPECT_FALSE(times.Preceding(0, 0));
  EXPECT_FALSE(times.Preceding(2, 6)) << "worker 0 has run out by 6";
  EXPECT_EQ(times.Earliest(), std::make_pair(WorkerId{0}, 5.0));
  EXPECT_EQ(times.Following(0), std::make_pair(WorkerId{2}, 7.0));
  EXPECT_EQ(times.Following(2), std::make_pair(WorkerId{1}, 9.0));
  EXPECT_EQ(times.Following(1), std::make_pair(WorkerId{3}, 9.0));
  EXPECT_FALSE(times.Following(3));
}

TEST(FinishTimesTest, RandomUpdatesAgreeWithWalkingEveryWorker) {
  const uint64_t seed = testing_support::TestSeed();
  std::cout << "seed " << seed << " (BALLAST_TEST_SEED replays it)\n";
  std::mt19937_64 random(seed);
  constexpr size_t kWorkers = 300;
  FinishTimes times(kWorkers);
  Walk walk;
  walk.entries.resize(kWorkers);
  std::uniform_int_distribution<WorkerId> worker(0, kWorkers - 1);
  std::uniform_real_distribution<double> unit(0, 1);
  double now = 0;
  for (int step = 0; step < 20000; ++step) {
    const WorkerId id = worker(random);
    // Mostly forward in time, sometimes back (a driver may ask about the past).
    now = std::max(0.0, now + (unit(random) < 0.9 ? 0.01 : -0.05));
    if (unit(random) < 0.15) {
      times.Clear(id);
      walk.entries[id].set = false;
    } else {
      // Some finish times repeat exactly, some lie in the past (idle workers).
      const double finish = unit(random) < 0.2 ? std::floor(now) : now + 5 * unit(random) - 1;
      const double speed = 0.1 + unit(random);
      times.Set(id, finish, speed);
      walk.entries[id] = {true, finish, speed};
    }
    ASSERT_NEAR(times.RemainingCost(now), walk.Remaining(now), 1e-7) << "step " << step;
    ASSERT_NEAR(times.SpareCost(now, now + 2), walk.Spare(now, now + 2), 1e-7) << step;
    const auto latest = times.Latest(now);
    ASSERT_EQ(latest.has_value(), walk.Latest(now).has_value()) << "step " << step;
    if (latest) {
      ASSERT_EQ(latest->second, *walk.Latest(now));
      ASSERT_EQ(walk.entries[latest->first].finish, latest->second);
    }
    if (walk.entries[id].set) {
      const auto preceding = times.Preceding(id, now);
      const auto walked = walk.Preceding(id, now);
      ASSERT_EQ(preceding.has_value(), walked.has_value()) << "step " << step;
      if (preceding) {
        ASSERT_EQ(preceding->first, *walked) << "step " << step;
      }
      const auto following = times.Following(id);
      const auto walked_on = walk.Following(id);
      ASSERT_EQ(following.has_value(), walked_on.has_value()) << "step " << step;
      if (following) {
        ASSERT_EQ(following->first, *walked_on) << "step " << step;
      }
    }
    const auto earliest = times.Earliest();
    if (earliest) {
      ASSERT_EQ(earliest->second, *walk.Earliest()) << "step " << step;
    }
  }
}

// Regression: a NaN finish time (from an infinite or NaN weight) broke the
// treap's order and linked a node to itself, so Latest() looped forever and
// Split recursed until the stack overflowed. Set now keeps every key ordered
// and every sum finite.
TEST(FinishTimesTest, NanAndInfiniteFinishOrSpeedKeepATreeNotACycle) {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  FinishTimes times(4);
  times.Set(0, nan, 1);
  times.Set(1, inf, nan);
  times.Set(2, 5, inf);
  times.Set(3, -inf, 1);
  times.Set(0, nan, 2);  // replaced in place: Clear must find it again
  EXPECT_EQ(times.size(), 4u);
  const auto latest = times.Latest(0);
  ASSERT_TRUE(latest.has_value());
  EXPECT_EQ(latest->second, FinishTimes::kMaxFinish);
  const auto earliest = times.Earliest();
  ASSERT_TRUE(earliest.has_value());
  EXPECT_EQ(earliest->first, 3u);
  EXPECT_EQ(earliest->second, -FinishTimes::kMaxFinish);
  EXPECT_TRUE(std::isfinite(times.RemainingCost(0)));
  EXPECT_TRUE(std::isfinite(times.SpareCost(0, 10)));
  for (WorkerId id = 0; id < 4; ++id) times.Clear(id);
  EXPECT_EQ(times.size(), 0u);
  EXPECT_FALSE(times.Earliest().has_value());
}

}  // namespace
}  // namespace ballast::balance
