// Tests of the adaptive policy learning a start cost per item from the
// reports (AdaptiveOptions::learn_costs, balance/learned_cost.h): a job whose
// items really cost a start cost plus their declared cost is learned so, and
// its tail is split by what the items really cost, also where items outlast
// several reports; a job whose items cost what they declare learns nothing,
// and its decisions are those of a policy that does not learn.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "core/balance/cost_model.h"
#include "core/balance/learned_cost.h"
#include "core/balance/policy.h"
#include "core/balance/policy_options.h"
#include "tests/support/policy_spec.h"

namespace ballast::balance {
namespace {

// 300 items: the first 150 of varied declared cost (a deterministic spread
// of 0.3 to 3), the last 150 declared cheap (0.1): planned by declared cost,
// the second worker gets the cheap tail, which really costs far more than
// it declares once each item pays its start.
std::vector<double> Costs() {
  std::vector<double> costs(300, 0.1);
  for (size_t i = 0; i < 150; ++i) costs[i] = 0.3 + 2.7 * static_cast<double>((i * 37) % 29) / 28;
  return costs;
}

struct DrivenRun {
  double makespan = 0;          // when the last item was handed in
  double finish_gap = 0;        // between the two workers' last hand-ins
  double start_cost = 0;        // what the policy split by at the end
  bool learning_costs = false;  // PolicyStats: what status.costModel says
  uint64_t cost_samples = 0;
  std::vector<Reply> replies;
};

// Two workers compute the job, an item taking `seconds_per_cost[w] * (start
// + c)` seconds on worker w for its declared cost c in CostModel units (the
// mean item declares 1), reporting after 1 to 5 items by turns; the earliest
// worker in virtual time reports next. With `heartbeat_s`, a worker also
// says it is alive every that many seconds while it computes a report's
// items (no item finished, no computing claimed), as a worker does on a long
// item: the longer a report's items, the more of their time comes before
// the report that claims it.
DrivenRun Drive(bool learn, double start, std::vector<double> seconds_per_cost = {1.0, 1.0},
                double heartbeat_s = 0) {
  const auto costs = std::make_shared<const std::vector<double>>(Costs());
  const CostModel declared(costs);
  JobInfo job;
  job.items = costs->size();
  job.workers = {{"w0", 1.0}, {"w1", 1.0}};
  job.item_costs = costs;
  job.repeatable = false;
  job.inputs_cross_links = false;
  auto policy = MakePolicy(
      testing_support::PolicyNamed("adaptive", {{"learnCosts", learn ? "true" : "false"}}));
  EXPECT_TRUE(policy->Start(job, 0).ok());

  struct Worker {
    double clock = 0;
    Range lease;
    uint64_t position = 0;
    bool asking = true;  // its next report is idle
    bool waiting = false;
    bool done = false;
    double last_hand_in = 0;
    int turn = 0;
  };
  std::vector<Worker> workers(2);
  workers[1].turn = 2;
  DrivenRun run;
  for (int step = 0; step < 100'000; ++step) {
    Worker* next = nullptr;
    WorkerId id = 0;
    for (WorkerId w = 0; w < 2; ++w) {
      Worker& candidate = workers[w];
      if (candidate.done || candidate.waiting) continue;
      if (!next || candidate.clock < next->clock) {
        next = &candidate;
        id = w;
      }
    }
    if (!next) break;
    Worker& w = *next;
    Report report;
    report.worker = id;
    if (w.asking) {
      report.idle = true;
    } else {
      const uint64_t k = std::min<uint64_t>(1 + (w.turn++ % 5), w.lease.end - w.position);
      const Range done{w.position, w.position + k};
      const double seconds =
          seconds_per_cost[id] * (start * static_cast<double>(k) + declared.Cost(done));
      for (double beat = heartbeat_s; heartbeat_s > 0 && beat < seconds; beat += heartbeat_s) {
        Report alive;
        alive.worker = id;
        alive.position = w.position;
        alive.now = w.clock + beat;
        const Reply reply = policy->OnReport(alive);
        EXPECT_EQ(reply.kind, Reply::Kind::kContinue);
        w.lease.end = std::max(reply.lease.end, w.position);
      }
      w.clock += seconds;
      w.position = done.end;
      w.last_hand_in = w.clock;
      report.completed = {done};
      report.calc_seconds = seconds;
      report.position = w.position;
      report.idle = w.position >= w.lease.end;
    }
    report.now = w.clock;
    const Reply reply = policy->OnReport(report);
    run.replies.push_back(reply);
    w.asking = false;
    switch (reply.kind) {
      case Reply::Kind::kContinue:
        w.lease.end = std::max(reply.lease.end, w.position);
        if (w.position >= w.lease.end) w.asking = true;
        break;
      case Reply::Kind::kLease:
        w.lease = reply.lease;
        w.position = reply.lease.begin;
        break;
      case Reply::Kind::kWait:
        w.waiting = true;
        w.asking = true;
        break;
      case Reply::Kind::kDone:
        w.done = true;
        break;
    }
    for (WorkerId signalled : policy->TakeSignals()) {
      Worker& s = workers[signalled];
      if (s.waiting) {
        s.waiting = false;
        s.clock = std::max(s.clock, w.clock);
      }
    }
  }
  EXPECT_TRUE(policy->Finished());
  run.makespan = std::max(workers[0].last_hand_in, workers[1].last_hand_in);
  run.finish_gap = std::fabs(workers[0].last_hand_in - workers[1].last_hand_in);
  run.start_cost = policy->stats().start_cost;
  run.learning_costs = policy->stats().learning_costs;
  run.cost_samples = policy->stats().cost_samples;
  return run;
}

TEST(PolicyLearnedCostTest, LearnsTheStartCostAndSplitsTheTailByIt) {
  const double start = 1.0;
  const double work =
      start * 300 + CostModel(std::make_shared<const std::vector<double>>(Costs())).Cost({0, 300});
  for (const std::vector<double>& seconds :
       std::vector<std::vector<double>>{{1, 1}, {1, 3}, {3, 1}}) {
    SCOPED_TRACE(seconds[1]);
    const DrivenRun learned = Drive(true, start, seconds);
    const DrivenRun declared = Drive(false, start, seconds);
    EXPECT_EQ(declared.start_cost, 0);
    // The stats say whether the policy learns, and from how many reports.
    EXPECT_FALSE(declared.learning_costs);
    EXPECT_EQ(declared.cost_samples, 0u);
    EXPECT_TRUE(learned.learning_costs);
    EXPECT_GE(learned.cost_samples, StartCostFitOptions{}.min_samples);
    // Exact times: the fit has only its shrinkage to give away.
    EXPECT_NEAR(learned.start_cost, start, 0.1 * start);
    // The limit: the work over the two workers' speeds together.
    const double limit = work / (1 / seconds[0] + 1 / seconds[1]);
    std::cout << "limit " << limit << " learned " << learned.makespan << " declared "
              << declared.makespan << "\n";
    EXPECT_LE(learned.makespan, declared.makespan);
    EXPECT_LT(learned.makespan, 1.03 * limit);
  }
}

TEST(PolicyLearnedCostTest, ItemsThatOutlastSeveralReportsAreLearnedOverAllOfThem) {
  // A report's items take 1.3 to 20 s, and the worker says it is alive
  // every 2 s meanwhile: the computing claimed with the items spans all of
  // those reports, and the start cost is learned as without them.
  const double start = 1.0;
  const DrivenRun quiet = Drive(true, start);
  const DrivenRun beating = Drive(true, start, {1.0, 1.0}, /*heartbeat_s=*/2);
  EXPECT_TRUE(beating.learning_costs);
  EXPECT_GE(beating.cost_samples, StartCostFitOptions{}.min_samples);
  EXPECT_NEAR(beating.start_cost, start, 0.1 * start);
  EXPECT_NEAR(beating.start_cost, quiet.start_cost, 1e-9);
}

TEST(PolicyLearnedCostTest, ItemsThatCostWhatTheyDeclareLearnNothingAndDecideAsBefore) {
  const DrivenRun learned = Drive(true, 0.0);
  const DrivenRun declared = Drive(false, 0.0);
  EXPECT_EQ(learned.start_cost, 0);
  // It learns, and its fits found no start cost: the declared costs stand.
  EXPECT_TRUE(learned.learning_costs);
  EXPECT_GE(learned.cost_samples, StartCostFitOptions{}.min_samples);
  ASSERT_EQ(learned.replies.size(), declared.replies.size());
  for (size_t i = 0; i < learned.replies.size(); ++i) {
    EXPECT_EQ(learned.replies[i].kind, declared.replies[i].kind) << i;
    EXPECT_EQ(learned.replies[i].lease, declared.replies[i].lease) << i;
  }
  EXPECT_EQ(learned.makespan, declared.makespan);
}

}  // namespace
}  // namespace ballast::balance
