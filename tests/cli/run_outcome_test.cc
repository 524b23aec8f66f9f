// Tests of a local run's figures (cli/run/run_outcome.h), from a coordinator's
// view and the supervision's record written by hand: no process, no clock.
#include "cli/run/run_outcome.h"

#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

#include "core/balance/efficiency.h"

namespace ballast::cli {
namespace {

NodeRecord Record(const std::string& name, double speed, bool joined = true) {
  NodeRecord record;
  record.node.name = name;
  record.node.speed = speed;
  record.log_file = name + ".log";
  record.joined = joined;
  return record;
}

coordinator::WorkerView Worker(const std::string& name, double cpu_s, double cost, double busy_s) {
  coordinator::WorkerView worker;
  worker.name = name;
  worker.cpu_s = cpu_s;
  worker.cost = cost;
  worker.busy_s = busy_s;
  worker.items = static_cast<uint64_t>(cost);
  return worker;
}

// A view of `workers` (numbered in that order), finished at `finished_at`,
// with no verification.
coordinator::JobView View(std::vector<coordinator::WorkerView> workers, double finished_at) {
  coordinator::JobView view;
  view.workers = std::move(workers);
  view.finished_at = finished_at;
  view.verification.worker_cpu_s.assign(view.workers.size(), 0);
  view.verification.worker_busy_s.assign(view.workers.size(), 0);
  return view;
}

fuzzy::WeightResult Weights(size_t nodes) {
  fuzzy::WeightResult weights;
  for (size_t i = 0; i < nodes; ++i) {
    fuzzy::NodeWeight weight;
    weight.score = 0.5 + 0.1 * static_cast<double>(i);
    weight.weight = 1 + static_cast<double>(i);
    weights.nodes.push_back(weight);
  }
  return weights;
}

workload::WorkloadSpec Uniform(uint64_t items) {
  workload::WorkloadSpec spec;
  spec.kind = workload::WorkloadKind::kMatmul;
  spec.items = items;
  return spec;
}

TEST(RunOutcomeTest, TheWorkIsTheCpuSecondsOnTheJobsItemsAndTheLimitItsShareOfTheCores) {
  coordinator::JobView view =
      View({Worker("b", 3, 100, 5), Worker("a", 2.5, 60, 5)}, /*finished_at=*/6);
  view.workers[1].dropped_cpu_s = 0.5;         // a copy someone handed in first
  view.verification.worker_cpu_s = {0.25, 0};  // a recomputation of another's range
  const LocalRunOutcome out =
      RunOutcome(view, Weights(2), Uniform(1000), {Record("a", 0.5), Record("b", 0.5)});
  EXPECT_DOUBLE_EQ(out.work_s, (2.5 - 0.5) + (3 - 0.25));
  EXPECT_DOUBLE_EQ(out.total_speed, 1);
  EXPECT_DOUBLE_EQ(out.makespan_s, 6);
  EXPECT_EQ(out.ideal_bound, balance::LimitBound::kWork);
  EXPECT_DOUBLE_EQ(out.ideal_s, 4.75);
  EXPECT_DOUBLE_EQ(out.efficiency, 4.75 / 6);
  EXPECT_FALSE(out.efficiency_capped);
  // Rows in node order, each with its own worker's figures.
  ASSERT_EQ(out.nodes.size(), 2u);
  EXPECT_EQ(out.nodes[0].name, "a");
  EXPECT_EQ(out.nodes[0].items, 60u);
  EXPECT_EQ(out.nodes[0].log_file, "a.log");
  EXPECT_DOUBLE_EQ(out.nodes[0].weight, 1);
  EXPECT_DOUBLE_EQ(out.nodes[1].score, 0.6);
  EXPECT_EQ(out.nodes[1].items, 100u);
  EXPECT_DOUBLE_EQ(out.nodes[1].idle_s, 6 - 5);
  EXPECT_FALSE(out.nodes[0].joined_s);
}

TEST(RunOutcomeTest, ANodesMeasuredSpeedIsTheWorkItsCostStandsForOverItsComputingTime) {
  coordinator::JobView view = View({Worker("a", 3, 75, 4), Worker("b", 1, 25, 4)}, 4);
  view.workers[0].dropped_busy_s = 1;        // a second it computed a copy
  view.verification.worker_busy_s = {0, 2};  // b rechecked for two seconds
  const LocalRunOutcome out =
      RunOutcome(view, Weights(2), Uniform(100), {Record("a", 1), Record("b", 0.5)});
  // W = 4 s for a cost of 100: 0.04 s a cost unit.
  EXPECT_DOUBLE_EQ(out.nodes[0].measured_speed, 75 * 0.04 / 3);
  EXPECT_DOUBLE_EQ(out.nodes[1].measured_speed, 25 * 0.04 / 2);
}

TEST(RunOutcomeTest, ANodeThatNeverJoinedHasItsWeightsAloneAndNoShareOfTheLimit) {
  NodeRecord late = Record("late", 4, /*joined=*/false);
  late.node.join_at = 30;
  const LocalRunOutcome out =
      RunOutcome(View({Worker("a", 2, 10, 2)}, 2), Weights(2), Uniform(10), {Record("a", 1), late});
  EXPECT_DOUBLE_EQ(out.total_speed, 1);
  EXPECT_DOUBLE_EQ(out.ideal_s, 2);
  const NodeOutcome& row = out.nodes[1];
  EXPECT_EQ(row.name, "late");
  EXPECT_EQ(row.joined_s, -1);
  EXPECT_EQ(row.items, 0u);
  EXPECT_EQ(row.idle_s, 0);
  EXPECT_DOUBLE_EQ(row.weight, 2);
}

TEST(RunOutcomeTest, NodesThatJoinedOrWereDrainedCountWhileTheyWereInTheJob) {
  NodeRecord joiner = Record("joiner", 1);
  joiner.node.join_at = 2;
  joiner.joined_s = 2.1;
  NodeRecord drained = Record("drained", 1);
  drained.left_s = 3;
  const LocalRunOutcome out =
      RunOutcome(View({Worker("drained", 3, 30, 2.5), Worker("joiner", 5, 50, 3.5)}, 6), Weights(2),
                 Uniform(80), {drained, joiner});
  EXPECT_DOUBLE_EQ(out.work_s, 8);
  EXPECT_DOUBLE_EQ(
      out.ideal_s,
      balance::IdealSecondsOver(8, {{0, 3, 1}, {2.1, std::numeric_limits<double>::infinity(), 1}}));
  EXPECT_DOUBLE_EQ(out.nodes[0].idle_s, 3 - 2.5);  // until it left
  EXPECT_EQ(out.nodes[0].left_s, 3);
  EXPECT_DOUBLE_EQ(out.nodes[1].idle_s, 6 - 2.1 - 3.5);  // from when it joined
  EXPECT_EQ(out.nodes[1].joined_s, 2.1);
}

TEST(RunOutcomeTest, TheLargestItemOnTheFastestItemSpeedCanBeTheLimit) {
  // Two items of equal cost, four commands at once on a node of four cores:
  // an item runs at one core, so the 5 s item bounds the 10 s of work that
  // the cores alone would do in 2.5 s.
  workload::WorkloadSpec spec = Uniform(2);
  spec.kind = workload::WorkloadKind::kExec;
  spec.exec.concurrency = 4;
  const LocalRunOutcome out =
      RunOutcome(View({Worker("a", 10, 2, 5)}, 5.5), Weights(1), spec, {Record("a", 4)});
  EXPECT_EQ(out.ideal_bound, balance::LimitBound::kLargestItem);
  EXPECT_DOUBLE_EQ(out.ideal_s, 5);
  // Without a concurrency, one command per started core: the same.
  spec.exec.concurrency = 0;
  EXPECT_DOUBLE_EQ(
      RunOutcome(View({Worker("a", 10, 2, 5)}, 5.5), Weights(1), spec, {Record("a", 4)}).ideal_s,
      5);
}

TEST(RunOutcomeTest, AnIdealPastTheMakespanIsCapped) {
  const LocalRunOutcome out =
      RunOutcome(View({Worker("a", 10, 10, 4)}, 4), Weights(1), Uniform(100), {Record("a", 1)});
  EXPECT_TRUE(out.efficiency_capped);
  EXPECT_DOUBLE_EQ(out.efficiency, 1);
}

}  // namespace
}  // namespace ballast::cli
