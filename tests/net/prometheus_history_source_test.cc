// PrometheusHistory (net/prometheus_history_source.h) against
// a real Prometheus that holds a known history (tests/support/
// real_prometheus.h), and against loopback servers that fail as a Prometheus
// can: down (nothing listens), slow (never answers), garbage, too long.
#include "net/prometheus_history_source.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <ctime>
#include <thread>
#include <utility>

#include "tests/support/history_keys.h"
#include "tests/support/loopback_server.h"
#include "tests/support/shared_prometheus_suite.h"

namespace ballast::net {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

double WallNow() { return static_cast<double>(std::time(nullptr)); }

std::unique_ptr<PrometheusHistory> SourceAt(const std::string& url, milliseconds timeout,
                                            double window_s = 86400,
                                            milliseconds retry_after = milliseconds(0)) {
  PrometheusHistoryOptions options;
  options.url = url;
  options.timeout = timeout;
  options.window_seconds = window_s;
  options.retry_after = retry_after;
  auto source = PrometheusHistory::Create(options);
  EXPECT_TRUE(source.ok()) << source.status().ToString();
  return source.ok() ? std::move(*source) : nullptr;
}

using testing_support::LoopbackServer;

std::string Ok(const std::string& body) { return testing_support::HttpOk(body); }

class RealPrometheusTest : public testing::SharedPrometheusSuite<RealPrometheusTest> {
 protected:
  // Two primes jobs an hour apart, a matmul job; node n2 throttled for the
  // first half of the last 2 hours. Each job's gauge converges from the
  // prior to the node's speed; the last value is what counts. n4 was
  // measured only 20 hours ago. The kinds `legacy`, `mixed` and `straddle`
  // were measured by coordinators older than the recorded gauge: `legacy` by
  // one without ballast_node_speed_timestamp_seconds, `mixed` by one (2 and 3
  // hours ago) and, on m1, by a newer one with the timestamp gauge an hour
  // ago. The kind `relabelled` was measured by coordinators before the labels
  // weightedjob and job_namespace, which named the job `job` and `namespace`,
  // and scraped without honor_labels: two jobs of one name in two namespaces.
  // The kind `renamed` straddles that upgrade: a job `same` in team-a before
  // it, its labels honoured, and after it two jobs `same` in team-a and
  // team-b with today's labels, scraped without honor_labels (so beside the
  // target's job and namespace). The kind `sharing` has a job that left a node
  // out of history (recorded speed 0), one that recorded nothing (a job left
  // with one node), and one of a coordinator older than the recorded gauge.
  static void SetUpTestSuite() {
    now_ = WallNow();
    std::string samples;
    const struct {
      const char* job;
      double end_ago;
      std::map<std::string, double> speeds;
    } jobs[] = {{"first", 7200, {{"n1", 10}, {"n2", 5}}},
                {"second", 3600, {{"n1", 20}, {"n2", 10}, {"n3", 30}}},
                {"long-ago", 72000, {{"n1", 10}, {"n4", 10}}}};
    for (const auto& job : jobs) {
      for (const auto& [node, speed] : job.speeds) {
        for (int k = 0; k < 20; ++k) {
          samples +=
              testing::MeasuredSpeedSamples(job.job, "primes", node, speed * (0.5 + k / 38.0),
                                            now_ - job.end_ago - (19 - k) * 15);
        }
      }
    }
    samples += testing::MeasuredSpeedSamples("other", "matmul", "n1", 3, now_ - 600);
    samples += testing::MeasuredSpeedSamples("other", "matmul", "n2", 1, now_ - 600);
    // An exec job on one node: measured, nothing recorded.
    samples += testing::SpeedSample("one-node", "exec", "n1", 3, now_ - 600);
    samples += testing::RecordedSpeedSample("one-node", "exec", "n1", 0, now_ - 600);
    for (int k = 0; k < 120; ++k) {
      samples += testing::ThrottledSample("n2", k < 60 ? 1 : 0, now_ - 7200 + k * 60);
    }
    for (int k = 0; k < 20; ++k) {
      const double t = now_ - 7200 - (19 - k) * 15;
      samples += testing::SpeedSample("old", "legacy", "l1", 10, t);
      samples += testing::SpeedSample("old", "legacy", "l2", 30, t);
      samples += testing::SpeedSample("old", "mixed", "m1", 10, t - 3600);
      samples += testing::SpeedSample("old-2", "mixed", "m2", 10, t);
      samples += testing::SpeedSample("new", "mixed", "m1", 10, t + 3600);
      samples += testing::SpeedTimestampSample("mixed", "m1", t + 3600, t + 3600);
      for (const auto& [ns, speeds] : std::map<std::string, std::pair<double, double>>{
               {"team-a", {10, 30}}, {"team-b", {40, 40}}}) {
        for (const auto& [node, speed] : {std::pair{"r1", speeds.first}, {"r2", speeds.second}}) {
          for (const char* metric : {"ballast_node_speed_cost_units_per_second",
                                     "ballast_node_recorded_speed_cost_units_per_second"}) {
            samples += fmt::format(
                "{}{{job=\"ballast-metrics\",exported_job=\"same\",namespace=\"ballast-system\","
                "exported_namespace=\"{}\",workload=\"relabelled\",node=\"{}\","
                "instance=\"10.0.0.1:9090\"}} {} {}\n",
                metric, ns, node, speed, static_cast<int64_t>(t));
          }
        }
      }
      for (const char* node : {"r1", "r2"}) {
        samples += testing::SpeedTimestampSample("relabelled", node, t, t);
      }
      // `renamed`: before the upgrade 10 and 30, after it 40 and 40 in team-a
      // and 10 and 30 in team-b (as one group, the four would give other
      // ratios).
      for (const auto& [node, speed] : {std::pair{"q1", 10.0}, {"q2", 30.0}}) {
        samples += fmt::format(
            "ballast_node_recorded_speed_cost_units_per_second{{job=\"same\",namespace=\"team-a\","
            "workload=\"renamed\",node=\"{}\"}} {} {}\n",
            node, speed, static_cast<int64_t>(t - 3600));
      }
      for (const auto& [ns, speeds] : std::map<std::string, std::pair<double, double>>{
               {"team-a", {40, 40}}, {"team-b", {10, 30}}}) {
        for (const auto& [node, speed] : {std::pair{"q1", speeds.first}, {"q2", speeds.second}}) {
          samples += fmt::format(
              "ballast_node_recorded_speed_cost_units_per_second{{job=\"ballast-metrics\","
              "namespace=\"ballast-system\",weightedjob=\"same\",job_namespace=\"{}\","
              "workload=\"renamed\",node=\"{}\",instance=\"10.0.0.1:9090\"}} {} {}\n",
              ns, node, speed, static_cast<int64_t>(t));
        }
      }
      for (const char* node : {"q1", "q2"}) {
        samples += testing::SpeedTimestampSample("renamed", node, t, t);
      }
    }
    // The kind `straddle`, by an older coordinator, around a boundary T of
    // the subquery's steps for a day's window (multiples of 4320 s): s1 has
    // a job 1000 s before T and one 600 s after it, s2 a job 2000 s before.
    straddle_ = std::floor((now_ - 7200) / 4320) * 4320;
    for (int k = 0; k < 10; ++k) {
      samples += testing::SpeedSample("before", "straddle", "s1", 10, straddle_ - 1000 - k * 15);
      samples += testing::SpeedSample("after", "straddle", "s1", 10, straddle_ + 600 - k * 15);
      samples +=
          testing::SpeedSample("long-before", "straddle", "s2", 10, straddle_ - 2000 - k * 15);
    }
    // Kind `sharing`, half an hour ago. Job `shared` left x1 out (another
    // job's workers shared it): x1's recorded speed is 0 at its end, though
    // it was not at first. Job `alone`: x1 left out as well, x2 alone, so
    // nothing recorded. Job `older`, by a coordinator without the recorded
    // gauge, measured x1 and x4.
    for (int k = 0; k < 20; ++k) {
      const double t = now_ - 1800 - (19 - k) * 15;
      samples += testing::SpeedSample("shared", "sharing", "x1", 40, t);
      samples += testing::RecordedSpeedSample("shared", "sharing", "x1", k < 5 ? 40 : 0, t);
      samples += testing::MeasuredSpeedSamples("shared", "sharing", "x2", 10, t);
      samples += testing::MeasuredSpeedSamples("shared", "sharing", "x3", 30, t);
      for (const auto& [node, speed] : {std::pair{"x1", 5.0}, {"x2", 20.0}}) {
        samples += testing::SpeedSample("alone", "sharing", node, speed, t + 300);
        samples += testing::RecordedSpeedSample("alone", "sharing", node, 0, t + 300);
      }
      samples += testing::SpeedSample("older", "sharing", "x1", 100, t - 600);
      samples += testing::SpeedSample("older", "sharing", "x4", 50, t - 600);
    }
    StartPrometheus(samples);
  }

