// Tests of the policies given one cost per item (JobInfo::item_costs): the
// job check refuses costs that are not one positive finite number per item,
// naming the index; every policy's leases are worth what its rule asks in
// cost, not in count; and a job without costs is split as before.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/balance/policy.h"
#include "core/balance/policy_options.h"
#include "tests/support/policy_spec.h"

namespace ballast::balance {
namespace {

ItemCosts SharedCosts(std::vector<double> costs) {
  return std::make_shared<const std::vector<double>>(std::move(costs));
}

JobInfo CostlyJob(uint64_t items, const std::vector<double>& priors, ItemCosts costs) {
  JobInfo job;
  job.items = items;
  for (size_t i = 0; i < priors.size(); ++i) {
    job.workers.push_back({"w" + std::to_string(i), priors[i]});
  }
  job.item_costs = std::move(costs);
  return job;
}

// ---------------------------------------------------------------------------
// CheckJob.

struct RefusalCase {
  std::string title;
  uint64_t items;
  std::vector<double> costs;
  std::string says;
};

TEST(PolicyItemCostsTest, CheckJobRefusesCostsThatAreNotOnePositiveFiniteNumberPerItem) {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<RefusalCase> cases = {
      {"too few", 3, {1, 2}, "item_costs: expected one cost per item (3), got 2"},
      {"too many", 1, {1, 2}, "item_costs: expected one cost per item (1), got 2"},
      {"none at all", 2, {}, "item_costs: expected one cost per item (2), got 0"},
      {"zero", 3, {1, 0, 1}, "item_costs[1]: expected a positive finite cost, got 0"},
      {"negative", 3, {1, 1, -2}, "item_costs[2]: expected a positive finite cost, got -2"},
      {"NaN", 2, {nan, 1}, "item_costs[0]: expected a positive finite cost, got nan"},
      {"infinite", 2, {1, inf}, "item_costs[1]: expected a positive finite cost, got inf"},
      {"minus infinity", 2, {-inf, 1}, "item_costs[0]: expected a positive finite cost"},
  };
  for (const RefusalCase& c : cases) {
    SCOPED_TRACE(c.title);
    const JobInfo job = CostlyJob(c.items, {1, 1}, SharedCosts(c.costs));
    const Status checked = CheckJob(job);
    EXPECT_EQ(checked.code(), StatusCode::kInvalid);
    EXPECT_NE(checked.message().find(c.says), std::string::npos) << checked.message();
    for (const std::string& name : PolicyNames()) {
      const Status started = MakePolicy(testing_support::PolicyNamed(name))->Start(job, 0);
      EXPECT_EQ(started.message(), checked.message()) << name;
    }
  }
  EXPECT_TRUE(CheckJob(CostlyJob(3, {1}, SharedCosts({1e-300, 1, 1e300}))).ok());
  EXPECT_TRUE(CheckJob(CostlyJob(3, {1}, nullptr)).ok()) << "no costs: the shape decides";
}

// ---------------------------------------------------------------------------
// Leases by cost.

// Costs that grow 54-fold along the job (1.01^i): an equal count of items
// from its start costs a twentieth of as many from its end.
std::vector<double> Growing(uint64_t items) {
  std::vector<double> costs(items);
  for (uint64_t i = 0; i < items; ++i) costs[i] = std::pow(1.01, static_cast<double>(i));
  return costs;
}

struct LeaseCase {
  std::string policy;
  std::map<std::string, std::string> options;
  std::vector<double> priors;
  // The cost of each worker's first lease, asked in worker order, in units
  // where the job costs N (an item of mean cost is 1).
  std::vector<double> expected;
};

// The first lease of each worker, asked in order at time 0.
std::vector<Range> FirstLeases(const LeaseCase& c, const JobInfo& job) {
  auto policy = MakePolicy(testing_support::PolicyNamed(c.policy, c.options));
  const Status started = policy->Start(job, 0);
  EXPECT_TRUE(started.ok()) << started.ToString();
  std::vector<Range> leases;
  for (WorkerId id = 0; id < c.priors.size(); ++id) {
    const Reply reply = policy->OnReport(Report{id, 0, {}, 0, 0, true, {}});
    EXPECT_EQ(reply.kind, Reply::Kind::kLease) << "worker " << id;
    leases.push_back(reply.lease);
  }
  return leases;
}

TEST(PolicyItemCostsTest, EveryPolicysLeasesAreWorthWhatItsRuleAsksInCostNotInCount) {
  const uint64_t n = 400;
  const ItemCosts costs = SharedCosts(Growing(n));
  const CostModel truth(costs);
  double costliest = 0;
  for (uint64_t i = 0; i < n; ++i) costliest = std::max(costliest, truth.Cost({i, i + 1}));
  // guided: each lease is the remaining cost over P; factoring: a batch of P
  // leases of half of it over P.
  const double guided_2 = 300.0 / 4;
  const double guided_3 = (300.0 - guided_2) / 4;
  const std::vector<LeaseCase> cases = {
      {"equal", {}, {1, 1, 1, 1}, {100, 100, 100, 100}},
      {"equal", {}, {5, 1, 1, 1}, {100, 100, 100, 100}},
      {"weighted", {}, {2, 1, 1, 0.5}, {400 * 2 / 4.5, 400 / 4.5, 400 / 4.5, 400 * 0.5 / 4.5}},
      {"selfsched", {{"chunk", "20"}}, {1, 1, 1, 1}, {20, 20, 20, 20}},
      {"guided", {}, {1, 1, 1, 1}, {100, guided_2, guided_3, (300 - guided_2 - guided_3) / 4}},
      {"factoring", {}, {1, 1, 1, 1}, {50, 50, 50, 50}},
      {"mms", {}, {3, 1, 1, 1}, {200, 200.0 / 3, 200.0 / 3, 200.0 / 3}},
      {"adaptive", {}, {1, 1, 1, 1}, {100, 100, 100, 100}},
      {"adaptive", {}, {1, 2, 1, 4}, {50, 100, 50, 200}},
  };
  for (const LeaseCase& c : cases) {
    SCOPED_TRACE(c.policy + " priors " + std::to_string(c.priors[0]) + "/" +
                 std::to_string(c.priors[1]));
    const std::vector<Range> leases = FirstLeases(c, CostlyJob(n, c.priors, costs));
    for (size_t i = 0; i < leases.size(); ++i) {
      // Items are whole: a lease is off by less than its costliest item.
      EXPECT_NEAR(truth.Cost(leases[i]), c.expected[i], costliest)
          << "worker " << i << " lease " << leases[i].ToString();
    }
    // The same policy told no costs splits by count, and misses the costs.
    const std::vector<Range> by_count = FirstLeases(c, CostlyJob(n, c.priors, nullptr));
    double worst = 0;
    for (size_t i = 0; i < by_count.size(); ++i) {
      worst = std::max(worst, std::fabs(truth.Cost(by_count[i]) - c.expected[i]));
    }
    EXPECT_GT(worst, 4 * costliest) << "by count the leases should miss the costs by far";
  }
}

// The costs replace the shape: a job that declares linear cost and gives
// item costs is split by the item costs.
TEST(PolicyItemCostsTest, ItemCostsReplaceTheDeclaredShape) {
  JobInfo job = CostlyJob(4, {1, 1}, SharedCosts({3, 1, 1, 1}));
  job.cost = CostShape::kLinear;
  auto policy = MakePolicy(testing_support::PolicyNamed("equal"));
  ASSERT_TRUE(policy->Start(job, 0).ok());
  EXPECT_EQ(policy->OnReport(Report{0, 0, {}, 0, 0, true, {}}).lease, (Range{0, 1}));
  EXPECT_EQ(policy->OnReport(Report{1, 0, {}, 0, 0, true, {}}).lease, (Range{1, 4}));
}

// A share ends where it is nearest its cost: costs 1, 1, 5, 1, 1, 1 split
// in halves of 5 give [0, 3) (7, two over) rather than [0, 2) (2, three
// short), and the next share is short by what the first took beyond.
TEST(PolicyItemCostsTest, AShareEndsAtTheItemBoundaryNearestItsCost) {
  for (const char* name : {"equal", "weighted", "mms", "adaptive"}) {
    SCOPED_TRACE(name);
    auto policy = MakePolicy(testing_support::PolicyNamed(name));
    ASSERT_TRUE(policy->Start(CostlyJob(6, {1, 1}, SharedCosts({1, 1, 5, 1, 1, 1})), 0).ok());
    EXPECT_EQ(policy->OnReport(Report{0, 0, {}, 0, 0, true, {}}).lease, (Range{0, 3}));
    EXPECT_EQ(policy->OnReport(Report{1, 0, {}, 0, 0, true, {}}).lease, (Range{3, 6}));
  }
  // Three shares of 10 over 1, 12, 1 x 17: the giant takes the first share
  // whole and over; the second is short of it (10 - 3), the third takes the rest.
  std::vector<double> costs = {1, 12};
  costs.resize(19, 1.0);
  auto policy = MakePolicy(testing_support::PolicyNamed("equal"));
  ASSERT_TRUE(policy->Start(CostlyJob(19, {1, 1, 1}, SharedCosts(costs)), 0).ok());
  EXPECT_EQ(policy->OnReport(Report{0, 0, {}, 0, 0, true, {}}).lease, (Range{0, 2}));
  EXPECT_EQ(policy->OnReport(Report{1, 0, {}, 0, 0, true, {}}).lease, (Range{2, 9}));
  EXPECT_EQ(policy->OnReport(Report{2, 0, {}, 0, 0, true, {}}).lease, (Range{9, 19}));
}

// With per-item costs the shares are handed out fastest first, whatever the
// workers' order: dealt largest first, the three items of 10 lead the pool,
// and the slowest worker (listed first, as a cluster lists a pi3b before a
// pi4b) gets the smallest items at the back, not one of 10 it would take
// five times as long over as the others.
TEST(PolicyItemCostsTest, TheFastestWorkersShareLeadsThePoolWhateverTheWorkersOrder) {
  std::vector<double> costs = {10, 10, 10, 6, 6, 5, 3, 2};
  costs.resize(30, 1.0);
  for (const char* name : {"weighted", "mms", "adaptive"}) {
    SCOPED_TRACE(name);
    auto policy = MakePolicy(testing_support::PolicyNamed(name));
    ASSERT_TRUE(policy->Start(CostlyJob(30, {1, 5, 5}, SharedCosts(costs)), 0).ok());
    const Range slow = policy->OnReport(Report{0, 0, {}, 0, 0, true, {}}).lease;
    const Range fast = policy->OnReport(Report{1, 0, {}, 0, 0, true, {}}).lease;
    const Range next = policy->OnReport(Report{2, 0, {}, 0, 0, true, {}}).lease;
    EXPECT_EQ(fast.begin, 0u);
    EXPECT_GT(next.begin, fast.begin);
    EXPECT_GT(slow.begin, next.begin);
    EXPECT_EQ(slow.end, 30u);
  }
}

// Dealt largest first, the large items lead the pool; cut in contiguous
// shares, the first worker's share would hold them all (on real nodes: three
// archives of a tenth of the job each on one board, which ended the job
// while the others stood idle). They are spread one at a time to the worker
// they fill least, as LPT places them: each fast worker starts on one, the
// third goes to the first again (a tie), and the slow worker, whose share is
// smaller than twice any of them, gets none and keeps the smallest items.
TEST(PolicyItemCostsTest, TheLargeItemsAtThePoolsFrontAreSpreadOverTheWorkers) {
  std::vector<double> costs = {10, 10, 9, 2, 2, 2};
  costs.resize(40, 1.0);  // 69 in all
  for (const char* name : {"weighted", "mms", "adaptive"}) {
    SCOPED_TRACE(name);
    auto policy = MakePolicy(testing_support::PolicyNamed(name));
    ASSERT_TRUE(policy->Start(CostlyJob(40, {1, 5, 5}, SharedCosts(costs)), 0).ok());
    const Range slow = policy->OnReport(Report{0, 0, {}, 0, 0, true, {}}).lease;
    const Range first = policy->OnReport(Report{1, 0, {}, 0, 0, true, {}}).lease;
    const Range second = policy->OnReport(Report{2, 0, {}, 0, 0, true, {}}).lease;
    EXPECT_EQ(first, (Range{0, 1}));
    EXPECT_EQ(second, (Range{1, 2}));
    EXPECT_GE(slow.begin, 6u) << "the slow worker drew a large item";
    EXPECT_EQ(slow.end, 40u);
    // The first worker's next lease goes on from the third large item.
    const Range next = policy->OnReport(Report{1, 1, {first}, 1, first.end, true, {}}).lease;
    EXPECT_EQ(next.begin, 2u);
  }
}

// Four large items spread over the two fast workers leave each of them
// three ranges set aside ({0}, {2} and a contiguous share; {1}, {3} and the
// next). When the slow worker runs out first, mms ends its static phase
// with both fast workers not yet started: every range they had set aside
// must go back to the pool, not only the first, or the job never ends.
TEST(PolicyItemCostsTest, MmsReturnsEveryRangeSetAsideWhenItsStaticPhaseEnds) {
  std::vector<double> costs = {10, 10, 9, 9};
  costs.resize(40, 1.0);  // 74 in all
  auto policy = MakePolicy(testing_support::PolicyNamed("mms"));
  ASSERT_TRUE(policy->Start(CostlyJob(40, {1, 5, 5}, SharedCosts(costs)), 0).ok());
  const Range slow = policy->OnReport(Report{0, 0, {}, 0, 0, true, {}}).lease;
  ASSERT_GE(slow.begin, 4u) << "the slow worker drew a large item";
  // It finishes its share before the others ask: the static phase ends.
  Reply reply = policy->OnReport(Report{0, 1, {slow}, 1, slow.end, true, {}});
  IntervalSet done;
  done.Add(slow);
  // Each worker in turn finishes what it holds and asks again, until every
  // one is told the job is done (at most one lease per item and worker).
  std::vector<Range> held(3);
  held[0] = reply.kind == Reply::Kind::kLease ? reply.lease : Range{};
  for (int round = 0; round < 3 * 40 && policy->stats().completed_items < 40; ++round) {
    for (WorkerId id = 0; id < 3; ++id) {
      const Range mine = held[id];
      std::vector<Range> completed;
      if (!mine.empty()) completed.push_back(mine);
      const double now = 2 + round;
      reply = policy->OnReport(Report{id, now, completed, 1, mine.end, true, {}});
      for (const Range& range : completed) {
        EXPECT_EQ(done.CountIn(range), 0u) << "computed twice: " << range.ToString();
        done.Add(range);
      }
      held[id] = reply.kind == Reply::Kind::kLease ? reply.lease : Range{};
    }
  }
  EXPECT_EQ(policy->stats().completed_items, 40u) << "the job stalled";
  EXPECT_EQ(done.CountIn({0, 40}), 40u);
}

// Worker 1's last two items cost 1 and 4. When worker 0 runs dry at t = 7.5,
// worker 1 (a unit a second) has item 18 under way and item 19 left: a
// steal sized for both to finish together is worth about 2.6, less than
// item 19, which cannot be split. Taken whole, the thief (1.47 units a
// second) finishes it at about t = 10.4, where worker 1 would at t = 12: the
// thief takes it, and worker 1 is signalled to learn its new end.
TEST(PolicyItemCostsTest, AdaptiveStealsALastItemWholeWhenThatEndsTheJobSooner) {
  std::vector<double> costs(20, 1.0);
  costs[19] = 4;  // 23 in all: worker 0 plans [0, 11), worker 1 [11, 20)
  auto policy = MakePolicy(testing_support::PolicyNamed(
      "adaptive", {{"slowStart", "off"}, {"rebalance", "off"}, {"backup", "off"}}));
  ASSERT_TRUE(policy->Start(CostlyJob(20, {1, 1}, SharedCosts(costs)), 0).ok());
  const Range share0 = policy->OnReport(Report{0, 0, {}, 0, 0, true, {}}).lease;
  const Range share1 = policy->OnReport(Report{1, 0, {}, 0, 0, true, {}}).lease;
  ASSERT_EQ(share0, (Range{0, 11}));
  ASSERT_EQ(share1, (Range{11, 20}));
  policy->OnReport(Report{1, 1, {{11, 12}}, 1, 12, false, {}});
  policy->OnReport(Report{1, 7, {{12, 18}}, 6, 18, false, {}});
  policy->OnReport(Report{0, 3.75, {{0, 5}}, 3.75, 5, false, {}});
  (void)policy->TakeSignals();
  const Reply stolen = policy->OnReport(Report{0, 7.5, {{5, 11}}, 3.75, 11, true, {}});
  ASSERT_EQ(stolen.kind, Reply::Kind::kLease) << "told to wait beside an item it would end sooner";
  EXPECT_EQ(stolen.lease, (Range{19, 20}));
  EXPECT_EQ(policy->TakeSignals(), std::vector<WorkerId>{1});
  const Reply learned = policy->OnReport(Report{1, 7.6, {}, 0.6, 18, false, {}});
  EXPECT_EQ(learned.lease.end, 19u);
}

// Spreading weighs each item against every worker, so it stops after a
// bounded number of items: on 600 workers every one of 1,200 equal items is
// large (a share is two), the first 256 go one to a worker, and the rest
// are cut in contiguous shares of what each still lacks.
TEST(PolicyItemCostsTest, SpreadingStopsAfterABoundedNumberOfItems) {
  constexpr WorkerId kWorkers = 600;
  auto policy = MakePolicy(testing_support::PolicyNamed("weighted"));
  ASSERT_TRUE(policy
                  ->Start(CostlyJob(1200, std::vector<double>(kWorkers, 1.0),
                                    SharedCosts(std::vector<double>(1200, 1.0))),
                          0)
                  .ok());
  IntervalSet leased;
  for (WorkerId id = 0; id < kWorkers; ++id) {
    const Range lease = policy->OnReport(Report{id, 0, {}, 0, 0, true, {}}).lease;
    EXPECT_EQ(leased.CountIn(lease), 0u) << "leased twice: " << lease.ToString();
    leased.Add(lease);
    if (id < 256) {
      EXPECT_EQ(lease, (Range{id, id + 1})) << id;
    }
    if (id >= 256) {
      EXPECT_EQ(lease.size(), 2u) << id;
    }
  }
}

// A giant item cannot be split: the policy that wants less than it still
// leases it whole, and every item is leased once.
TEST(PolicyItemCostsTest, AnItemCostlierThanAChunkIsLeasedWhole) {
  std::vector<double> costs(100, 1.0);
  costs[10] = 1000;
  for (const char* name : {"selfsched", "guided", "factoring", "mms"}) {
    SCOPED_TRACE(name);
    auto policy = MakePolicy(testing_support::PolicyNamed(name));
    ASSERT_TRUE(policy->Start(CostlyJob(100, {1, 1}, SharedCosts(costs)), 0).ok());
    std::vector<Reply> held;
    for (WorkerId id : {0u, 1u})
      held.push_back(policy->OnReport(Report{id, 0, {}, 0, 0, true, {}}));
    IntervalSet leased;
    for (double now = 1; now < 1000 && !policy->Finished(); ++now) {
      for (WorkerId id : {0u, 1u}) {
        if (held[id].kind != Reply::Kind::kLease || policy->Finished()) continue;
        const Range lease = held[id].lease;
        EXPECT_EQ(leased.CountIn(lease), 0u) << "leased twice: " << lease.ToString();
        leased.Add(lease);
        held[id] = policy->OnReport(Report{id, now, {lease}, 0.5, lease.end, true, {}});
      }
    }
    EXPECT_TRUE(policy->Finished());
    EXPECT_EQ(leased.size(), 100u);
  }
}

// Earliest finish from the pool. Worker 0 (1 unit a second) and worker 1
// (about 8) share a job of 24 items dealt largest first, after worker 2's
// share, items 1 and 2 (10 and 8 units), went back to the pool when it was
// lost. At t = 7 worker 0 has finished its share and asks: the pool's front
// item would take it 10 s, long past the job's predicted end, where worker 1
// ends it in about a second once free. Worker 0 is leased the largest items
// behind the front that it ends in time, the front left to worker 1. Before
// this rule it was told to wait, idle beside items it could end in time: the
// front item alone was weighed.
TEST(PolicyItemCostsTest, AdaptiveLeavesThePoolsLargeItemToAWorkerThatEndsItSooner) {
  std::vector<double> costs = {12, 10, 8, 6, 4, 3, 2, 2};
  costs.resize(24, 1.0);
  auto policy = MakePolicy(testing_support::PolicyNamed(
      "adaptive", {{"slowStart", "off"}, {"rebalance", "off"}, {"backup", "off"}}));
  ASSERT_TRUE(policy->Start(CostlyJob(costs.size(), {1, 4, 4}, SharedCosts(costs)), 0).ok());
  ASSERT_EQ(policy->OnReport(Report{0, 0, {}, 0, 0, true, {}}).lease, (Range{17, 24}));
  ASSERT_EQ(policy->OnReport(Report{1, 0, {}, 0, 0, true, {}}).lease, (Range{0, 1}));
  ASSERT_EQ(policy->OnReport(Report{2, 0, {}, 0, 0, true, {}}).lease, (Range{1, 3}));
  policy->OnWorkerLost(2, 1);
  policy->OnReport(Report{1, 1.5, {{0, 1}}, 1.5, 1, false, {}});
  const Reply asked = policy->OnReport(Report{0, 7, {{17, 24}}, 7, 24, true, {}});
  ASSERT_EQ(asked.kind, Reply::Kind::kLease);
  EXPECT_EQ(asked.lease, (Range{7, 9})) << "the front item, 1, ends sooner on worker 1";
  // The decisions log says why, beside the lease.
  const std::vector<WaitNote> notes = policy->WaitNotes();
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0].victim, std::optional<WorkerId>(1));
  EXPECT_NE(notes[0].why.find("ends the pool's front item 1 at"), std::string::npos)
      << notes[0].why;
  EXPECT_NE(notes[0].why.find("leased from item 7"), std::string::npos) << notes[0].why;
}

}  // namespace
}  // namespace ballast::balance
