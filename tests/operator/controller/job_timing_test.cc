// JobTiming (operator/controller/job_timing.h): end to end against compute,
// and the time before the first report split at the moments Kubernetes and
// the operator record.
#include "operator/controller/job_timing.h"

#include <gtest/gtest.h>

namespace ballast::controller {
namespace {

using nlohmann::json;

// A 50-item exec job of the real-node test bed: applied at 100, taken in at
// 100.2, started at 100.5, its first worker's pod scheduled at 101, its
// sandbox ready at 102, its init container (the bundle) done at 104, its
// worker container up at 127 (the image pulled), the first report at 128,
// the last result at 129.
TimingMoments ShortJob() {
  TimingMoments moments;
  moments.created = 100;
  moments.accepted = 100.2;
  moments.started = 100.5;
  moments.scheduled = 101;
  moments.sandbox_ready = 102;
  moments.init_finished = 104;
  moments.container_started = 127;
  moments.first_report = 128;
  moments.finished = 129;
  moments.first_node = "pi5-1";
  return moments;
}

TEST(JobTimingTest, EndToEndIsComputePlusTheNamedPartsBeforeTheFirstReport) {
  const JobTiming timing = ComputeTiming(ShortJob(), 0.9);
  EXPECT_DOUBLE_EQ(timing.end_to_end_s, 29);
  EXPECT_DOUBLE_EQ(*timing.compute_s, 1);
  EXPECT_DOUBLE_EQ(*timing.compute_efficiency, 0.9);
  EXPECT_EQ(TimingToJson(timing), json::parse(R"({
    "endToEndSeconds": 29, "computeSeconds": 1, "computeEfficiency": 0.9,
    "firstReportNode": "pi5-1",
    "beforeFirstReport": {"operatorSeconds": 0.2, "waitingForNodesSeconds": 0.3,
                          "podSchedulingSeconds": 0.5, "podStartSeconds": 1,
                          "initContainersSeconds": 2, "containerStartSeconds": 23,
                          "workerStartSeconds": 1}})"));
  EXPECT_EQ(TimingSummary(timing),
            "29.0 s end to end, 1.0 s computing; before it mostly container start 23.0 s");
}

// Kubernetes records whole seconds: a pod scheduled "before" the session
// started (100 < 100.5) is clamped, so no part is negative and the parts
// still add up.
TEST(JobTimingTest, MomentsOutOfOrderAreClampedSoThePartsStillAddUp) {
  TimingMoments moments = ShortJob();
  moments.scheduled = 100;
  moments.container_started = 200;  // after the first report: clamped to it
  const JobTiming timing = ComputeTiming(moments, 0.9);
  double sum = 0;
  for (const TimingPart& part : timing.before_first_report) {
    EXPECT_GE(part.seconds, 0) << part.key;
    sum += part.seconds;
  }
  EXPECT_DOUBLE_EQ(sum + *timing.compute_s, timing.end_to_end_s);
  EXPECT_DOUBLE_EQ(timing.before_first_report[2].seconds, 0) << "podScheduling";
  EXPECT_DOUBLE_EQ(timing.before_first_report[4].seconds, 2) << "initContainers";
  EXPECT_DOUBLE_EQ(timing.before_first_report[5].seconds, 24) << "containerStart";
  EXPECT_DOUBLE_EQ(timing.before_first_report[6].seconds, 0) << "workerStart";
}

// An operator that restarted mid-job does not know when the job was taken
// in; the pod is gone: their time counts in the next part known.
TEST(JobTimingTest, AnUnknownMomentLeavesItsPartOutAndItsTimeToTheNext) {
  TimingMoments moments = ShortJob();
  moments.accepted.reset();
  moments.scheduled.reset();
  moments.sandbox_ready.reset();
  moments.init_finished.reset();
  moments.container_started.reset();
  const json parts = TimingToJson(ComputeTiming(moments, 0.9))["beforeFirstReport"];
  EXPECT_EQ(parts, json::parse(R"({"waitingForNodesSeconds": 0.5, "workerStartSeconds": 27.5})"));

  moments.created.reset();  // from the session's start only
  const JobTiming from_start = ComputeTiming(moments, 0.9);
  EXPECT_DOUBLE_EQ(from_start.end_to_end_s, 28.5);
  EXPECT_EQ(TimingToJson(from_start)["beforeFirstReport"],
            json::parse(R"({"workerStartSeconds": 27.5})"));
}

// A resumed job's last session is a part of its compute, against an ideal of
// the whole: it gets end to end only, never a computeEfficiency above 1
// (issue 46: 1.39-1.45 after an operator restart).
TEST(JobTimingTest, AResumedJobOrOneWithoutReportsIsNotSplit) {
  TimingMoments moments = ShortJob();
  moments.resumed = true;
  const JobTiming resumed = ComputeTiming(moments, 5.0);
  EXPECT_TRUE(resumed.before_first_report.empty());
  EXPECT_DOUBLE_EQ(resumed.end_to_end_s, 29);
  EXPECT_FALSE(resumed.compute_s);
  EXPECT_FALSE(resumed.compute_efficiency);
  moments.first_report.reset();
  const JobTiming silent = ComputeTiming(moments, 0.9);
  EXPECT_FALSE(silent.compute_s);
  EXPECT_EQ(TimingToJson(silent), json::parse(R"({"endToEndSeconds": 29})"));
  EXPECT_EQ(TimingSummary(silent), "29.0 s end to end");
}

}  // namespace
}  // namespace ballast::controller
