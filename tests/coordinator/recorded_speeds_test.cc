// What counts as history of a job's measured speeds (coordinator/
// recorded_speeds.h): the operator's store and Prometheus's gauge both take
// this one rule.
#include "coordinator/recorded_speeds.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/history/history_source.h"

namespace ballast::coordinator {
namespace {

// A worker that computed `cost` units in `busy_s` seconds, shared for
// `shared_s` of them.
WorkerView Measured(const std::string& name, double cost, double busy_s, double shared_s = 0) {
  WorkerView worker;
  worker.name = name;
  worker.cost = cost;
  worker.busy_s = busy_s;
  worker.shared_s = shared_s;
  return worker;
}

JobView JobOf(std::vector<WorkerView> workers, double sampled_s = 10) {
  JobView view;
  view.workers = std::move(workers);
  view.sharing_sampled_s = sampled_s;
  return view;
}

using Names = std::vector<std::string>;

TEST(RecordedSpeedsTest, EveryNodeMeasuredSoundlyIsRecordedAtItsSpeed) {
  const RecordedSpeeds recorded =
      SpeedsToRecord(JobOf({Measured("a", 30, 3), Measured("b", 10, 2), Measured("c", 0, 0)}));
  EXPECT_EQ(recorded.speeds, (std::map<std::string, double>{{"a", 10}, {"b", 5}}));
  EXPECT_TRUE(recorded.shared.empty());
  EXPECT_TRUE(recorded.brief.empty());  // c measured nothing: neither
}

// Shared for more than a quarter of the sampled run: the node measured its
// share, not itself. A quarter exactly is kept.
TEST(RecordedSpeedsTest, ANodeSharedForMoreThanAQuarterOfTheRunIsLeftOut) {
  ASSERT_EQ(history::kMaxSharedFraction, 0.25);
  const RecordedSpeeds recorded =
      SpeedsToRecord(JobOf({Measured("a", 10, 5, 10), Measured("b", 10, 5, 2.6),
                            Measured("c", 10, 5, 2.5), Measured("d", 10, 5, 0)}));
  EXPECT_EQ(recorded.shared, (Names{"a", "b"}));
  EXPECT_EQ(recorded.speeds.size(), 2u);
  EXPECT_TRUE(recorded.speeds.contains("c"));
  // Not sampled at all (`ballast run`, one job): nothing counts as shared.
  EXPECT_TRUE(
      SpeedsToRecord(JobOf({Measured("a", 10, 5), Measured("b", 10, 5)}, 0)).shared.empty());
}

// Under half a second of computing measures the scheduler's time slices;
// seconds spent on work another worker handed in first do not count.
TEST(RecordedSpeedsTest, ANodeMeasuredOverLessThanHalfASecondIsLeftOut) {
  ASSERT_EQ(history::kMinRecordedBusySeconds, 0.5);
  WorkerView dropped = Measured("d", 10, 2);
  dropped.dropped_busy_s = 1.6;  // 0.4 s of merged work
  const RecordedSpeeds recorded = SpeedsToRecord(
      JobOf({Measured("a", 10, 0.4), Measured("b", 10, 0.5), Measured("c", 10, 3), dropped}));
  EXPECT_EQ(recorded.brief, (Names{"a", "d"}));
  EXPECT_EQ(recorded.speeds.size(), 2u);
}

// One node's speed relative to itself is 1 whatever the node: a job left
// with fewer than two nodes records nothing, whether others were left out or
// it ran on one node.
TEST(RecordedSpeedsTest, WithFewerThanTwoNodesLeftNothingIsRecorded) {
  const RecordedSpeeds left_out = SpeedsToRecord(
      JobOf({Measured("a", 10, 5, 10), Measured("b", 10, 0.1), Measured("c", 10, 5)}));
  EXPECT_TRUE(left_out.speeds.empty());
  EXPECT_EQ(left_out.shared, Names{"a"});
  EXPECT_EQ(left_out.brief, Names{"b"});
  EXPECT_TRUE(SpeedsToRecord(JobOf({Measured("a", 10, 5)})).speeds.empty());
}

}  // namespace
}  // namespace ballast::coordinator
