// Tests of one simulated worker alone (core/sim/sim_worker.h): what it sends
// and when it wakes, worked out by hand from its node's speed, with no
// coordinator and no event queue. Items cost 1 each (uniform, no jitter) and
// take 1 s at speed 1.
#include "core/sim/sim_worker.h"

#include <gtest/gtest.h>

#include <optional>
#include <vector>

#include "core/balance/cost_model.h"
#include "core/sim/failing_items.h"
#include "core/sim/scenario.h"
#include "core/sim/true_cost.h"

namespace ballast::sim {
namespace {

using balance::Range;
using balance::Reply;
using balance::Report;
using Phase = SimWorker::Phase;

// A worker of one node over `items` uniform items, joined as worker 0.
class SimWorkerTest : public ::testing::Test {
 protected:
  void SetUp() override { workload_.items = 100; }

  SimWorker& Make(EmulatedNode node, bool timeline = false) {
    node_ = std::move(node);
    // As the simulation makes it: a failing item costs its attempts.
    cost_.emplace(balance::CostModel(workload_.items, balance::CostShape::kUniform), 0.0, 1,
                  std::vector<size_t>{}, 0.0, FailingItems::Costs(workload_));
    failing_.emplace(workload_, std::vector<size_t>{});
    worker_.emplace(node_, workload_, WorkerModel{&*cost_, &*failing_, timeline}, Range{},
                    node_.speed);
    (void)worker_->Join(0, 0);
    return *worker_;
  }

  static EmulatedNode NodeOfSpeed(double speed) {
    EmulatedNode node;
    node.name = "n";
    node.speed = speed;
    return node;
  }

  static Reply Lease(Range lease, double report_every = 0) {
    Reply reply;
    reply.kind = Reply::Kind::kLease;
    reply.lease = lease;
    reply.report_every_s = report_every;
    return reply;
  }

  static Reply Continue(Range lease, double report_every = 0) {
    Reply reply = Lease(lease, report_every);
    reply.kind = Reply::Kind::kContinue;
    return reply;
  }

  // Delivers a lease at `now` and starts it computing: returns the wake-up
  // the computing worker plans.
  double StartComputing(Range lease, double now, double report_every = 0) {
    const WorkerStep arrived = worker_->Deliver(Lease(lease, report_every), now);
    EXPECT_FALSE(arrived.report);
    EXPECT_EQ(arrived.wake, now);  // no link: its inputs are there at once
    const WorkerStep started = worker_->Wake(now);
    EXPECT_EQ(worker_->phase(), Phase::kComputing);
    EXPECT_TRUE(started.wake);
    return started.wake.value_or(-1);
  }

