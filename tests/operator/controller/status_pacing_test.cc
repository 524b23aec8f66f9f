// Tests of the status pacing (operator/controller/status_pacing.h): which
// changes of a running job's status are progress alone, and when each kind
// is written.
#include "operator/controller/status_pacing.h"

#include <gtest/gtest.h>

#include <chrono>

namespace ballast::controller {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

WeightedJobStatus RunningStatus() {
  WeightedJobStatus status;
  status.phase = JobPhase::kRunning;
  status.workers = 3;
  status.progress = "10%";
  status.completed_items = 60;
  status.completed_cost = 60;
  status.items = 600;
  NodeRow row;
  row.name = "pi4b-0";
  row.weight = 5;
  row.pod = "job-pi4b-0";
  row.items = 40;
  row.cost = 40;
  status.nodes = std::vector<NodeRow>{row};
  status.checkpoint = nlohmann::json{{"completed", {{0, 60}}}};
  return status;
}

TEST(StatusPacingTest, ProgressCheckpointAndANodesCountsAreProgressAlone) {
  const WeightedJobStatus written = RunningStatus();
  EXPECT_EQ(ClassifyStatusChange(written, written), StatusChange::kNone);
  WeightedJobStatus now = written;
  now.progress = "11%";
  now.completed_items = 66;
  now.completed_cost = 70.5;
  now.checkpoint = nlohmann::json{{"completed", {{0, 66}}}};
  (*now.nodes)[0].items = 46;
  (*now.nodes)[0].cost = 50;
  (*now.nodes)[0].cost_speed = 2.5;
  (*now.nodes)[0].estimated_speed = 3;
  (*now.nodes)[0].steals = 1;
  now.cost_model = CostModelStatus{};
  now.result = nlohmann::json{{"primes", {{"count", 6}}}};  // merged so far
  EXPECT_EQ(ClassifyStatusChange(written, now), StatusChange::kProgress);
}

TEST(StatusPacingTest, WhatAReaderSeesBesideProgressIsVisible) {
  const WeightedJobStatus written = RunningStatus();
  auto visible = [&](auto change) {
    WeightedJobStatus now = written;
    now.progress = "12%";  // progress moved too: the visible change wins
    change(now);
    return ClassifyStatusChange(written, now);
  };
  EXPECT_EQ(visible([](WeightedJobStatus& s) { s.workers = 2; }), StatusChange::kVisible);
  EXPECT_EQ(visible([](WeightedJobStatus& s) { s.failed_items = 1; }), StatusChange::kVisible);
  EXPECT_EQ(visible([](WeightedJobStatus& s) { s.failed_pods = 1; }), StatusChange::kVisible);
  EXPECT_EQ(visible([](WeightedJobStatus& s) { (*s.nodes)[0].pod = "job-pi4b-0-1"; }),
            StatusChange::kVisible);
  EXPECT_EQ(visible([](WeightedJobStatus& s) {
              NodeRow joined;
              joined.name = "pi5-0";
              s.nodes->push_back(joined);
            }),
            StatusChange::kVisible);
  EXPECT_EQ(visible([](WeightedJobStatus& s) {
              ExcludedNode excluded;
              excluded.name = "pi3b-0";
              s.excluded_nodes.push_back(excluded);
            }),
            StatusChange::kVisible);
  EXPECT_EQ(visible([](WeightedJobStatus& s) { s.phase = JobPhase::kSucceeded; }),
            StatusChange::kVisible);
}

TEST(StatusPacingTest, ProgressWaitsForItsIntervalOtherChangesForTheStatusInterval) {
  const StatusPacing pacing;  // the defaults: 2 s and 15 s
  EXPECT_FALSE(StatusWriteDue(StatusChange::kProgress, seconds(14), false, pacing));
  EXPECT_TRUE(StatusWriteDue(StatusChange::kProgress, seconds(15), false, pacing));
  EXPECT_FALSE(StatusWriteDue(StatusChange::kVisible, milliseconds(1999), false, pacing));
  EXPECT_TRUE(StatusWriteDue(StatusChange::kVisible, seconds(2), false, pacing));
  // A transition goes out at once, whatever else changed with it.
  EXPECT_TRUE(StatusWriteDue(StatusChange::kProgress, seconds(0), true, pacing));
  EXPECT_TRUE(StatusWriteDue(StatusChange::kVisible, seconds(0), true, pacing));
  // Nothing changed: nothing is written, however long ago the last write.
  EXPECT_FALSE(StatusWriteDue(StatusChange::kNone, std::chrono::hours(1), true, pacing));
}

}  // namespace
}  // namespace ballast::controller
