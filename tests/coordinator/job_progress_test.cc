// What the progress route answers (coordinator/job_progress.h): a job's view
// in its own cost units, its rows those status.nodes would keep.
#include "coordinator/job_progress.h"

#include <gtest/gtest.h>

#include <string>

namespace ballast::coordinator {
namespace {

WorkerView Worker(const std::string& name, double prior, uint64_t items, double cost, double busy_s,
                  uint64_t cuts = 0) {
  WorkerView worker;
  worker.name = name;
  worker.prior_speed = prior;
  worker.items = items;
  worker.cost = cost;
  worker.busy_s = busy_s;
  worker.cuts = cuts;
  return worker;
}

TEST(JobProgressTest, CountsAndCostsInTheJobsUnits) {
  JobView view;
  view.id = "jobs.convert";
  view.items = 59;
  view.completed = 12;
  view.completed_cost = 10.5;  // mean items
  view.workers = {Worker("pi4b-0", 5, 8, 7.5, 3, 1), Worker("pi3b-0", 1, 4, 3, 6, 2),
                  Worker("pi4b-1", 5, 0, 0, 0)};
  view.workers[0].contacted = view.workers[1].contacted = true;
  view.workers[1].left_at = 20;  // declared lost
  // A mean item of 4.93 cost units (291 over 59 clips).
  const protocol::JobProgress progress = ProgressOf(view, 291.0 / 59);
  EXPECT_EQ(progress.job, "jobs.convert");
  EXPECT_EQ(progress.items, 59u);
  EXPECT_EQ(progress.completed, 12u);
  EXPECT_DOUBLE_EQ(progress.total_cost, 291);
  EXPECT_DOUBLE_EQ(progress.completed_cost, 10.5 * 291 / 59);
  EXPECT_FALSE(progress.done);
  EXPECT_EQ(progress.node_count, 3u);
  EXPECT_EQ(progress.reporting, 1u);  // pi4b-1 never reported, pi3b-0 was lost
  EXPECT_EQ(progress.steals, 3u);
  EXPECT_FALSE(progress.cost_model.has_value());  // the policy learns no costs
  ASSERT_EQ(progress.nodes.size(), 3u);
  const protocol::NodeProgress& fast = progress.nodes[0];
  EXPECT_EQ(fast.name, "pi4b-0");
  EXPECT_DOUBLE_EQ(fast.prior, 5);
  EXPECT_EQ(fast.items, 8u);
  EXPECT_DOUBLE_EQ(fast.cost, 7.5 * 291 / 59);
  EXPECT_DOUBLE_EQ(fast.items_per_second, 8.0 / 3);
  EXPECT_DOUBLE_EQ(fast.cost_per_second, 7.5 * 291 / 59 / 3);
  EXPECT_EQ(fast.steals, 1u);
}

TEST(JobProgressTest, ANodeWithoutComputingTimeHasNoSpeed) {
  JobView view;
  view.items = 10;
  view.workers = {Worker("a", 1, 0, 0, 0)};
  const protocol::JobProgress progress = ProgressOf(view, 1);
  ASSERT_EQ(progress.nodes.size(), 1u);
  EXPECT_EQ(progress.nodes[0].items_per_second, 0);
  EXPECT_EQ(progress.nodes[0].cost_per_second, 0);
}

// Seconds on copies that lost count toward no speed (MergedBusySeconds).
TEST(JobProgressTest, SpeedsAreOverTheSecondsOnMergedItems) {
  JobView view;
  view.items = 10;
  WorkerView worker = Worker("a", 1, 4, 4, 3);
  worker.dropped_busy_s = 1;
  view.workers = {worker};
  EXPECT_DOUBLE_EQ(ProgressOf(view, 1).nodes[0].cost_per_second, 2);
}

TEST(JobProgressTest, TheCostModelIsTheStatussInTheJobsUnits) {
  JobView view;
  view.items = 100;
  view.policy.learning_costs = true;
  view.policy.start_cost = 0.5;  // mean items
  view.policy.cost_samples = 12;
  view.workers = {Worker("a", 1, 10, 10, 15)};
  const protocol::JobProgress progress = ProgressOf(view, 4);
  ASSERT_TRUE(progress.cost_model.has_value());
  EXPECT_DOUBLE_EQ(progress.cost_model->start_cost, 2);
  EXPECT_EQ(progress.cost_model->samples, 12u);
  // 15 busy seconds over 10 + 0.5 x 10 = 15 mean items of the model.
  EXPECT_DOUBLE_EQ(*progress.cost_model->seconds_per_cost, 15.0 / (15 * 4));
  EXPECT_DOUBLE_EQ(*progress.cost_model->start_seconds, 0.5);
}

// Past max_nodes: those not measured yet, then those furthest from their
// prior's share, in the job's order, as status.nodes keeps them.
TEST(JobProgressTest, ABigJobShowsTheNodesFurthestFromTheirPrior) {
  JobView view;
  view.items = 1000;
  view.workers = {
      Worker("on-prior-0", 1, 10, 10, 10),  // 1 per second, as its prior says
      Worker("silent", 1, 0, 0, 0),         // no speed yet
      Worker("on-prior-1", 2, 20, 20, 10),  // 2 per second, prior 2
      Worker("slow", 2, 2, 2, 10),          // 0.2 per second, prior 2
      Worker("on-prior-2", 1, 10, 10, 10),
  };
  const protocol::JobProgress progress = ProgressOf(view, 1, 2);
  EXPECT_EQ(progress.node_count, 5u);
  ASSERT_EQ(progress.nodes.size(), 2u);
  EXPECT_EQ(progress.nodes[0].name, "silent");
  EXPECT_EQ(progress.nodes[1].name, "slow");
  // The answer stays within its bound whatever the job's size.
  view.workers.assign(5000, Worker("node-with-a-long-name-of-the-cluster", 1, 1, 1, 1));
  const protocol::JobProgress big = ProgressOf(view, 1);
  EXPECT_EQ(big.nodes.size(), protocol::kMaxProgressNodes);
  EXPECT_EQ(big.node_count, 5000u);
  EXPECT_LT(protocol::ToJson(big).dump().size(), size_t{32} << 10);
}

}  // namespace
}  // namespace ballast::coordinator