  static inline double straddle_ = 0;
};

TEST_F(RealPrometheusTest, OneQueryAnswersEveryNodesRelativeSpeedSamplesAndAge) {
  auto source = SourceAt(server_->url(), milliseconds(5000), 10000);
  const HistoryLookup lookup = source->Lookup(testing::kPrimesKey, {"n1", "n2", "n3", "n4"}, now_);
  ASSERT_EQ(lookup.trouble, "") << server_->Log();
  ASSERT_EQ(lookup.nodes.size(), 3u);
  // Relative to each job's mean: first n1 10/7.5, n2 5/7.5; second n1 1, n2 0.5, n3 1.5.
  const std::map<std::string, double> speed = {
      {"n1", (10 / 7.5 + 1) / 2}, {"n2", (5 / 7.5 + 0.5) / 2}, {"n3", 1.5}};
  // n2's samples count 1 - 0.5 / 2: it was throttled half the time the window saw.
  const std::map<std::string, double> samples = {{"n1", 2}, {"n2", 1.5}, {"n3", 1}};
  for (const auto& node : lookup.nodes) {
    EXPECT_NEAR(node.speed, speed.at(node.node), 1e-9) << node.node;
    EXPECT_NEAR(node.samples, samples.at(node.node), 1e-9) << node.node;
    // The newest measurement is an hour old, as the timestamp gauge says.
    EXPECT_NEAR(node.age_seconds, 3600, 1) << node.node;
  }
  EXPECT_NE(lookup.origin.find(server_->url()), std::string::npos);
}

TEST_F(RealPrometheusTest, AnotherWorkloadKindHasItsOwnHistory) {
  auto source = SourceAt(server_->url(), milliseconds(5000), 86400);
  const HistoryLookup lookup = source->Lookup(testing::kMatmulKey, {"n1", "n2"}, now_);
  ASSERT_EQ(lookup.trouble, "");
  ASSERT_EQ(lookup.nodes.size(), 2u);
  EXPECT_DOUBLE_EQ(lookup.nodes[0].speed, 1.5);  // 3 against the job's mean of 2
  EXPECT_DOUBLE_EQ(lookup.nodes[1].speed, 0.5);
  // The only exec job ran on one node and recorded nothing.
  const HistoryLookup exec = source->Lookup(testing::kExecKey, {"n1"}, now_);
  EXPECT_EQ(exec.trouble, "");
  EXPECT_TRUE(exec.nodes.empty());
}

// What the operator leaves out of its store (coordinator/recorded_speeds.h),
// Prometheus's history leaves out too: the coordinator exports it as a
// recorded speed of 0. Once a kind has recorded jobs, the speeds of older
// coordinators (nothing left out) are not mixed in.
TEST_F(RealPrometheusTest, NodesHistoryLeavesOutAreNotReadAndOlderJobsNotMixedIn) {
  auto source = SourceAt(server_->url(), milliseconds(5000), 86400);
  const HistoryLookup lookup =
      source->Lookup(testing::KeyOf("sharing"), {"x1", "x2", "x3", "x4"}, now_);
  ASSERT_EQ(lookup.trouble, "") << server_->Log();
  ASSERT_EQ(lookup.nodes.size(), 2u);
  // `shared` without x1: x2 10 and x3 30 against their mean of 20. `alone`
  // counts for nothing, `older` is not read.
  EXPECT_EQ(lookup.nodes[0].node, "x2");
  EXPECT_NEAR(lookup.nodes[0].speed, 0.5, 1e-9);
  EXPECT_DOUBLE_EQ(lookup.nodes[0].samples, 1);
  EXPECT_NEAR(lookup.nodes[0].age_seconds, 1800, 1);
  EXPECT_EQ(lookup.nodes[1].node, "x3");
  EXPECT_NEAR(lookup.nodes[1].speed, 1.5, 1e-9);
  // The legacy query reads only the jobs without a recorded speed: `older`.
  auto body = source->Query(history::LegacyHistoryQuery(testing::KeyOf("sharing"), 86400), now_);
  ASSERT_TRUE(body.ok()) << body.status().ToString();
  auto legacy = history::ParseHistoryAnswer(*body);
  ASSERT_TRUE(legacy.ok()) << legacy.status().ToString();
  ASSERT_EQ(legacy->size(), 2u);
  EXPECT_EQ((*legacy)[0].node, "x1");
  EXPECT_NEAR((*legacy)[0].speed, 100.0 / 75, 1e-9);
  EXPECT_EQ((*legacy)[1].node, "x4");
  EXPECT_DOUBLE_EQ((*legacy)[1].samples, 1);
}

TEST_F(RealPrometheusTest, ANodeMeasuredLongAgoHasThatAgeAndOneBeforeTheWindowNone) {
  auto day = SourceAt(server_->url(), milliseconds(5000), 86400)
                 ->Lookup(testing::kPrimesKey, {"n1", "n4"}, now_);
  ASSERT_EQ(day.trouble, "");
  ASSERT_EQ(day.nodes.size(), 2u);
  EXPECT_EQ(day.nodes[0].node, "n1");
  EXPECT_NEAR(day.nodes[0].age_seconds, 3600, 1);  // its newest job, not the old one
  EXPECT_DOUBLE_EQ(day.nodes[0].samples, 3);
  EXPECT_EQ(day.nodes[1].node, "n4");
  EXPECT_NEAR(day.nodes[1].age_seconds, 72000, 1);
  EXPECT_DOUBLE_EQ(day.nodes[1].samples, 1);
  // Ten hours: n4's job lies before the window, n1 has its two recent ones.
  auto hours = SourceAt(server_->url(), milliseconds(5000), 36000)
                   ->Lookup(testing::kPrimesKey, {"n1", "n4"}, now_);
  ASSERT_EQ(hours.nodes.size(), 1u);
  EXPECT_EQ(hours.nodes[0].node, "n1");
  EXPECT_DOUBLE_EQ(hours.nodes[0].samples, 2);
}

TEST_F(RealPrometheusTest, AHistoryFromBeforeTheRecordedGaugeIsReadAndDatedByTheSubquery) {
  auto source = SourceAt(server_->url(), milliseconds(5000), 86400);
  // The history query finds nothing recorded...
  auto body = source->Query(history::HistoryQuery(testing::KeyOf("legacy"), 86400), now_);
  ASSERT_TRUE(body.ok()) << body.status().ToString();
  auto recorded = history::ParseHistoryAnswer(*body);
  ASSERT_TRUE(recorded.ok()) << recorded.status().ToString();
  EXPECT_TRUE(recorded->empty());
  // ...so the lookup asks the legacy form, its age by the subquery: up to
  // one step (86400 s / 20) less.
  const HistoryLookup lookup = source->Lookup(testing::KeyOf("legacy"), {"l1", "l2"}, now_);
  ASSERT_EQ(lookup.trouble, "");
  ASSERT_EQ(lookup.nodes.size(), 2u);
  for (const auto& node : lookup.nodes) {
    EXPECT_LE(node.age_seconds, 7200) << node.node;
    EXPECT_GE(node.age_seconds, 7200 - 4320) << node.node;
  }
  EXPECT_NEAR(lookup.nodes[0].speed, 0.5, 1e-9);
  EXPECT_NEAR(lookup.nodes[1].speed, 1.5, 1e-9);
  // Every node of the legacy form is dated by the subquery: m1's newest
  // sample is an hour old (a coordinator with the timestamp gauge), m2's two
  // hours.
  const HistoryLookup mixed = source->Lookup(testing::KeyOf("mixed"), {"m1", "m2"}, now_);
  ASSERT_EQ(mixed.trouble, "");
  ASSERT_EQ(mixed.nodes.size(), 2u);
  EXPECT_LE(mixed.nodes[0].age_seconds, 3600);
  EXPECT_GE(mixed.nodes[0].age_seconds, 3600 - 4320);
  EXPECT_LE(mixed.nodes[1].age_seconds, 7200);
  EXPECT_GE(mixed.nodes[1].age_seconds, 7200 - 4320);
  EXPECT_GE(mixed.nodes[1].age_seconds, mixed.nodes[0].age_seconds);
}

TEST_F(RealPrometheusTest, TheSubquerysAgeIsNeverOlderThanTheNewestSampleAcrossAStepBoundary) {
  // Asked 4000 s after the boundary T, the subquery's last step is T: s1's
  // newest job (T + 600) lies after it, its older one before. Its age must
  // come from the newest job, not from the step that holds the older one.
  const double at = straddle_ + 4000;
  const HistoryLookup lookup = SourceAt(server_->url(), milliseconds(5000), 86400)
                                   ->Lookup(testing::KeyOf("straddle"), {"s1", "s2"}, at);
  ASSERT_EQ(lookup.trouble, "");
  ASSERT_EQ(lookup.nodes.size(), 2u);
  const struct {
    const char* node;
    double true_age;
  } expected[] = {{"s1", 4000 - 600}, {"s2", 4000 + 2000}};
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(lookup.nodes[i].node, expected[i].node);
    EXPECT_LE(lookup.nodes[i].age_seconds, expected[i].true_age) << expected[i].node;
    EXPECT_GT(lookup.nodes[i].age_seconds, expected[i].true_age - 4320) << expected[i].node;
  }
}

