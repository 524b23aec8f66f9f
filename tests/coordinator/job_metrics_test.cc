// The coordinator's per-job series (coordinator/job_metrics.h): their
// labels, values and absences, built from views as a scrape sees them.
#include "coordinator/job_metrics.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "coordinator/server.h"
#include "tests/support/primes_workload.h"

namespace ballast::coordinator {
namespace {

using prometheus::MetricFamily;

WorkerView Worker(const std::string& name, double prior, double cost, double busy_s) {
  WorkerView worker;
  worker.name = name;
  worker.prior_speed = prior;
  worker.cost = cost;
  worker.items = static_cast<uint64_t>(cost);
  worker.busy_s = busy_s;
  worker.contacted = busy_s > 0;
  worker.last_contact = 4;
  return worker;
}

// A job of 1000 items at view time 10 s (unix 1010 s): a did 300 cost units
// in 3 s, b 100 in 2 s, c nothing yet.
JobSample Sample() {
  JobSample sample;
  sample.view.items = 1000;
  sample.view.completed = 400;
  sample.view.started_at = 0;
  sample.view.policy.steals = 2;
  sample.view.workers = {Worker("a", 5, 300, 3), Worker("b", 5, 100, 2), Worker("c", 1, 0, 0)};
  sample.name = "primes";
  sample.ns = "lab";
  sample.history_key = history::HistoryKey(workload::WorkloadKind::kPrimes);
  sample.view_now = 10;
  sample.unix_now = 1010;
  return sample;
}

const MetricFamily* Find(const std::vector<MetricFamily>& families, const std::string& name) {
  for (const auto& family : families) {
    if (family.name == name) return &family;
  }
  return nullptr;
}

// The family's values by the node label ("" for job series).
std::map<std::string, double> Values(const std::vector<MetricFamily>& families,
                                     const std::string& name) {
  std::map<std::string, double> values;
  const MetricFamily* family = Find(families, name);
  if (!family) return values;
  for (const auto& metric : family->metric) {
    std::string node;
    for (const auto& label : metric.label) {
      if (label.name == "node") node = label.value;
    }
    values[node] =
        family->type == prometheus::MetricType::Counter ? metric.counter.value : metric.gauge.value;
  }
  return values;
}

TEST(JobMetricsTest, MeasuredSpeedIsCostOverBusySeconds) {
  EXPECT_DOUBLE_EQ(MeasuredSpeed(Worker("a", 1, 300, 3)), 100);
  EXPECT_EQ(MeasuredSpeed(Worker("c", 1, 0, 0)), 0);
  EXPECT_EQ(MeasuredSpeed(Worker("d", 1, 5, 0)), 0);  // cost without time: nothing measured
}

TEST(JobMetricsTest, PredictedFinishIsRemainingCostOverTheSpeedsNotLost) {
  JobSample sample = Sample();
  // 600 cost units left at 100 + 50 per second: 4 s after now.
  EXPECT_DOUBLE_EQ(PredictedFinish(sample.view, 10), 14);
  sample.view.workers[1].lost = 1;  // b is gone: 600 at 100 per second
  EXPECT_DOUBLE_EQ(PredictedFinish(sample.view, 10), 16);
  sample.view.workers[1].holds_lease = true;  // but back with a lease
  EXPECT_DOUBLE_EQ(PredictedFinish(sample.view, 10), 14);
  sample.view.done = true;
  sample.view.finished_at = 12;
  EXPECT_DOUBLE_EQ(PredictedFinish(sample.view, 20), 12);
}

TEST(JobMetricsTest, PredictedFinishCountsResumedItemsAsDone) {
  JobSample sample = Sample();
  sample.view.completed = 600;  // 200 from a checkpoint, at the mean cost of 1
  EXPECT_DOUBLE_EQ(PredictedFinish(sample.view, 10), 10 + 400.0 / 150);
}

TEST(JobMetricsTest, NoPredictionBeforeAnySpeedIsMeasured) {
  JobSample sample = Sample();
  for (auto& worker : sample.view.workers) worker.busy_s = 0;
  EXPECT_LT(PredictedFinish(sample.view, 10), 0);
  const auto families = JobMetricFamilies({sample});
  EXPECT_EQ(Find(families, "ballast_job_predicted_finish_timestamp_seconds"), nullptr);
  EXPECT_EQ(Find(families, "ballast_node_speed_cost_units_per_second"), nullptr);
}

// Prometheus gives every scraped series `job` and `namespace` of its own and,
// unless the scrape honours a series' labels, renames the series' own; a
// shared Prometheus may refuse to honour them. No series names its
// WeightedJob by those labels (docs/metrics.md, "Labels").
TEST(JobMetricsTest, NoSeriesCarriesAPrometheusTargetLabel) {
  const auto families = JobMetricFamilies({Sample()});
  ASSERT_GT(families.size(), 20u);
  for (const MetricFamily& family : families) {
    for (const auto& metric : family.metric) {
      for (const auto& label : metric.label) {
        for (const char* target : {"job", "namespace", "instance", "pod", "service"}) {
          EXPECT_NE(label.name, target) << family.name;
        }
      }
    }
  }
}

TEST(JobMetricsTest, SeriesCarryTheJobsLabelsAndValues) {
  const auto families = JobMetricFamilies({Sample()});
  const MetricFamily* speed = Find(families, "ballast_node_speed_cost_units_per_second");
  ASSERT_NE(speed, nullptr);
  EXPECT_EQ(speed->type, prometheus::MetricType::Gauge);
  ASSERT_EQ(speed->metric.size(), 2u);  // c has measured nothing
  const std::vector<prometheus::ClientMetric::Label> labels = {
      {"weightedjob", "primes"}, {"job_namespace", "lab"}, {"workload", "primes"}, {"node", "a"}};
  EXPECT_EQ(speed->metric[0].label, labels);
  EXPECT_EQ(Values(families, "ballast_node_speed_cost_units_per_second"),
            (std::map<std::string, double>{{"a", 100}, {"b", 50}}));
  EXPECT_EQ(Values(families, "ballast_node_weight"),
            (std::map<std::string, double>{{"a", 5}, {"b", 5}, {"c", 1}}));
  EXPECT_EQ(Values(families, "ballast_job_progress_ratio").at(""), 0.4);
  EXPECT_EQ(Values(families, "ballast_job_steals_total").at(""), 2);
  EXPECT_EQ(Find(families, "ballast_job_steals_total")->type, prometheus::MetricType::Counter);
  // Times of the view become unix seconds: started at view time 0.
  EXPECT_EQ(Values(families, "ballast_job_started_timestamp_seconds").at(""), 1000);
  EXPECT_EQ(Values(families, "ballast_job_predicted_finish_timestamp_seconds").at(""), 1014);
  EXPECT_EQ(Values(families, "ballast_node_last_report_timestamp_seconds"),
            (std::map<std::string, double>{{"a", 1004}, {"b", 1004}}));
  // Not finished: no finish yet.
  EXPECT_EQ(Find(families, "ballast_job_finished_timestamp_seconds"), nullptr);
}

// The compute starts at the first report of any worker; the dashboards
// set it against the start (pods starting, images pulled) and the finish.
TEST(JobMetricsTest, TheFirstReportAndTheFailedItemsAreExported) {
  JobSample sample = Sample();
  sample.view.workers[0].first_contact = 1.5;
  sample.view.workers[1].first_contact = 0.75;
  sample.view.result = workload::Result::ExecSucceeded(10);
  ASSERT_TRUE(sample.view.result.Merge(workload::Result::ExecFailed({7, 9}, 1, 3)).ok());
  const auto families = JobMetricFamilies({sample});
  EXPECT_EQ(Values(families, "ballast_job_first_report_timestamp_seconds").at(""), 1000.75);
  EXPECT_EQ(Values(families, "ballast_job_failed_items").at(""), 2);
  for (auto& worker : sample.view.workers) worker.contacted = false;
  EXPECT_EQ(Find(JobMetricFamilies({sample}), "ballast_job_first_report_timestamp_seconds"),
            nullptr);
}

TEST(JobMetricsTest, AFinishedJobHasItsFinish) {
  JobSample sample = Sample();
  sample.view.done = true;
  sample.view.finished_at = 8;
  const auto families = JobMetricFamilies({sample});
  EXPECT_EQ(Values(families, "ballast_job_finished_timestamp_seconds").at(""), 1008);
  EXPECT_EQ(Values(families, "ballast_job_predicted_finish_timestamp_seconds").at(""), 1008);
}

// What the history query dates a node's history by: one series per workload
// kind and node across the hosted jobs, the newest measurement of them.
TEST(JobMetricsTest, SpeedTimestampIsTheNewestMeasurementPerKindAndNode) {
  JobSample first = Sample();  // a and b measured at view time 3 and 2: unix 1003, 1002
  first.view.workers[0].last_measured = 3;
  first.view.workers[1].last_measured = 2;
  first.view.workers[2].last_measured = 9;  // c: no speed, so no measurement
  JobSample second = Sample();
  second.name = "primes-2";
  second.unix_now = 1100;  // its view time 5: unix 1095
  second.view.workers[0].last_measured = 5;
  second.view.workers[1].busy_s = 0;  // b has no speed in this job
  second.view.workers[1].last_measured = 9;
  second.view.workers[2] = Worker("c", 1, 50, 1);
  second.view.workers[2].last_measured = 4;  // unix 1094
  JobSample other = Sample();
  other.name = "matmul";
  other.history_key = history::HistoryKey(workload::WorkloadKind::kMatmul);
  other.view.workers[0].last_measured = 1;
  const auto families = JobMetricFamilies({first, second, other});
  const MetricFamily* measured = Find(families, "ballast_node_speed_timestamp_seconds");
  ASSERT_NE(measured, nullptr);
  EXPECT_EQ(measured->type, prometheus::MetricType::Gauge);
  std::map<std::pair<std::string, std::string>, double> values;
  for (const auto& metric : measured->metric) {
    ASSERT_EQ(metric.label.size(), 2u);  // no job: one series per kind and node
    EXPECT_EQ(metric.label[0].name, "workload");
    EXPECT_EQ(metric.label[1].name, "node");
    values[{metric.label[0].value, metric.label[1].value}] = metric.gauge.value;
  }
  const std::map<std::pair<std::string, std::string>, double> expected = {
      {{"matmul", "a"}, 1001},
      {{"matmul", "b"}, 1000},  // b: 0 is the job's start
      {{"primes", "a"}, 1095},
      {{"primes", "b"}, 1002},
      {{"primes", "c"}, 1094}};
  EXPECT_EQ(values, expected);
  // A measurement history leaves out does not date the node: here b, brief.
  second.view.workers[1].busy_s = 0.2;
  second.view.workers[1].cost = 10;
  first.view.workers[1].busy_s = 0.2;
  std::map<std::pair<std::string, std::string>, double> dated;
  for (const auto& metric :
       Find(JobMetricFamilies({first, second}), "ballast_node_speed_timestamp_seconds")->metric) {
    dated[{metric.label[0].value, metric.label[1].value}] = metric.gauge.value;
  }
  EXPECT_FALSE(dated.contains({"primes", "b"}));
  EXPECT_TRUE(dated.contains({"primes", "a"}));
}

// Prometheus's history reads the recorded speed: the measured speed where
// history counts it, 0 where it leaves the node out (recorded_speeds.h).
TEST(JobMetricsTest, TheRecordedSpeedIsZeroWhereHistoryLeavesTheNodeOut) {
  JobSample sample = Sample();                             // a 100, b 50, c nothing measured
  sample.view.workers.push_back(Worker("d", 1, 30, 0.3));  // brief
  sample.view.workers.push_back(Worker("e", 1, 40, 2));
  sample.view.sharing_sampled_s = 8;
  sample.view.workers.back().shared_s = 4;  // e: shared half the run
  auto families = JobMetricFamilies({sample});
  EXPECT_EQ(Values(families, "ballast_node_recorded_speed_cost_units_per_second"),
            (std::map<std::string, double>{{"a", 100}, {"b", 50}, {"d", 0}, {"e", 0}}));
  EXPECT_EQ(Find(families, "ballast_node_recorded_speed_cost_units_per_second")->type,
            prometheus::MetricType::Gauge);
  // Left alone, a's speed says nothing: every node is at 0.
  sample.view.workers[1].busy_s = 0.1;
  families = JobMetricFamilies({sample});
  EXPECT_EQ(Values(families, "ballast_node_recorded_speed_cost_units_per_second"),
            (std::map<std::string, double>{{"a", 0}, {"b", 0}, {"d", 0}, {"e", 0}}));
  // The measured speed itself is exported as before.
  EXPECT_EQ(Values(families, "ballast_node_speed_cost_units_per_second").at("e"), 20);
}

// With the history the job's priors came from, a node measured Slow against
// its own baseline is exported at the edge of its band, as the operator's
// ConfigMap store enters it (recorded_speeds.h, EnteredSpeeds): c at 40
// where a and b at 80 put its baseline at 80 is entered at 80 * 0.75.
TEST(JobMetricsTest, TheRecordedSpeedOfASlowNodeIsWinsorizedAgainstItsBaseline) {
  JobSample sample = Sample();
  sample.view.workers = {Worker("a", 5, 800, 10), Worker("b", 5, 800, 10), Worker("c", 5, 400, 10)};
  auto families = JobMetricFamilies({sample});
  EXPECT_EQ(Values(families, "ballast_node_recorded_speed_cost_units_per_second"),
            (std::map<std::string, double>{{"a", 80}, {"b", 80}, {"c", 40}}));
  sample.baseline = {{"a", 1.0, 4, 60}, {"b", 1.0, 4, 60}, {"c", 1.0, 4, 60}};
  families = JobMetricFamilies({sample});
  const auto entered = Values(families, "ballast_node_recorded_speed_cost_units_per_second");
  EXPECT_EQ(entered.at("a"), 80);
  EXPECT_EQ(entered.at("b"), 80);
  EXPECT_NEAR(entered.at("c"), 60, 1e-9);
  // The measured speed is exported as measured.
  EXPECT_EQ(Values(families, "ballast_node_speed_cost_units_per_second").at("c"), 40);
  // A lower --node-slow-ratio: 0.5 is not slow below 0.45.
  sample.deviation.slow_ratio = 0.45;
  families = JobMetricFamilies({sample});
  EXPECT_EQ(Values(families, "ballast_node_recorded_speed_cost_units_per_second").at("c"), 40);
}

TEST(JobMetricsTest, NoJobsNoFamilies) { EXPECT_TRUE(JobMetricFamilies({}).empty()); }

// The label sets of a family the server collects; empty when it has none.
std::vector<std::vector<prometheus::ClientMetric::Label>> LabelSets(const Server& server,
                                                                    const std::string& name) {
  std::vector<std::vector<prometheus::ClientMetric::Label>> sets;
  for (const auto& family : server.CollectMetrics()) {
    if (family.name != name) continue;
    for (const auto& metric : family.metric) sets.push_back(metric.label);
  }
  return sets;
}

// Regression (series of finished jobs must not accumulate): a job's series
// exist while the server hosts it and end when it is removed.
TEST(JobMetricsTest, AJobsSeriesEndWhenTheServerForgetsIt) {
  auto server = Server::Start({});
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  JobConfig config;
  config.id = "lab.primes";
  config.token = "secret";
  config.workload = testing::PrimesWorkload(1000);
  config.policy = {balance::SelfSchedOptions{}, ""};
  config.workers = {{"pi4b-0", 5}, {"pi3b-0", 1}};
  config.metric_name = "primes";
  config.metric_namespace = "lab";
  ASSERT_TRUE((*server)->AddJob(config).ok());
  const std::vector<prometheus::ClientMetric::Label> job = {
      {"weightedjob", "primes"}, {"job_namespace", "lab"}, {"workload", "primes"}};
  EXPECT_EQ(LabelSets(**server, "ballast_job_items"),
            (std::vector<std::vector<prometheus::ClientMetric::Label>>{job}));
  EXPECT_EQ(LabelSets(**server, "ballast_node_weight").size(), 2u);
  (*server)->RemoveJob(config.id);
  EXPECT_TRUE(LabelSets(**server, "ballast_job_items").empty());
  EXPECT_TRUE(LabelSets(**server, "ballast_node_weight").empty());
  // The process's own series stay.
  EXPECT_EQ(LabelSets(**server, "ballast_coordinator_jobs").size(), 1u);
}

// Without metric_name the id names the job; the namespace label is empty.
TEST(JobMetricsTest, AJobWithoutAMetricNameIsNamedByItsId) {
  auto server = Server::Start({});
  ASSERT_TRUE(server.ok());
  JobConfig config;
  config.id = "run-1";
  config.token = "secret";
  config.workload = testing::PrimesWorkload(1000);
  config.policy = {balance::SelfSchedOptions{}, ""};
  config.workers = {{"a", 1}};
  ASSERT_TRUE((*server)->AddJob(config).ok());
  const std::vector<prometheus::ClientMetric::Label> job = {
      {"weightedjob", "run-1"}, {"job_namespace", ""}, {"workload", "primes"}};
  EXPECT_EQ(LabelSets(**server, "ballast_job_items"),
            (std::vector<std::vector<prometheus::ClientMetric::Label>>{job}));
}

}  // namespace
}  // namespace ballast::coordinator
