// The probe's optional micro-benchmark (docs/probe.md): the pure scoring of
// measured samples (median, spread, E6 bucket, repetitions per sample), and
// `ballast-worker probe --benchmark` on a captured tree, which prints a score
// and its label only when asked.
#include <cpprest/http_client.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>

#include "core/probe/benchmark.h"
#include "core/probe/labels.h"
#include "tests/support/metrics_text.h"
#include "worker/probe/probe_metrics.h"
#include "worker/probe/report.h"

namespace ballast::probe {
namespace {

TEST(BenchmarkScore, MedianOfOddAndEvenCounts) {
  auto odd = ScoreSamples({30, 10, 20, 50, 40}, 7);
  ASSERT_TRUE(odd.ok()) << odd.status().ToString();
  EXPECT_DOUBLE_EQ(odd->median, 30);
  EXPECT_DOUBLE_EQ(odd->min, 10);
  EXPECT_DOUBLE_EQ(odd->max, 50);
  EXPECT_DOUBLE_EQ(odd->spread, 40.0 / 30);
  EXPECT_EQ(odd->samples, 5);
  EXPECT_EQ(odd->repetitions, 7u);
  EXPECT_EQ(odd->bucket, "33");
  auto even = ScoreSamples({4, 1, 3, 2}, 1);
  ASSERT_TRUE(even.ok());
  EXPECT_DOUBLE_EQ(even->median, 2.5);
}

TEST(BenchmarkScore, OneSampleHasNoSpread) {
  auto one = ScoreSamples({123.4}, 1);
  ASSERT_TRUE(one.ok());
  EXPECT_DOUBLE_EQ(one->median, 123.4);
  EXPECT_DOUBLE_EQ(one->spread, 0);
}

TEST(BenchmarkScore, AnOutlierDoesNotMoveTheMedian) {
  auto score = ScoreSamples({100, 101, 99, 100, 3}, 1);  // one sample preempted
  ASSERT_TRUE(score.ok());
  EXPECT_DOUBLE_EQ(score->median, 100);
  EXPECT_EQ(score->bucket, "100");
}

TEST(BenchmarkScore, RejectsNoSamplesAndBadRates) {
  EXPECT_FALSE(ScoreSamples({}, 1).ok());
  auto zero = ScoreSamples({1, 0}, 1);
  ASSERT_FALSE(zero.ok());
  EXPECT_NE(zero.status().message().find("sample 1"), std::string::npos) << zero.status().message();
  EXPECT_FALSE(ScoreSamples({-1}, 1).ok());
  EXPECT_FALSE(ScoreSamples({std::nan("")}, 1).ok());
  EXPECT_FALSE(ScoreSamples({std::numeric_limits<double>::infinity()}, 1).ok());
}

TEST(BenchmarkBucket, NearestE6ValueOnALogScale) {
  EXPECT_EQ(BucketScore(1), "1");
  EXPECT_EQ(BucketScore(1.23), "1.5");  // log-nearest: the edge is 10^(1/12) = 1.21
  EXPECT_EQ(BucketScore(1.2), "1");
  EXPECT_EQ(BucketScore(2.2), "2.2");
  EXPECT_EQ(BucketScore(31), "33");
  EXPECT_EQ(BucketScore(47), "47");
  EXPECT_EQ(BucketScore(70), "68");
  EXPECT_EQ(BucketScore(95), "100");
  EXPECT_EQ(BucketScore(150), "150");
  EXPECT_EQ(BucketScore(1500), "1500");
  EXPECT_EQ(BucketScore(0.068), "0.068");
  EXPECT_EQ(BucketScore(0.5), "0.47");
  EXPECT_EQ(BucketScore(1e-9), "0.001");  // clamped
  EXPECT_EQ(BucketScore(1e12), "1000000000");
}

TEST(BenchmarkBucket, StableUnderSmallNoiseAndValidAsLabel) {
  // A few per cent of noise around a bucket's centre keeps the bucket.
  for (double centre : {1.5, 6.8, 22.0, 150.0, 4700.0}) {
    const std::string bucket = BucketScore(centre);
    EXPECT_EQ(BucketScore(centre * 0.95), bucket) << centre;
    EXPECT_EQ(BucketScore(centre * 1.05), bucket) << centre;
  }
  for (double x = 0.0005; x < 2e9; x *= 1.07) {
    const std::string bucket = BucketScore(x);
    EXPECT_FALSE(bucket.empty()) << x;
    EXPECT_TRUE(IsValidLabelValue(bucket)) << x << " " << bucket;
  }
}

TEST(BenchmarkBucket, NoBucketForBadScores) {
  EXPECT_EQ(BucketScore(0), "");
  EXPECT_EQ(BucketScore(-3), "");
  EXPECT_EQ(BucketScore(std::nan("")), "");
}

TEST(BenchmarkRepetitions, FillTheBudgetsShare) {
  // 1 ms a unit, 2 s budget, 5 samples, 80 %: 320 units a sample.
  EXPECT_EQ(RepetitionsPerSample(0.001, 2.0, 5), 320u);
  EXPECT_EQ(RepetitionsPerSample(0.001, 2.0, 5, 0.5), 200u);
  // A unit slower than the budget: one a sample.
  EXPECT_EQ(RepetitionsPerSample(3.0, 0.2, 5), 1u);
  // Bounded, and safe on nonsense.
  EXPECT_EQ(RepetitionsPerSample(1e-12, 60, 5), 1'000'000u);
  EXPECT_EQ(RepetitionsPerSample(0, 2, 5), 1u);
  EXPECT_EQ(RepetitionsPerSample(0.001, -1, 5), 1u);
  EXPECT_EQ(RepetitionsPerSample(0.001, 2, 0), 1u);
  EXPECT_EQ(RepetitionsPerSample(std::nan(""), 2, 5), 1u);
}

// --- the binary -------------------------------------------------------------

std::string RunProbe(const std::string& args, int* status) {
  const std::string command = std::string(BALLAST_WORKER_BINARY) + " probe --root " +
                              BALLAST_SOURCE_DIR + "/tests/probe/trees/pi4b-8gb " + args +
                              " -o json 2>/dev/null";
  std::FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return "";
  std::string out;
  char buffer[4096];
  while (size_t n = std::fread(buffer, 1, sizeof(buffer), pipe)) out.append(buffer, n);
  *status = pclose(pipe);
  return out;
}

TEST(ProbeBenchmarkCommand, PrintsAScoreAndALabelWhenAsked) {
  int status = -1;
  const std::string out = RunProbe("--benchmark --benchmark-ms 200", &status);
  ASSERT_EQ(status, 0) << out;
  const auto json = nlohmann::json::parse(out);
  const auto& bench = json.at("benchmark");
  ASSERT_TRUE(bench.is_object()) << out;
  const double score = bench.at("score").get<double>();
  EXPECT_GT(score, 0);
  EXPECT_GE(bench.at("max").get<double>(), score);
  EXPECT_LE(bench.at("min").get<double>(), score);
  EXPECT_GE(bench.at("samples").get<int>(), 1);
  EXPECT_LE(bench.at("samples").get<int>(), kBenchmarkSamples);
  const std::string label = json.at("labels").at("ballast.io/bench-score").get<std::string>();
  EXPECT_EQ(label, BucketScore(score));
  EXPECT_TRUE(IsValidLabelValue(label)) << label;
  // The other labels of the tree are still there.
  EXPECT_EQ(json.at("labels").at("ballast.io/board"), "pi-4b");
}

TEST(ProbeBenchmarkCommand, NoScoreWithoutTheFlag) {
  int status = -1;
  const std::string out = RunProbe("", &status);
  ASSERT_EQ(status, 0) << out;
  const auto json = nlohmann::json::parse(out);
  EXPECT_TRUE(json.at("benchmark").is_null()) << out;
  EXPECT_FALSE(json.at("labels").contains("ballast.io/bench-score")) << out;
  EXPECT_EQ(json.at("labels").at("ballast.io/board"), "pi-4b");
}

TEST(ProbeBenchmarkCommand, RejectsABudgetOutOfRange) {
  int status = -1;
  RunProbe("--benchmark --benchmark-ms 5", &status);
  EXPECT_NE(status, 0);
}

// The gauge `name{node="..."}`'s value in `metrics`; -1 when absent.
using testing_support::Gauge;

std::string FetchMetrics(int port) {
  web::http::client::http_client client("http://127.0.0.1:" + std::to_string(port));
  return client.request(web::http::methods::GET, "/metrics").get().extract_string(true).get();
}

TEST(ProbeBenchmarkMetrics, GaugeServedOnlyWithAScore) {
  auto metrics = worker::ProbeMetrics::Create("127.0.0.1:0", "node-a");
  ASSERT_TRUE(metrics.ok()) << metrics.status().ToString();
  worker::ProbeReport report;
  (*metrics)->Update(report);
  EXPECT_EQ(Gauge(FetchMetrics((*metrics)->port()), "ballast_node_benchmark_score"), -1);
  auto score = ScoreSamples({80, 82, 90}, 4);
  ASSERT_TRUE(score.ok());
  worker::AddBenchmark(report, *score);
  EXPECT_EQ(report.labels.at(worker::kBenchScoreLabel), "68");
  (*metrics)->Update(report);
  const std::string text = FetchMetrics((*metrics)->port());
  EXPECT_DOUBLE_EQ(Gauge(text, "ballast_node_benchmark_score"), 82) << text;
  EXPECT_NEAR(Gauge(text, "ballast_node_benchmark_spread_ratio"), 10.0 / 82, 1e-6) << text;
  report.benchmark.reset();
  (*metrics)->Update(report);
  EXPECT_EQ(Gauge(FetchMetrics((*metrics)->port()), "ballast_node_benchmark_score"), -1);
}

}  // namespace
}  // namespace ballast::probe