TEST_F(RealPrometheusTest, AScrapeWithoutHonorLabelsKeepsJobsOfOneNameInTwoNamespacesApart) {
  auto source = SourceAt(server_->url(), milliseconds(5000), 86400);
  const HistoryLookup lookup = source->Lookup(testing::KeyOf("relabelled"), {"r1", "r2"}, now_);
  ASSERT_EQ(lookup.trouble, "");
  ASSERT_EQ(lookup.nodes.size(), 2u);
  // team-a's job: r1 10 / 20, r2 30 / 20; team-b's: 1 and 1.
  EXPECT_NEAR(lookup.nodes[0].speed, (0.5 + 1) / 2, 1e-9);
  EXPECT_NEAR(lookup.nodes[1].speed, (1.5 + 1) / 2, 1e-9);
  EXPECT_DOUBLE_EQ(lookup.nodes[0].samples, 2);
  EXPECT_NEAR(lookup.nodes[0].age_seconds, 7200, 1);
}

// Coordinators before and after the labels weightedjob and job_namespace, in
// one window: each job is its own group, whichever labels name it.
TEST_F(RealPrometheusTest, JobsBeforeAndAfterTheLabelRenameAreEachTheirOwnJob) {
  auto source = SourceAt(server_->url(), milliseconds(5000), 86400);
  const HistoryLookup lookup = source->Lookup(testing::KeyOf("renamed"), {"q1", "q2"}, now_);
  ASSERT_EQ(lookup.trouble, "") << server_->Log();
  ASSERT_EQ(lookup.nodes.size(), 2u);
  // Before: q1 10 / 20, q2 30 / 20; after, team-a: 1 and 1; team-b: 10 / 20
  // and 30 / 20.
  EXPECT_EQ(lookup.nodes[0].node, "q1");
  EXPECT_NEAR(lookup.nodes[0].speed, (0.5 + 1 + 0.5) / 3, 1e-9);
  EXPECT_NEAR(lookup.nodes[1].speed, (1.5 + 1 + 1.5) / 3, 1e-9);
  EXPECT_DOUBLE_EQ(lookup.nodes[0].samples, 3);
  EXPECT_DOUBLE_EQ(lookup.nodes[1].samples, 3);
}