  Workload workload_;
  EmulatedNode node_;
  std::optional<TrueCost> cost_;
  std::optional<FailingItems> failing_;
  std::optional<SimWorker> worker_;
};

TEST_F(SimWorkerTest, JoiningAsksForWorkUnderItsPolicyId) {
  workload_.items = 10;
  cost_.emplace(workload_.items, balance::CostShape::kUniform, 0.0, 1);
  failing_.emplace(workload_, std::vector<size_t>{});
  const EmulatedNode node = NodeOfSpeed(1);
  SimWorker worker(node, workload_, WorkerModel{&*cost_, &*failing_, false}, Range{}, 1);
  EXPECT_EQ(worker.phase(), Phase::kAbsent);
  const WorkerStep step = worker.Join(7, 3);
  EXPECT_EQ(worker.id(), 7u);
  EXPECT_EQ(worker.phase(), Phase::kAsking);
  ASSERT_TRUE(step.report);
  EXPECT_TRUE(step.report->idle);
  EXPECT_TRUE(step.report->completed.empty());
  EXPECT_FALSE(step.wake);
}

TEST_F(SimWorkerTest, ALeaseComputesAtTheNodesSpeedAndEndsWithAReportOfItsItems) {
  SimWorker& worker = Make(NodeOfSpeed(2));
  const double end = StartComputing({10, 14}, 1);
  EXPECT_DOUBLE_EQ(end, 1 + 4 / 2.0);
  const WorkerStep step = worker.Wake(end);
  ASSERT_TRUE(step.report);
  EXPECT_TRUE(step.report->idle);
  EXPECT_EQ(step.report->position, 14u);
  EXPECT_DOUBLE_EQ(step.report->calc_seconds, 2);
  ASSERT_EQ(step.report->completed.size(), 1u);
  EXPECT_EQ(step.report->completed[0], (Range{10, 14}));
  EXPECT_FALSE(step.wake);
  EXPECT_EQ(worker.phase(), Phase::kAsking);
  const WorkerResult result = worker.Finish(end);
  EXPECT_EQ(result.leases, 1u);
  EXPECT_EQ(result.reports, 1u);
  EXPECT_DOUBLE_EQ(result.busy_s, 2);
  EXPECT_DOUBLE_EQ(result.idle_s, 1);  // waiting for its lease from 0 to 1
}

TEST_F(SimWorkerTest, ItReportsProgressAtTheCadenceTheLeaseAsksFor) {
  SimWorker& worker = Make(NodeOfSpeed(1));
  const double first = StartComputing({0, 10}, 0, 1.5);
  EXPECT_DOUBLE_EQ(first, 1.5);
  WorkerStep step = worker.Wake(first);
  ASSERT_TRUE(step.report);
  EXPECT_FALSE(step.report->idle);
  EXPECT_EQ(step.report->position, 1u);  // item 1 is half done
  EXPECT_EQ(step.report->completed, (std::vector<Range>{{0, 1}}));
  EXPECT_DOUBLE_EQ(step.report->calc_seconds, 1.5);
  ASSERT_TRUE(step.wake);
  EXPECT_DOUBLE_EQ(*step.wake, 3);
  step = worker.Wake(3);
  ASSERT_TRUE(step.report);
  EXPECT_EQ(step.report->completed, (std::vector<Range>{{1, 3}}));
}

TEST_F(SimWorkerTest, AShrunkEndKeepsTheItemItHasBegun) {
  SimWorker& worker = Make(NodeOfSpeed(1));
  StartComputing({0, 10}, 0);
  // At 2.5 s item 2 is half done: the coordinator's end of 1 becomes 3.
  const WorkerStep step = worker.Deliver(Continue({0, 1}), 2.5);
  EXPECT_FALSE(step.report);
  ASSERT_TRUE(step.wake);
  EXPECT_DOUBLE_EQ(*step.wake, 3);
  const WorkerStep end = worker.Wake(3);
  ASSERT_TRUE(end.report);
  EXPECT_TRUE(end.report->idle);
  EXPECT_EQ(end.report->completed, (std::vector<Range>{{0, 3}}));
}

TEST_F(SimWorkerTest, AStaleContinueChangesNothing) {
  SimWorker& worker = Make(NodeOfSpeed(1));
  StartComputing({0, 10}, 0);
  const uint64_t epoch = worker.epoch();
  const WorkerStep step = worker.Deliver(Continue({5, 6}), 2);  // another lease's answer
  EXPECT_FALSE(step.report);
  EXPECT_FALSE(step.wake);
  EXPECT_EQ(worker.epoch(), epoch);  // its planned wake-up stands
}

TEST_F(SimWorkerTest, ASignalStopsItAtTheNextItemBoundary) {
  SimWorker& worker = Make(NodeOfSpeed(1));
  const double finish = StartComputing({0, 10}, 0);
  const uint64_t epoch = worker.epoch();
  WorkerStep step = worker.Signal(2.5);
  EXPECT_NE(worker.epoch(), epoch);  // the wake-up at `finish` is stale now
  ASSERT_TRUE(step.wake);
  EXPECT_DOUBLE_EQ(*step.wake, 3);
  EXPECT_LT(*step.wake, finish);
  step = worker.Wake(3);
  ASSERT_TRUE(step.report);
  EXPECT_FALSE(step.report->idle);
  EXPECT_EQ(step.report->position, 3u);
  EXPECT_EQ(step.report->completed, (std::vector<Range>{{0, 3}}));
  EXPECT_FALSE(step.wake);
  EXPECT_EQ(worker.phase(), Phase::kPaused);
  // The coordinator cuts the lease where it stopped: it is done.
  step = worker.Deliver(Continue({0, 3}), 4);
  ASSERT_TRUE(step.report);
  EXPECT_TRUE(step.report->idle);
  EXPECT_TRUE(step.report->completed.empty());
  EXPECT_EQ(step.report->position, 3u);
}

TEST_F(SimWorkerTest, AWaitingWorkerAsksAgainWhenSignalled) {
  SimWorker& worker = Make(NodeOfSpeed(1));
  Reply wait;
  wait.kind = Reply::Kind::kWait;
  EXPECT_FALSE(worker.Deliver(wait, 1).report);
  EXPECT_EQ(worker.phase(), Phase::kWaiting);
  const WorkerStep step = worker.Signal(2);
  ASSERT_TRUE(step.report);
  EXPECT_TRUE(step.report->idle);
  EXPECT_EQ(worker.phase(), Phase::kAsking);
}

TEST_F(SimWorkerTest, AWaitAnsweringAnOlderReportLeavesAComputingWorkerBe) {
  SimWorker& worker = Make(NodeOfSpeed(1));
  StartComputing({0, 10}, 0);
  Reply wait;
  wait.kind = Reply::Kind::kWait;
  (void)worker.Deliver(wait, 1);
  EXPECT_EQ(worker.phase(), Phase::kComputing);
}

TEST_F(SimWorkerTest, ASpeedChangeReplansTheRestAtTheNewSpeed) {
  EmulatedNode node = NodeOfSpeed(1);
  node.changes = {{1, 2}};
  SimWorker& worker = Make(node);
  EXPECT_DOUBLE_EQ(StartComputing({0, 4}, 0), 4);
  const WorkerStep step = worker.SpeedChanged(1);
  ASSERT_TRUE(step.wake);
  EXPECT_DOUBLE_EQ(*step.wake, 1 + 3 / 2.0);
}

TEST_F(SimWorkerTest, ItemsRunAtOnceShareTheQuotaAndPayTheSliceOverhead) {
  // Two items at once in a quota of one core: time-sliced, 50 % more work.
  workload_.concurrency = 2;
  workload_.slice_overhead = 0.5;
  EmulatedNode node = NodeOfSpeed(1);
  node.cores = 1;
  Make(node);
  EXPECT_DOUBLE_EQ(StartComputing({0, 3}, 0), 3 * 1.5);
}

TEST_F(SimWorkerTest, ItemsRunAtOnceUseTheirShareOfAWiderQuota) {
  // Two items in a quota of four cores use half of it (a process, a core).
  workload_.concurrency = 2;
  EmulatedNode node = NodeOfSpeed(2);
  node.cores = 4;
  Make(node);
  EXPECT_DOUBLE_EQ(StartComputing({0, 3}, 0), 3 / (2 * 0.5));
}

TEST_F(SimWorkerTest, SignalledWhileRunningSeveralAtOnceItFinishesThoseItBegan) {
  workload_.concurrency = 2;
  EmulatedNode node = NodeOfSpeed(1);
  node.cores = 2;
  SimWorker& worker = Make(node);
  StartComputing({0, 10}, 0);
  const WorkerStep step = worker.Signal(2.5);
  ASSERT_TRUE(step.wake);
  EXPECT_DOUBLE_EQ(*step.wake, 4);  // position 2, two begun: it stops at item 4
  EXPECT_EQ(worker.Wake(4).report->position, 4u);
}

TEST_F(SimWorkerTest, AFailedWorkerLosesWhatItHadNotReported) {
  SimWorker& worker = Make(NodeOfSpeed(1));
  StartComputing({0, 10}, 0);
  EXPECT_TRUE(worker.Fail(5));
  EXPECT_FALSE(worker.Fail(6));  // dead already
  EXPECT_EQ(worker.phase(), Phase::kDead);
  EXPECT_FALSE(worker.Deliver(Continue({0, 10}), 7).wake);
  EXPECT_FALSE(worker.Signal(7).report);
  const WorkerResult result = worker.Finish(20);
  EXPECT_TRUE(result.failed);
  EXPECT_EQ(result.reports, 0u);
  EXPECT_DOUBLE_EQ(result.busy_s, 5);
}

TEST_F(SimWorkerTest, ADrainedWorkerHandsInTheItemsItFinished) {
  EmulatedNode node = NodeOfSpeed(1);
  node.leave_at = 3.5;
  SimWorker& worker = Make(node);
  StartComputing({0, 10}, 0);
  const std::optional<Report> last = worker.Leave(3.5);
  ASSERT_TRUE(last);
  EXPECT_FALSE(last->idle);
  EXPECT_EQ(last->position, 3u);
  EXPECT_EQ(last->completed, (std::vector<Range>{{0, 3}}));  // item 3 is lost
  EXPECT_DOUBLE_EQ(last->calc_seconds, 3.5);
  EXPECT_FALSE(worker.Leave(4));
  const WorkerResult result = worker.Finish(10);
  EXPECT_TRUE(result.left);
  EXPECT_FALSE(result.failed);
  EXPECT_DOUBLE_EQ(result.idle_s, 0);  // in the job until it left, busy all along
}

TEST_F(SimWorkerTest, AFailingItemIsNamedFailedInTheReportThatHandsItIn) {
  workload_.items = 10;
  workload_.failing_items = {{2, 0.5}};
  SimWorker& worker = Make(NodeOfSpeed(1));
  const double end = StartComputing({0, 4}, 0);
  EXPECT_DOUBLE_EQ(end, 3.5);  // the failing item costs its one attempt
  const WorkerStep step = worker.Wake(end);
  ASSERT_TRUE(step.report);
  EXPECT_EQ(step.report->failed, (std::vector<Range>{{2, 3}}));
}

TEST_F(SimWorkerTest, ItsTimelineNamesTransferComputingAndIdleTime) {
  workload_.bytes_per_item = 10;
  workload_.transfer = Transfer::kBlock;
  EmulatedNode node = NodeOfSpeed(1);
  node.bandwidth = 20;  // 2 items a second cross the link
  SimWorker& worker = Make(node, /*timeline=*/true);
  const WorkerStep arrived = worker.Deliver(Lease({0, 4}), 1);
  ASSERT_TRUE(arrived.wake);
  EXPECT_DOUBLE_EQ(*arrived.wake, 3);
  const WorkerStep started = worker.Wake(3);
  ASSERT_TRUE(started.wake);
  EXPECT_DOUBLE_EQ(*started.wake, 7);
  (void)worker.Wake(7);
  const WorkerResult result = worker.Finish(8);
  const std::vector<Segment>& timeline = result.timeline;
  ASSERT_EQ(timeline.size(), 4u);
  EXPECT_EQ(timeline[0].kind, Segment::Kind::kIdle);
  EXPECT_EQ(timeline[1].kind, Segment::Kind::kTransfer);
  EXPECT_DOUBLE_EQ(timeline[1].start, 1);
  EXPECT_DOUBLE_EQ(timeline[1].end, 3);
  EXPECT_EQ(timeline[2].kind, Segment::Kind::kBusy);
  EXPECT_DOUBLE_EQ(timeline[2].end, 7);
  EXPECT_EQ(timeline[3].kind, Segment::Kind::kIdle);
  EXPECT_DOUBLE_EQ(timeline[3].end, 8);
  EXPECT_DOUBLE_EQ(result.idle_s, 8 - 4);  // transfer time is idle time
}

}  // namespace
}  // namespace ballast::sim
