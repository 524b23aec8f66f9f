// The per-job efficiency gauge (operator/runtime/efficiency_metrics.h):
// after a job finishes it carries the very figure its status holds, labelled
// with what that figure is measured against, and a job that is not finished,
// has no efficiency or is gone has no series.
#include "operator/runtime/efficiency_metrics.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "tests/operator/controller/decide_world.h"

namespace ballast::runtime {
namespace {

using nlohmann::json;

using CachedJobs = std::vector<std::shared_ptr<const json>>;

std::shared_ptr<const json> Cached(json job) {
  return std::make_shared<const json>(std::move(job));
}

// The series' labels, by name.
std::map<std::string, std::string> SeriesLabels(const prometheus::ClientMetric& metric) {
  std::map<std::string, std::string> labels;
  for (const auto& label : metric.label) labels[label.name] = label.value;
  return labels;
}

// A job `name` of namespace "lab" with `status`.
json FinishedJob(const std::string& name, json status) {
  return {{"metadata", {{"name", name}, {"namespace", "lab"}}},
          {"spec", {{"workload", {{"exec", {{"command", json::array({"true"})}}}}}}},
          {"status", std::move(status)}};
}

TEST(EfficiencyMetricsTest, AFinishedJobsGaugeIsItsStatusFigureAgainstItsReference) {
  controller::decide_test::World world = controller::decide_test::Running();
  world.view = controller::decide_test::View(2000, /*done=*/true);
  const json status = controller::decide_test::S(world.Pass());
  ASSERT_EQ(status["phase"], "Succeeded");
  ASSERT_TRUE(status["efficiency"].is_number());
  json job = world.job;
  job["status"] = status;

  const auto family = JobEfficiencyFamily({Cached(job)});
  ASSERT_TRUE(family.has_value());
  EXPECT_EQ(family->name, "ballast_job_efficiency");
  EXPECT_EQ(family->type, prometheus::MetricType::Gauge);
  ASSERT_EQ(family->metric.size(), 1u);
  EXPECT_EQ(family->metric[0].gauge.value, status["efficiency"].get<double>());
  const std::map<std::string, std::string> want = {{"weightedjob", "p"},
                                                   {"job_namespace", "ns"},
                                                   {"workload", "primes"},
                                                   {"reference", "declared speeds"}};
  EXPECT_EQ(SeriesLabels(family->metric[0]), want);
}

TEST(EfficiencyMetricsTest, ARunningJobHasNoSeriesUntilItsStatusIsFinished) {
  controller::decide_test::World world = controller::decide_test::Running();
  json job = world.job;
  job["status"] = controller::decide_test::S(world.Pass());
  ASSERT_EQ(job["status"]["phase"], "Running");
  EXPECT_FALSE(JobEfficiencyFamily({Cached(job)}).has_value());
  EXPECT_FALSE(JobEfficiencyFamily({Cached(world.job)}).has_value()) << "no status at all";
  EXPECT_FALSE(JobEfficiencyFamily({}).has_value()) << "no job: no family";
}

TEST(EfficiencyMetricsTest, AFailedJobHasASeriesOnlyWhenItsStatusHasAnEfficiency) {
  const CachedJobs jobs = {
      Cached(FinishedJob(
          "measured",
          {{"phase", "Failed"}, {"efficiency", 0.61}, {"efficiencyReference", "CPU budgets"}})),
      Cached(FinishedJob("refused", {{"phase", "Failed"}})),
      Cached(FinishedJob(
          "estimated",
          {{"phase", "Succeeded"}, {"efficiency", 0.9}, {"efficiencyReference", "estimate"}})),
  };
  const auto family = JobEfficiencyFamily(jobs);
  ASSERT_TRUE(family.has_value());
  ASSERT_EQ(family->metric.size(), 2u);
  EXPECT_EQ(SeriesLabels(family->metric[0])["weightedjob"], "measured");
  EXPECT_EQ(SeriesLabels(family->metric[0])["reference"], "CPU budgets");
  EXPECT_EQ(SeriesLabels(family->metric[0])["workload"], "exec");
  EXPECT_EQ(family->metric[0].gauge.value, 0.61);
  EXPECT_EQ(SeriesLabels(family->metric[1])["weightedjob"], "estimated");
  EXPECT_EQ(SeriesLabels(family->metric[1])["reference"], "estimate");
}

// The series end with the job: the cache no longer holds a deleted job.
TEST(EfficiencyMetricsTest, ADeletedJobsSeriesIsGoneWithItFromTheCache) {
  const auto a = Cached(FinishedJob("a", {{"phase", "Succeeded"}, {"efficiency", 0.95}}));
  const auto b = Cached(FinishedJob("b", {{"phase", "Succeeded"}, {"efficiency", 0.97}}));
  ASSERT_EQ(JobEfficiencyFamily({a, b})->metric.size(), 2u);
  const auto family = JobEfficiencyFamily({b});
  ASSERT_EQ(family->metric.size(), 1u);
  EXPECT_EQ(SeriesLabels(family->metric[0])["weightedjob"], "b");
}

TEST(EfficiencyMetricsTest, FieldsOfTheWrongTypeLeaveTheJobOut) {
  const CachedJobs jobs = {
      Cached(FinishedJob("string", {{"phase", "Succeeded"}, {"efficiency", "0.9"}})),
      Cached(FinishedJob("phase", {{"phase", 3}, {"efficiency", 0.9}})),
      Cached(json{{"metadata", {{"namespace", "lab"}}},
                  {"status", {{"phase", "Succeeded"}, {"efficiency", 0.9}}}}),
      Cached(json{{"status", "Succeeded"}}),
      Cached(json::array()),
      nullptr,
  };
  EXPECT_FALSE(JobEfficiencyFamily(jobs).has_value());
}

// ballast_node_baseline_ratio: per node and workload kind, the ratio of the
// finished job that judged the node last; a job that judged nothing adds
// nothing, and the series go with the jobs.
json JudgedJob(const std::string& name, const std::string& completed, json rows) {
  json job = FinishedJob(
      name, {{"phase", "Succeeded"}, {"completionTime", completed}, {"nodes", std::move(rows)}});
  return job;
}

// Two exec jobs in different images are judged apart: each node's ratio per
// image, the label the coordinator's speeds carry (HistoryKey).
TEST(EfficiencyMetricsTest, ExecJobsInTwoImagesKeepTwoBaselineRatios) {
  json shell =
      JudgedJob("a", "2027-01-15T08:00:00Z", {{{"name", "pi3b-0"}, {"baselineRatio", 1.0}}});
  json python =
      JudgedJob("b", "2027-01-15T09:00:00Z", {{{"name", "pi3b-0"}, {"baselineRatio", 0.9}}});
  shell["spec"] = {{"items", 2},
                   {"workload", {{"exec", {{"command", {"run"}}, {"image", "lab/shell:1"}}}}}};
  python["spec"] = {{"items", 2},
                    {"workload", {{"exec", {{"command", {"run"}}, {"image", "lab/python:3"}}}}}};
  const auto family = NodeBaselineFamily({Cached(shell), Cached(python)});
  ASSERT_TRUE(family.has_value());
  ASSERT_EQ(family->metric.size(), 2u);
  EXPECT_EQ(SeriesLabels(family->metric[0]).at("workload"), "exec:lab/python");
  EXPECT_EQ(family->metric[0].gauge.value, 0.9);
  EXPECT_EQ(SeriesLabels(family->metric[1]).at("workload"), "exec:lab/shell");
  EXPECT_EQ(family->metric[1].gauge.value, 1.0);
}

TEST(EfficiencyMetricsTest, ANodesBaselineRatioIsItsLastJudgedJobs) {
  const json older = JudgedJob("a", "2027-01-15T08:00:00Z",
                               {{{"name", "pi4b-1"}, {"baselineRatio", 1.02}},
                                {{"name", "pi3b-0"}, {"baselineRatio", 0.97}}});
  const json newer = JudgedJob("b", "2027-01-15T09:00:00Z",
                               {{{"name", "pi4b-1"}, {"baselineRatio", 0.52}},
                                {{"name", "pi5-0"}, {"measuredSpeed", 90}}});  // not judged
  json running = JudgedJob("c", "", {{{"name", "pi4b-1"}, {"baselineRatio", 2.0}}});
  running["status"]["phase"] = "Running";
  const auto family = NodeBaselineFamily({Cached(newer), Cached(running), Cached(older)});
  ASSERT_TRUE(family.has_value());
  EXPECT_EQ(family->name, "ballast_node_baseline_ratio");
  EXPECT_EQ(family->type, prometheus::MetricType::Gauge);
  ASSERT_EQ(family->metric.size(), 2u);
  EXPECT_EQ(SeriesLabels(family->metric[0]),
            (std::map<std::string, std::string>{{"node", "pi3b-0"}, {"workload", "exec"}}));
  EXPECT_EQ(family->metric[0].gauge.value, 0.97);
  EXPECT_EQ(SeriesLabels(family->metric[1]),
            (std::map<std::string, std::string>{{"node", "pi4b-1"}, {"workload", "exec"}}));
  EXPECT_EQ(family->metric[1].gauge.value, 0.52);  // b finished last
  // b deleted: a's figure again.
  EXPECT_EQ(NodeBaselineFamily({Cached(older)})->metric[1].gauge.value, 1.02);
  EXPECT_FALSE(NodeBaselineFamily({Cached(running)}).has_value());
  EXPECT_FALSE(NodeBaselineFamily({}).has_value());
}

TEST(EfficiencyMetricsTest, ADecidedJobsJudgmentReachesTheGauge) {
  controller::decide_test::World world;
  world.history = history::HistoryLookup{
      {{"pi3b-worker", 1.0, 4, 60}, {"pi4b-master", 1.0, 4, 60}, {"pi4b-worker", 1.0, 4, 60}},
      "ConfigMap ns/h",
      ""};
  world.Pass();  // registers
  world.view = controller::decide_test::View(0);
  world.Pass();  // creates the pods
  for (size_t i = 0; i < controller::decide_test::kNodes.size(); ++i) {
    world.pods.push_back(controller::decide_test::Pod(controller::decide_test::kNodes[i], "Running",
                                                      "pod-uid-" + std::to_string(i)));
  }
  world.Pass();
  world.view = controller::decide_test::View(2000, /*done=*/true);
  world.view->workers[0].cost = 448;  // 56 per busy second against 80: 0.70
  world.view->workers[1].cost = 640;
  world.view->workers[2].cost = 640;
  json job = world.job;
  job["status"] = controller::decide_test::S(world.Pass());
  const auto family = NodeBaselineFamily({Cached(job)});
  ASSERT_TRUE(family.has_value());
  ASSERT_EQ(family->metric.size(), 3u);
  EXPECT_EQ(SeriesLabels(family->metric[0]).at("node"), "pi3b-worker");
  EXPECT_EQ(SeriesLabels(family->metric[0]).at("workload"), "primes");
  EXPECT_EQ(family->metric[0].gauge.value, 0.7);
}

TEST(EfficiencyMetricsTest, AFinishedJobsEnergyIsItsStatusFigure) {
  const json done = FinishedJob(
      "e", {{"phase", "Succeeded"}, {"energy", {{"joules", 4537.5}, {"complete", true}}}});
  const json without = FinishedJob("f", {{"phase", "Succeeded"}});
  json running = done;
  running["status"]["phase"] = "Running";
  const auto family = JobEnergyFamily({Cached(without), Cached(running), Cached(done)});
  ASSERT_TRUE(family.has_value());
  EXPECT_EQ(family->name, "ballast_job_energy_joules");
  ASSERT_EQ(family->metric.size(), 1u);
  EXPECT_EQ(family->metric[0].gauge.value, 4537.5);
  const std::map<std::string, std::string> want = {
      {"weightedjob", "e"}, {"job_namespace", "lab"}, {"workload", "exec"}};
  EXPECT_EQ(SeriesLabels(family->metric[0]), want);
  EXPECT_FALSE(JobEnergyFamily({Cached(without)}).has_value());
}

}  // namespace
}  // namespace ballast::runtime