TEST_F(RealPrometheusTest, AWindowThatEndsBeforeTheHistoryFindsNone) {
  auto source = SourceAt(server_->url(), milliseconds(5000), 1800);
  const HistoryLookup lookup = source->Lookup(testing::kPrimesKey, {"n1", "n2", "n3"}, now_);
  EXPECT_EQ(lookup.trouble, "");
  EXPECT_TRUE(lookup.nodes.empty());
}

// History (what `ballast weights --fit URL` asks): every node of the answer,
// none filtered out, and a failure as a Status rather than trouble.
TEST_F(RealPrometheusTest, HistoryAnswersEveryNodePrometheusKnows) {
  auto source = SourceAt(server_->url(), milliseconds(5000), 10000);
  auto history = source->History(testing::kPrimesKey, now_);
  ASSERT_TRUE(history.ok()) << history.status().ToString();
  std::vector<std::string> nodes;
  for (const auto& node : *history) nodes.push_back(node.node);
  EXPECT_EQ(nodes, (std::vector<std::string>{"n1", "n2", "n3"}));
  EXPECT_NEAR((*history)[2].speed, 1.5, 1e-9);
  auto down =
      SourceAt("http://127.0.0.1:" + std::to_string(testing::FreePort()), milliseconds(2000))
          ->History(testing::kPrimesKey, now_);
  ASSERT_FALSE(down.ok());
  EXPECT_EQ(down.status().code(), StatusCode::kUnavailable);
}

