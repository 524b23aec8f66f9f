// Tests of the status pacing (operator/controller/status_pacing.h): which
// changes of a running job's status are progress alone, and when each kind
// is written.
#include "operator/controller/status_pacing.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>

namespace ballast::controller {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

api::WeightedJobStatus RunningStatus() {
  api::WeightedJobStatus status;
  status.phase = api::JobPhase::kRunning;
  status.workers = 3;
  status.progress = "10%";
  status.completed_items = 60;
  status.completed_cost = 60;
  status.items = 600;
  api::NodeRow row;
  row.name = "pi4b-0";
  row.weight = 5;
  row.pod = "job-pi4b-0";
  row.items = 40;
  row.cost = 40;
  status.nodes = std::vector<api::NodeRow>{row};
  status.checkpoint = nlohmann::json{{"completed", {{0, 60}}}};
  return status;
}

TEST(StatusPacingTest, ProgressCheckpointAndANodesCountsAreProgressAlone) {
  const api::WeightedJobStatus written = RunningStatus();
  EXPECT_EQ(ClassifyStatusChange(written, written), StatusChange::kNone);
  api::WeightedJobStatus now = written;
  now.progress = "11%";
  now.completed_items = 66;
  now.completed_cost = 70.5;
  now.checkpoint = nlohmann::json{{"completed", {{0, 66}}}};
  (*now.nodes)[0].items = 46;
  (*now.nodes)[0].cost = 50;
  (*now.nodes)[0].cost_speed = 2.5;
  (*now.nodes)[0].estimated_speed = 3;
  (*now.nodes)[0].steals = 1;
  (*now.nodes)[0].duplicate_seconds = 0.4;  // a copy that lost, handed in
  now.cost_model = api::CostModelStatus{};
  now.result = nlohmann::json{{"primes", {{"count", 6}}}};  // merged so far
  EXPECT_EQ(ClassifyStatusChange(written, now), StatusChange::kProgress);
}

TEST(StatusPacingTest, WhatAReaderSeesBesideProgressIsVisible) {
  const api::WeightedJobStatus written = RunningStatus();
  auto visible = [&](auto change) {
    api::WeightedJobStatus now = written;
    now.progress = "12%";  // progress moved too: the visible change wins
    change(now);
    return ClassifyStatusChange(written, now);
  };
  EXPECT_EQ(visible([](api::WeightedJobStatus& s) { s.workers = 2; }), StatusChange::kVisible);
  EXPECT_EQ(visible([](api::WeightedJobStatus& s) { s.failed_items = 1; }), StatusChange::kVisible);
  EXPECT_EQ(visible([](api::WeightedJobStatus& s) { s.failed_pods = 1; }), StatusChange::kVisible);
  EXPECT_EQ(visible([](api::WeightedJobStatus& s) { (*s.nodes)[0].pod = "job-pi4b-0-1"; }),
            StatusChange::kVisible);
  EXPECT_EQ(visible([](api::WeightedJobStatus& s) {
              api::NodeRow joined;
              joined.name = "pi5-0";
              s.nodes->push_back(joined);
            }),
            StatusChange::kVisible);
  EXPECT_EQ(visible([](api::WeightedJobStatus& s) {
              api::ExcludedNode excluded;
              excluded.name = "pi3b-0";
              s.excluded_nodes.push_back(excluded);
            }),
            StatusChange::kVisible);
  EXPECT_EQ(visible([](api::WeightedJobStatus& s) { s.phase = api::JobPhase::kSucceeded; }),
            StatusChange::kVisible);
}

// The first items done are seen within the status interval, not after the
// first progress step: kubectl ballast top moves from the first report.
TEST(StatusPacingTest, TheFirstProgressIsVisible) {
  api::WeightedJobStatus written = RunningStatus();
  written.completed_items = 0;
  written.completed_cost = 0;
  api::WeightedJobStatus now = written;
  now.completed_items = 3;
  now.completed_cost = 2.5;
  EXPECT_EQ(ClassifyStatusChange(written, now), StatusChange::kVisible);
  written.completed_items.reset();
  EXPECT_EQ(ClassifyStatusChange(written, now), StatusChange::kVisible);
  written.completed_items = 3;
  now.completed_items = 9;
  EXPECT_EQ(ClassifyStatusChange(written, now), StatusChange::kProgress) << "after it, progress";
}

TEST(StatusPacingTest, ProgressMovedIsTheMoreOfItemsAndCostInPointsOfTheJob) {
  const api::WeightedJobStatus written = RunningStatus();  // 60 of 600 items, cost 60
  api::WeightedJobStatus now = written;
  EXPECT_DOUBLE_EQ(ProgressMoved(written, now), 0);
  now.completed_items = 120;  // 10 points of the items
  now.completed_cost = 90;    // 5 points of the cost
  EXPECT_DOUBLE_EQ(ProgressMoved(written, now), 10);
  now.completed_cost = 210;  // cheap items first: 25 points of the cost
  EXPECT_DOUBLE_EQ(ProgressMoved(written, now), 25);
  // A checkpoint refused starts the job again from 0: that moved too.
  now.completed_items = 0;
  now.completed_cost = 0;
  EXPECT_DOUBLE_EQ(ProgressMoved(written, now), 10);
  // No cost reported: the items alone.
  now.completed_cost.reset();
  now.completed_items = 210;
  EXPECT_DOUBLE_EQ(ProgressMoved(written, now), 25);
  // A status that does not say how many items the job has moved nowhere.
  now.items.reset();
  EXPECT_DOUBLE_EQ(ProgressMoved(written, now), 0);
}

// Costs in the job's own units (bytes here) count over its total cost.
TEST(StatusPacingTest, ProgressByCostCountsOverTheJobsTotalCost) {
  api::WeightedJobStatus written = RunningStatus();  // 60 of 600 items
  written.completed_cost = 6000;
  written.total_cost = 60000;
  api::WeightedJobStatus now = written;
  now.completed_cost = 21000;  // 25 points of the cost
  EXPECT_DOUBLE_EQ(ProgressMoved(written, now), 25);
}

TEST(StatusPacingTest, ProgressWaitsForAStepOrItsIntervalOtherChangesForTheStatusInterval) {
  const StatusPacing pacing;  // the defaults: 2 s, 25 points, 60 s
  // Progress alone, less than a step: at the progress interval.
  EXPECT_FALSE(StatusWriteDue(StatusChange::kProgress, milliseconds(59999), 24.9, false, pacing));
  EXPECT_TRUE(StatusWriteDue(StatusChange::kProgress, seconds(60), 0.1, false, pacing));
  // A step: at once, but no sooner than the status interval.
  EXPECT_TRUE(StatusWriteDue(StatusChange::kProgress, seconds(2), 25, false, pacing));
  EXPECT_FALSE(StatusWriteDue(StatusChange::kProgress, milliseconds(1999), 80, false, pacing));
  // Other changes a reader sees: the status interval, however far progress moved.
  EXPECT_FALSE(StatusWriteDue(StatusChange::kVisible, milliseconds(1999), 0, false, pacing));
  EXPECT_TRUE(StatusWriteDue(StatusChange::kVisible, seconds(2), 0, false, pacing));
  // A transition goes out at once, whatever else changed with it.
  EXPECT_TRUE(StatusWriteDue(StatusChange::kProgress, seconds(0), 0, true, pacing));
  EXPECT_TRUE(StatusWriteDue(StatusChange::kVisible, seconds(0), 0, true, pacing));
  // Nothing changed: nothing is written, however long ago the last write.
  EXPECT_FALSE(StatusWriteDue(StatusChange::kNone, std::chrono::hours(1), 100, true, pacing));
}

// The restart bound (status_pacing.h): after each pass, the progress left
// unwritten is less than progress_interval old, and less than a step or
// status_interval old, whichever is more (the bound's added pass is the time
// to the next pass; here they come every 500 ms). A job at a steady rate.
TEST(StatusPacingTest, UnwrittenProgressStaysWithinTheStatedBound) {
  const StatusPacing pacing;
  struct Job {
    double seconds;  // the job's length
    int writes_at_most;
  };
  // A 90 s job: its steps, three (25, 50, 75 %). A 10 min job: a write a
  // minute, nine. A 10 s job: its steps, no sooner than 2 s apart.
  for (const Job& job : {Job{90, 3}, Job{600, 9}, Job{10, 3}}) {
    const auto length = milliseconds(static_cast<int64_t>(job.seconds * 1000));
    const milliseconds step_time(static_cast<int64_t>(job.seconds * pacing.progress_step * 10));
    const milliseconds bound =
        std::min(pacing.progress_interval, std::max(pacing.status_interval, step_time));
    const auto points = [&](milliseconds t) { return 100.0 * t.count() / length.count(); };
    milliseconds written(0);
    int writes = 0;
    for (milliseconds t(0); t < length; t += milliseconds(500)) {
      if (StatusWriteDue(StatusChange::kProgress, t - written, points(t) - points(written), false,
                         pacing)) {
        written = t;
        ++writes;
      }
      EXPECT_LT(t - written, bound) << job.seconds << " s job at " << t.count() << " ms";
    }
    EXPECT_LE(writes, job.writes_at_most) << job.seconds << " s job";
    EXPECT_GE(writes, job.writes_at_most - 1) << job.seconds << " s job";
  }
}

}  // namespace
}  // namespace ballast::controller