TEST_F(RealPrometheusTest, AQueryPrometheusRefusesIsUnavailableWithItsError) {
  auto source = SourceAt(server_->url(), milliseconds(5000));
  auto body = source->Query("sum(", now_);
  ASSERT_TRUE(body.ok()) << body.status().ToString();  // 400 with Prometheus's error
  auto answer = history::ParseHistoryAnswer(*body);
  ASSERT_FALSE(answer.ok());
  EXPECT_EQ(answer.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(answer.status().message().find("bad_data"), std::string::npos)
      << answer.status().message();
}

TEST(PrometheusHistoryFaultsTest, PrometheusDownIsTroubleAtOnce) {
  auto source =
      SourceAt("http://127.0.0.1:" + std::to_string(testing::FreePort()), milliseconds(2000));
  const auto start = Clock::now();
  const HistoryLookup lookup = source->Lookup(testing::kPrimesKey, {"n1"}, WallNow());
  EXPECT_LT(Clock::now() - start, milliseconds(2000));  // refused, not timed out
  EXPECT_TRUE(lookup.nodes.empty());
  EXPECT_NE(lookup.trouble, "");
  EXPECT_EQ(lookup.trouble.find("no answer within"), std::string::npos) << lookup.trouble;
}

TEST(PrometheusHistoryFaultsTest, PrometheusThatNeverAnswersIsTroubleAfterTheTimeout) {
  LoopbackServer silent("");
  auto source = SourceAt(silent.url(), milliseconds(300));
  const auto start = Clock::now();
  const HistoryLookup lookup = source->Lookup(testing::kPrimesKey, {"n1"}, WallNow());
  const auto took = Clock::now() - start;
  EXPECT_GE(took, milliseconds(300));
  EXPECT_LT(took, milliseconds(5000));  // bounded, whatever the server does
  EXPECT_EQ(lookup.trouble, "no answer within 300 ms");
  EXPECT_TRUE(lookup.nodes.empty());
}

TEST(PrometheusHistoryFaultsTest, AfterAFailureTheNextLookupsAreTroubleAtOnceUntilRetryAfter) {
  LoopbackServer silent("");
  auto source = SourceAt(silent.url(), milliseconds(300), 86400, milliseconds(1500));
  EXPECT_EQ(source->Lookup(testing::kPrimesKey, {"n1"}, WallNow()).trouble,
            "no answer within 300 ms");
  const auto start = Clock::now();
  const HistoryLookup again = source->Lookup(testing::kPrimesKey, {"n1"}, WallNow());
  EXPECT_LT(Clock::now() - start, milliseconds(300));  // not asked: no wait
  EXPECT_EQ(again.trouble, "no answer within 300 ms (0 s ago; not asked again for 1 s)");
  std::this_thread::sleep_for(milliseconds(1600));
  const auto retry = Clock::now();
  EXPECT_EQ(source->Lookup(testing::kPrimesKey, {"n1"}, WallNow()).trouble,
            "no answer within 300 ms");
  EXPECT_GE(Clock::now() - retry, milliseconds(300));  // asked again
}

TEST(PrometheusHistoryFaultsTest, GarbageIsTroubleNamingWhatWasWrong) {
  const std::pair<std::string, std::string> cases[] = {
      {Ok("<html>hello</html>"), "the Prometheus answer"},
      {Ok(R"({"status":"success","data":{"resultType":"matrix","result":[]}})"),
       "data: expected a vector result"},
      {Ok(std::string(100, '[')), "nested deeper"},
      {"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
       "HTTP 503"},
      {"HTTP/1.1 200 OK\r\nContent-Length: 20000000\r\nConnection: close\r\n\r\n{",
       "more than the"},
      {"not http at all\r\n\r\n", ""},
  };
  for (const auto& [reply, says] : cases) {
    LoopbackServer server(reply);
    auto source = SourceAt(server.url(), milliseconds(2000));
    const HistoryLookup lookup = source->Lookup(testing::kPrimesKey, {"n1"}, WallNow());
    EXPECT_TRUE(lookup.nodes.empty()) << reply.substr(0, 80);
    ASSERT_NE(lookup.trouble, "") << reply.substr(0, 80);
    EXPECT_NE(lookup.trouble.find(says), std::string::npos)
        << reply.substr(0, 80) << " -> " << lookup.trouble;
  }
}

TEST(PrometheusHistoryFaultsTest, AnAnswerLongerThanTheBoundIsRefusedWhileReading) {
  // Chunked: no Content-Length to refuse it by; the reader stops at the bound.
  std::string reply = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n";
  const std::string chunk(1 << 16, ' ');
  for (int i = 0; i < 80; ++i) reply += "10000\r\n" + chunk + "\r\n";  // 5 MiB
  reply += "0\r\n\r\n";
  LoopbackServer server(reply);
  auto source = SourceAt(server.url(), milliseconds(5000));
  const HistoryLookup lookup = source->Lookup(testing::kPrimesKey, {"n1"}, WallNow());
  EXPECT_NE(lookup.trouble.find("longer than the 4194304 bytes allowed"), std::string::npos)
      << lookup.trouble;
}

TEST(PrometheusHistoryFaultsTest, CreateRefusesWhatIsNotAnHttpUrl) {
  for (const char* url : {"prometheus:9090", "ftp://host/", "http://", ""}) {
    PrometheusHistoryOptions options;
    options.url = url;
    auto source = PrometheusHistory::Create(options);
    ASSERT_FALSE(source.ok()) << url;
    EXPECT_NE(source.status().message().find("--prometheus-url"), std::string::npos);
  }
  PrometheusHistoryOptions options;
  options.url = "ftp://host/";
  options.flag = "--fit";
  auto source = PrometheusHistory::Create(options);
  ASSERT_FALSE(source.ok());
  EXPECT_EQ(source.status().message().rfind("--fit: ", 0), 0u) << source.status().message();
}

}  // namespace
}  // namespace ballast::net
